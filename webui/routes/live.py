"""The live table: its page, the frame stream (WebSocket or MJPEG), selection, questions, the game chooser,
and the actions the camera cannot see (setup, paths, attacks, ending an activation), declared by the players."""

from __future__ import annotations

import json
import math
import threading
from collections import deque
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from rules.engine import Action, ActionError, Game, RulesInputError, game_names
from rules.roster import Roster
from session.ask import ask_about
from session.carry import game_title
from session.drivable import LoopNotReady, PipelineLike
from session.frame_publisher import picture_jpeg
from webui.deps import RuntimeDep, page
from webui.json_body import json_body
from webui.streaming import mjpeg_response, websocket_feed

router = APIRouter()

MAX_ACTIONS = 240
"""At most this many declarable actions are listed at once (every one a game offers to try, refused ones included:
Vigtavl's builds after a few rounds reach ~210; filter by unit, or click a place on the board, to see fewer)."""


def _not_bool(value: Any) -> Any:
    """JSON true/false is not a tag id (pydantic would take it for 1/0 and ask about unit 1)."""
    if isinstance(value, bool):
        raise PydanticCustomError("tag_id_bool", "a tag id is a whole number, not true or false")
    return value


TagId = Annotated[int, BeforeValidator(_not_bool)]
"""A unit's tag id in a request body: a whole number ("13" and 13.0 are taken as 13), never true or false."""


class Selection(BaseModel):
    """A page's selection: `page` is the id the page made up for itself (each tab its own view)."""

    model_config = ConfigDict(extra="forbid")
    unit: TagId | None = None
    page: str = Field(default="", max_length=64)


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: TagId
    target: TagId


class GameChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str


@router.get("/")
def live_page(request: Request, runtime: RuntimeDep) -> Response:
    settings = runtime.settings
    phone = None
    if settings.source_kind == "phone" or settings.https:
        from webui.https import BROWSER_WARNING
        from webui.routes.camera import camera_address

        fingerprint = settings.cert_sha256
        phone = {
            "address": camera_address(request, settings),
            "fingerprint": fingerprint,
            "warning": BROWSER_WARNING.format(short=fingerprint[:14]) if fingerprint else "",
            "is_source": settings.source_kind == "phone",
            "open": runtime.phone is None or not runtime.phone.state()["connected"],  # folded while one streams
        }
    return page(request, "live.html", "live", ws_path="/ws/live", source=settings.source_kind, phone=phone)


@router.websocket("/ws/live")
async def live_socket(ws: WebSocket) -> None:
    await websocket_feed(ws, ws.app.state.runtime.live)


@router.get("/api/live/stream.mjpg")
def live_mjpeg(runtime: RuntimeDep) -> Response:
    return mjpeg_response(runtime.live)


@router.get("/api/live/frame.jpg")
def live_frame(runtime: RuntimeDep) -> Response:
    result = runtime.live.latest_result
    if result is None:
        return Response(b'{"detail": "No frame has arrived yet; wait a moment and try again."}', 503,
                        media_type="application/json")
    jpeg = picture_jpeg(result.image, runtime.settings.jpeg_quality)  # full size, not the stream's
    return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})


@router.get("/api/live/status")
def live_status(runtime: RuntimeDep) -> dict[str, Any]:
    return runtime.live.status().to_json()


@router.get("/api/live/events")
def live_events(runtime: RuntimeDep, since: int = -1) -> dict[str, Any]:
    """The events list so far; `sent`: the frame messages published before it was read (an entry it lacks, appended
    while it was read or since, is in a message numbered after `sent`: /api/live/skipped has it)."""
    run = runtime.live.run  # the pass of a looping recording the log is of (it starts afresh at each pass)
    sent = runtime.live.published  # read first (see above)
    events = [e for e in list(runtime.live.events) if int(e.get("frame", 0)) > since]
    return {"events": events[-500:], "run": run, "sent": sent}


@router.get("/api/live/skipped")
def live_skipped(runtime: RuntimeDep, after: int, before: int | None = None) -> dict[str, Any]:
    """The events and verdicts of the frame messages numbered after `after` and before `before` (their `sent`):
    what a page that skipped those messages (decoding a picture, or sent only the newest) would have listed."""
    return {"messages": runtime.live.sent_after(after, before)}


