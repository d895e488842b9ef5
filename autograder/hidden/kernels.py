"""Hidden properties of the ten kernels (never shipped in ``release/``).

Each kernel is worth 10 points, split over properties that each catch a family of
real mistakes; a property's strategy draws the inputs those mistakes need (bool and
float 0/1 flags, int rewards, ties, |Q| up to 1e3, B != A, 1-D and 2-D, gamma 0 and 1).
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
SMALL_INTS = st.integers(-4, 4).map(float)                 # ties on purpose
BIG = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
VALUES = st.one_of(SMALL_INTS, BIG)
GAMMAS = st.one_of(st.sampled_from([0.0, 1.0, 0.99, 0.5]), st.floats(0.0, 1.0))


def arrays(shape, elements=VALUES, dtype=np.float64):
    return hnp.arrays(dtype, shape, elements=elements)


def flags(b):
    """terminated as bool, float 0/1 or int 0/1: all three are valid spellings."""
    as_bool = hnp.arrays(np.bool_, b)
    return st.one_of(as_bool, as_bool.map(lambda x: x.astype(np.float64)), as_bool.map(lambda x: x.astype(np.int64)))


def rewards(b):
    return st.one_of(arrays(b), arrays(b, st.integers(-3, 3), np.int64))


@st.composite
def batch_dims(draw, max_b=9, max_a=6):
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


def prop(kernel: str, key: str, strategy, **kw) -> Property:
    """A property whose case is a :class:`Call` (or a tuple of calls for relations)."""
    spec = _spec(kernel, key)
    calls = kw.pop("calls", lambda case: [case])
    return Property(kernel=kernel, key=key, title=spec["title"], points=spec["points"], strategy=strategy,
                    calls=calls, hint=spec.get("hint", {}), clauses=tuple(f"{kernel}.{c}" for c in spec["clauses"]),
                    **kw)


def no_mutation(kernel, strategy) -> Property:
    return prop(kernel, "no_mutation", strategy, check_mutation=True, examples=60, needs_correct_values=True)


def rejects(kernel, bad_calls: list[Call]) -> Property:
    return prop(kernel, "bad_input", st.sampled_from(bad_calls), examples=len(bad_calls) * 3, needs_correct_values=True)


def as_plain_call(call: Call) -> Call:
    """The call as a beginner writes it: Python lists, defaulted arguments left out.

    Every keyword the strategies pass is a defaulted parameter of its kernel.
    """
    return Call(tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in call.args))


def plain_call(kernel, strategy) -> Property:
    return prop(kernel, "plain_call", strategy.map(as_plain_call), examples=60)


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
def dqn_calls(draw, terminal=None, double=False, ties=False, flag_kind=None, garbage=False):
    b, a = draw(batch_dims())
    r = draw(rewards(b))
    if terminal is None:
        done = draw(flags(b))
    else:
        done = np.full(b, terminal)
    if flag_kind is not None:
        done = np.asarray(done).astype(flag_kind)
    target = draw(arrays((b, a)))
    if garbage:  # terminal rows never read next-Q: NaN or inf there must not reach the target
        fill = draw(st.sampled_from([None, np.nan, np.inf, -np.inf]))
        if fill is not None:
            target = np.where(np.asarray(done, dtype=bool)[:, None], fill, target)
    gamma = draw(GAMMAS)
    if not double:
        return Call((r, done, target), {"gamma": gamma})
    online = draw(arrays((b, a), st.integers(0, 1).map(float) if ties else VALUES))
    # Distinct online values differ by >= 1e-3, so float32 implementations pick the same
    # argmax as float64 (exact ties stay ties).
    online = np.round(online, 3)
    return Call((r, done, online, target), {"gamma": gamma})


QB = [[1.0, 2.0], [3.0, 4.0]]
DQN_BAD = [
    Call(([1.0, 2.0], [0, 1], [1.0, 2.0])),                       # next-Q not 2-D
    Call(([1.0, 2.0, 3.0], [0, 1], QB)),                           # length mismatch
    Call(([1.0, 2.0], [0, 1], [[1.0], [2.0], [3.0]])),
    Call(([1.0, 2.0], [0, 1], QB), {"gamma": 1.5}),
    Call(([1.0, 2.0], [0, 1], QB), {"gamma": -0.1}),
    Call(([1.0, 2.0], [0, 2], QB)),                                # flag not 0/1
    Call(([1.0, 2.0], [0, 1], np.zeros((2, 0)))),                  # no actions
]

DQN = [
    prop("dqn_targets", "reference", dqn_calls()),
    prop("dqn_targets", "terminal_rows", dqn_calls(terminal=True, garbage=True)),
    prop("dqn_targets", "truncation_bootstraps", dqn_calls(terminal=False)),
    prop("dqn_targets", "float_flags", dqn_calls(flag_kind=np.float64)),
    plain_call("dqn_targets", dqn_calls()),
    no_mutation("dqn_targets", dqn_calls()),
    rejects("dqn_targets", DQN_BAD),
]

DOUBLE = [
    prop("double_dqn_targets", "reference", dqn_calls(double=True)),
    prop("double_dqn_targets", "select_then_evaluate", dqn_calls(double=True, terminal=False)),
    prop("double_dqn_targets", "ties", dqn_calls(double=True, ties=True, terminal=False)),
    prop("double_dqn_targets", "terminal_rows", dqn_calls(double=True, terminal=True)),
    plain_call("double_dqn_targets", dqn_calls(double=True)),
    no_mutation("double_dqn_targets", dqn_calls(double=True)),
    rejects("double_dqn_targets", [Call((c.args[0], c.args[1], c.args[2], c.args[2]), c.kwargs) for c in DQN_BAD]
            + [Call(([1.0, 2.0], [0, 1], QB, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]))]),
]


# ---------------------------------------------------------------- masked_token_nll
@st.composite
def nll_calls(draw, padded_rows=False, flag_kind=None, min_dims=1):
    if padded_rows:  # (B, T) with a different response length per row, right padding
        b, t = draw(st.integers(1, 6)), draw(st.integers(2, 8))
        lengths = draw(st.lists(st.integers(0, t), min_size=b, max_size=b).filter(lambda ls: sum(ls) > 0))
        mask = np.arange(t)[None, :] < np.asarray(lengths)[:, None]
        shape = (b, t)
    else:
        shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, max_side=6))
        mask = draw(hnp.arrays(np.bool_, shape).filter(lambda m: m.any()))
    logp = draw(arrays(shape, st.floats(-30.0, 0.0)))
    kind = flag_kind or draw(st.sampled_from([np.bool_, np.int64, np.float64]))
    return Call((logp, mask.astype(kind)))


@st.composite
def nll_padding_pairs(draw):
    call = draw(nll_calls(padded_rows=True))
    logp, mask = call.args
    # -inf is what log-softmax gives at padded positions: sum(mask * logp) turns it into NaN.
    garbage = np.where(mask.astype(bool), logp, draw(st.sampled_from([-1e4, -50.0, 0.0, -np.inf])))
    return (call, Call((garbage, mask)))


NLL = [
    prop("masked_token_nll", "reference", nll_calls()),
    prop("masked_token_nll", "active_mean", nll_calls(padded_rows=True)),
    prop("masked_token_nll", "ignores_padding", nll_padding_pairs(), calls=lambda case: list(case), relation=same_outcome_relation("changing masked-out log-probs changed the loss",
                                        "изменение лог-вероятностей под маской изменило потери"), needs_correct_values=True),
    prop("masked_token_nll", "float_mask", nll_calls(flag_kind=np.float64)),
    plain_call("masked_token_nll", nll_calls()),
    no_mutation("masked_token_nll", nll_calls()),
    rejects("masked_token_nll", [
        Call(([-1.0, -2.0], [0, 0])), Call(([-1.0, -2.0], [1, 0, 1])), Call(([-1.0, -2.0], [2, 0])),
        Call(([[-1.0, -2.0]], [0, 0])),
    ]),
]


# ---------------------------------------------------------------- cql_discrete_penalty
@st.composite
def cql_calls(draw, single=False, spread=None):
    b, a = draw(batch_dims(max_a=7))
    elements = VALUES if spread is None else st.floats(-spread, spread)
    if single:
        q = draw(arrays(a, elements))
        return Call((q, draw(st.integers(0, a - 1))))
    q = draw(arrays((b, a), elements))
    acts = draw(arrays(b, st.integers(0, a - 1), np.int64))
    return Call((q, acts))


@st.composite
def cql_shift_pairs(draw):
    call = draw(cql_calls())
    q, acts = call.args
    shift = draw(st.floats(-500, 500))
    return (call, Call((q + shift, acts)))


CQL = [
    prop("cql_discrete_penalty", "reference", cql_calls()),
    prop("cql_discrete_penalty", "single_state", cql_calls(single=True)),
    prop("cql_discrete_penalty", "stable", cql_calls(spread=1e3)),
    prop("cql_discrete_penalty", "shift_invariant", cql_shift_pairs(), calls=lambda case: list(case), relation=same_outcome_relation("adding a constant to Q changed the penalty",
                                        "добавление константы к Q изменило штраф"), needs_correct_values=True),
    plain_call("cql_discrete_penalty", cql_calls()),
    no_mutation("cql_discrete_penalty", cql_calls()),
    rejects("cql_discrete_penalty", [
        Call(([1.0, 2.0], 2)), Call(([1.0, 2.0], -1)), Call(([1.0, 2.0], 0.5)), Call((QB, [0])),
        Call((QB, [0, 5])), Call(([[[1.0]]], [0])),
    ]),
]


# ---------------------------------------------------------------- expectile_loss
@st.composite
def expectile_calls(draw, tau=None, two_d=False):
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 6))) if two_d else draw(st.integers(1, 30))
    u = draw(arrays(shape))
    t = tau if tau is not None else draw(st.one_of(st.sampled_from([0.1, 0.7, 0.9]), st.floats(0.01, 0.99)))
    return Call((u, t))


EXPECTILE = [
    prop("expectile_loss", "reference", expectile_calls()),
    prop("expectile_loss", "asymmetric", expectile_calls(tau=0.9)),
    prop("expectile_loss", "half_mse", expectile_calls(tau=0.5)),
    prop("expectile_loss", "two_d", expectile_calls(two_d=True)),
    plain_call("expectile_loss", expectile_calls()),
    no_mutation("expectile_loss", expectile_calls()),
    rejects("expectile_loss", [Call(([1.0], 0.0)), Call(([1.0], 1.0)), Call(([1.0], -0.2)), Call(([], 0.5))]),
]


# ---------------------------------------------------------------- return_to_go
@st.composite
def rtg_calls(draw, gamma=None, ints=False, length=None):
    n = length if length is not None else draw(st.integers(1, 40))
    r = draw(arrays(n, st.integers(-5, 5), np.int64)) if ints else draw(arrays(n, st.floats(-10, 10)))
    g = draw(GAMMAS) if gamma is None else gamma
    return Call((r,), {"gamma": g})


RTG = [
    prop("return_to_go", "reference", rtg_calls()),
    prop("return_to_go", "undiscounted", rtg_calls(gamma=1.0)),
    prop("return_to_go", "gamma_zero", rtg_calls(gamma=0.0)),
    prop("return_to_go", "int_rewards", rtg_calls(ints=True, gamma=0.5)),
    prop("return_to_go", "long", rtg_calls(length=1000), examples=20),
    plain_call("return_to_go", rtg_calls()),
    no_mutation("return_to_go", rtg_calls()),
    rejects("return_to_go", [Call(([[1.0, 2.0]],)), Call(([1.0],), {"gamma": 2.0}), Call(([1.0],), {"gamma": -1.0})]),
]


# ---------------------------------------------------------------- pessimistic_values
@st.composite
def pessimistic_calls(draw, unseen=False, scale=None, big_counts=False):
    shape = draw(st.one_of(st.integers(1, 12), st.tuples(st.integers(1, 4), st.integers(1, 4))))
    means = draw(arrays(shape, st.floats(-100, 100)))
    if unseen:
        counts = draw(arrays(shape, st.sampled_from([0, 0, 1, 4]), np.int64))
        means = np.where(counts == 0, draw(st.sampled_from([0.0, 1e3, -7.5])), means)
    elif big_counts:
        counts = draw(arrays(shape, st.integers(1, 10**6), np.int64))
    else:
        # Fractional counts (weighted data) but no underflowing ones like 5e-324:
        # those only test float64 against float32, not the formula.
        counts = draw(st.one_of(arrays(shape, st.integers(0, 50), np.int64),
                                arrays(shape, st.one_of(st.just(0.0), st.floats(1e-3, 50)))))
    kw = {} if scale is None and draw(st.booleans()) else {"radius_scale": scale if scale is not None else draw(st.floats(0, 5))}
    return Call((means, counts), kw)


PESSIMISTIC = [
    prop("pessimistic_values", "reference", pessimistic_calls()),
    prop("pessimistic_values", "unseen", pessimistic_calls(unseen=True), relation=unseen_are_neg_inf, needs_correct_values=True),
    prop("pessimistic_values", "sqrt_radius", pessimistic_calls(big_counts=True)),
    prop("pessimistic_values", "radius_scale", pessimistic_calls(scale=2.5)),
    plain_call("pessimistic_values", pessimistic_calls()),
    no_mutation("pessimistic_values", pessimistic_calls()),
    rejects("pessimistic_values", [
        Call(([1.0, 2.0], [1.0])), Call(([1.0], [-1.0])), Call(([1.0], [1.0]), {"radius_scale": -1.0}),
        Call(([1.0], [1.0]), {"radius_scale": float("inf")}),
    ]),
]


# ---------------------------------------------------------------- behavior_support_mask
@st.composite
def support_calls(draw, one_d=False, relative=False, ratio=None):
    b, a = draw(batch_dims(max_a=6))
    shape = a if one_d else (b, a)
    if relative:  # small absolute probabilities: an absolute threshold would wrongly drop them
        p = draw(arrays(shape, st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.175, 0.2])))
        p = np.where(np.max(p, axis=-1, keepdims=True) == 0, 0.2, p)
    else:
        # No probabilities like 1e-140 that vanish in float32 (a correct torch
        # submission would then see an all-zero row).
        p = draw(arrays(shape, st.one_of(st.floats(1e-6, 1), st.sampled_from([0.0, 0.35, 1.0]))))
        p = np.where(np.max(p, axis=-1, keepdims=True) == 0, 1.0, p)
    r = ratio if ratio is not None else draw(st.one_of(st.sampled_from([0.35, 0.5, 1.0, 0.0]), st.floats(1e-3, 1)))
    # No entry within rounding of the threshold (other than the maximum itself, which is
    # always eligible): there a float32 implementation may rightly decide either way.
    top = np.max(p, axis=-1, keepdims=True)
    assume(not np.any((np.abs(p - r * top) <= 1e-5 * top) & (p != top)))
    return Call((p,), {"threshold_ratio": r})


SUPPORT = [
    prop("behavior_support_mask", "reference", support_calls()),
    prop("behavior_support_mask", "one_d", support_calls(one_d=True)),
    prop("behavior_support_mask", "relative", support_calls(relative=True, ratio=0.35)),
    prop("behavior_support_mask", "argmax_eligible", support_calls(ratio=1.0)),
    plain_call("behavior_support_mask", support_calls(ratio=0.35)),
    no_mutation("behavior_support_mask", support_calls()),
    rejects("behavior_support_mask", [
        Call(([0.5, -0.1],)), Call(([0.0, 0.0],)), Call(([0.5, 0.5],), {"threshold_ratio": 1.5}),
        Call(([0.5, 0.5],), {"threshold_ratio": -0.1}), Call((np.ones((2, 2, 2)),)),
    ]),
]


# ---------------------------------------------------------------- fqe_targets
@st.composite
def fqe_calls(draw, terminal=None, one_hot=False):
    b, a = draw(batch_dims())
    r = draw(rewards(b))
    done = draw(flags(b)) if terminal is None else np.full(b, terminal)
    q = draw(arrays((b, a)))
    if one_hot:
        pi = np.eye(a)[draw(arrays(b, st.integers(0, a - 1), np.int64))]
    else:
        raw = draw(arrays((b, a), st.one_of(st.just(0.0), st.floats(0.05, 1.0))))
        raw[:, 0] += 1e-3
        pi = raw / raw.sum(axis=1, keepdims=True)
    return Call((r, done, q, pi), {"gamma": draw(GAMMAS)})


FQE = [
    prop("fqe_targets", "reference", fqe_calls()),
    prop("fqe_targets", "expectation", fqe_calls(terminal=False)),
    prop("fqe_targets", "terminal_rows", fqe_calls(terminal=True)),
    prop("fqe_targets", "sarsa", fqe_calls(one_hot=True)),
    plain_call("fqe_targets", fqe_calls()),
    no_mutation("fqe_targets", fqe_calls()),
    rejects("fqe_targets", [
        Call(([0.0], [0], [[1.0, 2.0]], [[0.5, 0.6]])), Call(([0.0], [0], [[1.0, 2.0]], [[0.0, 0.0]])),
        Call(([0.0], [0], [[1.0, 2.0]], [[1.5, -0.5]])), Call(([0.0], [0], [[1.0, 2.0]], [[1.0]])),
        Call(([0.0], [0], [[1.0, 2.0]], [[0.5, 0.5]]), {"gamma": 1.5}),
    ]),
]


# ---------------------------------------------------------------- iql_advantage_weights
@st.composite
def iql_calls(draw, huge=False, beta=None):
    shape = draw(st.one_of(st.integers(1, 20), st.tuples(st.integers(1, 4), st.integers(1, 5))))
    adv = draw(arrays(shape, st.floats(-1e6, 1e6) if huge else st.floats(-10, 10)))
    b = beta if beta is not None else draw(st.one_of(st.sampled_from([0.0, 1.0, 3.0]), st.floats(0, 10)))
    kw = {} if draw(st.booleans()) else {"max_weight": draw(st.sampled_from([1.0, 20.0, 100.0]))}
    return Call((adv, b), kw)


IQL = [
    prop("iql_advantage_weights", "reference", iql_calls()),
    prop("iql_advantage_weights", "capped", iql_calls(beta=5.0)),
    prop("iql_advantage_weights", "no_overflow", iql_calls(huge=True, beta=1.0)),
    prop("iql_advantage_weights", "beta_zero", iql_calls(beta=0.0)),
    plain_call("iql_advantage_weights", iql_calls()),
    no_mutation("iql_advantage_weights", iql_calls()),
    rejects("iql_advantage_weights", [
        Call(([1.0], -0.5)), Call(([1.0], 1.0), {"max_weight": 0.0}), Call(([1.0], 1.0), {"max_weight": -3.0}),
        Call(([1.0], float("inf"))),
    ]),
]

PROPERTIES: list[Property] = [*DQN, *DOUBLE, *NLL, *CQL, *EXPECTILE, *RTG, *PESSIMISTIC, *SUPPORT, *FQE, *IQL]
