"""Terrain belongs to a game's setup: each game keeps its own in the setup folder, switching game (on the live page
or by saving another game's roster) switches the terrain and back, a hex game gets none unless its players draw
some, and a recorded session replays with its own terrain whatever the live table plays.

A real Runtime on a rendered recorded session (recorded as Valknut with a 3" wall, tests/webui_session.py) and a
real setup folder in tmp_path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from calibration.errors import InputError
from rules.terrain import parse_terrain
from session.runtime import Runtime, SetupError, make_pipeline
from session.settings import Settings
from tests.webui_session import TERRAIN, make_session, roster_json

RUNE_WALL = {"pieces": [{"name": "rune wall", "kind": ["obscuring"], "polygon": [[2, 2], [6, 2], [6, 3], [2, 3]],
                         "height_in": 1.0}]}
BRIDGE = {"pieces": [{"name": "bridge", "kind": ["elevated"], "polygon": [[10, 1], [12, 1], [12, 5], [10, 5]],
                      "height_in": 0.5}]}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_session(tmp_path_factory.mktemp("terrain-games") / "table1", frames=2)


def _runtime(session: Path, setup: Path, **kw: object) -> Runtime:
    return Runtime(Settings(source_kind="replay", source=str(session), sessions_dir=session.parent, setup_dir=setup,
                            **kw))  # type: ignore[arg-type]


@pytest.fixture
def runtime(session: Path, tmp_path: Path) -> Iterator[Runtime]:
    rt = _runtime(session, tmp_path / "setup")
    yield rt
    rt.stop()


def names(rt: Runtime) -> list[str]:
    with rt.setup.lock:
        return [p.name for p in rt.setup.terrain]


def pipeline_terrain(rt: Runtime) -> list[str]:
    """The terrain pieces a pipeline built now rules with (its overlays, the Selection panel's sight lines)."""
    pipe: Any = make_pipeline(rt.setup)
    return [p.name for p in pipe.terrain]


def test_switching_game_switches_the_terrain_and_back(runtime: Runtime, tmp_path: Path) -> None:
    assert runtime.setup.game == "valknut" and names(runtime) == ["wall"]  # the session's own
    runtime.set_game("vigtavl")
    assert names(runtime) == []  # a hex game gets none of Valknut's
    assert pipeline_terrain(runtime) == []  # nor do its overlays and Selection panel
    runtime.set_terrain(RUNE_WALL)
    assert names(runtime) == ["rune wall"]
    saved = json.loads((tmp_path / "setup" / "terrain-vigtavl.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in saved["pieces"]] == ["rune wall"]
    assert not (tmp_path / "setup" / "terrain-valknut.json").exists()  # Valknut's terrain was not touched

    runtime.set_game("valknut")
    assert names(runtime) == ["wall"]
    assert pipeline_terrain(runtime) == ["wall"]
    runtime.set_game("vigtavl")
    assert names(runtime) == ["rune wall"]
    runtime.set_game("hex_skirmish")
    assert names(runtime) == []  # another hex game: none either
    runtime.set_game("valknut")
    assert names(runtime) == ["wall"]


def test_each_games_terrain_is_read_again_after_a_restart(session: Path, tmp_path: Path) -> None:
    setup = tmp_path / "setup"
    rt = _runtime(session, setup)
    try:
        rt.set_terrain(BRIDGE)  # Valknut's, edited
        rt.set_game("vigtavl")
        rt.set_terrain(RUNE_WALL)
    finally:
        rt.stop()
    rt = _runtime(session, setup)
    try:
        assert rt.setup.game == "valknut" and names(rt) == ["bridge"]
        rt.set_game("vigtavl")
        assert names(rt) == ["rune wall"]
    finally:
        rt.stop()
    rt = _runtime(session, setup, game="vigtavl")  # chosen at start: that game's own terrain
    try:
        assert names(rt) == ["rune wall"]
        rt.set_game("valknut")
        assert names(rt) == ["bridge"]
    finally:
        rt.stop()


def test_a_session_ruled_as_another_game_does_not_lend_it_its_terrain(session: Path, tmp_path: Path) -> None:
    rt = _runtime(session, tmp_path / "setup", game="vigtavl")  # recorded as Valknut, its wall is Valknut's
    try:
        assert rt.setup.game == "vigtavl" and names(rt) == []
        rt.set_game("valknut")
        assert names(rt) == ["wall"]
    finally:
        rt.stop()


def test_saving_another_games_roster_switches_the_terrain(runtime: Runtime) -> None:
    runtime.set_roster(roster_json("vigtavl"), restart=True)
    assert runtime.setup.game == "vigtavl" and names(runtime) == []
    runtime.set_terrain(RUNE_WALL)
    runtime.set_roster(roster_json("valknut"), restart=True)
    assert runtime.setup.game == "valknut" and names(runtime) == ["wall"]
    runtime.set_roster(roster_json("valknut"))  # the same game again: the terrain stays
    assert names(runtime) == ["wall"]
    runtime.set_game("vigtavl")
    assert names(runtime) == ["rune wall"]


def test_a_recorded_session_replays_with_its_own_terrain(runtime: Runtime) -> None:
    runtime.set_game("vigtavl")
    runtime.set_terrain(RUNE_WALL)
    _loop, setup = runtime.replay("table1")
    assert setup.game == "valknut" and [p.name for p in setup.terrain] == ["wall"]
    assert setup.terrain == parse_terrain(TERRAIN)
    assert names(runtime) == ["rune wall"]  # the live table keeps its own


def test_a_terrain_saved_before_each_game_kept_its_own(tmp_path: Path) -> None:
    """A setup folder from before: one terrain.json, taken by an open-table game with none of its own, never by a
    hex game; and saving writes the game's own file, leaving the old one as it was."""
    setup = tmp_path / "setup"
    setup.mkdir()
    (setup / "terrain.json").write_text(json.dumps(BRIDGE), encoding="utf-8")
    (setup / "roster.json").write_text(json.dumps(roster_json("vigtavl")), encoding="utf-8")
    rt = Runtime(Settings(source_kind="camera", source="0", sessions_dir=tmp_path / "sessions", setup_dir=setup))
    try:
        assert rt.setup.game == "vigtavl" and names(rt) == []
        rt.set_game("valyr")
        assert names(rt) == ["bridge"]
        rt.set_terrain(RUNE_WALL)
        assert (setup / "terrain-valyr.json").is_file()
        assert json.loads((setup / "terrain.json").read_text(encoding="utf-8")) == BRIDGE
        rt.set_game("valknut")
        assert names(rt) == ["bridge"]
    finally:
        rt.stop()


def test_a_games_bad_terrain_file_is_one_sentence_and_the_table_stays_as_it_was(runtime: Runtime,
                                                                                tmp_path: Path) -> None:
    bad = tmp_path / "setup" / "terrain-vigtavl.json"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text(json.dumps({"pieces": [{"name": "bowtie", "polygon": [[0, 0], [4, 4], [4, 0], [0, 4]]}]}),
                   encoding="utf-8")
    with pytest.raises(SetupError) as err:
        runtime.set_game("vigtavl")
    said = str(err.value)
    assert said.startswith(f"The terrain file {bad} cannot be used: terrain piece \"bowtie\"") and "crosses itself" in said
    assert runtime.setup.game == "valknut" and names(runtime) == ["wall"]  # nothing changed
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="terrain-vigtavl.json"):
        runtime.set_game("vigtavl")
    assert runtime.setup.game == "valknut" and names(runtime) == ["wall"]
