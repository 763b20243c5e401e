"""A new game set up from nothing on the new-game page (/setup), for each of the five games, in real headless
Chromium on a running server replaying the bundled rendered session: the game chosen, its board (a standard one,
edited cell by cell, its hex size fitted to the pieces) or its play area, the sides renamed, every tag put on a
topper in one step, an option changed; saved (the server asks before a new game replaces the one in progress);
then the live page's Declare panel rules the game's first action. The saved roster's numbers and the verdict's
words are checked. Screenshots of each step go to /tmp/tablesight-new-game-<game>-<step>.png."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM
from tests.chromium import checked_page, chromium
from tests.webui_server import SAME_ORIGIN, running_server, session_settings
from tests.webui_session import make_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]
SHOTS = Path("/tmp")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, Path]]:
    """The rendered session played once (it stays on its last frame, so a declaration is ruled at once), no roster
    saved: ruled as Valknut, the game it was recorded for."""
    root = tmp_path_factory.mktemp("new-game")
    make_session(root / "table1")
    setup = tmp_path_factory.mktemp("setup")
    with running_server(session_settings(root / "table1", root, setup, game="valknut")) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        deadline = time.monotonic() + 60
        while app.state.runtime.live.status().status != "ended":
            assert time.monotonic() < deadline, app.state.runtime.live.status()
            time.sleep(0.1)
        yield url, app, setup


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with checked_page(browser, viewport={"width": 1400, "height": 1000}, accept_downloads=True) as pg:
        yield pg


def shot(page: Any, game: str, step: str) -> None:
    page.screenshot(path=str(SHOTS / f"tablesight-new-game-{game}-{step}.png"))


def choose(page: Any, url: str, game: str) -> None:
    page.goto(url + "/setup")
    page.wait_for_selector("body[data-ready='1']", timeout=20000)
    page.check(f"input[name=game][value={game}]")
    page.wait_for_function(f"document.querySelector('.game-choice.on input').value === '{game}'")
    shot(page, game, "1-game")


def mount_toppers(page: Any, game: str, units: int) -> None:
    page.select_option("#mount", "topper")
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes(\"Every unit's tag is on a topper\")",
                           timeout=10000)
    assert page.text_content("#mount-msg") == (
        f"Every unit's tag is on a topper: {units} units filled in as the tag sheet prints them.")
    heights = page.eval_on_selector_all("#units input[data-key=base_height_in]", "els => els.map((e) => e.value)")
    assert heights == ["1.85"] * units


def rename(page: Any, side: str, to: str) -> None:
    page.fill(f"#sides input[data-side='{side}']", to)
    page.press(f"#sides input[data-side='{side}']", "Tab")
    page.wait_for_selector(f"#sides input[data-side='{to}']")


def save(page: Any, app: Any, setup_dir: Path, game: str) -> dict[str, Any]:
    """Save; when a game is in progress the page asks, and the new game is started. Returns the roster saved."""
    shot(page, game, "4-before-save")
    page.click("#save")
    page.wait_for_function("/Saved|new game/.test(document.getElementById('save-msg').textContent)", timeout=20000)
    if page.locator("#restart-save").count():  # the setup would restart the game, or it carries the game on
        said = str(page.text_content("#save-msg"))
        assert "starts a new game" in said or "in progress goes on" in said, said
        page.click("#restart-save")
        page.wait_for_function("/^Saved.*has started/.test(document.getElementById('save-msg').textContent)",
                               timeout=20000)
    msg = str(page.text_content("#save-msg"))
    assert msg.startswith("Saved: ") and "has started" in msg, msg
    shot(page, game, "5-saved")
    assert app.state.runtime.setup.game == game
    saved: dict[str, Any] = json.loads((setup_dir / "roster.json").read_text())
    assert saved["game"] == game
    return saved


def ruled_state(app: Any, game: str, check: Any) -> Any:
    """The live game's state once the loop has rebuilt its pipeline for `game`, that pipeline has ruled the frame
    shown (a restart's pipeline is made, then the shown frame is sought through another one, warmed up on the
    frames before it) and `check(state)` holds."""
    deadline = time.monotonic() + 30
    while True:
        loop = app.state.runtime.live
        pipe = loop.pipeline
        state = getattr(pipe, "state", None)
        if pipe is not None and pipe.game is not None and pipe.game.name == game and state is not None \
                and getattr(pipe, "frame", -1) == loop.status().frame_index and check(state):
            return state
        assert time.monotonic() < deadline, (game, getattr(pipe, "game_status", None), state)
        time.sleep(0.1)


def first_ruling(page: Any, url: str, game: str, kind: str) -> tuple[str, str]:
    """On the live page, the Declare panel's first action of `kind` clicked: (its outcome, the verdict's words).
    First the new game settles: the loop rules the shown frame once its pipeline is rebuilt (a Vigtavl ship the
    camera sees on the sea is placed), so the actions are read until two reads half a second apart agree."""
    before = None
    deadline = time.monotonic() + 30
    while (now := httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()) != before:
        assert time.monotonic() < deadline
        before = now
        time.sleep(0.5)
    page.goto(url + "/")
    button = page.locator(f"#declare-actions button[data-kind='{kind}']").first
    fold = page.locator(f"#declare-actions .declare-group[data-kind='{kind}'] details.declare-fold")
    page.wait_for_function(f"document.querySelector(\"#declare-actions [data-kind='{kind}']\")", timeout=30000)
    if fold.count() and not button.is_visible():
        fold.locator("summary").click()
    label = str(page.evaluate(f"""() => {{  // read and clicked in one go: a frame may change the list between calls
        const b = document.querySelector("#declare-actions button[data-kind='{kind}']");
        const text = b.textContent; b.click(); return text; }}"""))
    page.wait_for_function("document.getElementById('declare-result').dataset.outcome", timeout=30000)
    shot(page, game, "6-ruled")
    text = str(page.text_content("#declare-result"))
    assert label in text
    return str(page.get_attribute("#declare-result", "data-outcome")), text


def test_vigtavl_from_nothing(server: tuple[str, Any, Path], page: Any) -> None:
    url, app, setup_dir = server
    choose(page, url, "vigtavl")
    assert page.input_value("#board-choice") == "vigtavl_2p"
    # 3 units and a development on 25 mm bases need 1.45" hexes: the example map's 1" ones are made larger
    assert page.input_value("#hex-size") == "1.45"
    page.wait_for_function("document.getElementById('fit-note').textContent.includes('4 pieces')")
    assert page.text_content("#fit-note") == ('A cell of this game holds up to 4 pieces on 25 mm bases: they fit a '
                                              '1.45" hex (1.45" is the least that holds them).')
    assert "91 cells" in str(page.text_content("#board-size"))
    # a land cell made a mountain, a sea cell added at the rim, then the corner cell [5, -5] removed
    page.click("#board-svg polygon.cell[data-hex='-1,0']")
    assert page.get_attribute("#board-svg polygon.cell[data-hex='-1,0']", "data-kind") == "Mountain"
    page.click("#board-tools button[data-tool=rim]")
    page.click("#board-svg polygon.ghost[data-hex='6,-1']")
    page.click("#board-svg polygon.cell[data-hex='5,-5']")
    assert page.input_value("#board-choice") == ""  # the board is now this page's own
    page.click("#board-svg polygon.cell[data-hex='0,0']")  # inside: no hole may be made
    assert "rim" in str(page.text_content("#board-error"))
    page.wait_for_function("document.getElementById('board-size').textContent.includes('91 cells')")
    shot(page, "vigtavl", "2-board")
    rename(page, "red", "Jarl Ulf")
    page.select_option("#mount", "rim")  # a 25 mm base has no room beside the feet: said under the mount
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('25 mm base')", timeout=10000)
    text = str(page.text_content("#mount-msg"))
    assert "print toppers instead" in text and "--" not in text, text
    mount_toppers(page, "vigtavl", 24)
    page.select_option("#opt-winds", "counter-clockwise")
    shot(page, "vigtavl", "3-armies")
    saved = save(page, app, setup_dir, "vigtavl")
    assert saved["board"]["layout"]["size_in"] == 1.45 and saved["winds"] == "counter-clockwise"
    cells = {tuple(c["hex"]): c["terrain"] for c in saved["board"]["cells"]}
    assert len(cells) == 91 and cells[(-1, 0)] == "mountain" and cells[(6, -1)] == "sea" and (5, -5) not in cells
    assert {u["owner"] for u in saved["units"]} == {"Jarl Ulf", "blue"}
    assert {(u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(1.85, 0.7)}
    ruled_state(app, "vigtavl", lambda st: st.winds == "counter-clockwise")
    outcome, text = first_ruling(page, url, "vigtavl", "place")
    # the rendered session's bases stand where the camera saw them: whichever side's turn it is places a caravel
    assert outcome == "legal" and "place caravel" in text and "placed on sea hex" in text, text


def test_hex_skirmish_from_nothing(server: tuple[str, Any, Path], page: Any) -> None:
    url, app, setup_dir = server
    choose(page, url, "hex_skirmish")
    assert page.input_value("#hex-size") == "1"  # one figure on a 25 mm base fits a 1" hex
    page.click("#board-svg polygon.cell[data-hex='0,2']")  # ground -> a hill 1 level high
    page.click("#board-svg polygon.cell[data-hex='0,2']")  # -> 2 levels
    assert page.get_attribute("#board-svg polygon.cell[data-hex='0,2']", "data-kind") == "Hill, 2 levels"
    page.fill("#hex-size", "1.25")
    page.press("#hex-size", "Tab")
    page.wait_for_function("document.getElementById('fit-note').textContent.includes('1.25\" hex')")
    rename(page, "blue", "Azure")
    page.fill("#units tbody tr[data-index='1'] input[data-key=profile]", "Stone Giant")  # its army card with it
    page.press("#units tbody tr[data-index='1'] input[data-key=profile]", "Tab")
    row = "#units tbody tr[data-index='1']"
    tag = page.input_value(f"{row} input[data-key=tag]")
    assert page.input_value(f"{row} input[data-key=name]") == ""  # unnamed: called by its new card and its tag
    assert page.get_attribute(f"{row} input[data-key=name]", "placeholder") == f"Stone Giant {tag}"
    mount_toppers(page, "hex_skirmish", 4)
    page.select_option("#opt-options-climb_cost", "step_plus_levels")
    page.uncheck("#opt-options-engagement_stops")
    page.check("#roll-for-us")  # this table lets Tablesight roll the initiative d20s (off by default)
    saved = save(page, app, setup_dir, "hex_skirmish")
    assert saved["roll_for_us"] is True
    assert saved["board"]["layout"]["size_in"] == 1.25
    cells = {tuple(c["hex"]): c for c in saved["board"]["cells"]}
    assert cells[(0, 2)] == {"hex": [0, 2], "terrain": "land", "elevation": 2} and cells[(0, 0)]["terrain"] == "water"
    assert saved["options"] == {"climb_cost": "step_plus_levels", "engagement_stops": False, "line_of_sight": "terrain"}
    assert [u["owner"] for u in saved["units"]] == ["red", "red", "Azure", "Azure"]
    assert [(u["profile"], u["card"]) for u in saved["units"]][1] == ("Stone Giant", "Stone Giant")
    ruled_state(app, "hex_skirmish", lambda st: (st.options.climb_cost, st.options.engagement_stops) == (
        "step_plus_levels", False))
    outcome, text = first_ruling(page, url, "hex_skirmish", "initiative")
    assert outcome == "legal" and "Roll the d20 for Initiative" in text and "Round 1 initiative: " in text, text
    assert "Azure" in text, text


OWNED_CELLS = """(() => {  // [owner, its colour, the camera canvas's RGBA round the middle of a cell's first edge]
  const msg = window.tablesight.msg, c = document.getElementById("camera");
  if (!msg || !c.dataset.imageWidth) return [];
  const kx = c.width / Number(c.dataset.imageWidth), ky = c.height / Number(c.dataset.imageHeight);
  return (msg.image_shapes || []).filter((s) => s.s === "hex-highlight" && s.o && msg.owners[s.o]).map((s) => {
    const [a, b] = s.p, x = Math.round((a[0] + b[0]) / 2 * kx), y = Math.round((a[1] + b[1]) / 2 * ky);
    return [s.o, msg.owners[s.o], [...c.getContext("2d").getImageData(x - 3, y - 3, 7, 7).data]];
  });
})()"""
"""The Lead cells as the camera's canvas drew them."""


