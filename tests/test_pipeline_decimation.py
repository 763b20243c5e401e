"""The detector's decimation follows the smallest tag the roster prints (vision.tags.decimation_for): bigger
toppers scan coarser, a table without a roster or with tagged terrain scans for the smallest usual tag."""

from __future__ import annotations

import json
from pathlib import Path

from calibration.table import load_calibration
from rules.roster import parse_roster
from rules.terrain import TerrainPiece
from session.pipeline import SMALLEST_TAG_IN, Pipeline, smallest_tag_in
from vision.positions import smallest_tag_px
from vision.tags import decimation_for

SAMPLE = Path(__file__).resolve().parents[1] / "sample_frames" / "valknut_skirmish"


def _roster(tag_in: float, extra_in: float | None = None) -> dict:
    unit = {"tag": 10, "profile": "warrior", "owner": "red", "base_height_in": 1.85, "tag_in": tag_in}
    if extra_in is not None:
        unit["more_tags"] = [{"tag": 110, "base_height_in": 0.125, "tag_offset_in": [0, 0.7], "tag_in": extra_in}]
    return {"game": "valknut", "units": [unit, {**unit, "tag": 11, "more_tags": []}]}


def test_the_smallest_printed_tag_sets_the_decimation() -> None:
    cal = load_calibration(SAMPLE / "calibration.json")
    sample = parse_roster(json.loads((SAMPLE / "roster.json").read_text()))
    assert smallest_tag_in(None, ()) == SMALLEST_TAG_IN == 0.5
    assert smallest_tag_in(sample, ()) == 0.75  # the sample's toppers
    big = parse_roster(_roster(1.6))
    assert smallest_tag_in(big, ()) == 1.6
    assert smallest_tag_in(parse_roster(_roster(1.6, extra_in=0.55)), ()) == 0.55  # an extra rim tag counts
    carried = TerrainPiece("crate", ((0, 0), (1, 0), (1, 1)), frozenset(), 1.0, False, tag=5)
    assert smallest_tag_in(big, (carried,)) == SMALLEST_TAG_IN  # a terrain tag's size is not given
    # on the sample's 720p camera: 0.5" tags span ~9 px at the far side (decimation 1), 1.6" ones ~3x that
    px_small, px_big = smallest_tag_px(cal, 0.5), smallest_tag_px(cal, 1.6)
    assert 8 < px_small < 12 and abs(px_big / px_small - 3.2) < 0.01
    assert Pipeline(cal, None).detector.decimate == decimation_for(px_small) == 1
    assert Pipeline(cal, big).detector.decimate == decimation_for(px_big) == 2
