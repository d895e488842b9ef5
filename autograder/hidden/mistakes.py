"""The catalog of known mistakes: named misconceptions per kernel (never released).

Each :class:`Mistake` is a wrong kernel written on the grader's side: trusted numpy
code that embodies one misconception, with an explanation in English and Russian.
It runs only on the corpus inputs, never on anything a student wrote. When one
mistake reproduces a student's outcomes on every value-checking call of a kernel
(the failing calls and the passing ones), the feedback names it first
(:func:`likely_mistake`); otherwise the fixed per-property hints are shown.

A mistake first runs the reference kernel on the same arguments, so it rejects
invalid input exactly as the contract says; then it computes its wrong formula on
the validated arrays (:class:`Inputs`). The entries started from the mutants in
``tests/autograder/mutants`` (each mutant names its misconception); the held-out set
in ``tests/autograder/heldout`` measures how well they generalise.
"""
from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import reference_impl
from autograder.grade.properties import Call, same_outcome

LEAD = {"en": "Likely mistake", "ru": "Вероятная ошибка"}


@dataclass(frozen=True)
class Mistake:
    kernel: str
    key: str                            # e.g. "bootstraps_terminal"; named as f"{kernel}.{key}"
    explanation: dict[str, str]         # {"en": ..., "ru": ...}
    formula: Callable[[types.SimpleNamespace], object]

    @property
    def name(self) -> str:
        return f"{self.kernel}.{self.key}"

    def outcome(self, call: Call) -> dict:
        """What this wrong kernel gives on one call, as the worker would report it."""
        try:
            inputs = prepare(self.kernel, call)
            with np.errstate(all="ignore"):
                value = self.formula(inputs)
        except Exception as exc:  # the reference's ValueError, or the mistake's own error
            return {"s": "raised", "exc": [c.__name__ for c in type(exc).__mro__]}
        return {"s": "ok", "v": np.asarray(value)}


CATALOG: dict[str, list[Mistake]] = {name: [] for name in reference_impl.KERNEL_NAMES}


def _mistake(kernel: str, key: str, en: str, ru: str):
    def register(formula):
        CATALOG[kernel].append(Mistake(kernel, key, {"en": en, "ru": ru}, formula))
        return formula
    return register


# ---------------------------------------------------------------- validated inputs
def _bound(kernel: str, call: Call) -> dict:
    """The call's arguments by parameter name, defaults filled in, and the names given."""
    bound = inspect.signature(getattr(reference_impl, kernel)).bind(*call.args, **call.kwargs)
    given = set(bound.arguments)
    bound.apply_defaults()
    return bound.arguments, given


def _floats(x):
    return np.asarray(x, dtype=np.float64)


def prepare(kernel: str, call: Call) -> types.SimpleNamespace:
    """Run the reference (it raises ValueError on invalid input), then name the arrays."""
    getattr(reference_impl, kernel)(*call.args, **call.kwargs)
    a, given = _bound(kernel, call)
    x = types.SimpleNamespace(args=a, explicit=given)
    if "rewards" in a:
        x.raw_r = np.asarray(a["rewards"])
        x.r = _floats(a["rewards"])
    if "terminated" in a:
        x.raw_d = np.asarray(a["terminated"])
        x.d = x.raw_d.astype(bool)
        x.live = ~x.d
    if "gamma" in a:
        x.g = float(a["gamma"])
    for name in ("next_q_target", "next_q_online", "next_q", "next_policy_probs", "token_logprobs", "diff",
                 "empirical_means", "counts", "probabilities", "advantages"):
        if name in a:
            setattr(x, name, _floats(a[name]))
    if kernel == "masked_token_nll":
        x.raw_mask = np.asarray(a["mask"])
        x.m = x.raw_mask.astype(bool)
    if kernel == "cql_discrete_penalty":
        x.q = np.atleast_2d(_floats(a["q_values"]))
        x.act = np.reshape(np.asarray(a["actions"]).astype(np.intp), -1)
        x.taken = x.q[np.arange(len(x.act)), x.act]
    return x


def _masked(x, values):
    """Bootstrap only the live rows; terminal rows give 0 whatever ``values`` holds there."""
    return np.where(x.d, 0.0, values)


def _lse(q, axis=1):
    top = q.max(axis=axis, keepdims=True)
    return np.squeeze(top, axis) + np.log(np.exp(q - top).sum(axis=axis))