def test_magni_from_nothing(server: tuple[str, Any, Path], page: Any) -> None:
    url, app, setup_dir = server
    choose(page, url, "magni")
    assert page.input_value("#board-choice") == "magni_19" and page.input_value("#hex-size") == "1.5"
    assert not page.is_visible("#board-tools")  # the 19-cell board is fixed: only its size changes
    assert "only the hex size changes" in str(page.text_content("#board-fixed"))
    page.fill("#hex-size", "1.4")
    page.press("#hex-size", "Tab")
    page.wait_for_function("document.getElementById('fit-note').textContent.includes('do not fit')")
    assert "1.5\" is the least" in str(page.text_content("#fit-note"))
    page.click("#use-proposed")
    page.wait_for_function("document.getElementById('hex-size').value === '1.5'")
    assert page.input_value("#mount") == "flat"  # heroes are tiles: no figure, the tag flat on the tile
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('20 units')", timeout=10000)
    assert page.text_content("#mount-msg") == "Every unit's tag is on the base: 20 units filled in as the tag sheet prints them."
    page.select_option("#opt-options-lead_tie", "reselect")
    # each hero's Rating and attack values are the players' own: a column each, with the rule book's meaning
    heads = page.eval_on_selector_all("#units thead th.unit-field", "els => els.map((e) => [e.textContent, e.title])")
    assert [h for h, _ in heads] == ["Rating", "LAV", "CAV", "RAV"] and "NW and SW" in heads[1][1]
    first = "#units tbody tr:nth-child(1) "
    assert [page.input_value(first + f"input[data-key={k}]") for k in ("rating", "lav", "cav", "rav")] == [
        "4", "3", "6", "2"]  # Ember Warden, as the example team has it
    assert "Rating: red 23, blue 23 (at most 23 a side)" in str(page.text_content("#unit-count"))
    page.fill(first + "input[data-key=rating]", "")  # left empty: the page says so under the hero and saves nothing
    page.press(first + "input[data-key=rating]", "Tab")
    page.click("#save")
    page.wait_for_selector("#units tr.row-error")
    assert str(page.text_content("#units tr.row-error")).startswith(
        "Unit 1 (Ember Warden) needs its Rating, a whole number from 1 to 4:")
    assert "Nothing was saved" in str(page.text_content("#save-msg"))
    assert "red 19, blue 23" in str(page.text_content("#unit-count"))
    page.fill(first + "input[data-key=rating]", "4")
    page.press(first + "input[data-key=rating]", "Tab")
    page.fill(first + "input[data-key=cav]", "7")  # a stronger centre: the Lead fight is won by more
    page.press(first + "input[data-key=cav]", "Tab")
    second = "#units tbody tr:nth-child(2) input[data-key=rating]"
    page.fill(second, "2")  # Ash Scout 1 -> 2: red's team rated 24 may not play
    page.press(second, "Tab")
    assert "red 24, blue 23 (at most 23 a side; red is over)" in str(page.text_content("#unit-count"))
    page.fill(second, "1")
    page.press(second, "Tab")
    saved = save(page, app, setup_dir, "magni")
    assert saved["board"]["layout"] == {"size_in": 1.5, "orientation": "flat", "origin": [15, 11], "rotation_deg": 0}
    assert len(saved["board"]["cells"]) == 19 and saved["options"] == {"lead_tie": "reselect"}
    assert {(u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(0.125, 1.35)}
    assert saved["roll_for_us"] is False  # the hex game saved before ticked "Roll for us"; a new game starts unticked
    warden = saved["units"][0]
    assert (warden["name"], warden["rating"], warden["lav"], warden["cav"], warden["rav"]) == (
        "Ember Warden", 4, 3, 7, 2)
    ruled_state(app, "magni", lambda st: st.lead_tie == "reselect")
    outcome, text = first_ruling(page, url, "magni", "lead")
    assert outcome == "legal" and "Ember Warden takes the centre (CAV 7 beats 5); red is Player 1" in text, text
    # each Lead unit's cell is outlined in its side's colour on the camera's picture too (it was yellow there)
    page.wait_for_function(OWNED_CELLS + ".length === 2", timeout=20000)
    drawn = {o: (colour, px) for o, colour, px in page.evaluate(OWNED_CELLS)}
    for owner, (colour, px) in drawn.items():
        want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        near = min(sum((a - b) ** 2 for a, b in zip(px[i:i + 3], want)) ** 0.5 for i in range(0, len(px), 4))
        yellow = min(sum((a - b) ** 2 for a, b in zip(px[i:i + 3], (0xFF, 0xD3, 0x2A))) ** 0.5 for i in range(0, len(px), 4))
        assert near < 40 and yellow > 120, (owner, colour, near, yellow)
    assert set(drawn) == {"red", "blue"}
    # red places next: 9 heroes on 17 free cells is a long list; words typed in its box narrow it
    acts = httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()
    place = next(g for g in acts["groups"] if g["kind"] == "place")
    scout = [a["label"] for a in place["actions"] if "Ash Scout" in a["label"]]
    assert len(place["actions"]) > 8 and 0 < len(scout) < len(place["actions"])
    fold = "#declare-actions .declare-group[data-kind='place'] details.declare-fold"
    page.click(fold + " summary")
    page.fill(fold + " input.declare-find", "ash SCOUT")
    shown = f"[...document.querySelectorAll(\"{fold} button\")].filter((b) => !b.hidden).map((b) => b.textContent)"
    assert page.evaluate(shown) == scout
    page.fill(fold + " input.declare-find", f"ash scout {scout[0].split('[')[1].split(']')[0]}")
    assert page.evaluate(shown) == scout[:1]
    shot(page, "magni", "7-find")


def test_valknut_from_nothing(server: tuple[str, Any, Path], page: Any) -> None:
    url, app, setup_dir = server
    choose(page, url, "valknut")
    assert page.is_visible("#open-table") and not page.is_visible("#hex-table")
    # the Battlefield is 22" x 30", either way round: offered as such, not as two free numbers
    assert page.is_visible("#board-area") and not page.is_visible("#board-w")
    assert page.eval_on_selector_all("#board-area option", "os => os.map((o) => o.textContent)") == [
        '30" × 22"', '22" × 30"']
    page.select_option("#board-area", "22x30")
    assert page.text_content("#open-note") == 'The table is calibrated for 30" × 22": calibrate it again for 22" × 30" before playing.'
    assert page.get_attribute("#open-table a", "href") == "/terrain"
    page.fill("#opt-options-turn_limit", "0")
    page.click("#save")
    page.wait_for_function("document.getElementById('opt-options-turn_limit-error').textContent.length > 0")
    assert page.text_content("#opt-options-turn_limit-error") == "Turn limit must be a whole number from 1 to 20."
    assert page.text_content("#save-msg") == "Nothing was saved: fix what is said above."
    # the second unit's name: the example's, or the running game's when Valknut is already on the table (run alone)
    name = page.input_value("#units tbody tr[data-index='1'] input[data-key=name]")
    page.fill("#units tbody tr[data-index='1'] input[data-key=tag]", "10")  # a tag twice: said under its row
    page.click("#save")
    page.wait_for_selector("#units tr.row-error")
    assert name and page.text_content("#units tr.row-error") == (
        f"Unit 2 ({name}) has tag 10, like unit 1; every base needs its own tag.")
    page.fill("#units tbody tr[data-index='1'] input[data-key=tag]", "11")
    page.fill("#opt-options-turn_limit", "4")
    page.fill("#opt-options-target", "2")
    page.select_option("#opt-options-activation", "player_turns")
    rename(page, "red", "Wolves")
    mount_toppers(page, "valknut", 10)
    saved = save(page, app, setup_dir, "valknut")
    assert saved["options"]["turn_limit"] == 4 and saved["options"]["target"] == 2
    assert saved["options"]["activation"] == "player_turns" and saved["board"] == {"width_in": 22, "depth_in": 30}
    ruled_state(app, "valknut", lambda st: (st.options.turn_limit, st.options.target, st.options.activation) == (
        4, 2, "player_turns"))
    outcome, text = first_ruling(page, url, "valknut", "place_stockpile")
    assert outcome == "legal" and "Wolves: place a Runic Stockpile" in text and "places a Runic Stockpile" in text, text


def test_a_rematch_is_a_new_game_only_when_asked(server: tuple[str, Any, Path], page: Any) -> None:
    """The New game page opened on the setup in use and saved as it is: the game in progress goes on (the page
    says so), and offers a new game instead; taken, the same armies start afresh (their stockpiles to place)."""
    url, app, setup_dir = server
    choose(page, url, "valknut")
    mount_toppers(page, "valknut", 10)
    old = app.state.runtime.live.pipeline
    save(page, app, setup_dir, "valknut")  # a new game (the one on the table was asked to start afresh)
    placed = len(ruled_state(app, "valknut", lambda st: app.state.runtime.live.pipeline is not old).stockpiles)
    outcome, _text = first_ruling(page, url, "valknut", "place_stockpile")
    assert outcome == "legal" and len(app.state.runtime.live.pipeline.state.stockpiles) == placed + 1
    page.goto(url + "/setup")
    page.wait_for_selector("body[data-ready='1']", timeout=20000)
    page.click("#save")
    page.wait_for_function("document.getElementById('save-msg').textContent.startsWith('Saved')", timeout=20000)
    msg = str(page.text_content("#save-msg"))
    assert "The game of Valknut: Skirmish Game in progress goes on with it." in msg and "has started" not in msg, msg
    assert page.text_content("#restart-save") == "Start a new game instead"
    page.locator("#save-msg").scroll_into_view_if_needed()
    shot(page, "valknut", "7-goes-on")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the offer stays in reach
    page.locator("#restart-save").scroll_into_view_if_needed()
    assert page.locator("#restart-save").is_visible()
    shot(page, "valknut", "7-goes-on-phone")
    page.set_viewport_size({"width": 1400, "height": 1000})
    ruled_state(app, "valknut", lambda st: len(st.stockpiles) == placed + 1)  # the very game, its stockpiles
    page.click("#restart-save")
    page.wait_for_function("document.getElementById('save-msg').textContent.includes('has started')", timeout=20000)
    assert "A new game of Valknut: Skirmish Game has started." in str(page.text_content("#save-msg"))
    assert not page.locator("#restart-save").count()
    ruled_state(app, "valknut", lambda st: st.stockpiles == ())  # the same armies, afresh


def test_valyr_from_nothing(server: tuple[str, Any, Path], page: Any) -> None:
    url, app, setup_dir = server
    choose(page, url, "valyr")
    page.fill("#board-w", "36")
    page.fill("#board-d", "24")
    rename(page, "blue", "Gold")
    mount_toppers(page, "valyr", 4)
    page.fill("#opt-appraisal_limit", "60")
    page.select_option("#opt-priority", "red")  # not the army appraised lowest, which the rules would choose
    # a unit named as its profile and tag ("Scout 20") is renamed with its new tag; a name of the players' own stays
    scout = "#units tbody tr:nth-child(3) "
    assert page.input_value(scout + "input[data-key=name]") == "Scout 20"
    page.fill(scout + "input[data-key=tag]", "27")
    page.press(scout + "input[data-key=tag]", "Tab")
    assert page.input_value(scout + "input[data-key=name]") == "Scout 27"
    page.fill(scout + "input[data-key=name]", "Swift")
    page.press(scout + "input[data-key=name]", "Tab")
    page.fill(scout + "input[data-key=tag]", "20")
    page.press(scout + "input[data-key=tag]", "Tab")
    assert page.input_value(scout + "input[data-key=name]") == "Swift"
    page.fill(scout + "input[data-key=name]", "Scout 20")
    page.press(scout + "input[data-key=name]", "Tab")
    saved = save(page, app, setup_dir, "valyr")
    assert saved["board"] == {"width_in": 36, "depth_in": 24} and saved["appraisal_limit"] == 60
    assert saved["players"] == ["red", "Gold"] and saved["priority"] == "red"
    assert {(u["base_mm"], u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(32, 1.85, 0.7),
                                                                                           (25, 1.85, 0.7)}
    ruled_state(app, "valyr", lambda st: (st.appraisal_limit, st.priority) == (60, "red"))
    outcome, text = first_ruling(page, url, "valyr", "start_round")
    assert outcome == "legal" and "red holds the priority token and plays first" in text, text
    assert "Gold's army is appraised at 35, within the agreed 60" in text, text


def test_a_setup_and_a_board_go_out_and_come_back_as_files(server: tuple[str, Any, Path], page: Any,
                                                          tmp_path: Path) -> None:
    url, _app, _setup_dir = server
    choose(page, url, "hex_skirmish")
    page.click("#board-svg polygon.cell[data-hex='1,1']")  # ground -> a 1-level hill
    page.select_option("#opt-options-line_of_sight", "none")
    with page.expect_download() as got:
        page.click("#setup-download")
    setup = json.loads(Path(got.value.path()).read_text())
    assert got.value.suggested_filename == "hex_skirmish-setup.json"
    assert setup["game"] == "hex_skirmish" and setup["options"]["line_of_sight"] == "none"
    assert {"hex": [1, 1], "terrain": "land", "elevation": 1} in setup["board"]["cells"] and len(setup["cards"]) == 4
    with page.expect_download() as got:
        page.click("#board-download")
    board = json.loads(Path(got.value.path()).read_text())
    assert board == setup["board"]
    # another game, then the file loaded back: the game, its board, its army and options as they were
    page.check("input[name=game][value=valknut]")
    page.set_input_files("#setup-file", _file(tmp_path / "mine.json", setup))
    page.wait_for_function("document.getElementById('setup-file-msg').textContent.startsWith('Loaded')")
    assert page.text_content("#setup-file-msg") == "Loaded mine.json: 4 units for Hex Skirmish."
    assert page.input_value("#opt-options-line_of_sight") == "none"
    assert page.get_attribute("#board-svg polygon.cell[data-hex='1,1']", "data-kind") == "Hill, 1 level"
    assert page.input_value("#board-choice") == ""  # drawn on this page, not the standard one
    # a board file on its own: a 2-cell board drawn as it is
    page.set_input_files("#board-file", _file(tmp_path / "tiny.json", {
        "layout": {"size_in": 1.0, "orientation": "pointy"}, "cells": [{"hex": [0, 0]}, {"hex": [1, 0], "terrain": "water"}]}))
    page.wait_for_function("document.getElementById('board-error').textContent.startsWith('Loaded')")
    assert page.text_content("#board-error") == "Loaded tiny.json: 2 cells."
    assert page.locator("#board-svg polygon.cell").count() == 2
    # files that are not what they say: one sentence each, nothing on the page lost
    page.set_input_files("#setup-file", _file(tmp_path / "notes.json", {"hello": 1}))
    page.wait_for_function("document.getElementById('setup-file-msg').textContent.includes('not a setup file')")
    assert "notes.json is not a setup file" in str(page.text_content("#setup-file-msg"))
    page.set_input_files("#board-file", _file(tmp_path / "broken.json", "{"))
    page.wait_for_function("document.getElementById('board-error').textContent.includes('not readable JSON')")
    assert page.locator("#board-svg polygon.cell").count() == 2


def _file(path: Path, obj: Any) -> str:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def test_a_side_left_without_a_name_keeps_its_name_and_says_so_beside_it(server: tuple[str, Any, Path],
                                                                          page: Any) -> None:
    """Clearing a side's name put the old name back with the message far below, under the units table."""
    url, _app, _setup = server
    choose(page, url, "valknut")
    first = page.get_attribute("#sides input >> nth=0", "data-side")
    page.fill(f"#sides input[data-side='{first}']", "")
    page.press(f"#sides input[data-side='{first}']", "Tab")
    page.wait_for_function("document.getElementById('sides-error').textContent !== ''", timeout=10000)
    assert page.text_content("#sides-error") == (f"A side needs a name, so it is still {first}; type another name to "
                                                 "rename it.")
    assert page.input_value(f"#sides input[data-side='{first}']") == first
    assert page.text_content("#units-error") == ""
    rename(page, str(first), "Crimson")  # a name given clears the message
    assert page.text_content("#sides-error") == ""
