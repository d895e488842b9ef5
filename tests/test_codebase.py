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


def private_names_taken_from_other_modules(path: Path) -> list[tuple[int, str]]:
    """``from M import _name`` of a package module, and ``M._name`` where ``M`` was imported as a
    module: another module's underscore name, which only its owner may use."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in PACKAGES or node.module in SIBLINGS):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append((node.lineno, f"from {node.module or '.'} import {alias.name}"))
                else:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in PACKAGES)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


PACKAGES = {"autograder", "reference_impl"}
SIBLINGS = {
    "wire",
    "messages",
    "proctree",
    "child",
    "parent",
    "cellexec",
    "idle",
    "main",
    "recycle",
}  # the worker's modules import each other by name (sandbox path)


@pytest.mark.parametrize("path", hand_written_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_takes_another_modules_private_names(path):
    assert private_names_taken_from_other_modules(path) == []


def test_the_private_name_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from autograder.grade import judge\nfrom autograder.grade.judge import _all\nimport os\n\nx = judge._hidden\ny = os._exit\n"
    )
    assert private_names_taken_from_other_modules(module) == [(2, "from autograder.grade.judge import _all"), (5, "judge._hidden")]