# ---------------------------------------------------------------- dqn_targets
K = "dqn_targets"
_mistake(K, "bootstraps_terminal", "terminal rows still bootstrap: when terminated = 1 the target is the reward alone",
         "терминальные переходы всё равно бутстрэппятся: при terminated = 1 цель равна одной награде")(
    lambda x: x.r + x.g * x.next_q_target.max(axis=1))
_mistake(K, "mask_inverted", "multiplies by terminated instead of 1 - terminated: live rows lose the bootstrap",
         "умножение на terminated вместо 1 - terminated: нетерминальные переходы теряют бутстрэп")(
    lambda x: x.r + x.g * np.where(x.d, x.next_q_target.max(axis=1), 0.0))
_mistake(K, "mean_over_actions", "averages the next-state values; DQN takes the max over actions",
         "усредняет значения следующего состояния; DQN берёт максимум по действиям")(
    lambda x: x.r + x.g * _masked(x, x.next_q_target.mean(axis=1)))
_mistake(K, "min_over_actions", "takes the minimum over actions; DQN takes the maximum",
         "берёт минимум по действиям; DQN берёт максимум")(
    lambda x: x.r + x.g * _masked(x, x.next_q_target.min(axis=1)))
_mistake(K, "max_of_whole_table", "takes one max over the whole table; the max is per row (axis=1)",
         "берёт один максимум по всей таблице; максимум нужен по строке (axis=1)")(
    lambda x: x.r + x.g * _masked(x, x.next_q_target.max()))
_mistake(K, "discounts_reward", "discounts the reward too: gamma multiplies only the bootstrap term",
         "дисконтирует и награду: gamma умножает только слагаемое бутстрэпа")(
    lambda x: x.g * (x.r + _masked(x, x.next_q_target.max(axis=1))))
_mistake(K, "terminal_drops_reward", "terminal rows lose their reward: the target there is r, not 0",
         "терминальные переходы теряют награду: цель там равна r, а не 0")(
    lambda x: np.where(x.d, 0.0, x.r + x.g * x.next_q_target.max(axis=1)))
_mistake(K, "bitwise_not_on_flags", "~terminated on 0/1 numbers gives -1/-2 (and fails on floats): convert to bool first",
         "~terminated над числами 0/1 даёт -1/-2 (а на вещественных падает): сначала приведите к bool")(
    lambda x: x.r + x.g * ~x.raw_d * x.next_q_target.max(axis=1))
_mistake(K, "live_rows_lose_reward", "live rows get gamma * max Q but lose their reward",
         "нетерминальные переходы получают gamma * max Q, но теряют награду")(
    lambda x: np.where(x.d, x.r, x.g * x.next_q_target.max(axis=1)))
_mistake(K, "last_row_ends_episode", "treats the last row of the batch as an episode end; only terminated ends one",
         "считает последнюю строку пакета концом эпизода; эпизод заканчивает только terminated")(
    lambda x: x.r + x.g * np.where(np.r_[x.d[:-1], True], 0.0, x.next_q_target.max(axis=1)))
_mistake(K, "multiplies_by_not_done", "r + gamma * (1 - terminated) * max Q reads terminal rows: 0 * NaN is NaN;"
         " select with np.where instead", "r + gamma * (1 - terminated) * max Q читает терминальные строки: 0 * NaN = NaN;"
         " выбирайте через np.where")(
    lambda x: x.r + x.g * x.live * x.next_q_target.max(axis=1))

# ---------------------------------------------------------------- double_dqn_targets
K = "double_dqn_targets"


def _at(table, index):
    return table[np.arange(len(index)), index]


def _double(x, value):
    return x.r + x.g * _masked(x, value)


_mistake(K, "online_evaluates", "evaluates a* with the online table; the target table gives the value",
         "оценивает a* по основной таблице; значение даёт целевая таблица")(
    lambda x: _double(x, _at(x.next_q_online, x.next_q_online.argmax(axis=1))))
_mistake(K, "target_selects", "selects with the target table: that is plain DQN; the online table selects",
         "выбирает по целевой таблице: это обычный DQN; выбирает основная таблица")(
    lambda x: _double(x, x.next_q_target.max(axis=1)))
_mistake(K, "last_index_ties", "breaks argmax ties by the last index; np.argmax keeps the first",
         "при равенстве выбирает последний индекс; np.argmax берёт первый")(
    lambda x: _double(x, _at(x.next_q_target, x.next_q_online.shape[1] - 1 - x.next_q_online[:, ::-1].argmax(axis=1))))
