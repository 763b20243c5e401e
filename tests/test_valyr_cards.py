"""Valyr unit cards as data: Identity, Combat, Abilities, Components; the range notation; the example roster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rules.engine import RosterError
from rules.roster import parse_roster
from rules.valyr.abilities import HOOKS
from rules.valyr.cards import OURS, RangeBand, parse_card, parse_range
from rules.valyr.game import EXAMPLE_CARDS, Valyr

ROOT = Path(__file__).resolve().parent.parent


def card(name: str = "Tester", attack: str = "3-12", defense: str = "0-0", rng: str = "0-[0/0]-12",
         energy: int = 2, move: str = "6-4", health: int = 5, appraisal: float = 10,
         abilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """A test card (ours)."""
    return {
        "Identity": {"Name": name, "Type": "Hero", "Dynasty": "Test", "Class": "Test", "Species": "Test",
                     "Distinctions": [], "Size": "1"},
        "Combat": {"Attack": attack, "Defense": defense, "Range": rng, "Energy": energy, "Movement": move,
                   "Health": health, "Appraisal": appraisal},
        "Abilities": abilities or {},
        "Components": [],
    }


def test_card_reads_identity_combat_abilities_components() -> None:
    data = card("Warden", attack="3-12", defense="2-1", rng="0-[+1/+2]-6-[0/-1]-12", energy=2, move="6-4",
                health=7, appraisal=30, abilities={"Mend": {"Type": "Active", "Ability": "heals", "Template": None,
                                                            "Hook": {"name": "mend", "amount": 2, "reach_in": 3}}})
    data["Identity"]["Distinctions"] = ["Armored"]
    data["Components"] = ["Mend token"]
    c = parse_card(data, hooks=HOOKS)
    assert (c.name, c.identity.type, c.identity.distinctions) == ("Warden", "Hero", ("Armored",))
    cb = c.combat
    assert (cb.strength, cb.skill, cb.armor, cb.dodge) == (3, 12, 2, 1)
    assert (cb.energy, cb.sprint, cb.stamina, cb.health, cb.appraisal) == (2, 6.0, 4.0, 7, 30.0)
    assert c.abilities[0].active and c.abilities[0].hook == "mend" and c.abilities[0].params == {"amount": 2,
                                                                                                   "reach_in": 3}
    assert c.components == ("Mend token",)


def test_card_accepts_the_rule_books_spelling_abilites() -> None:
    data = card()
    del data["Abilities"]
    data["Abilites"] = {"Climb": {"Type": "Passive", "Ability": "climbs", "Hook": "climber"}}
    assert parse_card(data, hooks=HOOKS).abilities[0].hook == "climber"


@pytest.mark.parametrize(
    "change,needle",
    [
        (lambda c: c["Combat"].pop("Health"), 'Combat is missing "Health"'),
        (lambda c: c["Identity"].update(Type="Wizard"), "Type\" must be Hero or Conscript; got 'Wizard'"),
        (lambda c: c["Combat"].update(Attack="three"), 'Combat "Attack" must be Strength-Skill like "3-12"'),
        (lambda c: c["Combat"].update(Energy=0), 'Combat "Energy" must be at least 1'),
        (lambda c: c["Combat"].update(Range="12-[0/0]-6"), "must list distances in increasing order"),
        (lambda c: c["Combat"].update(Range="0-[x/y]-6"), 'cannot read Range "0-[x/y]-6"'),
        (lambda c: c.pop("Combat"), 'has no "Combat" section'),
        (lambda c: c.update(Abilities={"Zap": {"Type": "Active", "Hook": "zap"}}),
         'names hook "zap", which Tablesight does not know; use one of: climber'),
        (lambda c: c.update(Abilities={"Mend": {"Type": "Active", "Hook": {"name": "mend", "amount": 1}}}),
         'hook "mend" needs a number "reach_in"'),
        (lambda c: c.update(Abilities={"Mend": {"Type": "Passive", "Hook": {"name": "mend", "amount": 1,
                                                                             "reach_in": 2}}}),
         'hook "mend" is active, but the ability is Passive'),
        (lambda c: c.update(Abilities={"Odd": {"Type": "Sometimes"}}), '"Type" must be Passive or Active'),
    ],
)
def test_card_errors_name_the_card_and_field(change, needle: str) -> None:  # type: ignore[no-untyped-def]
    data = card("Broken")
    change(data)
    with pytest.raises(RosterError) as err:
        parse_card(data, hooks=HOOKS)
    assert needle in str(err.value)
    assert "Broken" in str(err.value) or "Identity" not in data


def test_range_notation_banded_reading() -> None:
    t = parse_range("2-[+1/+2]-6-[0/-1]-12")
    assert t.bands == (RangeBand(2, 6, 1, 2), RangeBand(6, 12, 0, -1))
    assert (t.min_in, t.max_in) == (2, 12)


def test_range_notation_without_brackets_is_one_band() -> None:
    assert parse_range("1-8").bands == (RangeBand(1, 8, 0, 0),)


def test_range_notation_tolerates_missing_dash_before_bracket() -> None:
    # the rule book's own template writes "range[strength modifier/skill modifier]"
    assert parse_range("0-[+1/+1]-6[0/0]-12").bands == (RangeBand(0, 6, 1, 1), RangeBand(6, 12, 0, 0))


def test_range_object_form_equals_notation() -> None:
    obj = {"min": 2, "max": 12, "bands": [{"to": 6, "strength": 1, "skill": 2}, {"to": 12, "strength": 0,
                                                                                   "skill": -1}]}
    assert parse_range(obj).bands == parse_range("2-[+1/+2]-6-[0/-1]-12").bands


def test_range_boundary_belongs_to_closer_band() -> None:
    t = parse_range("0-[+1/+2]-6-[0/0]-12")
    assert [t.band_at(d) for d in (0, 5.99, 6.0, 6.01, 12.0, 12.01)] == [0, 0, 0, 1, 1, -1]


def test_card_round_trips_through_json() -> None:
    for c in EXAMPLE_CARDS.values():
        assert parse_card(json.loads(json.dumps(c.to_json())), hooks=HOOKS) == c


def test_example_cards_are_labelled_ours() -> None:
    assert EXAMPLE_CARDS and all(c.origin == OURS for c in EXAMPLE_CARDS.values())


def test_example_roster_file_matches_builtin_cards_and_loads() -> None:
    data = json.loads((ROOT / "examples" / "rosters" / "valyr.json").read_text())
    roster = parse_roster(data, "examples/rosters/valyr.json")
    assert roster.game == "valyr" and sorted(roster.units) == [10, 11, 20, 21]
    cards = {parse_card(c, hooks=HOOKS).name.lower(): parse_card(c, hooks=HOOKS) for c in data["cards"]}
    assert cards == EXAMPLE_CARDS
    state = Valyr().new_state(data)
    assert state.players == ("red", "blue") and state.appraisal_limit == 50
    assert [u.card.name for u in state.units] == ["Shieldbearer", "Archer", "Scout", "Mender"]
    assert len(state.terrain) == 2


def test_roster_unknown_profile_lists_cards() -> None:
    with pytest.raises(RosterError, match=r'"profile" must name a unit card \(Archer, Mender, Scout, Shieldbearer\)'):
        Valyr().new_state({"units": [{"tag": 12, "owner": "red", "profile": "Dragon"}]})


def test_roster_duplicate_tag_is_refused() -> None:
    with pytest.raises(RosterError, match="tag 12 is listed twice"):
        Valyr().new_state({"units": [{"tag": 12, "owner": "red", "profile": "Archer"},
                                     {"tag": 12, "owner": "blue", "profile": "Archer"}]})
