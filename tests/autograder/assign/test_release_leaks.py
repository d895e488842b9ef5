"""Nothing a student receives gives away a graded answer (issue #15).

Two checks:

* the public self-checks (``m5_student/checks.py``) use worked examples whose inputs
  differ from every exercise's inputs and intermediate values, and whose expected
  values are no exercise quantity;
* a scan of every file under ``release/`` (notebook cells one by one, the student kit,
  README, requirements) for every graded answer of ``reference_impl/exercises.py``,
  written the ways it could appear: ``repr``, rounded to 2-6 decimals, with trailing
  zeros cut, numpy's ``2.`` for whole numbers, and as a fraction. A number with fewer
  than three significant digits (``1.4``, ``89``) is too common to scan alone: it is
  looked for after a word that states a result (``= 1.4``, ``gives 1.4``, ``даёт
  1.4``), and a vector answer is looked for as its whole sequence (``2.5, 1.5, 1.5, 2``).

Release notebooks hold no answer cell with a value (answer cells are stubs), so no
cell is exempt: the exercise questions hold inputs, never answers.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from classroom import RELEASE_ROOT  # tests/autograder is on sys.path

from autograder.check import public
from reference_impl import exercises

DECIMALS = range(2, 7)
# Words (EN/RU) and signs that state a result right before a number.
RESULT_WORDS = r"(?:=|->|→|:|\bis|\bgives?|\bequals?|\bequal to|даёт|дает|равн[оаы]?|получается)"


def written_forms(x: float) -> set[str]:
    """The ways ``x`` could be written: repr, rounded to 2-6 decimals, trailing zeros cut,
    a whole number as ``2``/``2.``, and a simple fraction (denominator 3 to 60)."""
    x = float(x)
    forms = {repr(x)}
    for d in DECIMALS:
        fixed = f"{x:.{d}f}"
        forms |= {fixed, fixed.rstrip("0").rstrip(".")}
    if x.is_integer():
        forms |= {str(int(x)), f"{int(x)}."}
    frac = Fraction(x).limit_denominator(60)
    if abs(float(frac) - x) < 1e-12 and frac.denominator >= 3:
        forms.add(f"{frac.numerator}/{frac.denominator}")
    return {f for f in forms if f not in ("-0", "0", "-0.", "0.")}


def significant_digits(form: str) -> int:
    """Significant digits of a written number: ``2.50`` and ``100`` have two and one
    (trailing zeros say nothing about which number it is); a fraction counts as three."""
    if "/" in form:
        return 3
    digits = form.lstrip("-")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return len(digits.replace(".", "").strip("0"))


def _number(alternatives) -> str:
    """A regex for any of ``alternatives`` as a whole number token (not inside a longer one)."""
    body = "|".join(re.escape(f) for f in sorted(alternatives, key=len, reverse=True))
    return r"(?<![\w.])(?:" + body + r")(?!\.?\d)"


def answer_patterns() -> list[tuple[str, re.Pattern]]:
    """(answer name, pattern) for every graded answer; see the module docstring."""
    patterns = []
    for name, answer in exercises.all_graded_answers().items():
        values = answer.value if isinstance(answer.value, tuple) else (answer.value,)
        distinctive = {
            f
            for v in values
            for f in written_forms(v)
            if significant_digits(f) >= 3 and np.isfinite(float(Fraction(f)) if "/" in f else float(f))
        }
        if distinctive:
            patterns.append((name, re.compile(_number(distinctive))))
        if len(values) > 1:  # the whole vector, in order, any separator and brackets
            sequence = r"[\s,;]*".join(_number(written_forms(v)) for v in values)
            patterns.append((name, re.compile(sequence)))
        else:
            short = {f for f in written_forms(values[0]) if significant_digits(f) < 3}
            if short:
                patterns.append((name, re.compile(RESULT_WORDS + r"\s*:?\s*" + _number(short))))
    return patterns


def release_units(root: Path):
    """(where, text) for every text file under ``root``; a notebook gives one unit per
    cell (its source and any outputs)."""
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary data (pinned arrays): no written number
        where = path.relative_to(root).as_posix()
        if path.suffix == ".ipynb":
            for index, cell in enumerate(json.loads(text)["cells"]):
                outputs = json.dumps(cell.get("outputs", []), ensure_ascii=False)
                yield f"{where} cell {index} ({cell.get('id')})", "".join(cell["source"]) + "\n" + outputs
        else:
            yield where, text


def leaks(units, patterns) -> list[str]:
    found = []
    for where, text in units:
        for name, pattern in patterns:
            for match in pattern.finditer(text):
                context = text[max(0, match.start() - 40) : match.end() + 20].replace("\n", " ")
                found.append(f"{where}: {name} as {match.group(0)!r} in ...{context}...")
    return found


# ------------------------------------------------------------------ the scanner itself
def test_forms_cover_rounding_repr_and_fractions():
    forms = written_forms(1.6 / 3)
    assert {"0.53", "0.533", "0.5333", "0.53333", "0.533333", "8/15", repr(1.6 / 3)} <= forms
    assert {"2", "2.", "2.0", "2.00"} <= written_forms(2.0)


@pytest.mark.parametrize(
    "text",
    [
        "mean over the three active tokens is 0.533333",  # a public check title as it was
        "assert abs(loss - 0.5333) < 1e-4",
        "expected 8/15",
        "gives (2.5, 1.5, 1.5, 2)",  # a vector answer, any brackets
        "array([2.5, 1.5, 1.5, 2. ])",
        "worked example: 1.4 for u=(-1, 1, 2)",  # a short scalar after a result word
        "пример даёт 1.4",
        "lab example Q=(2, 0, -1), a=0 gives 0.169846",
    ],
)
def test_scanner_finds_planted_answers(text):
    assert leaks([("planted", text)], answer_patterns())


@pytest.mark.parametrize(
    "text",
    [
        "rewards r = (1, 0, -0.5, 2) and gamma = 0.5",  # exercise 15's inputs, not its answers
        "ax.grid(True, alpha=0.3); figsize (8, 4.5)",
        "a learning rate of 1.45 and 2.50 seconds",
        "tau = 0.8 weighs positive residuals",
    ],
)
def test_scanner_ignores_inputs_and_unrelated_numbers(text):
    assert not leaks([("plain", text)], answer_patterns())


# ------------------------------------------------------------------ the release
def test_release_contains_no_graded_answer():
    units = list(release_units(RELEASE_ROOT))
    assert any("checks.py" in where for where, _ in units) and any(" cell " in where for where, _ in units)
    found = leaks(units, answer_patterns())
    assert not found, "graded answers in release/:\n" + "\n".join(found[:20])


# ------------------------------------------------------------------ the public checks
def _arrays(values) -> list[np.ndarray]:
    """Every numeric quantity among ``values`` with at least two elements, as floats;
    0/1 flags and masks are left out (every batch has some)."""
    out = []
    for value in values:
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            continue
        if array.size >= 2 and not np.isin(array, (0.0, 1.0)).all():
            out.append(array)
    return out


def _exercise_quantities() -> list[np.ndarray]:
    """Inputs and computed quantities (answers and intermediates) of exercises 9-17."""
    numbers = (*exercises.NUMERICAL_NUMBERS, *exercises.CODE_NUMBERS)
    quantities = []
    for n in numbers:
        quantities += _arrays(exercises.inputs(n).values()) + _arrays(exercises.answers(n).values())
    return quantities


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all((a == b) | np.isclose(a, b, rtol=0, atol=1e-9)))


def test_public_examples_use_no_exercise_input_and_show_no_exercise_value():
    quantities = _exercise_quantities()
    scalars = [
        float(v) for n in (*exercises.NUMERICAL_NUMBERS, *exercises.CODE_NUMBERS) for v in exercises.answers(n).values() if np.ndim(v) == 0
    ]
    examples = [c for c in public.CHECKS if c.example is not None]
    assert len(examples) >= 8
    for check in examples:
        (args, kwargs), want = check.example
        for arg in _arrays([*args, *kwargs.values()]):
            assert not any(_same(arg, q) for q in quantities), f"{check.kernel}: an exercise's input {arg.tolist()}"
        want = np.asarray(want, dtype=float)
        if want.ndim == 0:
            assert not any(np.isclose(float(want), s, rtol=0, atol=1e-6) for s in scalars), (
                f"{check.kernel}: shows an exercise's value {float(want)}"
            )
        else:
            assert not any(_same(want, q) for q in quantities), f"{check.kernel}: shows an exercise's value"


def test_public_examples_hold_for_the_reference_kernels():
    import reference_impl

    for check in (c for c in public.CHECKS if c.example is not None):
        check.run(getattr(reference_impl, check.kernel))


def _kernel_calls_in(code: str) -> list[tuple[str, list]]:
    """``K["name"](literal args...)`` calls in a notebook cell's code, with their literal arguments."""
    import ast

    calls = []
    for node in ast.walk(ast.parse(code)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "K"
        ):
            args = [ast.literal_eval(a) for a in node.args] + [ast.literal_eval(k.value) for k in node.keywords]
            calls.append((ast.literal_eval(node.func.slice), args))
    return calls


def test_lab_kernel_examples_run_the_students_kernels_on_no_exercise_input():
    """The lab runs the student's own kernels on worked inputs: if those were an exercise's
    inputs, a correct student would see a graded answer printed (the text scan cannot see it)."""
    import reference_impl
    from autograder.assign import lab_source

    quantities = _exercise_quantities()
    calls = _kernel_calls_in(lab_source.ENVIRONMENT)
    assert len(calls) >= 3
    for name, args in calls:
        for arg in _arrays(args):
            assert not any(_same(arg, q) for q in quantities), f"lab {name}: an exercise's input {arg.tolist()}"
        result = np.asarray(getattr(reference_impl, name)(*args), dtype=float).reshape(-1)
        if result.size >= 2:
            assert not any(_same(result, q) for q in quantities), f"lab {name}: prints an exercise's value"
