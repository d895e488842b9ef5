"""Hidden properties of the ten kernels (never shipped in ``release/``).

Each kernel is worth 10 points, split over properties that each catch a family of
real mistakes; a property's strategy draws the inputs those mistakes need (bool and
float 0/1 flags, int rewards, ties, |Q| up to 1e3, B != A, 1-D and 2-D, gamma 0 and 1).
"""
from __future__ import annotations

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


def prop(kernel, key, en, ru, points, strategy, hint_en, hint_ru, **kw) -> Property:
    """A property whose case is a :class:`Call` (or a tuple of calls for relations)."""
    calls = kw.pop("calls", lambda case: [case])
    return Property(kernel=kernel, key=key, title={"en": en, "ru": ru}, points=points, strategy=strategy,
                    calls=calls, hint={"en": hint_en, "ru": hint_ru}, **kw)


def no_mutation(kernel, strategy) -> Property:
    return prop(kernel, "no_mutation", "does not modify its inputs", "не изменяет входные массивы", 1, strategy,
                "Work on copies (np.asarray(x, dtype=float) then new arrays); never write into the arguments.",
                "Работайте с копиями (np.asarray(x, dtype=float) и новые массивы); не записывайте в аргументы.",
                check_mutation=True, examples=60, needs_correct_values=True)


def rejects(kernel, bad_calls: list[Call], hint_en, hint_ru) -> Property:
    return prop(kernel, "bad_input", "rejects invalid input with ValueError",
                "отвергает некорректный вход через ValueError", 1, st.sampled_from(bad_calls), hint_en, hint_ru,
                examples=len(bad_calls) * 3, needs_correct_values=True)


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
def dqn_calls(draw, terminal=None, double=False, ties=False, flag_kind=None):
    b, a = draw(batch_dims())
    r = draw(rewards(b))
    if terminal is None:
        done = draw(flags(b))
    else:
        done = np.full(b, terminal)
    if flag_kind is not None:
        done = np.asarray(done).astype(flag_kind)
    target = draw(arrays((b, a)))
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
    prop("dqn_targets", "reference", "matches the reference on random batches",
         "совпадает с эталоном на случайных пакетах", 4, dqn_calls(),
         "y = r + gamma * (1 - terminated) * max_a Q_target(s', a): the max is over the action axis (axis=1).",
         "y = r + gamma * (1 - terminated) * max_a Q_target(s', a): максимум берётся по оси действий (axis=1)."),
    prop("dqn_targets", "terminal_rows", "terminal rows do not bootstrap",
         "терминальные переходы не бутстрэппятся", 2, dqn_calls(terminal=True),
         "When terminated = 1 the episode really ended: the target is the reward alone.",
         "Если terminated = 1, эпизод действительно закончился: цель равна одной награде."),
    prop("dqn_targets", "truncation_bootstraps", "non-terminal (e.g. truncated) rows bootstrap with the max",
         "нетерминальные (например, усечённые) переходы бутстрэппятся максимумом", 1, dqn_calls(terminal=False),
         "A transition cut by the time limit arrives with terminated = 0 and must keep gamma * max Q.",
         "Переход, обрезанный лимитом времени, приходит с terminated = 0 и сохраняет gamma * max Q."),
    prop("dqn_targets", "float_flags", "accepts terminated as 0/1 floats",
         "принимает terminated как числа 0/1", 1, dqn_calls(flag_kind=np.float64),
         "Do not use ~terminated on floats; convert with np.asarray(terminated, dtype=bool) or use 1 - terminated.",
         "Не применяйте ~ к числам; приведите флаги через np.asarray(terminated, dtype=bool) или используйте 1 - terminated."),
    no_mutation("dqn_targets", dqn_calls()),
    rejects("dqn_targets", DQN_BAD,
            "Check shapes ((B,), (B,), (B, A)), gamma in [0, 1] and that flags are 0/1.",
            "Проверьте формы ((B,), (B,), (B, A)), gamma в [0, 1] и что флаги равны 0/1."),
]

