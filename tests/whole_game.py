"""Whole games for the browser tests: the real server with a phone as its camera, fed rendered frames one by one.

The test is the phone: it opens the server's own /ws/camera WebSocket (the route the /camera page streams on) and
sends each frame as a JPEG, waiting for the server's "measured" answer before the next, so no frame is skipped and
the live loop has ruled each one when `PhoneStream.show` returns. Frames are drawn by the project's renderer
(vision/synth/render.py) from the bases the test puts on the table (`RenderedTable`): the table is calibrated from
an empty table's frame through the calibration route, the game set up on /setup in Chromium, its declarations made
with the live page's Declare buttons, and the game panel read off the page (`panel_on_page`).

Frames are stamped by their arrival, so a base must be shown for at least the tracker's SETTLE_S (0.3 s) in
SETTLE_FRAMES frames before it counts as put down: `show_until` sends the same picture at FRAME_GAP_S until the
rules' state says the table's change was ruled.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from session.settings import Settings
from tests.webui_server import SAME_ORIGIN, running_server
from vision.synth.figures import Figure, Topper
from vision.synth.render import BasePlacement, CameraPose, Scene, camera_framing_board, render_scene

SIZE = (1280, 720)
"""The phone's frame, px: 720p keeps a frame's render and measure short."""
FRAME_GAP_S = 0.08
"""At least this long between two frames sent: five frames of a base put down then span the tracker's 0.3 s."""
JPEG_QUALITY = 90


class PhoneStream:
    """The test as the phone: JPEG frames on /ws/camera, each answered once the live loop has measured it."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seq = 0
        self.sent_at = 0.0

    def show(self, jpeg: bytes, timeout: float = 20.0) -> dict[str, Any]:
        """Send one frame; returns the server's "measured" message for it (anchors found, loop status)."""
        wait = self.sent_at + FRAME_GAP_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        seq, self.seq = self.seq, self.seq + 1
        self.ws.send(jpeg)
        self.sent_at = time.monotonic()
        end = self.sent_at + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the server did not measure frame {seq} within {timeout} s")
            msg = json.loads(self.ws.recv(timeout=left))
            if msg.get("type") == "measured" and msg.get("seq") == seq:
                return dict(msg)
            if msg.get("type") in ("refused", "replaced"):
                raise AssertionError(f"frame {seq} refused: {msg}")



