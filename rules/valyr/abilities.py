"""Valyr abilities as hooks: a small registry of named effects a unit card's ability can point at.

The rule book says only that abilities are Passive or Active ("Active abilities take an action to use")
and that they "explain what they do and how they work and can change the gameplay rules". It names no
particular ability, so every hook here is Tablesight's own, offered so that cards can give an ability
an effect the rules engine applies:

- passive hooks are consulted at fixed points of the rules: when a unit climbs (`climb_factor`), when it
  attacks (`attack_mods`: strength/skill) and when it is attacked (`defense_mods`: armor/dodge);
- active hooks are used with the "ability" action and spend one of the unit's actions (`use`).

An ability with no hook is kept as text on the card and has no effect in the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rules.engine import Inches, Json


@dataclass(frozen=True)
class AbilityUse:
    """What an active hook is told: the user, the target, and how far apart their bases are (inches)."""

    user_name: str
    target_name: str
    friendly: bool
    distance_in: Inches
    distance_pm: Inches
    target_distress: int


@dataclass(frozen=True)
class AbilityEffect:
    """What an active hook decides: whether it may be used and, if so, the change to the target's distress.

    allowed: True, False, or None for "too close to call" (the distance is inside the ±).
    """

    allowed: bool | None
    message: str
    distress_change: int = 0


Params = Mapping[str, Json]


@dataclass(frozen=True)
class AbilityHook:
    """A named effect. kind: "passive" or "active". Unused hook points stay None."""

    name: str
    kind: str
    summary: str
    required: tuple[str, ...] = ()
    climb_factor: Callable[[Params], float] | None = None
    attack_mods: Callable[[Params], tuple[int, int]] | None = None
    defense_mods: Callable[[Params], tuple[int, int]] | None = None
    use: Callable[[Params, AbilityUse], AbilityEffect] | None = None
    needs_target: bool = False

    def check_params(self, params: Params) -> str:
        """'' when the card gives every parameter this hook needs as a number, else one sentence saying which."""
        for key in self.required:
            value = params.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f'hook "{self.name}" needs a number "{key}"; add it to the Hook object.'
        return ""


def _int(params: Params, key: str) -> int:
    return int(params.get(key, 0))


def _mend(params: Params, use: AbilityUse) -> AbilityEffect:
    reach = float(params["reach_in"])
    amount = int(params["amount"])
    if not use.friendly:
        return AbilityEffect(False, f"Mend works only on a friendly unit; {use.target_name} is an enemy.")
    d, pm = use.distance_in, use.distance_pm
    if d - pm > reach:
        return AbilityEffect(False, f'{use.target_name} is {d:.2f}" away, beyond Mend\'s reach of {reach:g}".')
    if d + pm > reach:
        return AbilityEffect(None, f'{use.target_name} is {d:.2f}" ± {pm:.2f}" away, Mend reaches {reach:g}": '
                                   "too close to call; measure by hand.")
    healed = min(amount, use.target_distress)
    return AbilityEffect(True, f"{use.user_name} mends {use.target_name}: {healed} distress removed.", -healed)


HOOKS: dict[str, AbilityHook] = {
    h.name: h
    for h in (
        AbilityHook("climber", "passive", "Climbs as though a handhold were present: climbing costs single.",
                    climb_factor=lambda p: 1.0),
        AbilityHook("keen_eye", "passive", "Adds `skill` to the unit's skill on every attack.",
                    required=("skill",), attack_mods=lambda p: (0, _int(p, "skill"))),
        AbilityHook("heavy_hitter", "passive", "Adds `strength` d20s to every attack.",
                    required=("strength",), attack_mods=lambda p: (_int(p, "strength"), 0)),
        AbilityHook("stalwart", "passive", "Adds `armor` to the unit's armor when it is attacked.",
                    required=("armor",), defense_mods=lambda p: (_int(p, "armor"), 0)),
        AbilityHook("evasive", "passive", "Adds `dodge` to the unit's dodge when it is attacked.",
                    required=("dodge",), defense_mods=lambda p: (0, _int(p, "dodge"))),
        AbilityHook("mend", "active", "Removes `amount` distress from a friendly unit (itself included) whose "
                    "base is within `reach_in` inches, edge to edge.", required=("amount", "reach_in"),
                    use=_mend, needs_target=True),
    )
}
"""Every hook a card may name, by name."""
