"""A lens measured at one resolution used at another: scaled to a frame of the same aspect ratio about OpenCV's
pixel centres (calibration/camera.py `scaled_to`), set aside for another aspect ratio (calibration/lens_fit.py).

Ground truth is the renderer's own camera at each size (`camera_looking_at`: f = (w/2) / tan(hfov/2), principal
point at ((w-1)/2, (h-1)/2)), and the same scene rendered at 640x480 and 1280x960: its tags, detected in both
frames, land where the pixel-centre rule says (mean 0.01-0.02 px; the naive cx * s misses by 0.5 px), and the
table calibrated from the 1280x960 frame with the 640x480 lens puts the anchors and bases within 0.006"."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.layout import default_layout
from calibration.lens_fit import aspect_words, fit_lens, same_aspect
from calibration.table import calibrate_table, collect_anchors
from vision.synth.render import BasePlacement, CameraPose, Rendered, Scene, camera_looking_at, render_scene
from vision.tags import TagObservation, detect_tags

BOARD = (30.0, 22.0)
DIST = [-0.18, 0.04, 0.0005, -0.0003, 0.0]
"""A webcam's barrel distortion, with a little tangential (normalised coordinates: the same at every size)."""
BASES = {12: (4.0, 18.0), 15: (26.0, 3.0), 17: (15.0, 11.0), 19: (28.0, 20.0)}


def _pose(size: tuple[int, int], dist: list[float] | None = None) -> CameraPose:
    return camera_looking_at(BOARD, 40.0, 25.0, 10.0, size, 70.0, dist)


def _render(size: tuple[int, int]) -> tuple[Rendered, dict[int, TagObservation]]:
    bases = tuple(BasePlacement(tag=t, x=x, y=y, z_in=0.125) for t, (x, y) in BASES.items())
    rendered = render_scene(Scene.at(_pose(size, DIST), BOARD, anchor_turns={0: 1, 1: 2, 2: 3, 3: 0}, bases=bases), 5)
    return rendered, {t.id: t for t in detect_tags(cv2.cvtColor(rendered.image, cv2.COLOR_BGR2GRAY))}


@pytest.mark.parametrize(("small", "large"), [((640, 480), (1280, 960)), ((1280, 720), (1920, 1080)),
                                              ((1920, 1080), (1280, 720)), ((640, 360), (1920, 1080))])
def test_scaled_lens_is_the_camera_at_the_other_size(small: tuple[int, int], large: tuple[int, int]) -> None:
    measured, truth = _pose(small, DIST).camera, _pose(large, DIST)
    scaled = CameraModel(small, measured.K, measured.dist, 0.25).scaled_to(large)
    np.testing.assert_allclose(scaled.K, truth.camera.K, rtol=0, atol=1e-9)
    assert scaled.image_size == large and list(scaled.dist) == DIST
    assert scaled.rms_px == pytest.approx(0.25 * large[0] / small[0])
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.uniform(-2, 32, 200), rng.uniform(-2, 24, 200), rng.uniform(0, 4, 200)])
    ours, _ = cv2.projectPoints(points, truth.rvec, truth.tvec, scaled.K, scaled.dist)
    theirs, _ = cv2.projectPoints(points, truth.rvec, truth.tvec, truth.camera.K, truth.camera.dist)
    assert float(np.max(np.abs(ours - theirs))) < 1e-6


def test_scaling_keeps_skew_and_per_axis_rounding() -> None:
    K = np.array([[1000.0, 2.0, 640.3], [0.0, 1010.0, 359.1], [0.0, 0.0, 1.0]])
    scaled = CameraModel((1280, 720), K, np.zeros(5), 0.3).scaled_to((854, 480))
    sx, sy = 854 / 1280, 480 / 720
    expected = np.array([[1000 * sx, 2 * sx, 640.8 * sx - 0.5], [0, 1010 * sy, 359.6 * sy - 0.5], [0, 0, 1]])
    np.testing.assert_allclose(scaled.K, expected, atol=1e-12)


