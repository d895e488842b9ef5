"""Hidden properties of the ten kernels (never shipped in ``release/``).

Each kernel is worth 10 points, split over properties that each catch a family of
real mistakes; a property's strategy draws the inputs those mistakes need (bool and
float 0/1 flags, int rewards, ties, |Q| up to 1e3, B != A, 1-D and 2-D, gamma 0 and 1),
and its small strategy draws round, hand-sized cases of the same kind that come first.

The suite is data-driven: ``suite.toml`` holds each property's points, titles, hints
and the contract clauses it tests; this module holds only what draws and judges the
cases, one line per property.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.grade.properties import Call, Failure, Property, compare, message

# ---------------------------------------------------------------- building blocks
SMALL_INTS = st.integers(-4, 4).map(float)  # ties on purpose
BIG = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
VALUES = st.one_of(SMALL_INTS, BIG)
GAMMAS = st.one_of(st.sampled_from([0.0, 1.0, 0.99, 0.5]), st.floats(0.0, 1.0))
# Small, round draws: what a student could have typed (each property's corpus starts
# with them, so the failing input shown is one of them whenever one fails).
ROUND = st.integers(-3, 3).map(float)
ROUND_GAMMAS = st.sampled_from([0.0, 0.5, 0.9, 1.0])


def drawn(builder, **kw):
    """(strategy, small strategy) of one builder: positional args of :func:`prop`."""
    return builder(**kw), builder(small=True, **kw)


def arrays(shape, elements=VALUES, dtype=np.float64):
    return hnp.arrays(dtype, shape, elements=elements)


def flags(b):
    """terminated as bool, float 0/1 or int 0/1: all three are valid spellings."""
    as_bool = hnp.arrays(np.bool_, b)
    return st.one_of(as_bool, as_bool.map(lambda x: x.astype(np.float64)), as_bool.map(lambda x: x.astype(np.int64)))


def rewards(b, small=False):
    return st.one_of(arrays(b, ROUND if small else VALUES), arrays(b, st.integers(-3, 3), np.int64))


@st.composite
def batch_dims(draw, max_b=9, max_a=6, small=False, tables=1):
    """(B, A); small ones keep a whole call (two (B,) vectors, ``tables`` (B, A) tables
    and gamma) within 12 numbers."""
    if small:
        return draw(st.sampled_from([(b, a) for b in (1, 2, 3) for a in (1, 2, 3) if a <= max_a and b * (2 + tables * a) + 1 <= 12]))
    return draw(st.integers(1, max_b)), draw(st.integers(1, max_a))


def _load_suite() -> dict:
    """The data half of the suite: clauses, points, titles and hints (suite.toml)."""
    return tomllib.loads(resources.files("autograder.hidden").joinpath("suite.toml").read_text(encoding="utf-8"))


SUITE = _load_suite()


def _spec(kernel: str, key: str) -> dict:
    """A property's data: the shared entry (if any) overlaid with the kernel's own."""
    spec = dict(SUITE["shared"].get(key, {}))
    own = SUITE[kernel]["properties"].get(key, {})
    spec.update({k: v for k, v in own.items() if k != "clauses"})
    spec["clauses"] = [*spec.get("clauses", ()), *own.get("clauses", ())]
    return spec


def prop(kernel: str, key: str, strategy, small=None, **kw) -> Property:
    """A property whose case is a :class:`Call` (or a tuple of calls for relations).

    ``small`` draws small, round cases of the same kind; they come first in the corpus.
    """
    spec = _spec(kernel, key)
    calls = kw.pop("calls", lambda case: [case])
    return Property(
        kernel=kernel,
        key=key,
        title=spec["title"],
        points=spec["points"],
        strategy=strategy,
        small=small,
        calls=calls,
        hint=spec.get("hint", {}),
        clauses=tuple(f"{kernel}.{c}" for c in spec["clauses"]),
        **kw,
    )


def no_mutation(kernel, strategy) -> Property:
    return prop(kernel, "no_mutation", strategy, check_mutation=True, examples=30, needs_correct_values=True)


def _fixed_calls(kernel, key: str, calls: list[Call]) -> Property:
    """A property over a fixed list of edge calls, gated on a passing value check."""
    return prop(kernel, key, st.sampled_from(calls), examples=len(calls) * 3, needs_correct_values=True)


def rejects(kernel, bad_calls: list[Call]) -> Property:
    return _fixed_calls(kernel, "bad_input", bad_calls)


def empty_inputs(kernel, calls: list[Call]) -> Property:
    """Empty batches (or episodes), where the contract allows them."""
    return _fixed_calls(kernel, "empty_batch", calls)


def _empty_transitions(a: int, tables: int, flags_dtype=np.bool_) -> tuple:
    """(rewards, terminated, *tables) of a batch of B = 0 transitions with A = ``a``."""
    return (np.zeros(0), np.zeros(0, dtype=flags_dtype), *[np.zeros((0, a)) for _ in range(tables)])


def as_plain_call(call: Call) -> Call:
    """The call as a beginner writes it: Python lists, defaulted arguments left out.

    Every keyword the strategies pass is a defaulted parameter of its kernel.
    """
    return Call(tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in call.args))


def plain_call(kernel, strategy, small) -> Property:
    return prop(kernel, "plain_call", strategy.map(as_plain_call), small.map(as_plain_call), examples=50)


def _with_call(failure, call):
    return None if failure is None else Failure(failure.message, failure.expected, failure.got, call)


def same_outcome_relation(en_msg, ru_msg):
    """Relation: the two calls of a case must give the same value (within tolerance).

    Only the invariance is judged; wrong values are the differential properties' business.
    """

    def relation(case, outcomes, expected):
        first, second = outcomes
        if first.get("s") != "ok":
            return _with_call(compare(first, expected[0]), case[0])
        if second.get("s") != "ok":
            return _with_call(compare(second, expected[1]), case[1])
        failure = compare(second, {"s": "ok", "v": first["v"], "scale": expected[1].get("scale")})
        if failure is not None:
            return Failure({"en": en_msg, "ru": ru_msg}, expected=first["v"], got=second["v"], call=case[1])
        return None

    return relation


def unseen_are_neg_inf(case, outcomes, expected):
    """Only the entries with n = 0 are judged: they must be -inf."""
    (got,), (want,) = outcomes, expected
    if got.get("s") != "ok":
        return _with_call(compare(got, want), case)
    counts = np.asarray(case.args[1])
    value = got["v"]
    if value.shape != counts.shape:
        return _with_call(compare(got, want), case)
    unseen = counts == 0
    if not np.all(np.isneginf(value[unseen])):
        return Failure(message("unseen"), expected=want["v"], got=value, call=case)
    return None


# ---------------------------------------------------------------- dqn_targets
@st.composite
def dqn_calls(draw, terminal=None, double=False, ties=False, flag_kind=None, garbage=False, small=False):
    b, a = draw(batch_dims(small=small, tables=2 if double else 1))
    r = draw(rewards(b, small))
    done = draw(flags(b)) if terminal is None else np.full(b, terminal)
    if flag_kind is not None:
        done = np.asarray(done).astype(flag_kind)
    target = draw(arrays((b, a), ROUND if small else VALUES))
    if garbage:  # terminal rows never read next-Q: NaN or inf there must not reach the target
        fill = draw(st.sampled_from([None, np.nan, np.inf, -np.inf]))
        if fill is not None:
            target = np.where(np.asarray(done, dtype=bool)[:, None], fill, target)
    gamma = draw(ROUND_GAMMAS if small else GAMMAS)
    if not double:
        return Call((r, done, target), {"gamma": gamma})
    online = draw(arrays((b, a), st.integers(0, 1).map(float) if ties else ROUND if small else VALUES))
    # Distinct online values differ by >= 1e-3, so float32 implementations pick the same
    # argmax as float64 (exact ties stay ties).
    online = np.round(online, 3)
    return Call((r, done, online, target), {"gamma": gamma})


QB = [[1.0, 2.0], [3.0, 4.0]]
DQN_BAD = [
    Call(([1.0, 2.0], [0, 1], [1.0, 2.0])),  # next-Q not 2-D
    Call(([1.0, 2.0, 3.0], [0, 1], QB)),  # length mismatch
    Call(([1.0, 2.0], [0, 1], [[1.0], [2.0], [3.0]])),
    Call(([1.0, 2.0], [0, 1], QB), {"gamma": 1.5}),
    Call(([1.0, 2.0], [0, 1], QB), {"gamma": -0.1}),
    Call(([1.0, 2.0], [0, 2], QB)),  # flag not 0/1
    Call(([1.0, 2.0], [0, 1], np.zeros((2, 0)))),  # no actions
]

DQN = [
    prop("dqn_targets", "reference", *drawn(dqn_calls)),
    prop("dqn_targets", "terminal_rows", *drawn(dqn_calls, terminal=True, garbage=True)),
    prop("dqn_targets", "truncation_bootstraps", *drawn(dqn_calls, terminal=False)),
    prop("dqn_targets", "float_flags", *drawn(dqn_calls, flag_kind=np.float64)),
    plain_call("dqn_targets", *drawn(dqn_calls)),
    no_mutation("dqn_targets", dqn_calls()),
    rejects("dqn_targets", DQN_BAD),
    empty_inputs("dqn_targets", [Call(_empty_transitions(3, 1)), Call(_empty_transitions(1, 1, np.float64), {"gamma": 0.5})]),
]

DOUBLE = [
    prop("double_dqn_targets", "reference", *drawn(dqn_calls, double=True)),
    prop("double_dqn_targets", "select_then_evaluate", *drawn(dqn_calls, double=True, terminal=False)),
    prop("double_dqn_targets", "ties", *drawn(dqn_calls, double=True, ties=True, terminal=False)),
    prop("double_dqn_targets", "terminal_rows", *drawn(dqn_calls, double=True, terminal=True)),
    plain_call("double_dqn_targets", *drawn(dqn_calls, double=True)),
    no_mutation("double_dqn_targets", dqn_calls(double=True)),
    rejects(
        "double_dqn_targets",
        [Call((c.args[0], c.args[1], c.args[2], c.args[2]), c.kwargs) for c in DQN_BAD]
        + [Call(([1.0, 2.0], [0, 1], QB, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]))],
    ),
    empty_inputs("double_dqn_targets", [Call(_empty_transitions(3, 2)), Call(_empty_transitions(1, 2, np.float64), {"gamma": 0.5})]),
]


# ---------------------------------------------------------------- masked_token_nll
@st.composite
def nll_calls(draw, padded_rows=False, flag_kind=None, small=False):
    if padded_rows:  # (B, T) with a different response length per row, right padding
        b, t = draw(st.integers(1, 2 if small else 6)), draw(st.integers(2, 3 if small else 8))
        lengths = draw(st.lists(st.integers(0, t), min_size=b, max_size=b).filter(lambda ls: sum(ls) > 0))
        mask = np.arange(t)[None, :] < np.asarray(lengths)[:, None]
        shape = (b, t)
    else:
        if small:  # values and mask: at most 12 numbers
            shape = draw(st.sampled_from([(1,), (2,), (3,), (4,), (6,), (1, 2), (2, 2), (2, 3), (3, 2), (1, 3)]))
        else:
            shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=6))
        mask = draw(hnp.arrays(np.bool_, shape).filter(lambda m: m.any()))
    logp = draw(arrays(shape, st.sampled_from([0.0, -0.5, -1.0, -2.0, -3.0]) if small else st.floats(-30.0, 0.0)))
    kind = flag_kind or draw(st.sampled_from([np.bool_, np.int64, np.float64]))
    return Call((logp, mask.astype(kind)))


@st.composite
def nll_padding_pairs(draw, small=False):
    call = draw(nll_calls(padded_rows=True, small=small))
    logp, mask = call.args
    # -inf is what log-softmax gives at padded positions: sum(mask * logp) turns it into NaN.
    garbage = np.where(mask.astype(bool), logp, draw(st.sampled_from([-1e4, -50.0, 0.0, -np.inf])))
    return (call, Call((garbage, mask)))


NLL = [
    prop("masked_token_nll", "reference", *drawn(nll_calls)),
    prop("masked_token_nll", "active_mean", *drawn(nll_calls, padded_rows=True)),
    prop(
        "masked_token_nll",
        "ignores_padding",
        *drawn(nll_padding_pairs),
        calls=lambda case: list(case),
        relation=same_outcome_relation(
            "changing masked-out log-probs changed the loss", "изменение лог-вероятностей под маской изменило потери"
        ),
        needs_correct_values=True,
    ),
    prop("masked_token_nll", "float_mask", *drawn(nll_calls, flag_kind=np.float64)),
    plain_call("masked_token_nll", *drawn(nll_calls)),
    no_mutation("masked_token_nll", nll_calls()),
    rejects(
        "masked_token_nll",
        [
            Call(([-1.0, -2.0], [0, 0])),
            Call(([-1.0, -2.0], [1, 0, 1])),
            Call(([-1.0, -2.0], [2, 0])),
            Call(([[-1.0, -2.0]], [0, 0])),
        ],
    ),
]


# ---------------------------------------------------------------- cql_discrete_penalty
@st.composite
def cql_calls(draw, single=False, spread=None, small=False):
    b, a = draw(batch_dims(max_a=7, small=small))
    elements = ROUND if small else VALUES if spread is None else st.floats(-spread, spread)
    if single:
        q = draw(arrays(a, elements))
        return Call((q, draw(st.integers(0, a - 1))))
    q = draw(arrays((b, a), elements))
    acts = draw(arrays(b, st.integers(0, a - 1), np.int64))
    return Call((q, acts))


@st.composite
def cql_shift_pairs(draw, small=False):
    call = draw(cql_calls(small=small))
    q, acts = call.args
    shift = draw(st.sampled_from([-2.0, 1.0, 10.0]) if small else st.floats(-500, 500))
    return (call, Call((q + shift, acts)))


CQL = [
    prop("cql_discrete_penalty", "reference", *drawn(cql_calls)),
    prop("cql_discrete_penalty", "single_state", *drawn(cql_calls, single=True)),
    prop("cql_discrete_penalty", "stable", cql_calls(spread=1e3)),
    prop(
        "cql_discrete_penalty",
        "shift_invariant",
        *drawn(cql_shift_pairs),
        calls=lambda case: list(case),
        relation=same_outcome_relation("adding a constant to Q changed the penalty", "добавление константы к Q изменило штраф"),
        needs_correct_values=True,
    ),
    plain_call("cql_discrete_penalty", *drawn(cql_calls)),
    no_mutation("cql_discrete_penalty", cql_calls()),
    rejects(
        "cql_discrete_penalty",
        [
            Call(([1.0, 2.0], 2)),
            Call(([1.0, 2.0], -1)),
            Call(([1.0, 2.0], 0.5)),
            Call((QB, [0])),
            Call((QB, [0, 5])),
            Call(([[[1.0]]], [0])),
        ],
    ),
]


# ---------------------------------------------------------------- expectile_loss
@st.composite
def expectile_calls(draw, tau=None, two_d=False, small=False):
    side = 3 if small else 6
    shape = (draw(st.integers(1, side)), draw(st.integers(1, side))) if two_d else draw(st.integers(1, 4 if small else 30))
    u = draw(arrays(shape, ROUND if small else VALUES))
    taus = st.sampled_from([0.1, 0.7, 0.9])
    t = tau if tau is not None else draw(taus if small else st.one_of(taus, st.floats(0.01, 0.99)))
    return Call((u, t))


EXPECTILE = [
    prop("expectile_loss", "reference", *drawn(expectile_calls)),
    prop("expectile_loss", "asymmetric", *drawn(expectile_calls, tau=0.9)),
    prop("expectile_loss", "half_mse", *drawn(expectile_calls, tau=0.5)),
    prop("expectile_loss", "two_d", *drawn(expectile_calls, two_d=True)),
    plain_call("expectile_loss", *drawn(expectile_calls)),
    no_mutation("expectile_loss", expectile_calls()),
    rejects("expectile_loss", [Call(([1.0], 0.0)), Call(([1.0], 1.0)), Call(([1.0], -0.2)), Call(([], 0.5))]),
]


# ---------------------------------------------------------------- return_to_go
@st.composite
def rtg_calls(draw, gamma=None, ints=False, length=None, small=False):
    n = length if length is not None else draw(st.integers(1, 4 if small else 40))
    r = draw(arrays(n, st.integers(-5, 5), np.int64)) if ints else draw(arrays(n, ROUND if small else st.floats(-10, 10)))
    g = draw(ROUND_GAMMAS if small else GAMMAS) if gamma is None else gamma
    return Call((r,), {"gamma": g})


RTG = [
    prop("return_to_go", "reference", *drawn(rtg_calls)),
    prop("return_to_go", "undiscounted", *drawn(rtg_calls, gamma=1.0)),
    prop("return_to_go", "gamma_zero", *drawn(rtg_calls, gamma=0.0)),
    prop("return_to_go", "int_rewards", *drawn(rtg_calls, ints=True, gamma=0.5)),
    prop("return_to_go", "long", rtg_calls(length=1000), examples=200),
    plain_call("return_to_go", *drawn(rtg_calls)),
    no_mutation("return_to_go", rtg_calls()),
    rejects("return_to_go", [Call(([[1.0, 2.0]],)), Call(([1.0],), {"gamma": 2.0}), Call(([1.0],), {"gamma": -1.0})]),
    empty_inputs(
        "return_to_go", [Call((np.zeros(0),)), Call((np.zeros(0),), {"gamma": 0.5}), Call((np.zeros(0, dtype=np.int64),), {"gamma": 0.9})]
    ),
]


# ---------------------------------------------------------------- pessimistic_values
@st.composite
def pessimistic_calls(draw, unseen=False, scale=None, big_counts=False, small=False):
    if small:
        shape = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 2), st.integers(1, 2))))
    else:
        shape = draw(st.one_of(st.integers(1, 12), st.tuples(st.integers(1, 4), st.integers(1, 4))))
    means = draw(arrays(shape, ROUND if small else st.floats(-100, 100)))
    if unseen:
        counts = draw(arrays(shape, st.sampled_from([0, 0, 1, 4]), np.int64))
        means = np.where(counts == 0, draw(st.sampled_from([0.0, 1e3, -7.5])), means)
    elif big_counts:
        counts = draw(arrays(shape, st.sampled_from([4, 9, 100]) if small else st.integers(1, 10**6), np.int64))
    elif small:
        counts = draw(arrays(shape, st.sampled_from([0, 1, 4, 9]), np.int64))
    else:
        # Fractional counts (weighted data) but no underflowing ones like 5e-324:
        # those only test float64 against float32, not the formula.
        counts = draw(st.one_of(arrays(shape, st.integers(0, 50), np.int64), arrays(shape, st.one_of(st.just(0.0), st.floats(1e-3, 50)))))
    scales = st.sampled_from([0.0, 1.0, 2.0]) if small else st.floats(0, 5)
    kw = {} if scale is None and draw(st.booleans()) else {"radius_scale": scale if scale is not None else draw(scales)}
    return Call((means, counts), kw)


PESSIMISTIC = [
    prop("pessimistic_values", "reference", *drawn(pessimistic_calls)),
    prop("pessimistic_values", "unseen", *drawn(pessimistic_calls, unseen=True), relation=unseen_are_neg_inf, needs_correct_values=True),
    prop("pessimistic_values", "sqrt_radius", *drawn(pessimistic_calls, big_counts=True)),
    prop("pessimistic_values", "radius_scale", *drawn(pessimistic_calls, scale=2.5)),
    plain_call("pessimistic_values", *drawn(pessimistic_calls)),
    no_mutation("pessimistic_values", pessimistic_calls()),
    rejects(
        "pessimistic_values",
        [
            Call(([1.0, 2.0], [1.0])),
            Call(([1.0], [-1.0])),
            Call(([1.0], [1.0]), {"radius_scale": -1.0}),
            Call(([1.0], [1.0]), {"radius_scale": float("inf")}),
        ],
    ),
    empty_inputs(
        "pessimistic_values", [Call((np.zeros(0), np.zeros(0))), Call((np.zeros((0, 3)), np.zeros((0, 3))), {"radius_scale": 2.0})]
    ),
]


# ---------------------------------------------------------------- behavior_support_mask
@st.composite
def support_calls(draw, one_d=False, relative=False, ratio=None, small=False):
    b, a = draw(batch_dims(max_a=6, small=small))
    shape = a if one_d else (b, a)
    if relative:  # small absolute probabilities: an absolute threshold would wrongly drop them
        p = draw(arrays(shape, st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.175, 0.2])))
        p = np.where(np.max(p, axis=-1, keepdims=True) == 0, 0.2, p)
    else:
        # No probabilities like 1e-140 that vanish in float32 (a correct torch
        # submission would then see an all-zero row).
        p = draw(
            arrays(
                shape,
                st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]) if small else st.one_of(st.floats(1e-6, 1), st.sampled_from([0.0, 0.35, 1.0])),
            )
        )
        p = np.where(np.max(p, axis=-1, keepdims=True) == 0, 1.0, p)
    ratios = st.sampled_from([0.35, 0.5, 1.0, 0.0])
    r = ratio if ratio is not None else draw(ratios if small else st.one_of(ratios, st.floats(1e-3, 1)))
    # No entry within rounding of the threshold (other than the maximum itself, which is
    # always eligible): there a float32 implementation may rightly decide either way.
    top = np.max(p, axis=-1, keepdims=True)
    assume(not np.any((np.abs(p - r * top) <= 1e-5 * top) & (p != top)))
    return Call((p,), {"threshold_ratio": r})


SUPPORT = [
    prop("behavior_support_mask", "reference", *drawn(support_calls)),
    prop("behavior_support_mask", "one_d", *drawn(support_calls, one_d=True)),
    prop("behavior_support_mask", "relative", *drawn(support_calls, relative=True, ratio=0.35)),
    prop("behavior_support_mask", "argmax_eligible", *drawn(support_calls, ratio=1.0)),
    plain_call("behavior_support_mask", *drawn(support_calls, ratio=0.35)),
    no_mutation("behavior_support_mask", support_calls()),
    rejects(
        "behavior_support_mask",
        [
            Call(([0.5, -0.1],)),
            Call(([0.0, 0.0],)),
            Call(([0.5, 0.5],), {"threshold_ratio": 1.5}),
            Call(([0.5, 0.5],), {"threshold_ratio": -0.1}),
            Call((np.ones((2, 2, 2)),)),
        ],
    ),
    empty_inputs("behavior_support_mask", [Call((np.zeros((0, 3)),)), Call((np.zeros((0, 2)),), {"threshold_ratio": 0.5})]),
]


# ---------------------------------------------------------------- fqe_targets
@st.composite
def fqe_calls(draw, terminal=None, one_hot=False, small=False):
    b, a = draw(batch_dims(small=small, tables=2))
    r = draw(rewards(b, small))
    done = draw(flags(b)) if terminal is None else np.full(b, terminal)
    q = draw(arrays((b, a), ROUND if small else VALUES))
    if one_hot:
        pi = np.eye(a)[draw(arrays(b, st.integers(0, a - 1), np.int64))]
    elif small:  # each row: one action, or an even split over two (probabilities 1 or 0.5)
        first, second = draw(arrays(b, st.integers(0, a - 1), np.int64)), draw(arrays(b, st.integers(0, a - 1), np.int64))
        pi = 0.5 * (np.eye(a)[first] + np.eye(a)[second])
    else:
        raw = draw(arrays((b, a), st.one_of(st.just(0.0), st.floats(0.05, 1.0))))
        raw[:, 0] += 1e-3
        pi = raw / raw.sum(axis=1, keepdims=True)
    return Call((r, done, q, pi), {"gamma": draw(ROUND_GAMMAS if small else GAMMAS)})


FQE = [
    prop("fqe_targets", "reference", *drawn(fqe_calls)),
    prop("fqe_targets", "expectation", *drawn(fqe_calls, terminal=False)),
    prop("fqe_targets", "terminal_rows", *drawn(fqe_calls, terminal=True)),
    prop("fqe_targets", "sarsa", *drawn(fqe_calls, one_hot=True)),
    plain_call("fqe_targets", *drawn(fqe_calls)),
    no_mutation("fqe_targets", fqe_calls()),
    rejects(
        "fqe_targets",
        [
            Call(([0.0], [0], [[1.0, 2.0]], [[0.5, 0.6]])),
            Call(([0.0], [0], [[1.0, 2.0]], [[0.0, 0.0]])),
            Call(([0.0], [0], [[1.0, 2.0]], [[1.5, -0.5]])),
            Call(([0.0], [0], [[1.0, 2.0]], [[1.0]])),
            Call(([0.0], [0], [[1.0, 2.0]], [[0.5, 0.5]]), {"gamma": 1.5}),
        ],
    ),
    empty_inputs("fqe_targets", [Call(_empty_transitions(3, 2)), Call(_empty_transitions(1, 2, np.float64), {"gamma": 0.5})]),
]


# ---------------------------------------------------------------- iql_advantage_weights
@st.composite
def iql_calls(draw, huge=False, beta=None, small=False):
    if small:
        shape = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 2), st.integers(1, 2))))
    else:
        shape = draw(st.one_of(st.integers(1, 20), st.tuples(st.integers(1, 4), st.integers(1, 5))))
    adv = draw(arrays(shape, ROUND if small else st.floats(-1e6, 1e6) if huge else st.floats(-10, 10)))
    betas = st.sampled_from([0.0, 1.0, 3.0])
    b = beta if beta is not None else draw(betas if small else st.one_of(betas, st.floats(0, 10)))
    kw = {} if draw(st.booleans()) else {"max_weight": draw(st.sampled_from([1.0, 20.0, 100.0]))}
    return Call((adv, b), kw)


IQL = [
    prop("iql_advantage_weights", "reference", *drawn(iql_calls)),
    prop("iql_advantage_weights", "capped", *drawn(iql_calls, beta=5.0)),
    prop("iql_advantage_weights", "no_overflow", iql_calls(huge=True, beta=1.0)),
    prop("iql_advantage_weights", "beta_zero", *drawn(iql_calls, beta=0.0)),
    plain_call("iql_advantage_weights", *drawn(iql_calls)),
    no_mutation("iql_advantage_weights", iql_calls()),
    rejects(
        "iql_advantage_weights",
        [
            Call(([1.0], -0.5)),
            Call(([1.0], 1.0), {"max_weight": 0.0}),
            Call(([1.0], 1.0), {"max_weight": -3.0}),
            Call(([1.0], float("inf"))),
        ],
    ),
    empty_inputs("iql_advantage_weights", [Call((np.zeros(0), 1.0)), Call((np.zeros((0, 2)), 3.0), {"max_weight": 10.0})]),
]

PROPERTIES: list[Property] = [*DQN, *DOUBLE, *NLL, *CQL, *EXPECTILE, *RTG, *PESSIMISTIC, *SUPPORT, *FQE, *IQL]
