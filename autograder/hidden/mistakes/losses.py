"""Catalog entries of the loss and value kernels: token NLL, CQL penalty, expectile loss,
return-to-go, pessimistic values, the behavior support mask and IQL's weights."""
from __future__ import annotations

import numpy as np

from autograder.hidden.mistakes.core import _lse, _mistake

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

_mistake(K, "mask_ignored", "forgets the mask: averages every log-prob, padding included; only active tokens count",
         "забывает маску: усредняет все лог-вероятности вместе с дополнением (padding); учитываются только"
         " активные токены")(
    lambda x: -x.token_logprobs.mean())
_mistake(K, "mask_inverted", "keeps the masked-out positions: mask = 1 marks the active tokens",
         "берёт позиции вне маски: mask = 1 отмечает активные токены")(
    lambda x: -np.where(x.m, 0.0, x.token_logprobs).sum() / np.count_nonzero(~x.m))

# ---------------------------------------------------------------- cql_discrete_penalty
K = "cql_discrete_penalty"
_mistake(K, "unstable_logsumexp", "log(sum(exp(Q))) overflows for large Q: subtract the row max first and add it back",
         "log(sum(exp(Q))) переполняется при больших Q: вычтите максимум строки и прибавьте его обратно")(
    lambda x: np.mean(np.log(np.exp(x.q).sum(axis=1)) - x.taken))
_mistake(K, "sum_over_batch", "sums the penalty over the batch; the contract is the batch mean",
         "суммирует штраф по батчу; по контракту нужно среднее по батчу")(
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
         "стабилизирует максимумом всего батча: строки далеко ниже него обнуляются; берите максимум строки")(
    lambda x: np.mean(x.q.max() + np.log(np.exp(x.q - x.q.max()).sum(axis=1)) - x.taken))
_mistake(K, "logsumexp_over_batch", "takes the logsumexp over the batch axis; it runs over actions (axis=1)",
         "берёт logsumexp по оси батча; он берётся по действиям (axis=1)")(
    lambda x: np.mean(_lse(x.q, axis=0)) - np.mean(x.taken))

_mistake(K, "sign_flipped", "computes Q(s, a_data) - logsumexp: the penalty is logsumexp_b Q - Q(s, a_data) (never negative)",
         "считает Q(s, a_data) - logsumexp: штраф равен logsumexp_b Q - Q(s, a_data) (он не бывает отрицательным)")(
    lambda x: np.mean(x.taken - _lse(x.q)))
_mistake(K, "mean_of_q", "uses the mean of Q over actions; the penalty needs the soft maximum logsumexp_b Q",
         "использует среднее Q по действиям; штрафу нужен мягкий максимум logsumexp_b Q")(
    lambda x: np.mean(x.q.mean(axis=1) - x.taken))

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

_mistake(K, "gamma_ignored", "leaves gamma out: G_t = r_t + gamma * G_{t+1}",
         "забывает gamma: G_t = r_t + gamma * G_{t+1}")(
    lambda x: _scan(x.r, 1.0))
_mistake(K, "discount_from_episode_start", "discounts from the start of the episode (gamma**k r_k): the return-to-go at t"
         " discounts from t (gamma**(k - t) r_k)", "дисконтирует от начала эпизода (gamma**k r_k): оставшаяся отдача"
         " (return-to-go) в шаге t дисконтирует от t (gamma**(k - t) r_k)")(
    lambda x: _scan(x.g ** np.arange(len(x.r)) * x.r, 1.0))
_mistake(K, "first_step_left_out", "the backward loop stops before t = 0: the first step's return-to-go stays 0",
         "обратный цикл останавливается до t = 0: оставшаяся отдача (return-to-go) первого шага остаётся 0")(
    lambda x: np.r_[0.0, _scan(x.r, x.g)[1:]] if len(x.r) > 1 else _scan(x.r, x.g))
_mistake(K, "last_reward_left_out", "the backward loop starts at T - 2: the last reward is never added",
         "обратный цикл начинается с T - 2: последняя награда не прибавляется")(
    lambda x: _scan(np.r_[x.r[:-1], 0.0], x.g) if len(x.r) else x.r.copy())

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

_mistake(K, "n_plus_one", "uses radius_scale / sqrt(n + 1); the radius is radius_scale / sqrt(n) (unseen entries are -inf anyway)",
         "использует radius_scale / sqrt(n + 1); радиус равен radius_scale / sqrt(n) (ненаблюдавшиеся элементы"
         " всё равно равны -inf)")(
    lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts + 1.0)))

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

_mistake(K, "mean_not_max", "compares with ratio * the row mean; the threshold is ratio * the row max",
         "сравнивает с ratio * среднее по строке; порог равен ratio * максимум строки")(
    lambda x: x.probabilities >= _ratio(x) * x.probabilities.mean(axis=-1, keepdims=True))

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
_mistake(K, "advantage_sign_flipped", "uses exp(-beta * A): actions better than V (A > 0) must get the larger weights",
         "использует exp(-beta * A): действия лучше V (A > 0) должны получать больший вес")(
    lambda x: np.exp(np.minimum(-x.args["beta"] * x.advantages, np.log(_cap(x)))))
_mistake(K, "softmax", "normalizes exp(beta * A) over the batch like a softmax; each weight is exp(beta * A) on its own,"
         " capped at max_weight", "нормирует exp(beta * A) по батчу, как softmax; каждый вес — это exp(beta * A)"
         " сам по себе, ограниченный max_weight")(
    lambda x: np.exp(x.args["beta"] * x.advantages - np.max(x.args["beta"] * x.advantages, initial=-np.inf))
    / np.exp(x.args["beta"] * x.advantages - np.max(x.args["beta"] * x.advantages, initial=-np.inf)).sum())
del K
