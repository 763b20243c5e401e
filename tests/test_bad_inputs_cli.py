"""Bad input a real table and a real user produce: every command answers exit 2 and one sentence naming it.

Each row is (argv with {placeholders} for files made here, the exit status, a piece of the message). Rows
run in-process through `webui.cli.main` (fast); a few run as a real subprocess to show no traceback
reaches the terminal.
"""

from __future__ import annotations

import copy
import json
import re
import socket
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.layout import default_layout
from calibration.table import calibrate_table, collect_anchors, save_calibration
from tests.scenario_docs import all_examples
from vision.synth.render import BasePlacement, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame
from webui.cli import main

ROOT = Path(__file__).resolve().parent.parent
BOARD = (30.0, 22.0)
SIZE = (640, 360)


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj), encoding="utf-8")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A rendered table, its calibration and camera, and every broken file the rows below name."""
    d = tmp_path_factory.mktemp("bad")
    pose = camera_framing_board(BOARD, 34.0, 20.0, 0.0, SIZE, [0, 0, 0, 0, 0])
    r = render_scene(Scene.at(pose, BOARD, bases=(BasePlacement(12, 8.0, 6.0),), supersample=2), 5)
    cv2.imwrite(str(d / "table.png"), r.image)
    ok, jpeg = cv2.imencode(".jpg", r.image)
    assert ok
    (d / "truncated.jpg").write_bytes(jpeg.tobytes()[: len(jpeg) // 3])
    (d / "empty.png").write_bytes(b"")
    (d / "notes.png").write_text("hello\n")
    (d / "doc.pdf").write_bytes(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    (d / "folder").mkdir()
    cv2.imwrite(str(d / "blank.png"), np.full((SIZE[1], SIZE[0], 3), 128, np.uint8))
    cv2.imwrite(str(d / "grey16.png"), (gray_frame(r.image).astype(np.uint16) * 257))
    cv2.imwrite(str(d / "grey.png"), gray_frame(r.image))
    cv2.imwrite(str(d / "rgba.png"), cv2.cvtColor(r.image, cv2.COLOR_BGR2BGRA))
    cv2.imwrite(str(d / "dot.png"), np.zeros((1, 1), np.uint8))
    (d / "huge.png").write_bytes(_png_header_only(100_000, 100_000))  # 10^10 px claimed, 68 bytes sent
    sof = jpeg.tobytes().find(b"\xff\xc0")
    (d / "huge.jpg").write_bytes(jpeg.tobytes()[: sof + 5] + struct.pack(">HH", 65000, 65000) + jpeg.tobytes()[sof + 9 :])
    layout = default_layout(*BOARD)
    tags = detect_tags(gray_frame(r.image))
    cal = calibrate_table(collect_anchors(((t.id, t.corners_px) for t in tags), layout), layout, SIZE, r.camera)
    save_calibration(cal, d / "cal.json")
    good_cal = json.loads((d / "cal.json").read_text())
    cam = {"image_size": list(SIZE), "K": r.camera.K.tolist(), "dist": [0, 0, 0, 0, 0], "rms_px": 0.2}
    _write_json(d / "camera.json", cam)

    def cal_with(name: str, change: Any) -> None:
        obj = copy.deepcopy(good_cal)
        change(obj)
        (d / name).write_text(json.dumps(obj), encoding="utf-8")  # json.dumps writes NaN as NaN

    (d / "cal_text.json").write_text("{not json")
    cal_with("cal_v2.json", lambda o: o.update(version=2))
    cal_with("cal_noK.json", lambda o: o["camera"].pop("K"))
    cal_with("cal_K2x2.json", lambda o: o["camera"].update(K=[[1, 0], [0, 1]]))
    cal_with("cal_negf.json", lambda o: o["camera"]["K"][0].__setitem__(0, -800.0))
    cal_with("cal_nanK.json", lambda o: o["camera"]["K"][1].__setitem__(1, float("nan")))
    cal_with("cal_nanpose.json", lambda o: o["pose"].update(rvec=[float("nan"), 0, 0]))
    cal_with("cal_1280.json", lambda o: (o.update(image_size=[1280, 720]), o["camera"].update(image_size=[1280, 720])))
    for name, change in {
        "cam_bottom0.json": lambda c: c["K"].__setitem__(2, [0, 0, 0]),
        "cam_cx_outside.json": lambda c: c["K"][0].__setitem__(2, 1e9),
        "cam_Kstr.json": lambda c: c.update(K="3x3"),
        "cam_dist3.json": lambda c: c.update(dist=[0, 0, 0]),
    }.items():
        c = copy.deepcopy(cam)
        change(c)
        _write_json(d / name, c)
    lay = good_cal["layout"]
    _write_json(d / "lay_one.json", {**lay, "anchors": lay["anchors"][:1]})
    _write_json(d / "lay_dup.json", {**lay, "anchors": [lay["anchors"][0], {**lay["anchors"][1], "id": 0}]})
    _write_json(d / "lay_44.json", {**lay, "board_in": [44, 30]})
    unit: dict[str, Any] = {"tag": 12, "profile": "warrior", "owner": "red"}
    roster: dict[str, Any] = {"game": "valknut", "units": [unit]}
    _write_json(d / "roster_9999.json", {**roster, "units": [{**unit, "tag": 9999}]})
    _write_json(d / "roster_dup.json", {**roster, "units": roster["units"] * 2})
    _write_json(d / "roster_big.json", {**roster, "units": [{**unit, "base_mm": "big"}]})
    _write_json(d / "roster_anchor.json", {**roster, "units": [{**unit, "tag": 3}]})
    wall = {"name": "wall", "kind": "blocking", "polygon": [[0, 0], [4, 4], [4, 0], [0, 4]], "height_in": 2}
    _write_json(d / "terrain_bowtie.json", {"pieces": [wall]})
    _write_json(d / "terrain_two.json", {"pieces": [{**wall, "polygon": [[0, 0], [4, 4]]}]})
    _write_json(d / "terrain_lava.json", {"pieces": [{**wall, "polygon": [[0, 0], [4, 0], [4, 1]], "kind": "lava"}]})
    _write_json(d / "terrain_neg.json", {"pieces": [{**wall, "polygon": [[0, 0], [4, 0], [4, 1]], "height_in": -1}]})
    frames = d / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "frame_000000.png"), r.image)
    huge_frames = d / "huge_frames"
    huge_frames.mkdir()
    (huge_frames / "frame_000000.png").write_bytes((d / "huge.png").read_bytes())
    cv2.imwrite(str(huge_frames / "frame_000001.png"), r.image)
    png = bytearray(cv2.imencode(".png", r.image)[1].tobytes())
    png[60:70] = b"xxxxxxxxxx"  # an IDAT with a bad checksum: libpng prints its own error
    (d / "badcrc.png").write_bytes(bytes(png))
    corrupt = bytearray(jpeg.tobytes())
    mid = len(corrupt) // 2
    corrupt[mid:mid + 100] = b"\xff" * 100  # decodes, but libjpeg prints "Corrupt JPEG data"
    (d / "corrupt.jpg").write_bytes(bytes(corrupt))
    (d / "junk.mp4").write_bytes(np.random.default_rng(1).integers(0, 256, 20000, dtype=np.uint8).tobytes())
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "bigint.json").write_text('{"version": ' + "9" * 5000 + ', "pieces": [], "units": []}')
    for name, text in {"session_deep": "[" * 100_000 + "]" * 100_000, "session_bigint": '{"frames": 1' + "0" * 5000 + "}"}.items():
        (d / name).mkdir()
        (d / name / "manifest.json").write_text(text)
        (d / name / "frames.jsonl").write_text("")
    out = {p.name: str(p) for p in d.iterdir()}
    out["dir"] = str(d)
    out["long_name"] = str(d / ("a" * 300 + ".json"))
    return out


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height grey pixels, with almost no image data behind it."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 10)) + chunk(b"IEND", b"")


def _fill(argv: list[str], files: dict[str, str]) -> list[str]:
    """argv with each {name} replaced by that file's path."""
    return [re.sub(r"\{([^}]+)\}", lambda m: files[m.group(1)], a) for a in argv]