_mistake(K, "bootstraps_terminal", "terminal rows still bootstrap: when terminated = 1 the target is the reward alone",
         "терминальные переходы всё равно бутстрэппятся: при terminated = 1 цель равна одной награде")(
    lambda x: x.r + x.g * _at(x.next_q_target, x.next_q_online.argmax(axis=1)))
_mistake(K, "min_of_tables", "takes the minimum of both tables at a* (clipped double Q); Double DQN reads the target table",
         "берёт минимум двух таблиц в a* (clipped double Q); Double DQN читает целевую таблицу")(
    lambda x: _double(x, np.minimum(_at(x.next_q_online, x.next_q_online.argmax(axis=1)),
                                    _at(x.next_q_target, x.next_q_online.argmax(axis=1)))))
_mistake(K, "average_of_tables", "averages the two tables at a*; Double DQN reads the target table",
         "усредняет две таблицы в a*; Double DQN читает целевую таблицу")(
    lambda x: _double(x, 0.5 * (_at(x.next_q_online, x.next_q_online.argmax(axis=1))
                                + _at(x.next_q_target, x.next_q_online.argmax(axis=1)))))
_mistake(K, "roles_swapped", "selects with the target table and evaluates with the online one: the roles are swapped",
         "выбирает по целевой таблице и оценивает по основной: роли перепутаны")(
    lambda x: _double(x, _at(x.next_q_online, x.next_q_target.argmax(axis=1))))

# ---------------------------------------------------------------- masked_token_nll
K = "masked_token_nll"


def _active_sum(x):
    return np.where(x.m, x.token_logprobs, 0.0).sum()


def _per_row(x):
    logp = x.token_logprobs.reshape(-1, x.token_logprobs.shape[-1]) if x.token_logprobs.ndim > 1 else x.token_logprobs[None]
    mask = x.m.reshape(logp.shape)
    return float(np.mean([-row[keep].mean() for row, keep in zip(logp, mask) if keep.any()]))


_mistake(K, "divides_by_all_positions", "divides by every position, padding included; divide by the active tokens",
         "делит на все позиции вместе с дополнением (padding); делите на число активных токенов")(
    lambda x: -_active_sum(x) / x.m.size)
_mistake(K, "mean_per_row", "averages per row, then over rows; the contract is one mean over all active tokens",
         "усредняет по строкам, затем по строкам ещё раз; по контракту — одно среднее по всем активным токенам")(
    _per_row)
_mistake(K, "divides_by_rows", "divides the masked sum by the number of rows; divide by the active tokens",
         "делит сумму под маской на число строк; делите на число активных токенов")(
    lambda x: -_active_sum(x) / (x.m.shape[0] if x.m.ndim > 1 else 1))
_mistake(K, "missing_minus", "returns the mean log-likelihood: the loss is its negative",
         "возвращает среднюю лог-правдоподобность: потери — это она со знаком минус")(
    lambda x: _active_sum(x) / x.m.sum())
_mistake(K, "mask_not_applied", "sums every log-prob, padding included; only active tokens count",
         "суммирует все лог-вероятности вместе с дополнением (padding); учитываются только активные токены")(
    lambda x: -x.token_logprobs.sum() / x.m.sum())
_mistake(K, "sum_not_mean", "returns the total NLL; divide by the number of active tokens",
         "возвращает сумму NLL; разделите на число активных токенов")(
    lambda x: -_active_sum(x))
_mistake(K, "multiplies_by_mask", "sum(mask * logp) reads the padding: 0 * -inf is NaN; select the active entries",
         "sum(mask * logp) читает дополнение (padding): 0 * -inf = NaN; выбирайте активные элементы")(
    lambda x: -(x.m * x.token_logprobs).sum() / x.m.sum())
_mistake(K, "indexes_with_raw_mask", "indexes with the mask as given: a 0/1 float or int mask must become bool first",
         "индексирует маской как есть: маску из чисел 0/1 сначала приведите к bool")(
    lambda x: -x.token_logprobs[x.raw_mask].sum() / x.m.sum())

# ---------------------------------------------------------------- cql_discrete_penalty
K = "cql_discrete_penalty"
_mistake(K, "unstable_logsumexp", "log(sum(exp(Q))) overflows for large Q: subtract the row max first and add it back",
         "log(sum(exp(Q))) переполняется при больших Q: вычтите максимум строки и прибавьте его обратно")(
    lambda x: np.mean(np.log(np.exp(x.q).sum(axis=1)) - x.taken))
