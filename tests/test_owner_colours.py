"""A side's colour (session/owner_colours.py): the colour its name says, wherever it is listed, on the pages and in
the battle report; sides that name none get the palette's colours no other side has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.roster import parse_roster
from session.frame_message import side_colours
from session.owner_colours import PAGE, owner_colours
from session.report_plots import REPORT
from session.report_plots import side_colours as report_colours

SAMPLES = Path(__file__).resolve().parents[1] / "sample_frames"
RED, BLUE, YELLOW, GREEN = (PAGE.named[c] for c in ("red", "blue", "yellow", "green"))


def test_the_stress_samples_blue_side_listed_first_is_drawn_blue() -> None:
    roster = parse_roster(json.loads((SAMPLES / "stress" / "roster.json").read_text()))
    assert roster.owners() == ["blue", "red"]
    assert side_colours(roster) == {"blue": BLUE, "red": RED}
    assert report_colours(roster.owners()) == {"blue": REPORT.named["blue"], "red": REPORT.named["red"]}


@pytest.mark.parametrize(("sides", "colours"), [
    (["Blue", "red"], [BLUE, RED]),  # any case
    (["Team Blue", "Red Raiders"], [BLUE, RED]),  # one colour word in the name
    (["Vikings", "Team Red", "Saxons"], [BLUE, RED, YELLOW]),  # the spare ones skip red, taken by name
    (["Red", "Red Raiders"], [RED, BLUE]),  # a colour is never given twice
    (["Red and Blue", "Green"], [RED, GREEN]),  # two colour words: no colour said
    (["Blackwood", "Redcliff"], [RED, BLUE]),  # a colour inside a word is no colour word
    ([], []),
])
def test_a_side_is_drawn_in_the_colour_its_name_says(sides: list[str], colours: list[str]) -> None:
    assert list(owner_colours(sides, PAGE).items()) == list(zip(sides, colours, strict=True))


def test_more_sides_than_colours_cycle_and_repeats_are_one_side() -> None:
    sides = [f"side {i}" for i in range(8)]
    got = owner_colours(sides + ["side 0"], PAGE)
    assert list(got) == sides and list(got.values()) == [*PAGE.spare, *PAGE.spare[:2]]


def test_the_report_also_takes_any_colour_matplotlib_knows() -> None:
    assert report_colours(["forestgreen", "Orcs", "none"]) == {
        "forestgreen": "forestgreen", "Orcs": REPORT.spare[0], "none": REPORT.spare[1]}
