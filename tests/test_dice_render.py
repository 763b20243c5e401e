"""Rendered dice (vision/synth/dice.py): the faces asked for are the faces up, the truth boxes hold the dice's
pixels, the same seed draws the same picture, and a tray drawn into a 1080p table frame has dice 25-40 px."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth import dice as synth
from vision.synth.render import CameraPose, Scene, camera_framing_board, render_scene

TRAY = synth.Tray((10.0, 10.0), (6.0, 4.0), yaw_deg=12.0)


def _pixels_of_dice(sides: int, seed: int, leaning: float) -> tuple[np.ndarray, list[synth.DieTruth], np.ndarray]:
    """(|with dice - without| per pixel, truths, tray polygon) of a close view drawn with no shadows."""
    dice = synth.roll_dice(TRAY, sides, 6, seed, faces=[1, 2, 3, 4, 5, 6] if sides == 6 else [20, 6, 9, 1, 13, 17],
                           leaning=leaning, glare=0.0)
    pose = synth.phone_pose(TRAY, 8.0, 12.0, 30.0)
    back = np.full((960, 1280, 3), 90.0, np.float32)
    with_dice, truths = synth.draw_tray(back, pose, TRAY, dice, seed, shadows=False)
    bare, _ = synth.draw_tray(back, pose, TRAY, [], seed, shadows=False)
    return np.abs(with_dice - bare).max(axis=2), truths, synth.tray_polygon_px(TRAY, pose)


@pytest.mark.parametrize("sides", [6, 20])
def test_the_faces_asked_for_are_up_and_the_boxes_hold_every_die_pixel(sides: int) -> None:
    diff, truths, _ = _pixels_of_dice(sides, 5, leaning=0.3)
    asked = [1, 2, 3, 4, 5, 6] if sides == 6 else [20, 6, 9, 1, 13, 17]
    assert [t.value for t in truths] == asked
    assert all(t.sides == sides and t.visible > 0.7 for t in truths)
    changed = diff > 8.0
    inside = np.zeros_like(changed)
    for t in truths:
        x0, y0, x1, y1 = t.box_px
        inside[int(np.floor(y0)) : int(np.ceil(y1)) + 1, int(np.floor(x0)) : int(np.ceil(x1)) + 1] = True
        box = changed[int(np.ceil(y0)) : int(np.floor(y1)), int(np.ceil(x0)) : int(np.floor(x1))]
        # a die fills its box: a cube or an icosahedron seen from above covers most of its bounds
        assert box.mean() > 0.55, (t, box.mean())
        cx, cy = t.centre_px
        assert x0 < cx < x1 and y0 < cy < y1
    assert changed.sum() > 6 * 2000
    assert not np.any(changed & ~inside), "die pixels outside every truth box"


def test_close_view_dice_are_80_to_200_px_and_inside_the_tray() -> None:
    case = synth.random_phone_tray(11, sides=20, count=6, hand=False)
    import cv2

    assert len(case.view.dice) == 6
    for t in case.view.dice:
        width = max(t.box_px[2] - t.box_px[0], t.box_px[3] - t.box_px[1])
        assert 80 <= width <= 200, width
        assert cv2.pointPolygonTest(case.view.region_px.reshape(-1, 1, 2), t.centre_px, False) >= 0


def test_a_tilted_die_leaning_on_the_wall_keeps_the_face_most_up() -> None:
    lean = synth.DieAt(6, 5, 2.6, 0.0, yaw_deg=20.0, tilt_deg=30.0, tilt_dir_deg=0.0)
    over = synth.DieAt(6, 5, -2.0, 0.0, yaw_deg=20.0, tilt_deg=60.0, tilt_dir_deg=0.0)  # past 45: another face up
    pose = synth.phone_pose(TRAY, 8.0, 0.0, 0.0)
    _, truths = synth.draw_tray(np.zeros((960, 1280, 3), np.float32), pose, TRAY, [lean, over], 1)
    assert truths[0].value == 5
    assert truths[1].value not in (5, 2)  # neither the face asked for nor its opposite


def test_the_same_seed_draws_the_same_picture() -> None:
    a = synth.random_phone_tray(4, sides=6)
    b = synth.random_phone_tray(4, sides=6)
    c = synth.random_phone_tray(5, sides=6)
    assert np.array_equal(a.view.image, b.view.image)
    assert a.view.dice == b.view.dice
    assert not np.array_equal(a.view.image, c.view.image)


def test_a_hand_leaving_the_frame_hides_part_of_a_die() -> None:
    dice = synth.roll_dice(TRAY, 6, 5, 3, glare=0.0, touching=0.0, leaning=0.0)
    pose = synth.phone_pose(TRAY, 8.0, 10.0, 0.0)
    _, clear = synth.draw_tray(np.zeros((960, 1280, 3), np.float32), pose, TRAY, dice, 3)
    _, handed = synth.draw_tray(np.zeros((960, 1280, 3), np.float32), pose, TRAY, dice, 3, hand=True)
    assert all(t.visible > 0.98 for t in clear)
    assert min(t.visible for t in handed) < 0.9
    assert [t.value for t in handed] == [t.value for t in clear]


def test_a_tray_drawn_into_a_1080p_table_frame() -> None:
    board = (30.0, 22.0)
    pose = camera_framing_board(board, 36.0, 15.0, 0.0, (1920, 1080))
    scene = Scene.at(pose, board, noise_sigma=1.5, jpeg_quality=90, supersample=2)
    tray = synth.Tray((15.0, 11.0), (7.0, 4.5), 8.0)
    dice = synth.roll_dice(tray, 6, 6, 2, faces=[6, 6, 4, 1, 3, 2])
    rendered, truths = synth.render_table_with_tray(scene, tray, dice, seed=2)
    plain = render_scene(scene, 2)
    assert rendered.image.shape == (1080, 1920, 3)
    assert sorted(rendered.tags) == sorted(plain.tags)
    for k, t in plain.tags.items():
        assert np.allclose(rendered.tags[k].corners_px, t.corners_px)
    region = synth.tray_polygon_px(tray, CameraPose(scene.camera, scene.rvec, scene.tvec))
    import cv2

    assert [t.value for t in truths] == [6, 6, 4, 1, 3, 2]
    for die in truths:
        width = max(die.box_px[2] - die.box_px[0], die.box_px[3] - die.box_px[1])
        assert 25 <= width <= 40, width
        assert cv2.pointPolygonTest(region.reshape(-1, 1, 2), die.centre_px, False) >= 0
    # the frame changed where the tray is, and only near it
    changed = np.abs(rendered.image.astype(int) - plain.image.astype(int)).max(axis=2) > 30
    x, y, w, h = cv2.boundingRect(region.reshape(-1, 1, 2))
    assert changed[y : y + h, x : x + w].mean() > 0.5
    outside = changed.copy()
    outside[max(0, y - 40) : y + h + 40, max(0, x - 40) : x + w + 40] = False
    assert outside.mean() < 0.001


def test_the_share_of_a_dies_face_up_that_is_seen() -> None:
    """A d6 lying flat under a camera looking straight down shows its face up as a square: all of it seen with
    nothing over it, half with the picture covered up to its middle, none past the frame's edge; a hand over
    one die hides its face up (the bench does not score a die whose face up is more than half hidden)."""
    die = synth.roll_dice(TRAY, 6, 1, 4, faces=[3], touching=0.0, leaning=0.0, glare=0.0)[0]
    pose = synth.phone_pose(TRAY, 8.0, 0.0, 0.0)
    posed = synth._pose(die, TRAY, np.random.default_rng(4))
    _, (truth,) = synth.draw_tray(np.zeros((960, 1280, 3), np.float32), pose, TRAY, [die], 4)
    cover = np.zeros((960, 1280), np.float32)
    assert truth.face_visible == pytest.approx(1.0) and synth._face_seen(pose, posed, cover) == pytest.approx(1.0)
    cover[:, : round(truth.face_px[0])] = 1.0
    assert synth._face_seen(pose, posed, cover) == pytest.approx(0.5, abs=0.05)
    assert synth._face_seen(pose, posed, np.zeros((10, 10), np.float32)) == 0.0
    dice = synth.roll_dice(TRAY, 6, 5, 3, glare=0.0, touching=0.0, leaning=0.0)
    _, handed = synth.draw_tray(np.zeros((960, 1280, 3), np.float32), synth.phone_pose(TRAY, 8.0, 10.0, 0.0), TRAY,
                                dice, 3, hand=True)
    under = min(handed, key=lambda t: t.visible)
    assert under.face_visible < 0.9 and all(t.face_visible > 0.99 for t in handed if t.visible > 0.99)
