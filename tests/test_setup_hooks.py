"""What a new game starts from, asked of each Game (rules/engine.py's setup hooks): its example army (the same as
examples/rosters/<game>.json, every tag on a topper as the tag sheet prints it), its standard boards (the same as
examples/boards/), the cell kinds its boards take, how many pieces a cell holds, and its options, each of which
the game's own setup reader takes and rules by; and the new-game page's API that serves them."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rules.engine import Game, RulesInputError, find_game, game_names
from rules.roster import parse_roster
from session.printables import plan_sheet
from tests.webui_server import LocalClient, session_settings
from tests.webui_session import make_session
from webui.server import create_app

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("hex_skirmish", "magni", "valknut", "valyr", "vigtavl")


def test_the_five_games_are_asked() -> None:
    assert tuple(game_names()) == GAMES


@pytest.mark.parametrize("name", GAMES)
def test_the_example_army_is_the_example_roster_file_mounted_as_the_game_plays(name: str) -> None:
    """Figures carry their tag on a topper; Rise of the Magni's heroes are tiles, their tag flat on the tile."""
    game = find_game(name)
    roster = game.example_roster()
    assert roster == json.loads((ROOT / "examples" / "rosters" / f"{name}.json").read_text())
    parsed = parse_roster(roster)
    assert parsed.game == name and len(parsed.owners()) == 2
    assert game.usual_mount() == ("flat" if name == "magni" else "topper")
    for unit in parsed.units.values():
        printed = plan_sheet(game.usual_mount(), None, unit.base_mm).roster_values()
        assert (unit.base_height_in, unit.tag_in) == (printed["base_height_in"], printed["tag_in"])
        if name == "magni":
            assert (unit.base_height_in, unit.tag_in) == (0.125, 1.35)  # the largest tag a 66 mm tile holds
        else:
            assert (unit.base_height_in, unit.tag_in) == (1.85, 0.7)  # 0.125" base + 1.725" pin; a 0.7" card
    game.new_state(roster)  # a game starts from it as it is
    roster["units"][0]["name"] = "changed"
    assert game.example_roster()["units"][0].get("name") != "changed"  # a copy each time


def test_every_example_board_is_a_standard_board_of_its_game() -> None:
    standard = {b.name: (name, b) for name in GAMES for b in find_game(name).standard_boards()}
    files = sorted(p.stem for p in (ROOT / "examples" / "boards").glob("*.json"))
    assert sorted(standard) == files == ["hex_skirmish", "magni_19", "vigtavl_2p"]
    for stem in files:
        game, board = standard[stem]
        assert board.board == json.loads((ROOT / "examples" / "boards" / f"{stem}.json").read_text())
        assert board.title and board.title[0].isupper()
        assert find_game(game).board == "hex"
    for name in ("valknut", "valyr"):
        assert find_game(name).standard_boards() == ()


def test_how_many_pieces_a_cell_holds() -> None:
    """Vigtavl: at most 3 units on a hex, and a development beside them; one figure or tile a cell elsewhere."""
    assert {n: find_game(n).pieces_per_cell() for n in GAMES if find_game(n).board == "hex"} == {
        "hex_skirmish": 1, "magni": 1, "vigtavl": 4}


@pytest.mark.parametrize("name", ["hex_skirmish", "vigtavl"])
def test_every_cell_kind_is_a_cell_the_game_takes(name: str) -> None:
    game = find_game(name)
    kinds = game.cell_kinds()
    assert len({(k.terrain, k.elevation) for k in kinds}) == len(kinds) >= 3
    board = game.standard_boards()[0].board
    for kind in kinds:
        setup = game.example_roster()
        cells = [c for c in board.get("cells", []) if c["hex"] != [0, 0]]
        setup["board"] = {**copy.deepcopy(dict(board)), "cells": [*cells, {"hex": [0, 0], **kind.to_json()}]}
        del setup["board"]["cells"][-1]["label"]
        state = game.new_state(setup)
        dumped = json.dumps(game.dump_state(state))
        assert kind.terrain in dumped
    assert find_game("magni").cell_kinds() == ()  # the 19-cell board is fixed


