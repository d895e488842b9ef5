"""Build the instructor (nbgrader source) notebooks of Module 5 from one bilingual builder.

Outputs one nbgrader assignment per language, ``source/module05_en/`` and
``source/module05_ru/``, each with ``m05_assignment_<lang>.ipynb`` and ``m05_lab_<lang>.ipynb``
(one assignment per language, so nbgrader's maximum is the true one; the student kit
that :mod:`autograder.assign.release` adds to each folder travels with nbgrader's release).
Every code cell is built once, without a language argument, so the English and the
Russian notebooks cannot drift apart in code; only markdown, docstrings and comments
differ (the Russian ones come from :mod:`autograder.i18n.contracts_ru`).

Where the text and the code come from (never retyped):

* the kernels' solution cells: the function sources in ``reference_impl/kernels.py``
  and ``reference_impl/torch_kernels.py`` (via :mod:`ast`), with the private helpers
  each one calls nested inside its ``### BEGIN SOLUTION`` region, so nbgrader's stub
  removes them too;
* questions and worked answers: ``solutions/<lang>/NN-*.md`` (``## Question`` /
  ``## Answer`` sections);
* numerical inputs and worked values: :mod:`reference_impl.exercises`.

nbgrader cell metadata follows schema 3; cell ids equal the (unique) grade ids, so
the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat

import reference_impl
from autograder.assign import claims, points
from autograder.hidden.kernels import PROPERTIES
from autograder.i18n import contracts_ru
from reference_impl import exercises

REPO = Path(__file__).resolve().parents[2]
SOURCE_ROOT = REPO / "source"
SOLUTIONS_DIR = REPO / "solutions"
KERNELS_PY = REPO / "reference_impl" / "kernels.py"
TORCH_KERNELS_PY = REPO / "reference_impl" / "torch_kernels.py"
LANGS = ("en", "ru")
KERNEL_NAMES = tuple(reference_impl.KERNEL_NAMES)
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CONCEPTUAL_POINTS = 3
EXPLANATION_POINTS = 1
KERNEL_POINTS = 10
NOTEBOOK_NAMES = {("assignment", lang): f"m05_assignment_{lang}.ipynb" for lang in LANGS}
NOTEBOOK_NAMES.update({("lab", lang): f"m05_lab_{lang}.ipynb" for lang in LANGS})
# One nbgrader assignment per language: its folder under source/ and release/.
ASSIGNMENTS = {lang: f"module05_{lang}" for lang in LANGS}


# ------------------------------------------------------------------ kernel sources
def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def private_helpers(name: str, path: Path = KERNELS_PY) -> list[str]:
    """Module-level ``_helpers`` that ``name`` calls, transitively, in file order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = _functions(tree)
    if name not in functions:
        raise ValueError(f"private_helpers: `name` {name!r} is not a function of {path.name}")
    needed: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for node in ast.walk(functions[current]):
            if isinstance(node, ast.Name) and node.id.startswith("_") and node.id in functions and node.id not in needed:
                needed.add(node.id)
                todo.append(node.id)
    return [f for f in functions if f in needed]


def _end_line(lines: list[str], node: ast.FunctionDef) -> int:
    """End of ``node`` including trailing indented comments (ast stops at the last statement)."""
    end = node.end_lineno
    while end < len(lines) and lines[end].startswith((" ", "\t")) and lines[end].strip().startswith("#"):
        end += 1
    return end


