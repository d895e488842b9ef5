"""Catalog entries of the bootstrapped-target kernels: DQN, Double DQN and FQE targets."""
from __future__ import annotations

import numpy as np

from autograder.hidden.mistakes.core import _masked, _mistake

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
         "считает последнюю строку батча концом эпизода; эпизод заканчивает только terminated")(
    lambda x: x.r + x.g * np.where(np.r_[x.d[:-1], True], 0.0, x.next_q_target.max(axis=1)))
_mistake(K, "multiplies_by_not_done", "r + gamma * (1 - terminated) * max Q reads terminal rows: 0 * NaN is NaN;"
         " select with np.where instead", "r + gamma * (1 - terminated) * max Q читает терминальные строки: 0 * NaN = NaN;"
         " выбирайте через np.where")(
    lambda x: x.r + x.g * x.live * x.next_q_target.max(axis=1))

_mistake(K, "gamma_ignored", "leaves gamma out: the bootstrap term is gamma * max Q",
         "забывает gamma: слагаемое бутстрэпа равно gamma * max Q")(
    lambda x: x.r + _masked(x, x.next_q_target.max(axis=1)))

# ---------------------------------------------------------------- double_dqn_targets
K = "double_dqn_targets"


def _at(table, index):
    return table[np.arange(len(index)), index]


def _double(x, value):
    return x.r + x.g * _masked(x, value)


_mistake(K, "online_evaluates", "evaluates a* with the online table; the target table gives the value",
         "оценивает a* по онлайн-таблице; значение даёт целевая таблица")(
    lambda x: _double(x, _at(x.next_q_online, x.next_q_online.argmax(axis=1))))
_mistake(K, "target_selects", "selects with the target table: that is plain DQN; the online table selects",
         "выбирает по целевой таблице: это обычный DQN; выбирает онлайн-таблица")(
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



def _double_value(x):
    return _at(x.next_q_target, x.next_q_online.argmax(axis=1))


_mistake(K, "mask_inverted", "multiplies by terminated instead of 1 - terminated: live rows lose the bootstrap",
         "умножение на terminated вместо 1 - terminated: нетерминальные переходы теряют бутстрэп")(
    lambda x: x.r + x.g * np.where(x.d, _double_value(x), 0.0))
_mistake(K, "gamma_ignored", "leaves gamma out: the bootstrap term is gamma * Qbar(s', a*)",
         "забывает gamma: слагаемое бутстрэпа равно gamma * Qbar(s', a*)")(
    lambda x: x.r + _masked(x, _double_value(x)))

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
         "суммирует политику по оси батча: у каждой строки своя pi(a|s'_i)")(
    lambda x: x.r + x.g * _masked(x, (x.next_policy_probs.sum(axis=0) * x.next_q).sum(axis=1) / len(x.r)))



def _policy_value(x):
    """sum_a pi(a|s') Q(s', a) on every row, terminal rows included (as a formula reading them would)."""
    return np.einsum("ba,ba->b", x.next_policy_probs, x.next_q)


_mistake(K, "mask_inverted", "multiplies by terminated instead of 1 - terminated: live rows lose the bootstrap",
         "умножение на terminated вместо 1 - terminated: нетерминальные переходы теряют бутстрэп")(
    lambda x: x.r + x.g * np.where(x.d, _policy_value(x), 0.0))
_mistake(K, "gamma_ignored", "leaves gamma out: the bootstrap term is gamma * sum_a pi(a|s') Q(s', a)",
         "забывает gamma: слагаемое бутстрэпа равно gamma * sum_a pi(a|s') Q(s', a)")(
    lambda x: x.r + _expected_next(x))
del K
