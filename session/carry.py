"""Setup edits keep the game: when the roster, terrain or calibration changes mid-game, the fresh pipeline
takes over the running game (its state, dice, positions, tracks and rulings) instead of starting it again.

What can be carried: unit names (the game knows units by tag id), how each tag is mounted (`base_height_in`,
`tag_in`, `tag_offset_in`, `mount_pm_in`, `mount_lean_deg`, `more_tags`: where the camera finds the base, which the game never
reads; the wizard's mount step and the Roster page write them mid-setup), terrain (the game's state takes the new
pieces, as the game itself reads them from the setup) and the camera's calibration. What cannot: another
game, or a roster whose units differ in anything but their names (tags, owners, profiles, bases, the game's
own keys); then the game starts afresh, and the page asks first (`restart_reason`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rules.engine import UnknownGame, find_game
from rules.roster import Roster

MOUNT_KEYS = frozenset({"base_height_in", "tag_in", "tag_offset_in", "mount_pm_in", "mount_lean_deg", "more_tags"})
"""How a unit's tags are mounted on its base: the camera's business, not the game's (no game reads them)."""


def _without_mount(entry: Any) -> Any:
    return {k: v for k, v in entry.items() if k not in MOUNT_KEYS} if isinstance(entry, dict) else entry


def _rules_part(roster: Roster | None) -> Any:
    """The roster as the game reads it, without the names (a rename changes nothing the game rules on), the
    measured mounts and who rolls the dice."""
    if roster is None:
        return None
    obj = roster.to_json()
    obj.pop("mount_lean_deg", None)  # the roster-wide mount word: the camera's too
    obj.pop("roll_for_us", None)  # who rolls the dice: changed mid-game, the game goes on
    obj["units"] = sorted(({k: v for k, v in _without_mount(u).items() if k != "name"} for u in obj["units"]),
                          key=lambda u: u["tag"])
    return obj


def game_title(name: str) -> str:
    """A game as its rule book spells it ("Hex Skirmish"), by its registry name."""
    try:
        return str(getattr(find_game(name), "title", name))
    except UnknownGame:
        return name


def restart_reason(old: Roster | None, new: Roster | None) -> str:
    """Why replacing roster `old` by `new` would start the running game afresh ("" when it can be carried)."""
    if old is None or new is None:
        return ""
    if old.game != new.game:
        return f"it is for another game ({game_title(new.game)}, not {game_title(old.game)})"
    added, gone = sorted(set(new.units) - set(old.units)), sorted(set(old.units) - set(new.units))
    if added or gone:
        parts = ([f"adds tag{'s' if len(added) > 1 else ''} {', '.join(map(str, added))}"] if added else []) + (
            [f"removes tag{'s' if len(gone) > 1 else ''} {', '.join(map(str, gone))}"] if gone else [])
        return "it " + " and ".join(parts)
    if _rules_part(old) != _rules_part(new):
        changed = sorted(t for t in new.units if _rules_part(Roster(new.game, {t: new.units[t]}, {}))
                         != _rules_part(Roster(old.game, {t: old.units[t]}, {})))
        settings = _settings_changed(_rules_part(old), _rules_part(new), _option_words(new.game))
        what = f"the profile, owner or base of {', '.join(new.units[t].name for t in changed)}" if changed else \
            f"the game's own settings ({settings})" if settings else "the game's own settings"
        return f"it changes {what}"
    return ""


def _option_words(game: str) -> dict[tuple[str, ...], Any]:
    """Each rule option's place in a roster -> the option (its label and default), for `game`."""
    try:
        return {tuple(f.path): f for f in find_game(game).option_fields()}
    except UnknownGame:
        return {}


def _settings_changed(old: Any, new: Any, options: dict[tuple[str, ...], Any], path: tuple[str, ...] = ()) -> str:
    """The game's own settings (a roster's keys other than its units) that differ, in words, a rule option by its
    label with its default for a value not set: "Turn limit 6 to 8"."""
    if path in options:
        field = options[path]
        old, new = field.default if old is None else old, field.default if new is None else new
        return "" if old == new else f"{field.label} {_said(old)} to {_said(new)}"
    if isinstance(old, dict) or isinstance(new, dict):
        a, b = (old if isinstance(old, dict) else {}), (new if isinstance(new, dict) else {})
        parts = [_settings_changed(a.get(k), b.get(k), options, (*path, k)) for k in sorted(set(a) | set(b))
                 if k not in ("units", "game") and a.get(k) != b.get(k)]
        return ", ".join(p for p in parts if p)
    if old == new:
        return ""
    name = " ".join(path).replace("_", " ")
    if isinstance(old, list) or isinstance(new, list):
        return name  # a list changed (cards, cells): its name says enough
    return f"{name} {_said(old)} to {_said(new)}"


def _said(value: Any) -> str:
    return "unset" if value is None else ("on" if value else "off") if isinstance(value, bool) else str(value)


def carry_refused(old: Any, new: Any) -> str:
    """Why pipeline `new` cannot carry on the game `old` was ruling ("no game was running", another game, units
    changed), or "" when it can."""
    if getattr(new, "resume", None) is None or getattr(old, "checkpoint", None) is None:
        return "no game was running"
    old_game, new_game = getattr(old, "game", None), getattr(new, "game", None)
    if getattr(old, "state", None) is None or new_game is None or getattr(new, "state", None) is None:
        return "no game was running"
    if old_game is None or old_game.name != new_game.name:
        return "another game was chosen"
    why = restart_reason(getattr(old, "roster", None), getattr(new, "roster", None))
    return f"the roster changed: {why}" if why else ""


def carry_game(old: Any, new: Any) -> str:
    """Make pipeline `new` carry on the game `old` was ruling; "" when carried, else why the game starts afresh
    (also when there was no game to carry)."""
    why = carry_refused(old, new)
    if why:
        return why
    resume, checkpoint = new.resume, old.checkpoint
    state = old.state
    if tuple(getattr(old, "terrain", ())) != tuple(getattr(new, "terrain", ())):
        fields = {f.name for f in dataclasses.fields(state)} if dataclasses.is_dataclass(state) else set()
        if "terrain" not in fields:
            return "the terrain changed and this game keeps its own"
        state = dataclasses.replace(state, terrain=new.state.terrain)
    cp = checkpoint(int(getattr(old, "_frame", -1)))
    # the detector starts afresh (a full scan), as the recording the new setup starts is replayed
    resume(dataclasses.replace(cp, state=state, calibration=new.calibration, pose_watch=new.pose_watch, detector=None))
    return ""
