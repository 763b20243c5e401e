"""Which files the server may touch: a session is one plain folder name directly inside the sessions folder.

A name is checked before it is joined (one path segment of letters, digits, `.`, `_`, `-`, not starting
with a dot: no `..`, no `/`, no absolute path, no percent-encoding left over), and the joined path is
resolved (symlinks followed) and must still lie inside the sessions folder.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from calibration.errors import InputError

SAMPLE_FRAMES_DIR = Path(str(resources.files("sample_frames")))
"""The bundled sample sessions, wherever Tablesight is installed (the repository's sample_frames/ when editable)."""
SAMPLE_SESSION_DIR = SAMPLE_FRAMES_DIR / "valknut_skirmish"
"""The bundled sample session `tablesight serve` plays with no source given."""

SAMPLES_DIR = SAMPLE_FRAMES_DIR
"""The bundled sample sessions: offered on the replay page beside the sessions folder's own."""

SESSION_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")


class PathRefused(InputError):
    """A session name that is not a plain folder name inside the sessions folder."""


class NoSuchSession(InputError):
    """A plain session name with no session folder behind it."""


def confined_session(sessions_dir: Path, name: str) -> Path:
    """The folder `name` inside `sessions_dir`; PathRefused if the name or where it leads is outside it."""
    if not SESSION_NAME_RE.fullmatch(name or "") or ".." in name:
        raise PathRefused(f"{name!r} is not a session name; pick a session from the list on the replay page.")
    root = sessions_dir.resolve()
    path = (root / name).resolve()
    if not path.is_relative_to(root) or path == root:
        raise PathRefused(f"Session {name!r} leads outside the sessions folder; only sessions inside it are shown.")
    if not path.is_dir():
        raise NoSuchSession(f"There is no session called {name!r}; pick one from the list on the replay page.")
    return path
