"""Mount calibration against a roster: which tags a roster mounts where, each frame's tag measures, and the
fitted mounts written back (the maths is vision/mount_fit.py; `tablesight calibrate-mounts` and the wizard's
"Measure tag mounts" step use this).

A roster unit mounts its own tag (`tag`, `base_height_in`, `tag_offset_in`) and maybe more on the same base:
`"more_tags": [{"tag": 31, "base_height_in": 1.85, "tag_offset_in": [0, 0], "tag_in": 0.7, "mount_pm_in": 0.004}]`
(an extra tag's height defaults to its unit's). The roster is read and written as raw JSON so that every other
key (a game's cards, keys this module does not know) is kept exactly as it was: `with_mounts` changes only
`tag_offset_in` and `mount_pm_in` of the mounts it was given. `live_progress` is the wizard's step: one look
at the newest live frame, each tag's progress as JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from calibration.table import TableCalibration
from rules.roster import Roster
from vision.mount_fit import MIN_TURN_DEG, MountFit, MountSurvey, TagSample
from vision.positions import measure_bases
from vision.tags import TagObservation

OFFSET_DECIMALS = 4
"""Decimals of a fitted offset written to the roster (0.0001": far under what a camera resolves)."""


@dataclass(frozen=True)
class Mount:
    """One tag on one base, as the roster has it. Inches."""

    tag: int
    unit_tag: int
    """The unit's own tag id (the same as `tag` for the unit's first tag)."""
    name: str
    """The unit's name as a player reads it (its "name", else its profile and tag)."""
    height_in: float
    offset_in: tuple[float, float]
    extra_index: int | None = None
    """Which `more_tags` entry this is, None for the unit's own tag."""


def roster_mounts(roster: Roster) -> list[Mount]:
    """Every tag the roster mounts, unit by unit (its own tag, then its more_tags), as rules.roster parsed them."""
    return [Mount(m.tag, unit.tag, unit.name, m.height_in, m.offset_in, j - 1 if j else None)
            for unit in roster.units.values() for j, m in enumerate(unit.mounts)]


def with_mounts(raw: Mapping[str, Any], fits: Mapping[int, MountFit]) -> dict[str, Any]:
    """A copy of the raw roster with each fitted tag's `tag_offset_in` and `mount_pm_in` set (on its unit, or on
    its more_tags entry); every other key as it was."""
    out: dict[str, Any] = copy.deepcopy(dict(raw))
    for unit in out.get("units", []):
        if not isinstance(unit, dict):
            continue
        entries = [unit, *(e for e in unit.get("more_tags", []) if isinstance(e, dict))] \
            if isinstance(unit.get("more_tags", []), list) else [unit]
        for entry in entries:
            tag = entry.get("tag")
            fit = fits.get(tag) if isinstance(tag, int) and not isinstance(tag, bool) else None
            if fit is None:
                continue
            entry["tag_offset_in"] = [round(fit.offset_in[0], OFFSET_DECIMALS) + 0.0,
                                      round(fit.offset_in[1], OFFSET_DECIMALS) + 0.0]
            entry["mount_pm_in"] = fit.pm_in
    return out


def tag_samples(tags: Sequence[TagObservation], cal: TableCalibration, heights: Mapping[int, float],
                frame: int) -> list[tuple[int, TagSample]]:
    """One frame's measure of each tag in `heights` (tag id -> height of its face, inches): its centre on that
    plane and its yaw (vision.positions, no offset applied)."""
    wanted = [t for t in tags if t.id in heights]
    fixes = measure_bases(wanted, cal, heights)
    return [(f.tag, TagSample(frame, f.tag_center_in[0], f.tag_center_in[1], f.yaw_deg)) for f in fixes]


def samples_by_tag(frames: Iterable[tuple[int, Sequence[TagObservation]]], cal: TableCalibration,
                   heights: Mapping[int, float]) -> dict[int, list[TagSample]]:
    """Every frame's samples (frames: (index, tags found)), by tag id, in frame order."""
    out: dict[int, list[TagSample]] = {}
    for index, tags in frames:
        for tag, s in tag_samples(tags, cal, heights, index):
            out.setdefault(tag, []).append(s)
    return out


def offset_words(offset: Sequence[float]) -> str:
    return f"[{offset[0]:.3f}, {offset[1]:.3f}]"


def live_progress(survey: MountSurvey, roster: Roster, result: Any) -> dict[str, Any]:
    """The wizard's "Measure tag mounts" step, one look: add the newest live frame (`result`: a pipeline's
    FrameResult, or None) to `survey`, then each roster tag's progress as JSON (degrees turned, the fitted
    offset and ± once the turn is enough, else what to do)."""
    mounts = roster_mounts(roster)
    cal = getattr(result, "calibration", None) if result is not None else None
    status = ""
    if result is None:
        status = "No camera frame has arrived yet; wait for the picture."
    elif cal is None:
        status = "The table is not calibrated yet; calibrate it (step 1) first, then turn the bases."
    else:
        frame = int(result.frame_index)
        survey.add(frame, tag_samples(result.tags, cal, {m.tag: m.height_in for m in mounts}, frame), key=cal)
    names = {m.tag: m.name for m in mounts}
    rows = []
    for m, p in zip(mounts, survey.progress([m.tag for m in mounts], names), strict=True):
        row: dict[str, Any] = {"tag": m.tag, "unit": m.unit_tag, "name": m.name, "extra": m.extra_index is not None,
                               "old_offset_in": [round(v, OFFSET_DECIMALS) for v in m.offset_in],
                               "samples": p.samples, "turned_deg": round(p.turned_deg, 1), "ready": p.fit is not None,
                               "message": p.message, "hint": _hint(p)}
        if p.fit is not None:
            row.update(offset_in=[round(v, OFFSET_DECIMALS) + 0.0 for v in p.fit.offset_in],
                       residual_in=round(p.fit.residual_in, 4), pm_in=p.fit.pm_in,
                       turned_deg=round(p.fit.turned_deg, 1))
        rows.append(row)
    return {"status": status, "min_turn_deg": MIN_TURN_DEG, "mounts": rows,
            "ready": sum(r["ready"] for r in rows)}


def _hint(p: Any) -> str:
    """A row's few words: what to do next with this tag (the full sentence is its "message")."""
    if p.fit is not None:
        return ""
    if p.samples == 0:
        return "not seen yet"
    if p.turned_deg < MIN_TURN_DEG:
        return f"turn it on the spot ({MIN_TURN_DEG:.0f}° or more)"
    return p.message  # it moved, or too few frames: the whole sentence


def survey_fits(survey: MountSurvey, roster: Roster) -> dict[int, MountFit]:
    """The roster's tags that `survey` can fit now, by tag id."""
    mounts = roster_mounts(roster)
    return {p.tag: p.fit for p in survey.progress([m.tag for m in mounts]) if p.fit is not None}
