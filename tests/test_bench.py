"""`tablesight bench`: the report's structure and its accuracy figures (never its timings, which depend on
the machine and on what else runs on it)."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench.replay import replay_frame_count
from bench.report import format_table
from bench.scenes import LIVE_MIN_FRAMES, QUICK_FRAMES
from webui.cli import main


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """One `bench --quick --no-mounts --out FILE` run, the only whole bench of this file (~3 minutes on 2 cores;
    capsys is per test, so stdout is captured here): (the report it wrote, the table it printed)."""
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(["bench", "--quick", "--no-mounts", "--out", str(out)])  # mounts: test_bench_mounts.py
    assert status == 0
    return json.loads(out.read_text()), buf.getvalue()


def _timing_ok(t: dict[str, Any], runs: int) -> None:
    assert t["runs"] == runs
    assert 0 < t["median_ms"] <= t["p95_ms"] < 60_000


def test_bench_quick_reports_the_machine(quick: tuple[dict[str, Any], str]) -> None:
    report, _ = quick
    m = report["machine"]
    assert m["cores"] >= 1 and 1 <= m["usable_cores"] <= m["cores"]
    assert m["detector_threads"] == 1
    for key in ("opencv", "numpy", "pupil_apriltags", "shapely", "python"):
        assert isinstance(m[key], str) and m[key][0].isdigit()
    assert len(m["load_average"]) == 3
    assert report["settings"]["frames"] == QUICK_FRAMES and report["settings"]["quick"] is True


def test_bench_quick_vision_rows_are_accurate(quick: tuple[dict[str, Any], str]) -> None:
    report, _ = quick
    rows = {r["label"]: r for r in report["vision"]}
    assert list(rows) == ["720p", "1080p", "1080p no intrinsics"]  # --quick: no 4K
    assert rows["720p"]["image_size"] == [1280, 720] and rows["1080p"]["image_size"] == [1920, 1080]
    for label, r in rows.items():
        _timing_ok(r["ours"], QUICK_FRAMES)
        _timing_ok(r["bare"], QUICK_FRAMES)
        _timing_ok(r["mapping"], QUICK_FRAMES)
        assert r["mapping"]["median_ms"] < r["ours"]["median_ms"]  # mapping is part of detection + mapping
        assert r["ratio"] == pytest.approx(r["ours"]["median_ms"] / r["bare"]["median_ms"], rel=1e-3)
        assert r["fps"] == pytest.approx(1000.0 / r["ours"]["median_ms"], rel=1e-3)
        assert 1 <= r["decimate"] <= 4
        assert r["eligible"] >= 0.8 * 40 * QUICK_FRAMES, (
            label
        )  # most of the 40 bases a frame are in clear view
        assert r["false_ids"] == 0, label
        assert r["bases_measured"] >= r["found"]
        assert r["error_p50_in"] <= r["error_p95_in"] <= r["error_max_in"]
        if r["intrinsics"]:
            assert r["focal_source"] == "intrinsics"
            assert r["recall"] >= 0.98, label
            assert r["error_p95_in"] <= 0.03, label
            assert r["error_max_in"] <= 0.06, label
    assert rows["1080p no intrinsics"]["intrinsics"] is False
    assert rows["1080p no intrinsics"]["focal_source"] == "estimated"
    assert rows["1080p no intrinsics"]["error_p95_in"] <= 0.03


def test_bench_quick_live_rows_are_consistent(quick: tuple[dict[str, Any], str]) -> None:
    """The live (windowed) detection rows: one per resolution, finite and consistent; never their speed."""
    report, _ = quick
    rows = {r["label"]: r for r in report["live"]}
    assert list(rows) == ["720p", "1080p"]  # --quick: no 4K
    vision = {r["label"]: r for r in report["vision"]}
    settings = report["settings"]
    fine_every = settings["live_fine_every"]
    for label, r in rows.items():
        assert r["image_size"] == vision[label]["image_size"]
        assert r["decimate"] == vision[label]["decimate"]  # the server's decimation logic, the same calibration
        assert r["smallest_tag_px"] == pytest.approx(vision[label]["smallest_tag_px"])
        assert r["fine_every"] == fine_every >= 1 and 1 <= r["cells"] <= fine_every
        assert settings["live_frames"][label] >= LIVE_MIN_FRAMES
        assert r["frames"] == settings["live_frames"][label] - 1  # the first frame is the warm-up
        for t in (r["live"], r["full"], r["bare"]):
            _timing_ok(t, r["frames"])
        assert r["bare_ratio"] == pytest.approx(r["live"]["median_ms"] / r["bare"]["median_ms"], rel=1e-3)
        values = (r["live"]["median_ms"], r["live"]["p95_ms"], r["live_max_ms"], r["ratio"], r["scanned_fraction"])
        assert all(v is not None and math.isfinite(v) for v in values), label
        assert r["live"]["median_ms"] <= r["live"]["p95_ms"] <= r["live_max_ms"], label
        assert r["ratio"] == pytest.approx(r["live"]["median_ms"] / r["full"]["median_ms"], rel=1e-3)
        assert 0 < r["scanned_fraction"] <= r["scanned_fraction_max"] <= 1, label
        assert r["eligible"] >= 0.8 * 40 * r["frames"], label
        assert 0 <= r["found"] <= r["eligible"] and 0 <= r["full_found"] <= r["eligible"]
        assert 0 <= r["recall"] <= 1 and 0 <= r["full_recall"] <= 1
        assert r["recall"] == pytest.approx(r["found"] / r["eligible"], rel=1e-3)
        assert r["false_ids"] == 0, label
        # The base put down elsewhere: a full scan reads it at once, and so does the live detector (the picture
        # changed there)
        assert r["placed_full_found_after"] == 1, label
        assert r["placed_found_after"] == 1, label


def test_bench_quick_other_rows(quick: tuple[dict[str, Any], str]) -> None:
    report, _ = quick
    runs = report["settings"]["repeats"]
    names = [r["name"] for r in report["rules"]]
    assert names == ["all_pairs_sight", "line_of_sight", "edge_distance", "engagement_zone"]
    assert "40 units x 20 terrain pieces" in report["rules"][0]["what"]
    assert [r["name"] for r in report["tracker"]] == ["Tracker.update"]
    assert report["tracker"][0]["what"].startswith("40 ")
    costs = report["frame_costs"]
    assert [r["name"] for r in costs] == ["gray_frame", "jpeg encode", "jpeg decode", "camera frame", "camera frame"] * 2
    # a camera's JPEG as the live view takes it: decoded twice by OpenCV, and once (libturbojpeg0, as ./go test has)
    assert [r["what"].split(", ")[-1] for r in costs if r["name"] == "camera frame"] == \
        ["decoded twice (OpenCV)", "decoded once (TurboJPEG)"] * 2
    encodes = [r for r in costs if r["name"] == "jpeg encode"]
    assert 10 < encodes[0]["size_kb"] < encodes[1]["size_kb"]  # a 1080p frame takes more bytes than 720p
    for row in report["rules"] + report["tracker"] + costs:
        _timing_ok(row["timing"], runs)
    assert report["seconds"] > 0


def test_bench_table_shows_every_row(quick: tuple[dict[str, Any], str]) -> None:
    report, _ = quick
    table = format_table(report)
    for needle in (
        "Tablesight bench",
        "2 cores" if report["machine"]["cores"] == 2 else "cores",
        "720p ",
        "1080p no intrinsics",
        "all_pairs_sight",
        "Tracker.update",
        "jpeg encode",
        "Live detection per frame (WindowedDetector",
        "full recall",
        "scanned",
        "placed",
    ):
        assert needle in table
    r = report["vision"][1]
    assert f"{r['ours']['median_ms']:7.1f}" in table
    live = table[table.index("Live detection") : table.index("Rules geometry")]
    for r in report["live"]:
        row = next(line for line in live.splitlines() if line.startswith(f"{r['label']} "))
        for shown in (
            f"{r['live']['median_ms']:7.1f}",
            f"{r['live']['p95_ms']:7.1f}",
            f"{r['live_max_ms']:7.1f}",
            f"{r['ratio']:5.2f}",
            f"{r['scanned_fraction']:7.3f}",
            f"{r['found']}/{r['eligible']} {r['recall']:.3f}",
        ):
            assert shown in row, (shown, row)


def test_bench_quick_replay_rows(quick: tuple[dict[str, Any], str]) -> None:
    """The replay row: a 1080p recording with 40 bases replayed serially and with the read-ahead, against a
    bare detector on the same frames; the numbers are finite and consistent (never a timing target)."""
    report, _ = quick
    (r,) = report["replay"]
    settings = report["settings"]
    assert r["label"] == "1080p" and r["image_size"] == [1920, 1080] and r["bases"] == 40
    assert r["frames"] == settings["replay_frames"] == replay_frame_count(QUICK_FRAMES)
    assert r["rounds"] == settings["replay_rounds"] >= 1 and r["workers"] >= 1
    assert r["decimate"] == {row["label"]: row for row in report["vision"]}["1080p"]["decimate"]
    for key in ("bare_cpu_ms", "bare_detect_ms", "serial_fps", "serial_cpu_ms", "ahead_fps", "ahead_cpu_ms"):
        assert r[key] is not None and 0 < r[key] < 60_000, key
    assert r["bare_detect_ms"] <= r["bare_cpu_ms"]  # the detect is part of the bare run
    for key in ("serial_ratio", "ahead_ratio", "ahead_detect_ratio", "speedup"):
        assert r[key] is not None and 0.1 < r[key] < 100, key
    assert r["ahead_detect_ratio"] >= r["ahead_ratio"] * 0.5  # against less work, a larger ratio (rounds aside)
    assert r["realtime"] == pytest.approx(r["ahead_fps"] / r["recording_fps"], rel=1e-3)
    assert r["same_events"] is True  # the read-ahead changes nothing the replay reports
    assert r["moves"] >= 1 and r["verdicts"] >= 1  # the bases slid and the game ruled on it
    table = format_table(report)
    section = table[table.index("Replay of a recording") : table.index("Rules geometry")]
    row = next(line for line in section.splitlines() if line.startswith("1080p "))
    for shown in (f"{r['serial_fps']:10.1f}", f"{r['ahead_fps']:9.1f}", f"{r['ahead_ratio']:5.2f}"):
        assert shown in row, (shown, row)


def test_bench_prints_a_table_without_json(quick: tuple[dict[str, Any], str]) -> None:
    """Without --json the bench prints its table, of the very report --out wrote."""
    report, printed = quick
    assert printed.startswith("Tablesight bench\n")
    assert f"{QUICK_FRAMES} frame(s) a resolution" in printed
    assert printed == format_table(report) + "\n"


def test_bench_json_prints_the_report_and_frames_reach_the_run(quick: tuple[dict[str, Any], str],
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--json prints the report as one JSON object, and --frames N is what the run is asked for: the command's own
    work, checked on the report the real run above made (a second whole bench would cost ~3 minutes)."""
    report, _ = quick
    asked: dict[str, Any] = {}

    class Ran:
        def to_json(self) -> dict[str, Any]:
            return report

    def run(**kwargs: Any) -> Ran:
        asked.update(kwargs)
        return Ran()

    monkeypatch.setattr("webui.commands.bench.run_bench", run)
    assert main(["bench", "--quick", "--json", "--frames", "2", "--no-mounts"]) == 0
    assert json.loads(capsys.readouterr().out) == report
    assert asked["frames"] == 2 and asked["quick"] is True and asked["mounts"] is False


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--frames", "0"], "--frames 0"),
        (["--frames", "-3"], "--frames -3"),
        (["--frames", "many"], "--frames"),
        (["--out", "/no/such/folder/bench.json"], "does not exist"),
        (["--color"], "unrecognized"),
        (["--web", "--rounds", "0"], "--rounds 1 to 20"),
        (["--web", "--watchers", "0"], "--watchers must be 1 to 50"),
        (["--web-army"], "--web-army chooses the table --web plays; add --web"),
        (["--web", "--camera-fps", "fast"], "--camera-fps fast is not a list of frame rates"),
        (["--web", "--camera-fps", "30,0"], "--camera-fps 30,0 has a rate out of range; give each rate 1 to 120"),
        (["--web", "--camera-fps", "30,,20"], "--camera-fps 30,,20 is not a list of frame rates"),
        (["--camera-fps", "20"], "--camera-fps chooses the rates of --web's camera rows; add --web"),
    ],
)
def test_bench_bad_argument_exits_2_with_one_sentence(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        status = main(["bench", "--quick", *argv])
        raise SystemExit(status)
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert words in err
    assert "\n" not in err and "Traceback" not in err and err.endswith(".")


def test_bench_out_must_not_be_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is a folder" in err and "\n" not in err


def test_bench_table_reads_a_report_without_live_rows(quick: tuple[dict[str, Any], str]) -> None:
    """A JSON report written before the live rows existed still prints (without their section)."""
    report, _ = quick
    older = {k: v for k, v in report.items() if k not in ("live", "replay")}
    table = format_table(older)
    assert "Live detection" not in table and "Replay of a recording" not in table and "Rules geometry" in table
