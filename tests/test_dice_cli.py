"""`tablesight dice PHOTO... [--sides 6|20] [--json]` on real photos, an empty one and a file that is no image."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.dice import PHOTOS, load_labels, match
from vision.dice import Die
from webui.cli import main

ROOT = Path(__file__).resolve().parent.parent
PHOTO = "IMG_20191208_111642.jpg"


@pytest.fixture(scope="module")
def labelled() -> tuple[Path, np.ndarray, list[int]]:
    return next(p for p in load_labels(PHOTOS) if p[0].name == PHOTO)


def test_json_gives_each_labelled_die_its_face(labelled: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    path, boxes, faces = labelled
    assert main(["dice", str(path), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["image"] == str(path)
    dice = [Die(d["value"], d["sides"], tuple(d["centre_px"]), tuple(d["box_px"]), d["confidence"]) for d in out["dice"]]
    pairs, missed, false = match(dice, boxes, faces)
    assert (len(pairs), missed, false) == (len(faces), 0, 0)
    assert sum(truth != read for truth, read in pairs) <= 1  # the reader is ~97 % right, not 100 %
    for d in out["dice"]:
        assert set(d) == {"value", "sides", "centre_px", "box_px", "confidence"}
        assert d["sides"] == 6 and len(d["centre_px"]) == 2 and len(d["box_px"]) == 4 and 0 <= d["confidence"] <= 1


def test_a_line_a_photo_and_none_for_an_empty_one(labelled: tuple, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path, _, faces = labelled
    blank = tmp_path / "blank tray.png"
    cv2.imwrite(str(blank), np.full((400, 500, 3), 180, np.uint8))
    assert main(["dice", str(path), str(blank)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    name, read = first.split(": ")
    assert name == PHOTO
    values = [int(v) for v in read.split(" (")[0].split()]
    assert len(values) == len(faces) and all(1 <= v <= 6 for v in values)
    assert sum(min(values.count(f), faces.count(f)) for f in range(1, 7)) >= len(faces) - 1
    assert read.endswith(f"({len(faces)} dice)")
    assert second == "blank tray.png: (no dice)"
    assert main(["dice", str(blank), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"image": str(blank), "dice": []}


def test_a_file_that_is_not_an_image_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    fake = tmp_path / "tray.jpg"
    fake.write_text("these are my dice\n")
    done = subprocess.run([sys.executable, "-m", "webui.cli", "dice", str(fake)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert str(fake) in done.stderr and "not an image" in done.stderr


def test_a_missing_photo_and_a_wrong_sides_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dice", str(tmp_path / "none.jpg")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["dice", str(tmp_path / "none.jpg"), "--sides", "8"])
    assert stop.value.code == 2
    assert "--sides" in capsys.readouterr().err
