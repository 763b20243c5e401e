"""The players' own dice in the session (session/pipeline.py, session/pending_roll.py, session/dice_watch.py): an
action that needs dice nobody gave waits for them; the faces given answer it on the positions as they stood; a
correction rules it again from before it; "roll for us" rolls and says so; the pending roll survives a checkpoint;
and the camera fills a roll once the same dice lie still in the tray.

The real Valknut rules on the bundled sample's calibration and roster (docs/scenarios/valknut.md "Melee attack
hits": Accuracy 1 against Evasion 1 needs 4+, Damage 2 through Armor 0, 10 HP). The dice reader is a function
given to DiceWatch as its `read` parameter (the real one is vision.dice.read_dice).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from calibration.table import load_calibration
from rules.dice import RollError, RollRequest
from rules.engine import Action, find_game
from rules.roster import parse_roster
from rules.valknut.setup import scenario_state
from session.dice_watch import NEEDED_FRAMES, DiceWatch, Tray, TrayError, read_tray_file, same_dice
from session.paths import SAMPLE_SESSION_DIR
from session.pending_roll import CANCEL, CORRECT, DiceAnswer, RollCorrected, RollTaken, check_count
from session.pipeline import Pipeline
from session.replay import read_declarations, replay_rolls
from vision.dice.die import LOW_CONFIDENCE, Die

ATTACK = Action("attack", 12, {"target": 17})
"""Red 3 (tag 12) attacks Blue 3 (tag 17), 0.8" apart: a melee attack needing 4+ on 1 d6."""


def _pipeline(roll_for_us: bool | None = None) -> Pipeline:
    setup = json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())
    pipe = Pipeline(load_calibration(SAMPLE_SESSION_DIR / "calibration.json"), parse_roster(setup["roster"]), (),
                    find_game("valknut"), roll_for_us=roll_for_us)
    pipe.state, pipe.positions = scenario_state({"game": "valknut", "units": [
        {"tag": 12, "owner": "red", "at": [5, 5], "base_mm": 25.4},
        {"tag": 17, "owner": "blue", "at": [6.8, 5], "base_mm": 25.4},
        {"tag": 18, "owner": "blue", "at": [5, 6.8], "base_mm": 25.4}]})
    return pipe


def _hp(pipe: Pipeline, tag: int = 17) -> int:
    return int(pipe.state.unit(tag).hp)


def _rules(verdicts: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(v["rule"], v["outcome"]) for v in verdicts]


def test_an_attack_with_no_dice_waits_for_them_and_changes_nothing() -> None:
    pipe = _pipeline()
    assert pipe.roll_for_us is False  # the default: nobody rolls for the players
    out = pipe.declare(ATTACK)
    assert _rules(out) == [("dice.pending", "waiting")]
    assert out[0]["message"] == ("Waiting for the dice: roll 1 d6 for soldier 12's attack on soldier 17; 4+ hits "
                                 "(Accuracy 1 against Evasion 1).")
    pending = pipe.pending
    assert pending is not None and pending.action == ATTACK and pending.camera is False
    assert (pending.request.sides, pending.request.count, pending.request.clause) == (6, 1, "valknut.attack.roll")
    assert _hp(pipe) == 10 and pipe.last_dice is None and pipe.take_dice_events() == []
    shown = pending.to_json(pipe.words)
    assert shown["words"] == "Red 3 attacks Blue 3" and shown["request"]["sentence"].startswith("roll 1 d6 for ")
    assert pipe.take_records() == [(-1, ATTACK)]  # the recording keeps the declaration as made


