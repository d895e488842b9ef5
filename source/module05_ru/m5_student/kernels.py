# Generated from reference_impl/kernels.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""The ten reference kernels of Module 5 (pure numpy; the single source of truth).

Conventions shared by all kernels:

* inputs may be lists or arrays and are never modified;
* array outputs are float64 (bool for :func:`behavior_support_mask`); scalar losses
  are Python floats;
* bad input raises :class:`~m5_student.validation.KernelInputError`, a
  ``ValueError`` whose message names the kernel and the argument;
* ``terminated`` means the task really ended (goal, trap). A transition cut by a
  time limit is passed as *not* terminated and bootstraps.

The lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are what students
write; ``m5 release`` replaces them with a stub, as nbgrader does in notebooks.
"""
from __future__ import annotations

import math

import numpy as np

from m5_student import validation as v

__all__ = [
    "dqn_targets",
    "double_dqn_targets",
    "masked_token_nll",
    "cql_discrete_penalty",
    "expectile_loss",
    "return_to_go",
    "pessimistic_values",
    "behavior_support_mask",
    "fqe_targets",
    "iql_advantage_weights",
]


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    """Цели регрессии DQN.

    y_i = r_i + gamma * (1 - terminated_i) * max_a Qbar(s'_i, a)

    Формы: rewards (B,), terminated (B,) bool или 0/1, next_q_target (B, A) -> (B,).
    Пустой пакет (B = 0) даёт пустой результат.
    В терминальных строках ``next_q_target`` не читается (там может быть что угодно).
    Выбрасывает ValueError при неверных формах, пустой оси действий, флагах не из 0/1,
    значениях NaN или ±inf там, где они используются, а также при gamma вне [0, 1].
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте dqn_targets в ноутбуке задания")


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    """Цели Double DQN: онлайн-таблица выбирает действие, целевая таблица его оценивает.

    a*_i = argmax_a Q(s'_i, a)            (при равенстве — первый индекс)
    y_i  = r_i + gamma * (1 - terminated_i) * Qbar(s'_i, a*_i)

    Формы: rewards (B,), terminated (B,), next_q_online (B, A), next_q_target (B, A) -> (B,).
    Пустой пакет (B = 0) даёт пустой результат.
    Выбрасывает ValueError в тех же случаях, что и :func:`dqn_targets`, а также когда формы
    двух таблиц различаются.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте double_dqn_targets в ноутбуке задания")


def masked_token_nll(token_logprobs, mask):
    """Среднее отрицательное логарифмическое правдоподобие по активным токенам всего батча.

    L = - sum(mask * logp) / sum(mask)

    ``token_logprobs`` и ``mask`` одной (любой) формы; ``mask`` — bool или 0/1.
    Позиции с маской 0 никогда не читаются (в дополнении (padding) может стоять -inf).
    Возвращает float. Выбрасывает ValueError при несовпадении форм, значениях маски не из 0/1,
    маске без единой активной позиции, а также когда среди логарифмов вероятностей в
    активных позициях есть NaN или ±inf.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте masked_token_nll в ноутбуке задания")


def cql_discrete_penalty(q_values, actions):
    """Регуляризатор CQL для дискретных действий: мягкий максимум минус значение записанного действия.

    penalty(s, a) = log sum_b exp Q(s, b) - Q(s, a)     (всегда >= 0)

    ``q_values`` (A,) с целым ``actions`` даёт это значение; (B, A) с целочисленными
    ``actions`` формы (B,) даёт среднее по батчу. Вычисляется как
    (max Q - Q(s, a)) + log sum_b exp(Q(s, b) - max Q): точно и без предупреждений даже
    при больших |Q|. Возвращает float. Выбрасывает ValueError при неверных формах, пустой
    оси действий, значениях NaN или ±inf в Q, а также при действиях, которые не целые
    или выходят за пределы диапазона.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте cql_discrete_penalty в ноутбуке задания")


def expectile_loss(diff, tau):
    """Асимметричная квадратичная функция потерь для функции ценности в IQL.

    L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = target - prediction (Q - V)
    (target — цель, prediction — предсказание: u > 0, когда цель выше предсказания.)

    Положительные остатки входят с весом tau, отрицательные — с весом 1 - tau; при
    tau = 0.5 это половина MSE. ``diff`` — любой непустой формы. Возвращает float.
    Выбрасывает ValueError, когда tau не лежит в открытом интервале (0, 1) или ``diff``
    пуст или содержит NaN или ±inf.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте expectile_loss в ноутбуке задания")


def return_to_go(rewards, gamma=1.0):
    """Дисконтированная оставшаяся отдача (return-to-go), накопленная с конца эпизода.

    G_{T-1} = r_{T-1},   G_t = r_t + gamma * G_{t+1}

    ``rewards`` (T,) -> (T,) float64 (целые награды дают float). Пустой эпизод (T = 0)
    даёт пустой результат. Выбрасывает ValueError,
    когда ``rewards`` не одномерный (не 1-D) или содержит NaN или ±inf, а также при
    gamma вне [0, 1].
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте return_to_go в ноутбуке задания")


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    """Нижние доверительные значения по числу наблюдений.

    value = mean - radius_scale / sqrt(n)   где n > 0
    value = -inf                            где n = 0 (каким бы ни было среднее)

    ``empirical_means`` и ``counts`` одной (любой) формы; у результата та же форма,
    поэтому пустые входы дают пустой результат.
    Выбрасывает ValueError при несовпадении форм, отрицательных значениях или NaN или ±inf
    в ``counts``, NaN или ±inf в средних там, где n > 0, а также когда ``radius_scale``
    отрицателен или равен NaN или ±inf.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте pessimistic_values в ноутбуке задания")


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    """Действия, которые поведенческая политика выбирает достаточно часто, чтобы им доверять.

    eligible(a) = p(a) >= threshold_ratio * max_b p(b)      (вдоль последней оси)

    ``probabilities`` (A,) или (B, A), неотрицательные (подойдут и счётчики) -> bool той же
    формы; пустой пакет (B = 0) даёт пустую маску. Самое вероятное действие допустимо всегда. Выбрасывает ValueError при другом
    числе осей, пустой оси действий, отрицательных элементах или NaN или ±inf, строке из
    одних нулей, а также при ``threshold_ratio`` вне [0, 1].
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте behavior_support_mask в ноутбуке задания")


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    """Цели FQE (оценки Q-функции политики по данным): математическое ожидание по оцениваемой политике.

    y_i = r_i + gamma * (1 - terminated_i) * sum_a pi(a | s'_i) Q(s'_i, a)

    Формы: rewards (B,), terminated (B,), next_q (B, A), next_policy_probs (B, A)
    -> (B,). Пустой пакет (B = 0) даёт пустой результат. Выбрасывает ValueError в тех же
    случаях, что и :func:`dqn_targets`, а также когда таблица политики другой формы, содержит отрицательные элементы или NaN или ±inf,
    строку из одних нулей или строку, сумма которой отличается от 1 больше чем на 1e-6.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте fqe_targets в ноутбуке задания")


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    """Веса IQL для регрессии, взвешенной по преимуществу (advantage-weighted regression), с ограничением сверху.

    w = min(exp(beta * A), max_weight) = exp(min(beta * A, log max_weight))

    Вторая форма никогда не переполняется, поэтому допустимы beta * A вплоть до 1e6.
    ``advantages`` любой формы; у результата та же форма, поэтому пустые преимущества дают
    пустой результат. Выбрасывает ValueError, когда beta отрицательна
    или равна NaN или ±inf, max_weight не является конечным положительным числом или
    advantages содержат NaN или ±inf.
    Входы могут быть списками или массивами и никогда не изменяются.
    """
    raise NotImplementedError("реализуйте iql_advantage_weights в ноутбуке задания")
