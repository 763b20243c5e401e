"""Printed tags and anchor mats: exact scale, cells identical to the published tag36h11 bitmaps, a ruler."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from session.printables import BASE_SIZES_MM, tag_size_for_base
from vision.tag_family import TAG_COUNT, tag_bitmap
from vision.tags import detect_tags
from webui.cli import main

DPI = 600
OFFICIAL = Path(__file__).resolve().parent / "data" / "apriltag_imgs_tag36h11"


def _pages(pdf: Path, dpi: int = DPI) -> list[np.ndarray]:
    doc = pdfium.PdfDocument(str(pdf))
    out = []
    for page in doc:
        img = page.render(scale=dpi / 72, grayscale=True).to_numpy()
        out.append(img if img.ndim == 2 else img[..., 0])
    doc.close()
    return out


def _cells(gray: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Sample the 10 x 10 cells of a detected, axis-aligned tag (corners: black square, AprilTag order)."""
    xs, ys = corners[:, 0], corners[:, 1]
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    cell = ((x1 - x0) + (y1 - y0)) / 16.0
    grid = np.zeros((10, 10), np.uint8)
    for r in range(10):
        for c in range(10):
            x = x0 + (c - 1 + 0.5) * cell
            y = y0 + (r - 1 + 0.5) * cell
            grid[r, c] = 255 if gray[int(round(y)), int(round(x))] > 127 else 0
    return grid


def test_bitmaps_match_the_published_pngs_for_all_587_ids() -> None:
    import cv2

    for tag_id in range(TAG_COUNT):
        png = cv2.imread(str(OFFICIAL / f"tag36_11_{tag_id:05d}.png"), cv2.IMREAD_UNCHANGED)
        assert png is not None, tag_id
        assert np.array_equal(png[..., 0], tag_bitmap(tag_id)), tag_id


def test_tag_sheet_is_exact_scale_and_cell_identical(tmp_path: Path) -> None:
    out = tmp_path / "tags.pdf"
    assert main(["tags", "--ids", "10-17", "--size", "0.75", "-o", str(out)]) == 0
    (page,) = _pages(out)
    tags = detect_tags(page, decimate=2)
    assert sorted(t.id for t in tags) == list(range(10, 18))
    for t in tags:
        side_in = t.side_px / DPI
        assert abs(side_in - 0.75) < 0.003, side_in  # within 0.4 % of the asked size
        assert np.array_equal(_cells(page, t.corners_px), tag_bitmap(t.id))


@pytest.mark.parametrize("base_mm", BASE_SIZES_MM)
def test_base_sizes_get_a_tag_that_fits(base_mm: int, tmp_path: Path) -> None:
    size = tag_size_for_base(base_mm)
    assert size * 10 / 8 * 2**0.5 <= base_mm / 25.4
    out = tmp_path / "b.pdf"
    assert main(["tags", "--ids", "20-21", "--base", str(base_mm), "-o", str(out)]) == 0
    (page,) = _pages(out, 300)
    tags = detect_tags(page, decimate=1)
    assert sorted(t.id for t in tags) == [20, 21]
    assert all(abs(t.side_px / 300 - size) < 0.006 for t in tags)


def test_ruler_ticks_are_a_tenth_of_an_inch_apart(tmp_path: Path) -> None:
    out = tmp_path / "tags.pdf"
    assert main(["tags", "--ids", "10", "-o", str(out)]) == 0
    (page,) = _pages(out)
    h = page.shape[0]
    # the inch ruler's baseline is 1.0" above the bottom margin (0.5"): scan just below it for ticks
    row = int(round((11.0 - 0.5 - 1.0 + 0.03) * DPI))
    assert row < h
    dark = np.flatnonzero(page[row, : int(6.55 * DPI)] < 128)  # the ruler, not its label
    runs = np.split(dark, np.flatnonzero(np.diff(dark) > 1) + 1)
    centres = np.array([r.mean() for r in runs if len(r)])
    assert len(centres) == 61  # 0 to 6 inches in tenths
    spacing = np.diff(centres) / DPI
    assert np.allclose(spacing, 0.1, atol=0.004)
    assert abs((centres[-1] - centres[0]) / DPI - 6.0) < 0.004


def test_mat_has_one_anchor_a_page_at_two_inches(tmp_path: Path) -> None:
    out = tmp_path / "mat.pdf"
    assert main(["mat", "--board", "30x22", "-o", str(out)]) == 0
    pages = _pages(out, 200)
    assert len(pages) == 4
    for anchor_id, page in enumerate(pages):
        (tag,) = detect_tags(page, decimate=2)
        assert tag.id == anchor_id
        assert abs(tag.side_px / 200 - 2.0) < 0.01


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["tags", "--ids", "abc", "-o", "x.pdf"], "is not a list of ids"),
        (["tags", "--ids", "10-700", "-o", "x.pdf"], "not a range within 0-586"),
        (["tags", "--ids", "10", "--size", "0.01", "-o", "x.pdf"], "not a printable tag size"),
        (["tags", "--ids", "10", "--size", "1.0", "--base", "25", "-o", "x.pdf"], "does not fit a 25 mm base"),
        (["tags", "--ids", "10", "-o", "/no/such/dir/x.pdf"], "does not exist"),
        (["mat", "--board", "thirty", "-o", "x.pdf"], "Board 'thirty'"),
    ],
)
def test_bad_printable_requests(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
