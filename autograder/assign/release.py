"""`m5 release`: build the student release ``<out>/module05/`` from the instructor sources.

Two parts, both stubbed in the same marker style:

1. the student notebooks: ``nbgrader generate_assignment`` on ``source/module05`` in a
   throw-away course directory (its own config and sqlite gradebook, so the checkout
   stays clean). nbgrader replaces every ``### BEGIN SOLUTION`` region by a stub,
   removes ``### BEGIN HIDDEN TESTS`` regions and clears outputs;
2. the support library ``m5_student`` the notebooks import: the modules of
   ``reference_impl`` with ``reference_impl`` renamed, every ``### BEGIN SOLUTION``
   region replaced by ``raise NotImplementedError("implement <name> in the ... notebook")``
   and the private helpers that only solution code used removed. ``exercises.py``
   (it computes the worked answers) is left out; the public self-checks
   (:mod:`autograder.check.public`) ship as ``m5_student/checks.py``.

The output is deterministic (no timestamps; nbgrader's checksums depend only on cell
content), so the committed ``release/`` can be compared with a fresh build.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "reference_impl"
SOURCE_DIR = REPO / "source" / "module05"
PUBLIC_CHECKS = REPO / "autograder" / "check" / "public.py"
# Student-only modules (notebook glue: load the notebook's kernels, check torch ports).
EXTRAS = Path(__file__).resolve().parent / "student_extras"
ASSIGNMENT = "module05"
PACKAGE = "m5_student"
# Modules that must never reach students: worked answers of the numerical exercises.
EXCLUDED_MODULES = frozenset({"exercises.py"})
# Where a stubbed function is to be written (the message of its NotImplementedError).
LAB_PORTS = frozenset({"torch_kernels.py"})
BEGIN_RE = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*$")
END_RE = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")

NOTEBOOK_LANGUAGE = '''

def notebook_language(default: str = "en") -> str:
    """Language of the open notebook ("en" or "ru") from its metadata ``m5.lang``.

    Jupyter sets ``JPY_SESSION_NAME`` (VS Code ``__vsc_ipynb_file__``) to the notebook's
    path; without it (nbclient, plain python) ``default`` is returned.
    """
    import json
    import os

    path = os.environ.get("JPY_SESSION_NAME") or os.environ.get("__vsc_ipynb_file__")
    if not path:
        return default
    # The path may be relative to the server's root; the kernel runs in the notebook's folder.
    for candidate in (path, os.path.basename(path)):
        try:
            with open(candidate, encoding="utf-8") as fh:
                lang = (json.load(fh).get("metadata", {}).get("m5") or {}).get("lang")
        except (OSError, ValueError, AttributeError):
            continue
        return lang if lang in ("en", "ru") else default
    return default
'''


class ReleaseError(Exception):
    """The release cannot be built (bad source, nbgrader failure)."""


# ------------------------------------------------------------------ the support library
def _enclosing_function(tree: ast.Module, line: int) -> str:
    """Name of the innermost function whose body holds 1-based ``line``."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0) + 1:
            if best is None or node.lineno > best.lineno:
                best = node
    if best is None:
        raise ReleaseError(f"solution region at line {line} is not inside a function")
    return best.name


def stub_solutions(source: str, where: str, filename: str = "<module>") -> str:
    """Replace each ``### BEGIN SOLUTION`` .. ``### END SOLUTION`` region by a stub.

    The stub raises ``NotImplementedError("implement <function> in the <where> notebook")``
    at the region's indentation. Raises ReleaseError on unbalanced markers.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = BEGIN_RE.match(lines[i])
        if not match:
            if END_RE.match(lines[i]):
                raise ReleaseError(f"{filename}:{i + 1}: END SOLUTION without BEGIN SOLUTION")
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if END_RE.match(lines[j]) or BEGIN_RE.match(lines[j])), None)
        if end is None or BEGIN_RE.match(lines[end]):
            raise ReleaseError(f"{filename}:{i + 1}: BEGIN SOLUTION without END SOLUTION")
        name = _enclosing_function(tree, i + 1)
        out.append(f'{match["indent"]}raise NotImplementedError("implement {name} in the {where} notebook")')
        i = end + 1
    return "\n".join(out) + "\n"


def drop_unused_private_functions(source: str) -> str:
    """Remove module-level ``_functions`` no longer referenced (they served solution code only)."""
    while True:
        tree = ast.parse(source)
        private = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("_")}
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        unused = [n for name, n in private.items() if name not in used]
        if not unused:
            return source
        lines = source.splitlines()
        for node in sorted(unused, key=lambda n: n.lineno, reverse=True):
            start = node.lineno - 1 - len(node.decorator_list)
            end = node.end_lineno
            while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t"))):
                end += 1  # trailing comments and blank lines of the removed function
            del lines[start:end]
        source = "\n".join(lines) + "\n"


def rename_package(source: str) -> str:
    return re.sub(r"\breference_impl\b", PACKAGE, source)


def student_module(path: Path) -> str:
    """The student version of one ``reference_impl`` module."""
    source = path.read_text(encoding="utf-8")
    if "### BEGIN SOLUTION" in source:
        where = "lab" if path.name in LAB_PORTS else "assignment"
        source = drop_unused_private_functions(stub_solutions(source, where, path.name))
    source = rename_package(source)
    header = (f"# Generated by `m5 release` from reference_impl/{path.name}; do not edit.\n"
              "# The graded kernels are stubs here: write them in the notebooks.\n")
    source = header + source
    if path.name == "__init__.py":
        source = source.rstrip("\n") + "\n" + NOTEBOOK_LANGUAGE
    return source


def build_student_library(dest: Path) -> list[Path]:
    """Write ``dest`` (the ``m5_student`` package); returns the files written."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "data").mkdir(parents=True)
    written = []
    for path in sorted(REFERENCE.glob("*.py")):
        if path.name in EXCLUDED_MODULES:
            continue
        target = dest / path.name
        target.write_text(student_module(path), encoding="utf-8")
        written.append(target)
    checks = dest / "checks.py"
    checks.write_text(rename_package(PUBLIC_CHECKS.read_text(encoding="utf-8")), encoding="utf-8")
    written.append(checks)
    for path in sorted(p for p in EXTRAS.glob("*.py") if p.name != "__init__.py"):
        target = dest / path.name
        shutil.copyfile(path, target)
        written.append(target)
    for path in sorted((REFERENCE / "data").iterdir()):
        if path.is_file() and not path.name.startswith("."):
            shutil.copyfile(path, dest / "data" / path.name)
            written.append(dest / "data" / path.name)
    return written


