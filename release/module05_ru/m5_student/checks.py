"""Public self-check tests for the ten kernels (shipped to students).

These checks need no reference implementation: worked examples of the module, laws
every correct kernel obeys (Double DQN never exceeds DQN, the CQL penalty is
non-negative and shift invariant, ...), bad inputs that must raise ValueError, empty
batches, and a check that the input arrays are left unchanged. Each check names the
contract clauses it covers (``clauses``: the clause keys of the kernels' contracts); every clause
the hidden tests grade is covered by at least one check. A failing check shows the
call that fails: for a law, the smallest one Hypothesis finds.

Passing them is necessary, not sufficient: the hidden grading tests check each kernel
on hundreds of generated inputs against the reference implementation.

Use from a notebook::

    from m5_student.checks import check
    check(dqn_targets)            # prints a short report, returns True/False

or, for the whole notebook (kernels and the format of the numerical answers), from a
terminal in the assignment folder: ``python -m m5_student check m05_assignment_en.ipynb``.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from m5_student.checks_text import MESSAGES, TEXT, CheckFailure, Recorder, plural_ru, require, show
from m5_student.time_limit import CheckTimeout, time_limit

__all__ = [
    "CHECKS",
    "KERNEL_NAMES",
    "TEXT",
    "CheckFailure",
    "CheckResult",
    "PublicCheck",
    "check",
    "format_results",
    "plural_ru",
    "run_checks",
]

FINITE = st.floats(-100, 100, allow_nan=False)
INDENT = "\n        "


@dataclass(frozen=True)
class PublicCheck:
    kernel: str
    title: dict[str, str]
    run: Callable[[Callable], None]  # raises CheckFailure (or anything) on failure
    # The contract clauses it covers: clause keys of the kernel's contract, without its name.
    clauses: tuple[str, ...] = ()
    # A worked example's ((args, kwargs), expected value); None for the other checks.
    # Its inputs differ from every exercise's and its value is no graded answer
    # (tests/autograder/assign/test_release_leaks.py): the checks are public, the answers are not.
    example: tuple | None = None
    law: bool = False  # drawn by Hypothesis: the failing call shown is the smallest


@dataclass
class CheckResult:
    check: PublicCheck
    passed: bool
    detail: str = ""
    not_implemented: bool = False


# ------------------------------------------------------------------ kinds of checks
def _close(got, want, tol=1e-6, key="value"):
    got_arr = np.asarray(got, dtype=float)
    want_arr = np.asarray(want, dtype=float)
    require(got_arr.shape == want_arr.shape or (want_arr.ndim == 0 and got_arr.size == 1), "shape", got=got_arr.shape, want=want_arr.shape)
    require(
        np.allclose(got_arr.reshape(want_arr.shape), want_arr, atol=tol, rtol=1e-5, equal_nan=False), key, got=show(got), want=show(want)
    )


def _example(kernel, title, call, want, clauses=(), scalar=False) -> PublicCheck:
    """A worked example: the call's value must be ``want`` (one number when ``scalar``)."""

    def run(fn):
        got = fn(*call[0], **call[1])
        if scalar:
            require(np.ndim(got) == 0, "not_scalar", got=show(got))
        _close(got, want)

    return PublicCheck(kernel, title, run, ("list_inputs", *clauses), example=(call, want))


# The laws' random seed, fixed: without it derandomized Hypothesis hashes the nested
# ``test``'s source text, so a re-layout of this file would try other inputs on a
# student's code. The value is that hash before the re-layout.
LAW_SEED = 13842757215340763507882055587736141571082815030537746828508694895355877146957193037917503997267493092609081741425639


def _law(strategy, body, examples=60):
    def run(fn):
        @seed(LAW_SEED)
        @settings(
            max_examples=examples,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            print_blob=False,
            report_multiple_bugs=False,
        )
        @given(strategy)
        def test(case):
            fn.calls.clear()  # the calls of the last case run: after shrinking, the smallest failing one
            body(fn, case)

        test()

    return run