@pytest.mark.parametrize(("face", "hit", "hp"), [(4, True, 8), (6, True, 8), (3, False, 10), (1, False, 10)])
def test_the_faces_given_rule_the_attack_on_the_positions_it_was_declared_on(face: int, hit: bool, hp: int) -> None:
    pipe = _pipeline()
    pipe.declare(ATTACK)
    # the camera then sees the target 5" away: the roll is for the attack as declared, 0.8" apart
    pipe.positions = {**pipe.positions, 17: pipe.positions[17].moved_to(11.8, 5.0, 0.0)}
    out = pipe.declare(DiceAnswer.of(ATTACK, [face], "typed"))
    roll = next(v for v in out if v["rule"] == "valknut.attack.roll")
    assert roll["numbers"]["roll"] == face and roll["numbers"]["hit"] is hit and roll["numbers"]["to_hit"] == 4
    assert next(v for v in out if v["rule"] == "valknut.attack.melee_range")["numbers"]["gap_in"] == 0.8
    assert _hp(pipe) == hp and pipe.pending is None
    events = pipe.take_dice_events()
    assert [e.to_json() for e in events] == [{
        "type": "roll", "frame": -1, "clause": "valknut.attack.roll", "what": "soldier 12's attack on soldier 17",
        "unit": 12, "side": None, "sides": 6, "faces": [face], "by": "players", "source": "typed",
        "camera_faces": None}]
    assert pipe.last_dice is not None and pipe.last_dice.faces == [face] and pipe.last_dice.source == "typed"
    recorded = pipe.take_records()[-1][1]
    assert isinstance(recorded, DiceAnswer) and recorded.params["rolls"] == [face]


def test_faces_that_do_not_fit_are_one_sentence_each() -> None:
    request = RollRequest(6, 3, "valyr.attack", "Archer 12's attack on Scout 20")
    with pytest.raises(RollError, match=r"^Archer 12's attack on Scout 20 takes 3 d6; 2 were given\.$"):
        check_count(request, [4, 5])
    check_count(request, [4, 5, 6])
    pipe = _pipeline()
    pipe.declare(ATTACK)
    out = pipe.declare(DiceAnswer.of(ATTACK, [7], "typed"))
    assert _rules(out) == [("valknut.input", "illegal")]
    assert out[0]["message"] == "A d6 shows 1 to 6; the roll for soldier 12's attack on soldier 17 was given 7."
    assert pipe.pending is not None and _hp(pipe) == 10  # still waiting, nothing ruled


def test_a_second_action_needing_dice_is_refused_while_a_roll_is_pending() -> None:
    pipe = _pipeline()
    pipe.declare(ATTACK)
    other = Action("attack", 12, {"target": 18})
    out = pipe.declare(other)
    assert _rules(out) == [("dice.pending", "illegal")]
    assert out[0]["message"].startswith("The table is waiting for the dice of Red 3 attacks Blue 3 (roll 1 d6 for ")
    assert pipe.pending is not None and pipe.pending.action == ATTACK


def test_cancel_drops_the_pending_roll_unruled() -> None:
    pipe = _pipeline()
    pipe.declare(ATTACK)
    out = pipe.declare(Action(CANCEL))
    assert _rules(out) == [("dice.cancel", "info")] and "is not ruled" in out[0]["message"]
    assert pipe.pending is None and _hp(pipe) == 10 and pipe.last_dice is None
    assert _rules(pipe.declare(Action(CANCEL))) == [("dice.cancel", "illegal")]


def test_a_correction_rules_the_attack_again_as_if_the_corrected_faces_were_rolled() -> None:
    pipe = _pipeline()
    pipe.declare(ATTACK)
    pipe.declare(DiceAnswer.of(ATTACK, [5], "camera", [5]))
    assert _hp(pipe) == 8
    pipe.take_dice_events()
    out = pipe.declare(Action(CORRECT, None, {"faces": [2]}))
    assert out[0]["rule"] == "dice.correct" and out[0]["outcome"] == "info"
    assert out[0]["numbers"] == {"faces_before": [5], "faces": [2], "ruled_frame": -1}
    assert next(v for v in out if v["rule"] == "valknut.attack.roll")["numbers"]["hit"] is False
    assert _hp(pipe) == 10  # the damage of the 5 is gone
    corrected, taken = pipe.take_dice_events()
    assert isinstance(corrected, RollCorrected) and corrected.to_json()["type"] == "roll_correction"
    assert isinstance(taken, RollTaken) and taken.source == "correction" and taken.rolled.faces == (2,)
    # and back to a hit: the correction is itself the last dice ruling
    pipe.declare(Action(CORRECT, None, {"faces": [6]}))
    assert _hp(pipe) == 8


