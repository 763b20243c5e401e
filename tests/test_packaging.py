"""What a user expects of the package: `--version`, quiet `| head`, installed versions inside the bounds that
pyproject.toml declares, and lock files that pin every dependency it names."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(extra: str | None = None) -> list[Requirement]:
    names = PYPROJECT["project"]["dependencies"] if extra is None else PYPROJECT["project"]["optional-dependencies"][extra]
    return [Requirement(r) for r in names]


def test_version_is_the_packages() -> None:
    done = subprocess.run([sys.executable, "-m", "webui.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"tablesight {metadata.version('tablesight')}"
    assert done.stdout.strip() == f"tablesight {PYPROJECT['project']['version']}"


def test_json_piped_into_head_stops_quietly() -> None:
    cmd = [sys.executable, "-m", "webui.cli", "replay", str(ROOT / "sample_frames" / "stress"), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert first.startswith(b'{"type": ')
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_every_dependency_has_an_upper_bound_and_the_installed_one_fits() -> None:
    for req in _requirements() + _requirements("test"):
        assert any(s.operator in ("<", "<=", "~=", "==") for s in req.specifier), f"{req} has no upper bound"
        installed = metadata.version(req.name)
        assert req.specifier.contains(installed, prereleases=True), f"{req.name} {installed} is outside {req}"


def test_the_locks_pin_every_dependency_within_its_bounds() -> None:
    for lock_name, reqs in (("requirements.lock", _requirements()),
                            ("requirements-test.lock", _requirements() + _requirements("test"))):
        pins = {}
        for line in (ROOT / lock_name).read_text(encoding="utf-8").splitlines():
            if m := re.match(r"^([A-Za-z0-9_.\-]+)(\[.*\])?==(\S+)", line):
                pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3)
        for req in reqs:
            name = re.sub(r"[-_.]+", "-", req.name).lower()
            assert name in pins, f"{lock_name} does not pin {req.name}; run ./go lock"
            assert req.specifier.contains(pins[name], prereleases=True), f"{lock_name}: {name} {pins[name]} vs {req}"


def test_a_non_editable_install_carries_the_sample_and_the_pages(tmp_path: Path) -> None:
    """`pip install .` (not -e): the bundled sample, the templates and the static files are inside the installed
    package, and `tablesight serve`'s sample is found from any folder."""
    target = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                            "--no-compile", "--target", str(target), str(ROOT)],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert build.returncode == 0, build.stderr[-2000:]
    probe = ("import session.paths as p, webui.server as s, session.report_html as r; "
             "print(p.SAMPLE_SESSION_DIR); print(s.__file__); print(r._TEMPLATES)")
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=env)
    assert done.returncode == 0, done.stderr
    sample, server, templates = (Path(line) for line in done.stdout.splitlines())
    for path in (sample, server, templates):
        assert path.is_relative_to(target), f"{path} is not the installed copy"
    assert (sample / "manifest.json").is_file() and (sample / "golden.jsonl").is_file()
    assert len(list(sample.glob("frame_*.jpg"))) == len(list((ROOT / "sample_frames" / "valknut_skirmish").glob("frame_*.jpg")))
    assert (templates / "report.html").is_file()
    assert (server.parent / "templates" / "live.html").is_file() and (server.parent / "static" / "overlay.js").is_file()
