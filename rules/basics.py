"""The rules' shared words: lengths in inches, units named by tag id, JSON values, and the errors of input
that cannot be read. The bottom of `rules/`: every rules module may import it, it imports none of them
(`rules.engine` re-exports all of it)."""

from __future__ import annotations

from typing import Any

Inches = float
"""A length on the table, in inches."""
UnitId = int
"""A unit is named by the tag id on its base (10 and up)."""
Json = Any
"""A value that `json.dumps` accepts."""


class RulesInputError(ValueError):
    """Malformed input to the rules: a roster, a unit card, a scenario or an action that cannot be read."""


class UnknownGame(RulesInputError):
    """A game name that is not registered."""


class ScenarioError(RulesInputError):
    """A judge scenario that cannot be read; the message names the field and what would fix it."""


class RosterError(RulesInputError):
    """A roster or unit card that cannot be read; the message names the entry and the field."""


class ActionError(RulesInputError):
    """A declared action whose fields are missing or of the wrong kind (not an illegal move: that is a verdict)."""