_mistake(K, "sum_over_batch", "sums the penalty over the batch; the contract is the batch mean",
         "суммирует штраф по пакету; по контракту нужно среднее по пакету")(
    lambda x: np.sum(_lse(x.q) - x.taken))
_mistake(K, "hard_max", "uses max_b Q; the penalty needs the soft maximum logsumexp_b Q",
         "использует max_b Q; штрафу нужен мягкий максимум logsumexp_b Q")(
    lambda x: np.mean(x.q.max(axis=1) - x.taken))
_mistake(K, "adds_data_value", "adds Q(s, a_data); the penalty subtracts it",
         "прибавляет Q(s, a_data); штраф его вычитает")(
    lambda x: np.mean(_lse(x.q) + x.taken))
_mistake(K, "log_mean_exp", "takes the log of the mean of exp; logsumexp sums (the difference is log A)",
         "берёт логарифм среднего exp; logsumexp суммирует (разница — log A)")(
    lambda x: np.mean(_lse(x.q) - np.log(x.q.shape[1]) - x.taken))
_mistake(K, "max_not_added_back", "subtracts the row max inside exp but never adds it back",
         "вычитает максимум строки внутри exp, но не прибавляет его обратно")(
    lambda x: np.mean(_lse(x.q) - x.q.max(axis=1) - x.taken))
_mistake(K, "batch_max_shift", "stabilises with the batch-wide max: rows far below it underflow; use each row's max",
         "стабилизирует максимумом всего пакета: строки далеко ниже него обнуляются; берите максимум строки")(
    lambda x: np.mean(x.q.max() + np.log(np.exp(x.q - x.q.max()).sum(axis=1)) - x.taken))
_mistake(K, "logsumexp_over_batch", "takes the logsumexp over the batch axis; it runs over actions (axis=1)",
         "берёт logsumexp по оси пакета; он берётся по действиям (axis=1)")(
    lambda x: np.mean(_lse(x.q, axis=0)) - np.mean(x.taken))

# ---------------------------------------------------------------- expectile_loss
K = "expectile_loss"


def _weight(x, tau):
    return np.abs(tau - (x.diff < 0))


_mistake(K, "sides_swapped", "weights u > 0 by 1 - tau and u < 0 by tau: with u = target - prediction, u > 0 gets tau",
         "даёт u > 0 вес 1 - tau, а u < 0 вес tau: при u = цель - прогноз вес tau получает u > 0")(
    lambda x: np.mean(_weight(x, 1 - x.args["tau"]) * x.diff**2))
_mistake(K, "symmetric_weight", "gives every residual the weight tau: the weight depends on the sign of u",
         "даёт всем остаткам вес tau: вес зависит от знака u")(
    lambda x: np.mean(x.args["tau"] * x.diff**2))
_mistake(K, "sum_not_mean", "sums over the entries; the loss is their mean",
         "суммирует по элементам; потери — их среднее")(
    lambda x: np.sum(_weight(x, x.args["tau"]) * x.diff**2))
_mistake(K, "quantile_loss", "uses |u| (the quantile / pinball loss); the expectile loss squares u",
         "использует |u| (квантильная потеря); в экспектильной потере u возводится в квадрат")(
    lambda x: np.mean(_weight(x, x.args["tau"]) * np.abs(x.diff)))
_mistake(K, "weight_without_abs", "weight tau - 1[u < 0] without the absolute value: negative residuals get a negative weight",
         "вес tau - 1[u < 0] без модуля: отрицательные остатки получают отрицательный вес")(
    lambda x: np.mean((x.args["tau"] - (x.diff < 0)) * x.diff**2))
_mistake(K, "mean_over_first_axis", "np.mean(axis=0) leaves an array for 2-D residuals: average over every entry",
         "np.mean(axis=0) оставляет массив для двумерных остатков: усредняйте по всем элементам")(
    lambda x: np.mean(_weight(x, x.args["tau"]) * x.diff**2, axis=0))

# ---------------------------------------------------------------- return_to_go
K = "return_to_go"


def _scan(values, g):
    """G_t = values_t + g * G_{t+1}, float64."""
    out, running = np.empty(len(values)), 0.0
    for t in range(len(values) - 1, -1, -1):
        running = values[t] + g * running
        out[t] = running
    return out


