"""The student kit alone: ``python -m m5_student check NOTEBOOK`` from a copy of the released folder.

The kit must work where the course package (which holds the hidden tests) is not
installed. The subprocess runs the venv's Python with ``-S`` (no ``site``: the
editable install of the course package is a ``.pth`` hook, so it is not loaded) and
only site-packages on ``PYTHONPATH`` (numpy, hypothesis, ... as a student's
``pip install -r requirements.txt`` gives them), from a temporary copy of
``release/module05_<lang>``; the test first asserts that ``import autograder`` fails there.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, TERMINAL_BUG, TERMINAL_MASK, fill, filled_notebook, kit_python, notebook, released_copy

from autograder.assign import sources
from autograder.check import kit, selfcheck

FORMATS = selfcheck.answer_formats()


def test_the_course_package_is_not_importable_where_the_kit_runs(tmp_path):
    folder = released_copy(tmp_path, "en")
    for module in ("autograder", "reference_impl"):
        proc = kit_python(folder, "-c", f"import {module}")
        assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr, module
    assert kit_python(folder, "-c", "import m5_student, numpy, hypothesis").returncode == 0


def test_kit_check_passes_a_correct_notebook(tmp_path):
    folder = released_copy(tmp_path, "en")
    proc = kit_python(folder, "-m", "m5_student", "check", fill(folder, "en"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("public checks passed") == len(kit.public.KERNEL_NAMES)
    assert f"numerical answers: {len(FORMATS)}/{len(FORMATS)} assigned in the expected format" in proc.stdout
    assert "FAIL" not in proc.stdout and not proc.stderr.strip()


def test_kit_check_reports_an_untouched_notebook_in_its_language(tmp_path):
    folder = released_copy(tmp_path, "ru")
    proc = kit_python(folder, "-m", "m5_student", "check", notebook("assignment", "ru").name)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.count("ещё не реализована") == len(kit.public.KERNEL_NAMES)
    assert f"числовые ответы: 0 из {len(FORMATS)} присвоены" in proc.stdout
    assert proc.stdout.count("значение не присвоено") == len(FORMATS)


def test_kit_check_names_a_wrong_kernel_and_badly_formatted_answers(tmp_path):
    folder = released_copy(tmp_path, "en")
    vector = next(name for name, length in FORMATS.items() if length)
    scalar = next(name for name, length in FORMATS.items() if length is None)
    cell_of = {name: f"{name[:4]}_answer" for name in (vector, scalar)}
    nb = filled_notebook(
        notebook("assignment", "en", RELEASE_ROOT), notebook("assignment", "en"), {"kernel_dqn_targets": (TERMINAL_MASK, TERMINAL_BUG)}
    )
    for cell in nb.cells:  # the vector answer one element short, the scalar one as a string
        for name in (vector, scalar):
            if cell.id == cell_of[name]:
                line = next(candidate for candidate in cell.source.splitlines() if candidate.startswith(f"{name} = "))
                wrong = f"{name} = {line.split(' = ', 1)[1]}[:-1]" if name == vector else f"{name} = '0.5'"
                cell.source = cell.source.replace(line, wrong)
    nbformat.write(nb, folder / "mine.ipynb")
    proc = kit_python(folder, "-m", "m5_student", "check", "mine.ipynb", "--lang", "en")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dqn_targets: 4/7 public checks passed" in proc.stdout and "[FAIL] terminal rows equal the reward" in proc.stdout
    assert f"[FAIL] {vector}: expected a list of {FORMATS[vector]} numbers" in proc.stdout
    assert f"[FAIL] {scalar}: expected a number, got '0.5'" in proc.stdout
    assert f"{len(FORMATS) - 2}/{len(FORMATS)} assigned" in proc.stdout


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("lab.ipynb", "lab", "not the assignment notebook of Module 5"),
        ("broken.ipynb", "{not json", "not a readable notebook"),
        ("answers.py", "x = 1\n", "expected a .ipynb notebook"),
        ("absent.ipynb", None, "no such file"),
    ],
)
def test_kit_check_refuses_what_is_not_the_assignment_with_one_line(tmp_path, name, content, message):
    folder = released_copy(tmp_path, "en")
    if content == "lab":
        shutil.copyfile(notebook("lab", "en", RELEASE_ROOT), folder / name)
    elif content is not None:
        (folder / name).write_text(content, encoding="utf-8")
    proc = kit_python(folder, "-m", "m5_student", "check", name)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.count("\n") == 1 and message in proc.stdout and " / " in proc.stdout  # one bilingual line


# ------------------------------------------------------------------ in-process units of the same module
def test_the_shipped_answer_formats_are_the_graded_answers():
    from reference_impl import exercises

    shipped = json.loads((RELEASE_ROOT / "module05_en" / "m5_student" / kit.FORMAT_FILE).read_text(encoding="utf-8"))
    assert shipped == FORMATS
    assert sorted(FORMATS) == sorted(n for names in exercises.ANSWER_NAMES.values() for n in names)
    assert any(FORMATS.values()) and None in FORMATS.values()


@pytest.mark.parametrize(
    "value, length, ok",
    [
        (0.5, None, True),
        (3, None, True),
        (np.float32(2.0), None, True),
        (-math.inf, None, True),
        (math.nan, None, False),
        (True, None, False),
        ("0.5", None, False),
        ([0.5], None, False),
        ([1, 2.5], 2, True),
        ((1.0, -math.inf), 2, True),
        (np.array([1.0, 2.0]), 2, True),
        ([1.0], 2, False),
        ([1.0, "2"], 2, False),
        (np.array([[1.0, 2.0]]), 2, False),
        (1.0, 1, False),
    ],
)
def test_answer_problem(value, length, ok):
    problem = kit.answer_problem("ex99_x", value, length)
    assert (problem is None) == ok, problem
    if not ok:
        assert problem.startswith("  [FAIL] ex99_x: expected") and "\n" not in problem
        ru = kit.answer_problem("ex99_x", value, length, "ru")
        assert "ожидал" in ru


def test_m5_check_reports_the_same_answer_formats(tmp_path, capsys):
    path = tmp_path / "mine.ipynb"
    nbformat.write(filled_notebook(notebook("assignment", "en", RELEASE_ROOT), notebook("assignment", "en")), path)
    assert selfcheck.main(path) == 0
    assert f"numerical answers: {len(FORMATS)}/{len(FORMATS)}" in capsys.readouterr().out


def test_m5_check_on_a_py_file_fails_badly_formatted_answers_not_missing_ones(tmp_path, capsys, correct_source):
    kernels_only = tmp_path / "kernels.py"
    # the demo submission carries the exNN_ answers too: keep its kernels only
    kernels_only.write_text("\n".join(line for line in correct_source.splitlines() if not line.startswith("ex")), encoding="utf-8")
    assert selfcheck.main(kernels_only) == 0  # a .py of kernels only: its answers are not required here
    assert f"numerical answers: 0/{len(FORMATS)}" in capsys.readouterr().out
    scalar = next(name for name, length in FORMATS.items() if length is None)
    with_answer = tmp_path / "with_answer.py"
    with_answer.write_text(correct_source + f"\n{scalar} = 'about 0.5'\n", encoding="utf-8")
    assert selfcheck.main(with_answer) == 1
    assert f"[FAIL] {scalar}: expected a number, got 'about 0.5'" in capsys.readouterr().out


# ------------------------------------------------------------------ a broken notebook, in Russian
BROKEN_KERNELS = {
    # modifies its input: rewards is written in place
    "kernel_return_to_go": """