def _rejects(kernel, calls, clauses=("raises",)) -> PublicCheck:
    """Each bad call must raise ValueError (its wording is not graded)."""

    def run(fn):
        for args, kwargs in calls:
            try:
                got = fn(*args, **kwargs)
            except ValueError:
                continue
            except (CheckFailure, NotImplementedError):
                raise
            except Exception as exc:  # noqa: BLE001 - the student's code may raise anything
                raise CheckFailure("other_error", kind=type(exc).__name__, message=str(exc)[:200]) from None
            raise CheckFailure("no_error", got=show(got))

    return PublicCheck(kernel, _t("rejects bad inputs with ValueError", "отвергает неверные входы с ValueError"), run, clauses)


def _empty(kernel, calls) -> PublicCheck:
    """An empty batch gives an empty result (of the batch's shape)."""

    def run(fn):
        for args, kwargs in calls:
            got = fn(*args, **kwargs)
            require(np.asarray(got).size == 0, "not_empty", got=show(got))

    return PublicCheck(kernel, _t("an empty batch gives an empty result", "пустой батч даёт пустой результат"), run, ("empty",))


def _unchanged(kernel, args, kwargs=None) -> PublicCheck:
    """The kernel leaves its input arrays as they were (the :class:`Recorder` compares them)."""
    arrays = tuple(np.array(a) if isinstance(a, list) else a for a in args)

    def run(fn):
        fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in arrays], **(kwargs or {}))

    return PublicCheck(kernel, _t("leaves its input arrays unchanged", "не изменяет входные массивы"), run, ("inputs_unchanged",))


def _t(en, ru):
    return {"en": en, "ru": ru}


# ------------------------------------------------------------------ laws
@st.composite
def _batch(draw, two_tables=False):
    b, a = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    case = {
        "r": draw(hnp.arrays(np.float64, b, elements=FINITE)),
        "d": draw(hnp.arrays(np.bool_, b)),
        "q": draw(hnp.arrays(np.float64, (b, a), elements=FINITE)),
        "g": draw(st.floats(0, 1)),
    }
    if two_tables:
        case["q2"] = draw(hnp.arrays(np.float64, (b, a), elements=FINITE))
    return case


def _dqn_terminal(fn, c):
    r, d = c["r"].copy(), c["d"].copy()
    y = fn(c["r"], c["d"], c["q"], gamma=c["g"])
    _close(np.asarray(y, dtype=float)[d], r[d], key="terminal")


def _double_le_dqn(fn, c):
    # With the online table equal to the target table, Double DQN is DQN; otherwise it never exceeds it.
    best = c["r"] + c["g"] * (~c["d"]) * c["q"].max(axis=1)
    _close(fn(c["r"], c["d"], c["q"], c["q"], gamma=c["g"]), best)
    y = np.asarray(fn(c["r"], c["d"], c["q2"], c["q"], gamma=c["g"]), dtype=float)
    require((y <= best + 1e-9).all(), "double_above", got=show(y), want=show(best))


def _cql_laws(fn, c):
    q, a, shift = c
    p = float(fn(q, a))
    require(p >= -1e-9, "negative", got=show(p))
    other = float(fn(q + shift, a))
    require(math.isclose(p, other, abs_tol=1e-6), "not_invariant", shift=show(shift), got=show(p), other=show(other))


def _expectile_half(fn, u):
    want = 0.5 * float(np.mean(u**2))
    got = float(fn(u, 0.5))
    require(math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9), "value", got=show(got), want=show(want))


def _rtg_recursion(fn, c):
    r, g = c[0].copy(), c[1]
    out = np.asarray(fn(c[0], gamma=g), dtype=float)
    require(out.shape == r.shape, "shape", got=out.shape, want=r.shape)
    _close(out[-1], r[-1], key="last_step")
    _close(out[:-1], r[:-1] + g * out[1:], key="recursion")


def _pessimistic_monotone(fn, c):
    means, counts = c
    low = np.asarray(fn(means, counts), dtype=float)
    high = np.asarray(fn(means, counts + 1.0), dtype=float)
    require((high >= low).all(), "more_data_lowers", got=show(low), other=show(high))
    require(np.isneginf(low[counts == 0]).all(), "unseen", got=show(low))


def _mask_argmax(fn, p):
    m = np.asarray(fn(p, 0.5), dtype=bool)
    require(m[np.arange(len(p)), p.argmax(axis=1)].all(), "argmax", got=show(m))
    lower = np.asarray(fn(p, 0.2), dtype=bool)
    require((lower >= m).all(), "lower_ratio", got=show(m), other=show(lower))


