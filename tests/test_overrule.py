"""The players' last word over the camera (session/overrule.py): an overruled verdict, a corrected position,
two players overruling the same verdict; ruled the same way by `tablesight replay` from the recorded
declarations, shown in the live page (real Chromium) and in the battle report. Numbers from the bundled
Valknut sample, whose golden transcript is the camera's reading."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from rules.engine import Action
from session.pipeline import Pipeline
from session.replay import ReplayRun, load_setup, open_source
from session.report import gather_report
from tests.webui_server import SAME_ORIGIN, running_server, session_settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"

ANNA = {"by": "Anna", "reason": "the tape says 5.9"}
OVERRULE_BLUE3 = Action("overrule", 17, {"frame": 73, "rule": "valknut.move.distance", "outcome": "legal", **ANNA})
SECOND_OPINION = Action("overrule", 17, {"frame": 73, "rule": "valknut.move.distance", "outcome": "illegal",
                                         "by": "Bo", "reason": "it was 7 inches"})
CORRECT_RED4 = Action("correct", 13, {"at_in": [11.0, 5.1], "by": "Anna", "reason": "base on the ruin's edge"})
UNDO_BLUE2 = Action("overrule", 16, {"frame": 109, "rule": "valknut.move.distance", "outcome": "illegal",
                                     "by": "Bo", "reason": "measured from the wrong edge"})


def _replay(extra: dict[int, list[Action]]) -> list[dict[str, Any]]:
    source = open_source(SAMPLE)
    with source:
        setup = load_setup(source)
        plan = {k: list(v) for k, v in setup.declarations.items()}
        for frame, actions in extra.items():
            plan.setdefault(frame, []).extend(actions)
        return list(ReplayRun(source, dataclasses.replace(setup, declarations=plan)).events())


@pytest.fixture(scope="module")
def ruled() -> list[dict[str, Any]]:
    return _replay({76: [OVERRULE_BLUE3], 77: [SECOND_OPINION], 92: [CORRECT_RED4], 110: [UNDO_BLUE2]})


def _at(events: list[dict[str, Any]], frame: int, rule: str, unit: int | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "verdict" and e["frame"] == frame and e["rule"] == rule
            and (unit is None or e["unit"] == unit)]


def test_an_overruled_verdict_keeps_the_cameras_reading(ruled: list[dict[str, Any]]) -> None:
    camera = _at(ruled, 73, "valknut.move.distance", 17)
    assert [v["outcome"] for v in camera] == ["illegal"]  # the recording keeps what the camera said
    (over,) = _at(ruled, 76, "tablesight.overrule")
    assert over["numbers"] == {"frame": 73, "rule": "valknut.move.distance", "camera_outcome": "illegal",
                               "outcome": "legal", "by": "Anna", "reason": "the tape says 5.9", "side": None,
                               "undone": False, "put_back": False}
    assert over["message"].startswith("Anna overruled the camera on Blue 3")


def test_the_first_of_two_overrules_stands(ruled: list[dict[str, Any]]) -> None:
    (second,) = _at(ruled, 77, "tablesight.overrule.once")
    assert second["outcome"] == "illegal"
    assert second["message"] == ("Anna already overruled this verdict on Blue 3 (legal: the tape says 5.9); "
                                 "the first overrule stands, and only a player of the other side may undo it.")


def _declared(extra: dict[int, list[Action]]) -> dict[int, list[dict[str, Any]]]:
    """frame -> the verdicts of the actions declared at it, ruled live by a pipeline over the sample."""
    source = open_source(SAMPLE)
    out: dict[int, list[dict[str, Any]]] = {}
    with source:
        setup = load_setup(source)
        pipe = Pipeline(setup.calibration, setup.roster, setup.terrain, setup.game, setup.game_setup,
                        declarations=setup.declarations)
        for frame in source:
            result = pipe.process(frame, declared=extra.get(frame.index, []))
            out[frame.index] = [v for v in result.verdicts if str(v["rule"]).startswith("tablesight.")]
            if frame.index >= max(extra):
                break
    return out


def _overrule(outcome: str, by: str, side: str | None = None, rule: str = "valknut.move.distance",
              frame: int = 73) -> Action:
    params = {"frame": frame, "rule": rule, "outcome": outcome, "by": by, "reason": "the tape"}
    return Action("overrule", 17, {**params, "side": side} if side else params)


def test_an_overrule_must_change_the_verdict() -> None:
    out = _declared({76: [_overrule("illegal", "Anna")]})  # the camera said illegal: illegal to illegal
    (refused,) = out[76]
    assert refused["outcome"] == "illegal" and refused["rule"] == "tablesight.overrule"
    assert refused["message"] == ('The verdict “Unit 17 moved 7.279" ± 0.004", its Speed 6": illegal” (frame 73) on '
                                  "Blue 3 already stands as illegal; an overrule must change it.")


def test_tablesights_own_records_are_not_overruled() -> None:
    out = _declared({76: [_overrule("legal", "Anna")], 77: [_overrule("illegal", "Anna", rule="tablesight.overrule",
                                                                       frame=76)]})
    (refused,) = out[77]
    assert refused["outcome"] == "illegal"
    assert refused["message"].startswith("tablesight.overrule is Tablesight's own record, not a verdict")


def test_the_other_side_may_undo_an_overrule_and_the_same_side_may_not() -> None:
    out = _declared({76: [_overrule("legal", "Anna", "blue")], 77: [_overrule("illegal", "Ben", "blue")],
                     78: [_overrule("illegal", "Rita", "red")], 79: [_overrule("legal", "Sam", "nobody")]})
    (first,) = out[76]
    assert first["outcome"] == "info" and first["message"].startswith("Anna (blue) overruled the camera on Blue 3")
    (same_side,) = out[77]
    assert same_side["rule"] == "tablesight.overrule.once" and same_side["outcome"] == "illegal"
    (undo,) = out[78]
    assert undo["rule"] == "tablesight.overrule" and undo["outcome"] == "info"
    assert undo["numbers"]["outcome"] == "illegal" and undo["numbers"]["side"] == "red"
    # the verdict in the game's words, not its rule name
    assert undo["message"].startswith("Rita (red) overruled Anna's overrule on Blue 3: “Unit 17 moved 7.279\" ± "
                                      "0.004\", its Speed 6\": illegal” (frame 73) now stands as illegal")
    (unknown,) = out[79]
    assert unknown["outcome"] == "illegal" and "one of the sides in the roster" in unknown["message"]


def test_a_taken_back_action_is_put_back_when_the_other_side_undoes_the_overrule() -> None:
    source = open_source(SAMPLE)
    with source:
        setup = load_setup(source)
        assert setup.game is not None
        pipe = Pipeline(setup.calibration, setup.roster, setup.terrain, setup.game, setup.game_setup,
                        declarations=setup.declarations)
        dumps: dict[int, str] = {}
        verdicts: dict[int, list[dict[str, Any]]] = {}
        plan = {110: [Action("overrule", 16, {**UNDO_BLUE2.params, "side": "red"})],
                111: [Action("overrule", 16, {**UNDO_BLUE2.params, "outcome": "legal", "by": "Bea", "side": "blue"})]}
        for frame in source:
            result = pipe.process(frame, declared=plan.get(frame.index, []))
            dumps[frame.index] = json.dumps(setup.game.dump_state(pipe.state), sort_keys=True)
            verdicts[frame.index] = [v for v in result.verdicts if v["rule"] == "tablesight.overrule"]
            if frame.index == 111:
                break
    assert verdicts[110][0]["numbers"]["undone"] is True and dumps[110] == dumps[108]
    assert verdicts[111][0]["numbers"]["put_back"] is True
    assert dumps[111] == dumps[109]  # Blue 2's move stands again


def test_a_replay_resumed_from_a_checkpoint_puts_back_as_the_live_table_did() -> None:
    """A seek resumes from a checkpoint (deep copies): the undo by the other side still finds nothing ruled since."""
    plan = {110: [Action("overrule", 16, {**UNDO_BLUE2.params, "side": "red"})],
            111: [Action("overrule", 16, {**UNDO_BLUE2.params, "outcome": "legal", "by": "Bea", "side": "blue"})]}
    source = open_source(SAMPLE)
    with source:
        setup = load_setup(source)
        assert setup.game is not None

        def fresh() -> Pipeline:
            return Pipeline(setup.calibration, setup.roster, setup.terrain, setup.game, setup.game_setup,
                            declarations=setup.declarations)

        live = fresh()
        for frame in source:
            live.process(frame, declared=plan.get(frame.index, []))
            if frame.index == 110:
                break
        resumed = fresh()
        resumed.resume(live.checkpoint(110))
        result = resumed.process(_frame_after(source, 110), declared=plan[111])
    (undo,) = [v for v in result.verdicts if v["rule"] == "tablesight.overrule"]
    assert undo["numbers"]["put_back"] is True


def _frame_after(source: Any, index: int) -> Any:
    for frame in source:
        if frame.index == index + 1:
            return frame
    raise AssertionError(f"no frame {index + 1}")


def test_a_correction_off_the_board_is_refused() -> None:
    far = [Action("correct", 13, {"at_in": at, "by": "Anna", "reason": "there"}) for at in
           ([1e308, -1e308], [-50, 400], [33.5, 11.0])]
    near = Action("correct", 13, {"at_in": [-2.5, 11.0], "by": "Anna", "reason": "on the edge"})
    out = _declared({92: far, 93: [near]})
    assert [v["outcome"] for v in out[92]] == ["illegal", "illegal", "illegal"]
    assert out[92][1]["message"] == ("(-50, 400) is off the 30\" x 22\" board; correct Red 4's position to where "
                                     "it stands on the board (0 to 30 across, 0 to 22 deep).")
    assert out[93][0]["rule"] == "tablesight.correct" and out[93][0]["outcome"] == "info"


def test_a_corrected_position_rules_the_move_again_and_is_used_after(ruled: list[dict[str, Any]]) -> None:
    golden = [json.loads(line) for line in (SAMPLE / "golden.jsonl").read_text().splitlines()]
    move = next(e for e in golden if e["type"] == "move" and e["tag"] == 13)
    (fix,) = _at(ruled, 92, "tablesight.correct")
    assert fix["numbers"]["camera_in"] == pytest.approx(move["to_in"], abs=0.01)
    assert fix["numbers"]["shift_in"] == pytest.approx(math.dist(move["to_in"], (11.0, 5.1)), abs=1e-3)
    (again,) = _at(ruled, 92, "valknut.move.distance", 13)
    assert again["numbers"]["horizontal_in"] == pytest.approx(math.dist(move["from_in"], (11.0, 5.1)), abs=1e-3)
    # from where the players say it stands, its move (2.20" across + 3" climbed x2 = 8.20") is still beyond its
    # Speed 6": the move stays taken back, so the later ranged attack of Blue 1 (tag 15) on Red 4 measures from
    # where Red 4 legally stood, as the camera's own ruling did
    assert again["outcome"] == "illegal" and again["numbers"]["length_in"] == pytest.approx(
        math.dist(move["from_in"], (11.0, 5.1)) + 6.0, abs=1e-3)
    (shot,) = _at(ruled, 115, "valknut.attack.ranged_engaged", 15)
    (camera_shot,) = [e for e in golden if e.get("rule") == "valknut.attack.ranged_engaged" and e["unit"] == 15]
    assert shot["numbers"]["gap_in"] == pytest.approx(camera_shot["numbers"]["gap_in"], abs=1e-4)


def test_overruled_to_illegal_takes_the_last_action_back() -> None:
    source = open_source(SAMPLE)
    with source:
        setup = load_setup(source)
        pipe = Pipeline(setup.calibration, setup.roster, setup.terrain, setup.game, setup.game_setup,
                        declarations=setup.declarations)
        assert setup.game is not None
        dumps: dict[int, Any] = {}
        for frame in source:
            declared = [UNDO_BLUE2] if frame.index == 110 else []
            result = pipe.process(frame, declared=declared)
            dumps[frame.index] = json.dumps(setup.game.dump_state(pipe.state), sort_keys=True)
            if frame.index == 110:
                (undo,) = [v for v in result.verdicts if v["rule"] == "tablesight.overrule"]
                break
    assert undo["numbers"]["undone"] is True
    assert dumps[109] != dumps[108]  # Blue 2's move changed the game...
    assert dumps[110] == dumps[108]  # ...and overruled, the game goes on from before it


def test_replay_rules_recorded_overrules_the_same_way(tmp_path: Path, ruled: list[dict[str, Any]]) -> None:
    session = tmp_path / "game"
    shutil.copytree(SAMPLE, session)
    with (session / "declarations.jsonl").open("a", encoding="utf-8") as fh:
        for frame, action in ((76, OVERRULE_BLUE3), (77, SECOND_OPINION), (92, CORRECT_RED4), (110, UNDO_BLUE2)):
            fh.write(json.dumps({"frame": frame, "action": action.to_json()}) + "\n")
    done = subprocess.run([sys.executable, "-m", "webui.cli", "replay", str(session), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    replayed = [json.loads(line) for line in done.stdout.splitlines()]
    strip = [{k: v for k, v in e.items() if k != "seconds"} for e in replayed]
    assert strip == [{k: v for k, v in e.items() if k != "seconds"} for e in ruled]
    report = gather_report(session)
    assert [r.rule for r in report.overrules()] == ["tablesight.overrule", "tablesight.overrule.once",
                                                    "tablesight.correct", "tablesight.overrule"]
    blue3 = next(m for m in report.moves if m.unit == 17)
    distance = next(r for r in blue3.rulings if r.rule == "valknut.move.distance")
    assert blue3.outcome == "legal" and "Overruled by Anna (illegal by the camera)" in distance.message


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The sample played once as a replay source (it stays on its last frame), ruled as Valknut."""
    root = tmp_path_factory.mktemp("overrule")
    shutil.copytree(SAMPLE, root / "table")
    settings = session_settings(root / "table", root, tmp_path_factory.mktemp("setup"), game="valknut")
    with running_server(settings) as (url, app):
        live = app.state.runtime.live
        assert live.wait_for_frame(20)
        deadline = time.monotonic() + 300  # a loaded 2-core machine plays the 140 frames slower than 10 fps
        while live.status().to_json().get("status") != "ended":
            assert time.monotonic() < deadline, "the sample did not play to its end in 300 s"
            time.sleep(0.1)
        yield url


