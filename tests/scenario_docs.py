"""Read the example scenarios in docs/scenarios/*.md: each ```json scenario block and the ```json answer after it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent / "docs" / "scenarios"
_BLOCK = re.compile(r"```json (scenario|answer)[^\n]*\n(.*?)```", re.S)


def examples(doc: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(title, scenario, expected answer subset) for every example in one document."""
    text = doc.read_text(encoding="utf-8")
    found: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    pending: dict[str, Any] | None = None
    title = ""
    for match in _BLOCK.finditer(text):
        kind, body = match.group(1), json.loads(match.group(2))
        if kind == "scenario":
            heads = re.findall(r"^#+ (.+)$", text[: match.start()], re.M)
            title = f"{doc.stem}: {heads[-1] if heads else len(found) + 1}"
            pending = body
        elif pending is not None:
            found.append((title, pending, body))
            pending = None
    return found


def all_examples() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [ex for doc in sorted(DOCS.glob("*.md")) for ex in examples(doc)]


def subset_mismatches(expected: Any, actual: Any, where: str = "answer") -> list[str]:
    """Where `actual` differs from `expected` (a subset; numbers to 0.01)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{where}.{key}: missing")
            else:
                out += subset_mismatches(value, actual[key], f"{where}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {expected!r}, got {actual!r}"]
        return [m for i, (e, a) in enumerate(zip(expected, actual)) for m in subset_mismatches(e, a, f"{where}[{i}]")]
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]
    if isinstance(expected, int | float):
        ok = isinstance(actual, int | float) and not isinstance(actual, bool) and abs(actual - expected) <= 0.01
        return [] if ok else [f"{where}: expected {expected!r}, got {actual!r}"]
    return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]


EXAMPLES_DIR = DOCS.parent.parent / "examples" / "scenarios"


def _slug(title: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", title.split(":", 1)[-1].lower()).strip("-")
    return words[:60].rstrip("-") or "example"


def example_files() -> dict[Path, dict[str, Any]]:
    """examples/scenarios/<game>/<NN>-<title>.json -> the scenario, for every example in the documents."""
    out: dict[Path, dict[str, Any]] = {}
    for doc in sorted(DOCS.glob("*.md")):
        for n, (title, scenario, _answer) in enumerate(examples(doc), start=1):
            out[EXAMPLES_DIR / doc.stem / f"{n:02d}-{_slug(title)}.json"] = scenario
    return out


def write_examples() -> int:
    """Write the documents' examples as runnable files (and remove files no document has any more)."""
    wanted = example_files()
    for stale in set(EXAMPLES_DIR.rglob("*.json")) - set(wanted):
        stale.unlink()
    for path, scenario in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(scenario, indent=1) + "\n", encoding="utf-8")
    return len(wanted)


if __name__ == "__main__":
    print(f"wrote {write_examples()} scenario files under {EXAMPLES_DIR}")
