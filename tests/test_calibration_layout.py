"""Anchor layouts: the default corners of DESIGN.md, board strings and layout JSON files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from calibration.errors import CalibrationError, InputError
from calibration.layout import default_layout, layout_from_json, load_layout, parse_board


def test_default_layout_puts_2in_anchors_1_5in_outside_each_corner() -> None:
    lay = default_layout(30, 22)
    assert lay.board == (30.0, 22.0)
    assert lay.ids == (0, 1, 2, 3)
    assert [lay.anchors[i].centre for i in lay.ids] == [(-1.5, -1.5), (31.5, -1.5), (31.5, 23.5), (-1.5, 23.5)]
    assert all(a.size_in == 2.0 and a.z_in == 0.0 for a in lay.anchors.values())


def test_anchor_corners_follow_the_contract_order_and_turn_ccw() -> None:
    a = default_layout(30, 22).anchors[0]
    np.testing.assert_allclose(
        a.corners_in(0), [[-2.5, -2.5, 0], [-0.5, -2.5, 0], [-0.5, -0.5, 0], [-2.5, -0.5, 0]]
    )
    # a quarter turn counter-clockwise moves corner 0 (bottom-left) to the bottom-right
    np.testing.assert_allclose(a.corners_in(1)[0], [-0.5, -2.5, 0])
    np.testing.assert_allclose(a.corners_in(2)[0], [-0.5, -0.5, 0])
    np.testing.assert_allclose(a.corners_in(4), a.corners_in(0))


@pytest.mark.parametrize(
    ("text", "board"),
    [("30x22", (30.0, 22.0)), ("44X30", (44.0, 30.0)), (" 22.5 x 15 ", (22.5, 15.0)), ("36×36", (36.0, 36.0))],
)
def test_parse_board_reads_width_by_depth(text: str, board: tuple[float, float]) -> None:
    assert parse_board(text) == board


@pytest.mark.parametrize("text", ["30", "30by22", "x22", "30x", "0x22", "-30x22", "30x22x4", ""])
def test_parse_board_refuses_what_is_not_w_by_d(text: str) -> None:
    with pytest.raises(CalibrationError, match="write it like 30x22|positive width"):
        parse_board(text)


def _anchors(*ids: int) -> list[dict[str, object]]:
    return [{"id": i, "center_in": [float(i) * 10, 0.0], "size_in": 2.0} for i in ids]


def test_layout_file_round_trips_and_takes_the_board_from_the_option(tmp_path: Path) -> None:
    path = tmp_path / "layout.json"
    path.write_text(json.dumps({"anchors": [*_anchors(5, 6), {"id": 7, "center_in": [3, 4], "size_in": 3, "z_in": 0.5}]}))
    lay = load_layout(path, (30.0, 22.0))
    assert lay.ids == (5, 6, 7) and lay.board == (30.0, 22.0)
    assert lay.anchors[7].z_in == 0.5 and lay.anchors[7].size_in == 3.0
    again = layout_from_json(lay.to_json())
    assert again.to_json() == lay.to_json()


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1, 2], "not a JSON object"),
        ({"anchors": []}, "needs an \"anchors\" list"),
        ({"anchors": _anchors(0)}, "one anchor"),
        ({"anchors": [*_anchors(0, 1), {"id": 1, "center_in": [0, 5], "size_in": 2}]}, "lists anchor 1 twice"),
        ({"anchors": [*_anchors(0), {"id": 1, "size_in": 2}]}, "anchor #2 has no 'center_in'"),
        ({"anchors": [*_anchors(0), {"id": 600, "center_in": [1, 1], "size_in": 2}]}, "from 0 to 586"),
        ({"anchors": [*_anchors(0), {"id": 1, "center_in": [1], "size_in": 2}]}, "two numbers"),
        ({"anchors": [*_anchors(0), {"id": 1, "center_in": [1, 2], "size_in": -2}]}, "must be > 0"),
        ({"anchors": [*_anchors(0), {"id": 1, "center_in": [1, "a"], "size_in": 2}]}, "must be a number"),
        ({"version": 2, "anchors": _anchors(0, 1)}, "version 2"),
        ({"format": "something-else", "anchors": _anchors(0, 1)}, "format 'something-else'"),
        ({"board_in": [40, 30], "anchors": _anchors(0, 1)}, "40x30 board but --board says 30x22"),
    ],
)
def test_malformed_layout_file_is_refused_in_one_sentence(tmp_path: Path, obj: object, message: str) -> None:
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(CalibrationError, match=message) as err:
        load_layout(path, (30.0, 22.0))
    text = str(err.value)
    assert str(path) in text and "\n" not in text and isinstance(err.value, InputError)


def test_layout_file_missing_or_not_json_is_named(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="does not exist; check the path or give a layout JSON file"):
        load_layout(tmp_path / "nope.json", (30.0, 22.0))
    bad = tmp_path / "bad.json"
    bad.write_text("{anchors: ")
    with pytest.raises(CalibrationError, match=r"bad.json is not valid JSON \(line 1"):
        load_layout(bad, (30.0, 22.0))


def test_layout_file_without_board_needs_the_option(tmp_path: Path) -> None:
    path = tmp_path / "layout.json"
    path.write_text(json.dumps({"anchors": _anchors(0, 1)}))
    with pytest.raises(CalibrationError, match="--board WxD"):
        load_layout(path)
    path.write_text(json.dumps({"board_in": [24, 18], "anchors": _anchors(0, 1)}))
    assert load_layout(path).board == (24.0, 18.0)