def test_a_correction_is_refused_once_the_game_moved_on() -> None:
    pipe = _pipeline()
    assert pipe.correction_refused() == "Nothing to correct: no action has been ruled with dice yet."
    pipe.declare(ATTACK)
    pipe.declare(DiceAnswer.of(ATTACK, [4], "typed"))
    assert pipe.correction_refused() == ""
    pipe.declare(Action("end_activation", 12))
    assert pipe.correction_refused().startswith("The game has moved on since Red 3 attacks Blue 3 was ruled")
    out = pipe.declare(Action(CORRECT, None, {"faces": [1]}))
    assert _rules(out) == [("dice.correct", "illegal")] and _hp(pipe) == 8


def test_undo_takes_the_attack_off_the_dice_panel_too() -> None:
    """After Undo the panel shows no verdict of the attack taken back (it showed 8 HP left while the game had 10)."""
    pipe = _pipeline()
    pipe.declare(ATTACK)
    pipe.declare(DiceAnswer.of(ATTACK, [4], "typed"))
    assert _hp(pipe) == 8 and pipe.last_dice is not None
    out = pipe.declare(Action("undo", None))
    assert _rules(out) == [("tablesight.undo", "info")] and _hp(pipe) == 10
    assert pipe.last_dice is None
    assert pipe.correction_refused() == "Nothing to correct: no action has been ruled with dice yet."


def test_roll_for_us_rolls_the_missing_dice_and_says_so() -> None:
    pipe = _pipeline(roll_for_us=True)
    out = pipe.declare(ATTACK)
    assert pipe.pending is None
    rolled = next(v for v in out if v["rule"] == "dice.rolled")
    face = next(v for v in out if v["rule"] == "valknut.attack.roll")["numbers"]["roll"]
    assert rolled["outcome"] == "info" and rolled["message"] == (
        f"Tablesight rolled the dice (roll for us is on): 1 d6 for soldier 12's attack on soldier 17: {face}.")
    assert _hp(pipe) == (8 if face >= 4 else 10)
    (event,) = pipe.take_dice_events()
    assert isinstance(event, RollTaken) and (event.by, event.source, event.rolled.faces) == ("tablesight", "rolled",
                                                                                             (face,))
    (_frame, recorded), = pipe.take_records()
    assert isinstance(recorded, DiceAnswer) and recorded.source == "rolled" and recorded.params["rolls"] == [face]
    # a replay (which never rolls) given the recorded faces rules the same and says the same
    again = _pipeline(roll_for_us=False)
    out_again = again.declare(recorded)
    assert [(v["rule"], v["message"]) for v in out_again] == [(v["rule"], v["message"]) for v in out]
    assert [(e.by, e.source) for e in again.take_dice_events() if isinstance(e, RollTaken)] == [("tablesight",
                                                                                                "rolled")]


def test_the_game_setup_says_whether_tablesight_rolls() -> None:
    setup = json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())
    cal = load_calibration(SAMPLE_SESSION_DIR / "calibration.json")
    assert Pipeline(cal, None, (), find_game("valknut"), setup).roll_for_us is False
    assert Pipeline(cal, None, (), find_game("valknut"), {**setup, "roll_for_us": True}).roll_for_us is True
    assert replay_rolls({"rolls": "recorded"}) is False and replay_rolls({}) is True  # before the players' own dice