def _changed(field: Any, roster: dict[str, Any]) -> Any:
    """A value for `field` other than its default."""
    if field.kind == "bool":
        return not field.default
    if field.kind == "int":
        return field.default + 1 if field.high is None or field.default < field.high else field.default - 1
    if field.kind == "side":
        return parse_roster(roster).owners()[1]
    return next(v for v, _ in field.choices if v != field.default)


def _set(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {})
    obj[path[-1]] = value


@pytest.mark.parametrize("name", GAMES)
def test_every_option_is_read_by_the_game_and_changes_its_state(name: str) -> None:
    game: Game = find_game(name)
    fields = game.option_fields()
    assert fields, f"{name} offers no options"
    base = game.example_roster()
    plain = json.dumps(game.dump_state(game.new_state(base)), sort_keys=True)
    for field in fields:
        assert field.label[0].isupper() and field.help.endswith(".") and field.kind in ("int", "bool", "choice", "side")
        if field.kind == "choice":
            assert field.default in [v for v, _ in field.choices]
            assert not any(words[0].islower() for _, words in field.choices)  # a sentence starts with a capital
        with_default = game.example_roster()
        if field.default is not None:  # the default is what the game does without the option
            _set(with_default, field.path, field.default)
            assert json.dumps(game.dump_state(game.new_state(with_default)), sort_keys=True) == plain, field.path
        changed = game.example_roster()
        _set(changed, field.path, _changed(field, changed))
        assert json.dumps(game.dump_state(game.new_state(changed)), sort_keys=True) != plain, field.path


@pytest.mark.parametrize("name", GAMES)
def test_every_unit_value_the_page_asks_for_is_read_by_the_game(name: str) -> None:
    """Each unit field is in every example unit within its bounds; a unit without it, or past a bound, is refused
    in a sentence naming its tag; another value in bounds changes the game's state."""
    game: Game = find_game(name)
    base = game.example_roster()
    plain = json.dumps(game.dump_state(game.new_state(base)), sort_keys=True)
    for field in game.unit_fields():
        assert field.label and field.help.endswith(".")
        for u in base["units"]:
            v = u[field.key]
            assert isinstance(v, int) and (field.low is None or v >= field.low) and (field.high is None or v <= field.high)
        for bad in (None, *(b for b in (field.low - 1 if field.low is not None else None,
                                         field.high + 1 if field.high is not None else None) if b is not None)):
            roster = copy.deepcopy(base)
            if bad is None:
                del roster["units"][0][field.key]
            else:
                roster["units"][0][field.key] = bad
            with pytest.raises(RulesInputError, match=f"tag {roster['units'][0]['tag']}"):
                game.new_state(roster)
        changed = copy.deepcopy(base)
        u = changed["units"][0]
        u[field.key] = u[field.key] - 1 if field.high is not None and u[field.key] == field.high else u[field.key] + 1
        assert json.dumps(game.dump_state(game.new_state(changed)), sort_keys=True) != plain, field.key


def test_a_magni_team_is_rated_23_at_most_as_the_page_says() -> None:
    """The page totals each side's ratings against `side_most`; the rules refuse a team over it."""
    game = find_game("magni")
    rating = next(f for f in game.unit_fields() if f.key == "rating")
    assert [f.key for f in game.unit_fields()] == ["rating", "lav", "cav", "rav"] and rating.side_most == 23
    roster = game.example_roster()
    scout = next(u for u in roster["units"] if u["owner"] == "red" and u["rating"] < 4)
    scout["rating"] += 1
    answer = game.judge({**roster, "question": {"kind": "team"}}, None)
    assert answer["numbers"]["rating"] == {"red": 24, "blue": 23}
    assert [v["outcome"] for v in answer["verdicts"]] == ["illegal", "legal"]


def test_the_options_the_brief_names() -> None:
    """Valknut's turn limit (6), Runestones to win (3) and activation order; Valyr's army limit and first player."""
    valknut = {f.path: f for f in find_game("valknut").option_fields()}
    assert valknut[("options", "turn_limit")].default == 6 and valknut[("options", "target")].default == 3
    assert valknut[("options", "activation")].default == "alternating"
    setup = find_game("valknut").example_roster()
    setup["options"] = {"turn_limit": 4, "target": 2, "activation": "player_turns"}
    options = find_game("valknut").new_state(setup).options
    assert (options.turn_limit, options.target, options.activation) == (4, 2, "player_turns")
    assert {f.path for f in find_game("valyr").option_fields()} == {("appraisal_limit",), ("priority",)}
    assert find_game("vigtavl").new_state({**find_game("vigtavl").example_roster(),
                                           "winds": "counter-clockwise"}).winds == "counter-clockwise"