@dataclass
class RenderedTable:
    """A calibrated board seen from above by a camera framing it; `jpeg(bases)` draws the table with those bases."""

    board: tuple[float, float]
    pose: CameraPose
    frames_drawn: int = 0

    @classmethod
    def over(cls, board: tuple[float, float], height_in: float = 30.0, tilt_deg: float = 10.0) -> RenderedTable:
        return cls(board, camera_framing_board(board, height_in=height_in, tilt_deg=tilt_deg, yaw_deg=0.0,
                                               image_size=SIZE))

    def image(self, bases: Sequence[BasePlacement]) -> np.ndarray:
        scene = Scene.at(self.pose, self.board, bases=tuple(bases), noise_sigma=1.0, supersample=2)
        self.frames_drawn += 1
        return render_scene(scene, np.random.default_rng(self.frames_drawn)).image

    def jpeg(self, bases: Sequence[BasePlacement]) -> bytes:
        ok, buf = cv2.imencode(".jpg", self.image(bases), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        assert ok
        return buf.tobytes()


SIDE_COLOURS = {"red": (45.0, 45.0, 170.0), "blue": (170.0, 80.0, 40.0)}
"""Base colours (BGR) by side; another side's bases are grey."""


def figure_on_topper(tag: int, xy: tuple[float, float], side: str, height_in: float = 1.3,
                     tunic: tuple[float, float, float] | None = None, base_mm: float = 25.0, tag_in: float = 0.7,
                     topper_in: float = 1.85) -> BasePlacement:
    """A miniature `height_in` tall on its base at `xy`, its tag (`tag_in` black) on a topper card `topper_in`
    above the table: what the setup page's topper mount writes in the roster (base_height_in 1.85, tag_in 0.7)."""
    colour = SIDE_COLOURS.get(side, (120.0, 120.0, 120.0))
    return BasePlacement(tag, xy[0], xy[1], z_in=0.125, yaw_deg=(tag * 37) % 360, tag_in=tag_in, base_mm=base_mm,
                         colour=colour, base_height_in=0.125,
                         figure=Figure(height_in=height_in, width_in=0.45, colour=tunic or colour),
                         topper=Topper(topper_in))


@dataclass
class WholeGame:
    """A running server whose camera is `phone`, and the table the test draws for it."""

    url: str
    app: Any
    phone: PhoneStream
    table: RenderedTable
    setup_dir: Path
    sessions_dir: Path

    @property
    def pipeline(self) -> Any:
        return self.app.state.runtime.live.pipeline

    def state(self) -> Any:
        """The rules' own state of the game being ruled now."""
        return getattr(self.pipeline, "state", None)

    def ruling(self, game: str) -> bool:
        """Whether the live loop rules `game` and has measured a frame for it (a declaration is ruled at once)."""
        pipe = self.pipeline
        return (pipe is not None and pipe.game is not None and pipe.game.name == game and pipe.state is not None
                and int(getattr(pipe, "frame", -1)) >= 0)

    def show_until(self, bases: Sequence[BasePlacement], ruled: Callable[[], bool], least: int = 1,
                   most: int = 40) -> int:
        """Show the table with `bases` (one render, sent again and again) until `ruled()` holds, at least `least`
        frames; returns the frames sent. Fails after `most` frames."""
        jpeg = self.table.jpeg(bases)
        for n in range(1, most + 1):
            self.phone.show(jpeg)
            if n >= least and ruled():
                return n
        raise AssertionError(f"not ruled after {most} frames: {self.app.state.runtime.live.status()}")

    def calibrate(self) -> dict[str, Any]:
        """The empty table shown, then calibrated from the newest live frame through the calibration route."""
        self.show_until([], lambda: True, least=3)
        w, d = self.table.board
        r = httpx.post(self.url + "/api/calibration/table", data={"board": f"{w:g}x{d:g}"}, headers=SAME_ORIGIN,
                       timeout=30)
        assert r.status_code == 200, r.text
        answer: dict[str, Any] = r.json()
        assert answer["ok"], answer
        return answer


@contextmanager
def whole_game_server(root: Path, board: tuple[float, float]) -> Iterator[WholeGame]:
    """A server with the phone as its camera (recording into root/sessions), the phone connected, the empty
    `board` calibrated from its frames."""
    setup_dir, sessions_dir = root / "setup", root / "sessions"
    settings = Settings(source_kind="phone", setup_dir=setup_dir, sessions_dir=sessions_dir)
    from websockets.sync.client import connect

    with running_server(settings) as (url, app), \
            connect(url.replace("http://", "ws://", 1) + "/ws/camera", proxy=None, max_size=None) as ws:
        game = WholeGame(url, app, PhoneStream(ws), RenderedTable.over(board), setup_dir, sessions_dir)
        game.calibrate()
        yield game


# ---------------------------------------------------------------------------------------------- the pages


def choose_game(page: Any, url: str, game: str) -> None:
    page.goto(url + "/setup")
    page.wait_for_selector("body[data-ready='1']", timeout=20000)
    page.check(f"input[name=game][value={game}]")
    page.wait_for_function(f"document.querySelector('.game-choice.on input').value === '{game}'")


def save_setup(page: Any, setup_dir: Path) -> dict[str, Any]:
    """Save the new-game page (starting the new game afresh when asked); returns the roster saved."""
    page.click("#save")
    page.wait_for_function("/Saved|new game/.test(document.getElementById('save-msg').textContent)", timeout=20000)
    if page.locator("#restart-save").count():
        page.click("#restart-save")
        page.wait_for_function("document.getElementById('save-msg').textContent.startsWith('Saved')", timeout=20000)
    msg = str(page.text_content("#save-msg"))
    assert msg.startswith("Saved: "), msg
    saved: dict[str, Any] = json.loads((setup_dir / "roster.json").read_text())
    return saved


def declare(page: Any, kind: str, label: str) -> tuple[str, str]:
    """Click the live page's Declare button of `kind` whose label is `label` (unfolding a long list);
    returns (outcome, the ruling's words)."""
    page.evaluate("document.getElementById('declare-result').dataset.outcome = ''")
    button = page.locator(f"#declare-actions button[data-kind='{kind}']", has_text=label).first
    button.wait_for(state="attached", timeout=30000)
    end = time.monotonic() + 30
    while True:  # the list is drawn again after each declaration and refresh, its long groups folded again
        page.evaluate("document.querySelectorAll('#declare-actions details.declare-fold').forEach((d) => { d.open = true; })")
        try:
            button.click(timeout=1500)
            break
        except PlaywrightTimeout:
            if time.monotonic() > end:
                raise
    page.wait_for_function("document.getElementById('declare-result').dataset.outcome", timeout=30000)
    return str(page.get_attribute("#declare-result", "data-outcome")), str(page.text_content("#declare-result"))


@dataclass(frozen=True)
class PanelOnPage:
    """The game panel as the page shows it."""

    headline: str
    score: dict[str, str]
    """Side -> the score row's words."""
    winner: str | None
    """The winner banner's text, None while it is hidden."""
    to_do: tuple[str, ...]
    units: dict[int, str] = field(default_factory=dict)
    """Unit tag -> its row's words ("HP 9 of 10, Armor 0, ... · left: ...")."""
    units_title: str = ""
    """The units table's title ("Units: 3 in play, 1 out of play")."""


def panel_on_page(page: Any) -> PanelOnPage:
    got = page.evaluate(
        """() => ({
            headline: document.getElementById('gp-headline').textContent,
            score: [...document.querySelectorAll('#gp-score .gp-score-row')].map(
                (r) => [r.dataset.side, r.querySelector('span:last-child').textContent]),
            winner: document.getElementById('gp-winner').hidden ? null : document.getElementById('gp-winner').textContent,
            to_do: [...document.querySelectorAll('#gp-todo li')].map((li) => li.textContent),
            units: [...document.querySelectorAll('#gp-unit-rows tr')].map(
                (tr) => [Number(tr.dataset.unit), tr.querySelector('td:last-child').textContent]),
            units_title: document.getElementById('gp-units-title').textContent,
        })""")
    return PanelOnPage(got["headline"], dict(got["score"]), got["winner"], tuple(got["to_do"]),
                       {int(t): w for t, w in got["units"]}, got["units_title"])


def wait_panel(page: Any, check: Callable[[PanelOnPage], bool], timeout: float = 10.0) -> PanelOnPage:
    """The page's game panel once `check` holds (it refreshes every 1.5 s)."""
    end = time.monotonic() + timeout
    while True:
        now = panel_on_page(page)
        if check(now):
            return now
        assert time.monotonic() < end, now
        time.sleep(0.2)


def sentence(text: str) -> str:
    """As the page's words.js `sentence` writes a line: its first letter capital."""
    return text[:1].upper() + text[1:]


def answer_dice(page: Any, rolls: Sequence[Sequence[int]]) -> str:
    """Answer the rolls the dice panel asks for, one after the other: each roll's faces tapped on its face buttons,
    then "Rule it"; returns the verdict the panel shows once the last is ruled."""
    for faces in rolls:
        page.wait_for_function("document.getElementById('dice').dataset.state === 'pending'", timeout=20000)
        pending = page.get_attribute("#dice", "data-pending")
        for f in faces:
            page.click(f"#dice-pad button[data-face='{f}']")
        page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{','.join(map(str, faces))}'")
        page.click("#dice-rule")
        page.wait_for_function(f"document.getElementById('dice').dataset.pending !== '{pending}'", timeout=20000)
    page.wait_for_function("document.getElementById('dice').dataset.state === 'ruled'", timeout=20000)
    return str(page.text_content("#dice-verdict"))