def test_the_pending_roll_is_part_of_the_checkpoint() -> None:
    pipe = _pipeline()
    pipe.declare(ATTACK)
    cp = pipe.checkpoint(40)
    resumed = _pipeline()
    resumed.resume(cp)
    assert resumed.pending == pipe.pending and resumed.frame == 40
    resumed.declare(DiceAnswer.of(ATTACK, [6], "typed"))
    assert _hp(resumed) == 8 and resumed.pending is None and pipe.pending is not None


def test_recorded_dice_lines_read_back_as_answers(tmp_path: Any) -> None:
    path = tmp_path / "declarations.jsonl"
    path.write_text(json.dumps({"frame": 3, "action": ATTACK.to_json()}) + "\n" + json.dumps(
        {"frame": 5, "action": DiceAnswer.of(ATTACK, [4], "camera").to_json(),
         "dice": {"source": "camera", "camera_faces": [4]}}) + "\n")
    out = read_declarations(path)
    assert out[3] == [ATTACK]
    (answer,) = out[5]
    assert isinstance(answer, DiceAnswer) and answer.source == "camera" and answer.camera_faces == (4,)
    assert answer.params["rolls"] == [4]


# ------------------------------------------------------------------------------------------ the camera


def _die(value: int, x: float, y: float, confidence: float = 0.99, side: float = 30.0) -> Die:
    return Die(value, 6, (x, y), (x - side / 2, y - side / 2, x + side / 2, y + side / 2), confidence)


class ScriptedTray:
    """What a dice reader reports frame after frame (one list a call), and what it was asked."""

    def __init__(self, reads: Sequence[Sequence[Die]]) -> None:
        self.reads = list(reads)
        self.calls: list[tuple[tuple[int, ...], int, list[tuple[float, float]]]] = []

    def __call__(self, image: np.ndarray, sides: int, region: Sequence[tuple[float, float]]) -> list[Die]:
        self.calls.append((image.shape, sides, list(region)))
        return list(self.reads.pop(0))


IMAGE = np.zeros((720, 1280, 3), np.uint8)
TRAY = Tray(((100.0, 400.0), (500.0, 400.0), (500.0, 700.0), (100.0, 700.0)), (1280, 720))


def _watch(reads: Sequence[Sequence[Die]]) -> tuple[DiceWatch, ScriptedTray]:
    reader = ScriptedTray(reads)
    watch = DiceWatch(read=reader)
    watch.set_tray(TRAY)
    return watch, reader


def _look(watch: DiceWatch, frames: int, count: int = 2, start: int = 0) -> list[list[int] | None]:
    return [watch.look(IMAGE, start + k, roll=1, sides=6, count=count) for k in range(frames)]


def test_dice_still_for_five_frames_fill_the_roll_left_to_right() -> None:
    # in the crop's pixels: the tray's box (100..500 x 400..700) and 61 px (0.15 of its 401 px width) around it,
    # within the 1280 x 720 image, its corner on the finder's 8 px grid: it starts at (32, 336); a 5 on the right,
    # a 2 on the left
    still = [_die(5, 300, 100), _die(2, 120, 150)]
    rolling = [[_die(3, 40 + 40 * k, 60), _die(1, 200, 30 + 40 * k)] for k in range(3)]
    watch, reader = _watch([*rolling, *[still] * NEEDED_FRAMES])
    got = _look(watch, 3 + NEEDED_FRAMES)
    assert got[:-1] == [None] * (2 + NEEDED_FRAMES) and got[-1] == [2, 5]
    shape, sides, region = reader.calls[0]
    assert shape == (384, 530, 3) and sides == 6 and region[0] == (68.0, 64.0) and region[2] == (468.0, 364.0)
    read = watch.read_json()
    assert read is not None and read["still_frames"] == NEEDED_FRAMES and read["low"] == []
    assert read["dice"][0]["centre_px"] == [332.0, 436.0]  # placed back in the whole image
    assert watch.look(IMAGE, 99, roll=1, sides=6, count=2) is None  # a roll is filled once
    assert len(reader.calls) == 3 + NEEDED_FRAMES


