"""Errors a user can fix. The CLI prints the message as one sentence and exits with status 2.

`vision/` and `webui/` subclass `InputError` for their own bad inputs, so one `except` catches them all.
"""


class InputError(ValueError):
    """Bad input from the user or the table: the message names it and says how to fix it."""


class CalibrationError(InputError):
    """A calibration cannot be made or used: anchors missing, duplicated or inconsistent, a bad file."""