_mistake(K, "accumulates_forward", "accumulates from the start of the episode; the return-to-go runs from the end",
         "накапливает с начала эпизода; оставшаяся отдача (return-to-go) считается с конца")(
    lambda x: _scan(x.r[::-1], x.g)[::-1])
_mistake(K, "excludes_current_reward", "G_t leaves out r_t: it starts at the current reward",
         "G_t не включает r_t: сумма начинается с текущей награды")(
    lambda x: np.r_[_scan(x.r, x.g)[1:], 0.0])
_mistake(K, "discounts_current_reward", "discounts the current reward too: G_t = r_t + gamma * G_{t+1}",
         "дисконтирует и текущую награду: G_t = r_t + gamma * G_{t+1}")(
    lambda x: x.g * _scan(x.r, x.g))
_mistake(K, "integer_output", "an output array made like the integer rewards truncates the returns: use float64",
         "массив результата, созданный по образцу целых наград, обрезает отдачу: используйте float64")(
    lambda x: _scan(x.r, x.g).astype(x.raw_r.dtype) if x.raw_r.dtype.kind in "iub" else _scan(x.r, x.g))
_mistake(K, "negative_powers", "gamma**(-t) overflows or loses precision on long episodes: accumulate backwards",
         "gamma**(-t) переполняется или теряет точность на длинных эпизодах: накапливайте с конца")(
    lambda x: np.cumsum((x.g ** np.arange(len(x.r)) * x.r)[::-1])[::-1] * x.g ** (-np.arange(len(x.r), dtype=float)))
_mistake(K, "result_not_reversed", "accumulates the reversed rewards but never reverses the result back",
         "накапливает перевёрнутые награды, но не переворачивает результат обратно")(
    lambda x: _scan(x.r, x.g)[::-1])
_mistake(K, "default_gamma_099", "the default gamma is 1.0 (the contract's signature), not 0.99",
         "значение gamma по умолчанию — 1.0 (сигнатура контракта), а не 0.99")(
    lambda x: _scan(x.r, x.g if "gamma" in x.explicit else 0.99))

# ---------------------------------------------------------------- pessimistic_values
K = "pessimistic_values"


def _lower(x, radius, unseen=-np.inf, seen=None):
    seen = x.counts > 0 if seen is None else seen
    return np.where(seen, x.empirical_means - radius, unseen)


_mistake(K, "radius_over_n", "uses radius_scale / n; the radius shrinks as radius_scale / sqrt(n)",
         "использует radius_scale / n; радиус убывает как radius_scale / sqrt(n)")(
    lambda x: _lower(x, x.args["radius_scale"] / x.counts))
_mistake(K, "unseen_get_zero", "gives 0 to unseen entries: with no data (n = 0) the value is -inf",
         "даёт 0 ненаблюдавшимся элементам: без данных (n = 0) значение равно -inf")(
    lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts), unseen=0.0))
_mistake(K, "relies_on_division_by_zero", "relies on c / sqrt(0) = inf: with radius_scale = 0 that is NaN; set n = 0 to -inf",
         "полагается на c / sqrt(0) = inf: при radius_scale = 0 это NaN; задайте -inf при n = 0 явно")(
    lambda x: x.empirical_means - x.args["radius_scale"] / np.sqrt(x.counts))
_mistake(K, "adds_radius", "adds the radius (an optimistic upper bound); a pessimistic value subtracts it",
         "прибавляет радиус (оптимистичная верхняя граница); пессимистичное значение его вычитает")(
    lambda x: _lower(x, -x.args["radius_scale"] / np.sqrt(x.counts)))
_mistake(K, "radius_scale_ignored", "ignores radius_scale: the radius is radius_scale / sqrt(n)",
         "игнорирует radius_scale: радиус равен radius_scale / sqrt(n)")(
    lambda x: _lower(x, 1.0 / np.sqrt(x.counts)))
_mistake(K, "unseen_get_nan", "marks unseen entries with NaN; the contract says -inf",
         "помечает ненаблюдавшиеся элементы как NaN; по контракту нужно -inf")(
    lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts), unseen=np.nan))
_mistake(K, "fractional_counts_unseen", "treats counts below 1 as unseen: only n = 0 is unseen (counts may be fractional)",
         "считает счётчики меньше 1 ненаблюдавшимися: таковы только n = 0 (счётчики бывают дробными)")(
    lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts), seen=x.counts >= 1))
