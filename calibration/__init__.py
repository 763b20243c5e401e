"""Camera intrinsics, board and anchor layouts, the camera pose, and image pixels <-> table inches."""
