"""Which plane a base stands on: the table, or the floor of an elevated piece, told apart by the tag's size.

A tag is first measured at its base's height above the table. A unit on a 3" ruin floor measured that way
lands where its rays meet the lower plane: further from the camera, so near the ruin's far edge it falls
outside the footprint. So the candidate planes of a tag are the table and every elevated floor whose
footprint covers the base *as measured on that floor's plane*.

The tag's shape cannot tell them apart: mapping image points from one horizontal plane to another is a
scaling about the camera (a homothety), so a square stays a square. Its size does tell: on the plane
z it measures side_0 * (H - z) / (H - z_0), H the camera's height, ~10 % smaller on a floor 3" up seen from
30". The candidate whose side fits the printed side (the roster's) is the plane the tag is on.

When the size cannot decide (no printed side known, candidates within the noise of each other, or a printed
side that fits none), the highest floor whose footprint covers the base is taken, as the footprint says, and
the fix is marked `height_assumed`. The same scaling moves positions and ± between planes, so nothing is
mapped through the lens twice: one batched footprint test per floor, and per-tag work only for tags that
some floor covers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import shapely

from rules.terrain import TerrainPiece
from vision.positions import BaseFix

PRINT_SIGMA = 0.01
"""One-sigma relative error of a printed tag's side (printer scaling, paper, glue), a fraction."""
FIT_SIGMAS = 3.0
"""A candidate plane fits the printed side when its measured side is within this many sigmas of it."""


def stand_on_floors(
    fixes: Sequence[BaseFix],
    camera_in: np.ndarray,
    floors: Sequence[TerrainPiece],
    printed_in: Mapping[int, float],
    skip: Collection[int] = (),
) -> tuple[BaseFix, ...]:
    """Every fix on the plane its tag is on: its own (the table's, at base height) or an elevated floor's.

    fixes: measured at each base's height above the table (z = base height, inches), `side_in` set.
    camera_in: the camera's optical centre (x, y, z), table inches. floors: elevated pieces placed on the
    table (`height_in` > 0). printed_in: tag id -> printed black square side, inches (a tag without one
    can only be assumed). skip: tags that are not bases standing on floors (terrain pieces' own tags).
    """
    fixes = tuple(fixes)
    rows = [i for i, f in enumerate(fixes) if f.tag not in skip]
    if not rows or not floors:
        return fixes
    sub = [fixes[i] for i in rows]
    centre = np.array([f.tag_center_in for f in sub], dtype=np.float64)  # (n, 2)
    offset = centre - np.array([(f.x, f.y) for f in sub], dtype=np.float64)  # tag centre from base centre
    z0 = np.array([f.z for f in sub], dtype=np.float64)
    foot, height = np.asarray(camera_in[:2], dtype=np.float64), float(camera_in[2])
    planes = np.array([p.height_in for p in floors], dtype=np.float64)[:, None] + z0[None, :]  # (m, n)
    scale = (height - planes) / (height - z0)[None, :]  # lengths on each floor's plane / on the base's plane
    bases = foot + (centre - foot)[None] * scale[..., None] - offset[None]  # (m, n, 2) base centres on each floor
    covered = np.stack([shapely.covers(p.shape, shapely.points(bases[j])) for j, p in enumerate(floors)])
    covered &= scale > 0  # a floor above the camera holds nothing it sees
    ambiguous = np.flatnonzero(covered.any(axis=0))
    if ambiguous.size == 0:
        return fixes

    # candidates per ambiguous tag: row 0 the table (its own plane, scale 1), rows 1.. the floors (m + 1, a)
    cand_scale = np.vstack([np.ones((1, ambiguous.size)), scale[:, ambiguous]])
    cand_z = np.vstack([z0[None, ambiguous], planes[:, ambiguous]])
    possible = np.vstack([np.ones((1, ambiguous.size), bool), covered[:, ambiguous]])
    side = np.array([sub[c].side_in for c in ambiguous])
    printed = np.array([printed_in.get(sub[c].tag, np.nan) for c in ambiguous], dtype=np.float64)
    # one sigma of log(side): the position's sigma (pm / 2) bounds the side's from corner noise; plus the print's
    sigma = np.hypot(np.array([sub[c].pm for c in ambiguous]) / 2.0 / side, PRINT_SIGMA)
    with np.errstate(divide="ignore", invalid="ignore"):
        misfit = np.abs(np.log(side * cand_scale / printed)) / sigma  # sigmas from each candidate's side to the print
    fits = possible & (misfit <= FIT_SIGMAS)
    best = np.argmin(np.where(possible & np.isfinite(misfit), misfit, np.inf), axis=0)
    cols = np.arange(ambiguous.size)
    best_z = cand_z[best, cols]
    decided = fits[best, cols] & ~np.any(fits & (np.abs(cand_z - best_z) > 1e-6), axis=0)
    highest = np.argmax(np.where(possible, cand_z, -np.inf), axis=0)  # row 0 loses to any covering floor
    chosen = np.where(decided, best, highest)

    out = list(fixes)
    for col, c in enumerate(ambiguous):
        row = int(chosen[col])
        assumed = not bool(decided[col])
        if row == 0 and not assumed:
            continue
        fix, k = sub[c], float(cand_scale[row, col])
        tag_centre = foot + (centre[c] - foot) * k
        out[rows[c]] = dataclasses.replace(
            fix,
            x=float(tag_centre[0] - offset[c, 0]),
            y=float(tag_centre[1] - offset[c, 1]),
            z=float(cand_z[row, col]),
            pm=fix.pm * k,
            side_in=fix.side_in * k,
            tag_center_in=(float(tag_centre[0]), float(tag_centre[1])),
            height_assumed=assumed,
        )
    return tuple(out)
