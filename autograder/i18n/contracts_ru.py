"""The Russian wording of the notebooks' code cells: kernel contracts (docstrings) and comments.

The notebook builder writes every code cell once, in English (the kernels' docstrings
are the task statement, taken from ``reference_impl``). For the Russian notebooks
:func:`localise_source` replaces each docstring and each comment by its Russian text
from the tables below and changes nothing else, so the code stays the same token for
token (``tests/autograder/i18n/test_contracts_ru.py`` compares the syntax trees).

* :data:`DOCSTRINGS_RU`: ``"module.function"`` (a function of ``reference_impl/<module>.py``,
  or ``"cells.function"`` for one the builder defines inside a notebook cell) ->
  (fingerprint of the English docstring, Russian docstring). The fingerprint (:func:`fingerprint`) finds the docstring in a
  cell whatever function it sits in (helpers are nested in the solution cells); when
  the English contract changes, its fingerprint no longer matches and a test names the
  entry to translate again.
* :data:`COMMENTS_RU`: English comment text -> Russian; :data:`COMMENT_PATTERNS_RU` for
  comments the builder writes with numbers or names in them.

Formulas, shapes, argument names and exception names are kept as written in English:
they are code, and the tests check that every clause of the contract
(``autograder/hidden/suite.toml``) keeps its key terms. Terms follow docs/glossary.md.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import io
import re
import tokenize

__all__ = ["COMMENTS_RU", "COMMENT_PATTERNS_RU", "DOCSTRINGS_RU", "KIT_COMMENTS_RU", "KIT_DOCSTRINGS_RU", "code_skeleton", "fingerprint",
           "localise_source", "translate_comment", "translate_docstring"]


def fingerprint(docstring: str) -> str:
    """A short hash of an English docstring as :func:`inspect.cleandoc` leaves it."""
    return hashlib.sha256(inspect.cleandoc(docstring).encode("utf-8")).hexdigest()[:12]


_NON_FINITE = "NaN или ±inf"
_UNCHANGED = "Входы могут быть списками или массивами и никогда не изменяются."

# "module.function" -> (fingerprint of the English docstring, the Russian docstring).
DOCSTRINGS_RU: dict[str, tuple[str, str]] = {
    # ---------------------------------------------------------------- reference_impl/kernels.py
    "kernels._discounted_scan": ("d86f637c432d", """\
G_t = r_t + g * G_{t+1} (G за концом эпизода равно 0) для 0 <= g < 1, векторно.

Эпизод режется на блоки по n шагов (первый блок может быть короче). В блоке,
начинающемся с s, при p_j = g**j и A — оставшейся отдаче после блока,

    G_{s+j} = sum_{i >= j} p_i r_{s+i} / p_j  +  g**(n-j) * A.

В сумму для G_{s+j} входят только p_i <= p_j, поэтому ничего не сокращается, а
g**(n-1) остаётся намного выше порога исчезновения порядка, так что деление на p_j
не теряет точности (``g**-t`` по всему длинному эпизоду переполнилось бы). Начала
блоков X_b подчиняются X_b = H_b + g**n X_{b+1} (H_b — блок сам по себе). Если
блоков больше одного, то g**n <= e**-345, и двух шагов этой рекурсии в float64
достаточно: отброшенное меньше 1e-450 от наибольшего |G|. Слишком малые или большие
награды масштабируются степенью двойки (точно), чтобы веса их не обнуляли, а суммы
не переполнялись."""),
    "kernels._transition_batch": ("fbce4fe66db0", """\
Общие проверки ядер с бутстрэп-целями: (B,), (B,), (B, A)."""),
    "kernels._bootstrap": ("16249fcbc3b7", """\
r + gamma * next_value в нетерминальных строках, одно r в терминальных.

``next_values`` — новый массив, которым владеет вызывающий код; терминальные строки
обнуляются на месте, чтобы их содержимое (даже NaN) никогда не попало в результат."""),
    "kernels.dqn_targets": ("561926c00496", f"""\
