"""The hex grid projected over the camera picture (session/board_grid.py) lands where the renderer put the same
table points: a rendered Magni table (a lens with barrel distortion), calibrated from its own first frame as a
recorded session is, and every cell corner compared with the renderer's projection, in inches at that spot."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest

from rules.engine import find_game
from rules.hexgrid import Edge, Hex, parse_layout
from rules.vigtavl.state import Wall
from session.board_grid import GridKeys, board_grid, grid_key, laid_board
from vision.synth.samples import SessionScript, calibrate_first_frame, magni_placement, render_frame

TOLERANCE_IN = 0.02


@pytest.fixture(scope="module")
def table() -> tuple[SessionScript, Any]:
    script = magni_placement()
    image, _truth = render_frame(script, 0)
    return script, calibrate_first_frame(image, script)


def _truth_px(script: SessionScript, pts_in: np.ndarray) -> np.ndarray:
    """The renderer's own projection of table points (z = 0): the true camera, pose and lens."""
    pose = script.poses[0]
    pts = np.column_stack([pts_in, np.zeros(len(pts_in))])
    px, _ = cv2.projectPoints(pts, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)
    return np.asarray(px, np.float64).reshape(-1, 2)


def _errors_in(script: SessionScript, cal: Any, pts_in: np.ndarray, got_px: np.ndarray) -> np.ndarray:
    """How far each projected point is from the truth, in inches on the table at that spot."""
    truth = _truth_px(script, pts_in)
    err_px = np.hypot(*(got_px - truth).T)
    return np.asarray(err_px * cal.inches_per_px(truth), np.float64)


def test_magni_cell_corners_land_on_the_rendered_table_within_002_inch(table: tuple[SessionScript, Any]) -> None:
    script, cal = table
    game = find_game("magni")
    assert script.setup is not None
    state = game.new_state(dict(script.setup))
    grid = board_grid(game, state, cal)
    assert len(grid["cells"]) == 19 and grid["kinds"] == ["land"] and not grid["edges"]
    per = grid["edge_points"]
    assert per == 3  # 1.5" edges cut in 0.5" pieces
    corners_in, corners_px = [], []
    for cell in grid["cells"]:
        assert len(cell["px"]) == 6 * per
        corners_in += cell["in"]
        corners_px += [cell["px"][c * per] for c in range(6)]
    err = _errors_in(script, cal, np.array(corners_in), np.array(corners_px))
    assert len(err) == 114 and err.max() < TOLERANCE_IN, f"worst {err.max():.4f}\", mean {err.mean():.4f}\""
    # and the corners are where the board file lays them (flat, 1.5" cells centred at (12", 12"))
    lay = parse_layout(script.setup["board"]["layout"])
    centre = next(c for c in grid["cells"] if c["hex"] == [0, 0])
    assert np.allclose(centre["in"], lay.polygon(Hex(0, 0)), atol=1e-4)
    assert np.allclose(centre["in"][0], (13.5, 12.0), atol=1e-4)  # corner 0 of a flat cell: due east


def test_points_along_an_edge_follow_the_lens(table: tuple[SessionScript, Any]) -> None:
    """The points between corners are on the curved image of the straight edge, not on a straight pixel line."""
    script, cal = table
    game = find_game("magni")
    assert script.setup is not None
    grid = board_grid(game, game.new_state(dict(script.setup)), cal)
    per = grid["edge_points"]
    pts_in, pts_px, chord_off = [], [], []
    for cell in grid["cells"]:
        ring = np.array(cell["in"] + cell["in"][:1])
        for c in range(6):
            for k in range(1, per):
                pts_in.append(ring[c] + (ring[c + 1] - ring[c]) * k / per)
                pts_px.append(cell["px"][c * per + k])
                a, b = np.array(cell["px"][c * per]), np.array(cell["px"][((c + 1) * per) % (6 * per)])
                chord_off.append(float(np.hypot(*(np.array(cell["px"][c * per + k]) - (a + (b - a) * k / per)))))
    err = _errors_in(script, cal, np.array(pts_in), np.array(pts_px))
    assert err.max() < TOLERANCE_IN, f"worst {err.max():.4f}\""
    assert max(chord_off) > 0.05  # the lens bends the edges by a measurable amount here


def test_walls_are_projected_on_their_edges(table: tuple[SessionScript, Any]) -> None:
    script, cal = table
    game = find_game("vigtavl")
    state, _ = game.example(random.Random(0))
    walled = replace(state, walls=(Wall(Edge(Hex(0, 0), 1), "red"), Wall(Edge(Hex(1, -1), 5), "blue")))
    grid = board_grid(game, walled, cal)
    assert [e["hexes"] for e in grid["edges"]] == [[[0, 0], [1, -1]], [[1, 0], [1, -1]]]
    assert all(e["kind"] == "wall" for e in grid["edges"]) and grid["kinds"][-1] == "wall"
    ends_in = np.array([p for e in grid["edges"] for p in e["in"]])
    ends_px = np.array([p for e in grid["edges"] for p in (e["px"][0], e["px"][-1])])
    assert _errors_in(script, cal, ends_in, ends_px).max() < TOLERANCE_IN
    # a wall's ends are two corners of each of its cells
    cell = next(c for c in grid["cells"] if c["hex"] == [0, 0])
    for p in grid["edges"][0]["in"]:
        assert min(np.hypot(*(np.array(cell["in"]) - p).T)) < 1e-3


def test_the_grid_key_changes_with_the_board_and_the_calibration_only(table: tuple[SessionScript, Any]) -> None:
    _script, cal = table
    game = find_game("vigtavl")
    state, _ = game.example(random.Random(0))
    key = grid_key(game, laid_board(game, state), cal)
    assert key is not None and key == board_grid(game, state, cal)["key"]
    assert grid_key(game, laid_board(game, replace(state, round=2)), cal) == key  # the same map a round later
    walled = replace(state, walls=(Wall(Edge(Hex(0, 0), 1), "red"),))
    assert grid_key(game, laid_board(game, walled), cal) != key
    moved = replace(cal, tvec=np.asarray(cal.tvec) + (0.0, 0.0, 0.5))
    assert grid_key(game, laid_board(game, state), moved) != key
    assert grid_key(game, laid_board(game, state), None) not in (None, key)  # not calibrated yet: no pixels
    assert board_grid(game, state, None)["cells"][0]["px"] is None

    class Pipe:
        def __init__(self, st: Any) -> None:
            self.game, self.state = game, st

    keys = GridKeys()
    pipe = Pipe(state)
    assert keys(pipe, cal) == key and keys(pipe, cal) == key
    pipe.state = walled
    assert keys(pipe, cal) == grid_key(game, laid_board(game, walled), cal)
    valknut = find_game("valknut")
    open_table = Pipe(valknut.example(random.Random(0))[0])
    open_table.game = valknut
    assert keys(open_table, cal) is None
    assert board_grid(valknut, open_table.state, cal) == {"key": None, "layout": None, "edge_points": 0, "cells": [],
                                                          "edges": [], "kinds": []}
