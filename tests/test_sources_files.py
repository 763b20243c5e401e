"""Frame sources over real files: folders of frames, video files, recorded sessions, and `open_source`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.errors import InputError
from vision.errors import FrameError
from vision.recorder import Recorder
from vision.session_dir import SessionError
from vision.sources import (
    BadFrame,
    FolderSource,
    FrameSource,
    SessionSource,
    VideoSource,
    open_source,
)

W, H = 160, 120


def frame_image(i: int) -> np.ndarray:
    """A frame whose content says its index: a flat grey level 5*i plus a white bar i px from the left."""
    img = np.full((H, W, 3), (5 * i) % 200 + 20, np.uint8)
    img[10:30, i % W] = 255
    return img


def index_of(img: np.ndarray) -> int:
    """Read the index back from frame_image's grey level (robust to JPEG and video compression)."""
    level = float(np.median(img[60:110, :, 1]))
    return int(round((level - 20) / 5))


def write_folder(folder: Path, n: int, names: list[str] | None = None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / (names[i] if names else f"f_{i:03d}.png")
        cv2.imwrite(str(p), frame_image(i))
        paths.append(p)
    return paths


def write_video(path: Path, n: int, fps: float = 10.0, noise: bool = False) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (W, H))
    assert writer.isOpened()
    rng = np.random.default_rng(0)
    for i in range(n):
        img = frame_image(i)
        if noise:  # incompressible content so the file is large enough to cut in the middle
            img[:50] = rng.integers(0, 255, (50, W, 3), dtype=np.uint8)
        writer.write(img)
    writer.release()
    return path


# ---- folder of frames ------------------------------------------------------------------------------------------

def test_folder_source_reads_frames_in_natural_name_order(tmp_path: Path) -> None:
    names = ["frame2.png", "frame10.png", "frame1.png", "frame3.jpg"]
    write_folder(tmp_path / "f", 4, names)
    (tmp_path / "f" / "notes.txt").write_text("not a frame")
    with FolderSource(tmp_path / "f", fps=4.0) as src:
        assert isinstance(src, FrameSource)
        assert src.size == (W, H)
        frames = list(src)
    # names sorted naturally: frame1 (written 3rd, i=2), frame2 (i=0), frame3 (i=3), frame10 (i=1)
    assert [index_of(f.image) for f in frames] == [2, 0, 3, 1]
    assert [f.index for f in frames] == [0, 1, 2, 3]
    assert [f.t for f in frames] == [0.0, 0.25, 0.5, 0.75]
    assert all(f.image.shape == (H, W, 3) and f.image.dtype == np.uint8 for f in frames)


def test_folder_gray_frames_come_out_bgr(tmp_path: Path) -> None:
    (tmp_path / "g").mkdir()
    cv2.imwrite(str(tmp_path / "g" / "a.png"), np.full((H, W), 77, np.uint8))
    [frame] = list(FolderSource(tmp_path / "g"))
    assert frame.image.shape == (H, W, 3) and int(frame.image[0, 0, 2]) == 77


