"""`rules/` stays pure: no cv2, no files, no network, no clocks, no global randomness."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parent.parent / "rules"
ALLOWED_THIRD_PARTY = {"numpy", "shapely", "rules"}
FORBIDDEN_STDLIB = {
    "os", "io", "pathlib", "shutil", "tempfile", "glob", "socket", "urllib", "http", "subprocess",
    "time", "datetime", "threading", "multiprocessing", "asyncio", "sqlite3", "secrets", "uuid", "sys",
}
FORBIDDEN_CALLS = {"open", "input", "print", "exec", "eval", "__import__"}
GLOBAL_RANDOM = {
    "random", "randint", "choice", "choices", "shuffle", "uniform", "sample", "gauss", "seed", "randrange",
}


def _modules() -> list[Path]:
    return sorted(RULES.rglob("*.py"))


def test_rules_has_modules() -> None:
    assert len(_modules()) >= 3


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_rules_module_is_pure(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    problems: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "random":
                bad = [a.name for a in node.names if a.name in GLOBAL_RANDOM]
                problems += [f"line {node.lineno}: imports global random.{b}" for b in bad]
            if node.module == "numpy.random":
                problems.append(f"line {node.lineno}: imports numpy.random")
        for name in names:
            assert isinstance(node, ast.Import | ast.ImportFrom)
            top = name.split(".")[0]
            if top in FORBIDDEN_STDLIB:
                problems.append(f"line {node.lineno}: imports {name}")
            elif top not in sys.stdlib_module_names and top not in ALLOWED_THIRD_PARTY and top != "__future__":
                problems.append(f"line {node.lineno}: imports third-party {name}")
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                problems.append(f"line {node.lineno}: calls {func.id}()")
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "random"
                and func.attr in GLOBAL_RANDOM
            ):
                problems.append(f"line {node.lineno}: calls global random.{func.attr}()")
            if isinstance(func, ast.Attribute) and func.attr in {"default_rng", "seed"} and isinstance(
                func.value, ast.Attribute
            ) and func.value.attr == "random":
                problems.append(f"line {node.lineno}: uses numpy's global random state")
    assert not problems, f"{path.name} is not pure: " + "; ".join(problems)


def test_purity_check_catches_a_violation(tmp_path: Path) -> None:
    """The checker itself must fail on impure code, or the tests above prove nothing."""
    bad = tmp_path / "bad.py"
    bad.write_text("import cv2\nimport time\nimport random\nx = random.randint(1, 6)\nopen('f')\n")
    tree = ast.parse(bad.read_text())
    kinds = {type(n).__name__ for n in ast.walk(tree)}
    assert {"Import", "Call"} <= kinds
    with pytest.raises(AssertionError, match="cv2.*time.*random.randint.*open"):
        test_rules_module_is_pure(bad)
