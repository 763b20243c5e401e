"""Errors a user can fix in what vision is given: a frame or an image file."""

from __future__ import annotations

from calibration.errors import InputError


class FrameError(InputError):
    """A frame or image cannot be used: missing file, not an image, wrong shape or type."""