def _run(argv: list[str], files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    args = _fill(argv, files)
    try:
        status = main(args)
    except SystemExit as stop:  # argparse usage errors
        status = int(stop.code or 0)
    err = capsys.readouterr().err
    return status, err


ROWS: list[tuple[str, list[str], int, str]] = [
    # detect: the image
    ("missing image", ["detect", "{dir}/nope.png", "--calibration", "{cal.json}"], 2, "does not exist"),
    ("folder as image", ["detect", "{folder}", "--calibration", "{cal.json}"], 2, "is a folder"),
    ("0-byte png", ["detect", "{empty.png}", "--calibration", "{cal.json}"], 2, "not an image"),
    ("text as png", ["detect", "{notes.png}", "--calibration", "{cal.json}"], 2, "not an image"),
    ("truncated jpeg", ["detect", "{truncated.jpg}", "--calibration", "{cal.json}"], 2, "not an image"),
    ("pdf", ["detect", "{doc.pdf}", "--calibration", "{cal.json}"], 2, "not an image"),
    ("no tags at all", ["detect", "{blank.png}", "--calibration", "{cal.json}"], 0, ""),
    ("16-bit grey png", ["detect", "{grey16.png}", "--calibration", "{cal.json}"], 0, ""),
    ("--tag-height nan", ["detect", "{table.png}", "--calibration", "{cal.json}", "--tag-height", "nan"], 2, "--tag-height"),
    ("--tag-height word", ["detect", "{table.png}", "--calibration", "{cal.json}", "--tag-height", "x"], 2, "--tag-height"),
    ("--min-tag 0", ["detect", "{table.png}", "--calibration", "{cal.json}", "--min-tag", "0"], 2, "--min-tag"),
    ("huge png header", ["detect", "{huge.png}", "--calibration", "{cal.json}"], 2, "too large"),
    # detect without a calibration: pixels only, the same checks of the image and the flags
    ("pixels: grey png", ["detect", "{grey.png}", "--json"], 0, ""),
    ("pixels: 16-bit grey png", ["detect", "{grey16.png}", "--json"], 0, ""),
    ("pixels: RGBA png", ["detect", "{rgba.png}", "--json"], 0, ""),
    ("pixels: no tags at all", ["detect", "{blank.png}", "--json"], 0, ""),
    ("pixels: 1x1 png", ["detect", "{dot.png}", "--json"], 2, "too small"),
    ("pixels: huge png header", ["detect", "{huge.png}", "--json"], 2, "too large"),
    ("pixels: huge jpeg header", ["detect", "{huge.jpg}", "--json"], 2, "too large"),
    ("pixels: truncated jpeg", ["detect", "{truncated.jpg}", "--json"], 2, "not an image"),
    ("pixels: folder", ["detect", "{folder}", "--json"], 2, "is a folder"),
    ("pixels: 0-byte png", ["detect", "{empty.png}", "--json"], 2, "not an image"),
    ("pixels: missing image", ["detect", "{dir}/nope.png", "--json"], 2, "does not exist"),
    # --tag-height is refused when it is not a height even where only pixels are given: the same command
    # with a calibration added must not start failing
    ("pixels: --tag-height nan", ["detect", "{table.png}", "--json", "--tag-height", "nan"], 2, "--tag-height"),
    ("pixels: --tag-height inf", ["detect", "{table.png}", "--json", "--tag-height", "inf"], 2, "--tag-height"),
    ("pixels: --min-tag -1", ["detect", "{table.png}", "--json", "--min-tag=-1"], 2, "--min-tag"),
    # detect: the calibration file
    ("calibration missing", ["detect", "{table.png}", "--calibration", "{dir}/no.json"], 2, "does not exist"),
    ("calibration a folder", ["detect", "{table.png}", "--calibration", "{folder}"], 2, "is a folder"),
    ("calibration not JSON", ["detect", "{table.png}", "--calibration", "{cal_text.json}"], 2, "not valid JSON"),
    ("calibration a camera file", ["detect", "{table.png}", "--calibration", "{camera.json}"], 2, "not a Tablesight calibration"),
    ("calibration version 2", ["detect", "{table.png}", "--calibration", "{cal_v2.json}"], 2, "version 2"),
    ("calibration without K", ["detect", "{table.png}", "--calibration", "{cal_noK.json}"], 2, "'K'"),
    ("calibration K 2x2", ["detect", "{table.png}", "--calibration", "{cal_K2x2.json}"], 2, "3x3"),
    ("calibration negative focal", ["detect", "{table.png}", "--calibration", "{cal_negf.json}"], 2, "positive focal"),
    ("calibration NaN in K", ["detect", "{table.png}", "--calibration", "{cal_nanK.json}"], 2, "camera.K[1][1] is NaN"),
    ("calibration NaN pose", ["detect", "{table.png}", "--calibration", "{cal_nanpose.json}"], 2, "pose.rvec[0] is NaN"),
    ("calibration other image size", ["detect", "{table.png}", "--calibration", "{cal_1280.json}"], 2, "calibrate again"),
    # calibrate
    ("--board 0x0", ["calibrate", "{table.png}", "--board", "0x0", "-o", "{dir}/c.json"], 2, "positive width"),
    ("--board -5x3", ["calibrate", "{table.png}", "--board=-5x3", "-o", "{dir}/c.json"], 2, "30x22"),
    ("--board 30", ["calibrate", "{table.png}", "--board", "30", "-o", "{dir}/c.json"], 2, "30x22"),
    ("--board of another size", ["calibrate", "{table.png}", "--board", "44x30", "-o", "{dir}/c.json"], 2, "check --board"),
    ("no anchors in view", ["calibrate", "{blank.png}", "--board", "30x22", "-o", "{dir}/c.json"], 2, "were not found"),
    ("-o in a missing folder", ["calibrate", "{table.png}", "--board", "30x22", "-o", "{dir}/no/c.json"], 2, "does not exist"),
    ("-o is a folder", ["calibrate", "{table.png}", "--board", "30x22", "-o", "{folder}"], 2, "cannot be written: it is a folder"),
    ("layout with one anchor", ["calibrate", "{table.png}", "--board", "30x22", "--layout", "{lay_one.json}", "-o", "{dir}/c.json"], 2, "two or more"),
    ("layout with anchor 0 twice", ["calibrate", "{table.png}", "--board", "30x22", "--layout", "{lay_dup.json}", "-o", "{dir}/c.json"], 2, "twice"),
    ("layout for another board", ["calibrate", "{table.png}", "--board", "30x22", "--layout", "{lay_44.json}", "-o", "{dir}/c.json"], 2, "44x30"),
    ("camera K without [0, 0, 1]", ["calibrate", "{table.png}", "--board", "30x22", "--intrinsics", "{cam_bottom0.json}", "-o", "{dir}/c.json"], 2, "[0, 0, 1]"),
    ("camera cx outside the image", ["calibrate", "{table.png}", "--board", "30x22", "--intrinsics", "{cam_cx_outside.json}", "-o", "{dir}/c.json"], 2, "principal point"),
    ("camera K a string", ["calibrate", "{table.png}", "--board", "30x22", "--intrinsics", "{cam_Kstr.json}", "-o", "{dir}/c.json"], 2, "list of numbers"),
    ("camera dist of 3", ["calibrate", "{table.png}", "--board", "30x22", "--intrinsics", "{cam_dist3.json}", "-o", "{dir}/c.json"], 2, "4, 5, 8, 12 or 14"),
    # calibrate-camera
    ("--chessboard 2x2", ["calibrate-camera", "{blank.png}", "--chessboard", "2x2", "--square", "1", "-o", "{dir}/k.json"], 2, "too small"),
    ("--chessboard 99999x99999", ["calibrate-camera", "{blank.png}", "--chessboard", "99999x99999", "--square", "1", "-o", "{dir}/k.json"], 2, "at most 100"),
    ("--square inf", ["calibrate-camera", "{blank.png}", "--chessboard", "9x6", "--square", "inf", "-o", "{dir}/k.json"], 2, "square side"),
    ("--charuco larger than its dictionary", ["calibrate-camera", "{blank.png}", "--charuco", "50x70", "--square", "1", "--marker", "0.5", "--dictionary", "DICT_6X6_250", "-o", "{dir}/k.json"], 2, "has only 250"),
    ("--dictionary unknown", ["calibrate-camera", "{blank.png}", "--charuco", "5x7", "--square", "1", "--marker", "0.5", "--dictionary", "DICT_NOPE", "-o", "{dir}/k.json"], 2, "DICT_NOPE"),
    ("calibration photo a pdf", ["calibrate-camera", "{doc.pdf}", "--chessboard", "9x6", "--square", "1", "-o", "{dir}/k.json"], 2, "not an image"),
    ("no chessboard in view", ["calibrate-camera", "{blank.png}", "--chessboard", "9x6", "--square", "1", "-o", "{dir}/k.json"], 2, "No 9x6 chessboard"),
    ("calibration photo huge header", ["calibrate-camera", "{huge.png}", "--chessboard", "9x6", "--square", "1", "-o", "{dir}/k.json"], 2, "too large"),
    ("calibration photo a folder", ["calibrate-camera", "{folder}", "--chessboard", "9x6", "--square", "1", "-o", "{dir}/k.json"], 2, "is a folder"),
    # replay: a frame file whose header claims too many pixels
    ("replay frame of huge header", ["replay", "{huge_frames}", "--calibration", "{cal.json}", "--json"], 2, "too large"),
    # tags and mat
    ("tags --size nan", ["tags", "--ids", "10-12", "--size", "nan", "-o", "{dir}/t.pdf"], 2, "--size"),
    ("tags --ids 29-10", ["tags", "--ids", "29-10", "-o", "{dir}/t.pdf"], 2, "29-10"),
    ("tags --ids 587", ["tags", "--ids", "587", "-o", "{dir}/t.pdf"], 2, "0-586"),
    ("tags -o is a folder", ["tags", "--ids", "10-12", "-o", "{folder}"], 2, "cannot be written: it is a folder"),
    ("tags --mount rim, 32 mm base", ["tags", "--ids", "10", "--mount", "rim", "--base", "32", "-o", "{dir}/t.pdf"], 2,
     "print toppers instead"),
    ("tags --mount rim, no base", ["tags", "--ids", "10", "--mount", "rim", "-o", "{dir}/t.pdf"], 2, "(--base)"),
    ("tags --pin on flat tags", ["tags", "--ids", "10", "--pin", "2", "-o", "{dir}/t.pdf"], 2, "--mount topper"),
    ("tags --clearance nan", ["tags", "--ids", "10", "--mount", "rim", "--base", "60", "--clearance", "nan",
                              "-o", "{dir}/t.pdf"], 2, "--clearance"),
    ("mat -o is a folder", ["mat", "--board", "30x22", "-o", "{folder}"], 2, "cannot be written: it is a folder"),
    ("mat --board 0x0", ["mat", "--board", "0x0", "-o", "{dir}/m.pdf"], 2, "positive width"),
    # serve: everything it reads is checked before it listens
    ("serve --port 0", ["serve", "--port", "0"], 2, "--port"),
    ("serve --port 70000", ["serve", "--port", "70000"], 2, "--port"),
    ("serve --host nonsense", ["serve", "--host", "999.1.1.1", "--port", "18931"], 2, "--host"),
    ("serve --replay missing", ["serve", "--replay", "{dir}/nope", "--port", "18932"], 2, "--replay"),
    ("serve --video of a pdf", ["serve", "--video", "{doc.pdf}", "--port", "18933"], 2, "cannot be opened"),
    ("serve --video of text", ["serve", "--video", "{notes.png}", "--port", "18933"], 2, "no readable frames"),
    ("roster tag 9999", ["serve", "--replay", "{frames}", "--roster", "{roster_9999.json}", "--port", "18934"], 2, "up to 586"),
    ("roster tag twice", ["serve", "--replay", "{frames}", "--roster", "{roster_dup.json}", "--port", "18934"], 2, "listed twice"),
    ("roster base_mm big", ["serve", "--replay", "{frames}", "--roster", "{roster_big.json}", "--port", "18934"], 2, "base_mm"),
    ("roster anchor tag", ["serve", "--replay", "{frames}", "--roster", "{roster_anchor.json}", "--port", "18934"], 2, "anchor tags"),
    ("terrain crossing itself", ["serve", "--replay", "{frames}", "--terrain", "{terrain_bowtie.json}", "--port", "18934"], 2, "crosses itself"),
    ("terrain of 2 points", ["serve", "--replay", "{frames}", "--terrain", "{terrain_two.json}", "--port", "18934"], 2, "at least 3"),
    ("terrain kind lava", ["serve", "--replay", "{frames}", "--terrain", "{terrain_lava.json}", "--port", "18934"], 2, "lava"),
    ("terrain below the table", ["serve", "--replay", "{frames}", "--terrain", "{terrain_neg.json}", "--port", "18934"], 2, "below 0"),
    ("serve bad calibration", ["serve", "--replay", "{frames}", "--calibration", "{cal_v2.json}", "--port", "18934"], 2, "version 2"),
    # every JSON file a command reads: nested 100,000 deep, a 5,000-digit number, a 300-character name
    *[
        row
        for what, argv in (
            ("calibration", ["detect", "{table.png}", "--calibration", "{F}"]),
            ("layout", ["calibrate", "{table.png}", "--board", "30x22", "--layout", "{F}", "-o", "{dir}/c.json"]),
            ("intrinsics", ["calibrate", "{table.png}", "--board", "30x22", "--intrinsics", "{F}", "-o", "{dir}/c.json"]),
            ("roster", ["replay", "{frames}", "--calibration", "{cal.json}", "--roster", "{F}", "--json"]),
            ("terrain", ["replay", "{frames}", "--calibration", "{cal.json}", "--terrain", "{F}", "--json"]),
            ("scenario", ["judge", "{F}", "--json"]),
        )
        for row in (
            (f"{what} nested deep", [a.replace("{F}", "{deep.json}") for a in argv], 2, "deeper than 64 levels"),
            (f"{what} 5000 digits", [a.replace("{F}", "{bigint.json}") for a in argv], 2, "5000 digits"),
            (f"{what} name too long", [a.replace("{F}", "{long_name}") for a in argv], 2, "longer than the 255"),
        )
    ],
    ("manifest nested deep", ["replay", "{session_deep}", "--json"], 2, "deeper than 64 levels"),
    ("manifest 5000 digits", ["replay", "{session_bigint}", "--json"], 2, "5001 digits"),
]


@pytest.mark.parametrize(("argv", "status", "says"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_is_exit_2_in_one_sentence(
    argv: list[str], status: int, says: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    got, err = _run(argv, files, capsys)
    assert got == status, err
    if status == 2:
        assert err.count("\n") == 1 and err.strip().endswith((".", "?")) and says in err, err
        assert "Traceback" not in err


def test_serve_port_in_use_is_exit_2(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        got, err = _run(["serve", "--replay", "{frames}", "--port", str(port)], files, capsys)
    assert got == 2 and f"Port {port} on 127.0.0.1 is in use" in err and err.count("\n") == 1


# --- judge: one malformed field per game, starting from each game's documented example -------------------

def _example(title: str) -> dict[str, Any]:
    return next(copy.deepcopy(sc) for t, sc, _ in all_examples() if t == title)


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    for key in path[:-1]:
        obj = obj[key]
    if value is _DELETE:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value


_DELETE = object()
NAN = float("nan")
JUDGE_ROWS: list[tuple[str, tuple[Any, ...], Any, str]] = [
    ("valknut: Move within Speed", ("units", 0, "at", 0), NAN, "units[0].at[0] is NaN"),
    ("valknut: Move within Speed", ("units", 0, "at"), "5, 5", '"at" must be [x, y]'),
    ("valknut: Move within Speed", ("action", "unit"), [12], "unit"),
    ("valknut: Move within Speed", ("action", "params", "to", 0), 1e308, '"to"'),
    ("valknut: Move within Speed", ("action", "kind"), "teleport", "teleport"),
    ("valknut: Move within Speed", ("units", 0, "tag"), "12", "tag"),
    ("valknut: Armor takes damage before HP", ("units", 0, "paths", "wolf"), 10**30, '"paths"'),
    ("valknut: A killed unit is removed", ("units", 1, "carrying"), 10**30, '"carrying"'),
    ("valknut: Delivering a Runestone (our Winning option)", ("state", "active_unit"), [], "active_unit"),
    ("valknut: Deploy wholly within the Drop Zone", ("state",), None, "drop zone"),
    ("valknut: Question: which section", ("question", "at"), [1, "a"], '"at": [x, y]'),
    ("valknut: Question: legal actions", ("units", 0, "at"), _DELETE, "not on the battlefield"),
    ("valknut: Move over a wall", ("terrain", "pieces", 0, "height_in"), 1e308, "height_in"),
    ("valyr: Move: the first move of a turn, up to Sprint", ("units", 0, "at", 0), NAN, "units[0].at[0] is NaN"),
    ("valyr: Move: the first move of a turn, up to Sprint", ("action", "params", "pm_in"), NAN, "action.params.pm_in is NaN"),
    ("valyr: Move: the first move of a turn, up to Sprint", ("cards", 0, "Combat", "Appraisal"), NAN,
     "cards[0].Combat.Appraisal is NaN"),
    ("valyr: Move: a later move, up to Stamina, too close to call", ("state", "active"), [], '"active"'),
    ("magni: Score of the tiles on the board", ("units", 4, "at", 0), NAN, "units[4].at[0] is NaN"),
    ("magni: Score of the tiles on the board", ("units", 0, "hex"), "0,0", "hex"),
    ("hex_skirmish: Where a figure can move", ("board", "layout", "size_in"), 1e308, "size_in"),
    ("hex_skirmish: Where a figure can move", ("board", "hexagon"), 10**30, '"hexagon"'),
    ("hex_skirmish: Where a figure can move", ("board", "cells", 0, "terrain"), [], "terrain"),
    ("hex_skirmish: An attack", ("cards", 1, "attack"), 10**30, '"attack"'),
    ("hex_skirmish: A figure astride two hexes", ("units", 0, "at", 0), NAN, "units[0].at[0] is NaN"),
    ("vigtavl: move: occupancy at most 3", ("developments",), None, '"developments" must be a list'),
    ("vigtavl: attack: ranged blocked by an opponent's wall", ("walls",), None, '"walls" must be a list'),
    ("vigtavl: unload: a knight goes ashore", ("units", 0), _DELETE, "not one of the units"),
    ("vigtavl: end_retaliation: the retaliating player passes", ("state", "retaliating"), "x", "retaliating"),
    ("vigtavl: question: reachable cells", ("question", "unit"), "x", '"unit"'),
    ("vigtavl: question: map size", ("question", "players"), None, '"players"'),
    ("vigtavl: position: a base astride a cell border", ("units", 0, "at", 0), NAN, "units[0].at[0] is NaN"),
    ("vigtavl: position: a base astride a cell border", ("units", 0, "base_mm"), "x", "base_mm"),
]


@pytest.mark.parametrize(
    ("title", "path", "value", "says"), JUDGE_ROWS, ids=[f"{r[0]}:{'.'.join(map(str, r[1]))}" for r in JUDGE_ROWS]
)
def test_judge_malformed_scenario_is_exit_2(
    title: str, path: tuple[Any, ...], value: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _example(title)
    _set(scenario, path, value)
    file = tmp_path / "scenario.json"
    file.write_text(json.dumps(scenario), encoding="utf-8")  # NaN is written as NaN, as a careless tool would
    assert main(["judge", str(file), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "not valid JSON"),
        ("[1, 2]", "one JSON object"),
        ('{"units": []}', 'names no "game"'),
        ('{"game": "chess"}', "no game called 'chess'"),
        ('{"game": "valknut", "seed": "x"}', '"seed"'),
    ],
)
def test_judge_malformed_file_is_exit_2(text: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "scenario.json"
    file.write_text(text, encoding="utf-8")
    assert main(["judge", str(file)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err


# --- through the real entry point: nothing but the sentence reaches the terminal -------------------------

def test_a_corrupt_jpeg_that_decodes_prints_nothing_of_libjpeg(files: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "webui.cli", "detect", files["corrupt.jpg"], "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["detect", "{truncated.jpg}", "--calibration", "{cal.json}", "--json"], "not an image"),
        (["serve", "--video", "{notes.png}", "--port", "18935"], "no readable frames"),
        (["calibrate-camera", "{blank.png}", "--chessboard", "2x2", "--square", "1", "-o", "{dir}/k.json"], "too small"),
        (["detect", "{badcrc.png}", "--json"], "not an image"),
        (["replay", "{junk.mp4}", "--calibration", "{cal.json}", "--json"], "cannot be opened as a video"),
        (["calibrate-camera", "{table.png}", "--chessboard", "9x6", "--square", "1e308", "-o", "{dir}/k.json"],
         "at most 20"),
        (["judge", "{bigint.json}", "--json"], "5000 digits"),
    ],
    ids=["detect truncated jpeg", "serve video of text", "chessboard 2x2", "png with a bad checksum",
         "video of noise", "square 1e308", "scenario 5000 digits"],
)
def test_subprocess_prints_one_sentence_only(argv: list[str], says: str, files: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "webui.cli", *_fill(argv, files)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    lines = proc.stderr.splitlines()  # our sentence only: no libpng, libjpeg, FFmpeg or numpy lines
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in proc.stderr, proc.stderr
