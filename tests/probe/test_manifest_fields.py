"""A manifest field of the wrong type is refused in one sentence, exit 2, and nothing of the session is touched
(the trust issue's item 13: a "game" of 5 or ["valknut"] replayed without its setup, 39 illegal verdicts instead
of 3, and exit 0)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(("key", "value", "words"), [
    ("game", 5, '"game": 5, which is not a game\'s name'),
    ("game", ["valknut"], "\"game\": ['valknut'], which is not a game's name"),
    ("created", {"at": 1}, '"created"'),
    ("fps", "ten", '"fps": ten, which is not a frame rate'),
    ("fps", -1, '"fps": -1, which is not a frame rate'),
    ("setup_edits", "../../elsewhere.jsonl", "not a file inside the session"),
])
def test_a_manifest_field_of_the_wrong_type_is_one_sentence(key: str, value: object, words: str,
                                                            tmp_path: Path) -> None:
    session = tmp_path / "game"
    shutil.copytree(SAMPLE, session)
    manifest = json.loads((session / "manifest.json").read_text(encoding="utf-8"))
    manifest[key] = value
    (session / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    before = _digest(session)
    done = subprocess.run([sys.executable, "-m", "webui.cli", "replay", str(session), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    err = done.stderr.strip()
    assert done.returncode == 2, (done.returncode, err[-300:])
    assert done.stdout == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert words in err and "restore the manifest from the recording" in err, err
    assert _digest(session) == before
