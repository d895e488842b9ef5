"""`m5 release`: the instructor sources and the student release, one nbgrader assignment per language.

For each language (``module05_en``, ``module05_ru``; one assignment each, so nbgrader's
maximum is the true one):

1. ``source/module05_<lang>/``: the instructor notebooks (:mod:`autograder.assign.sources`)
   and the student kit, which nbgrader copies into every release, autograde and
   feedback folder because it sits in the assignment's source folder:

   * ``m5_student/``, the support library the notebooks import: the modules of
     ``reference_impl`` with ``reference_impl`` renamed, every ``### BEGIN SOLUTION``
     region replaced by ``raise NotImplementedError("implement <name> in the ... notebook (Part 3)")``
     and the private helpers that only solution code used removed (``exercises.py``,
     which computes the worked answers, is left out); the public self-checks
     (:mod:`autograder.check.public`) as ``m5_student/checks.py``, the students'
     self-check command (:mod:`autograder.check.kit`) as ``m5_student/selfcheck.py``
     with ``answer_format.json``, ``python -m m5_student check NOTEBOOK``;
   * ``requirements.txt`` (pins from ``requirements.lock``) and a README in English and Russian;

2. ``release/module05_<lang>/``: ``nbgrader generate_assignment`` on that folder in a
   throw-away course directory (its own config and sqlite gradebook, so the checkout
   stays clean). nbgrader replaces every ``### BEGIN SOLUTION`` region by a stub,
   removes ``### BEGIN HIDDEN TESTS`` regions, clears outputs and copies the kit.

The output is deterministic (no timestamps; nbgrader's checksums depend only on cell
content), so the committed ``source/`` and ``release/`` can be compared with a fresh build.
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

from autograder.assign import kit_readme, notebooks, rubrics, sources, stubs
from autograder.assign.claims import ClaimError
from autograder.check.selfcheck import answer_formats
from autograder.i18n import contracts_ru

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "reference_impl"
SOURCE_ROOT = REPO / "source"
RELEASE_ROOT = REPO / "release"
LOCK_FILE = REPO / "requirements.lock"
CHECKS_DIR = REPO / "autograder" / "check"
# Grader modules that are public and ship, under their student names.
SHIPPED_CHECKS = {"public.py": "checks.py", "public_text.py": "checks_text.py", "time_limit.py": "time_limit.py", "kit.py": "selfcheck.py"}
# Student-only modules (notebook glue, the `python -m m5_student` entry point).
EXTRAS = Path(__file__).resolve().parent / "student_extras"
PACKAGE = "m5_student"
# What the kit's requirements.txt pins (from requirements.lock): what m5_student and the notebooks import, and Jupyter.
STUDENT_PACKAGES = ("numpy", "torch", "gymnasium", "matplotlib", "tqdm", "hypothesis", "jupyterlab", "ipykernel")
# Modules that must never reach students: worked answers of the numerical exercises.
# Not shipped: the answer key, and the instructor's side studies whose reports live in docs/lab-results/
# (the maximization-bias MDP, CQL's penalty sweep); the lab the kit runs does not import them.
EXCLUDED_MODULES = frozenset({"exercises.py", "maxbias.py", "cql_sweep.py"})
# Where a stubbed function is to be written (the message of its NotImplementedError).
LAB_PORTS = frozenset({"torch_kernels.py"})
BEGIN_RE, END_RE = stubs.BEGIN_RE, stubs.END_RE  # solution region markers, one definition

# Appended to the kit's __init__.py; {lang!r} is the language of the notebooks the kit ships with.
NOTEBOOK_LANGUAGE = '''

# The language of the notebooks this kit was built for (their metadata m5.lang), written by
# the course's release build: one kit per language folder.
KIT_LANGUAGE = "{lang}"


def notebook_language() -> str:
    """Language of the notebooks next to this kit ("en" or "ru"), as the release build wrote it.

    It never depends on how the notebook is run (Jupyter, VS Code, nbconvert, nbgrader).
    While the course's grader runs a submission (``M5_GRADING``), the one kit it uses for
    every submission says the submission's own language, which the grader passes in ``M5_LANG``.
    """
    import os  # the kit's __init__.py is this function's source: it imports what it uses

    if os.environ.get("M5_GRADING") and os.environ.get("M5_LANG") in ("en", "ru"):
        return os.environ["M5_LANG"]
    return KIT_LANGUAGE
'''
# What a stubbed kernel of the kit raises: where it is to be written.
STUB_MESSAGES = {
    "en": {"message": "implement {name} in the {where}", "assignment": "assignment notebook (Part 3)", "lab": "lab notebook (section 5a)"},
    "ru": {
        "message": "реализуйте {name} в {where}",
        "assignment": "ноутбуке задания (часть 3)",
        "lab": "ноутбуке лабораторной работы (раздел 5a)",
    },
}


class ReleaseError(Exception):
    """The release cannot be built (bad source, nbgrader failure)."""


# ------------------------------------------------------------------ the support library
def _enclosing_function(tree: ast.Module, line: int) -> str:
    """Name of the innermost function whose body holds 1-based ``line``."""
    name = stubs.enclosing_function(tree, line)
    if name is None:
        raise ReleaseError(f"solution region at line {line} is not inside a function")
    return name


def stub_solutions(source: str, where: str, filename: str = "<module>", lang: str = "en") -> str:
    """Replace each ``### BEGIN SOLUTION`` .. ``### END SOLUTION`` region by a stub.

    The stub raises ``NotImplementedError("implement <function> in the <where> notebook")``
    (in ``lang``; ``where`` is "assignment" or "lab") at the region's indentation.
    Raises ReleaseError on unbalanced markers.
    """
    text = STUB_MESSAGES[lang]
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
        message = text["message"].format(name=name, where=text[where])
        out.append(f"{match['indent']}raise NotImplementedError({json.dumps(message, ensure_ascii=False)})")
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
    """Imports of ``reference_impl`` and of the shipped check modules, renamed for ``m5_student``."""
    source = re.sub(r"\breference_impl\b", PACKAGE, source)
    for module, shipped in SHIPPED_CHECKS.items():
        source = source.replace(f"from autograder.check.{module[:-3]} import", f"from {PACKAGE}.{shipped[:-3]} import")
    return source.replace("from autograder.check import public", f"from {PACKAGE} import checks as public")


# What the kit's modules say about tools and files of the course repository, which the
# student does not have, reworded to what the student has (the kit's own command, or no path).
KIT_WORDING = (
    (re.compile(r"\bm5 lab\b"), f"python -m {PACKAGE}.lab"),
    (re.compile(r"\bm5 release\b"), "the course's release build"),
    (re.compile(r"\bthis repository's\b"), "the course's"),
    (re.compile(r"\[docs/[\w./-]*\]\(docs/[\w./-]*\)"), "the course's lab results"),
    (re.compile(r"`{0,2}docs/[\w./-]*`{0,2}"), "the course's notes"),
)


def student_wording(source: str) -> str:
    """``source`` (a kit module, package already renamed) with :data:`KIT_WORDING` applied."""
    for pattern, replacement in KIT_WORDING:
        source = pattern.sub(replacement, source)
    return source


def student_module(path: Path, lang: str = "en") -> str:
    """The student version of one ``reference_impl`` module, for the kit of the ``lang`` notebooks."""
    source = path.read_text(encoding="utf-8")
    if "### BEGIN SOLUTION" in source:
        where = "lab" if path.name in LAB_PORTS else "assignment"
        source = drop_unused_private_functions(stub_solutions(source, where, path.name, lang))
    # The contracts the notebooks state in their language (the kernels' docstrings and
    # comments), before renaming: the translation table knows the reference's wording.
    source = contracts_ru.localise_source(source, lang)
    source = student_wording(rename_package(source))
    header = "# Generated by the course's release build; do not edit.\n# The graded kernels are stubs here: write them in the notebooks.\n"
    source = header + source
    if path.name == "__init__.py" and path.parent.name == REFERENCE.name:  # the kit's own __init__, not a subpackage's
        source = source.rstrip("\n") + "\n" + NOTEBOOK_LANGUAGE.format(lang=lang)
    return source


def shipped_modules(reference: Path = REFERENCE) -> list[Path]:
    """The ``reference_impl`` modules the kit ships (subpackages included), relative to ``reference``."""
    found = (p.relative_to(reference) for p in reference.rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(p for p in found if p.name not in EXCLUDED_MODULES)


def shipped_text_files(reference: Path = REFERENCE) -> list[Path]:
    """The data files of text the kit's modules read (the lab's ``text/*.toml``), relative to ``reference``."""
    return sorted(p.relative_to(reference) for p in reference.rglob("*.toml") if p.parent.name == "text")


def build_student_library(dest: Path, lang: str = "en") -> list[Path]:
    """Write ``dest`` (the ``m5_student`` package of the ``lang`` notebooks); returns the files written."""
    if lang not in sources.LANGS:
        raise ValueError(f"build_student_library: `lang` must be one of {sources.LANGS}, got {lang!r}")

    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "data").mkdir(parents=True)
    written = []
    for relative in shipped_modules():
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(student_module(REFERENCE / relative, lang), encoding="utf-8")
        written.append(target)
    for relative in shipped_text_files():  # worded for the kit as the modules' strings are
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(student_wording(rename_package((REFERENCE / relative).read_text(encoding="utf-8"))), encoding="utf-8")
        written.append(target)
    for module, shipped in SHIPPED_CHECKS.items():
        target = dest / shipped
        target.write_text(rename_package((CHECKS_DIR / module).read_text(encoding="utf-8")), encoding="utf-8")
        written.append(target)
    formats = dest / "answer_format.json"
    formats.write_text(json.dumps(answer_formats(), indent=1) + "\n", encoding="utf-8")
    written.append(formats)
    for path in sorted(p for p in EXTRAS.glob("*.py") if p.name != "__init__.py"):
        target = dest / path.name
        shutil.copyfile(path, target)
        written.append(target)
    for path in sorted((REFERENCE / "data").iterdir()):
        if path.is_file() and not path.name.startswith("."):
            if path.suffix == ".json":  # the protocol record: its words are read too
                (dest / "data" / path.name).write_text(student_wording(path.read_text(encoding="utf-8")), encoding="utf-8")
            else:
                shutil.copyfile(path, dest / "data" / path.name)
            written.append(dest / "data" / path.name)
    return written


def _pins(lock: Path = LOCK_FILE) -> dict[str, str]:
    """Package name (lower case) -> pinned version, from ``lock``."""
    pins = {}
    for line in Path(lock).read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.strip())
        if match:
            pins[match[1].lower()] = match[2]
    return pins


def student_requirements(lock: Path = LOCK_FILE) -> str:
    """The kit's ``requirements.txt``: the pins of :data:`STUDENT_PACKAGES` in ``lock``, all from the package
    registry (the optional CPU-only torch command, which needs another host, is in the README)."""
    pins = _pins(lock)
    missing = [name for name in STUDENT_PACKAGES if name not in pins]
    if missing:
        raise ReleaseError(f"{lock}: no pinned version of {missing}")
    header = (
        "# Module 5 student kit (Python 3.11+) / Модуль 5: пакеты для студентов (Python 3.11+)\n"
        "#   pip install -r requirements.txt\n"
        "# Everything installs from the package registry; README.md says how to get a smaller CPU-only torch /\n"
        "# всё ставится из реестра пакетов; как поставить torch только для CPU (меньше загрузка), сказано в README.md\n"
    )
    return header + "".join(f"{name}=={pins[name]}\n" for name in STUDENT_PACKAGES)


def student_readme(lang: str) -> str:
    """The kit's README.md for the ``lang`` assignment (:mod:`autograder.assign.kit_readme`)."""
    return kit_readme.student_readme(lang, torch_version=_pins()["torch"])


def build_kit(folder: Path, lang: str) -> list[Path]:
    """The student kit in the assignment folder ``folder``: m5_student/, requirements.txt, README.md."""
    folder = Path(folder)
    written = build_student_library(folder / PACKAGE, lang)
    for name, text in (("requirements.txt", student_requirements()), ("README.md", student_readme(lang))):
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written


def ensure_kits(source_root: Path = SOURCE_ROOT) -> list[Path]:
    """Build the student kit into every assignment folder of ``source_root`` that exists.

    The kit under ``source/`` is a build output (git-ignored: only the notebooks are
    committed there); nbgrader needs it beside the notebooks when it copies an assignment,
    and the notebooks import it when they run. Rebuilt every time (a second or two), so
    it never lags behind ``reference_impl``. Returns the files written.
    """
    written: list[Path] = []
    for lang, assignment in sources.ASSIGNMENTS.items():
        folder = Path(source_root) / assignment
        if folder.is_dir():
            written += build_kit(folder, lang)
    return written


def build_sources(source_root: Path = SOURCE_ROOT, langs: tuple[str, ...] = sources.LANGS) -> list[Path]:
    """Write ``source_root/module05_<lang>/`` (notebooks and kit) for each of ``langs``; returns the folders."""
    notebooks.write_sources(source_root, langs)
    for lang in langs:
        build_kit(Path(source_root) / sources.ASSIGNMENTS[lang], lang)
    return [Path(source_root) / sources.ASSIGNMENTS[lang] for lang in langs]


# ------------------------------------------------------------------ the notebooks
def course_config(
    root: Path, gradebook: Path, *, execute_timeout: int = 600, course_id: str | None = None, exchange: Path | None = None
) -> str:
    """An ``nbgrader_config.py`` for a Module 5 course rooted at ``root``.

    ``course_id`` and ``exchange`` (the exchange folder shared with the students) are
    needed only with nbgrader's exchange (release_assignment, collect, release_feedback).

    Besides the paths: the stubs nbgrader writes, in each notebook's language
    (:mod:`autograder.assign.stubs`), a per-cell execution timeout long
    enough for the hidden test cells (the first one grades the whole notebook), feedback
    that strips the hidden test regions (nbgrader shows them by default), and no grader
    traces in ``autograded/`` or ``feedback/``: the notebook kernels (started by this
    process, so they inherit its environment) write no byte-code caches and keep
    Hypothesis' files in a temporary folder, and tool caches are never copied.
    """
    return (
        "import atexit\n"
        "import os\n"
        "import shutil\n"
        "import tempfile\n\n"
        "from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor\n"
        "from nbgrader.preprocessors import ClearHiddenTests, GetGrades\n\n"
        "from autograder.assign.stubs import generate_assignment_preprocessors\n\n"
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.db_url = {('sqlite:///' + str(gradebook))!r}\n"
        f"c.CourseDirectory.ignore = {list(NBGRADER_IGNORE)!r}\n"
        "# Answer stubs in the notebook's language (metadata m5.lang): # YOUR CODE HERE / # ВАШ КОД ...\n"
        "c.GenerateAssignment.preprocessors = generate_assignment_preprocessors()\n"
        f"c.Execute.timeout = {int(execute_timeout)}\n"
        "c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]\n"
        + (f"c.CourseDirectory.course_id = {course_id!r}\n" if course_id else "")
        + (f"c.Exchange.root = {str(exchange)!r}\n" if exchange else "")
        + "# Kernels run in autograded/<student>/<assignment>/: keep caches and Hypothesis' files out of it,\n"
        "# in a private folder (mode 0700: Hypothesis caches constants of the modules it sees) removed at exit.\n"
        "os.environ['PYTHONDONTWRITEBYTECODE'] = '1'\n"
        "_hypothesis_storage = tempfile.mkdtemp(prefix='m5-nbgrader-hypothesis-')\n"
        "atexit.register(shutil.rmtree, _hypothesis_storage, True)\n"
        "os.environ['HYPOTHESIS_STORAGE_DIRECTORY'] = _hypothesis_storage\n"
    )


# nbgrader's default ignore list plus tool caches a student's folder may hold.
NBGRADER_IGNORE = (".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".hypothesis", ".pytest_cache")


def _nbgrader_executable() -> list[str]:
    exe = Path(sys.executable).with_name("nbgrader")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nbgrader"]


def generate_assignment(source_folder: Path, dest: Path) -> list[Path]:
    """``nbgrader generate_assignment`` of ``source_folder`` (notebooks and kit) into ``dest``; returns the files."""
    source_folder, dest = Path(source_folder), Path(dest)
    assignment = source_folder.name
    notebooks = sorted(source_folder.glob("*.ipynb"))
    if not notebooks:
        raise ReleaseError(f"no source notebooks in {source_folder}; run `m5 release`")
    with tempfile.TemporaryDirectory(prefix="m5-release-") as tmp:
        course = Path(tmp) / "course"
        shutil.copytree(
            source_folder, course / "source" / assignment, ignore=lambda folder, names: [n for n in names if _is_cache(Path(n))]
        )
        (course / "nbgrader_config.py").write_text(course_config(course, Path(tmp) / "gradebook.db"), encoding="utf-8")
        # The config imports this checkout's autograder (the localised stubs), whatever is installed.
        python_path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": python_path}
        proc = subprocess.run(
            [*_nbgrader_executable(), "generate_assignment", assignment, "--force", "--no-db"],
            cwd=course,
            env=env,
            capture_output=True,
            text=True,
        )
        produced = course / "release" / assignment
        expected = set(release_files(course / "source" / assignment))
        if proc.returncode != 0 or set(release_files(produced)) != expected:
            raise ReleaseError(f"nbgrader generate_assignment {assignment} failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
        for path in sorted(produced.glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            rubrics.strip_rubric(nb)  # the marker's wording stays with the instructor
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(produced, dest)
    return [dest / name for name in sorted(expected)]


def build_release(out_root: Path = RELEASE_ROOT, source_root: Path = SOURCE_ROOT) -> list[Path]:
    """``out_root/module05_<lang>/`` from ``source_root/module05_<lang>/`` for every language; returns the folders."""
    folders = []
    for assignment in sources.ASSIGNMENTS.values():
        generate_assignment(Path(source_root) / assignment, Path(out_root) / assignment)
        folders.append(Path(out_root) / assignment)
    return folders


def release_files(folder: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every file under ``folder`` (for comparisons)."""
    folder = Path(folder)
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not _is_cache(p.relative_to(folder))
    }


def _is_cache(relative: Path) -> bool:
    """Byte-code and tool caches (__pycache__, .hypothesis, .ipynb_checkpoints): not part of a release."""
    return any(part == "__pycache__" or part.startswith(".") for part in relative.parts)


def main(out: Path = RELEASE_ROOT, source_root: Path = SOURCE_ROOT) -> int:
    """`m5 release`: rebuild ``source_root`` (notebooks and kit), then the release in ``out``."""
    try:
        folders = build_sources(source_root) + build_release(Path(out), source_root)
    except (ReleaseError, ClaimError) as exc:  # a missing lab report is a one-line error too
        print(f"m5 release: {exc}", file=sys.stderr)
        return 2  # refused: nothing released
    for folder in folders:
        files = release_files(folder)
        print(f"wrote {len(files)} files to {folder}: " + ", ".join(sorted(f for f in files if f.endswith(".ipynb"))))
    return 0
