"""Valknut: Skirmish Game — two players, five Runic-Armored units each, on a 22" x 30" battlefield.

What the rule book says, implemented here (and in rules/valknut_*.py):
- Setup: the 22" x 30" Battlefield and its six 11" x 10" sections (valknut_board); each player places
  three Runic Stockpiles, one in each odd or each even section; a 1d6 roll-off; the higher roller picks
  a section as Drop Zone, the other any section that is neither that one nor adjacent to it; the higher
  roller places a unit wholly within its Drop Zone, then the players alternate until all 5 are placed.
- The stat line (HP 10, Speed 6", Armor 0, Evasion 1, Accuracy 1, Damage 2, Actions 2) — the book's own.
- Actions: Move (up to Speed; climbing counts double; not within 1" of an enemy), Attack (melee within
  1"; ranged only with no enemy within 1"; the To-Hit table; 1d6; Armor before HP), Disengage (up to 3",
  only within 1" of an enemy), Pick up Runestone (one at a time; movement halved, temporary bonuses not).
- Armor is restored at the beginning of each turn; a killed unit returns on 4+, then 3+, 2+, then surely,
  with a permanent penalty once reinforcements are depleted.
- The four Paths (a Step each turn), every stat increase and boon, and Spirits (valknut_units).

Where the book is silent ("Turn Structure" and "Winning" are empty) the choices are OURS, named options
in the setup's "options" (valknut_state): alternating activations, a 6-turn limit, a win by Runestones
delivered to one's own Drop Zone (or by kills), 2 Runestones per Stockpile, 3 reinforcements, 1" pick-up
reach, ranged attacks need sight, and the section numbering (valknut_board). See docs/scenarios/valknut.md.
"Within 1"" is measured as a tape would between the bases, across and, between floors, up (valknut_table):
a unit on a floor 3" up is not engaged with the enemy beneath it.

Dice are the players' input (rules/dice.py): every roll takes the faces in the action's "rolls", a flat list
of d6 faces in the order the rules take them; Tablesight rolls the rest only when asked to ("roll for us",
a generator), otherwise the answer waits for the roll it needs, naming who rolls how many dice for what.
The rolls, in the order they are taken:
- the roll-off for the Drop Zones ("roll_off") and, under the `initiative: "roll_off"` option, for the
  initiative at the start of each turn: 1d6 each, the first player of the roster first, then the other;
- an Attack's to-hit 1d6 (Wolf 3: two attacks, each its own roll), then, when damage lands on a unit with
  the Path of the Bear (its own or an aura's), its owner's 1d6 per point of damage (each 6 ignores one);
  Wolf 3's strike at a unit disengaging is the striker's owner's roll, before the Disengage moves;
- Bear 2's restore ("bear_restore"): 2d6;
- at the beginning of a turn, each killed unit's return roll (1d6, tag order, its owner rolls). A turn
  begins inside the action that ends the last activation or places the last unit, so these faces (and an
  initiative roll-off) follow that action's own faces in its "rolls".
Where the book is silent, OUR options: a tied roll-off is rolled again (both dice), as often as it ties;
who rolls first in a roll-off: the roster's first player; a cocked die or one off the tray is the players'
to re-roll by their own table custom: Tablesight takes only the faces that count.

The camera (`Valknut.camera_action`): in the deploy phase a figure put down or moved on the battlefield is its
deployment there ("deploy", placed again while deployment lasts); a killed unit's figure put back on the
battlefield is its "redeploy" there, wherever it died; these are camera kinds, never offered at fixed points.

Tracker moves: a Move event {"tag": 12, "from_in": [x, y], "to_in": [x, y], "length_in": l, "pm_in": e}
becomes Action("move", 12, {"to": to_in, "length_in": l, "pm_in": e}) ruled against the positions as they
were before the move (unit 12 at from_in); `action_from_move_event` does that, choosing "disengage" when
the unit starts within 1" of an enemy.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from rules.dice import DiceCup, rolls_numbers
from rules.engine import (
    Action,
    Assessment,
    Game,
    Json,
    Measured,
    OptionField,
    Outcome,
    Overlay,
    Panel,
    Placement,
    Positions,
    Result,
    RulesInputError,
    ScenarioError,
    Shape,
    TurnStatus,
    UnitId,
    Verdict,
    counted,
    listed,
    register,
    takes_dice,
)
from rules.geometry import all_pairs_sight
from rules.terrain import parse_terrain
from rules.valknut import standard
from rules.valknut.actions import check, deployer, rule, stockpile_placer, zone_chooser
from rules.valknut.board import LONG_IN, SHORT_IN, Battlefield, odd, second_drop_zone_allowed
from rules.valknut.panel import PENALTY_WORDS, panel
from rules.valknut.setup import new_state, scenario_state
from rules.valknut.state import ValknutState, dump_state, load_state
from rules.valknut.table import BEAR_RESTORE_IN, Table
from rules.valknut.tryable import at_point
from rules.valknut.units import BLESSINGS, PATHS, PENALTIES, to_hit

DIRECTIONS = tuple((math.cos(math.radians(a)), math.sin(math.radians(a))) for a in range(0, 360, 45))


def action_from_move_event(event: Mapping[str, Json], state: ValknutState, positions: Positions) -> Action:
    """A tracker move event as a Valknut action: "disengage" when the unit starts within 1" of an enemy
    (surely), else "move". `positions` are the placements before the move."""
    tag = int(event["tag"])
    params = {"to": list(event["to_in"]), "length_in": event.get("length_in"), "pm_in": event.get("pm_in")}
    params = {k: v for k, v in params.items() if v is not None}
    kind = "move"
    if state.has_unit(tag) and tag in positions:
        table = Table.of(state, positions)
        if tag in table.positions and any(o is Outcome.LEGAL for _, _, o in table.engaged(tag)):
            kind = "disengage"
    return Action(kind, tag, params)


def _outcome(verdicts: tuple[Verdict, ...] | list[Verdict], question: bool) -> str:
    """An action: illegal if any verdict is, else too close to call if any is, else legal. A question: info."""
    outs = [v.outcome for v in verdicts]
    if question:
        return Outcome.INFO.value
    if Outcome.WAITING in outs:
        return Outcome.WAITING.value
    if Outcome.ILLEGAL in outs:
        return Outcome.ILLEGAL.value
    if Outcome.TOO_CLOSE_TO_CALL in outs:
        return Outcome.TOO_CLOSE_TO_CALL.value
    return Outcome.LEGAL.value


@register
class Valknut(Game):
    name: ClassVar[str] = "valknut"
    title: ClassVar[str] = "Valknut: Skirmish Game"
    board: ClassVar[str] = "inches"
    camera_kinds: ClassVar[frozenset[str]] = frozenset({"move", "disengage", "deploy", "redeploy"})
    """A base moved is a Move or a Disengage; a base put down in deployment, or a killed unit's put back, is its
    (re)deployment where the camera sees it: the Declare panel offers no fixed points for them."""
    kind_titles: ClassVar[Mapping[str, str]] = {
        "assign_spirits": "Spirit Blessings", "bear_restore": "Path of the Bear: restore HP",
        "pick_up_runestone": "Pick up a Runestone", "choose_path": "Choose a Path",
        "place_stockpile": "Place a Runic Stockpile", "choose_drop_zone": "Choose a Drop Zone", "roll_off": "Roll off",
        "choose_penalty": "Reinforcements depleted: choose a penalty", "drop_runestone": "Drop a Runestone"}

    # a new game's setup: rules/valknut/standard.py
    def option_fields(self) -> tuple[OptionField, ...]:
        return standard.OPTION_FIELDS

    def example_roster(self) -> dict[str, Json]:
        return copy.deepcopy(standard.EXAMPLE_ROSTER)

    def play_areas(self) -> tuple[tuple[float, float], ...]:
        """The 22" x 30" Battlefield, either way round."""
        return ((LONG_IN, SHORT_IN), (SHORT_IN, LONG_IN))

    def new_state(self, setup: Mapping[str, Json]) -> ValknutState:
        return new_state(setup)

    @takes_dice
    def apply(self, state: ValknutState, positions: Positions, action: Action, rng: DiceCup) -> Result:
        """Rule on the action; its dice come from `rng`, the action's DiceCup (the players' "rolls" first)."""
        ruling = rule(Table.of(state, positions), action, rng)
        if any(v.outcome is Outcome.ILLEGAL for v in ruling.verdicts):
            del rng.given[len(rng.given) - rng.left:]  # not done, so no die was rolled for it: nothing left over
        out = dict(positions)
        out.update(ruling.positions)
        for u in ruling.state.units:
            if not (u.alive and u.on_table):
                out.pop(u.tag, None)
        overlays = self.overlays(ruling.state, out, action.unit)
        return Result(ruling.state, out, ruling.verdicts, overlays)

    def is_over(self, state: ValknutState) -> bool:
        return state.phase == "over"

    def off_table(self, state: ValknutState) -> frozenset[UnitId]:
        """A killed unit is off the table until it is redeployed."""
        return frozenset(u.tag for u in state.units if not u.alive)

    def score(self, state: ValknutState) -> dict[str, Json]:
        """Runestones delivered and kills, per player (the two win options' counts), and the winner once the game
        is over ("draw" when nobody won; None before)."""
        return {"delivered": {p: state.delivered.of(p) for p in state.players},
                "kills": {p: state.kills.of(p) for p in state.players},
                "winner": state.winner if state.phase == "over" else None}

    def panel(self, state: ValknutState, positions: Positions) -> Panel:
        """The turn of the limit, what is left to do, every unit's HP, Armor, Marks and Runestones, the
        Runestones delivered and kills, and how the game is won (rules/valknut/panel.py)."""
        return panel(state, positions)

    # ------------------------------------------------------------------------------------ legal actions

    def camera_action(self, state: ValknutState, unit: UnitId, seen: str, at: tuple[float, float],
                      came_from: tuple[float, float] | None = None, *, positions: Positions | None = None,
                      measured: Measured | None = None) -> Action | None:
        """What the camera saw a unit do. In the deploy phase a base put down or moved on the battlefield is its
        deployment there (placed again while deployment lasts: ruled again, never a Move). A killed unit put back
        on the battlefield, first seen or seen moved from wherever it died, is its redeployment there (refused,
        with the reason, until its return roll lets it come back). Otherwise a base moved is a Move, or a Disengage
        when it started within 1" of an enemy (surely); a base put down is no news, and so is a figure not yet
        deployed, or killed, set down beside the battlefield."""
        if not isinstance(state, ValknutState) or not state.has_unit(unit):
            return None
        u = state.unit(unit)
        if not u.alive and state.phase == "over":
            return None  # the table is being cleared
        if not u.alive or state.phase == "deploy":
            if Battlefield(*state.board).section_at(float(at[0]), float(at[1])) is None and not (u.alive and u.on_table):
                return None  # waiting beside the battlefield
            to = [float(at[0]), float(at[1])]
            if measured is not None and measured.z:
                to.append(float(measured.z))  # set down on a floor
            params: dict[str, Json] = {"to": to}
            if measured is not None:  # a move's ± joins its two ends' (alike): one end's is that over sqrt 2
                params["pm_in"] = round(measured.pm_in / math.sqrt(2), 4)
            return Action("redeploy" if not u.alive else "deploy", unit, params)
        if seen == "placed":
            return None
        event: dict[str, Json] = {"tag": unit, "to_in": [float(at[0]), float(at[1])]}
        if measured is not None:
            event.update(length_in=measured.length_in, pm_in=measured.pm_in)
        action = action_from_move_event(event, state, positions or {})
        if measured is None or measured.z is None:
            return action
        # the floor it now stands on: a climb onto a 3" ruin is 3" up, not up and back down
        return Action(action.kind, action.unit, {**action.params, "z": measured.z})

    def assess(self, state: ValknutState, positions: Positions, unit: UnitId, target: UnitId) -> Assessment | None:
        """The roll `unit` needs to hit `target` (its Accuracy against the target's Evasion)."""
        table = Table.of(state, positions)
        try:
            acc, eva = table.stats(unit).accuracy, table.stats(target).evasion
        except (KeyError, AttributeError, RulesInputError):
            return None
        return Assessment(to_hit(acc, eva), {"accuracy": acc, "evasion": eva})

    def status(self, state: ValknutState) -> TurnStatus:
        """The phase and turn; in the setup phases, the player who places, chooses or deploys next."""
        base = super().status(state)
        chooser = {"stockpiles": stockpile_placer, "drop_zones": zone_chooser, "deploy": deployer}.get(state.phase)
        if base.player is None and chooser is not None:
            return TurnStatus(base.phase, base.round, base.turn, chooser(state))
        return base

    def as_ruled(self, state: ValknutState, action: Action) -> Action:
        """A Runestone picked up from a Runic Stockpile, with the stockpile's section (`"section"`, for its words
        only: players know a stockpile by where it stands, not by its number)."""
        i = action.params.get("stockpile")
        if action.kind != "pick_up_runestone" or not isinstance(state, ValknutState) or not isinstance(i, int) \
                or isinstance(i, bool) or not 0 <= i < len(state.stockpiles):
            return action
        return Action(action.kind, action.unit, {**action.params, "section": state.stockpiles[i].section})

    def describe(self, action: Action, name_of: Callable[[UnitId], str]) -> str:
        """Valknut's actions in the rule book's words, units by name."""
        p, u, kind = dict(action.params), action.unit, action.kind
        who = name_of(u) if u is not None else ""
        if kind == "choose_path" and u is not None:
            return f"choose the Path of the {str(p.get('path', '?')).title()} for {who}"
        if kind == "attack" and u is not None and isinstance(p.get("target"), int):
            return f"{who} attacks {name_of(int(p['target']))}"  # type: ignore[arg-type]
        if kind == "end_activation":
            return f"end {who}'s activation" if u is not None else "end the activation"
        if kind == "choose_penalty" and u is not None and p.get("penalty") in PENALTY_WORDS:
            return f"{who} returns with {PENALTY_WORDS[str(p['penalty'])]} (reinforcements depleted)"
        if kind == "drop_runestone" and u is not None:
            return f"{who} drops a Runestone"
        to, at = _point(p.get("to")), _point(p.get("at"))
        if kind in ("deploy", "redeploy") and to is not None:
            extra = f" (penalty {p['penalty']})" if "penalty" in p else ""
            return f"{kind} {who} at ({to[0]:.1f}, {to[1]:.1f}){extra}"
        if kind == "place_stockpile" and at is not None:
            return f"place a Runic Stockpile at ({at[0]:.1f}, {at[1]:.1f})"
        if kind == "choose_drop_zone" and "section" in p:
            return f"choose section {p['section']} as Drop Zone"
        blessings, targets = p.get("blessings"), p.get("targets")
        if kind == "assign_spirits" and u is not None and blessings == []:
            return f"{who} withdraws its Spirit Blessings"  # its earlier Blessings go and none come
        if kind == "assign_spirits" and u is not None and isinstance(blessings, list):
            given: dict[tuple[int, str], int] = {}
            for b in blessings:
                if not (isinstance(b, list) and len(b) == 2 and isinstance(b[0], int) and isinstance(b[1], str)):
                    return super().describe(action, name_of)
                given[(b[0], b[1])] = given.get((b[0], b[1]), 0) + 1
            said = [f"{effect.replace('_', ' ').title()}{f' x{n}' if n > 1 else ''} to "
                    f"{'itself' if t == u else name_of(t)}" for (t, effect), n in given.items()]
            return f"{who} assigns Spirit Blessings: {listed(said)}"
        if kind == "bear_restore" and u is not None and isinstance(targets, list) and targets \
                and all(isinstance(t, int) for t in targets):
            healed = ["itself" if t == u else name_of(t) for t in targets if isinstance(t, int)]
            return f"{who} rolls 2d6 to restore HP to {listed(healed)}"
        if kind == "pick_up_runestone" and u is not None:
            section = p.get("section")
            if "stockpile" in p:
                where = f"the Runic Stockpile in Section {section}" if isinstance(section, int) \
                    else f"Runic Stockpile {p['stockpile']}"
                return f"{who} picks up a Runestone from {where}"
            if "stone" in p:
                return f"{who} picks up a Runestone from the ground"
            return f"{who} picks up the nearest Runestone"
        return super().describe(action, name_of)

    def _fine(self, table: Table, action: Action) -> bool:
        return all(v.outcome in (Outcome.LEGAL, Outcome.INFO) for v in check(table, action))

    def _zone_spots(self, table: Table, tag: int, zone: int) -> list[list[float]]:
        s = table.battlefield.section(zone)
        r = table.radius(tag) + 0.1
        spots = []
        for fx in (0.2, 0.5, 0.8):
            for fy in (0.2, 0.5, 0.8):
                spots.append([s.x0 + r + fx * (s.x1 - s.x0 - 2 * r), s.y0 + r + fy * (s.y1 - s.y0 - 2 * r)])
        return spots

    def legal_actions(self, state: ValknutState, positions: Positions) -> list[Action]:
        """A finite representative set: moves and disengages in 8 directions at full and half length, every
        legal attack, pick-up and drop, one Blessing and one Bear restore, every path and penalty, nine spots per
        placement. The Declare panel offers `tryable_actions`, refused ones too."""
        table = Table.of(state, positions)
        acts: list[Action] = []
        field = table.battlefield
        if state.phase == "stockpiles":
            p = stockpile_placer(state)
            used = {s.section for s in state.stockpiles}
            acts = [Action("place_stockpile", None, {"at": list(s.centre)}) for s in field.sections()
                    if odd(s.number) == (p == state.odd_player) and s.number not in used]
        elif state.phase == "roll_off":
            acts = [Action("roll_off")]
        elif state.phase == "drop_zones":
            first = state.drop_zone(state.first_player or state.players[0])
            acts = [Action("choose_drop_zone", None, {"section": n}) for n in range(1, 7)
                    if first is None or second_drop_zone_allowed(first, n)]
        elif state.phase == "deploy":
            who = deployer(state)
            for u in state.units:
                if u.owner == who and not u.on_table:
                    zone = state.drop_zone(u.owner) or 1
                    acts += [Action("deploy", u.tag, {"to": s}) for s in self._zone_spots(table, u.tag, zone)]
        elif state.phase == "turn_start":
            for u in state.units:
                if not u.stepped:
                    acts += [Action("choose_path", u.tag, {"path": p}) for p in PATHS]
                if u.ready:
                    extra = {"penalty": "armor"} if u.penalty_due else {}
                    zone = state.drop_zone(u.owner) or 1
                    acts += [Action("redeploy", u.tag, {"to": s} | extra) for s in self._zone_spots(table, u.tag, zone)]
        elif state.phase == "activations":
            acts = self._activation_actions(table)
        acts += self._penalty_actions(state)
        return [a for a in acts if self._fine(table, a)]

    def _penalty_actions(self, state: ValknutState) -> list[Action]:
        """Each penalty a killed unit that owes one may choose."""
        return [Action("choose_penalty", u.tag, {"penalty": p}) for u in state.units
                if not u.alive and u.penalty_due for p in PENALTIES] if state.phase != "over" else []

    @staticmethod
    def _blessings_and_restores(table: Table, tag: int) -> list[Action]:
        """Unit `tag`'s Spirit Blessings (each effect its Raven step grants, all its Spirits on itself or on one
        ally; "slow" on an enemy) and Bear restores (itself, each ally within 6")."""
        unit = table.unit(tag)
        out: list[Action] = []
        raven = unit.steps.raven
        for other in table.live():
            if other.tag not in table.positions:
                continue
            ally = other.owner == unit.owner
            for effect, (need, _, _) in BLESSINGS.items():
                if raven >= need and (effect == "slow") != ally:
                    out.append(Action("assign_spirits", tag, {"blessings": [[other.tag, effect]] * raven}))
            near = other.tag == tag or table.gap(tag, other.tag).at_most(BEAR_RESTORE_IN) is not Outcome.ILLEGAL
            if unit.steps.bear >= 2 and ally and near:
                out.append(Action("bear_restore", tag, {"targets": [other.tag]}))
        return out

    def tryable_actions(self, state: ValknutState, positions: Positions) -> list[Action]:
        """Every action the players may try now, the legal ones first, then those the rules would refuse, each of
        which is ruled with its reason: a Runic Stockpile in every free section, every section as a Drop Zone,
        and for each unit that may activate an attack on every enemy on the battlefield, a pick-up from every Runic
        Stockpile and Runestone on the ground, a drop of a Runestone it carries, with Raven steps every Blessing
        its step grants on itself and each ally (all its Spirits on one unit; "slow" on each enemy), and with Bear
        step 2 a restore of itself and of each ally within 6". Moves, deployments and redeployments are the
        camera's (`camera_kinds`)."""
        table = Table.of(state, positions)
        acts = self.legal_actions(state, positions)
        more: list[Action] = []
        if state.phase == "stockpiles":
            used = {s.section for s in state.stockpiles}
            more = [Action("place_stockpile", None, {"at": list(s.centre)}) for s in table.battlefield.sections()
                    if s.number not in used]
        elif state.phase == "drop_zones":
            more = [Action("choose_drop_zone", None, {"section": n}) for n in range(1, 7)]
        elif state.phase == "activations":
            tags = [state.active_unit] if state.active_unit is not None else \
                [u.tag for u in table.live() if u.owner == state.active_player and not u.activated]
            for tag in tags:
                more += [Action("attack", tag, {"target": e.tag}) for e in table.enemies(tag)]
                more += [Action("pick_up_runestone", tag, {"stockpile": i}) for i, _ in enumerate(state.stockpiles)]
                more += [Action("pick_up_runestone", tag, {"stone": i}) for i, _ in enumerate(state.ground)]
                if table.unit(tag).carrying:
                    more.append(Action("drop_runestone", tag))
                more += self._blessings_and_restores(table, tag)
        seen = {json.dumps(a.to_json(), sort_keys=True) for a in acts}
        for a in more:
            key = json.dumps(a.to_json(), sort_keys=True)
            if key not in seen:
                seen.add(key)
                acts.append(a)
        return acts

    def actions_at(self, state: ValknutState, positions: Positions, unit: UnitId | None,
                   at: tuple[float, float]) -> list[Action]:
        """At the clicked table point, legal or not: with no unit a Runic Stockpile there or its section as a Drop
        Zone; for a unit its (re)deployment there, or in its activation an attack on the enemy there, a Bear restore
        or Blessing for the ally there, a pick-up of the Runestones there, else a Move or Disengage there with its
        measured length (rules/valknut/tryable.py)."""
        return at_point(Table.of(state, positions), unit, at)

    def _activation_actions(self, table: Table) -> list[Action]:
        state = table.state
        if state.active_unit is not None:
            tags = [state.active_unit]
        else:
            tags = [u.tag for u in table.live() if u.owner == state.active_player and not u.activated]
        acts: list[Action] = []
        for tag in tags:
            unit = table.unit(tag)
            acts.append(Action("end_activation", tag))
            at = table.at(tag)
            stats = table.stats(tag)
            engaged = bool(table.engaged(tag))
            kind, reach = ("disengage", 3.0) if engaged else ("move", stats.speed_in)
            for dx, dy in DIRECTIONS:
                for f in (0.97, 0.5):
                    if reach * f > 0.05:
                        to = [round(at.x + dx * reach * f, 3), round(at.y + dy * reach * f, 3)]
                        acts.append(Action(kind, tag, {"to": to}))
            for enemy in table.enemies(tag):
                acts.append(Action("attack", tag, {"target": enemy.tag}))
            for i, s in enumerate(state.stockpiles):
                if s.stones > 0:
                    acts.append(Action("pick_up_runestone", tag, {"stockpile": i}))
            for i, _ in enumerate(state.ground):
                acts.append(Action("pick_up_runestone", tag, {"stone": i}))
            if unit.carrying:
                acts.append(Action("drop_runestone", tag))
            if unit.steps.raven >= 1:
                acts.append(Action("assign_spirits", tag, {"blessings": [[tag, "evasion"]] * unit.steps.raven}))
            if unit.steps.bear >= 2:
                acts.append(Action("bear_restore", tag, {"targets": [tag]}))
        return acts

    # ------------------------------------------------------------------------------------------ overlays

    def overlays(self, state: ValknutState, positions: Positions, selected: UnitId | None = None) -> tuple[Overlay, ...]:
        """Sections, Drop Zones, Runic Stockpiles and Runestones, 1" engagement rings; for the selected unit its
        movement allowance, melee band, ranged note and sight lines to each enemy coloured by verdict."""
        table = Table.of(state, positions)
        field = table.battlefield
        out: list[Overlay] = [Overlay(Shape.POLYGON, s.corners, "section", label=f"Section {s.number}")
                              for s in field.sections()]
        for player, zone in state.drop_zones:
            out.append(Overlay(Shape.POLYGON, field.section(zone).corners, "drop-zone",
                               label=f"{player}'s Drop Zone", owner=player))
        for s in state.stockpiles:
            out.append(Overlay(Shape.CIRCLE, ((s.x, s.y),), "score", radius=0.5,
                               label=f"Runic Stockpile ({s.stones})", owner=s.owner))
        for g in state.ground:
            out.append(Overlay(Shape.CIRCLE, ((g.x, g.y),), "score", radius=0.3, label="Runestone"))
        for t in table.terrain:
            if t.has("blocking") or t.has("impassable"):
                out.append(Overlay(Shape.POLYGON, t.polygon, "terrain-blocking", label=t.name))
        for u in table.live():
            p = table.at(u.tag)
            out.append(Overlay(Shape.RING, (p.xy,), "engagement", radius=u.radius_in + 1.0, inner=u.radius_in,
                               unit=u.tag, owner=u.owner))
        if selected is not None and selected in table.positions:
            out += self._selected(table, selected)
        return tuple(out)

    def _selected(self, table: Table, tag: int) -> list[Overlay]:
        p = table.at(tag)
        u = table.unit(tag)
        stats = table.stats(tag)
        engaged = table.engaged(tag)
        out = []
        if engaged:
            out.append(Overlay(Shape.CIRCLE, (p.xy,), "move-allowance", radius=3.0, label='Disengage 3"', unit=tag))
        else:
            out.append(Overlay(Shape.CIRCLE, (p.xy,), "move-allowance", radius=stats.speed_in,
                               label=f'Speed {stats.speed_in:g}"', unit=tag))
        out.append(Overlay(Shape.RING, (p.xy,), "range-band", radius=u.radius_in + 1.0, inner=u.radius_in,
                           label='melee (within 1")', unit=tag))
        note = "ranged: not while an enemy is within 1\"" if engaged else "ranged: any range, needs sight"
        out.append(Overlay(Shape.LABEL, ((p.x, p.y + u.radius_in + 1.3),), "range-band", label=note, unit=tag))
        enemies = table.enemies(tag)
        if enemies:
            seen = all_pairs_sight([p] + [table.at(e.tag) for e in enemies],
                                   {x.tag: x.radius_in for x in table.state.units}, table.terrain,
                                   table.state.options.eye_height_in)
            for e in enemies:
                s = seen[(tag, e.tag)]
                label = s.verdict + (f" ({', '.join(s.blockers)})" if s.blockers else "")
                out.append(Overlay(Shape.SEGMENT, (p.xy, table.at(e.tag).xy), f"los-{s.verdict}", label=label,
                                   unit=tag, owner=u.owner))
        return out

    # -------------------------------------------------------------------------------------------- state

    def dump_state(self, state: ValknutState) -> dict[str, Json]:
        return dump_state(state)

    def load_state(self, obj: Mapping[str, Json]) -> ValknutState:
        return load_state(obj)

    # -------------------------------------------------------------------------------------------- judge

    def judge(self, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
        """Answer one scenario (docs/scenarios/valknut.md): an action ruled, or a question answered. The action's
        "rolls" are its dice; `rng` rolls the missing ones, and without it the answer waits ("pending")."""
        if not isinstance(scenario, Mapping):
            raise ScenarioError("A scenario must be a JSON object.")
        state, positions = scenario_state(scenario)
        if "action" in scenario:
            action = Action.from_json(scenario["action"])
            res = self.apply(state, positions, action, rng)
            answer = self._answer(action.kind, res.verdicts, question=False)
            answer.update(self._after(res.state, res.positions))
            answer["rolls"] = rolls_numbers(res.rolls)
            if res.pending is not None:
                answer["pending"] = res.pending.to_json()
            return answer
        question = scenario.get("question")
        if not isinstance(question, Mapping) or not isinstance(question.get("kind"), str):
            raise ScenarioError('The scenario needs an "action" or a "question" with a "kind".')
        return self._question(state, positions, question)

    def _answer(self, kind: str, verdicts: tuple[Verdict, ...] | list[Verdict], question: bool) -> dict[str, Json]:
        numbers: dict[str, Json] = {}
        for v in verdicts:
            for k, val in v.numbers.items():
                numbers.setdefault(k, val)
        return {"game": self.name, "action": kind, "outcome": _outcome(verdicts, question),
                "verdicts": [v.to_json() for v in verdicts], "numbers": numbers}

    def _after(self, state: ValknutState, positions: Positions) -> dict[str, Json]:
        units = {}
        for u in state.units:
            units[str(u.tag)] = {
                "hp": u.hp, "armor": u.armor, "alive": u.alive, "on_table": u.on_table,
                "carrying": len(u.carrying), "marks": u.marks, "halvings": u.halvings,
                "paths": {p: u.steps.of(p) for p in PATHS}, "ready": u.ready,
                "redeploy_target": u.redeploy_target, "penalties": list(u.penalties),
                "at": list(positions[u.tag].xy) if u.tag in positions else None,
            }
        return {"phase": state.phase, "turn": state.turn, "active_player": state.active_player,
                "winner": state.winner, "units": units, "drop_zones": dict(state.drop_zones),
                "delivered": dict(state.delivered.pairs), "kills": dict(state.kills.pairs),
                "first_player": state.first_player}

    def _question(self, state: ValknutState, positions: Positions, q: Mapping[str, Json]) -> dict[str, Json]:
        table = Table.of(state, positions)
        kind = str(q["kind"])

        def unit_of(key: str) -> int:
            t = q.get(key)
            if not isinstance(t, int) or t not in table.positions:
                raise ScenarioError(f'The question "{kind}" needs "{key}": the tag of a unit on the battlefield.')
            return t

        verdicts: list[Verdict] = []
        if kind == "sight":
            a, b = unit_of("from"), unit_of("to")
            s = table.sight(a, b)
            verdicts.append(Verdict("valknut.sight", Outcome.INFO,
                                    f"Line of sight from unit {a} to unit {b} is {s.verdict}"
                                    + (f" ({', '.join(s.blockers)})." if s.blockers else "."), a,
                                    {"sight": s.verdict, "blockers": list(s.blockers),
                                     "fraction_clear": round(s.fraction_clear, 3)}))
        elif kind == "engagement":
            a = unit_of("unit")
            near = table.engaged(a)
            verdicts.append(Verdict("valknut.engagement", Outcome.INFO,
                                    f'Unit {a} has {counted(len(near), "enemy unit")} within 1": '
                                    + (", ".join(f"{e} at {m.text()}" + (" (too close to call)" if o is Outcome.TOO_CLOSE_TO_CALL else "")
                                                 for e, m, o in near) or "none") + ".", a,
                                    {"enemies": [e for e, _, _ in near],
                                     "gaps_in": [round(m.value, 4) for _, m, _ in near],
                                     "engaged": any(o is Outcome.LEGAL for _, _, o in near)}))
        elif kind == "to_hit":
            a, b = unit_of("attacker"), unit_of("defender")
            acc, eva = table.stats(a).accuracy, table.stats(b).evasion
            need = to_hit(acc, eva)
            verdicts.append(Verdict("valknut.attack.to_hit", Outcome.INFO,
                                    f"Accuracy {acc} against Evasion {eva}: the To-Hit Number is {need}+.", a,
                                    {"to_hit": need, "accuracy": acc, "evasion": eva}))
        elif kind == "stats":
            a = unit_of("unit")
            st = table.stats(a)
            verdicts.append(Verdict("valknut.stats", Outcome.INFO, f"Unit {a}'s stats now.", a,
                                    {"speed_in": st.speed_in, "armor": st.armor, "evasion": st.evasion,
                                     "accuracy": st.accuracy, "damage": st.damage, "actions": st.actions,
                                     "hp": table.unit(a).hp, "climb_factor": st.climb_factor,
                                     "capacity": st.capacity}))
        elif kind == "section":
            at = q.get("at")
            if not isinstance(at, list) or len(at) != 2 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in at
            ):
                raise ScenarioError('The question "section" needs "at": [x, y] in inches.')
            n = table.battlefield.section_at(float(at[0]), float(at[1]))
            verdicts.append(Verdict("valknut.sections", Outcome.INFO, f"({at[0]}, {at[1]}) is in section {n}.",
                                    numbers={"section": n, "odd": None if n is None else odd(n)}))
        elif kind == "score":
            verdicts.append(Verdict("valknut.win", Outcome.INFO, "The score.", numbers={
                "delivered": dict(state.delivered.pairs), "kills": dict(state.kills.pairs)}))
        elif kind == "legal_actions":
            acts = self.legal_actions(state, positions)
            kinds = sorted({a.kind for a in acts})
            verdicts.append(Verdict("valknut.legal_actions", Outcome.INFO, f"{len(acts)} legal actions.",
                                    numbers={"count": len(acts), "kinds": kinds}))
        else:
            raise ScenarioError(
                f'Valknut cannot answer the question "{kind}"; ask sight, engagement, to_hit, stats, section, '
                "score or legal_actions."
            )
        answer = self._answer(kind, verdicts, question=True)
        answer["question"] = kind
        return answer

    # ------------------------------------------------------------------------------------------ example

    def example(self, rng: random.Random) -> tuple[ValknutState, Positions]:
        """Turn 1 of a game on the example roster (examples/rosters/valknut.json): red in section 1, blue in
        section 6, two ruins and a wall, every unit about to take its first Step."""
        units = [{"tag": 10 + i, "profile": "soldier", "owner": "red" if i < 5 else "blue", "base_mm": 32,
                  "name": f"{'Red' if i < 5 else 'Blue'} {i % 5 + 1}"} for i in range(10)]
        setup = {
            "roster": {"game": "valknut", "units": units},
            "terrain": EXAMPLE_TERRAIN,
            "stockpiles": [{"at": [5.0, 8.0]}, {"at": [15.0, 3.0]}, {"at": [25.0, 8.0]},
                           {"at": [5.0, 14.0]}, {"at": [15.0, 19.0]}, {"at": [25.0, 14.0]}],
            "first_player": "red",
            "drop_zones": {"red": 1, "blue": 6},
        }
        state = new_state(setup)
        positions: dict[UnitId, Placement] = {}
        while (who := deployer(state)) is not None:
            u = next(u for u in state.units if u.owner == who and not u.on_table)
            i = u.tag - 10
            zone = Battlefield(*state.board).section(state.drop_zone(u.owner) or 1)
            x = zone.x0 + 1.5 + 1.75 * (i % 5) + rng.uniform(-0.1, 0.1)
            y = zone.y0 + (2.0 if u.owner == "red" else zone.y1 - zone.y0 - 2.0) + rng.uniform(-0.2, 0.2)
            res = self.apply(state, positions, Action("deploy", u.tag, {"to": [round(x, 3), round(y, 3)]}), rng)
            if not res.legal:
                raise AssertionError(res.verdicts)
            state, positions = res.state, dict(res.positions)
        return state, positions


EXAMPLE_TERRAIN: dict[str, Any] = {"pieces": [
    {"name": "north ruin", "kind": ["elevated", "obscuring"], "polygon": [[12, 13], [17, 13], [17, 17], [12, 17]],
     "height_in": 3, "climbable": True},
    {"name": "south ruin", "kind": ["elevated", "obscuring"], "polygon": [[13, 4], [18, 4], [18, 8], [13, 8]],
     "height_in": 3, "climbable": True},
    {"name": "stone wall", "kind": ["blocking"], "polygon": [[8, 10.5], [11, 10.5], [11, 11.5], [8, 11.5]],
     "height_in": 2, "climbable": True},
]}
parse_terrain(EXAMPLE_TERRAIN)


def _point(v: Json) -> tuple[float, float] | None:
    """A table point given as an action's JSON [x, y] (inches), or None for anything else."""
    if not (isinstance(v, list) and len(v) == 2):
        return None
    x, y = v
    if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, int | float) or not isinstance(y, int | float):
        return None
    return float(x), float(y)