def test_dice_that_shift_by_a_third_of_their_size_start_the_count_again() -> None:
    a = [_die(4, 100, 100), _die(6, 200, 100)]
    nudged = [_die(4, 100 + 10.5, 100), _die(6, 200, 100)]  # 10.5 px of a 30 px die
    assert same_dice(a, [_die(6, 200, 100), _die(4, 109, 100)]) and not same_dice(a, nudged)
    assert not same_dice(a, [_die(4, 100, 100), _die(5, 200, 100)]) and not same_dice(a, a[:1])
    watch, _ = _watch([a, a, nudged, nudged, nudged, nudged, nudged])
    got = _look(watch, 7)
    assert got == [None] * 6 + [[4, 6]]


def test_the_wrong_number_of_dice_or_a_doubtful_die_is_not_taken() -> None:
    three = [_die(1, 50, 50), _die(2, 150, 50), _die(3, 250, 50)]
    watch, _ = _watch([three] * 8)
    assert _look(watch, 8) == [None] * 8  # two were asked for
    doubtful = [_die(4, 50, 50), _die(6, 150, 50, confidence=LOW_CONFIDENCE - 0.1)]
    watch, _ = _watch([doubtful] * 8)
    assert _look(watch, 8) == [None] * 8
    read = watch.read_json()
    assert read is not None and read["low"] == [1]  # shown on the page for one tap
    assert watch.seen(1) == [4, 6]


def test_nothing_is_read_without_a_tray_or_a_reader(tmp_path: Any) -> None:
    reader = ScriptedTray([])
    watch = DiceWatch(read=reader)
    assert watch.look(IMAGE, 0, roll=1, sides=6, count=1) is None and reader.calls == []
    assert watch.read_json() is None
    blind = DiceWatch(read=None)
    if not blind.available:
        assert blind.problem == "dice reading unavailable"
    # the tray survives a restart: its file beside the calibration
    path = tmp_path / "dice_tray.json"
    path.write_text(json.dumps(TRAY.to_json()))
    assert read_tray_file(path) == TRAY and DiceWatch(read=reader, tray_file=path).tray == TRAY
    path.write_text("null")
    assert read_tray_file(path) is None


@pytest.mark.parametrize(("points", "words"), [
    ([[0, 0], [10, 0]], "at least 3 corners"),
    ([[0, 0], [10, 0], [10, 2000]], "off the 1280x720 picture"),
    ([[0, 0], [100, 100], [100, 0], [0, 100]], "crosses itself"),
    ([[0, 0], [10, 0], "x"], "Corner 3"),
])
def test_a_tray_outline_that_cannot_be_used_is_one_sentence(points: Any, words: str) -> None:
    with pytest.raises(TrayError) as err:
        Tray.of(points, (1280, 720))
    assert words in str(err.value) and str(err.value).endswith(".")


# ------------------------------------------------------------------------------------------ rendered frames

D6_MODELS = ("d6_finder.onnx", "d6_reader.onnx")


def _models_missing() -> bool:
    from vision.dice import d6

    return not all((d6.MODELS / name).is_file() for name in D6_MODELS)


@functools.cache
def _rendered_tray() -> tuple[Any, Any, Any, list[Any]]:
    """A 1080p table with a dice tray beside the play area, one d6 rolled in it, a 5 (vision/synth/dice.py):
    (camera pose, tray, rendered frame, the dice's truth)."""
    from vision.synth.dice import Tray as RenderedTray
    from vision.synth.dice import render_table_with_tray, roll_dice
    from vision.synth.render import Scene, camera_framing_board

    pose = camera_framing_board((30.0, 22.0), 34.0, 12.0, 0.0, (1920, 1080))
    tray = RenderedTray((25.0, 5.0))
    rendered, truth = render_table_with_tray(Scene.at(pose, (30.0, 22.0), noise_sigma=1.0, supersample=2), tray,
                                             roll_dice(tray, 6, 1, 3, faces=[5]), seed=3)
    assert [d.value for d in truth] == [5]
    return pose, tray, rendered, truth


