"""Tag sheets for each mount (topper, rim, flat), rendered to images and measured like a player with a ruler:
the black square is the size the sheet states, the tag decodes to its id, the cut line spares the tag's white
border, a topper's pin mark folds onto the tag's centre, a rim card's base centre is where the printed
`tag_offset_in` puts it when the pipeline's own measurement reads the page, and the printed roster values are
the ones asked for."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pypdfium2 as pdfium
import pytest

from session.printables import (
    CLEARANCE_IN,
    CUT_MARGIN_IN,
    MIN_READABLE_TAG_IN,
    RIM_BEVEL_IN,
    MountSheet,
    PrintableError,
    plan_sheet,
    rim_fit,
    white_side,
)
from tests.test_printables import _cells
from vision.positions import measure_bases
from vision.tag_family import tag_bitmap
from vision.tags import TagObservation, detect_tags
from webui.cli import main

DPI = 600
CUT_GREY = 140
"""Darker than this (and not black) is a cut line; the guides (base outline, feet) are lighter."""


def _render(pdf: Path, dpi: int = DPI) -> tuple[list[np.ndarray], list[str]]:
    """Each page as a grey image (OpenCV pixel convention) and its text with runs of white space made one."""
    doc = pdfium.PdfDocument(str(pdf))
    images, texts = [], []
    for page in doc:
        img = page.render(scale=dpi / 72, grayscale=True).to_numpy()
        images.append(img if img.ndim == 2 else img[..., 0])
        texts.append(" ".join(page.get_textpage().get_text_range().split()))
    doc.close()
    return images, texts


def _roster_values(text: str) -> dict[str, Any]:
    """The roster values a sheet prints, read back from its text."""
    m = re.search(r'("base_mm": [^,]+, )?"base_height_in": [^,]+, "tag_in": [^,]+, "tag_offset_in": \[[^\]]*\]', text)
    assert m, text
    return dict(json.loads("{" + m.group(0) + "}"))


def _black_square_in(page: np.ndarray, tag: TagObservation) -> tuple[float, float]:
    """The black square's width and height, inches, from its dark pixels (not from the detector)."""
    xs, ys = tag.corners_px[:, 0], tag.corners_px[:, 1]
    pad = 0.25 * (xs.max() - xs.min())
    x0, x1 = int(xs.min() - pad), int(xs.max() + pad)
    y0, y1 = int(ys.min() - pad), int(ys.max() + pad)
    dark = page[y0:y1, x0:x1] < 60  # black only: the cut lines around are grey
    cols, rows = np.flatnonzero(dark.any(axis=0)), np.flatnonzero(dark.any(axis=1))
    return (cols[-1] - cols[0] + 1) / DPI, (rows[-1] - rows[0] + 1) / DPI


def _centroid_of_dark(page: np.ndarray, x: float, y: float, half_in: float, below: int = 128) -> np.ndarray:
    h = int(round(half_in * DPI))
    xi, yi = int(round(x)), int(round(y))
    win = page[yi - h : yi + h + 1, xi - h : xi + h + 1] < below
    rr, cc = np.nonzero(win)
    assert rr.size, (x, y)
    return np.array([cc.mean() + xi - h, rr.mean() + yi - h])


def _first_run(line: np.ndarray, below: int, start: int) -> int:
    """Index of the first pixel from `start` (walking up the array's order) darker than `below`."""
    hits = np.flatnonzero(line[start:] < below)
    assert hits.size, "no line found"
    return start + int(hits[0])


def _check_tags(page: np.ndarray, ids: list[int], size_in: float) -> list[TagObservation]:
    tags = sorted(detect_tags(page, decimate=2), key=lambda t: t.id)
    assert [t.id for t in tags] == ids
    for t in tags:
        assert abs(t.side_px / DPI - size_in) <= 0.01 * size_in, (t.id, t.side_px / DPI)
        w, h = _black_square_in(page, t)
        assert abs(w - size_in) <= 0.01 * size_in and abs(h - size_in) <= 0.01 * size_in, (t.id, w, h)
        assert np.array_equal(_cells(page, t.corners_px), tag_bitmap(t.id)), t.id
    return tags


def _cut_spares_the_white_border(page: np.ndarray, tag: TagObservation, size_in: float) -> None:
    """Left and right of the black square, the cut line lies beyond the tag's one-cell white border."""
    cx, cy = tag.center_px
    row = page[int(round(cy)), :]
    half = size_in * DPI / 2
    cell_px = size_in / 8 * DPI
    right = _first_run(row, CUT_GREY, int(cx + half + 2))
    left_side = row[: int(cx - half - 2)][::-1]
    left = int(cx - half - 2) - _first_run(left_side, CUT_GREY, 0)
    for gap in (right - (cx + half), (cx - half) - left):
        assert gap >= cell_px + CUT_MARGIN_IN * DPI * 0.8, (gap / DPI, cell_px / DPI)
        assert gap <= cell_px + CUT_MARGIN_IN * DPI + 4, gap / DPI


