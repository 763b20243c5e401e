"""Several tags on one base: the fixes of a unit's tags seen in one frame, fused into one fix of the unit.

A base may carry more than one tag (two rim tags on opposite sides, a rim tag and a topper card; the roster's
`more_tags`). Each tag seen gives a fix of the base centre (vision/positions.py: measured on the tag's own
plane and moved back by that tag's own offset), in table inches with its two-sigma ± `pm`. The rule:

- Every position measured from a tag carries its mount's ± (`Mount.pm_in`, what remains after mount
  calibration), added in quadrature: pm_i = hypot(pm_tag, pm_mount), inches; a mount never measured adds what
  it may hide instead (`Mount.unmeasured_in`, a pin's possible lean: a bias, not noise, so added whole).
- Fixes of one unit whose base centres lie within `agree_in` (the base's radius: two bases' centres are at
  least a diameter apart) of the most precise one are the same base; each tag id counts once per base.
- That base's fix is the inverse-variance weighted mean of the centres its tags imply (weights 1 / pm_i²), with
  pm = 1 / sqrt(sum 1 / pm_i²) (mount and corner errors of different tags taken as independent); its yaw is the
  most precise tag's, its z the unit's own tag's when seen (else the most precise one's) given at the height of
  the unit's own tag (z - this tag's height + the own tag's height: the floor under the base plus the own
  tag's height, as for a unit with one tag), and its `tag` is the unit's id. So the tracker sees one fix per
  unit, whichever of its tags are visible.
- Switching tags must not move a still base: a mount is never exactly where the roster says, so tag A and tag
  B imply centres a few hundredths apart. Whenever several tags of a base are seen together, `BaseFuser` learns
  each tag's bias (its centre minus the fused centre, a running mean over `BIAS_FRAMES` frames, inches) and
  takes it off that tag's centre from then on: with A hidden, B alone gives the centre A and B gave together.
  Two tags never seen together cannot be reconciled: their switch is within their ±, as the mounts' ± say.
- Fixes of one unit that disagree (further apart than `agree_in`, or one tag id twice) are separate bases
  claiming the same unit: each is fused on its own and the tracker reports the unit's duplicate.

Tags of no unit (anchors are never fixes; terrain pieces' tags, unknown tags) pass through unchanged.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vision.positions import BaseFix

BIAS_FRAMES = 60
"""Frames of seeing a base's tags together over which each tag's bias is averaged (2 s at 30 fps)."""


@dataclass(frozen=True)
class Mount:
    """One tag on a unit's base, as fusion needs it (inches)."""

    unit: int
    """The unit's id: its own tag."""
    height_in: float
    """This tag's face above the underside of the base."""
    unit_height_in: float
    """The unit's own tag's face above the underside of the base: the fused fix's z is given at it."""
    pm_in: float = 0.0
    """The mount's ± left after mount calibration, added in quadrature to this tag's fixes."""
    unmeasured_in: float = 0.0
    """What the mount may hide while it was never measured (rules/roster.py `unmeasured_pm_in`), inches, added
    to this tag's fixes' ±."""
    agree_in: float = 0.5
    """Fixes of this unit further apart than this are different bases (the base's radius)."""


def _pm(fix: BaseFix, mount: Mount) -> float:
    return (math.hypot(fix.pm, mount.pm_in) if mount.pm_in > 0 else fix.pm) + mount.unmeasured_in


class BaseFuser:
    """Fuses each frame's fixes into one per unit (see the module docstring) and keeps the tags' learnt biases.

    `mounts`: tag id -> its Mount, for every tag of every unit (the unit's own included). Not thread-safe:
    one pipeline drives it, and a checkpoint deep-copies it.
    """

    def __init__(self, mounts: Mapping[int, Mount]) -> None:
        self.mounts = dict(mounts)
        self.bias: dict[int, tuple[float, float, int]] = {}
        """tag id -> (bias x, bias y, frames averaged): the tag's centre minus its base's fused centre, inches."""

    def fuse(self, fixes: Sequence[BaseFix]) -> tuple[BaseFix, ...]:
        """One fix per base seen: per unit, in the order of the first of its tags among `fixes`."""
        out: list[BaseFix | list[BaseFix]] = []
        groups: dict[int, list[BaseFix]] = {}
        for fix in fixes:
            mount = self.mounts.get(fix.tag)
            if mount is None:
                out.append(fix)
                continue
            if mount.unit not in groups:
                groups[mount.unit] = []
                out.append(groups[mount.unit])
            groups[mount.unit].append(fix)
        fused: list[BaseFix] = []
        for item in out:
            if isinstance(item, BaseFix):
                fused.append(item)
            else:
                fused += self._unit(item)
        return tuple(fused)

    def _centre(self, fix: BaseFix) -> tuple[float, float]:
        b = self.bias.get(fix.tag)
        return (fix.x, fix.y) if b is None else (fix.x - b[0], fix.y - b[1])

    def _unit(self, fixes: list[BaseFix]) -> list[BaseFix]:
        """A unit's fixes in one frame -> one fix per base (one, unless two bases claim the unit)."""
        order = {id(f): k for k, f in enumerate(fixes)}
        ranked = sorted(fixes, key=lambda f: _pm(f, self.mounts[f.tag]))
        bases: list[list[BaseFix]] = []
        for fix in ranked:
            cx, cy = self._centre(fix)
            for base in bases:
                sx, sy = self._centre(base[0])
                agree = self.mounts[fix.tag].agree_in
                if all(f.tag != fix.tag for f in base) and math.hypot(cx - sx, cy - sy) <= agree:
                    base.append(fix)
                    break
            else:
                bases.append([fix])
        if len(bases) == 1 and len(bases[0]) > 1:
            self._learn(bases[0])
        bases.sort(key=lambda base: min(order[id(f)] for f in base))  # two bases claiming a unit: as detected
        return [self._one(base) for base in bases]

    def _one(self, base: list[BaseFix]) -> BaseFix:
        """One base's tags (most precise first) -> its fix."""
        best = base[0]
        unit = self.mounts[best.tag].unit
        zfix = next((f for f in base if f.tag == unit), best)
        zm = self.mounts[zfix.tag]
        z = zfix.z if zm.height_in == zm.unit_height_in else zfix.z - zm.height_in + zm.unit_height_in
        if len(base) == 1:
            x, y = self._centre(best)
            pm = _pm(best, self.mounts[best.tag])
        else:
            pms = [_pm(f, self.mounts[f.tag]) for f in base]
            weights = [1.0 / (p * p) for p in pms]
            total = sum(weights)
            centres = [self._centre(f) for f in base]
            x = sum(w * c[0] for w, c in zip(weights, centres)) / total
            y = sum(w * c[1] for w, c in zip(weights, centres)) / total
            pm = 1.0 / math.sqrt(total)
        return dataclasses.replace(best, tag=unit, x=x, y=y, z=z, pm=pm, height_assumed=zfix.height_assumed)

    def _learn(self, base: list[BaseFix]) -> None:
        """Several tags of one base seen together: move each tag's bias toward its centre minus the fused one."""
        if not all(math.isfinite(_pm(f, self.mounts[f.tag])) and _pm(f, self.mounts[f.tag]) > 0 for f in base):
            return
        fused = self._one(base)
        for f in base:
            bx, by, n = self.bias.get(f.tag, (0.0, 0.0, 0))
            n = min(n + 1, BIAS_FRAMES)
            rx, ry = f.x - fused.x, f.y - fused.y
            self.bias[f.tag] = (bx + (rx - bx) / n, by + (ry - by) / n, n)