def _camera_fills_the_roll(read: Any = None) -> None:
    """The live loop, a Valknut attack waiting for its d6, fed the still tray NEEDED_FRAMES + 2 times (each with its
    own sensor noise): the camera fills the roll at the fifth still frame and the attack is ruled with the 5.
    read: the dice reader (None: vision.dice.read_dice)."""
    import time

    from calibration.layout import default_layout
    from calibration.table import TableCalibration
    from session.dice_watch import Tray as TrayOutline
    from session.live_loop import LiveLoop
    from vision.sources import Frame
    from vision.synth.dice import tray_polygon_px

    pose, tray, rendered, _truth = _rendered_tray()
    board = (30.0, 22.0)
    cal = TableCalibration(pose.camera, pose.rvec, pose.tvec, board, default_layout(*board), 0.0, 0.0, (),
                           "intrinsics")
    setup = json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())

    def waiting() -> Pipeline:
        pipe = Pipeline(cal, parse_roster(setup["roster"]), (), find_game("valknut"))
        pipe.state, pipe.positions = _pipeline().state, _pipeline().positions
        assert _rules(pipe.declare(ATTACK)) == [("dice.pending", "waiting")]
        return pipe

    noise = np.random.default_rng(0)

    class StillTray:
        """The camera: the tray, still, for NEEDED_FRAMES + 2 frames, then it ends."""

        def __init__(self) -> None:
            self.n = 0

        def read(self) -> Frame | None:
            if self.n >= NEEDED_FRAMES + 2:
                return None
            grain = noise.normal(0.0, 1.5, rendered.image.shape)
            self.n += 1
            return Frame(self.n - 1, (self.n - 1) / 10.0, np.clip(rendered.image + grain, 0, 255).astype(np.uint8))

        def close(self) -> None:
            pass

    loop = LiveLoop(StillTray, waiting, paced=False, at_end="pause", name="tray")
    if read is not None:
        loop.dice = DiceWatch(read=read)
    loop.dice.set_tray(TrayOutline.of(tray_polygon_px(tray, pose).tolist(), (1920, 1080)))
    loop.start()
    try:
        deadline = time.monotonic() + 60
        while loop.status().status != "ended":
            assert time.monotonic() < deadline, loop.status()
            time.sleep(0.05)
        pipe = loop.pipeline
        assert isinstance(pipe, Pipeline) and pipe.pending is None
        assert pipe.last_dice is not None and pipe.last_dice.source == "camera" and pipe.last_dice.faces == [5]
        assert _hp(pipe) == 8  # a 5 hits (4+): 2 damage
        roll = next(e for e in loop.events if e.get("type") == "roll")
        assert roll["source"] == "camera" and roll["faces"] == [5] and roll["camera_faces"] == [5]
        assert roll["frame"] == NEEDED_FRAMES - 1  # filled at the fifth still frame
        attack = next(e for e in loop.events if e.get("rule") == "valknut.attack.roll")
        assert attack["numbers"]["roll"] == 5 and attack["frame"] == NEEDED_FRAMES - 1
    finally:
        loop.stop()


def test_the_live_loop_fills_a_pending_roll_from_the_frames_it_reads() -> None:
    """The loop's path from frames to the rules, with a reader that reports the renderer's own truth of the tray
    (given to DiceWatch as its `read`): what the real reader must read, the loop rules."""
    from vision.synth.dice import tray_polygon_px

    pose, tray, _rendered, truth = _rendered_tray()
    outline = tray_polygon_px(tray, pose)

    def truth_reader(image: np.ndarray, sides: int, region: Sequence[tuple[float, float]]) -> list[Die]:
        dx, dy = outline[0][0] - region[0][0], outline[0][1] - region[0][1]  # where the crop lies in the frame
        assert sides == 6 and image.shape[0] < 300 and image.shape[1] < 300  # the tray's box, not the frame
        return [Die(d.value, 6, (d.centre_px[0] - dx, d.centre_px[1] - dy),
                    (d.box_px[0] - dx, d.box_px[1] - dy, d.box_px[2] - dx, d.box_px[3] - dy), 0.97) for d in truth]

    _camera_fills_the_roll(truth_reader)