def _page_as_table(dpi: int) -> Any:
    """A stand-in calibration: the printed page lying face up, seen from above; page-up is +y, 1 inch = dpi px."""

    def image_to_table(px: np.ndarray, z: Any) -> np.ndarray:
        px = np.asarray(px, dtype=float)
        return np.column_stack([px[:, 0] / dpi, -px[:, 1] / dpi])

    return SimpleNamespace(
        layout=SimpleNamespace(anchors={}),
        image_to_table=image_to_table,
        position_pm=lambda centres, z, noise: np.zeros(len(centres)),
    )


# --- toppers -----------------------------------------------------------------------------------------------


def test_topper_cards_exact_scale_pin_mark_folds_onto_the_tag_centre(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "toppers.pdf"
    assert main(["tags", "--ids", "10-15", "--mount", "topper", "--pin", "1.6", "--base-height", "0.2",
                 "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    (page,), (text,) = _render(out)
    asked = {"base_height_in": 1.8, "tag_in": 0.7, "tag_offset_in": [0, 0]}
    assert _roster_values(text) == asked
    assert _roster_values(printed) == asked
    assert "fold on the dashed line" in text and 'the tag face 1.6" above the base\'s top' in text
    tags = _check_tags(page, list(range(10, 16)), 0.7)
    cell_px = 0.7 / 8 * DPI
    for t in tags:
        _cut_spares_the_white_border(page, t, 0.7)
        cx, cy = t.center_px
        # the fold: the dashed line below the tag, the row with the most grey across the card
        band = page[int(cy + 5 * cell_px) : int(cy + 5 * cell_px + 0.3 * DPI), int(cx - 4 * cell_px) : int(cx + 4 * cell_px)]
        grey = ((band > 40) & (band < 200)).sum(axis=1)
        fold = int(cy + 5 * cell_px) + int(np.argmax(grey))
        assert grey.max() > 0.4 * band.shape[1]
        expected = np.array([cx, 2 * fold - cy])  # the tag centre mirrored across the fold
        pin = _centroid_of_dark(page, expected[0], expected[1], 0.14)
        assert np.hypot(*(pin - expected)) / DPI < 0.01, (t.id, (pin - expected) / DPI)
        assert f"id {t.id}" in text


def test_topper_defaults_match_the_readme_and_small_bases_get_a_card_no_wider_than_the_base() -> None:
    sheet = plan_sheet("topper")
    assert sheet.roster_values() == {"base_height_in": 1.85, "tag_in": 0.7, "tag_offset_in": [0, 0]}
    assert plan_sheet("topper", base_mm=32).tag_in == 0.7
    small = plan_sheet("topper", base_mm=20)
    assert white_side(small.tag_in) + 2 * CUT_MARGIN_IN <= 20 / 25.4 < white_side(small.tag_in + 0.01) + 2 * CUT_MARGIN_IN


# --- rim tags ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("base_mm,clearance,size", [(60, None, None), (80, 0.45, None), (60, 0.3, 0.5)])
def test_rim_cards_put_the_base_centre_where_the_roster_says(base_mm: int, clearance: float | None,
                                                             size: float | None, tmp_path: Path) -> None:
    out = tmp_path / "rim.pdf"
    argv = ["tags", "--ids", "20-22", "--mount", "rim", "--base", str(base_mm), "-o", str(out)]
    argv += ["--clearance", str(clearance)] if clearance is not None else []
    argv += ["--size", str(size)] if size is not None else []
    assert main(argv) == 0
    (page,), (text,) = _render(out)
    values = _roster_values(text)
    fit = rim_fit(base_mm, clearance if clearance is not None else CLEARANCE_IN, size)
    assert values == {"base_mm": base_mm, "base_height_in": 0.125, "tag_in": fit.tag_in,
                      "tag_offset_in": [0, fit.offset_in]}
    if size is not None:
        assert fit.tag_in == size
    tag_in, offset = values["tag_in"], values["tag_offset_in"]
    tags = _check_tags(page, [20, 21, 22], tag_in)
    # the pipeline's own measurement, given the printed offset, finds the base centre at the printed centre dot
    fixes = measure_bases(tags, _page_as_table(DPI), offsets={t.id: tuple(offset) for t in tags})
    radius = base_mm / 25.4 / 2
    c = clearance if clearance is not None else CLEARANCE_IN
    for t, fix in zip(tags, fixes, strict=True):
        assert abs(fix.yaw_deg) < 0.2  # printed upright: the tag's +x is the page's right
        centre_px = np.array([fix.x * DPI, -fix.y * DPI])
        dot = _centroid_of_dark(page, centre_px[0], centre_px[1], 0.06)
        assert np.hypot(*(dot - centre_px)) / DPI < 0.01, (t.id, (dot - centre_px) / DPI)
        # up the centre line from the dot: the card's inner cut edge outside the feet's circle, a white border
        # of one cell at least, the black square, its white border again, then the card's arc on the base's top
        column = page[:, int(round(dot[0]))][::-1]  # walking up the page
        start = page.shape[0] - int(round(dot[1])) + int(0.03 * DPI)
        inner_cut = _first_run(column, CUT_GREY, start)
        black_bottom = _first_run(column, 60, inner_cut + 8)
        assert (inner_cut - start) / DPI + 0.03 >= c - 0.005
        assert (black_bottom - inner_cut) / DPI >= tag_in / 8
        black_top = black_bottom + int(tag_in * DPI) - 2
        arc = _first_run(column, CUT_GREY, black_top + int(tag_in / 8 * DPI))
        assert abs((arc - start) / DPI + 0.03 - (radius - RIM_BEVEL_IN)) < 0.01
        assert (arc - black_top) / DPI >= tag_in / 8
        _cut_spares_the_white_border(page, t, tag_in)
    assert "write its id under the base" in text


def test_rim_fit_is_the_largest_tag_between_the_feet_and_the_rim() -> None:
    for base_mm in (55, 60, 70, 80, 100, 120):
        for clearance in (0.2, 0.3, 0.5):
            try:
                fit = rim_fit(base_mm, clearance)
            except PrintableError:
                continue
            top = base_mm / 25.4 / 2 - RIM_BEVEL_IN - CUT_MARGIN_IN
            half = white_side(fit.tag_in) / 2
            assert fit.offset_in - half - CUT_MARGIN_IN >= clearance - 1e-9  # clear of the feet
            assert math.hypot(fit.offset_in + half, half) <= top + 0.001  # inside the base's top (to 0.001")
            with pytest.raises(PrintableError):
                rim_fit(base_mm, clearance, round(fit.tag_in + 0.01, 2))  # and nothing bigger fits


@pytest.mark.parametrize("argv", [
    ["--base", "32"],
    ["--base", "50"],
    ["--base", "60", "--clearance", "0.7"],
])
def test_rim_refuses_when_no_readable_tag_fits(argv: list[str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rim.pdf"
    assert main(["tags", "--ids", "10", "--mount", "rim", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "toppers" in err and "wider base" in err, err
    assert f'{MIN_READABLE_TAG_IN:g}"' in err
    assert not out.exists()


# --- flat tags ---------------------------------------------------------------------------------------------


def test_flat_sheet_says_it_is_for_bases_without_a_figure(tmp_path: Path) -> None:
    out = tmp_path / "flat.pdf"
    assert main(["tags", "--ids", "30-31", "--base", "32", "--paper", "a4", "-o", str(out)]) == 0
    (page,), (text,) = _render(out)
    assert abs(page.shape[1] / DPI - 210 / 25.4) < 0.01  # A4
    assert "no figure" in text and "never seen" in text and "topper cards instead" in text
    assert _roster_values(text) == {"base_mm": 32, "base_height_in": 0.125, "tag_in": 0.65, "tag_offset_in": [0, 0]}
    _check_tags(page, [30, 31], 0.65)


@pytest.mark.parametrize("mount", ["flat", "topper", "rim"])
def test_every_sheet_draws_the_tag_axes_and_the_ruler(mount: str, tmp_path: Path) -> None:
    out = tmp_path / "s.pdf"
    assert main(["tags", "--ids", "10", "--mount", mount, "--base", "60", "-o", str(out)]) == 0
    (page,), (text,) = _render(out)
    assert "The tag's own axes" in text and "+x" in text and "+y" in text and "away from its printed id" in text
    assert 'inches: 6" must measure 6"' in text and "150 mm must measure 150 mm" in text


# --- bad input: one sentence, exit 2 -----------------------------------------------------------------------


@pytest.mark.parametrize("argv,needle", [
    (["--mount", "flat", "--pin", "2"], "--pin"),
    (["--mount", "rim", "--base", "60", "--pin", "2"], "--pin"),
    (["--mount", "topper", "--clearance", "0.3"], "--clearance"),
    (["--mount", "rim"], "--base"),
    (["--mount", "rim", "--base", "60", "--clearance", "2"], "--clearance 2"),
    (["--mount", "rim", "--base", "60", "--clearance", "-0.1"], "--clearance -0.1"),
    (["--mount", "rim", "--base", "60", "--clearance", "nan"], "--clearance"),
    (["--mount", "rim", "--base", "60", "--size", "1"], "make --size 0.56 or less"),
    (["--mount", "rim", "--base", "60", "--size", "nan"], "--size"),
    (["--mount", "topper", "--pin", "0"], "--pin 0"),
    (["--mount", "topper", "--pin", "inf"], "--pin inf"),
    (["--mount", "topper", "--base-height", "-1"], "--base-height -1"),
    (["--mount", "topper", "--base", "5"], "--base 5"),
])
def test_bad_mount_requests(argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.pdf"
    assert main(["tags", "--ids", "10", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not out.exists()


def test_an_unknown_mount_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["tags", "--ids", "10", "--mount", "hanging", "-o", "x.pdf"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--mount" in err and "'topper'" in err and err.count("\n") == 1, err


def test_roster_values_are_what_the_roster_reads() -> None:
    from rules.roster import parse_roster

    sheet = plan_sheet("rim", base_mm=60)
    unit = {"tag": 12, "profile": "warrior", "owner": "red", **sheet.roster_values()}
    (read,) = parse_roster({"game": "valknut", "units": [unit]}).units.values()
    assert read.tag_offset_in == (0.0, sheet.offset_in) and read.printed_tag_in == sheet.tag_in
    assert read.base_height_in == sheet.face_height_in and read.base_mm == 60
    assert MountSheet("topper", 0.7, pin_in=1.725).roster_values()["base_height_in"] == 1.85


# --- the web page's download -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The real app without its frame loop (the downloads need none)."""
    from session.settings import Settings
    from tests.webui_server import LocalClient
    from webui.server import create_app

    root = tmp_path_factory.mktemp("printables-web")
    return LocalClient(create_app(Settings(sessions_dir=root / "sessions", setup_dir=root / "setup")))


def test_download_prints_the_mount_asked_for(client: Any, tmp_path: Path) -> None:
    r = client.get("/download/tags.pdf", params={"ids": "10-11", "mount": "topper", "pin_in": 1.5, "base_mm": 32,
                                                 "clearance_in": 0.3})
    assert r.status_code == 200 and r.content[:4] == b"%PDF", r.text
    assert 'filename="tags-10-11-topper.pdf"' in r.headers["content-disposition"]
    (tmp_path / "t.pdf").write_bytes(r.content)
    (page,), (text,) = _render(tmp_path / "t.pdf")
    assert _roster_values(text) == {"base_mm": 32, "base_height_in": 1.625, "tag_in": 0.7, "tag_offset_in": [0, 0]}
    _check_tags(page, [10, 11], 0.7)
    r = client.get("/download/tags.pdf", params={"ids": "10", "mount": "rim", "base_mm": 60, "clearance_in": 0.3,
                                                 "pin_in": 2, "base_height_in": 0.2})
    assert r.status_code == 200, r.text
    (tmp_path / "r.pdf").write_bytes(r.content)
    _, (text,) = _render(tmp_path / "r.pdf")
    assert _roster_values(text) == {"base_mm": 60, "base_height_in": 0.2, "tag_in": 0.56, "tag_offset_in": [0, 0.68]}


@pytest.mark.parametrize("params,needle", [
    ({"mount": "rim", "base_mm": 32}, "print toppers instead (the topper mount) or use a wider base"),
    ({"mount": "rim"}, "give the base's diameter in mm (the base size)"),
    ({"mount": "rim", "base_mm": 60, "size": 1}, "make the tag size 0.56 or less or the feet clearance smaller"),
    ({"mount": "rim", "base_mm": 60, "clearance_in": 3}, "The feet clearance 3 is not a radius inside a 60 mm base"),
    ({"mount": "hanging"}, "The mount hanging is not one of the choices offered"),
    ({"mount": "topper", "pin_in": -1}, "The pin height (inches) -1 is not a number more than 0"),
])
def test_download_refuses_in_one_sentence_of_the_page_words(client: Any, params: dict[str, Any], needle: str) -> None:
    r = client.get("/download/tags.pdf", params={"ids": "10", **params})
    assert r.status_code in (400, 422)
    detail = r.json()["detail"]
    assert needle in detail and "--" not in detail and detail.count(". ") == detail.count("e.g. "), detail