@pytest.mark.parametrize("damage", ["truncated_jpeg", "text", "empty", "truncated_png"])
def test_corrupt_frame_in_folder_is_one_sentence_naming_the_file(tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "f"
    write_folder(folder, 5, [f"f_{i}.jpg" for i in range(5)])
    bad = folder / "f_3.jpg"
    if damage == "truncated_jpeg":
        data = bad.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "text":
        bad.write_text("this is not a picture")
    elif damage == "empty":
        bad.write_bytes(b"")
    else:
        bad.unlink()
        bad = folder / "f_3.png"
        cv2.imwrite(str(bad), frame_image(3))
        data = bad.read_bytes()
        bad.write_bytes(data[: len(data) - 30])
    got = []
    with pytest.raises(FrameError) as err:
        for f in FolderSource(folder):
            got.append(index_of(f.image))
    assert got == [0, 1, 2]  # every good frame before it was delivered
    message = str(err.value)
    assert str(bad) in message and message.count(". ") == 0 and message.endswith(".")
    assert "\n" not in message
    assert isinstance(err.value, InputError)


def test_live_path_skips_and_reports_a_corrupt_frame(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    paths = write_folder(folder, 6, [f"f_{i}.jpg" for i in range(6)])
    paths[2].write_bytes(paths[2].read_bytes()[:200])
    reported: list[BadFrame] = []
    src = FolderSource(folder, skip_bad_frames=True, on_bad_frame=reported.append)
    frames = list(src)
    assert [index_of(f.image) for f in frames] == [0, 1, 3, 4, 5]
    assert [f.index for f in frames] == [0, 1, 3, 4, 5]
    assert reported == src.bad_frames and len(reported) == 1
    assert reported[0].index == 2 and reported[0].source == str(paths[2]) and str(paths[2]) in reported[0].message


def test_frame_of_another_size_in_folder_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    write_folder(folder, 3)
    cv2.imwrite(str(folder / "f_009.png"), np.zeros((H * 2, W * 2, 3), np.uint8))
    with pytest.raises(FrameError, match=r"f_009\.png is 320x240 px but the source's frames are 160x120"):
        list(FolderSource(folder))


@pytest.mark.parametrize(("setup", "match"), [
    ("missing", "does not exist or is not a folder"),
    ("empty", "holds no image files"),
])
def test_bad_frame_folder_is_one_sentence(tmp_path: Path, setup: str, match: str) -> None:
    folder = tmp_path / "frames"
    if setup == "empty":
        folder.mkdir()
        (folder / "readme.txt").write_text("x")
    with pytest.raises(FrameError, match=match):
        FolderSource(folder)


# ---- video files -----------------------------------------------------------------------------------------------

def test_video_source_reads_every_frame_with_its_time(tmp_path: Path) -> None:
    path = write_video(tmp_path / "v.avi", 20, fps=10.0)
    with VideoSource(path) as src:
        assert src.size == (W, H)
        frames = list(src)
    assert [f.index for f in frames] == list(range(20))
    assert [index_of(f.image) for f in frames] == list(range(20))
    assert frames[7].t == pytest.approx(0.7)
    assert src.bad_frames == []


def test_truncated_video_yields_its_good_frames_then_says_it_is_truncated(tmp_path: Path) -> None:
    path = write_video(tmp_path / "v.avi", 30, noise=True)
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    got = []
    with pytest.raises(FrameError, match=r"ends after \d+ of its 30 frames, so it is truncated") as err:
        for f in VideoSource(path):
            got.append(f)
    assert 5 <= len(got) < 28
    assert [index_of(f.image) for f in got] == list(range(len(got)))
    assert str(path) in str(err.value)


def test_truncated_video_in_skip_mode_is_reported_not_raised(tmp_path: Path) -> None:
    path = write_video(tmp_path / "v.avi", 30, noise=True)
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    src = VideoSource(path, skip_bad_frames=True)
    frames = list(src)
    assert len(src.bad_frames) == 1 and "truncated" in src.bad_frames[0].message
    assert src.bad_frames[0].index == len(frames)  # the frame at the cut is not used


@pytest.mark.parametrize(("content", "match"), [
    (None, "does not exist"),
    (b"garbage" * 100, "cannot be opened as a video"),
])
def test_unreadable_video_is_one_sentence(tmp_path: Path, content: bytes | None, match: str) -> None:
    path = tmp_path / "clip.mp4"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(FrameError, match=match):
        VideoSource(path)


def test_mp4_cut_before_its_index_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "v.mp4"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), 10, (W, H))
    for i in range(20):
        writer.write(frame_image(i))
    writer.release()
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    with pytest.raises(FrameError, match=r"v\.mp4 cannot be opened as a video \(corrupt, truncated"):
        VideoSource(path)


# ---- recorded sessions -----------------------------------------------------------------------------------------

def record(directory: Path, n: int) -> Path:
    with Recorder(directory, source="test") as rec:
        for i in range(n):
            rec.write(frame_image(i), 0.04 * i)
    return directory