def solution_source(name: str, path: Path = KERNELS_PY) -> str:
    """The source of kernel ``name`` with its private helpers nested in the solution region.

    Raises ValueError when the function is missing or has no solution markers.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    functions = _functions(ast.parse(text))
    if name not in functions:
        raise ValueError(f"solution_source: `name` {name!r} is not a function of {path.name}")
    node = functions[name]
    body = lines[node.lineno - 1 : _end_line(lines, node)]
    begin = next((i for i, line in enumerate(body) if line.strip() == BEGIN), None)
    if begin is None or not any(line.strip() == END for line in body):
        raise ValueError(f"solution_source: {name} in {path.name} has no {BEGIN} / {END} markers")
    indent = body[begin][: len(body[begin]) - len(body[begin].lstrip())]
    nested: list[str] = []
    for helper in private_helpers(name, path):
        h = functions[helper]
        nested += [indent + line if line else line for line in lines[h.lineno - 1 : h.end_lineno]] + [""]
    return "\n".join(body[: begin + 1] + nested + body[begin + 1 :]).replace("reference_impl.", "m5_student.")


# ------------------------------------------------------------------ solutions text
def exercise_text(number: int, lang: str) -> dict[str, str]:
    """``{"title", "question", "answer", "discussion"}`` of exercise ``number`` from solutions/<lang>/.

    ``discussion`` is the question's "**Discussion.**" paragraph, or "" when it has none.
    """
    matches = sorted((SOLUTIONS_DIR / lang).glob(f"{number:02d}-*.md"))
    if len(matches) != 1:
        raise ValueError(f"exercise_text: expected one solutions/{lang}/{number:02d}-*.md, found {len(matches)}")
    text = matches[0].read_text(encoding="utf-8")
    title = text.splitlines()[0].lstrip("# ").strip()
    sections = re.split(r"^## .*$", text, flags=re.M)
    if len(sections) != 3:
        raise ValueError(f"exercise_text: {matches[0].name} must have exactly two '## ' sections")
    question = sections[1].strip()
    discussion = DISCUSSION.search(question)
    return {
        "title": title,
        "question": question,
        "answer": sections[2].strip(),
        "discussion": discussion.group(0).strip() if discussion else "",
    }


# The hand-graded discussion questions of a code exercise: the question's paragraph that
# opens with a bold "Discussion." / "Обсуждение." (repeated above the discussion cell).
DISCUSSION = re.compile(r"^\*\*(?:Discussion|Обсуждение)\.\*\*.*$", re.M)


# ------------------------------------------------------------------ cells
def _nbgrader(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


# Roles the grader reads from code cells (autograder.grade.extract.SKIPPED_ROLES): it never
# runs the self-check cells, the lab's heavy runs, or the setup cell that finds m5_student
# on the student's machine (the grader puts the library on the path itself).
ROLE_PREFIXES = {"selfcheck": ("check_",), "heavy": ("run_", "lab_setup"), "setup": ("setup",)}


def cell_role(cell_id: str) -> str | None:
    """The grading role of the builder's code cell ``cell_id``, if it has one."""
    return next((role for role, prefixes in ROLE_PREFIXES.items() if cell_id.startswith(prefixes)), None)