_mistake(K, "sqrt_of_ratio", "uses sqrt(radius_scale / n); the radius is radius_scale / sqrt(n)",
         "использует sqrt(radius_scale / n); радиус равен radius_scale / sqrt(n)")(
    lambda x: _lower(x, np.sqrt(x.args["radius_scale"] / x.counts)))

# ---------------------------------------------------------------- behavior_support_mask
K = "behavior_support_mask"


def _ratio(x):
    return x.args["threshold_ratio"]


_mistake(K, "absolute_threshold", "compares p with the ratio itself; the threshold is ratio * max p (relative)",
         "сравнивает p с самим ratio; порог равен ratio * max p (относительный)")(
    lambda x: x.probabilities >= _ratio(x))
_mistake(K, "strict_inequality", "uses >: at ratio = 1 the most likely action drops out; use >=",
         "использует >: при ratio = 1 самое вероятное действие выпадает; используйте >=")(
    lambda x: x.probabilities > _ratio(x) * x.probabilities.max(axis=-1, keepdims=True))
_mistake(K, "table_max", "compares with the max of the whole table; each row has its own max",
         "сравнивает с максимумом всей таблицы; у каждой строки свой максимум")(
    lambda x: x.probabilities >= _ratio(x) * x.probabilities.max())
_mistake(K, "column_max", "takes the max along axis 0 (over states); it runs along the last axis (actions)",
         "берёт максимум по оси 0 (по состояниям); он берётся по последней оси (по действиям)")(
    lambda x: x.probabilities >= _ratio(x) * x.probabilities.max(axis=0, keepdims=x.probabilities.ndim > 1))
_mistake(K, "relative_to_sum", "scales by the row sum; the threshold is relative to the row max",
         "масштабирует суммой строки; порог считается от максимума строки")(
    lambda x: x.probabilities >= _ratio(x) * x.probabilities.sum(axis=-1, keepdims=True))
_mistake(K, "max_without_keepdims", "row maxima without keepdims broadcast along the wrong axis",
         "максимумы строк без keepdims транслируются не по той оси")(
    lambda x: x.probabilities >= _ratio(x) * x.probabilities.max(axis=-1))
_mistake(K, "ratio_ignored", "always uses 0.35: threshold_ratio sets the threshold",
         "всегда использует 0.35: порог задаёт threshold_ratio")(
    lambda x: x.probabilities >= 0.35 * x.probabilities.max(axis=-1, keepdims=True))

# ---------------------------------------------------------------- fqe_targets
K = "fqe_targets"


def _expected_next(x):
    return np.einsum("ba,ba->b", x.next_policy_probs, np.where(x.d[:, None], 0.0, x.next_q))


_mistake(K, "max_not_expectation", "maximizes over actions like DQN; FQE takes the expectation under the policy",
         "берёт максимум по действиям, как DQN; FQE берёт матожидание по политике")(
    lambda x: x.r + x.g * _masked(x, x.next_q.max(axis=1)))
_mistake(K, "bootstraps_terminal", "terminal rows still bootstrap: when terminated = 1 the target is the reward alone",
         "терминальные переходы всё равно бутстрэппятся: при terminated = 1 цель равна одной награде")(
    lambda x: x.r + x.g * np.einsum("ba,ba->b", x.next_policy_probs, x.next_q))
_mistake(K, "uniform_average", "averages Q over actions, ignoring the policy: weight each action by pi(a|s')",
         "усредняет Q по действиям, игнорируя политику: взвешивайте каждое действие через pi(a|s')")(
    lambda x: x.r + x.g * _masked(x, x.next_q.mean(axis=1)))
_mistake(K, "greedy_in_policy", "reads Q at the policy's most likely action; FQE averages over every action",
         "берёт Q в самом вероятном действии политики; FQE усредняет по всем действиям")(
    lambda x: x.r + x.g * _masked(x, _at(x.next_q, x.next_policy_probs.argmax(axis=1))))
_mistake(K, "terminal_drops_reward", "terminal rows lose their reward: the target there is r, not 0",
         "терминальные переходы теряют награду: цель там равна r, а не 0")(
    lambda x: np.where(x.d, 0.0, x.r + x.g * _expected_next(x)))
_mistake(K, "policy_summed_over_batch", "sums the policy over the batch axis: each row has its own pi(a|s'_i)",
         "суммирует политику по оси пакета: у каждой строки своя pi(a|s'_i)")(
    lambda x: x.r + x.g * _masked(x, (x.next_policy_probs.sum(axis=0) * x.next_q).sum(axis=1) / len(x.r)))