def test_session_source_replays_frames_at_their_recorded_times(tmp_path: Path) -> None:
    session = record(tmp_path / "s", 12)
    with SessionSource(session) as src:
        assert src.size == (W, H)
        frames = list(src)
    assert [f.index for f in frames] == list(range(12))
    assert [f.t for f in frames] == pytest.approx([0.04 * i for i in range(12)])
    for i, f in enumerate(frames):
        assert np.abs(f.image.astype(int) - frame_image(i).astype(int)).mean() < 3  # JPEG, quality 90


def test_session_frame_missing_or_corrupt_names_the_file(tmp_path: Path) -> None:
    session = record(tmp_path / "s", 6)
    (session / "frame_000002.jpg").unlink()
    data = (session / "frame_000004.jpg").read_bytes()
    (session / "frame_000004.jpg").write_bytes(data[:100])
    with pytest.raises(FrameError, match=r"frame_000002\.jpg is missing"):
        list(SessionSource(session))
    src = SessionSource(session, skip_bad_frames=True)
    assert [f.index for f in src] == [0, 1, 3, 5]
    assert [b.index for b in src.bad_frames] == [2, 4]
    assert "frame_000004.jpg is cut short" in src.bad_frames[1].message


@pytest.mark.parametrize(("damage", "match"), [
    ("no_dir", "does not exist"),
    ("a_file", "is a file, not a session directory"),
    ("no_manifest", "holds no manifest.json"),
    ("bad_json", r"manifest.json is not valid JSON"),
    ("wrong_format", "is not a Tablesight session manifest"),
    ("future_version", "is session format version 99"),
    ("no_index", "holds no frames.jsonl"),
    ("bad_index_line", r"frames.jsonl line 3 is not a frame entry"),
    ("escaping_file", "is not a file inside the session"),
    ("empty_index", "lists no frames"),
])
def test_unreadable_session_directory_is_one_clear_sentence(tmp_path: Path, damage: str, match: str) -> None:
    session = record(tmp_path / "s", 4)
    manifest = session / "manifest.json"
    index = session / "frames.jsonl"
    target: Path = session
    if damage == "no_dir":
        target = tmp_path / "nothing"
    elif damage == "a_file":
        target = manifest
    elif damage == "no_manifest":
        manifest.unlink()
    elif damage == "bad_json":
        manifest.write_text("{\"format\": ")
    elif damage == "wrong_format":
        manifest.write_text(json.dumps({"format": "something-else"}))
    elif damage == "future_version":
        obj = json.loads(manifest.read_text())
        obj["version"] = 99
        manifest.write_text(json.dumps(obj))
    elif damage == "no_index":
        index.unlink()
    elif damage == "bad_index_line":
        lines = index.read_text().splitlines()
        lines[2] = '{"index": "two"}'
        index.write_text("\n".join(lines) + "\n")
    elif damage == "escaping_file":
        index.write_text(json.dumps({"index": 0, "t": 0.0, "file": "../../etc/passwd"}) + "\n")
    else:
        index.write_text("")
    with pytest.raises(SessionError, match=match) as err:
        SessionSource(target)
    assert "\n" not in str(err.value) and isinstance(err.value, FrameError)


# ---- open_source -----------------------------------------------------------------------------------------------

def test_open_source_picks_the_source_for_each_kind_of_input(tmp_path: Path) -> None:
    session = record(tmp_path / "s", 3)
    folder = tmp_path / "f"
    write_folder(folder, 2)
    video = write_video(tmp_path / "v.avi", 3)
    with open_source(session) as a, open_source(str(folder)) as b, open_source(video) as c:
        assert isinstance(a, SessionSource) and isinstance(b, FolderSource) and isinstance(c, VideoSource)
        assert [len(list(s)) for s in (a, b, c)] == [3, 2, 3]
    with pytest.raises(FrameError, match="is not a camera index, a camera URL, a video file or a folder"):
        open_source(tmp_path / "nope.avi")


def test_closed_source_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    write_folder(folder, 2)
    src = FolderSource(folder)
    src.close()
    with pytest.raises(FrameError, match="is closed"):
        iter(src)


def test_session_directory_copied_elsewhere_still_replays(tmp_path: Path) -> None:
    session = record(tmp_path / "s", 3)
    copy = tmp_path / "copy"
    shutil.copytree(session, copy)
    assert len(list(SessionSource(copy))) == 3
