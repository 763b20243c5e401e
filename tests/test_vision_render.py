"""vision.synth.render: exact ground truth, official bitmaps, occlusion, determinism and speed."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.layout import default_layout
from vision.synth.render import BasePlacement, Block, Hand, Scene, camera_looking_at, render_scene
from vision.tag_family import TAG_COUNT, tag_bitmap
from vision.tags import detect_tags, gray_frame

BITMAPS = Path(__file__).resolve().parent / "data" / "apriltag_imgs_tag36h11"
BOARD = (30.0, 22.0)
WEBCAM_DIST = [-0.18, 0.04, 0.0005, -0.0004, 0.0]


def test_every_tag_bitmap_is_the_official_one() -> None:
    """All 587 bitmaps the renderer draws are pixel-identical to the AprilTag project's PNGs."""
    for tag_id in range(TAG_COUNT):
        png = cv2.imread(str(BITMAPS / f"tag36_11_{tag_id:05d}.png"), cv2.IMREAD_UNCHANGED)
        assert png is not None, tag_id
        official = png[:, :, 0] if png.ndim == 3 else png
        assert np.array_equal(tag_bitmap(tag_id), official), tag_id


def _scene(**kwargs: object) -> Scene:
    pose = camera_looking_at(BOARD, 36.0, 25.0, 5.0, (1920, 1080), 70.0, WEBCAM_DIST)
    return Scene.at(pose, BOARD, **kwargs)


def test_true_corners_are_the_projected_3d_corners() -> None:
    """Ground truth is the camera model itself: tag corners in inches through projectPoints."""
    base = BasePlacement(20, 12.0, 9.0, z_in=2.0, yaw_deg=33.0, tag_in=0.8, tag_offset_in=(0.1, -0.05))
    scene = _scene(bases=(base,))
    r = render_scene(scene, 0)
    truth = r.tags[20]
    tx, ty = base.tag_center_in
    a = np.radians(33.0)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    unit = np.array([[-0.4, -0.4], [0.4, -0.4], [0.4, 0.4], [-0.4, 0.4]])
    corners = np.column_stack([unit @ rot.T + [tx, ty], np.full(4, 2.0)])
    proj, _ = cv2.projectPoints(corners, scene.rvec, scene.tvec, scene.camera.K, scene.camera.dist)
    assert np.allclose(truth.corners_px, proj.reshape(4, 2), atol=1e-9)
    assert truth.center_in == pytest.approx((tx, ty, 2.0))
    assert truth.base_in == (12.0, 9.0)
    assert truth.yaw_deg == 33.0 and not truth.anchor
    assert set(r.tags) == {0, 1, 2, 3, 20}