DOUBLE = [
    prop("double_dqn_targets", "reference", "matches the reference on random batches",
         "совпадает с эталоном на случайных пакетах", 4, dqn_calls(double=True),
         "Select a* = argmax of the ONLINE row, then read the TARGET table at a*.",
         "Выберите a* = argmax по строке ОСНОВНОЙ сети, затем возьмите значение ЦЕЛЕВОЙ таблицы в a*."),
    prop("double_dqn_targets", "select_then_evaluate", "selects with the online table and evaluates with the target table",
         "выбирает действие по основной таблице, оценивает по целевой", 2, dqn_calls(double=True, terminal=False),
         "Using the online table for the value (or the target table for the choice) gives plain DQN or worse.",
         "Если значение берётся из основной таблицы (или выбор делается по целевой), получается обычный DQN или хуже."),
    prop("double_dqn_targets", "ties", "breaks ties in the argmax by the first index",
         "при равенстве выбирает первое действие", 1, dqn_calls(double=True, ties=True, terminal=False),
         "np.argmax returns the first maximal index; keep that convention.",
         "np.argmax возвращает первый максимальный индекс; сохраните это соглашение."),
    prop("double_dqn_targets", "terminal_rows", "terminal rows do not bootstrap",
         "терминальные переходы не бутстрэппятся", 1, dqn_calls(double=True, terminal=True),
         "When terminated = 1 the target is the reward alone.",
         "Если terminated = 1, цель равна одной награде."),
    no_mutation("double_dqn_targets", dqn_calls(double=True)),
    rejects("double_dqn_targets", [Call((c.args[0], c.args[1], c.args[2], c.args[2]), c.kwargs) for c in DQN_BAD]
            + [Call(([1.0, 2.0], [0, 1], QB, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]))],
            "Check shapes (both tables (B, A)), gamma in [0, 1] and 0/1 flags.",
            "Проверьте формы (обе таблицы (B, A)), gamma в [0, 1] и флаги 0/1."),
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
    prop("masked_token_nll", "reference", "matches the reference on random shapes and masks",
         "совпадает с эталоном на случайных формах и масках", 4, nll_calls(),
         "L = -sum(mask * logp) / sum(mask): one mean over all active tokens of the batch.",
         "L = -sum(mask * logp) / sum(mask): одно среднее по всем активным токенам пакета."),
    prop("masked_token_nll", "active_mean", "divides by the number of active tokens, not by all positions",
         "делит на число активных токенов, а не на все позиции", 2, nll_calls(padded_rows=True),
         "Dividing by mask.size (or by rows) makes the loss scale depend on padding.",
         "Деление на mask.size (или на число строк) делает масштаб потерь зависимым от паддинга."),
    prop("masked_token_nll", "ignores_padding", "ignores the values at masked-out positions",
         "не зависит от значений в замаскированных позициях", 1, nll_padding_pairs(),
         "Positions with mask 0 must not influence the loss at all.",
         "Позиции с маской 0 вообще не должны влиять на потери.",
         calls=lambda case: list(case),
         relation=same_outcome_relation("changing masked-out log-probs changed the loss",
                                        "изменение лог-вероятностей под маской изменило потери"),
         needs_correct_values=True),
    prop("masked_token_nll", "float_mask", "accepts a 0/1 float mask",
         "принимает маску из чисел 0/1", 1, nll_calls(flag_kind=np.float64),
         "A mask of 0.0/1.0 floats is valid; do not index with it directly, convert to bool.",
         "Маска из чисел 0.0/1.0 допустима; не индексируйте ею напрямую, приведите к bool."),
    no_mutation("masked_token_nll", nll_calls()),
    rejects("masked_token_nll", [
        Call(([-1.0, -2.0], [0, 0])), Call(([-1.0, -2.0], [1, 0, 1])), Call(([-1.0, -2.0], [2, 0])),
        Call(([[-1.0, -2.0]], [0, 0])),
    ], "Raise ValueError for shape mismatches, non-0/1 masks and masks with no active token.",
        "Выбрасывайте ValueError при несовпадении форм, маске не из 0/1 и маске без активных токенов."),
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
    prop("cql_discrete_penalty", "reference", "matches the reference on random (B, A) batches",
         "совпадает с эталоном на случайных пакетах (B, A)", 4, cql_calls(),
         "Per row: logsumexp_a Q(s, a) - Q(s, a_data); then the mean over the batch.",
         "По строке: logsumexp_a Q(s, a) - Q(s, a_data); затем среднее по пакету."),
    prop("cql_discrete_penalty", "single_state", "handles a single state (1-D Q, integer action)",
         "обрабатывает одно состояние (одномерный Q, целое действие)", 1, cql_calls(single=True),
         "A 1-D Q with an int action is one row: return that row's penalty.",
         "Одномерный Q с целым действием — одна строка: верните её штраф."),
    prop("cql_discrete_penalty", "stable", "stays exact for large |Q| (no overflow in exp)",
         "остаётся точным при больших |Q| (без переполнения exp)", 2, cql_calls(spread=1e3),
         "exp(1000) overflows: subtract the row maximum before exponentiating (stable logsumexp).",
         "exp(1000) переполняется: вычтите максимум строки перед экспонентой (устойчивый logsumexp)."),
    prop("cql_discrete_penalty", "shift_invariant", "is unchanged when a constant is added to every Q",
         "не меняется при добавлении константы ко всем Q", 1, cql_shift_pairs(),
         "Both terms move by the same constant; if yours does not cancel, a term is missing or unstable.",
         "Оба слагаемых сдвигаются на одну константу; если у вас не сокращается, слагаемое потеряно или неустойчиво.",
         calls=lambda case: list(case),
         relation=same_outcome_relation("adding a constant to Q changed the penalty",
                                        "добавление константы к Q изменило штраф"),
         needs_correct_values=True),
    no_mutation("cql_discrete_penalty", cql_calls()),
    rejects("cql_discrete_penalty", [
        Call(([1.0, 2.0], 2)), Call(([1.0, 2.0], -1)), Call(([1.0, 2.0], 0.5)), Call((QB, [0])),
        Call((QB, [0, 5])), Call(([[[1.0]]], [0])),
    ], "Check that actions are integers in [0, A) and that shapes match.",
        "Проверьте, что действия — целые числа из [0, A), а формы согласованы."),
]


