"""Mount calibration: where a tag really sits on its base, measured by turning the base on the spot.

The rule: a player turns a base about its own centre, flat on the table, while the camera watches. Every
frame gives the tag's centre p (table inches, measured on the plane of the tag's face, i.e. at the roster's
tag height) and its yaw a (degrees, counter-clockwise from +x). A tag whose centre sits at offset o = (dx, dy)
from the base centre, in the tag's own frame, is then seen at

    p = c + R(a) o          (c: the base centre, fixed while the base only turns; R(a): a turn by a)

so its centre traces a circle of radius |o| around c, and the yaw measured in each frame says where on that
circle it is. With the angle known, the geometric least-squares fit of that circle is linear in (c, o): four
unknowns from two equations a frame, solved in one step (`fit_mount`). It needs no circle to be visible: a
topper tag almost over the base centre (a 2 deg lean on a 1.7" pin is a 0.06" offset, a circle too small to
fit from its points alone) is measured as well as a rim tag 0.66" out. The turn must cover at least
MIN_TURN_DEG (an arc, not a full turn): with less, the base centre and the offset cannot be told apart.

What remains: each frame's base centre with the fitted offset, p - R(a) o, scatters about c by the fit's
residual (detector noise, a card that flexes, a pin that wobbles as it turns). Its two-sigma is the mount's
± (`MountFit.pm_in`, written to the roster as `mount_pm_in`), the error a position from this tag still carries.

A base that slid while it turned is no circle about a fixed point: fitted with a centre that moves steadily,
p = c + v t + R(a) o, the slide v shows (the angle being known, a fixed centre cannot absorb it). A slide over
MAX_DRIFT_IN, or a scatter over MAX_RESIDUAL_IN, is refused with a sentence, as is a turn under
MIN_TURN_DEG or fewer than MIN_SAMPLES frames: the roster keeps what it had.

What no camera can tell: a base turned rigidly about another fixed point (a finger on its rim as a pivot) also
traces a perfect circle, about that point; its "offset" is then from the pivot. So the player turns the base
about its own centre (like a knob), and a fitted offset far from the roster's is worth a second turn.

Units: inches in the table frame (DESIGN.md), degrees counter-clockwise from +x. Pure numpy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from calibration.errors import InputError

MIN_TURN_DEG = 60.0
"""The least turn (degrees, the yaw's range over the samples) that tells the offset from the base centre."""
MIN_SAMPLES = 6
"""The fewest frames a fit uses."""
MAX_DRIFT_IN = 0.05
"""The most the base centre may slide from the first frame of the turn to the last, inches."""
MAX_RESIDUAL_IN = 0.03
"""The most the frames may scatter about the fitted circle (RMS, inches) for the fit to be kept."""
JUMP_IN = 0.5
"""A tag centre that jumps this far (inches) between two samples was lifted and put down elsewhere: the samples
before and after are two separate stays, fitted apart (the one with the most turn is used)."""
OUTLIER_IN = 0.03
"""A sample this far off the first fit (and over 4x the median) is dropped once, if it is one of a few."""
PM_FLOOR_IN = 0.001
"""The smallest ± written (inches): the roster keeps three decimals."""


class MountFitError(InputError):
    """A tag's turn that cannot give its mount; the message says what to do at the table."""


class TooLittleTurn(MountFitError):
    """The base turned less than MIN_TURN_DEG (or too few frames saw it)."""


class BaseMoved(MountFitError):
    """The tag's centre did not trace a circle about a fixed point: the base slid or wobbled as it turned."""


@dataclass(frozen=True)
class TagSample:
    """One frame's measure of one tag: its centre (inches, on the plane of its face) and yaw (degrees)."""

    frame: int
    x: float
    y: float
    yaw_deg: float


@dataclass(frozen=True)
class MountFit:
    """A tag's mount as measured by turning its base. Inches and degrees."""

    tag: int
    offset_in: tuple[float, float]
    """The tag centre's offset from the base centre, in the tag's own frame (the roster's `tag_offset_in`)."""
    centre_in: tuple[float, float]
    """Where the base centre stood while it turned, table inches."""
    turned_deg: float
    """How far the base turned over the samples used (the yaw's range), degrees."""
    residual_in: float
    """RMS distance of each frame's base centre (with the fitted offset) from the fitted centre, inches."""
    drift_in: float
    """How far the base centre slid from the first frame used to the last, inches (a fit's estimate)."""
    samples: int
    """Frames used."""
    frames: tuple[int, int] = (0, 0)
    """First and last frame used."""

    @property
    def pm_in(self) -> float:
        """The mount's two-sigma ± (inches, up to the next 0.001"): what a position from this tag still carries."""
        return max(PM_FLOOR_IN, math.ceil(2.0 * self.residual_in * 1000.0 - 1e-9) / 1000.0)


def turned_deg(yaws_deg: Sequence[float]) -> float:
    """The range of a sequence of yaws (degrees, in time order), unwrapped across +-180: how far a base turned."""
    if len(yaws_deg) == 0:
        return 0.0
    unwrapped = np.degrees(np.unwrap(np.radians(np.asarray(yaws_deg, dtype=np.float64))))
    return float(unwrapped.max() - unwrapped.min())


def _solve(p: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of p_i = c + R(a_i) o: (c, o, residual vectors (n, 2))."""
    cos, sin = np.cos(a), np.sin(a)
    n = len(p)
    A = np.zeros((2 * n, 4))
    A[0::2, 0] = 1.0
    A[1::2, 1] = 1.0
    A[0::2, 2], A[0::2, 3] = cos, -sin
    A[1::2, 2], A[1::2, 3] = sin, cos
    sol, *_ = np.linalg.lstsq(A, p.reshape(-1), rcond=None)
    c, o = sol[:2], sol[2:]
    return c, o, (p - (A @ sol).reshape(-1, 2))


def _drift(p: np.ndarray, a: np.ndarray, frames: np.ndarray) -> tuple[float, float]:
    """How far the base centre slid from the first sample to the last (inches) and that figure's one sigma: the
    fit of p_i = c + v t_i + R(a_i) o, t from 0 (first frame) to 1 (last). The angle being known, a slide is not
    mistaken for the turn (a fixed centre cannot absorb it, and the offset is the same in every frame)."""
    n = len(p)
    span = float(frames[-1] - frames[0]) or 1.0
    t = (frames - frames[0]) / span
    cos, sin = np.cos(a), np.sin(a)
    A = np.zeros((2 * n, 6))
    A[0::2, 0] = 1.0
    A[1::2, 1] = 1.0
    A[0::2, 2], A[0::2, 3] = cos, -sin
    A[1::2, 2], A[1::2, 3] = sin, cos
    A[0::2, 4] = t
    A[1::2, 5] = t
    sol, *_ = np.linalg.lstsq(A, p.reshape(-1), rcond=None)
    r = p.reshape(-1) - A @ sol
    dof = max(1, 2 * n - 6)
    try:
        cov = float(r @ r) / dof * np.linalg.inv(A.T @ A)
    except np.linalg.LinAlgError:
        return float(np.hypot(sol[4], sol[5])), math.inf
    sd = math.sqrt(max(0.0, float(cov[4, 4] + cov[5, 5]) / 2.0))
    return float(np.hypot(sol[4], sol[5])), sd


def stays(samples: Sequence[TagSample], jump_in: float = JUMP_IN) -> list[list[TagSample]]:
    """The samples split where the tag's centre jumped by `jump_in` or more (lifted and put down elsewhere)."""
    out: list[list[TagSample]] = []
    for s in samples:
        if out and math.hypot(s.x - out[-1][-1].x, s.y - out[-1][-1].y) < jump_in:
            out[-1].append(s)
        else:
            out.append([s])
    return out


def fit_mount(samples: Sequence[TagSample], tag: int, name: str | None = None,
              min_turn_deg: float = MIN_TURN_DEG) -> MountFit:
    """The mount of `tag` from its samples (in time order) while its base turned on the spot.

    Raises TooLittleTurn when the turn is under `min_turn_deg` or under MIN_SAMPLES frames saw it, BaseMoved
    when the centre drifted (the base slid) or the frames scatter off any circle. `name` words the messages
    (default "Tag <id>").
    """
    who = name or f"Tag {tag}"
    if not samples:
        raise TooLittleTurn(f"{who} was not seen; turn its base on the spot where the camera sees its tag.")
    runs = stays(samples)
    run = max(runs, key=lambda r: (turned_deg([s.yaw_deg for s in r]), len(r)))
    turn = turned_deg([s.yaw_deg for s in run])
    if turn < min_turn_deg:
        raise TooLittleTurn(f"{who} turned only {math.floor(turn)} deg; turn its base on the spot by {min_turn_deg:.0f} deg "
                            "or more (a quarter turn is plenty) while the camera sees its tag.")
    if len(run) < MIN_SAMPLES:
        raise TooLittleTurn(f"{who} was seen in only {len(run)} frames while it turned; turn it more slowly (at "
                            f"least {MIN_SAMPLES} frames) where the camera sees its tag.")
    p = np.array([[s.x, s.y] for s in run], dtype=np.float64)
    a = np.unwrap(np.radians(np.array([s.yaw_deg for s in run], dtype=np.float64)))
    keep = np.ones(len(run), dtype=bool)
    c, o, res = _solve(p, a)
    dist = np.linalg.norm(res, axis=1)
    far = dist > max(OUTLIER_IN, 4.0 * float(np.median(dist)))
    if 0 < far.sum() <= max(1, len(run) // 10) and len(run) - far.sum() >= MIN_SAMPLES:
        keep = ~far
        c, o, res = _solve(p[keep], a[keep])
        dist = np.linalg.norm(res, axis=1)
    used = [s for s, k in zip(run, keep, strict=True) if k]
    turn = turned_deg([s.yaw_deg for s in used])
    drift, drift_sd = _drift(p[keep], a[keep], np.array([s.frame for s in used], dtype=np.float64))
    rms = float(np.sqrt(np.mean(dist**2)))
    if drift > MAX_DRIFT_IN and drift > 3.0 * drift_sd:
        raise BaseMoved(f"{who}'s base moved {drift:.2f}\" while it turned, instead of turning on the spot; hold it "
                        "flat on the table, turn it about its own centre without sliding it, and measure again.")
    if rms > MAX_RESIDUAL_IN:
        raise BaseMoved(f"{who} did not trace a steady circle as its base turned (the frames scatter {rms:.2f}\" about "
                        "it); hold the base flat on the table, turn it slowly on the spot, and measure again.")
    return MountFit(
        tag=tag,
        offset_in=(float(o[0]), float(o[1])),
        centre_in=(float(c[0]), float(c[1])),
        turned_deg=turn,
        residual_in=rms,
        drift_in=drift,
        samples=len(used),
        frames=(used[0].frame, used[-1].frame),
    )


@dataclass(frozen=True)
class MountProgress:
    """Where one tag's measurement stands: for the wizard's live view."""

    tag: int
    samples: int
    turned_deg: float
    fit: MountFit | None = None
    message: str = ""
    """Why there is no fit yet (too little turn, the base moved), in the player's words; "" with a fit."""


@dataclass
class MountSurvey:
    """Tag samples gathered frame by frame (the wizard's live measurement); `progress()` fits each tag so far.

    Keeps at most `max_samples` per tag (the newest), one per frame, and forgets a tag's earlier samples when
    it jumps (a base lifted and put down elsewhere starts its turn again). `key` names what the samples were
    measured with (e.g. the calibration): `add` with another key starts afresh."""

    max_samples: int = 900
    samples: dict[int, list[TagSample]] = field(default_factory=dict)
    last_frame: int | None = None
    key: object = None
    looks: int = 0
    """Frames added so far: each sample is stamped with this count (time order even when a source loops)."""

    def add(self, frame: int, measured: Iterable[tuple[int, TagSample]], key: object = None) -> bool:
        """Add one frame's samples (tag id, sample); False when that frame was the last one added. A smaller frame
        number is a source that started again (a looped recording): its frames are new ones."""
        if key is not self.key:
            self.reset()
            self.key = key
        if frame == self.last_frame:
            return False
        self.last_frame = frame
        self.looks += 1
        for tag, one in measured:
            s = TagSample(self.looks, one.x, one.y, one.yaw_deg)
            got = self.samples.setdefault(tag, [])
            if got and math.hypot(s.x - got[-1].x, s.y - got[-1].y) >= JUMP_IN:
                got.clear()
            got.append(s)
            if len(got) > self.max_samples:
                del got[: len(got) - self.max_samples]
        return True

    def reset(self) -> None:
        self.samples.clear()
        self.last_frame = None
        self.looks = 0

    def progress(self, tags: Iterable[int], names: Mapping[int, str] | None = None) -> list[MountProgress]:
        """Each of `tags` (in that order): samples, degrees turned, and its fit or why there is none yet."""
        out: list[MountProgress] = []
        for tag in tags:
            got = self.samples.get(tag, [])
            turn = turned_deg([s.yaw_deg for s in got])
            try:
                fit = fit_mount(got, tag, (names or {}).get(tag))
            except MountFitError as err:
                out.append(MountProgress(tag, len(got), turn, None, str(err)))
                continue
            out.append(MountProgress(tag, len(got), turn, fit))
        return out