@pytest.mark.skipif(_models_missing(), reason="the d6 reader's models (vision/dice/models) are not built yet")
def test_the_table_camera_reads_a_rolled_tray_into_a_valknut_attack() -> None:
    """The issue's "done when": the same, read by vision.dice.read_dice."""
    _camera_fills_the_roll()


SEEDED_TRAYS = range(8)
"""Seeds of the trays below: the first eight, not chosen."""
FILLED_AT_LEAST = 6
"""Of the eight, the camera fills at least this many rolls by itself (measured: 7 with the shipped models, all but
tray 4, whose marbled die is read under LOW_CONFIDENCE and put to the players, which is no failure; 5 before the
table camera's dice were read by the table reader alone)."""


@pytest.mark.skipif(_models_missing(), reason="the d6 reader's models (vision/dice/models) are not built yet")
def test_the_real_reader_fills_valknut_attacks_from_rendered_trays_with_the_faces_rolled() -> None:
    """The issue's "done when" over seeded trays: a 1080p table camera 34" up sees a 6" x 4" tray with one d6 in any
    look (translucent, marbled, leaning on the wall or not), still for NEEDED_FRAMES frames of their own sensor
    noise; DiceWatch with the real reader (vision.dice.read_dice) fills the roll, and the Valknut attack is ruled
    with the camera's face (4+ hits: 2 damage). Never a wrong face; at least FILLED_AT_LEAST of the eight filled."""
    from vision.dice import read_dice
    from vision.synth.dice import FELTS, render_table_with_tray, roll_dice, tray_polygon_px
    from vision.synth.dice import Tray as RenderedTray
    from vision.synth.render import Scene, camera_framing_board

    board = (30.0, 22.0)
    pose = camera_framing_board(board, 34.0, 12.0, 0.0, (1920, 1080))
    filled: list[int] = []
    for seed in SEEDED_TRAYS:
        tray = RenderedTray((25.0, 5.0), felt=FELTS[seed % len(FELTS)])
        rendered, truth = render_table_with_tray(Scene.at(pose, board, noise_sigma=1.0), tray,
                                                 roll_dice(tray, 6, 1, seed), seed=seed)
        watch = DiceWatch(read=read_dice)
        watch.set_tray(Tray.of(tray_polygon_px(tray, pose).tolist(), (1920, 1080)))
        grain = np.random.default_rng(seed)
        faces = None
        for frame in range(NEEDED_FRAMES):
            image = np.clip(rendered.image + grain.normal(0.0, 1.5, rendered.image.shape), 0, 255).astype(np.uint8)
            faces = watch.look(image, frame, 1, 6, 1) or faces
        if faces is None:
            continue
        assert faces == [truth[0].value], f"tray {seed}: read {faces}, rolled {truth[0].value}"
        pipe = _pipeline()
        pipe.declare(ATTACK)
        out = pipe.declare(DiceAnswer.of(ATTACK, faces, "camera"))
        roll = next(v for v in out if v["rule"] == "valknut.attack.roll")
        assert roll["numbers"]["roll"] == faces[0] and _hp(pipe) == (8 if faces[0] >= 4 else 10)
        filled.append(seed)
    assert len(filled) >= FILLED_AT_LEAST, f"the camera filled trays {filled} of {list(SEEDED_TRAYS)}"


# ------------------------------------------------------------------------------------------ camera moves