Цели регрессии DQN.

y_i = r_i + gamma * (1 - terminated_i) * max_a Qbar(s'_i, a)

Формы: rewards (B,), terminated (B,) bool или 0/1, next_q_target (B, A) -> (B,) float64.
Пустой батч (B = 0) даёт пустой результат.
В терминальных строках ``next_q_target`` не читается (там может быть что угодно).
Выбрасывает ValueError при неверных формах, пустой оси действий, флагах не из 0/1,
значениях {_NON_FINITE} там, где они используются, а также при gamma вне [0, 1].
Используются: все награды и ``next_q_target`` во всех нетерминальных строках, при любом
gamma (и при 0 тоже). Ось действий не может быть пустой и при B = 0, поэтому форма
(0, 0) вызывает ValueError.
{_UNCHANGED}"""),
    "kernels.double_dqn_targets": ("520659c9428c", f"""\
Цели Double DQN: онлайн-таблица выбирает действие, целевая таблица его оценивает.

a*_i = argmax_a Q(s'_i, a)            (при равенстве — первый индекс)
y_i  = r_i + gamma * (1 - terminated_i) * Qbar(s'_i, a*_i)

Формы: rewards (B,), terminated (B,), next_q_online (B, A), next_q_target (B, A) -> (B,) float64.
Пустой батч (B = 0) даёт пустой результат.
Выбрасывает ValueError в тех же случаях, что и :func:`dqn_targets`, а также когда формы
двух таблиц различаются; обе таблицы используются во всех нетерминальных строках.
{_UNCHANGED}"""),
    "kernels.masked_token_nll": ("a7dca2ec636b", f"""\
Среднее отрицательное логарифмическое правдоподобие по активным токенам всего батча.

L = - sum(mask * logp) / sum(mask)

``token_logprobs`` и ``mask`` одной (любой) формы; ``mask`` — bool или 0/1.
Позиции с маской 0 никогда не читаются (в дополнении (padding) может стоять -inf).
Возвращает float. Выбрасывает ValueError при несовпадении форм, значениях маски не из 0/1,
маске без единой активной позиции, а также когда среди логарифмов вероятностей в
активных позициях есть {_NON_FINITE}.
{_UNCHANGED}"""),
    "kernels.cql_discrete_penalty": ("22ff27104384", f"""\
Регуляризатор CQL для дискретных действий: мягкий максимум минус значение записанного действия.

penalty(s, a) = log sum_b exp Q(s, b) - Q(s, a)     (всегда >= 0)

``q_values`` (A,) с целым ``actions`` даёт это значение; (B, A) с целочисленными
``actions`` формы (B,) даёт среднее по батчу. Вычисляется как
(max Q - Q(s, a)) + log sum_b exp(Q(s, b) - max Q): точно и без предупреждений даже
при больших |Q|. Возвращает float. Выбрасывает ValueError при неверных формах, пустой
оси действий, значениях {_NON_FINITE} в Q, а также при действиях, которые не целые
или выходят за пределы диапазона.
Действие — целое число или float с целым значением (1.0 — это действие 1); bool и
дробный float — не целые. У батча без строк, формы (0, A), нет среднего: он вызывает
ValueError (не оценивается: NaN в ответ тоже засчитывается).
{_UNCHANGED}"""),
    "kernels.expectile_loss": ("a39d784bdda8", f"""\
Асимметричная квадратичная функция потерь для функции ценности в IQL.

L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = Q - V
``diff`` — цель минус предсказание (в IQL это Q - V): u > 0, когда цель выше.

Положительные остатки входят с весом tau, отрицательные — с весом 1 - tau; при
tau = 0.5 это половина MSE. ``diff`` — любой непустой формы. Возвращает float.
Выбрасывает ValueError, когда tau не лежит в открытом интервале (0, 1) или ``diff``
пуст или содержит {_NON_FINITE}.
{_UNCHANGED}"""),
    "kernels.return_to_go": ("9c471ec8c08e", f"""\
Дисконтированная оставшаяся отдача (return-to-go), накопленная с конца эпизода.

G_{{T-1}} = r_{{T-1}},   G_t = r_t + gamma * G_{{t+1}}

``rewards`` (T,) -> (T,) float64 (целые награды дают float). Пустой эпизод (T = 0)
даёт пустой результат. Выбрасывает ValueError,
когда ``rewards`` не одномерный (не 1-D) или содержит {_NON_FINITE}, а также при
gamma вне [0, 1].
{_UNCHANGED}"""),
    "kernels.pessimistic_values": ("ad842d96b751", f"""\
Нижние доверительные значения по числу наблюдений.

value = mean - radius_scale / sqrt(n)   где n > 0
value = -inf                            где n = 0 (каким бы ни было среднее)

``empirical_means`` и ``counts`` одной (любой) формы; у результата (float64) та же форма,
поэтому пустые входы дают пустой результат.
Выбрасывает ValueError при несовпадении форм, отрицательных значениях или {_NON_FINITE}
в ``counts``, {_NON_FINITE} в средних там, где n > 0, а также когда ``radius_scale``
отрицателен или равен {_NON_FINITE}.
{_UNCHANGED}"""),
    "kernels.behavior_support_mask": ("4772a064e641", f"""\
Действия, которые поведенческая политика выбирает достаточно часто, чтобы им доверять.

eligible(a) = p(a) >= threshold_ratio * max_b p(b)      (вдоль последней оси)

``probabilities`` (A,) или (B, A), неотрицательные (подойдут и счётчики) -> bool той же
формы; пустой батч (B = 0) даёт пустую маску. Самое вероятное действие допустимо всегда. Выбрасывает ValueError при другом
числе осей, пустой оси действий, отрицательных элементах или {_NON_FINITE}, строке из
одних нулей, а также при ``threshold_ratio`` вне [0, 1]. Ось действий не может быть
пустой и при B = 0, поэтому форма (0, 0) вызывает ValueError.
{_UNCHANGED}"""),
    "kernels.fqe_targets": ("624f459b6f9c", f"""\
Цели FQE (оценки Q-функции политики по данным): математическое ожидание по оцениваемой политике.

y_i = r_i + gamma * (1 - terminated_i) * sum_a pi(a | s'_i) Q(s'_i, a)

Формы: rewards (B,), terminated (B,), next_q (B, A), next_policy_probs (B, A)
-> (B,) float64. Пустой батч (B = 0) даёт пустой результат. В терминальных строках ``next_q``
не читается (там может быть что угодно); ``next_policy_probs`` проверяется во всех строках.
В нетерминальной строке используются все элементы ``next_q``, и там, где
pi(a | s') = 0: значение {_NON_FINITE} вызывает ValueError (умножение на 0 его не убирает).
Выбрасывает ValueError в тех же случаях, что и :func:`dqn_targets`, а также когда таблица политики другой формы, содержит отрицательные элементы или {_NON_FINITE},
строку из одних нулей или строку, сумма которой отличается от 1 больше чем на 1e-6.
{_UNCHANGED}"""),  # noqa: E501  (the kit's Russian docstring: its text is what students read)
    "kernels.iql_advantage_weights": ("5894c8c8520c", f"""\
Веса IQL для регрессии, взвешенной по преимуществу (advantage-weighted regression), с ограничением сверху.

w = min(exp(beta * A), max_weight) = exp(min(beta * A, log max_weight))

Вторая форма никогда не переполняется, поэтому допустимы beta * A вплоть до 1e6.
``advantages`` любой формы; у результата (float64) та же форма, поэтому пустые преимущества дают
пустой результат. Выбрасывает ValueError, когда beta отрицательна
или равна {_NON_FINITE}, max_weight не является конечным положительным числом или
advantages содержат {_NON_FINITE}.
{_UNCHANGED}"""),
    # ---------------------------------------------------------------- reference_impl/torch_kernels.py
    "torch_kernels._require_finite": ("a070142066eb", """\
Проверяет, что среди используемых элементов нет NaN и ±inf (``used`` — маска bool по ведущим осям)."""),
    "torch_kernels._flags": ("2abfcf511094", """\
Тензор bool или 0/1 как bool; всё остальное — ошибка."""),
    "torch_kernels.masked_token_nll_torch": ("9c7733f8a769", f"""\
Среднее отрицательное логарифмическое правдоподобие по активным токенам всего батча (0-d).

L = - sum(mask * logp) / sum(mask)

Формы у обоих одинаковые (любые); ``mask`` — bool или 0/1. В позициях с маской 0 может
стоять -inf: они отбрасываются через ``torch.where``, так что их не видят ни значение,
ни градиент (простое ``mask * logp`` дало бы NaN из 0 * -inf).
Выбрасывает ValueError при несовпадении форм, значениях маски не из 0/1, маске без
активных позиций, логарифмах вероятностей не вещественного типа или со значениями
{_NON_FINITE} в активных позициях."""),
    "torch_kernels.cql_discrete_penalty_torch": ("b9c37454397e", f"""\
Регуляризатор CQL для дискретных действий, log sum_b exp Q(s, b) - Q(s, a), в виде 0-d тензора.

``q_values`` (A,) с 0-d целочисленным ``actions`` даёт это значение; (B, A) с
целочисленными ``actions`` формы (B,) даёт среднее по батчу. ``torch.logsumexp``
сохраняет устойчивость при больших |Q|; градиент по Q равен softmax(Q) - onehot(a)
(по строкам, / B).
Выбрасывает ValueError при неверных формах, пустой оси действий или пустом батче,
значениях {_NON_FINITE} в Q, нецелочисленных действиях или действиях вне диапазона."""),
    "torch_kernels.expectile_loss_torch": ("c8a2eb61c595", f"""\
Асимметричная квадратичная функция потерь для функции ценности в IQL (0-d).

L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = Q - V
``diff`` — цель минус предсказание (в IQL это Q - V): u > 0, когда цель выше.

``diff`` любой непустой формы. Выбрасывает ValueError, когда tau не лежит в (0, 1) или
``diff`` пуст, не вещественного типа или содержит {_NON_FINITE}."""),
    "torch_kernels.iql_advantage_weights_torch": ("a2ac7f4b95fd", f"""\
Ограниченные сверху веса преимущества в IQL, exp(min(beta * A, log max_weight)).

Той же формы, что ``advantages``; никогда не переполняется (показатель экспоненты
сначала обрезается). В IQL преимущества дают замороженные критики, поэтому обычно
передают отсоединённый (detached) тензор; сама функция дифференцируема ниже порога.
Выбрасывает ValueError, когда beta отрицательна или равна {_NON_FINITE}, max_weight не
является конечным положительным числом, или advantages не вещественного типа или
содержат {_NON_FINITE}."""),
    # ---------------------------------------------------------------- the lab notebook's own helpers (lab_source.py)
    "cells.show": ("0fffd6fe1ef8", """\
Печатает сообщение ноутбука ``key`` на его языке, подставив ``fields``."""),
    "cells.compare": ("c1c7b88d0e17", """\
Ваш прогон рядом с прогоном курса: строки (название, ваше значение, значения курса по каждому его запуску);
``bounds`` (0, 1) для доли: её интервалы не выходят за эти границы."""),
    "cells.side_study": ("ae477876782e", """\
Побочное исследование курса на его собственных свежих запусках: его таблица и рисунок."""),
    "cells.course_band": ("31c0db1749ce", """\
Прогон курса: среднее по его запускам и половина ширины 95 % интервала."""),
    "cells.course_numbers": ("37073c568f2d", """\
Числа прогона курса ``ids`` (или все числа раздела, например "dagger"): среднее [95 % интервал]
и парные разности с выводом."""),
}

# English comment (the text after "# ") -> Russian.
COMMENTS_RU: dict[str, str] = {
    # the lab notebook's cells
    "the course's run: every quantity in each of its seeds": "прогон курса: каждая величина по каждому его запуску",
    "its claims and paired comparisons, as its report states them":
        "его утверждения и парные сравнения, как их приводит его отчёт",
    "the two side studies, as their pages state them": "два побочных исследования, как их приводят их страницы",
    "the title of a figure of your own run": "заголовок рисунка по вашему прогону",
    "the title of a figure of the course's run": "заголовок рисунка по прогону курса",
    "the course's rounds and label budgets (the x axes)": "раунды и бюджеты меток прогона курса (оси x)",
    "the course's checkpoints (the x axis)": "контрольные точки прогона курса (ось x)",
    "CQL's learned values sit above the true ones here: what the course measured, and why that is not a bug in your ports":
        "выученные ценности CQL здесь выше истинных: что измерил курс и почему это не ошибка в ваших версиях на torch",
    "each seed's absolute error": "абсолютная ошибка каждого запуска",
    "the course's requests": "запросы прогона курса",
    # kernels.py and torch_kernels.py (inside the solution cells)
    "padding may hold -inf: read only the active entries":
        "в дополнении (padding) может стоять -inf: читаем только активные элементы",
    "np.cumsum accumulates sequentially, i.e. exactly the recursion above.":
        "np.cumsum накапливает сумму последовательно, то есть ровно по рекурсии выше.",
    "faster than sum(axis=1) on short rows": "на коротких строках быстрее, чем sum(axis=1)",
    "only terminal rows may hold non-finite values here":
        "здесь NaN или бесконечность могут стоять только в терминальных строках",
    "The weight is a constant of u's sign: it carries no gradient (as in CORL's IQL).":
        "Вес зависит только от знака u: градиента он не несёт (как в IQL из CORL).",
    # the builder's cells (autograder/assign/sources.py, lab_source.py)
    "Find the support library m5_student (shipped next to this notebook) and put it on sys.path.":
        "Найти библиотеку поддержки m5_student (она лежит рядом с этим ноутбуком) и добавить её в sys.path.",
    "hidden tests, run after you submit": "скрытые тесты, запускаются после сдачи",
    "graded after you submit": "оценивается после сдачи",
    "an empty batch (0, A) is a valid batch: an empty mask":
        "пустой батч (0, A) допустим: маска тоже пустая",
    "p_0 .. p_n": "степени p_0 .. p_n",
    "X_b = H_b + g**n X_{b+1}": "рекурсия по блокам X_b = H_b + g**n X_{b+1}",
    "g**(n-j) * A": "прибавляем хвост g**(n-j) * A",
    "Blocks where g**(n-1) >= e**-345 (~1e-150), far above float64's underflow (~1e-308).":
        "Блоки, где g**(n-1) >= e**-345 (~1e-150), намного выше порога исчезновения порядка float64 (~1e-308).",
    "zeros in front change no return-to-go after them":
        "нули в начале не меняют оставшуюся отдачу после них",
    "A of each block: the return-to-go from the next block's start":
        "A каждого блока: оставшаяся отдача с начала следующего блока",
    "the recursion's first step, exactly (p r / p may be off by one ulp)":
        "первый шаг рекурсии, точно (p r / p может отличаться на одну ulp)",
    "the same number of expert labels for both learners: a separate setting (its caption says how it differs)":
        "одинаковое число меток эксперта у обоих учеников: отдельная постановка (чем она отличается, сказано в подписи)",
    "distribution shift: the share of each learner's own visits on states absent from its labels, and its errors there":
        "сдвиг распределения: доля собственных посещений каждого ученика в состояниях, которых нет среди его меток, и его ошибки там",
    "section 6 needs this section's results": "разделу 6 нужны результаты этого раздела",
    "smoke unless RL_LLM_M5_PROFILE=full": "профиль smoke, если не задано RL_LLM_M5_PROFILE=full",
    "your ten numpy kernels, from the saved assignment notebook next to this one":
        "ваши десять ядер numpy из сохранённого ноутбука задания, который лежит рядом с этим",
    "harmless torch notice": "безобидное предупреждение torch",
    "One target by hand: FQE averages the next values under the evaluated policy (no max).":
        "Одна цель вручную: FQE усредняет следующие значения по оцениваемой политике (без max).",
}

# Comments with numbers or names in them: (English pattern, Russian replacement).
COMMENT_PATTERNS_RU: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"Exercise (\d+): assign"), r"Упражнение \1: присвойте"),
    (re.compile(r"every number of this section: (course_numbers\('\w+'\))"), r"все числа этого раздела: \1"),
    # the expected form of each answer, indented under that line (the indent is kept)
    (re.compile(r"(ex\d\d_\w+): a number"), r"  \1: число"),
    (re.compile(r"(ex\d\d_\w+): a list of (\d+) numbers"), r"  \1: список из \2 чисел"),
)

# The Russian kit's own modules (not in any notebook): ``"module"`` for a module's docstring,
# ``"module.function"`` for a function's; the same (fingerprint, Russian text) pairs.
KIT_DOCSTRINGS_RU: dict[str, tuple[str, str]] = {
    "validation": ("6affe1565319", """\
Проверки входов, общие для ядер.

Каждая проверка выбрасывает :class:`KernelInputError` (это ``ValueError``), сообщение
которой начинается с ``"<kernel>: `<argument>` ..."``: студент видит, какой вызов и
какой аргумент неверны, а не ошибку согласования форм numpy глубоко внутри выражения.
Остальная часть сообщения написана на языке ноутбуков студенческого набора (:data:`PROBLEMS`).

Проверки конечности идут по быстрому пути (одна редукция, без временного массива) и
смотрят поэлементно, только когда редукция не конечна, поэтому ядра с проверками
остаются близки по скорости к голому выражению numpy на больших батчах."""),
    "validation.KernelInputError": ("027811c2cead", "Неверный вход ядра; сообщение называет ядро и аргумент."),
    "validation.language": ("c02ba020be60",
                            "Язык сообщений: язык студенческого набора (его ``notebook_language()``), иначе английский."),
    "validation.problem": ("dda166bbcbe1", "Текст проблемы ``key`` из :data:`PROBLEMS` на языке :func:`language`, "
                                           "с подставленными значениями."),
    "validation.fail": ("878ca8078b77", 'Ошибка аргумента ``name`` ядра ``kernel``: "<kernel>: `<name>` <problem>".'),
    "validation.float_array": ("e48a527583b1", "``value`` как массив float64 (без копии, если он уже такой)."),
    "validation.flag_array": ("fc6746380aa5", "Массив 0/1 или bool как bool; любое другое значение — ошибка."),
    "validation.all_finite": ("2353ae9a03eb",
                              "True, если нет ни NaN, ни бесконечности (одна редукция, без временного массива)."),
    "validation.require_finite": ("9a5612c8b83b", """\
Среди используемых элементов нет NaN и бесконечностей.

``used`` — булева маска по ведущим осям (например, нетерминальные строки); элементы
вне неё могут содержать что угодно, потому что ядро их не читает."""),
    "validation.action_indices": ("d6c5b0869bc6",
                                  "Целые номера действий из [0, n_actions); целые значения типа float допускаются."),
}
KIT_COMMENTS_RU: dict[str, str] = {
    "What is wrong with an argument, by language; the kit's notebooks choose (see :func:`problem`).":
        "Что не так с аргументом, по языкам; язык выбирают ноутбуки набора (см. :func:`problem`).",
    "ragged nested lists, odd objects": "вложенные списки разной длины, странные объекты",
    "the sum may overflow although every entry is finite": "сумма может переполниться, хотя все элементы конечны",
}

_BY_FINGERPRINT = {key: text for key, text in (*DOCSTRINGS_RU.values(), *KIT_DOCSTRINGS_RU.values())}
# Comments that are markers for nbgrader and the release build: never translated.
_MARKER = re.compile(r"^###\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")


def translate_docstring(docstring: str, lang: str) -> str | None:
    """The ``lang`` text of an English docstring (itself for "en"); None when there is none."""
    if lang == "en":
        return inspect.cleandoc(docstring)
    if lang != "ru":
        raise ValueError(f"translate_docstring: `lang` must be 'en' or 'ru', got {lang!r}")
    return _BY_FINGERPRINT.get(fingerprint(docstring))


def translate_comment(text: str, lang: str) -> str | None:
    """The ``lang`` text of an English comment (without its ``#``); None when there is none."""
    if lang == "en":
        return text
    if lang != "ru":
        raise ValueError(f"translate_comment: `lang` must be 'en' or 'ru', got {lang!r}")
    if text in COMMENTS_RU:
        return COMMENTS_RU[text]
    if text in KIT_COMMENTS_RU:
        return KIT_COMMENTS_RU[text]
    for pattern, replacement in COMMENT_PATTERNS_RU:
        if pattern.fullmatch(text):
            return pattern.sub(replacement, text)
    return None


def _docstring_nodes(tree: ast.Module) -> list[ast.Expr]:
    """The docstring expressions of the module and of every function and class (nested ones included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.append(first)
    return found


def _docstring_literal(text: str, indent: str) -> list[str]:
    """Source lines of a triple-quoted docstring at ``indent`` (the builder's layout)."""
    if '"""' in text or "\\" in text:
        raise ValueError(f"a translated docstring may not hold triple quotes or backslashes: {text[:60]!r}")
    lines = text.split("\n")
    if len(lines) == 1:
        return [f'{indent}"""{text}"""']
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{line}" if line else "" for line in lines[1:]] + [f'{indent}"""']


def _replace_docstrings(source: str, lang: str) -> str:
    tree = ast.parse(source)
    lines = source.split("\n")
    for node in sorted(_docstring_nodes(tree), key=lambda n: n.lineno, reverse=True):
        translated = translate_docstring(node.value.value, lang)
        if translated is None:
            continue  # left in English; tests/autograder/i18n/test_contracts_ru.py names it
        indent = lines[node.lineno - 1][: node.col_offset]
        lines[node.lineno - 1 : node.end_lineno] = _docstring_literal(translated, indent)
    return "\n".join(lines)


def _replace_comments(source: str, lang: str) -> str:
    lines = source.split("\n")
    comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for token in reversed(comments):  # right to left keeps the columns of earlier comments valid
        if _MARKER.match(token.string):
            continue
        text = token.string[1:].strip()
        translated = translate_comment(text, lang)
        if translated is None or translated == text:
            continue
        row, col = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:col] + "# " + translated + line[token.end[1]:]
    return "\n".join(lines)


def code_skeleton(source: str) -> str:
    """What must be the same in every language: the syntax tree of ``source`` without its
    docstrings (comments are not in it) and without the message of an answer stub's
    ``raise NotImplementedError("...")`` (words in the notebook's language); the text
    itself when it is not plain Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in _docstring_nodes(tree):
        node.value = ast.Constant(value="")
    for node in ast.walk(tree):
        call = node.exc if isinstance(node, ast.Raise) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "NotImplementedError"
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
            call.args = [ast.Constant(value="") for _ in call.args]
    return ast.dump(tree)


def localise_source(source: str, lang: str) -> str:
    """``source`` (a code cell) with its docstrings and comments in ``lang``; code unchanged.

    English returns ``source`` itself. Docstrings and comments without a translation
    stay as they are. A cell that is not plain Python is returned unchanged.
    """
    if lang not in ("en", "ru"):
        raise ValueError(f"localise_source: `lang` must be 'en' or 'ru', got {lang!r}")
    if lang == "en":
        return source
    try:
        return _replace_comments(_replace_docstrings(source, lang), lang)
    except (SyntaxError, tokenize.TokenError):
        return source