# ---------------------------------------------------------------- expectile_loss
@st.composite
def expectile_calls(draw, tau=None, two_d=False):
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 6))) if two_d else draw(st.integers(1, 30))
    u = draw(arrays(shape))
    t = tau if tau is not None else draw(st.one_of(st.sampled_from([0.1, 0.7, 0.9]), st.floats(0.01, 0.99)))
    return Call((u, t))


EXPECTILE = [
    prop("expectile_loss", "reference", "matches the reference on random residuals",
         "совпадает с эталоном на случайных остатках", 4, expectile_calls(),
         "mean(|tau - 1[u < 0]| * u**2) with u = diff = Q - V.",
         "mean(|tau - 1[u < 0]| * u**2), где u = diff = Q - V."),
    prop("expectile_loss", "asymmetric", "weights positive residuals by tau and negative ones by 1 - tau",
         "взвешивает положительные остатки через tau, отрицательные через 1 - tau", 2,
         expectile_calls(tau=0.9),
         "With u = target - prediction, u > 0 gets weight tau. Swapping tau and 1 - tau flips the expectile.",
         "При u = цель - прогноз вес tau получают u > 0. Перестановка tau и 1 - tau переворачивает экспектиль."),
    prop("expectile_loss", "half_mse", "with tau = 0.5 equals half the mean squared error",
         "при tau = 0.5 равна половине среднеквадратичной ошибки", 1, expectile_calls(tau=0.5),
         "At tau = 0.5 both weights are 0.5: the loss is 0.5 * mean(u**2).",
         "При tau = 0.5 оба веса равны 0.5: потери равны 0.5 * mean(u**2)."),
    prop("expectile_loss", "two_d", "works for 2-D residual arrays (mean over all entries)",
         "работает с двумерными остатками (среднее по всем элементам)", 1, expectile_calls(two_d=True),
         "Average over every entry, not per row.",
         "Усредняйте по всем элементам, а не по строкам."),
    no_mutation("expectile_loss", expectile_calls()),
    rejects("expectile_loss", [Call(([1.0], 0.0)), Call(([1.0], 1.0)), Call(([1.0], -0.2)), Call(([], 0.5))],
            "tau must lie strictly between 0 and 1, and diff must not be empty.",
            "tau должно лежать строго между 0 и 1, а diff не может быть пустым."),
]


