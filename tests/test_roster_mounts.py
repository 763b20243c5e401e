"""The roster's tag mounts: a unit's own tag (the top-level keys, as ever) and extra tags on the same base
(`more_tags`), each with its height, offset, printed side and the ± left after mount calibration (`mount_pm_in`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rules.engine import RosterError
from rules.roster import TagMount, parse_roster, tag_side_for_base
from rules.terrain import TerrainPiece
from session.setup_files import SetupFileError, check_tags_apart


def _roster(*more: Any, unit: dict[str, Any] | None = None) -> dict[str, Any]:
    twelve = {"tag": 12, "name": "Ulf", "profile": "warrior", "owner": "red", "base_mm": 50, "tag_in": 0.5,
              "tag_offset_in": [0.0, 0.66], **(unit or {})}
    if more:
        twelve["more_tags"] = list(more)
    return {"game": "valknut", "units": [twelve, {"tag": 13, "name": "Bjorn", "profile": "warrior", "owner": "blue"}]}


def test_a_roster_without_more_tags_reads_and_writes_as_before() -> None:
    obj = {"game": "valknut", "cards": {"x": 1},
           "units": [{"tag": 12, "name": "Ulf", "profile": "warrior", "owner": "red", "base_mm": 32,
                      "base_height_in": 0.125, "tag_offset_in": [0, 0.1], "tag_in": 0.65, "banner": True}]}
    roster = parse_roster(obj)
    unit = roster.units[12]
    assert unit.more_tags == () and unit.mount_pm_in is None and unit.extra == {"banner": True}
    assert unit.mounts == (TagMount(12, 0.125, (0.0, 0.1), 0.65),)
    assert roster.to_json() == {"cards": {"x": 1}, "game": "valknut", "units": [
        {"tag": 12, "name": "Ulf", "profile": "warrior", "owner": "red", "base_mm": 32.0, "base_height_in": 0.125,
         "tag_offset_in": [0.0, 0.1], "tag_in": 0.65, "banner": True}]}
    assert roster.unit_of_tag(12) == 12 and roster.unit_of_tag(112) is None


def test_extra_tags_are_mounts_of_their_unit() -> None:
    roster = parse_roster(_roster(
        {"tag": 112, "base_height_in": 0.125, "tag_offset_in": [0.0, -0.66], "tag_in": 0.45, "mount_pm_in": 0.006},
        {"tag": 212, "base_height_in": 1.85, "tag_in": 0.7},
        {"tag": 312},
        unit={"mount_pm_in": 0.004, "base_height_in": 0.2}))
    unit = roster.units[12]
    assert [m.tag for m in unit.mounts] == [12, 112, 212, 312]
    assert unit.mounts[0] == TagMount(12, 0.2, (0.0, 0.66), 0.5, 0.004)  # the unit's own, from its top-level keys
    assert unit.mounts[1] == TagMount(112, 0.125, (0.0, -0.66), 0.45, 0.006)
    assert unit.mounts[2] == TagMount(212, 1.85, (0.0, 0.0), 0.7)
    assert unit.mounts[3] == TagMount(312, 0.2, (0.0, 0.0), 0.5)  # height and side default to the unit's own
    assert set(roster.units) == {12, 13}  # an extra tag is no unit of its own
    assert [roster.unit_of_tag(t) for t in (12, 112, 212, 312, 13, 99)] == [12, 12, 12, 12, 13, None]
    assert roster.units[13].mounts == (TagMount(13, 0.125, (0.0, 0.0), tag_side_for_base(32.0)),)
    assert "more_tags" not in unit.extra and "mount_pm_in" not in unit.extra


def test_to_json_round_trips_through_json_text() -> None:
    roster = parse_roster(_roster({"tag": 112, "tag_offset_in": [0.0, -0.66], "mount_pm_in": 0.006}, {"tag": 212},
                                  unit={"mount_pm_in": 0.004}))
    text = json.dumps(roster.to_json())
    again = parse_roster(json.loads(text))
    assert again == roster and again.to_json() == roster.to_json()
    saved = json.loads(text)["units"][0]
    assert saved["mount_pm_in"] == 0.004 and [m["tag"] for m in saved["more_tags"]] == [112, 212]


@pytest.mark.parametrize(("more", "unit", "words"), [
    ([{"tag": 13}], None, "tag 13, an extra tag of Ulf (tag 12), is also on Bjorn (tag 13)'s base"),
    ([{"tag": 112}, {"tag": 112}], None, "tag 112, an extra tag of Ulf (tag 12), is twice on its base"),
    ([{"tag": 12}], None, "tag 12, an extra tag of Ulf (tag 12), is twice on its base"),
    ([{"tag": 5}], None, "extra tag 5: ids 0-9 are anchor tags"),
    ([{"tag": 587}], None, "extra tag 587: tag36h11 has ids up to 586 only"),
    ([{"tag": "112"}], None, "extra tag 1 has no whole-number tag id"),
    ([{"tag": True}], None, "extra tag 1 has no whole-number tag id"),
    ([{"tag": 112, "mount_pm_in": -0.01}], None, "extra tag 112: mount_pm_in is -0.01, outside 0 to 12"),
    ([{"tag": 112, "tag_offset_in": [1]}], None, "extra tag 112: tag_offset_in must be two numbers"),
    ([{"tag": 112, "tag_ofset_in": [0, 1]}], None, "extra tag 112 has 'tag_ofset_in', which an extra tag does not"),
    ([112], None, "extra tag 1 must be an object"),
    ([], {"more_tags": {"tag": 112}}, "more_tags must be a list of tags"),
    ([], {"mount_pm_in": -1}, "tag 12: mount_pm_in is -1, outside 0 to 12"),
])
def test_bad_mounts_are_one_sentence_naming_the_tag(more: list[Any], unit: dict[str, Any] | None, words: str) -> None:
    with pytest.raises(RosterError) as err:
        parse_roster(_roster(*more, unit=unit))
    message = str(err.value)
    assert words in message, message
    assert message.endswith(".") and not re.search(r"\. [A-Z]", message)  # one sentence


def test_an_extra_tag_that_is_another_units_tag_is_refused_whichever_comes_first() -> None:
    obj = _roster()
    obj["units"].reverse()  # Bjorn (13) first, then Ulf with extra tag 13
    obj["units"][1]["more_tags"] = [{"tag": 13}]
    with pytest.raises(RosterError, match=r"tag 13, an extra tag of Ulf \(tag 12\), is also on Bjorn"):
        parse_roster(obj)


def test_a_terrain_piece_may_not_carry_an_extra_tag() -> None:
    roster = parse_roster(_roster({"tag": 112}))
    ruin = TerrainPiece("ruin", ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0)), frozenset({"elevated"}), 3.0, tag=112)
    with pytest.raises(SetupFileError, match="Tag 112 is both an extra tag of unit 'Ulf' in the roster and terrain"):
        check_tags_apart(roster, [ruin])


# ---- the web roster page's API keeps more_tags ------------------------------------------------------------------

@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    from tests.webui_server import LocalClient, session_settings
    from tests.webui_session import make_session
    from webui.server import create_app

    make_session(tmp_path / "sessions" / "table1", frames=4)
    app = create_app(session_settings(tmp_path / "sessions" / "table1", tmp_path / "sessions", tmp_path / "setup"))
    with LocalClient(app) as c:
        yield c


def test_the_roster_page_saves_and_gives_back_more_tags(client: TestClient) -> None:
    roster = client.get("/api/roster").json()["roster"]
    unit = roster["units"][0]
    unit["more_tags"] = [{"tag": 500, "base_height_in": 1.85, "tag_offset_in": [0.0, 0.02], "tag_in": 0.7,
                          "mount_pm_in": 0.005}]
    r = client.put("/api/roster?restart=true", json=roster)
    assert r.status_code == 200, r.text
    back = client.get("/api/roster").json()["roster"]
    assert back["units"][0]["more_tags"] == unit["more_tags"]
    # the page's own table keeps every key it has no column for (webui/static/roster.js: tr.dataset.extra)
    js = (Path(__file__).resolve().parents[1] / "webui" / "static" / "roster.js").read_text(encoding="utf-8")
    assert "more_tags" not in js and "tr.dataset.extra = JSON.stringify" in js


def test_every_wrong_unit_of_a_roster_is_named_at_once() -> None:
    """A club's hand-edited file with several mistakes says each, numbered, not only the first (five at most)."""
    obj = json.loads((Path(__file__).resolve().parents[1] / "examples" / "rosters" / "valknut.json").read_text())
    obj["units"][0].pop("owner")
    obj["units"][2]["base_mm"] = 500
    obj["units"][3] = "Red 4"
    with pytest.raises(RosterError) as err:
        parse_roster(obj, "roster.json")
    tags = [u["tag"] for u in obj["units"][:3]]
    assert str(err.value) == (
        f'3 units of roster.json are wrong. (1) Tag {tags[0]} has no "owner"; every unit needs its owner\'s name. '
        f"(2) Tag {tags[2]}: base_mm is 500, outside 10 to 200. (3) Unit 4 must be an object with tag, profile and "
        "owner.")
    for u in obj["units"][4:11]:
        u["profile"] = ""
    with pytest.raises(RosterError) as err:
        parse_roster(obj)
    said = str(err.value)
    assert said.startswith(f"{3 + len(obj['units'][4:11])} units of the roster are wrong. (1) Tag {tags[0]}")
    assert said.count("(") == 5 and said.endswith(f" And {len(obj['units'][4:11]) - 2} more.")
    obj["units"] = obj["units"][1:2]  # one mistake is said as it always was
    obj["units"][0]["tag"] = 3
    with pytest.raises(RosterError, match=r"^the roster, tag 3: ids 0-9 are anchor tags; give bases ids from 10 up\.$"):
        parse_roster(obj)
