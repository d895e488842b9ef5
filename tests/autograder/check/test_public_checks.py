"""The public self-checks (``autograder/check/public.py``, shipped as ``m5_student/checks.py``).

They must cover every contract clause the hidden suite grades, flag a kernel that
modifies its inputs, show the failing call of every check (for a law, Hypothesis's
smallest) in the student's language, and pass the reference and the demo's correct
submission.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

import reference_impl
from autograder.check import public
from autograder.hidden import contracts
from autograder.hidden import kernels as hidden


def _run(fn, name=None, lang="en"):
    """The public checks with a generous time limit: a loaded test machine must not time a law out."""
    return public.run_checks(fn, name, timeout=120.0, lang=lang)


def _demo():
    from autograder.demo import CORRECT

    spec = importlib.util.spec_from_file_location("m5_demo_correct", CORRECT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _contract_clauses() -> set[str]:
    """Every clause of docs/contracts.md (generated from suite.toml)."""
    return {cid for kernel in public.KERNEL_NAMES for cid in contracts.clauses(kernel)}


def _public_clauses() -> set[str]:
    return {f"{c.kernel}.{clause}" for c in public.CHECKS for clause in c.clauses}


def test_every_clause_the_hidden_suite_grades_has_a_public_check():
    graded = {clause for prop in hidden.PROPERTIES for clause in prop.clauses}
    assert graded, "the hidden suite cites no clause"
    assert sorted(graded - _public_clauses()) == []


def test_public_checks_cite_only_clauses_of_the_contract():
    assert sorted(_public_clauses() - _contract_clauses()) == []


@pytest.mark.parametrize("source", ["reference", "demo"])
def test_the_reference_and_the_demo_pass_every_public_check(source):
    module = reference_impl if source == "reference" else _demo()
    failed = [(name, r.check.title["en"], r.detail) for name in public.KERNEL_NAMES for r in _run(getattr(module, name)) if not r.passed]
    assert failed == []


def _in_place_return_to_go(rewards, gamma=1.0):
    r = np.asarray(rewards, dtype=float)  # no copy for a float array: the loop below writes into the input
    for t in range(len(r) - 2, -1, -1):
        r[t] += gamma * r[t + 1]
    return r


def test_a_kernel_that_modifies_its_input_fails_with_the_smallest_call_shown():
    results = {r.check.clauses[0] if r.check.clauses else "": r for r in _run(_in_place_return_to_go, "return_to_go")}
    unchanged = results["inputs_unchanged"]
    assert not unchanged.passed and "modified its input `rewards`" in unchanged.detail
    law = next(r for r in _run(_in_place_return_to_go, "return_to_go") if r.check.law)
    assert not law.passed
    # The shrunk example (Hypothesis's smallest): two rewards, shown as a call.
    assert re.search(r"smallest failing call: return_to_go\(rewards=\[-?\d\.\d, -?\d\.\d\], gamma=", law.detail), law.detail
    ru = next(r for r in _run(_in_place_return_to_go, "return_to_go", lang="ru") if r.check.law)
    assert "функция изменила свой вход `rewards`" in ru.detail and "наименьший вызов" in ru.detail


def _raising(name):
    def kernel(*args, **kwargs):
        raise RuntimeError("boom")

    kernel.__name__ = name
    return kernel


@pytest.mark.parametrize("name", public.KERNEL_NAMES)
def test_every_failing_check_shows_its_call_in_the_students_language(name):
    for lang, label in (("en", "failing call: "), ("ru", "вызов, на котором проверка не проходит: ")):
        for result in _run(_raising(name), lang=lang):
            assert not result.passed
            assert f"{label}{name}(" in result.detail, result.detail
            assert "RuntimeError" in result.detail and "boom" in result.detail


def _naive_cql(q_values, actions):
    q, a = np.asarray(q_values, dtype=float), np.asarray(actions)
    if q.ndim == 1:
        q, a = q[None, :], a[None]
    return float(np.mean(np.log(np.exp(q).sum(axis=1)) - q[np.arange(len(a)), a]))


def _strict_mask(probabilities, threshold_ratio=0.35):
    p = np.asarray(probabilities, dtype=float)
    return p > threshold_ratio * p.max(axis=-1, keepdims=True)


@pytest.mark.parametrize(
    "kernel, name, clause",
    [
        (_naive_cql, "cql_discrete_penalty", "stable"),
        (_strict_mask, "behavior_support_mask", "rule"),
    ],
)
def test_docstring_requirements_the_self_check_used_to_miss(kernel, name, clause):
    failed = [r for r in _run(kernel, name) if not r.passed]
    assert any(clause in r.check.clauses for r in failed), [r.check.title["en"] for r in failed]


@pytest.mark.parametrize(
    "n, form",
    [
        (0, "many"),
        (1, "one"),
        (2, "few"),
        (4, "few"),
        (5, "many"),
        (11, "many"),
        (12, "many"),
        (14, "many"),
        (21, "one"),
        (22, "few"),
        (111, "many"),
        (101, "one"),
    ],
)
def test_plural_ru(n, form):
    assert public.plural_ru(n, "one", "few", "many") == form


def test_the_russian_summary_agrees_with_its_number():
    one = public.format_results("return_to_go", [public.CheckResult(public.CHECKS[0], True)], "ru")
    assert one.splitlines()[0] == "return_to_go: пройдено 1 из 1 открытой проверки"
    many = public.format_results("return_to_go", [public.CheckResult(public.CHECKS[0], True)] * 6, "ru")
    assert many.splitlines()[0] == "return_to_go: пройдено 6 из 6 открытых проверок"


def test_values_are_shown_as_the_student_would_type_them():
    assert public.show(np.array([0.0, 1.5, -np.inf])) == "[0.0, 1.5, -inf]"
    assert public.show(np.array([[True, False]])) == "[[True, False]]"
    assert public.show(np.zeros((0, 3))) == "[] (shape (0, 3))"
    assert public.show(3) == "3" and public.show(0.1 + 0.2) == "0.3"
    assert re.fullmatch(r"\[0\.0, .*, \.\.\.\] \(shape \(100,\)\)", public.show(np.zeros(100)))