BATTLE = {"game": "vigtavl", "board": {"hexagon": 2, "default": {"terrain": "land"}},
          "units": [{"tag": 10, "profile": "cavalry", "owner": "red", "hex": [-2, 0]},
                    {"tag": 20, "profile": "infantry", "owner": "blue", "hex": [0, 0]}],
          "developments": [{"hex": [2, -2], "kind": "encampment", "owner": "red"}], "state": {"players": ["red", "blue"]}}
"""docs/scenarios/vigtavl.md "move: into an enemy hex starts a battle": red's 3 dice then blue's 1."""


def _battle(roll_for_us: bool) -> tuple[Pipeline, Any, dict[int, Any]]:
    """A Vigtavl pipeline whose camera sees cavalry 10 carried from hex (-2, 0) onto blue's infantry at (0, 0)."""
    from rules.hexgrid import Hex
    from rules.vigtavl.judge import build_position, positions_of
    from vision.tracker import Move

    game = find_game("vigtavl")
    state, _ = build_position(game, BATTLE)
    pipe = Pipeline(load_calibration(SAMPLE_SESSION_DIR / "calibration.json"), None, (), game,
                    roll_for_us=roll_for_us)
    pipe.state = state
    before = dict(positions_of(state))
    start, end = state.layout.to_table(Hex(-2, 0)), state.layout.to_table(Hex(0, 0))
    length = float(np.hypot(end[0] - start[0], end[1] - start[1]))
    move = Move(frame=5, t=0.5, tag=10, from_in=start, to_in=end, length_in=length, pm_in=0.01,
                path_in=(start, end), path_length_in=length, elapsed_s=1.0, lifted=True, left_frame=3,
                placed_frame=5)
    pipe._frame = 5
    return pipe, pipe._rule_all([move], before, 5), before  # the frame's ruling of what the tracker reported


def test_a_camera_move_that_needs_dice_waits_for_them_then_is_ruled_where_it_stood() -> None:
    from rules.hexgrid import Hex

    pipe, out, before = _battle(roll_for_us=False)
    assert [(v["rule"], v["outcome"], v["event"]) for v in out] == [("dice.pending", "waiting", "move")]
    pending = pipe.pending
    assert pending is not None and pending.camera and pending.action.kind == "move" and pending.frame == 5
    # as they stood when the camera saw it: cavalry 10 where it started (the tracker's 0.0001" rounding)
    assert set(pending.positions) == set(before) and all(
        abs(pending.positions[t].x - before[t].x) + abs(pending.positions[t].y - before[t].y) < 1e-3 for t in before)
    assert pending.request.count == 3 and pending.request.sides == 6
    assert pipe.state.piece(10).hex == Hex(-2, 0)  # the rules keep the state until the roll comes
    assert pipe.take_records() == []  # nothing for the recording: its replay sees the same move wait
    first = pipe.declare(DiceAnswer.of(pending.action, [4, 1, 1], "typed"))
    assert _rules(first) == [("dice.pending", "waiting")]  # then blue's die
    assert pipe.pending is not None and pipe.pending.request.given == (4, 1, 1) and pipe.pending.camera
    out = pipe.declare(DiceAnswer.of(pending.action, [4, 1, 1, 3], "typed"))
    numbers = {k: x for v in out for k, x in v.get("numbers", {}).items()}
    assert numbers["winner"] == "attacker" and numbers["attacker_rolls"] == [[4, 1, 1]]
    assert pipe.state.piece(10).hex == Hex(0, 0) and pipe.state.piece(20).captor == "red"
    assert pipe.pending is None


def test_a_camera_move_tablesight_rolled_for_is_recorded_with_its_faces() -> None:
    pipe, out, _ = _battle(roll_for_us=True)
    assert pipe.pending is None and any(v["rule"] == "dice.rolled" for v in out)
    ((frame, kept),) = pipe.take_records()
    assert frame == 5 and isinstance(kept, DiceAnswer) and kept.kind == "move" and kept.source == "rolled"
    assert len(kept.params["rolls"]) >= 4  # every die of the battle, for a replay that never rolls