def _fqe_sarsa(fn, c):
    b, a = c["q"].shape
    nxt = np.arange(b) % a
    want = c["r"] + c["g"] * (~c["d"]) * c["q"][np.arange(b), nxt]
    _close(fn(c["r"], c["d"], c["q"], np.eye(a)[nxt], gamma=c["g"]), want)


def _iql_laws(fn, c):
    adv, beta = c
    w = np.asarray(fn(np.sort(adv), beta, max_weight=20.0), dtype=float)
    require((np.diff(w) >= -1e-9).all(), "not_monotone", got=show(w))
    require((w <= 20.0 + 1e-9).all() and (w >= 0).all(), "not_capped", cap="20.0", got=show(w))


def _law_check(kernel, title, strategy, body, clauses) -> PublicCheck:
    return PublicCheck(kernel, title, _law(strategy, body), clauses, law=True)


QB = [[1.0, 2.0], [3.0, 4.0]]
NAN, INF = float("nan"), float("inf")


def _dqn_checks() -> list[PublicCheck]:
    name = "dqn_targets"
    return [
        _example(
            name,
            _t("worked example gives [2.9, 2.0]", "пример даёт [2.9, 2.0]"),
            (([0.5, 2.0], [0, 1], [[1.0, 3.0], [4.0, -2.0]]), {"gamma": 0.8}),
            [2.9, 2.0],
            ("formula", "shapes"),
        ),
        _example(
            name,
            _t("default gamma 0.99: [1.0], [0], [[2.0, 0.0]] give [2.98]", "gamma по умолчанию 0.99: [1.0], [0], [[2.0, 0.0]] дают [2.98]"),
            (([1.0], [0], [[2.0, 0.0]]), {}),
            [2.98],
            ("default_gamma",),
        ),
        _example(
            name,
            _t(
                "a terminal row never reads next_q_target (NaN there is fine)",
                "терминальная строка не читает next_q_target (NaN там допустим)",
            ),
            (([1.0, 0.5], [True, False], [[NAN, INF], [1.0, 2.0]]), {"gamma": 0.5}),
            [1.0, 1.5],
            ("terminal_ignores_next_q", "shapes"),
        ),
        _law_check(name, _t("terminal rows equal the reward", "терминальные строки равны награде"), _batch(), _dqn_terminal, ("formula",)),
        _rejects(
            name,
            [
                (([1.0, 2.0], [0, 1], [1.0, 2.0]), {}),
                (([1.0, 2.0, 3.0], [0, 1], QB), {}),
                (([1.0, 2.0], [0, 1], QB), {"gamma": 1.5}),
                (([1.0, 2.0], [0, 2], QB), {}),
                (([1.0, 2.0], [0, 1], np.zeros((2, 0))), {}),
            ],
        ),
        _empty(name, [((np.zeros(0), np.zeros(0, dtype=bool), np.zeros((0, 3))), {})]),
        _unchanged(name, ([0.5, 2.0], [0, 1], [[1.0, 3.0], [4.0, -2.0]]), {"gamma": 0.8}),
    ]


def _double_checks() -> list[PublicCheck]:
    name = "double_dqn_targets"
    return [
        _law_check(
            name,
            _t("equals DQN on equal tables and never exceeds it", "совпадает с DQN при равных таблицах и не превышает его"),
            _batch(two_tables=True),
            _double_le_dqn,
            ("formula", "selection"),
        ),
        _example(
            name,
            _t("selects online, evaluates target: (1.5, -1.0)", "выбор по онлайн-таблице, оценка по целевой: (1.5, -1.0)"),
            (([1.0, 0.0], [0, 0], [[2.0, 0.0], [0.0, 3.0]], [[1.0, 5.0], [4.0, -2.0]]), {"gamma": 0.5}),
            [1.5, -1.0],
            ("selection", "formula", "shapes"),
        ),
        _example(
            name,
            _t(
                "a tie in the online table picks the first action: [1.5]",
                "при равенстве в онлайн-таблице выбирается первое действие: [1.5]",
            ),
            (([0.0], [0], [[1.0, 1.0]], [[3.0, 5.0]]), {"gamma": 0.5}),
            [1.5],
            ("first_index_ties",),
        ),
        _example(
            name,
            _t("default gamma 0.99 gives [3.96]", "gamma по умолчанию 0.99 даёт [3.96]"),
            (([0.0], [0], [[0.0, 1.0]], [[2.0, 4.0]]), {}),
            [3.96],
            ("default_gamma",),
        ),
        _rejects(
            name,
            [
                (([1.0, 2.0], [0, 1], QB, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), {}),
                (([1.0, 2.0], [0, 1], QB, QB), {"gamma": -0.1}),
                (([1.0, 2.0], [0, 2], QB, QB), {}),
            ],
        ),
        _empty(name, [((np.zeros(0), np.zeros(0, dtype=bool), np.zeros((0, 3)), np.zeros((0, 3))), {})]),
        _unchanged(name, ([1.0, 0.0], [0, 0], [[2.0, 0.0], [0.0, 3.0]], [[1.0, 5.0], [4.0, -2.0]]), {"gamma": 0.5}),
    ]


