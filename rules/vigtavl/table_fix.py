"""What the players must do on the table after a ruling: the physical fix, in words with the hex named.

The state is authoritative (game.py); when a ruling leaves a piece somewhere the table does not show it, or adds
or removes one, its verdict says what to do with the piece, in the rule book's words: "the attacker must retreat
... back to where they began their movement" (Retreat), "Place the piece on the victor's nearest developed hex"
(Land Victory), "Remove it from the board" into the victor's ship graveyard (Sea Victory). Each sentence is a
whole sentence ending in a full stop, said after the verdict's message.
"""

from __future__ import annotations

from rules.engine import listed
from rules.hexgrid import Edge, Hex
from rules.vigtavl.state import Piece, VigtavlState, title


def hex_name(h: Hex) -> str:
    return f"[{h.q}, {h.r}]"


def edge_name(e: Edge) -> str:
    """An edge as the two hexes it stands between: "between [0, 0] and [1, 0]"."""
    a, b = e.hexes
    return f"between {hex_name(a)} and {hex_name(b)}"


def standing(state: VigtavlState, p: Piece) -> str:
    """Where the state has a piece, as the table shows it: "on [-1, 0]", "aboard Freighter 16 on [-2, 0]", "off
    the map" (not yet placed, sunk)."""
    if p.aboard is not None:
        carrier = state.piece(p.aboard)
        at = state.where(p)
        name = title(carrier) if carrier is not None else f"freighter {p.aboard}"
        return f"aboard {name}" + (f" on {hex_name(at)}" if at is not None else "")
    if p.hex is None or p.sunk_by is not None:
        return "off the map"
    return f"on {hex_name(p.hex)}"


def put_back(state: VigtavlState, p: Piece, why: str = "") -> str:
    """A refused move, load or placement, or a retreat: the piece goes back where the state keeps it."""
    where = standing(state, p)
    if where == "off the map":
        return f"Take {title(p)} off the map{why}."
    return f"Put {title(p)} back {where}{why}."


def prisoner_to(p: Piece, prison: Hex, victor: str) -> str:
    """Land Victory: the captured knight goes to the victor's nearest developed hex."""
    return f"The prisoner goes to {hex_name(prison)}: put {title(p)} there, {victor}'s prisoner."


def sunk(p: Piece, cargo: tuple[Piece, ...], victor: str) -> str:
    """Sea Victory: the ship (with what it carried) leaves the board for the victor's ship graveyard."""
    aboard = f", with {listed([title(c) for c in cargo])} aboard," if cargo else ""
    return f"Take {title(p)}{aboard} off the table to {victor}'s ship graveyard."


def moves_onto(p: Piece, h: Hex) -> str:
    """Occupation after a won attack or a seizure: the victor moves onto the hex."""
    return f"Move {title(p)} onto {hex_name(h)}."


def goes_with(p: Piece, h: Hex) -> str:
    """Towing: the artillery moves with the knight."""
    return f"Move {title(p)} along to {hex_name(h)} too."


def boards(p: Piece, freighter: Piece, at: Hex | None) -> str:
    """A knight boarding (or picked up by) a freighter rides on it."""
    return f"Put {title(p)} on {title(freighter)}" + (f" at {hex_name(at)}." if at is not None else ".")


def development_changes(kind: str, h: Hex, old: str, new: str) -> str:
    """A seized development changes hands: its marker is the new owner's."""
    return f"Replace {old}'s {kind} on {hex_name(h)} with one of {new}'s."


def wall_changes(e: Edge, new: str) -> str:
    return f"Replace the wall {edge_name(e)} with one of {new}'s."


def wall_off(e: Edge) -> str:
    """A breached wall is removed."""
    return f"Take the wall {edge_name(e)} off the table."


def wall_on(e: Edge, owner: str) -> str:
    return f"Put a wall of {owner}'s {edge_name(e)}."


def wall_moved(a: Edge, b: Edge) -> str:
    return f"Move the wall {edge_name(a)} to stand {edge_name(b)}."


def development_on(kind: str, h: Hex, owner: str) -> str:
    return f"Put {owner}'s {kind} on {hex_name(h)}."


def recruited(was: str, recruit: Piece, freighter: Piece | None) -> str:
    """Discharge and recruit: the same piece leaves where it stood (`was`, from `standing`) for the recruit's place."""
    to = f"on {title(freighter)}" if freighter is not None else f"on {hex_name(recruit.hex)}" if recruit.hex else "in play"
    return f"Take {title(recruit)} from {was.removeprefix('on ')} and put it {to} as the recruit."


def new_unit(p: Piece, freighter: Piece | None) -> str:
    """A unit built (or a recruit) goes on its hex or aboard the freighter it was built on."""
    if freighter is not None:
        return f"Put the new {title(p)} on {title(freighter)}."
    assert p.hex is not None
    return f"Put the new {title(p)} on {hex_name(p.hex)}."