def code(cell_id: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    meta = _nbgrader(cell_id, **nbgrader) if nbgrader else {}
    if cell_role(cell_id):
        meta["m5"] = {"role": cell_role(cell_id)}
    return nbformat.v4.new_code_cell(source.strip("\n"), id=cell_id, metadata=meta)


def markdown(cell_id: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    meta = _nbgrader(cell_id, **nbgrader) if nbgrader else {}
    return nbformat.v4.new_markdown_cell(source.strip("\n"), id=cell_id, metadata=meta)


def locked(cell_id: str, source: str) -> nbformat.NotebookNode:
    return code(cell_id, source, locked=True)


SETUP_CODE = """
# Find the support library m5_student (shipped next to this notebook) and put it on sys.path.
import sys
from pathlib import Path


def _find_support_library(start: Path) -> Path:
    for folder in (start, *start.parents):
        if (folder / "m5_student" / "__init__.py").is_file():
            return folder
    raise FileNotFoundError(
        "m5_student not found: start Jupyter in the assignment folder that holds this notebook and m5_student / "
        "m5_student не найдена: запустите Jupyter в папке задания, где лежат этот ноутбук и m5_student")


_support_root = str(_find_support_library(Path.cwd().resolve()))
if _support_root not in sys.path:
    sys.path.insert(0, _support_root)
import m5_student

LANG = m5_student.notebook_language()
"""

KERNEL_IMPORTS = """
import math

import numpy as np

from m5_student import validation as v
"""


def _hidden(comment: str, call: str) -> str:
    module_fn = call.split("(")[0]
    return f"# {comment}\n### BEGIN HIDDEN TESTS\nfrom autograder.nbgrader_bridge import {module_fn}\n{call}\n### END HIDDEN TESTS"


def _value_literal(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_literal(x) for x in value) + "]"
    value = float(value)
    if value == float("inf"):
        return 'float("inf")'
    if value == float("-inf"):
        return 'float("-inf")'
    return repr(round(value, 10))


def answer_forms(number: int) -> list[tuple[str, int | None]]:
    """(name, None for a number or n for a list of n numbers) of each graded name of ``number``."""
    values = exercises.answers(number)
    return [(name, len(values[name]) if isinstance(values[name], (list, tuple)) else None) for name in exercises.ANSWER_NAMES[number]]


def _form_comment(name: str, length: int | None) -> str:
    return f"#   {name}: " + ("a number" if length is None else f"a list of {length} numbers")


def numerical_answer_cell(number: int) -> nbformat.NotebookNode:
    """Solution cell assigning the graded names of exercise ``number`` (worked values); its
    comment states each name's expected form (a number, or a list of n numbers)."""
    values = exercises.answers(number)
    forms = answer_forms(number)
    lines = [f"# Exercise {number}: assign"] + [_form_comment(name, n) for name, n in forms]
    lines += [BEGIN] + [f"{name} = {_value_literal(values[name])}" for name, _ in forms] + [END]
    return code(f"ex{number:02d}_answer", "\n".join(lines), solution=True)


def numerical_test_cell(number: int) -> nbformat.NotebookNode:
    names = exercises.ANSWER_NAMES[number]
    # The visible part only reports, in the kit's language (the code is the same in every
    # notebook); it never raises: a traceback would show the hidden part in nbgrader's feedback.
    visible = f"from m5_student.notebook import report_assigned\n\nreport_assigned({list(names)!r}, globals())\n"
    source = visible + _hidden("graded after you submit", f"answer_points({number})")
    return code(f"ex{number:02d}_tests", source, grade=True, locked=True, points=len(names))


def kernel_cells(name: str) -> list[nbformat.NotebookNode]:
    """Answer cell, visible self-check and hidden test of one kernel (language-free)."""
    return [
        code(f"kernel_{name}", solution_source(name), solution=True),
        locked(f"check_{name}", f"from m5_student.checks import check\n\ncheck({name}, lang=LANG);"),
        code(
            f"test_{name}",
            _hidden("hidden tests, run after you submit", f'kernel_points("{name}")'),
            grade=True,
            locked=True,
            points=KERNEL_POINTS,
        ),
    ]


# ------------------------------------------------------------------ texts
# The grading tolerance of numerical answers as students read it ("1e-4"), from the grader's constant.
TOLERANCE_TEXT = f"{exercises.DEFAULT_TOLERANCE:.0e}".replace("e-0", "e-")

ASSIGNMENT_TEXT = {
    "en": {
        "title": (
            "# Module 5 assignment: learning from fixed data\n\n"
            "Three parts, numbered as one list of exercises: eight conceptual questions (exercises 1–8, "
            "answered in the markdown cells marked for you), seven numerical exercises (9–15: assign the named "
            "values; the autograder checks them) and nine code exercises (16–24: write the body of ten "
            "kernels, exercise 16 has two, and run the self-check cell below each one). Every answer cell sits "
            "right below its question. The lab notebook in this folder trains with your kernels and asks for "
            "four torch ports of them (its section 5a). In this course a *kernel* is one of the ten functions "
            "you write; Jupyter's *Kernel* menu (*Restart & Run All*) is something else.\n\n"
            "{{points_table}}\n\n"
            "Work in the answer cells only; do not rename the functions or the answer variables. "
            "Two grading rules: a numerical answer counts when each of its numbers lies within "
        )
        + TOLERANCE_TEXT
        + " of the "
        "exact value, so give at least four decimals or an exact expression (`1/3`, not `0.333`); and "
        "a kernel must not modify its input arrays (copy before changing anything): a hidden test checks "
        "this for every kernel and costs points. "
        "Before submitting: *Kernel → Restart & Run All*, then self-check from a terminal in this folder: "
        "`python -m m5_student check m05_assignment_en.ipynb` (the README of the folder lists what to install).",
        "setup": (
            "Run the two cells below first: the first finds the support library `m5_student` next to this "
            "notebook, the second imports what the answer cells of Parts 2 and 3 may use: `np` (numpy), "
            "`math` and `v` (the input-validation helpers of Part 3)."
        ),
        "conceptual": (
            "## Part 1. Conceptual questions (exercises 1–8)\n\nEach question ends with its expected length and what a "
            "full answer covers, item by item with its points: the rubric the answers are graded with, by hand."
        ),
        "numerical": (
            "## Part 2. Numerical exercises (9–15)\n\nCompute by hand or with numpy, then assign the values to the names given. "
            "The comment at the top of each answer cell says what each name holds: a number, or a "
            "list of n numbers (a Python list in the order of the question). Each number must lie within "
        )
        + TOLERANCE_TEXT
        + " of the exact value: keep at least four decimals, or write the exact "
        "expression (`1/3` passes, `0.333` does not).",
        "explain": "*Your explanation for the parts that ask why (graded by hand):*",
        "kernels": (
            "## Part 3. Kernels (exercises 16–24)\n\nEach function has its contract in the docstring. Validate the inputs and raise "
            "`ValueError` (the helpers in `m5_student.validation`, imported as `v`, are optional) naming the bad "
            "argument. The hidden tests check that each bad input the docstring names raises `ValueError`; the "
            "wording of the message is not graded. Never modify an input array in place (a hidden test checks "
            "every kernel for it). "
            "The self-check cell runs public checks; hidden tests check many more inputs.\n\n"
            "Rules every kernel follows, where its docstring says nothing more specific:\n\n"
            "- **Outputs.** An array result is float64 (`behavior_support_mask`: bool) and a loss is one number "
            "(a Python float). Values are compared within a tolerance that scales with the inputs, so a "
            "float32 or 0-d array result gets full marks too.\n"
            "- **Flags and actions.** `terminated` and `mask` may be bools or the numbers 0 and 1 of any dtype. "
            "An action index is an integer or a float with an integral value (1.0); a bool is not an action.\n"
            "- **Empty inputs.** B = 0 gives an empty result where the docstring says so. An empty action axis "
            "(A = 0) is always a ValueError, even when B = 0: shape (0, 0) raises.\n"
            "- **Values that are used.** Only what the docstring says is never read may be NaN or ±inf "
            "(next-state values on terminal rows, masked-out log-probabilities, the mean of an action with "
            "count 0). Every other value is used, at any gamma (0 included) and whatever probability "
            "multiplies it (0 included): a non-finite one raises ValueError."
        ),
        "code_title": "Exercise {n}. Code: `{name}`",
        "discussion_title": "#### Discussion (exercise {n})",
        "discussion": "*Your answers to the discussion questions (graded by hand):*",
    },
    "ru": {
        "title": (
            "# Задание модуля 5: обучение на фиксированных данных\n\n"
            "Три части, упражнения пронумерованы подряд: восемь вопросов на понимание (упражнения 1–8, ответ "
            "пишется в отмеченных ячейках markdown), семь вычислительных упражнений (9–15: присвойте значения "
            "переменным с заданными именами; их проверяет автопроверка) и девять упражнений на код (16–24: "
            "напишите тело десяти ядер, в упражнении 16 их два, и запустите ячейку самопроверки под каждым). "
            "Ячейка ответа стоит сразу под своим вопросом. Лабораторная в этой папке обучается на ваших ядрах "
            "и просит написать четыре из них на torch (её раздел 5a). В этом курсе *ядро* — одна из десяти "
            "функций, которые вы пишете; меню *Kernel* в Jupyter (*Restart & Run All*) — другое.\n\n"
            "{{points_table}}\n\n"
            "Пишите только в ячейках ответа и не переименовывайте функции и переменные ответов. "
            "Два правила проверки: численный ответ засчитывается, если каждое его число отличается от "
            "точного значения не больше чем на "
        )
        + TOLERANCE_TEXT
        + ", поэтому пишите не меньше четырёх знаков после запятой "
        "или точное выражение (`1/3`, а не `0.333`); и ядро не должно изменять переданные ему массивы "
        "(сначала скопируйте, потом меняйте): скрытый тест проверяет это у каждого ядра, и нарушение "
        "стоит баллов. "
        "Перед сдачей: *Kernel → Restart & Run All*, затем самопроверка из терминала в этой папке: "
        "`python -m m5_student check m05_assignment_ru.ipynb` (что установить, написано в README папки).",
        "setup": (
            "Сначала выполните две ячейки ниже: первая находит библиотеку поддержки `m5_student` рядом с "
            "ноутбуком, вторая импортирует то, чем могут пользоваться ячейки ответов частей 2 и 3: `np` (numpy), "
            "`math` и `v` (вспомогательные функции проверки входов из части 3)."
        ),
        "conceptual": (
            "## Часть 1. Вопросы на понимание (упражнения 1–8)\n\nВ конце каждого вопроса указаны ожидаемый объём и что "
            "содержит полный ответ, по пунктам с баллами: по этой схеме оценивания ответы проверяются вручную."
        ),
        "numerical": (
            "## Часть 2. Вычислительные упражнения (9–15)\n\nПосчитайте вручную или с numpy и присвойте значения "
            "переменным с указанными именами. Комментарий в начале ячейки ответа говорит, что хранит каждая "
            "переменная: число или список из n чисел (список Python в порядке условия). Каждое "
            "число должно отличаться от точного значения не больше чем на "
        )
        + TOLERANCE_TEXT
        + ": оставляйте не меньше "
        "четырёх знаков после запятой или пишите точное выражение (`1/3` засчитывается, `0.333` — нет).",
        "explain": "*Ваше объяснение для пунктов, где спрашивается «почему» (проверяется вручную):*",
        "kernels": (
            "## Часть 3. Ядра (упражнения 16–24)\n\nКонтракт каждой функции записан в её docstring. Проверяйте входы и выбрасывайте "
            "`ValueError` с именем неверного аргумента (вспомогательные функции `m5_student.validation`, "
            "импортированные как `v`, можно использовать, но не обязательно). Скрытые тесты проверяют, что каждый "
            "неверный вход, названный в docstring, вызывает `ValueError`; текст сообщения не оценивается. "
            "Не изменяйте входные массивы "
            "на месте (скрытый тест проверяет это у каждого ядра). Ячейка самопроверки запускает "
            "открытые проверки; скрытые тесты проверяют гораздо больше входов.\n\n"
            "Правила для всех ядер, если docstring не говорит точнее:\n\n"
            "- **Результат.** Массив в ответе — float64 (у `behavior_support_mask` — bool), функция потерь "
            "возвращает одно число (float Python). Значения сравниваются с допуском, который растёт вместе с "
            "входами, поэтому результат во float32 или массив размерности 0 тоже получает полный балл.\n"
            "- **Флаги и действия.** `terminated` и `mask` могут быть bool или числами 0 и 1 любого dtype. "
            "Индекс действия — целое число или float с целым значением (1.0); bool — не действие.\n"
            "- **Пустые входы.** B = 0 даёт пустой результат там, где это сказано в docstring. Пустая ось "
            "действий (A = 0) — всегда ValueError, и при B = 0 тоже: форма (0, 0) вызывает ValueError.\n"
            "- **Используемые значения.** NaN или ±inf допустимы только там, где docstring говорит, что "
            "значение не читается (значения следующего состояния в терминальных строках, логарифмы "
            "вероятностей под маской 0, среднее действия с числом наблюдений 0). Все остальные значения "
            "используются при любом gamma (и при 0) и при любой вероятности, на которую они умножаются "
            "(и при 0): такое значение вызывает ValueError."
        ),
        "code_title": "Упражнение {n}. Код: `{name}`",
        "discussion_title": "#### Обсуждение (упражнение {n})",
        "discussion": "*Ваши ответы на вопросы для обсуждения (проверяются вручную):*",
    },
}

KERNEL_INTRO = {
    "dqn_targets": {
        "en": "Bootstrapped DQN targets from the target network's next-state values. Only `terminated` stops the bootstrap.",
        "ru": "Бутстрэп-цели DQN по значениям целевой сети в следующем состоянии. Бутстрэп обрывает только `terminated`.",
    },
    "double_dqn_targets": {
        "en": "Double DQN: choose the next action with the online table, score it with the target table.",
        "ru": "Double DQN: следующее действие выбирает онлайн-таблица, оценивает его целевая.",
    },
    "masked_token_nll": {
        "en": "The SFT / behavior-cloning loss: average the negative log-probabilities over the active (mask 1) tokens only.",
        "ru": "Функция потерь SFT / клонирования поведения: среднее отрицательных лог-вероятностей только по активным (маска 1) токенам.",
    },
    "cql_discrete_penalty": {
        "en": "The conservative (CQL) regularizer for discrete actions: soft maximum of Q minus the logged action's value.",
        "ru": "Консервативный регуляризатор CQL для дискретных действий: мягкий максимум Q минус значение записанного действия.",
    },
    "expectile_loss": {
        "en": "The asymmetric squared loss that IQL uses to fit V as an upper expectile of Q.",
        "ru": "Асимметричная квадратичная функция потерь, которой IQL подгоняет V как верхний экспектиль Q.",
    },
    "return_to_go": {
        "en": "Returns-to-go of one episode (the Decision Transformer's conditioning signal).",
        "ru": "Оставшаяся отдача (return-to-go) одного эпизода — условие Decision Transformer.",
    },
    "pessimistic_values": {
        "en": "Count-based lower confidence values: an action never seen in the data gets minus infinity.",
        "ru": "Пессимистичные значения по числу наблюдений: действие, которого нет в данных, получает минус бесконечность.",
    },
    "behavior_support_mask": {
        "en": "Which actions the behavior policy takes often enough to be trusted (relative threshold on the probabilities).",
        "ru": "Какие действия поведенческая политика выбирает достаточно часто, чтобы им доверять (относительный порог вероятностей).",
    },
    "fqe_targets": {
        "en": "Fitted Q evaluation targets: the expected next value under the evaluated policy's probabilities.",
        "ru": (
            "Цели FQE (оценки Q-функции политики по данным): ожидаемое значение следующего состояния по вероятностям оцениваемой политики."
        ),
    },
    "iql_advantage_weights": {
        "en": "IQL's advantage-weighted cloning weights, exp(beta * A) clipped from above.",
        "ru": "Веса клонирования с учётом преимущества в IQL: exp(beta * A) с ограничением сверху.",
    },
}


def code_exercises() -> list[tuple[int, tuple[str, ...]]]:
    """Part 3 as numbered exercises: (number, kernels), in notebook order.

    The problem set's code exercises come first (16: the two DQN targets, 17:
    ``pessimistic_values``, with their discussion questions); every other kernel is an
    exercise of its own, numbered on from 18 in :data:`KERNEL_NAMES` order, so each task
    carries one number.
    """
    out = [(n, tuple(CODE_EXERCISE_KERNELS[n])) for n in exercises.CODE_NUMBERS]
    taken = {k for _, ks in out for k in ks}
    first = max(exercises.CODE_NUMBERS) + 1
    out += [(first + i, (name,)) for i, name in enumerate(k for k in KERNEL_NAMES if k not in taken)]
    return out


# The kernels each code exercise of the problem set (solutions/<lang>/16-*, 17-*) asks for.
CODE_EXERCISE_KERNELS = {16: ("dqn_targets", "double_dqn_targets"), 17: ("pessimistic_values",)}


def _question_without_discussion(question: str) -> str:
    """The question's text without its discussion paragraph (asked once, above its answer cell)."""
    return DISCUSSION.sub("", question).strip()


def _with_forms(question: str, number: int, lang: str) -> str:
    """The question with a closing line stating each answer's expected form."""
    words = {"en": ("Answer format", "a number", "a list of {n} numbers"), "ru": ("Формат ответа", "число", "список из {n} чисел")}[lang]
    forms = "; ".join(f"`{name}`: " + (words[1] if n is None else words[2].format(n=n)) for name, n in answer_forms(number))
    return f"{question}\n\n**{words[0]}:** {forms}."


def _kernel_statement(name: str, lang: str) -> str:
    """What a kernel's heading cell says: what it computes, then what its hidden tests check."""
    return f"{KERNEL_INTRO[name][lang]}\n\n{points.hidden_checks(name, lang, PROPERTIES)}"


def assignment_notebook(lang: str) -> nbformat.NotebookNode:
    """The instructor assignment notebook in ``lang`` ("en" or "ru")."""
    if lang not in LANGS:
        raise ValueError(f"assignment_notebook: `lang` must be one of {LANGS}, got {lang!r}")
    t = ASSIGNMENT_TEXT[lang]
    # numpy is imported before any answer cell: an answer that uses `np` runs under Restart & Run All.
    cells = [
        markdown("intro", t["title"]),
        markdown("setup_note", t["setup"]),
        locked("setup", SETUP_CODE),
        locked("kernel_imports", KERNEL_IMPORTS),
        markdown("part1", t["conceptual"]),
    ]
    for n in exercises.CONCEPTUAL:
        ex = exercise_text(n, lang)
        cells.append(markdown(f"q{n:02d}", f"### {ex['title']}\n\n{ex['question']}"))
        cells.append(markdown(f"q{n:02d}_answer", ex["answer"], grade=True, solution=True, points=CONCEPTUAL_POINTS))
    cells.append(markdown("part2", t["numerical"]))
    for n in exercises.NUMERICAL_NUMBERS:
        ex = exercise_text(n, lang)
        cells.append(markdown(f"ex{n:02d}", f"### {ex['title']}\n\n{_with_forms(ex['question'], n, lang)}"))
        cells.append(numerical_answer_cell(n))
        cells.append(numerical_test_cell(n))
        cells.append(markdown(f"ex{n:02d}_explain_note", t["explain"]))
        cells.append(markdown(f"ex{n:02d}_explain", ex["answer"], grade=True, solution=True, points=EXPLANATION_POINTS))
    cells.append(markdown("part3", t["kernels"]))
    for n, names in code_exercises():
        if n in exercises.CODE_NUMBERS:
            ex = exercise_text(n, lang)
            if not ex["discussion"]:
                raise ValueError(f"assignment_notebook: exercise {n} ({lang}) has no discussion question")
            cells.append(markdown(f"ex{n:02d}", f"### {ex['title']}\n\n{_question_without_discussion(ex['question'])}"))
            for name in names:
                cells.append(markdown(f"intro_{name}", f"#### `{name}`\n\n{_kernel_statement(name, lang)}"))
                cells += kernel_cells(name)
            note = f"{t['discussion_title'].format(n=n)}\n\n{ex['discussion']}\n\n{t['discussion']}"
            cells.append(markdown(f"ex{n:02d}_discussion_note", note))
            cells.append(markdown(f"ex{n:02d}_discussion", ex["answer"], grade=True, solution=True, points=2))
        else:
            (name,) = names
            title = t["code_title"].format(n=n, name=name)
            cells.append(markdown(f"intro_{name}", f"### {title}\n\n{_kernel_statement(name, lang)}"))
            cells += kernel_cells(name)
    return notebook(cells, "assignment", lang)


def _with_claims(cells: list, lang: str) -> list:
    """Markdown cells with their ``{{claim:...}}`` lab figures and ``{{compare:...}}``
    comparisons (in ``lang``) filled from the lab report.

    The report (:data:`autograder.assign.claims.CLAIMS_PATH`) is read once, and only
    when a cell cites a claim; a missing report or an unknown id is a ClaimError.
    """
    citing = [c for c in cells if c.cell_type == "markdown" and claims.cited_claims(c.source)]
    if citing:
        table = claims.load_claims(claims.CLAIMS_PATH)
        compared = claims.load_comparisons(claims.CLAIMS_PATH) if any("{{compare:" in c.source for c in citing) else {}
        for cell in citing:
            cell.source = claims.fill_claims(cell.source, claims=table, lang=lang, comparisons=compared)
    return cells


def notebook(cells, kind: str, lang: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    # Code is written once; docstrings and comments are given in the notebook's language.
    nb.cells = _with_claims(
        [nbformat.from_dict({**c, "source": contracts_ru.localise_source(c.source, lang)}) if c.cell_type == "code" else c for c in cells],
        lang,
    )
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "m5": {"kind": kind, "lang": lang},
    }
    ids = [c.id for c in nb.cells]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{kind} notebook: duplicate cell ids {duplicates}")
    nbformat.validate(nb)
    return nb


def notebook_text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def notebook_path(kind: str, lang: str, root: Path = SOURCE_ROOT) -> Path:
    """Where notebook ``kind`` ("assignment" or "lab") in ``lang`` lives under ``root`` (source/ or release/)."""
    if (kind, lang) not in NOTEBOOK_NAMES:
        raise ValueError(f"notebook_path: `kind`, `lang` must be one of {sorted(NOTEBOOK_NAMES)}, got {(kind, lang)!r}")
    return Path(root) / ASSIGNMENTS[lang] / NOTEBOOK_NAMES[kind, lang]


def code_cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, dict]]:
    """(id, code, metadata) of every code cell: what must match across languages (the code
    without its docstrings and comments, :func:`autograder.i18n.contracts_ru.code_skeleton`)."""
    return [(c.id, contracts_ru.code_skeleton(c.source), dict(c.metadata)) for c in nb.cells if c.cell_type == "code"]


__all__ = [
    "ASSIGNMENTS",
    "answer_forms",
    "assignment_notebook",
    "code_cells",
    "code_exercises",
    "exercise_text",
    "notebook_path",
    "private_helpers",
    "solution_source",
]