# ---------------------------------------------------------------- return_to_go
@st.composite
def rtg_calls(draw, gamma=None, ints=False, length=None):
    n = length if length is not None else draw(st.integers(1, 40))
    r = draw(arrays(n, st.integers(-5, 5), np.int64)) if ints else draw(arrays(n, st.floats(-10, 10)))
    g = draw(GAMMAS) if gamma is None else gamma
    return Call((r,), {"gamma": g})


RTG = [
    prop("return_to_go", "reference", "matches the reference on random episodes and gammas",
         "совпадает с эталоном на случайных эпизодах и gamma", 4, rtg_calls(),
         "G_t = r_t + gamma * G_{t+1}, accumulated from the end of the episode backwards.",
         "G_t = r_t + gamma * G_{t+1}, накапливается с конца эпизода к началу."),
    prop("return_to_go", "undiscounted", "with gamma = 1 sums the rewards from t to the end",
         "при gamma = 1 суммирует награды от t до конца", 1, rtg_calls(gamma=1.0),
         "A forward cumsum gives sums from the start; return-to-go needs sums to the end.",
         "Прямой cumsum даёт суммы от начала; return-to-go — это суммы до конца."),
    prop("return_to_go", "gamma_zero", "with gamma = 0 returns the rewards",
         "при gamma = 0 возвращает сами награды", 1, rtg_calls(gamma=0.0),
         "With gamma = 0 nothing of the future counts.",
         "При gamma = 0 будущее не учитывается."),
    prop("return_to_go", "int_rewards", "turns integer rewards into float returns",
         "даёт вещественные результаты для целых наград", 1, rtg_calls(ints=True, gamma=0.5),
         "np.empty_like(int_array) is an int array: discounted sums get truncated. Use float64.",
         "np.empty_like(int_array) — целочисленный массив: дисконтированные суммы обрежутся. Используйте float64."),
    prop("return_to_go", "long", "stays accurate on long episodes (1000 steps)",
         "остаётся точным на длинных эпизодах (1000 шагов)", 1, rtg_calls(length=1000),
         "Accumulate backwards; powers like gamma**(-t) overflow or lose precision.",
         "Накапливайте с конца; степени вида gamma**(-t) переполняются или теряют точность.", examples=20),
    no_mutation("return_to_go", rtg_calls()),
    rejects("return_to_go", [Call(([[1.0, 2.0]],)), Call(([1.0],), {"gamma": 2.0}), Call(([1.0],), {"gamma": -1.0})],
            "rewards must be 1-D and gamma in [0, 1].",
            "rewards должны быть одномерными, а gamma — из [0, 1]."),
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
    prop("pessimistic_values", "reference", "matches the reference on random means and counts",
         "совпадает с эталоном на случайных средних и счётчиках", 4, pessimistic_calls(),
         "mean - radius_scale / sqrt(n) where n > 0, -inf where n = 0.",
         "mean - radius_scale / sqrt(n) при n > 0, -inf при n = 0."),
    prop("pessimistic_values", "unseen", "gives -inf for unseen entries (n = 0), whatever the mean",
         "даёт -inf для ненаблюдавшихся элементов (n = 0) при любом среднем", 2, pessimistic_calls(unseen=True),
         "An action never observed has no evidence at all: its value is -inf, not mean - something.",
         "У ни разу не наблюдавшегося действия нет данных: его значение -inf, а не mean - что-то.",
         relation=unseen_are_neg_inf, needs_correct_values=True),
    prop("pessimistic_values", "sqrt_radius", "shrinks the radius as 1/sqrt(n)",
         "уменьшает радиус как 1/sqrt(n)", 1, pessimistic_calls(big_counts=True),
         "The radius is radius_scale / sqrt(n), not radius_scale / n.",
         "Радиус равен radius_scale / sqrt(n), а не radius_scale / n."),
    prop("pessimistic_values", "radius_scale", "scales the radius by the keyword radius_scale",
         "масштабирует радиус ключевым аргументом radius_scale", 1, pessimistic_calls(scale=2.5),
         "radius_scale multiplies 1/sqrt(n).", "radius_scale умножает 1/sqrt(n)."),
    no_mutation("pessimistic_values", pessimistic_calls()),
    rejects("pessimistic_values", [
        Call(([1.0, 2.0], [1.0])), Call(([1.0], [-1.0])), Call(([1.0], [1.0]), {"radius_scale": -1.0}),
        Call(([1.0], [1.0]), {"radius_scale": float("inf")}),
    ], "Raise ValueError on shape mismatch, negative counts, or a negative / non-finite radius_scale.",
        "Выбрасывайте ValueError при несовпадении форм, отрицательных счётчиках или отрицательном / бесконечном radius_scale."),
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
    prop("behavior_support_mask", "reference", "matches the reference on random (B, A) tables",
         "совпадает с эталоном на случайных таблицах (B, A)", 4, support_calls(),
         "eligible = p >= threshold_ratio * max p, the max taken along the last axis (per row).",
         "eligible = p >= threshold_ratio * max p, максимум по последней оси (по строке)."),
    prop("behavior_support_mask", "one_d", "handles a single distribution (1-D)",
         "обрабатывает одно распределение (одномерный вход)", 1, support_calls(one_d=True),
         "For 1-D input compare with the maximum of the whole vector.",
         "Для одномерного входа сравнивайте с максимумом всего вектора."),
    prop("behavior_support_mask", "relative", "uses a threshold relative to the most likely action",
         "использует порог относительно самого вероятного действия", 2, support_calls(relative=True, ratio=0.35),
         "p >= 0.35 is an absolute threshold; the contract is p >= 0.35 * max p.",
         "p >= 0.35 — абсолютный порог; по контракту нужно p >= 0.35 * max p."),
    prop("behavior_support_mask", "argmax_eligible", "always keeps the most likely action (ratio = 1)",
         "всегда оставляет самое вероятное действие (ratio = 1)", 1, support_calls(ratio=1.0),
         "Use >=, not >: the action at the maximum must stay eligible.",
         "Используйте >=, а не >: действие с максимальной вероятностью должно оставаться допустимым."),
    no_mutation("behavior_support_mask", support_calls()),
    rejects("behavior_support_mask", [
        Call(([0.5, -0.1],)), Call(([0.0, 0.0],)), Call(([0.5, 0.5],), {"threshold_ratio": 1.5}),
        Call(([0.5, 0.5],), {"threshold_ratio": -0.1}), Call((np.ones((2, 2, 2)),)),
    ], "Reject negative probabilities, all-zero rows, ratios outside [0, 1] and other ranks.",
        "Отвергайте отрицательные вероятности, нулевые строки, ratio вне [0, 1] и другие размерности."),
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
    prop("fqe_targets", "reference", "matches the reference on random batches",
         "совпадает с эталоном на случайных пакетах", 4, fqe_calls(),
         "y = r + gamma * (1 - terminated) * sum_a pi(a|s') Q(s', a).",
         "y = r + gamma * (1 - terminated) * sum_a pi(a|s') Q(s', a)."),
    prop("fqe_targets", "expectation", "averages next values under the policy (does not maximise)",
         "усредняет значения по политике (не берёт максимум)", 2, fqe_calls(terminal=False),
         "FQE evaluates a fixed policy: an expectation over pi, not a max over actions.",
         "FQE оценивает фиксированную политику: матожидание по pi, а не максимум по действиям."),
    prop("fqe_targets", "terminal_rows", "terminal rows do not bootstrap",
         "терминальные переходы не бутстрэппятся", 1, fqe_calls(terminal=True),
         "When terminated = 1 the target is the reward alone.", "Если terminated = 1, цель равна одной награде."),
    prop("fqe_targets", "sarsa", "with a one-hot policy gives the SARSA target",
         "с детерминированной политикой даёт цель SARSA", 1, fqe_calls(one_hot=True),
         "A one-hot pi picks exactly one Q(s', a').", "Детерминированная pi выбирает ровно одно Q(s', a')."),
    no_mutation("fqe_targets", fqe_calls()),
    rejects("fqe_targets", [
        Call(([0.0], [0], [[1.0, 2.0]], [[0.5, 0.6]])), Call(([0.0], [0], [[1.0, 2.0]], [[0.0, 0.0]])),
        Call(([0.0], [0], [[1.0, 2.0]], [[1.5, -0.5]])), Call(([0.0], [0], [[1.0, 2.0]], [[1.0]])),
        Call(([0.0], [0], [[1.0, 2.0]], [[0.5, 0.5]]), {"gamma": 1.5}),
    ], "Policy rows must be non-negative, sum to 1 and match next_q's shape; gamma in [0, 1].",
        "Строки политики неотрицательны, суммируются в 1 и совпадают по форме с next_q; gamma в [0, 1]."),
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
    prop("iql_advantage_weights", "reference", "matches the reference on random advantages",
         "совпадает с эталоном на случайных преимуществах", 4, iql_calls(),
         "w = min(exp(beta * A), max_weight), elementwise.", "w = min(exp(beta * A), max_weight) поэлементно."),
    prop("iql_advantage_weights", "capped", "caps the weights at max_weight",
         "ограничивает веса сверху значением max_weight", 2, iql_calls(beta=5.0),
         "Clip the weight (after exp), not the advantage before it.",
         "Ограничивайте вес (после exp), а не преимущество до него."),
    prop("iql_advantage_weights", "no_overflow", "does not overflow for beta * A up to 1e6",
         "не переполняется при beta * A до 1e6", 1, iql_calls(huge=True, beta=1.0),
         "exp(1e6) is inf: take exp(min(beta * A, log(max_weight))) instead.",
         "exp(1e6) = inf: вычисляйте exp(min(beta * A, log(max_weight)))."),
    prop("iql_advantage_weights", "beta_zero", "with beta = 0 gives weight min(1, max_weight)",
         "при beta = 0 даёт вес min(1, max_weight)", 1, iql_calls(beta=0.0),
         "beta = 0 ignores advantages: plain behavior cloning.", "beta = 0 игнорирует преимущества: это обычный BC."),
    no_mutation("iql_advantage_weights", iql_calls()),
    rejects("iql_advantage_weights", [
        Call(([1.0], -0.5)), Call(([1.0], 1.0), {"max_weight": 0.0}), Call(([1.0], 1.0), {"max_weight": -3.0}),
        Call(([1.0], float("inf"))),
    ], "beta must be >= 0 and finite; max_weight must be > 0.", "beta должно быть >= 0 и конечным; max_weight > 0."),
]

PROPERTIES: list[Property] = [*DQN, *DOUBLE, *NLL, *CQL, *EXPECTILE, *RTG, *PESSIMISTIC, *SUPPORT, *FQE, *IQL]