def test_rendered_tags_are_found_exactly_where_truth_says_through_the_lens() -> None:
    """Lens distortion, heights and turned anchors: detected corners agree with the truth to 0.05 px."""
    rng = np.random.default_rng(4)
    bases = tuple(
        BasePlacement(
            30 + i,
            3.0 + 3.0 * (i % 9),
            3.0 + 4.0 * (i // 9),
            z_in=float(rng.uniform(0, 3)),
            yaw_deg=float(rng.uniform(0, 360)),
            tag_in=0.75,
        )
        for i in range(27)
    )
    r = render_scene(_scene(bases=bases, anchor_turns={0: 1, 1: 2, 2: 3, 3: 0}), 7)
    tags = detect_tags(gray_frame(r.image))
    assert {t.id for t in tags} == set(r.tags)
    errs = np.concatenate([np.linalg.norm(t.corners_px - r.tags[t.id].corners_px, axis=1) for t in tags])
    print(f"\nthrough the lens: mean corner error {errs.mean():.4f} px, max {errs.max():.4f} px")
    assert errs.mean() < 0.03
    assert errs.max() < 0.15


def test_same_seed_same_frame_other_seed_other_noise() -> None:
    scene = _scene(bases=(BasePlacement(12, 10.0, 10.0),), noise_sigma=2.0)
    a, b, c = render_scene(scene, 3), render_scene(scene, np.random.default_rng(3)), render_scene(scene, 4)
    assert np.array_equal(a.image, b.image)
    assert not np.array_equal(a.image, c.image)


def test_a_hand_hides_the_tag_under_it() -> None:
    bases = (BasePlacement(12, 10.0, 10.0), BasePlacement(13, 20.0, 10.0))
    scene = _scene(bases=bases)
    rot, _ = cv2.Rodrigues(scene.rvec)
    cam = -rot.T @ scene.tvec  # camera centre, inches
    tag = np.array([10.0, 10.0, 0.125])
    hand_at = tag + (cam - tag) * (5.0 - 0.125) / (cam[2] - 0.125)  # 5" up on the ray to the tag
    r = render_scene(_scene(bases=bases, hands=(Hand(float(hand_at[0]), float(hand_at[1]), 5.0, 1.5),)), 1)
    assert r.tags[12].visible_fraction == 0.0
    assert r.tags[13].visible_fraction == 1.0
    found = {t.id for t in detect_tags(gray_frame(r.image))}
    assert 12 not in found and 13 in found


def test_terrain_hides_what_is_behind_it_but_not_what_is_in_front() -> None:
    """The camera leans back toward -y: a tall block hides a base just beyond it (+y), not one in front."""
    block = Block(((12.0, 10.0), (18.0, 10.0), (18.0, 12.0), (12.0, 12.0)), height_in=6.0)
    bases = (BasePlacement(14, 15.0, 13.0), BasePlacement(15, 15.0, 8.5))
    pose = camera_looking_at(BOARD, 36.0, 30.0, 0.0, (1920, 1080), 70.0)
    r = render_scene(Scene.at(pose, BOARD, bases=bases, terrain=(block,)), 2)
    assert r.tags[14].visible_fraction == 0.0
    assert r.tags[15].visible_fraction == 1.0
    found = {t.id for t in detect_tags(gray_frame(r.image))}
    assert 14 not in found and 15 in found


def test_a_base_on_a_ruin_floor_is_drawn_on_top_of_it() -> None:
    """A base 3" up on a terrain floor is visible above the block (depth test, not drawing order)."""
    block = Block(((12.0, 10.0), (18.0, 10.0), (18.0, 14.0), (12.0, 14.0)), height_in=2.875)
    r = render_scene(_scene(bases=(BasePlacement(16, 15.0, 12.0, z_in=3.0),), terrain=(block,)), 5)
    assert r.tags[16].visible_fraction == 1.0
    tag = [t for t in detect_tags(gray_frame(r.image)) if t.id == 16]
    assert len(tag) == 1
    assert np.allclose(tag[0].corners_px, r.tags[16].corners_px, atol=0.1)


def test_anchor_truth_follows_the_layout_and_its_turns() -> None:
    layout = default_layout(*BOARD)
    r = render_scene(_scene(anchor_turns={2: 1}), 0)
    for i, anchor in layout.anchors.items():
        t = r.tags[i]
        assert t.anchor and t.center_in[:2] == anchor.centre and t.tag_in == 2.0
    assert r.tags[2].yaw_deg == 90.0 and r.tags[0].yaw_deg == 0.0


def test_blur_noise_and_jpeg_change_the_image_but_not_the_truth() -> None:
    clean = render_scene(_scene(bases=(BasePlacement(12, 10.0, 10.0),), noise_sigma=0.0), 1)
    rough = render_scene(
        _scene(bases=(BasePlacement(12, 10.0, 10.0),), noise_sigma=3.0, blur_px=1.0, jpeg_quality=70), 1
    )
    assert np.allclose(clean.tags[12].corners_px, rough.tags[12].corners_px)
    diff = np.abs(clean.image.astype(int) - rough.image.astype(int))
    assert 1.0 < diff.mean() < 20.0


