"""The students' self-check, shipped as ``m5_student.selfcheck``: ``python -m m5_student check NOTEBOOK``.

It needs only what the student kit installs (numpy, hypothesis): the release renames
the one import of the public checks below to ``m5_student.checks``. It runs the answer
cells of the assignment notebook (the imports cell and every nbgrader solution cell)
in a fresh namespace, then

* the public checks on each of the ten kernels, and
* the format of each graded numerical answer: assigned, a number, or a list of the
  expected length of numbers (not whether the value is right).

Student code runs in this process: it is the student's own code on their machine.
The course staff's checker reuses :func:`run_cells` and :func:`report`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import numbers
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from m5_student import checks as public
from m5_student.console import make_console_safe

# A notebook larger than this is not a filled-in assignment (the release is ~0.2 MB).
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
# Shipped next to this module: graded answer name -> None (a number) or n (a list of n numbers).
FORMAT_FILE = "answer_format.json"
KIT_CELL_IDS = ("kernel_imports",)

TEXT = {
    "en": {
        "answers": "numerical answers: {ok}/{total} assigned in the expected format",
        "unassigned": "  [FAIL] {name}: not assigned",
        "want_number": "  [FAIL] {name}: expected a number, got {got}",
        "want_list": "  [FAIL] {name}: expected a list of {n} numbers, got {got}",
        "format_note": "The format check does not say whether the values are right.",
        "cell_error": "cell {id}: {kind} ({message})",
        "example": "example",
        "usage": "Self-check of a Module 5 assignment notebook: public checks of the kernels and the format of the numerical answers.",
    },
    "ru": {
        "answers": "числовые ответы: {ok} из {total} присвоены в нужном формате",
        "unassigned": "  [ОШИБКА] {name}: значение не присвоено",
        "want_number": "  [ОШИБКА] {name}: ожидалось число, получено {got}",
        "want_list": "  [ОШИБКА] {name}: ожидался список из {n} чисел, получено {got}",
        "format_note": "Проверка формата не говорит, верны ли значения.",
        "cell_error": "ячейка {id}: исключение {kind} (сообщение: «{message}»)",
        "example": "пример",
        "usage": "Самопроверка ноутбука задания модуля 5: открытые проверки ядер и формат числовых ответов.",
    },
}
# Before the notebook is read its language is unknown: these errors are given in both.
READ_ERRORS = {
    "not_notebook": "{path}: expected a .ipynb notebook / ожидался ноутбук .ipynb",
    "missing": "{path}: no such file / файл не найден",
    "too_big": "{path}: {size} bytes, more than {limit} / {size} байт, больше {limit}",
    "unreadable": "{path}: not a readable notebook ({error}) / ноутбук не читается ({error})",
    "not_assignment": (
        "{path}: not the assignment notebook of Module 5 (metadata m5.kind = {kind!r}) / "
        "это не ноутбук задания модуля 5 (metadata m5.kind = {kind!r})"
    ),
}


class NotebookError(Exception):
    """The notebook cannot be checked (missing, too large, not JSON, not the assignment)."""


# ------------------------------------------------------------------ reading the notebook
def _source(cell: Mapping) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def assignment_cells(path: Path) -> tuple[list[tuple[str, str]], str]:
    """(cell id, source) of the cells to run, and the notebook's language ("en" or "ru").

    The cells: the kernel imports cell and every code cell nbgrader marks as a solution
    (kernels and numerical answers). Raises NotebookError with a bilingual message.
    """
    path = Path(path)
    if path.suffix != ".ipynb":
        raise NotebookError(READ_ERRORS["not_notebook"].format(path=path))
    if not path.is_file():
        raise NotebookError(READ_ERRORS["missing"].format(path=path))
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_BYTES:  # checked before reading
        raise NotebookError(READ_ERRORS["too_big"].format(path=path, size=size, limit=MAX_NOTEBOOK_BYTES))
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        meta = (nb.get("metadata") or {}).get("m5") or {}
        cells = [c for c in nb.get("cells", []) if isinstance(c, dict)]
    except (OSError, ValueError, AttributeError) as exc:
        raise NotebookError(READ_ERRORS["unreadable"].format(path=path, error=exc)) from None
    if meta.get("kind") != "assignment":
        raise NotebookError(READ_ERRORS["not_assignment"].format(path=path, kind=meta.get("kind")))
    chosen = []
    for cell in cells:
        nbgrader = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") == "code" and (cell.get("id") in KIT_CELL_IDS or nbgrader.get("solution")):
            chosen.append((str(cell.get("id", "")), _source(cell)))
    lang = meta.get("lang") if meta.get("lang") in TEXT else "en"
    return chosen, lang


def run_cells(cells: Iterable[tuple[str, str]], lang: str = "en") -> tuple[dict, list[str]]:
    """Run (id, source) cells in one fresh namespace; returns it and one line (in ``lang``) per failed cell.

    A broken cell costs only what it defines (as in grading); what the cells print is hidden.
    """
    namespace: dict = {"__name__": "__m5_check__"}
    errors = []
    for cell_id, source in cells:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"<cell {cell_id}>", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - the student's code may raise anything
            errors.append(TEXT[lang]["cell_error"].format(id=cell_id, kind=type(exc).__name__, message=str(exc)[:300]))
    return namespace, errors


# ------------------------------------------------------------------ answer formats
def _is_number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    return not math.isnan(float(value))  # inf is a valid answer (an unseen action's value)


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def answer_problem(name: str, value, length: int | None, lang: str = "en") -> str | None:
    """None when ``value`` has the expected format, else a one-line message in ``lang``.

    ``length`` None: a real number (not NaN, not a bool); an integer n: a list, tuple or
    1-D array of n such numbers.
    """
    t = TEXT[lang]
    if length is None:
        return None if _is_number(value) else t["want_number"].format(name=name, got=_describe(value))
    items = None
    if isinstance(value, (list, tuple)):
        items = list(value)
    elif getattr(value, "ndim", None) == 1 and hasattr(value, "tolist"):  # a numpy vector
        items = value.tolist()
    if items is not None and len(items) == length and all(_is_number(x) for x in items):
        return None
    return t["want_list"].format(name=name, n=length, got=_describe(value))


def load_formats(folder: Path | None = None) -> dict[str, int | None]:
    """The answer formats shipped next to this module (``answer_format.json``)."""
    path = (Path(__file__).resolve().parent if folder is None else Path(folder)) / FORMAT_FILE
    return json.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the report
def report(namespace: Mapping, errors: Iterable[str], lang: str, formats: Mapping[str, int | None], *, require_answers: bool = True) -> int:
    """Print the kernel checks and the answer formats in ``lang``; 0 when all pass, else 1.

    ``require_answers`` False (a ``.py`` file of kernels only): answers that are not
    assigned are counted but not failed; those assigned must still have the right format.
    """
    text, kit = public.TEXT[lang], TEXT[lang]
    for error in errors:
        print(error)
    all_passed = True
    for name in public.KERNEL_NAMES:
        fn = namespace.get(name)
        if not callable(fn):
            print(text["missing"].format(name=name))
            all_passed = False
            continue
        results = public.run_checks(fn, name, lang=lang)
        if results and all(r.not_implemented for r in results):
            print(text["not_impl"].format(name=name))
            all_passed = False
            continue
        print(public.format_results(name, results, lang))
        all_passed &= all(r.passed for r in results)
    missing = [name for name in formats if namespace.get(name) is None]  # None: the untouched stub's value
    wrong = [
        problem
        for name, length in formats.items()
        if name not in missing
        for problem in [answer_problem(name, namespace[name], length, lang)]
        if problem
    ]
    print(kit["answers"].format(ok=len(formats) - len(missing) - len(wrong), total=len(formats)))
    for line in ([kit["unassigned"].format(name=name) for name in missing] if require_answers else []) + wrong:
        print(line)
    print()
    print(text["disclaimer"])
    print(kit["format_note"])
    return 0 if all_passed and not wrong and not (require_answers and missing) else 1


def check_notebook(path: Path, lang: str | None = None, formats: Mapping[str, int | None] | None = None) -> int:
    """Self-check one assignment notebook; 0 all pass, 1 something fails, 2 unreadable notebook."""
    try:
        cells, detected = assignment_cells(Path(path))
    except NotebookError as exc:
        print(exc)
        return 2
    lang = lang or detected
    namespace, errors = run_cells(cells, lang)
    return report(namespace, errors, lang, load_formats() if formats is None else formats)


def kit_language() -> str:
    """The language of the kit this module ships in (``notebook_language()`` of its package), else "en"."""
    package = sys.modules.get(__package__ or "")
    language = getattr(package, "notebook_language", None)
    found = language() if callable(language) else "en"
    return found if found in TEXT else "en"


def main(argv: list[str] | None = None) -> int:
    make_console_safe()  # a Russian report on a console whose locale cannot show it
    parser = argparse.ArgumentParser(prog="python -m m5_student", description=f"{TEXT['en']['usage']} / {TEXT['ru']['usage']}")
    commands = parser.add_subparsers(dest="command", required=True)
    example = f"python -m m5_student check m05_assignment_{kit_language()}.ipynb"
    check = commands.add_parser(
        "check",
        help="self-check a notebook / самопроверка ноутбука",
        description=f"{TEXT['en']['example']} / {TEXT['ru']['example']}: {example}",
    )
    check.add_argument("notebook", help="the assignment notebook / ноутбук задания (m05_assignment_<lang>.ipynb)")
    check.add_argument(
        "--lang", choices=sorted(TEXT), help="language of the report (default: the notebook's) / язык отчёта (по умолчанию — язык ноутбука)"
    )
    args = parser.parse_args(argv)
    return check_notebook(Path(args.notebook), args.lang)