@router.post("/api/live/select")
def live_select(choice: Selection, runtime: RuntimeDep) -> dict[str, Any]:
    runtime.live.select(choice.unit, choice.page)
    return {"selected": choice.unit}


@router.post("/api/live/ask")
def live_ask(q: Question, runtime: RuntimeDep) -> dict[str, Any]:
    return ask_about(runtime.live, runtime.setup, q.unit, q.target)


@router.get("/api/setup")
def setup_state(runtime: RuntimeDep) -> dict[str, Any]:
    s = runtime.setup
    with s.lock:
        cal = s.calibration
        return {
            "game": s.game,
            "games": game_names(),
            "titles": game_titles(),
            "calibrated": cal is not None,
            "board": {"w": cal.board_in[0], "d": cal.board_in[1]} if cal is not None else None,
            "residual_in": float(cal.residual_in) if cal is not None else None,
            "roster": s.roster.to_json() if s.roster is not None else None,
            "terrain": s.terrain_json(),
        }


def game_titles() -> dict[str, str]:
    """Each game's name as its rule book spells it ("Hex Skirmish"), by its registry key."""
    return {n: game_title(n) for n in game_names()}


@router.get("/api/games")
def games() -> dict[str, Any]:
    return {"games": game_names(), "titles": game_titles()}


@router.post("/api/live/game")
def choose_game(choice: GameChoice, runtime: RuntimeDep) -> dict[str, Any]:
    return {"game": runtime.set_game(choice.game)}


# ------------------------------------------------------------------------------------- declared actions


def _words(kind: str) -> str:
    return kind.replace("_", " ")


def names_of(roster: Roster | None, game: Game | None = None, state: Any = None) -> Callable[[int], str]:
    """unit id -> the roster's name for it, else the game's for a unit it brought into play ("caravel 102", built
    during the game), else "tag 17"."""
    names = {t: u.name for t, u in roster.units.items()} if roster is not None else {}

    def name(unit: int) -> str:
        said = names.get(unit) or (game.unit_name(state, unit) if game is not None and state is not None else None)
        return said or f"tag {unit}"
    return name


def action_label(game: Game, action: Action, owner: str | None, roster: Roster | None, state: Any = None) -> str:
    """A short sentence for a button, in the game's words: "Red: Red 5 attacks Blue 1" (with `state`, the game as
    it stands, said as the rules would take it there: `Game.as_ruled`)."""
    text = game.describe(game.as_ruled(state, action) if state is not None else action, names_of(roster, game, state))
    who = owner or (action.params.get("player") if isinstance(action.params.get("player"), str) else None)
    if not who:
        return text[:1].upper() + text[1:]
    return f"{str(who).title()}: {text}"


def game_status(game: Game, state: Any, actions: list[Action], roster: Roster | None) -> dict[str, Any]:
    """The phase, the round or turn and whose turn it is, as the game says (`Game.status`); when it names no
    player and everyone who can act now is on one side, that side."""
    status = game.status(state).to_json()
    if status["player"] is None and roster is not None:
        owners = {roster.units[a.unit].owner for a in actions if a.unit is not None and a.unit in roster.units}
        status["player"] = owners.pop() if len(owners) == 1 else None
    return status


def _ruled(runtime: Any) -> tuple[PipelineLike | None, Game | None, Any, Roster | None]:
    pipe: PipelineLike | None = runtime.live.pipeline
    with runtime.setup.lock:
        roster = runtime.setup.roster
    return pipe, pipe.game if pipe is not None else None, pipe.state if pipe is not None else None, roster


def _key(action: Action) -> str:
    """An action as one comparable string (its JSON, keys sorted)."""
    return json.dumps(action.to_json(), sort_keys=True, default=str)


def _table_point(at: str | None) -> tuple[float, float] | None:
    """"x,y" (inches) -> (x, y); None when not given; a sentence for anything else."""
    if at is None or at == "":
        return None
    try:
        x, y = (float(v) for v in at.split(","))
    except ValueError:
        raise ActionError(f'"at" must be a table point in inches written x,y (e.g. 12.5,8); got {at!r}.') from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ActionError(f'"at" must be a point on the table in inches; got {at!r}.')
    return (x, y)