# ---------------------------------------------------------------- iql_advantage_weights
K = "iql_advantage_weights"


def _cap(x):
    return x.args["max_weight"]


_mistake(K, "clips_advantage", "clips the advantage before exp; the cap applies to the weight, after exp",
         "ограничивает преимущество до exp; ограничение применяется к весу, после exp")(
    lambda x: np.exp(x.args["beta"] * np.minimum(x.advantages, _cap(x))))
_mistake(K, "no_cap", "exp(beta * A) is never capped: the weight is at most max_weight",
         "exp(beta * A) не ограничен: вес не больше max_weight")(
    lambda x: np.exp(x.args["beta"] * x.advantages))
_mistake(K, "beta_ignored", "leaves beta out: the weight is exp(beta * A)",
         "забывает beta: вес равен exp(beta * A)")(
    lambda x: np.exp(np.minimum(x.advantages, np.log(_cap(x)))))
_mistake(K, "beta_divides", "divides by beta (a temperature); here beta multiplies the advantage",
         "делит на beta (как на температуру); здесь beta умножает преимущество")(
    lambda x: np.exp(np.minimum(x.advantages / x.args["beta"], np.log(_cap(x)))))
_mistake(K, "cap_not_in_log_space", "caps the exponent at max_weight; cap it at log(max_weight)",
         "ограничивает показатель значением max_weight; ограничивать нужно log(max_weight)")(
    lambda x: np.exp(np.minimum(x.args["beta"] * x.advantages, _cap(x))))
_mistake(K, "normalized", "divides the weights by their sum; the weights are not a distribution",
         "делит веса на их сумму; веса — не распределение")(
    lambda x: np.exp(np.minimum(x.args["beta"] * x.advantages, np.log(_cap(x))))
    / np.exp(np.minimum(x.args["beta"] * x.advantages, np.log(_cap(x)))).sum())
del K


# ---------------------------------------------------------------- naming the mistake
_OUTCOMES: dict[tuple[str, int], tuple] = {}


def _outcome_at(mistake: Mistake, kc, index: int) -> dict:
    """The mistake's outcome on call ``index`` of a corpus, computed at most once per process."""
    key = (mistake.name, id(kc))
    if key not in _OUTCOMES or _OUTCOMES[key][0] is not kc:  # holding kc keeps its id unique
        _OUTCOMES[key] = (kc, {})
    done = _OUTCOMES[key][1]
    if index not in done:
        done[index] = mistake.outcome(kc.calls[index])
    return done[index]


# Properties about edge inputs (invalid ones, empty batches): a mistake in the formula
# says nothing about them, and a kernel may get them wrong on its own.
EDGE_PROPERTIES = ("bad_input", "empty_batch")


def judged_calls(kc) -> list[int]:
    """Indices of the calls whose values matter: every case except the edge inputs."""
    return [i for case in kc.cases if case.prop.key not in EDGE_PROPERTIES
            for i in range(case.first_call, case.first_call + case.n_calls)]


def reproduces(mistake: Mistake, kc, outcomes: list[dict], order: list[int]) -> bool:
    """Whether the mistake gives the student's outcome on every call of ``order``.

    Stops at the first difference, so a wrong guess costs a few calls, not the corpus.
    """
    return all(same_outcome(outcomes[i], _outcome_at(mistake, kc, i), kc.expected[i].get("scale")) for i in order)


def likely_mistake(kc, outcomes: list[dict], passed: set[int] | None = None) -> Mistake | None:
    """The first catalog mistake that reproduces the student on every judged call, if any.

    ``kc`` is the kernel's corpus; ``outcomes`` are the student's outcomes of its calls;
    ``passed``, if known, the calls already found to agree with the reference (only an
    ordering hint: the answer is the same without it). Every catalog entry differs from
    the reference somewhere on the corpus (tests/autograder/test_mistakes.py checks it),
    so a match is a real mistake.
    """
    indices = judged_calls(kc)
    # The student's failing calls first: most mistakes are rejected on the first few.
    if passed is None:
        order = sorted(indices, key=lambda i: same_outcome(outcomes[i], kc.expected[i]))
    else:
        order = sorted(indices, key=passed.__contains__)
    return next((m for m in CATALOG[kc.kernel] if reproduces(m, kc, outcomes, order)), None)