def _nll_checks() -> list[PublicCheck]:
    name = "masked_token_nll"
    return [
        _example(
            name,
            _t("mean over the two active tokens is 1.25", "среднее по двум активным токенам равно 1.25"),
            (([-0.5, -1.5, -2.0, -0.25], [1, 0, 1, 0]), {}),
            1.25,
            ("formula", "returns_float"),
            scalar=True,
        ),
        _example(
            name,
            _t("a (2, 2) batch with a float mask gives 3.5 / 3", "батч (2, 2) с маской из float даёт 3.5 / 3"),
            (([[-1.0, -2.0], [-4.0, -0.5]], [[1.0, 1.0], [0.0, 1.0]]), {}),
            3.5 / 3,
            ("shapes", "formula"),
        ),
        _example(
            name,
            _t("padding is never read: -inf under the mask gives 2.0", "дополнение (padding) не читается: -inf под маской даёт 2.0"),
            (([-1.0, -INF, -3.0], [True, False, True]), {}),
            2.0,
            ("padding_never_read",),
        ),
        _rejects(name, [(([-1.0, -2.0], [0, 0]), {}), (([-1.0, -2.0], [1, 0, 1]), {}), (([-1.0, -2.0], [2, 0]), {})]),
        _unchanged(name, ([-0.5, -1.5, -2.0, -0.25], [1, 0, 1, 0])),
    ]


def _cql_checks() -> list[PublicCheck]:
    name = "cql_discrete_penalty"
    return [
        _example(
            name,
            _t("equal values Q=(0, 0, 0, 0), a=3 give ln 4", "равные значения Q=(0, 0, 0, 0), a=3 дают ln 4"),
            (([0.0, 0.0, 0.0, 0.0], 3), {}),
            math.log(4.0),
            ("formula", "single_state"),
        ),
        _example(
            name,
            _t("a batch of two states gives the mean, 1.410038", "батч из двух состояний даёт среднее, 1.410038"),
            (([[0.0, 0.0], [2.0, 0.0]], [0, 1]), {}),
            (math.log(2.0) + math.log(math.exp(2.0) + 1.0)) / 2,
            ("batch_mean", "formula"),
        ),
        _example(
            name,
            _t(
                "large Q=(1000, 999, -1000), a=1 gives 1.313262 (subtract the maximum first)",
                "большие Q=(1000, 999, -1000), a=1 дают 1.313262 (сначала вычтите максимум)",
            ),
            (([1000.0, 999.0, -1000.0], 1), {}),
            1.0 + math.log1p(math.exp(-1.0)),
            ("stable",),
        ),
        _law_check(
            name,
            _t("non-negative and invariant to a constant shift", "неотрицателен и не меняется при сдвиге на константу"),
            st.integers(1, 5).flatmap(
                lambda a: st.tuples(
                    hnp.arrays(np.float64, (3, a), elements=FINITE),
                    hnp.arrays(np.int64, 3, elements=st.integers(0, a - 1)),
                    st.floats(-50, 50),
                )
            ),
            _cql_laws,
            ("formula",),
        ),
        _rejects(name, [(([1.0, 2.0], 2), {}), (([1.0, 2.0], -1), {}), (([1.0, 2.0], 0.5), {}), ((QB, [0]), {}), ((QB, [0, 5]), {})]),
        _unchanged(name, ([[0.0, 0.0], [2.0, 0.0]], [0, 1])),
    ]


