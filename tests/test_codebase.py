"""The codebase's own rules: one job per module, and imports at the top unless a reason says otherwise.

(Import cycles and layers are checked by import-linter in `make lint`; see pyproject.toml.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("autograder", "reference_impl")
MAX_LINES = 800
# The command line imports each stage inside its command; its docstring says why, once.
LAZY_BY_POLICY = {"autograder/cli.py", "autograder/cli_parser.py"}


def hand_written_modules() -> list[Path]:
    """Python files of the two packages, without the student kit's generated copies."""
    return sorted(
        p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "m5_student" not in p.parts and "__pycache__" not in p.parts
    )


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every import statement inside a function body."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found.append((inner.lineno, lines[inner.lineno - 1].strip()))
    return sorted(set(found))


def test_the_modules_are_found():
    modules = hand_written_modules()
    assert len(modules) > 50 and ROOT / "autograder" / "grade" / "worker" / "wire.py" in modules


@pytest.mark.parametrize("path", hand_written_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_does_many_jobs(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", hand_written_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_function_level_import_says_why(path):
    if str(path.relative_to(ROOT)) in LAZY_BY_POLICY:
        return
    unexplained = [(line, text) for line, text in function_level_imports(path) if "#" not in text]
    assert unexplained == []


def test_the_import_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\n\ndef f():\n    import json\n    from sys import argv  # the reason\n    return json, argv\n")
    assert function_level_imports(module) == [(5, "import json"), (6, "from sys import argv  # the reason")]