def test_rendered_tags_land_where_the_pixel_centre_rule_puts_them() -> None:
    """The same table at 640x480 and 1280x960: every detected corner of the small frame, scaled by
    (u + 0.5) * 2 - 0.5, meets the large frame's within 0.4 px, 0.02 px on average; cx * 2 misses by half a pixel."""
    (_, small), (_, large) = _render((640, 480)), _render((1280, 960))
    ids = sorted(set(small) & set(large))
    assert ids == [0, 1, 2, 3]  # the bases' 0.75" tags are too small to find at 640x480
    lo = np.vstack([small[i].corners_px for i in ids])
    hi = np.vstack([large[i].corners_px for i in ids])
    centred = (lo + 0.5) * 2 - 0.5 - hi
    assert np.all(np.abs(centred.mean(axis=0)) < 0.05) and float(np.max(np.linalg.norm(centred, axis=1))) < 0.5
    naive = lo * 2 - hi
    assert np.all(np.abs(naive.mean(axis=0) + 0.5) < 0.05)


def test_table_calibrated_with_a_lens_from_640x480_measures_within_0_02in() -> None:
    rendered, seen = _render((1280, 960))
    small = _pose((640, 480), DIST).camera
    fit = fit_lens(CameraModel((640, 480), small.K, small.dist, 0.2), (1280, 960))
    assert fit.sentence == "The lens was measured at 640×480; scaled to this camera's 1280×960."
    assert fit.scaled and fit.camera is not None
    layout = default_layout(*BOARD)
    cal = calibrate_table(collect_anchors(((i, t.corners_px) for i, t in seen.items()), layout), layout,
                          (1280, 960), fit.camera)
    assert cal.focal_source == "intrinsics" and cal.residual_px < 0.1
    for i in layout.ids:
        anchor = layout.anchors[i]
        got = cal.image_to_table(seen[i].center_px[None], anchor.z_in)[0]
        assert np.linalg.norm(got - np.asarray(anchor.centre[:2])) < 0.02, (i, got)
    for tag in BASES:
        truth = rendered.tags[tag]
        got = cal.image_to_table(seen[tag].center_px[None], truth.center_in[2])[0]
        assert np.linalg.norm(got - np.asarray(truth.center_in[:2])) < 0.02, (tag, got)


@pytest.mark.parametrize(("measured", "frame", "fits"), [
    ((640, 480), (1280, 960), True),
    ((1280, 720), (1920, 1080), True),
    ((1920, 1080), (640, 360), True),
    ((1280, 720), (854, 480), True),  # 853.3 rounded to a whole pixel
    ((1280, 720), (852, 480), True),
    ((640, 480), (1280, 720), False),
    ((1920, 1088), (1920, 1080), False),  # a decoder's padded frame: where the 8 rows went is unknown
    ((1280, 720), (848, 480), False),  # 5 px narrower than 16:9: a crop
    ((640, 480), (480, 640), False),  # turned on its side
])
def test_same_aspect_allows_only_whole_pixel_rounding(measured: tuple[int, int], frame: tuple[int, int],
                                                     fits: bool) -> None:
    assert same_aspect(measured, frame) is fits


def test_lens_of_the_frame_size_is_used_as_measured() -> None:
    lens = _pose((1280, 720)).camera
    fit = fit_lens(lens, (1280, 720))
    assert fit.camera is lens and fit.sentence == "" and not fit.scaled


def test_lens_of_another_aspect_is_set_aside_in_one_sentence() -> None:
    fit = fit_lens(_pose((640, 480)).camera, (1280, 720))
    assert fit.camera is None and not fit.scaled
    assert fit.sentence == ("The lens file was measured at 640×480 (4:3) but the camera gives 1280×720 (16:9); "
                            "calibrating without it: measure the lens at this size for better accuracy.")
    padded = fit_lens(_pose((1920, 1088)).camera, (1920, 1080))
    assert padded.camera is None and "1920×1088 (1.76:1) but the camera gives 1920×1080 (16:9)" in padded.sentence


@pytest.mark.parametrize(("size", "words"), [((640, 480), "4:3"), ((1920, 1080), "16:9"), ((854, 480), "16:9"),
                                             ((1280, 800), "16:10"), ((1000, 1000), "1:1"), ((1080, 1920), "9:16"),
                                             ((500, 300), "5:3"), ((1920, 1088), "1.76:1")])
def test_aspect_words(size: tuple[int, int], words: str) -> None:
    assert aspect_words(size) == words