def _expectile_checks() -> list[PublicCheck]:
    name = "expectile_loss"
    return [
        _example(
            name,
            _t("worked example: 1.625 for u=(-2, 1), tau=0.25", "пример: 1.625 при u=(-2, 1), tau=0.25"),
            (([-2.0, 1.0], 0.25), {}),
            1.625,
            ("formula", "sides"),
        ),
        _example(
            name,
            _t("a (2, 2) diff with tau=0.75 gives 1.0", "diff формы (2, 2) при tau=0.75 даёт 1.0"),
            (([[1.0, -1.0], [2.0, 0.0]], 0.75), {}),
            1.0,
            ("any_shape", "formula"),
        ),
        _law_check(
            name,
            _t("tau = 0.5 gives half the MSE", "tau = 0.5 даёт половину MSE"),
            hnp.arrays(np.float64, st.integers(1, 20), elements=FINITE),
            _expectile_half,
            ("half_mse",),
        ),
        _rejects(name, [(([1.0], 0.0), {}), (([1.0], 1.0), {}), (([1.0], -0.2), {}), (([], 0.5), {})]),
        _unchanged(name, ([-2.0, 1.0], 0.25)),
    ]


def _rtg_checks() -> list[PublicCheck]:
    name = "return_to_go"
    return [
        _example(
            name,
            _t("worked example (2, -1, 0.5) gives (1.5, -0.5, 0.5)", "пример (2, -1, 0.5) даёт (1.5, -0.5, 0.5)"),
            (([2.0, -1.0, 0.5],), {}),
            [1.5, -0.5, 0.5],
            ("recursion", "default_gamma"),
        ),
        _example(
            name,
            _t("integer rewards (1, 1) with gamma=0.5 give floats (1.5, 1.0)", "целые награды (1, 1) при gamma=0.5 дают float (1.5, 1.0)"),
            (([1, 1],), {"gamma": 0.5}),
            [1.5, 1.0],
            ("float_output", "recursion"),
        ),
        _law_check(
            name,
            _t("satisfies G_t = r_t + gamma G_{t+1}", "выполняется G_t = r_t + gamma G_{t+1}"),
            st.tuples(hnp.arrays(np.float64, st.integers(1, 30), elements=FINITE), st.floats(0, 1)),
            _rtg_recursion,
            ("recursion",),
        ),
        _rejects(name, [(([[1.0, 2.0]],), {}), (([1.0],), {"gamma": 2.0}), (([1.0],), {"gamma": -1.0})]),
        _empty(name, [((np.zeros(0),), {}), ((np.zeros(0),), {"gamma": 0.5})]),
        _unchanged(name, ([2.0, -1.0, 0.5],), {"gamma": 0.9}),
    ]


def _pessimistic_checks() -> list[PublicCheck]:
    name = "pessimistic_values"
    return [
        _example(
            name,
            _t("worked example gives (1.5, -1.25, -inf)", "пример даёт (1.5, -1.25, -inf)"),
            (([2.0, -1.0, 0.5], [4, 16, 0]), {}),
            [1.5, -1.25, -np.inf],
            ("formula", "unseen", "default_radius_scale"),
        ),
        _example(
            name,
            _t("a (1, 2) table with radius_scale=2 gives [[0.0, -2.0]]", "таблица (1, 2) при radius_scale=2 даёт [[0.0, -2.0]]"),
            (([[1.0, 0.0]], [[4, 1]]), {"radius_scale": 2.0}),
            [[0.0, -2.0]],
            ("shapes", "formula"),
        ),
        _law_check(
            name,
            _t("more data never lowers the value; unseen is -inf", "больше данных не снижает значение; ненаблюдавшиеся = -inf"),
            st.integers(1, 8).flatmap(
                lambda n: st.tuples(
                    hnp.arrays(np.float64, n, elements=FINITE), hnp.arrays(np.float64, n, elements=st.integers(0, 20).map(float))
                )
            ),
            _pessimistic_monotone,
            ("formula", "unseen"),
        ),
        _rejects(
            name,
            [
                (([1.0, 2.0], [1.0]), {}),
                (([1.0], [-1.0]), {}),
                (([1.0], [1.0]), {"radius_scale": -1.0}),
                (([1.0], [1.0]), {"radius_scale": INF}),
            ],
        ),
        _empty(name, [((np.zeros(0), np.zeros(0)), {}), ((np.zeros((0, 3)), np.zeros((0, 3))), {"radius_scale": 2.0})]),
        _unchanged(name, ([2.0, -1.0, 0.5], [4.0, 16.0, 0.0])),
    ]