@router.get("/api/live/actions")
def live_actions(runtime: RuntimeDep, unit: int | None = None, at: str | None = None) -> dict[str, Any]:
    """The actions the players may try now (not the camera's moves), refused ones included (`Game.tryable_actions`:
    the ruling says why), grouped by kind, with labels. `at`: "x,y", a table point in inches the players clicked:
    the actions that could be declared there instead (`Game.actions_at`), for `unit` or for no unit."""
    point = _table_point(at)
    pipe, game, state, roster = _ruled(runtime)
    if game is None or state is None:
        why = ("the table is not calibrated yet; calibrate it first" if pipe is None or not pipe.calibrated
               else f"{pipe.status}; choose a game and a roster it can start from")
        return {"game": game.name if game is not None else None, "status": None, "groups": [], "count": 0,
                "total": 0, "capped": False, "message": f"No game is being ruled: {why}."}
    assert pipe is not None
    # with no frame coming (the sample stopped, a camera-less table), the camera sees no move: a clicked point offers it
    still = point is not None and runtime.live.status().status in ("paused", "ended")
    made_of = (game, state, pipe.positions, roster)
    answer = _answered.get(made_of, (unit, point, still))
    if answer is None:
        answer = _actions(game, state, dict(pipe.positions), roster, unit, point, still)
        _answered.put(made_of, (unit, point, still), answer)
    return answer


class _Answered:
    """The last few answers of /api/live/actions, each kept with the very objects it was made from (the game, its
    state, the units' places and the roster: a change to any is a new object), so that the pages that ask as one
    frame changes the game (each page asks at once, `game_step`) get one answer, made once (~50 ms)."""

    def __init__(self, size: int = 8) -> None:
        self._lock = threading.Lock()
        self._items: deque[tuple[tuple[Any, ...], Any, dict[str, Any]]] = deque(maxlen=size)

    def get(self, made_of: tuple[Any, ...], asked: Any) -> dict[str, Any] | None:
        with self._lock:
            for objects, key, answer in self._items:
                if key == asked and all(a is b for a, b in zip(objects, made_of, strict=True)):
                    return answer
        return None

    def put(self, made_of: tuple[Any, ...], asked: Any, answer: dict[str, Any]) -> None:
        with self._lock:
            self._items.append((made_of, asked, answer))


_answered = _Answered()


def standing_put_downs(game: Game, state: Any, positions: dict[Any, Any], unit: int | None = None,
                       ) -> list[tuple[Action, bool]]:
    """The camera's put-downs (Valknut's "deploy" and "redeploy") of units already standing on the table, each with
    whether the rules take it now: what the camera would have ruled had it seen each one put down where it stands.
    A figure set out before the game was saved, or before its deployment began, was never seen put down; the
    players declare it instead of lifting it and putting it down again."""
    out: list[tuple[Action, bool]] = []
    for tag, p in positions.items():
        if unit is not None and tag != unit:
            continue
        try:
            action = game.camera_action(state, tag, "placed", (float(p.x), float(p.y)), positions=positions)
            if action is None or action.kind not in game.camera_kinds or action.kind in ("move", "disengage"):
                continue
            ruled = game.apply(state, positions, action, None)
        except RulesInputError:
            continue
        out.append((action, ruled.legal and ruled.pending is None))
    return out


def _legal_beyond_the_list(game: Game, state: Any, positions: dict[Any, Any], actions: list[Action]) -> set[str]:
    """Which of `actions` (offered, not among `Game.legal_actions`, which may list only a few of each kind: Vigtavl's
    build sites) the rules take now: each ruled dry on the state (immutable), no dice rolled. One that waits for its
    roll stays as `legal_actions` says (a game may ask for the dice before it checks all else: Valknut's attack
    through a wall). At most LEGAL_CHECKS are ruled; the rest stay marked as refused."""
    out: set[str] = set()
    for a in actions[:LEGAL_CHECKS]:
        try:
            ruled = game.apply(state, positions, a, None)
        except RulesInputError:
            continue
        if ruled.pending is None and ruled.legal:
            out.add(_key(a))
    return out


LEGAL_CHECKS = 300
"""The most offered actions one answer rules dry to say whether each is legal (~0.1-1 ms each)."""