def test_the_play_areas_an_open_table_may_be() -> None:
    """Valknut's Battlefield is 22" x 30" either way round; Valyr's table any size."""
    valknut = find_game("valknut")
    assert valknut.play_areas() == ((30.0, 22.0), (22.0, 30.0)) and find_game("valyr").play_areas() == ()
    for w, d in valknut.play_areas():
        assert valknut.new_state({**valknut.example_roster(), "board": {"width_in": w, "depth_in": d}}).board == (w, d)
    with pytest.raises(RulesInputError):
        valknut.new_state({**valknut.example_roster(), "board": {"width_in": 36, "depth_in": 22}})


# ------------------------------------------------------------------------------------------------ the page's API


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("setup-api")
    make_session(root / "table1")
    app = create_app(session_settings(root / "table1", root, tmp_path_factory.mktemp("setup")))
    with LocalClient(app) as c:
        yield c


def test_the_games_as_the_page_gets_them(client: TestClient) -> None:
    games = {g["name"]: g for g in client.get("/api/setup/games").json()["games"]}
    assert [games[n]["title"] for n in GAMES] == ["Hex Skirmish", "Rise of the Magni", "Valknut: Skirmish Game",
                                                   "Valyr", "Vigtavl"]
    assert games["vigtavl"]["pieces_per_cell"] == 4 and [k["label"] for k in games["vigtavl"]["cell_kinds"]] == [
        "Sea", "Land", "Mountain"]
    assert games["vigtavl"]["example"] == json.loads((ROOT / "examples/rosters/vigtavl.json").read_text())
    assert games["magni"]["boards"][0]["name"] == "magni_19" and games["valknut"]["boards"] == []
    assert games["magni"]["mount"] == "flat" and games["vigtavl"]["mount"] == "topper"
    assert games["valknut"]["play_areas"] == [[30, 22], [22, 30]] and games["valyr"]["play_areas"] == []
    turn = next(o for o in games["valknut"]["options"] if o["path"] == ["options", "turn_limit"])
    assert turn == {"path": ["options", "turn_limit"], "label": "Turn limit", "kind": "int", "default": 6,
                    "help": "The game ends after this many turns.", "choices": [], "low": 1, "high": 20}


def test_a_mount_for_every_base_as_the_tag_sheet_prints_it(client: TestClient) -> None:
    r = client.get("/api/setup/mount", params=[("mount", "topper"), ("base_mm", 25), ("base_mm", 66)]).json()
    assert r["bases"] == [{"base_mm": 25, "base_height_in": 1.85, "tag_in": 0.7, "tag_offset_in": [0, 0]},
                          {"base_mm": 66, "base_height_in": 1.85, "tag_in": 0.7, "tag_offset_in": [0, 0]}]
    rim = client.get("/api/setup/mount", params={"mount": "rim", "base_mm": 60}).json()["bases"][0]
    assert rim == plan_sheet("rim", None, 60).roster_values() and rim["base_height_in"] == 0.125
    flat = client.get("/api/setup/mount", params={"mount": "flat", "base_mm": 32}).json()["bases"][0]
    assert flat["tag_in"] == 0.65 and flat["base_height_in"] == 0.125  # the largest tag a 32 mm base holds
    bad = client.get("/api/setup/mount", params={"mount": "rim", "base_mm": 25})
    assert bad.status_code == 400
    text = bad.json()["detail"]
    assert "25 mm base" in text and "topper" in text and "--" not in text and "\n" not in text, text


def test_the_hex_size_a_cell_of_pieces_needs(client: TestClient) -> None:
    r = client.get("/api/setup/fit", params={"pieces": 4, "base_mm": 25, "size_in": 1.0}).json()
    assert r == {"pieces": 4, "base_mm": 25.0, "proposed_size_in": 1.45, "size_in": 1.0, "fits": False}
    assert client.get("/api/setup/fit", params={"pieces": 4, "base_mm": 25, "size_in": 1.45}).json()["fits"]
    bad = client.get("/api/setup/fit", params={"pieces": 9, "base_mm": 25})
    assert bad.status_code == 422 and "{" not in bad.json()["detail"]