def _support_checks() -> list[PublicCheck]:
    name = "behavior_support_mask"
    return [
        _example(
            name,
            _t(
                "default ratio 0.35: (1.0, 0.35, 0.3) gives (True, True, False): >=, not >",
                "порог по умолчанию 0.35: (1.0, 0.35, 0.3) даёт (True, True, False): >=, а не >",
            ),
            (([1.0, 0.35, 0.3],), {}),
            [True, True, False],
            ("rule", "default_ratio", "shapes"),
        ),
        _example(
            name,
            _t(
                "counts (2, 1, 1) and ratio 0.5 keep every action; 0.25 of 0.5 is kept too",
                "счётчики (2, 1, 1) при пороге 0.5 оставляют все действия; 0.25 при максимуме 0.5 тоже",
            ),
            (([[0.5, 0.25, 0.1], [2.0, 1.0, 1.0]],), {"threshold_ratio": 0.5}),
            [[True, True, False], [True, True, True]],
            ("rule", "shapes"),
        ),
        _law_check(
            name,
            _t("the most likely action is always eligible", "самое вероятное действие всегда допустимо"),
            hnp.arrays(np.float64, (3, 4), elements=st.floats(0.01, 1.0)),
            _mask_argmax,
            ("argmax_eligible",),
        ),
        _rejects(
            name,
            [
                (([0.5, -0.1],), {}),
                (([0.0, 0.0],), {}),
                (([0.5, 0.5],), {"threshold_ratio": 1.5}),
                (([0.5, 0.5],), {"threshold_ratio": -0.1}),
                ((np.ones((2, 2, 2)),), {}),
            ],
        ),
        _empty(name, [((np.zeros((0, 3)),), {}), ((np.zeros((0, 2)),), {"threshold_ratio": 0.5})]),
        _unchanged(name, ([[0.5, 0.25, 0.1], [2.0, 1.0, 1.0]],), {"threshold_ratio": 0.5}),
    ]


def _fqe_checks() -> list[PublicCheck]:
    name = "fqe_targets"
    return [
        _example(
            name,
            _t("lab example gives [3.05]", "пример из лабораторной работы даёт [3.05]"),
            (([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]]), {"gamma": 0.9}),
            [3.05],
            ("formula", "shapes"),
        ),
        _example(
            name,
            _t("default gamma 0.99 gives [2.97]", "gamma по умолчанию 0.99 даёт [2.97]"),
            (([0.0], [0], [[2.0, 4.0]], [[0.5, 0.5]]), {}),
            [2.97],
            ("default_gamma",),
        ),
        _law_check(
            name,
            _t("a one-hot policy gives the SARSA target", "детерминированная политика даёт цель SARSA"),
            _batch(),
            _fqe_sarsa,
            ("formula",),
        ),
        _rejects(
            name,
            [
                (([0.0], [0], [[1.0, 2.0]], [[0.5, 0.6]]), {}),
                (([0.0], [0], [[1.0, 2.0]], [[0.0, 0.0]]), {}),
                (([0.0], [0], [[1.0, 2.0]], [[1.5, -0.5]]), {}),
                (([0.0], [0], [[1.0, 2.0]], [[1.0]]), {}),
                (([0.0], [0], [[1.0, 2.0]], [[0.5, 0.5]]), {"gamma": 1.5}),
            ],
        ),
        _empty(name, [((np.zeros(0), np.zeros(0, dtype=bool), np.zeros((0, 3)), np.zeros((0, 3))), {})]),
        _unchanged(name, ([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]]), {"gamma": 0.9}),
    ]


