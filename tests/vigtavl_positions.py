"""Tiny Vigtavl positions for the rule tests: a scenario dict judged through the real game."""

from __future__ import annotations

import random
from typing import Any

from rules.engine import find_game

LAND2 = {"hexagon": 2, "default": {"terrain": "land"}}
"""19 land hexes around (0, 0); directions: 0 E (+1, 0), 1 NE (+1, -1), 2 NW (0, -1), 3 W, 4 SW, 5 SE."""


def board(default: str = "land", radius: int = 2, /, **cells: str) -> dict[str, Any]:
    """A hexagon board; cells given as q_r="terrain" (negative numbers as m1 = -1), e.g. board(m1_0="sea")."""

    def num(s: str) -> int:
        return -int(s[1:]) if s.startswith("m") else int(s)

    listed = [{"hex": [num(k.split("_")[0]), num(k.split("_")[1])], "terrain": v} for k, v in cells.items()]
    return {"hexagon": radius, "default": {"terrain": default}, "cells": listed}


def unit(tag: int, profile: str, owner: str, q: int | None = None, r: int | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"tag": tag, "profile": profile, "owner": owner}
    if q is not None and r is not None:
        out["hex"] = [q, r]
    out.update(more)
    return out


def scenario(units: list[dict[str, Any]], *, brd: dict[str, Any] | None = None, devs: list[Any] = (),  # type: ignore[assignment]
             walls: list[Any] = (), state: dict[str, Any] | None = None, action: dict[str, Any] | None = None,  # type: ignore[assignment]
             question: dict[str, Any] | None = None, seed: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"game": "vigtavl", "seed": seed, "board": brd or LAND2, "units": units,
                           "developments": [{"hex": list(h), "kind": k, "owner": o} for h, k, o in devs],
                           "walls": [{"edge": list(e), "owner": o} for e, o in walls],
                           "state": {"players": ["red", "blue"], **(state or {})}}
    if action is not None:
        out["action"] = action
    if question is not None:
        out["question"] = question
    return out


def judge(scn: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    return find_game("vigtavl").judge(scn, random.Random(scn.get("seed", 0) if seed is None else seed))


def judge_given(scn: dict[str, Any]) -> dict[str, Any]:
    """Judge with no generator: the dice are only the action's "rolls"; a roll missing is answered as waiting."""
    return find_game("vigtavl").judge({k: v for k, v in scn.items() if k != "seed"}, None)


def act(kind: str, unit_id: int | None = None, /, **params: Any) -> dict[str, Any]:
    return {"kind": kind, "unit": unit_id, "params": params}


def rules_of(answer: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in answer["verdicts"]]


def messages(answer: dict[str, Any]) -> str:
    return " | ".join(v["message"] for v in answer["verdicts"])
