"""Public self-check tests for the ten kernels (shipped to students).

These checks need no reference implementation: worked examples of the module and
laws every correct kernel obeys (Double DQN never exceeds DQN, the CQL penalty is
non-negative and shift invariant, ...). They run in the student's own environment.
Passing them is necessary, not sufficient: the hidden grading tests check each
kernel on hundreds of generated inputs against the reference implementation.

Use from a notebook::

    from m5_student.checks import check
    check(dqn_targets)            # prints a short report, returns True/False

or, for the whole notebook (kernels and the format of the numerical answers), from a
terminal in the assignment folder: ``python -m m5_student check m05_assignment_en.ipynb``.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

TEXT = {
    "en": {"ok": "ok", "fail": "FAIL", "summary": "{name}: {passed}/{total} public checks passed",
           "counter": "counterexample", "disclaimer": "Passing the public checks does not guarantee full marks: "
           "the hidden tests check many more inputs against the reference implementation.",
           "missing": "{name} is not defined", "not_impl": "{name} is not implemented yet"},
    "ru": {"ok": "ок", "fail": "ОШИБКА", "summary": "{name}: пройдено {passed} из {total} открытых проверок",
           "counter": "контрпример", "disclaimer": "Прохождение открытых проверок не гарантирует полный балл: "
           "скрытые тесты проверяют намного больше входов по эталонной реализации.",
           "missing": "{name} не определена", "not_impl": "{name} ещё не реализована"},
}

FINITE = st.floats(-100, 100, allow_nan=False)


@dataclass(frozen=True)
class PublicCheck:
    kernel: str
    title: dict[str, str]
    run: Callable[[Callable], None]   # raises AssertionError (or anything) on failure
    # A worked example's ((args, kwargs), expected value); None for laws and error checks.
    # Its inputs differ from every exercise's and its value is no graded answer
    # (tests/autograder/test_release_leaks.py): the checks are public, the answers are not.
    example: tuple | None = None


@dataclass
class CheckResult:
    check: PublicCheck
    passed: bool
    detail: str = ""


def _close(got, want, tol=1e-6):
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape or (want.ndim == 0 and got.size == 1), f"shape {got.shape}, expected {want.shape}"
    assert np.allclose(got.reshape(want.shape), want, atol=tol, rtol=1e-5, equal_nan=False), f"got {got}, expected {want}"


def _example(kernel, title, call, want) -> PublicCheck:
    def run(fn):
        _close(fn(*call[0], **call[1]), want)
    return PublicCheck(kernel, title, run, example=(call, want))


def _law(strategy, body, examples=60):
    def run(fn):
        @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck),
                  verbosity=Verbosity.quiet, print_blob=False)
        @given(strategy)
        def test(case):
            body(fn, case)
        test()
    return run


def _raises_value_error(call):
    def run(fn):
        try:
            fn(*call[0], **call[1])
        except ValueError:
            return
        raise AssertionError("expected ValueError")
    return run


@st.composite
def _batch(draw, two_tables=False):
    b, a = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    case = {"r": draw(hnp.arrays(np.float64, b, elements=FINITE)), "d": draw(hnp.arrays(np.bool_, b)),
            "q": draw(hnp.arrays(np.float64, (b, a), elements=FINITE)), "g": draw(st.floats(0, 1))}
    if two_tables:
        case["q2"] = draw(hnp.arrays(np.float64, (b, a), elements=FINITE))
    return case


def _dqn_terminal(fn, c):
    y = fn(c["r"], c["d"], c["q"], gamma=c["g"])
    _close(np.asarray(y)[c["d"]], c["r"][c["d"]])


def _double_le_dqn(fn, c):
    # With the online table equal to the target table, Double DQN is DQN; otherwise it never exceeds it.
    y_same = np.asarray(fn(c["r"], c["d"], c["q"], c["q"], gamma=c["g"]), dtype=float)
    best = c["r"] + c["g"] * (~c["d"]) * c["q"].max(axis=1)
    _close(y_same, best)
    y = np.asarray(fn(c["r"], c["d"], c["q2"], c["q"], gamma=c["g"]), dtype=float)
    assert (y <= best + 1e-9).all(), "Double DQN target above the DQN target"


def _cql_laws(fn, c):
    q, a, shift = c
    p = float(fn(q, a))
    assert p >= -1e-9, f"penalty {p} < 0"
    assert math.isclose(p, float(fn(q + shift, a)), abs_tol=1e-6), "not invariant to adding a constant"


def _expectile_half(fn, u):
    assert math.isclose(float(fn(u, 0.5)), 0.5 * float(np.mean(u**2)), rel_tol=1e-6, abs_tol=1e-9)


def _rtg_recursion(fn, c):
    r, g = c
    out = np.asarray(fn(r, gamma=g), dtype=float)
    assert out.shape == r.shape
    _close(out[-1], r[-1])
    _close(out[:-1], r[:-1] + g * out[1:], tol=1e-6)


def _pessimistic_monotone(fn, c):
    means, counts = c
    low = np.asarray(fn(means, counts), dtype=float)
    high = np.asarray(fn(means, counts + 1.0), dtype=float)
    assert (high >= low).all(), "more data must not lower the pessimistic value"
    assert np.isneginf(low[counts == 0]).all(), "unseen entries must be -inf"


def _mask_argmax(fn, p):
    m = np.asarray(fn(p, 0.5), dtype=bool)
    assert m[np.arange(len(p)), p.argmax(axis=1)].all(), "the most likely action must be eligible"
    assert (np.asarray(fn(p, 0.2), dtype=bool) >= m).all(), "a lower ratio must not remove actions"


def _fqe_sarsa(fn, c):
    b, a = c["q"].shape
    nxt = np.arange(b) % a
    y = fn(c["r"], c["d"], c["q"], np.eye(a)[nxt], gamma=c["g"])
    _close(y, c["r"] + c["g"] * (~c["d"]) * c["q"][np.arange(b), nxt], tol=1e-6)


def _iql_laws(fn, c):
    adv, beta = c
    w = np.asarray(fn(np.sort(adv), beta, max_weight=20.0), dtype=float)
    assert (np.diff(w) >= -1e-9).all(), "weights must not decrease with the advantage"
    assert (w <= 20.0 + 1e-9).all() and (w >= 0).all(), "weights must lie in [0, max_weight]"


def _t(en, ru):
    return {"en": en, "ru": ru}


CHECKS: list[PublicCheck] = [
    _example("dqn_targets", _t("worked example gives [2.9, 2.0]", "пример даёт [2.9, 2.0]"),
             (([0.5, 2.0], [0, 1], [[1.0, 3.0], [4.0, -2.0]]), {"gamma": 0.8}), [2.9, 2.0]),
    PublicCheck("dqn_targets", _t("terminal rows equal the reward", "терминальные строки равны награде"),
                _law(_batch(), _dqn_terminal)),
    PublicCheck("dqn_targets", _t("rejects gamma outside [0, 1]", "отвергает gamma вне [0, 1]"),
                _raises_value_error((([0.0], [0], [[1.0]]), {"gamma": 1.5}))),
    PublicCheck("double_dqn_targets", _t("equals DQN on equal tables and never exceeds it",
                                         "совпадает с DQN при равных таблицах и не превышает его"),
                _law(_batch(two_tables=True), _double_le_dqn)),
    _example("double_dqn_targets", _t("selects online, evaluates target: (1.5, -1.0)",
                                      "выбор по основной, оценка по целевой: (1.5, -1.0)"),
             (([1.0, 0.0], [0, 0], [[2.0, 0.0], [0.0, 3.0]], [[1.0, 5.0], [4.0, -2.0]]), {"gamma": 0.5}), [1.5, -1.0]),
    _example("masked_token_nll", _t("mean over the two active tokens is 1.25",
                                    "среднее по двум активным токенам равно 1.25"),
             (([-0.5, -1.5, -2.0, -0.25], [1, 0, 1, 0]), {}), 1.25),
    PublicCheck("masked_token_nll", _t("rejects a mask with no active token", "отвергает маску без активных токенов"),
                _raises_value_error((([-1.0, -2.0], [0, 0]), {}))),
    _example("cql_discrete_penalty", _t("equal values Q=(0, 0, 0, 0), a=3 give ln 4",
                                        "равные значения Q=(0, 0, 0, 0), a=3 дают ln 4"),
             (([0.0, 0.0, 0.0, 0.0], 3), {}), math.log(4.0)),
    PublicCheck("cql_discrete_penalty", _t("non-negative and invariant to a constant shift",
                                           "неотрицателен и не меняется при сдвиге на константу"),
                _law(st.integers(1, 5).flatmap(lambda a: st.tuples(
                    hnp.arrays(np.float64, (3, a), elements=FINITE),
                    hnp.arrays(np.int64, 3, elements=st.integers(0, a - 1)), st.floats(-50, 50))), _cql_laws)),
    _example("expectile_loss", _t("worked example: 1.625 for u=(-2, 1), tau=0.25",
                                  "пример: 1.625 при u=(-2, 1), tau=0.25"),
             (([-2.0, 1.0], 0.25), {}), 1.625),
    PublicCheck("expectile_loss", _t("tau = 0.5 gives half the MSE", "tau = 0.5 даёт половину MSE"),
                _law(hnp.arrays(np.float64, st.integers(1, 20), elements=FINITE), _expectile_half)),
    _example("return_to_go", _t("worked example (2, -1, 0.5) gives (1.5, -0.5, 0.5)",
                                "пример (2, -1, 0.5) даёт (1.5, -0.5, 0.5)"),
             (([2.0, -1.0, 0.5],), {}), [1.5, -0.5, 0.5]),
    PublicCheck("return_to_go", _t("satisfies G_t = r_t + gamma G_{t+1}", "выполняется G_t = r_t + gamma G_{t+1}"),
                _law(st.tuples(hnp.arrays(np.float64, st.integers(1, 30), elements=FINITE), st.floats(0, 1)),
                     _rtg_recursion)),
    _example("pessimistic_values", _t("worked example gives (1.5, -1.25, -inf)",
                                      "пример даёт (1.5, -1.25, -inf)"),
             (([2.0, -1.0, 0.5], [4, 16, 0]), {}), [1.5, -1.25, -np.inf]),
    PublicCheck("pessimistic_values", _t("more data never lowers the value; unseen is -inf",
                                         "больше данных не снижает значение; ненаблюдавшиеся = -inf"),
                _law(st.integers(1, 8).flatmap(lambda n: st.tuples(
                    hnp.arrays(np.float64, n, elements=FINITE),
                    hnp.arrays(np.float64, n, elements=st.integers(0, 20).map(float)))), _pessimistic_monotone)),
    PublicCheck("behavior_support_mask", _t("the most likely action is always eligible",
                                            "самое вероятное действие всегда допустимо"),
                _law(hnp.arrays(np.float64, (3, 4), elements=st.floats(0.01, 1.0)), _mask_argmax)),
    _example("fqe_targets", _t("lab example gives [3.05]", "пример из лабораторной даёт [3.05]"),
             (([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]]), {"gamma": 0.9}), [3.05]),
    PublicCheck("fqe_targets", _t("a one-hot policy gives the SARSA target", "детерминированная политика даёт цель SARSA"),
                _law(_batch(), _fqe_sarsa)),
    PublicCheck("iql_advantage_weights", _t("monotone in the advantage and capped", "монотонны по преимуществу и ограничены"),
                _law(st.tuples(hnp.arrays(np.float64, st.integers(1, 20), elements=FINITE), st.floats(0, 5)), _iql_laws)),
]

KERNEL_NAMES = tuple(dict.fromkeys(c.kernel for c in CHECKS))


class CheckTimeout(BaseException):
    """A BaseException, so Hypothesis stops at once instead of shrinking a hang."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Stop a check that runs too long (an infinite loop in the student's kernel).

    Uses SIGALRM, so it only works in the main thread; elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise CheckTimeout(f"the check did not finish within {seconds:g} s (an infinite loop?)")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_checks(fn: Callable, name: str | None = None, timeout: float = 10.0) -> list[CheckResult]:
    name = name or getattr(fn, "__name__", "")
    results = []
    for check in (c for c in CHECKS if c.kernel == name):
        try:
            with time_limit(timeout):
                check.run(fn)
        except NotImplementedError:
            results.append(CheckResult(check, False, "NotImplementedError"))
        except CheckTimeout as exc:
            results.append(CheckResult(check, False, str(exc)))
        except Exception as exc:  # the student's code may raise anything
            notes = [n for n in getattr(exc, "__notes__", []) if "Falsifying" not in n and n.strip()]
            detail = f"{type(exc).__name__}: {exc}" + ("\n        " + " ".join(notes) if notes else "")
            results.append(CheckResult(check, False, detail[:600]))
        else:
            results.append(CheckResult(check, True))
    return results


def format_results(name: str, results: list[CheckResult], lang: str = "en") -> str:
    t = TEXT[lang]
    lines = [t["summary"].format(name=name, passed=sum(r.passed for r in results), total=len(results))]
    for r in results:
        mark = t["ok"] if r.passed else t["fail"]
        lines.append(f"  [{mark}] {r.check.title[lang]}" + ("" if r.passed else f"\n        {r.detail}"))
    return "\n".join(lines)


def check(fn: Callable, lang: str = "en") -> bool:
    """Run the public checks of one kernel function and print a short report.

    Under grading (the grader sets ``M5_GRADING``) it returns True at once: a self-check
    call left in an answer cell must not spend the submission's grading time.
    """
    if os.environ.get("M5_GRADING"):
        return True
    name = getattr(fn, "__name__", "")
    if name not in KERNEL_NAMES:
        raise ValueError(f"check: `fn` must be one of the kernels {KERNEL_NAMES}, got a function named {name!r}")
    results = run_checks(fn, name)
    print(format_results(name, results, lang))
    print(TEXT[lang]["disclaimer"])
    return all(r.passed for r in results)