def _actions(game: Game, state: Any, positions: dict[Any, Any], roster: Roster | None, unit: int | None,
             point: tuple[float, float] | None, still: bool = False) -> dict[str, Any]:
    """/api/live/actions' answer for one state of the game and one set of the units' places. still: no frame is
    coming, so the camera's own kinds of action (a move) are offered at the clicked point too."""
    try:
        every = game.tryable_actions(state, positions) if point is None else game.actions_at(state, positions, unit,
                                                                                               point)
    except RulesInputError as err:
        return {"game": game.name, "status": None, "groups": [], "count": 0, "total": 0, "capped": False,
                "message": str(err)}
    try:
        legal = {_key(a) for a in game.legal_actions(state, positions)} if point is None or every else set()
    except RulesInputError:
        legal = set()
    status = game_status(game, state, [a for a in every if _key(a) in legal], roster)
    offered = [a for a in every if (still or a.kind not in game.camera_kinds) and (unit is None or a.unit in (None, unit))]
    standing = standing_put_downs(game, state, positions, unit) if point is None else []
    offered += [a for a, _ in standing]
    legal |= {_key(a) for a, ok in standing if ok}
    where_it_stands = {_key(a) for a, _ in standing}
    shown = offered[:MAX_ACTIONS]
    legal |= _legal_beyond_the_list(game, state, positions, [a for a in shown if _key(a) not in legal])
    groups: dict[str, list[dict[str, Any]]] = {}
    for a in shown:
        owner = roster.units[a.unit].owner if roster is not None and a.unit is not None and a.unit in roster.units \
            else None
        if owner is None and a.unit is None and "player" not in a.params:
            owner = status["player"]  # an action of no unit's is the player's to act
        label = action_label(game, a, owner, roster, state) + (", where it stands" if _key(a) in where_it_stands else "")
        groups.setdefault(a.kind, []).append({"label": label, "action": a.to_json(), "legal": _key(a) in legal})
    message = "" if offered else ("The game is over." if status["phase"] == "over" or game.is_over(state) else
                                  "Nothing to declare there: a move is the camera's, so move the figure on the table."
                                  if point is not None and not still and any(a.kind in game.camera_kinds for a in every)
                                  else "Nothing to declare there." if point is not None else
                                  "Nothing to declare now: the camera's moves are next.")
    if len(offered) > len(shown):
        message = f"Showing {len(shown)} of {len(offered)} actions" + (
            "; select a unit to see its own." if any(a.unit is not None for a in offered) else ".")
    return {
        "game": game.name,
        "status": status,
        "unit": unit,
        "groups": [{"kind": k, "title": game.kind_titles.get(k) or _words(k).capitalize(), "actions": v}
                   for k, v in groups.items()],
        "count": len(shown),
        "total": len(offered),
        "legal": sum(1 for a in offered if _key(a) in legal),
        "capped": len(offered) > len(shown),
        "message": message,
    }


@router.post("/api/live/declare", response_model=None)
async def live_declare(request: Request, runtime: RuntimeDep) -> dict[str, Any] | JSONResponse:
    """Rule a declared action {"action": {"kind", "unit", "params"}} at once, never waiting for a frame, against the
    last measured positions ("positions_age_s": how old they are, seconds); the verdicts also go to the event log.
    An action that needs dice nobody gave answers "waiting" and becomes the pending roll (/api/live/dice)."""
    body = await json_body(request, "The declaration")
    if not isinstance(body, dict) or "action" not in body:
        raise ActionError("A declaration names one action (its kind, its unit and its details); pick one of the "
                          "actions the page lists.")
    action = Action.from_json(body["action"])
    try:
        verdicts = await run_in_threadpool(runtime.live.declare, action)
    except LoopNotReady as err:
        return JSONResponse({"detail": str(err)}, status_code=503)
    outs = [v.get("outcome") for v in verdicts]
    outcome = ("illegal" if "illegal" in outs else "too close to call" if "too close to call" in outs
               else "waiting" if "waiting" in outs else "legal")
    _pipe, game, state, roster = _ruled(runtime)
    status = game_status(game, state, [], roster) if game is not None and state is not None else None
    age = next((v["positions_age_s"] for v in verdicts if "positions_age_s" in v), runtime.live.positions_age_s())
    return {"action": action.to_json(), "outcome": outcome, "verdicts": verdicts, "status": status,
            "positions_age_s": age, "dice": await run_in_threadpool(runtime.live.dice_state)}  # under the ruling lock