def _declare(url: str, action: Action) -> dict[str, Any]:
    res = httpx.post(url + "/api/live/declare", json={"action": action.to_json()}, timeout=30, headers=SAME_ORIGIN)
    assert res.status_code == 200, res.text
    return res.json()


def test_live_overrule_and_correction_over_http(server: str) -> None:
    first = _declare(server, OVERRULE_BLUE3)
    assert [v["rule"] for v in first["verdicts"]] == ["tablesight.overrule"]
    second = _declare(server, SECOND_OPINION)
    assert second["outcome"] == "illegal" and "the first overrule stands" in second["verdicts"][0]["message"]
    bad = httpx.post(server + "/api/live/declare", timeout=30, headers=SAME_ORIGIN, json={"action": {
        "kind": "overrule", "unit": 17, "params": {"frame": 73, "rule": "valknut.move.distance", "outcome": "maybe",
                                                   "by": "Anna", "reason": "x"}}})
    assert bad.status_code == 400 and "legal or illegal, not 'maybe'" in bad.json()["detail"]
    # Red 5's move (frame 131) was the last action ruled: a correction rules it again (a move, not a disengage:
    # Blue 3's illegal move at frame 73 was taken back, so Blue 3 stood where it legally was, not beside Red 5)
    fixed = _declare(server, Action("correct", 14, {"at_in": [12.5, 7.9], "by": "Bo", "reason": "hand in the way"}))
    rules = [v["rule"] for v in fixed["verdicts"]]
    assert rules[0] == "tablesight.correct" and "valknut.move.distance" in rules
    again = next(v for v in fixed["verdicts"] if v["rule"] == "valknut.move.distance")
    assert again["numbers"]["horizontal_in"] == pytest.approx(math.dist((13.2001, 10.2018), (12.5, 7.9)), abs=0.01)


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_live_page_overrules_a_verdict(server: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1500, "height": 950})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server + "/")
        item = page.locator("#events li.illegal", has_text="Red 4 moved").first
        item.wait_for(timeout=20000)
        item.locator("button.overrule-open").click()
        form = item.locator("form.overrule")
        assert form.locator("select[name=side] option").all_inner_texts() == ["red", "blue"]
        form.locator("select[name=side]").select_option("red")
        form.locator("input[name=by]").fill("Cara")
        form.locator("input[name=reason]").fill("the ruin's stairs count as the floor")
        form.locator("button[type=submit]").click()
        page.locator("#events li", has_text="Cara (red) overruled the camera on Red 4").wait_for(timeout=20000)
        # the same verdict, overruled back by a player of the other side: who overruled what is on the page
        item.locator("button.overrule-open").click()
        form = item.locator("form.overrule")
        form.locator("select[name=outcome]").select_option("illegal")
        form.locator("select[name=side]").select_option("blue")
        form.locator("input[name=by]").fill("Dan")
        form.locator("input[name=reason]").fill("the stairs are scenery")
        form.locator("button[type=submit]").click()
        page.locator("#events li", has_text="Dan (blue) overruled Cara's overrule on Red 4").wait_for(timeout=20000)
        page.screenshot(path="/tmp/tablesight-overrule.png")
        browser.close()
    assert not errors, errors


def test_a_player_who_signs_with_their_sides_name_is_named_once() -> None:
    (said,) = _declared({76: [_overrule("legal", "blue", "blue")]})[76]
    assert said["message"].startswith("blue overruled the camera on Blue 3"), said["message"]


def test_an_overrule_quotes_the_verdict_it_overrules() -> None:
    """The verdict in its own words, cut at SAID_CHARS; its rule name only when it said nothing."""
    from session.overrule import SAID_CHARS, _quoted

    assert _quoted("Blue 3 is within 1\" of Red 4.", "valknut.engagement", 12) == "“Blue 3 is within 1\" of Red 4” (frame 12)"
    assert _quoted("", "valknut.engagement", 12) == "valknut.engagement at frame 12"
    long = _quoted("x" * 300, "r", 1)
    assert long == "“" + "x" * (SAID_CHARS - 1) + "…” (frame 1)"