def _iql_checks() -> list[PublicCheck]:
    name = "iql_advantage_weights"
    return [
        _example(
            name,
            _t(
                "A=(0, 2, -1e6, 1e6), beta=0.5, max_weight=5 give (1, e, 0, 5) without overflow",
                "A=(0, 2, -1e6, 1e6), beta=0.5, max_weight=5 дают (1, e, 0, 5) без переполнения",
            ),
            (([0.0, 2.0, -1e6, 1e6], 0.5), {"max_weight": 5.0}),
            [1.0, math.e, 0.0, 5.0],
            ("formula", "no_overflow"),
        ),
        _example(
            name,
            _t(
                "default max_weight 100: A=[[10, 0]], beta=1 give [[100, 1]]",
                "max_weight по умолчанию 100: A=[[10, 0]], beta=1 дают [[100, 1]]",
            ),
            (([[10.0, 0.0]], 1.0), {}),
            [[100.0, 1.0]],
            ("default_max_weight", "shapes"),
        ),
        _law_check(
            name,
            _t("monotone in the advantage and capped", "монотонны по преимуществу и ограничены"),
            st.tuples(hnp.arrays(np.float64, st.integers(1, 20), elements=FINITE), st.floats(0, 5)),
            _iql_laws,
            ("formula",),
        ),
        _rejects(
            name, [(([1.0], -0.5), {}), (([1.0], 1.0), {"max_weight": 0.0}), (([1.0], 1.0), {"max_weight": -3.0}), (([1.0], INF), {})]
        ),
        _empty(name, [((np.zeros(0), 1.0), {}), ((np.zeros((0, 2)), 3.0), {"max_weight": 10.0})]),
        _unchanged(name, ([0.0, 0.5, -1.0], 2.0), {"max_weight": 5.0}),
    ]


CHECKS: list[PublicCheck] = [
    *_dqn_checks(),
    *_double_checks(),
    *_nll_checks(),
    *_cql_checks(),
    *_expectile_checks(),
    *_rtg_checks(),
    *_pessimistic_checks(),
    *_support_checks(),
    *_fqe_checks(),
    *_iql_checks(),
]

KERNEL_NAMES = tuple(dict.fromkeys(c.kernel for c in CHECKS))


def failure_text(exc: BaseException, lang: str = "en") -> str:
    """Why a check failed, in ``lang``: its own message, or the exception the kernel raised."""
    if isinstance(exc, CheckFailure):
        return exc.text(lang)
    if isinstance(exc, CheckTimeout):
        return MESSAGES[lang]["timeout"].format(seconds=exc.seconds)
    return MESSAGES[lang]["raised"].format(kind=type(exc).__name__, message=str(exc)[:300])


def run_one(check: PublicCheck, fn: Callable, name: str, timeout: float = 10.0, lang: str = "en") -> CheckResult:
    """Run one check on ``fn``; a failure's detail gives the reason and the failing call in ``lang``."""
    recorder = Recorder(fn, name)
    try:
        # A kernel's numpy warnings (overflow in exp, ...) would print in English: the
        # failing value and call say it in the student's language.
        with time_limit(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            check.run(recorder)
    except NotImplementedError:
        return CheckResult(check, False, TEXT[lang]["not_impl"].format(name=name), not_implemented=True)
    except (Exception, CheckTimeout) as exc:  # noqa: BLE001 - the student's code may raise anything
        detail = failure_text(exc, lang)
        calls = recorder.shown()
        if calls and not isinstance(exc, CheckTimeout):
            label = TEXT[lang]["smallest" if check.law else "input"]
            detail += INDENT + f"{label}: " + (INDENT + "  ").join(calls)
        return CheckResult(check, False, detail[:900])
    return CheckResult(check, True)


def run_checks(fn: Callable, name: str | None = None, timeout: float = 10.0, lang: str = "en") -> list[CheckResult]:
    """The results of every public check of the kernel ``name`` (``fn``'s own name by default)."""
    name = name or getattr(fn, "__name__", "")
    return [run_one(check, fn, name, timeout, lang) for check in CHECKS if check.kernel == name]


def format_results(name: str, results: list[CheckResult], lang: str = "en") -> str:
    """The report of one kernel: a summary line, then one line per check (and why it failed)."""
    t = TEXT[lang]
    total = len(results)
    checks = plural_ru(total, "открытой проверки", "открытых проверок", "открытых проверок") if lang == "ru" else ""
    lines = [t["summary"].format(name=name, passed=sum(r.passed for r in results), total=total, checks=checks)]
    for r in results:
        mark = t["ok"] if r.passed else t["fail"]
        lines.append(f"  [{mark}] {r.check.title[lang]}" + ("" if r.passed else INDENT + r.detail))
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
    results = run_checks(fn, name, lang=lang)
    print(format_results(name, results, lang))
    print(TEXT[lang]["disclaimer"])
    return all(r.passed for r in results)
