"""A started server keeps what it made to start out of the garbage collector's full sweeps (session/heap.py).

Run in a fresh interpreter: the tests' own process has settled its heap long before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from session.heap import settle

STARTED = """
import gc, json, sys, tempfile
from pathlib import Path
from fastapi.testclient import TestClient
from session.settings import Settings
from webui.server import create_app
with tempfile.TemporaryDirectory() as tmp:
    app = create_app(Settings(source_kind="sample", sessions_dir=Path(tmp) / "s", setup_dir=Path(tmp) / "u"))
    before = gc.get_freeze_count()
    with TestClient(app):
        assert app.state.runtime.live.wait_for_frame(60)
        swept = len(gc.get_objects(2))
        print(json.dumps({"before": before, "frozen": gc.get_freeze_count(), "swept": swept}))
"""


def test_a_started_server_sweeps_a_small_part_of_its_heap() -> None:
    """The bundled sample served: ~165 thousand objects made to start are frozen when the server starts (none
    before), and a full sweep then looks at a small share of what is alive."""
    out = subprocess.run([sys.executable, "-c", STARTED], capture_output=True, text=True, timeout=180,
                         cwd=Path(__file__).resolve().parents[1], check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["before"] == 0
    assert got["frozen"] > 50_000
    assert got["swept"] < got["frozen"] / 10


def test_settling_again_freezes_nothing_more() -> None:
    """Once a process: what is made after the first settle is left to the collector."""
    import gc

    settle()
    frozen = gc.get_freeze_count()
    kept = [[k] for k in range(1000)]  # new containers, alive
    settle()
    # nothing more frozen (a frozen object another test's thread lets go of leaves the count, so it may shrink)
    assert gc.get_freeze_count() <= frozen
    assert len(kept) == 1000