def return_to_go(rewards, gamma=1.0):
    r = np.asarray(rewards, dtype=float)
    for t in range(len(r) - 2, -1, -1):
        r[t] += gamma * r[t + 1]
    return r
""",
    # raises (numpy's own English message)
    "kernel_cql_discrete_penalty": """
def cql_discrete_penalty(q_values, actions):
    return float(np.asarray(q_values)[5])
""",
    # wrong values: > instead of >=
    "kernel_behavior_support_mask": """
def behavior_support_mask(probabilities, threshold_ratio=0.35):
    p = np.asarray(probabilities, dtype=float)
    return p > threshold_ratio * p.max(axis=-1, keepdims=True)
""",
}
# Latin words in a row that make an English phrase (code such as `v.fail` or (True, True, False) is not one).
ENGLISH_RUN = __import__("re").compile(r"\b[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}\b")


def _broken_notebook(folder: Path) -> str:
    """The filled Russian notebook with three broken kernels, one stub left and an answer cell that raises."""
    nb = filled_notebook(notebook("assignment", "ru", RELEASE_ROOT), notebook("assignment", "ru"))
    stub = {c.id: c.source for c in nbformat.read(notebook("assignment", "ru", RELEASE_ROOT), as_version=4).cells}
    for cell in nb.cells:
        if cell.id in BROKEN_KERNELS:
            cell.source += "\n" + BROKEN_KERNELS[cell.id]
        elif cell.id == "kernel_expectile_loss":
            cell.source = stub[cell.id]
        elif cell.id == "ex09_answer":
            cell.source += "\nraise ZeroDivisionError('division by zero')\n"
    nbformat.write(nb, folder / "broken.ipynb")
    return "broken.ipynb"


def test_kit_check_of_a_broken_russian_notebook_says_everything_in_russian(tmp_path):
    folder = released_copy(tmp_path, "ru")
    proc = kit_python(folder, "-m", "m5_student", "check", _broken_notebook(folder))
    out = proc.stdout
    assert proc.returncode == 1 and not proc.stderr.strip(), out + proc.stderr
    assert "функция изменила свой вход `rewards`" in out and "наименьший вызов" in out
    assert __import__("re").search(
        r"наименьший вызов, на котором проверка не проходит: "
        r"return_to_go\(rewards=\[-?\d\.\d, -?\d\.\d\], gamma=",
        out,
    )
    assert "выбросил исключение IndexError (сообщение: «index 5 is out of bounds" in out
    assert "получено [True, False, False], ожидалось [True, True, False]" in out
    assert "expectile_loss ещё не реализована" in out
    assert "ячейка ex09_answer: исключение ZeroDivisionError (сообщение: «division by zero»)" in out
    assert "пройдено 7 из 7 открытых проверок" in out
    # No English phrase outside «…» (the kernels' own exception messages, quoted as they are).
    prose = __import__("re").sub(r"«[^»]*»", "«»", out)
    assert ENGLISH_RUN.findall(prose) == [], prose


def test_the_russian_kits_help_shows_its_own_notebook(tmp_path):
    folder = released_copy(tmp_path, "ru")
    proc = kit_python(folder, "-m", "m5_student", "check", "--help")
    assert proc.returncode == 0 and "python -m m5_student check m05_assignment_ru.ipynb" in proc.stdout
    assert "m05_assignment_en" not in proc.stdout


def test_the_russian_kits_validation_errors_are_russian(tmp_path):
    folder = released_copy(tmp_path, "ru")
    code = (
        "from m5_student import validation as v\n"
        "try:\n    v.discount(1.5, 'dqn_targets')\nexcept ValueError as e:\n    print(e)\n"
        "try:\n    v.flag_array([0, 2], 'terminated', 'dqn_targets')\nexcept ValueError as e:\n    print(e)\n"
    )
    proc = kit_python(folder, "-c", code)
    assert proc.stdout.splitlines() == [
        "dqn_targets: `gamma` должен лежать в [0, 1], получено 1.5",
        "dqn_targets: `terminated` должен содержать только 0/1 или bool, найдено 2",
    ]


def test_the_russian_kits_docstrings_name_fqe_and_validation_in_russian():
    import ast

    kit = RELEASE_ROOT / sources.ASSIGNMENTS["ru"] / "m5_student"
    kernels = (kit / "kernels.py").read_text(encoding="utf-8")
    assert "fitted Q evaluation" not in kernels and "Цели FQE (оценки Q-функции политики по данным)" in kernels
    tree = ast.parse((kit / "validation.py").read_text(encoding="utf-8"))
    docstrings = [
        ast.get_docstring(node)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node)
    ]
    assert len(docstrings) >= 10
    english = [d for d in docstrings if not __import__("re").search(r"[а-яё]", d)]
    assert english == []