# ------------------------------------------------------------------ the notebooks
def course_config(root: Path, gradebook: Path, *, execute_timeout: int = 600) -> str:
    """An ``nbgrader_config.py`` for a Module 5 course rooted at ``root``.

    Besides the paths: the stubs nbgrader writes, a per-cell execution timeout long
    enough for the hidden test cells (the first one grades the whole notebook), and
    feedback that strips the hidden test regions (nbgrader shows them by default).
    """
    return (
        "from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor\n"
        "from nbgrader.preprocessors import ClearHiddenTests, GetGrades\n\n"
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.db_url = {('sqlite:///' + str(gradebook))!r}\n"
        "c.ClearSolutions.code_stub = {'python': '# YOUR CODE HERE\\nraise NotImplementedError()'}\n"
        "c.ClearSolutions.text_stub = 'YOUR ANSWER HERE'\n"
        f"c.Execute.timeout = {int(execute_timeout)}\n"
        "c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]\n"
    )


def _nbgrader_executable() -> list[str]:
    exe = Path(sys.executable).with_name("nbgrader")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nbgrader"]


def generate_notebooks(source_dir: Path, dest: Path) -> list[Path]:
    """Run ``nbgrader generate_assignment`` on ``source_dir``; write the student notebooks to ``dest``."""
    notebooks = sorted(Path(source_dir).glob("*.ipynb"))
    if not notebooks:
        raise ReleaseError(f"no source notebooks in {source_dir}; run `python source/build.py`")
    with tempfile.TemporaryDirectory(prefix="m5-release-") as tmp:
        course = Path(tmp) / "course"
        (course / "source" / ASSIGNMENT).mkdir(parents=True)
        for path in notebooks:
            shutil.copyfile(path, course / "source" / ASSIGNMENT / path.name)
        (course / "nbgrader_config.py").write_text(course_config(course, Path(tmp) / "gradebook.db"), encoding="utf-8")
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        proc = subprocess.run([*_nbgrader_executable(), "generate_assignment", ASSIGNMENT, "--force", "--no-db"],
                              cwd=course, env=env, capture_output=True, text=True)
        produced = sorted((course / "release" / ASSIGNMENT).glob("*.ipynb"))
        if proc.returncode != 0 or len(produced) != len(notebooks):
            raise ReleaseError("nbgrader generate_assignment failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
        dest.mkdir(parents=True, exist_ok=True)
        written = []
        for path in produced:
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
            target = dest / path.name
            target.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            written.append(target)
    return written


STUDENT_README = """# Module 5: learning from fixed data / Модуль 5: обучение на фиксированных данных

EN. Open `m05_assignment_en.ipynb` (the assignment) and `m05_lab_en.ipynb` (the capstone lab)
in Jupyter from this folder; the notebooks import the support library `m5_student` next to
them. Fill in the answer cells, run the self-check cells, then `m5 check m05_assignment_en.ipynb`.
The lab runs a short smoke profile by default; `RL_LLM_M5_PROFILE=full` runs the full one.
Submit the notebooks of one language.

RU. Откройте в Jupyter из этой папки `m05_assignment_ru.ipynb` (задание) и `m05_lab_ru.ipynb`
(итоговая лабораторная); блокноты импортируют лежащую рядом библиотеку поддержки `m5_student`.
Заполните ячейки ответов, запустите ячейки самопроверки, затем `m5 check m05_assignment_ru.ipynb`.
По умолчанию лабораторная идёт в коротком профиле smoke; `RL_LLM_M5_PROFILE=full` запускает полный.
Сдавайте блокноты на одном языке.
"""


def build_release(out: Path, source_dir: Path = SOURCE_DIR) -> Path:
    """Build ``out/module05`` (notebooks, README, m5_student); returns that folder."""
    target = Path(out) / ASSIGNMENT
    with tempfile.TemporaryDirectory(prefix="m5-release-out-") as tmp:
        staging = Path(tmp) / ASSIGNMENT
        generate_notebooks(Path(source_dir), staging)
        build_student_library(staging / PACKAGE)
        (staging / "README.md").write_text(STUDENT_README, encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, target)
    return target


def release_files(folder: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every file under ``folder`` (for comparisons)."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not _is_cache(p.relative_to(folder))}


def _is_cache(relative: Path) -> bool:
    """Byte-code and tool caches (__pycache__, .hypothesis, .ipynb_checkpoints): not part of a release."""
    return any(part == "__pycache__" or part.startswith(".") for part in relative.parts)


def main(out: Path) -> int:
    try:
        target = build_release(Path(out))
    except ReleaseError as exc:
        print(f"m5 release: {exc}", file=sys.stderr)
        return 1
    files = release_files(target)
    print(f"wrote {len(files)} files to {target}")
    print(json.dumps(sorted(f for f in files if f.endswith(".ipynb"))))
    return 0
