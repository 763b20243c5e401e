"""What a long-running program made to start, kept out of the garbage collector's full sweeps.

CPython's cyclic collector now and then sweeps every object alive ("generation 2"). In a server that has
imported FastAPI, OpenCV, shapely and the games that is ~165 thousand objects, and the sweep held the
interpreter lock for 70-89 ms at a time, every few seconds at 1080p: a stall of every thread, two or three
frames late (docs/bench.md). `settle()` collects once and then freezes what is left (`gc.freeze`): the
modules, the setup, the objects made to start, all there to stay. Later sweeps look only at what was made
after (~2 ms in the same server). Garbage made later is collected as before.
"""

from __future__ import annotations

import gc

_settled = False


def settle() -> None:
    """Collect, then freeze every object alive, once a process (a second call does nothing: what was made in
    between is not all there to stay)."""
    global _settled
    if _settled:
        return
    _settled = True
    gc.collect()
    gc.freeze()
