"""What a student reads of a public check (shipped to students with :mod:`public`).

The checks' wording in English and Russian (:data:`TEXT`, :data:`MESSAGES`), a
check's verdict (:class:`CheckFailure`, worded in the student's language), and how
the values and calls a check shows are spelled (:func:`show`, :func:`show_call`;
:class:`Recorder` keeps the calls a check made and fails one that modified its input).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np

TEXT = {
    "en": {
        "ok": "ok",
        "fail": "FAIL",
        "summary": "{name}: {passed}/{total} public checks passed",
        "disclaimer": (
            "Passing the public checks does not guarantee full marks: "
            "the hidden tests check many more inputs against the reference implementation."
        ),
        "missing": "{name} is not defined",
        "not_impl": "{name} is not implemented yet",
        "input": "failing call",
        "smallest": "smallest failing call",
    },
    "ru": {
        "ok": "ок",
        "fail": "ОШИБКА",
        "summary": "{name}: пройдено {passed} из {total} {checks}",
        "disclaimer": (
            "Прохождение открытых проверок не гарантирует полный балл: "
            "скрытые тесты проверяют намного больше входов по эталонной реализации."
        ),
        "missing": "{name} не определена",
        "not_impl": "{name} ещё не реализована",
        "input": "вызов, на котором проверка не проходит",
        "smallest": "наименьший вызов, на котором проверка не проходит",
    },
}
# Why a check failed: CheckFailure(key, **params) is worded here in the student's language.
MESSAGES = {
    "en": {
        "value": "got {got}, expected {want}",
        "shape": "got shape {got}, expected shape {want}",
        "not_scalar": "expected one number (a float), got {got}",
        "not_empty": "an empty input must give an empty result, got {got}",
        "mutated": "the function modified its input `{arg}` (it was {before}, it became {after}); copy an array before changing it",
        "no_error": "expected ValueError, but the call returned {got}",
        "other_error": "expected ValueError, but the call raised {kind} ({message})",
        "raised": "the call raised {kind} ({message})",
        "timeout": "the check did not finish within {seconds:g} s (an infinite loop?)",
        "negative": "penalty {got} < 0",
        "not_invariant": "adding {shift} to every Q changed the penalty from {got} to {other}",
        "double_above": "the Double DQN target {got} is above the DQN target {want}",
        "terminal": "terminal rows must equal the reward: got {got}, expected {want}",
        "last_step": "G at the last step must equal its reward: got {got}, expected {want}",
        "recursion": "G_t = r_t + gamma G_(t+1) does not hold: got {got}, expected {want}",
        "more_data_lowers": "more data (counts + 1) lowered the value: {got} became {other}",
        "unseen": "entries with count 0 must be -inf, got {got}",
        "argmax": "the most likely action is not eligible: mask {got}",
        "lower_ratio": "a lower threshold_ratio removed an action: {got} became {other}",
        "not_monotone": "the weights decrease although the advantages increase: {got}",
        "not_capped": "the weights must lie in [0, max_weight = {cap}]: {got}",
    },
    "ru": {
        "value": "получено {got}, ожидалось {want}",
        "shape": "получена форма {got}, ожидалась форма {want}",
        "not_scalar": "ожидалось одно число (float), получено {got}",
        "not_empty": "пустой вход должен давать пустой результат, получено {got}",
        "mutated": "функция изменила свой вход `{arg}` (было {before}, стало {after}); скопируйте массив, прежде чем его менять",
        "no_error": "ожидалась ValueError, но вызов вернул {got}",
        "other_error": "ожидалась ValueError, но вызов выбросил {kind} (сообщение: «{message}»)",
        "raised": "вызов выбросил исключение {kind} (сообщение: «{message}»)",
        "timeout": "проверка не завершилась за {seconds:g} с (бесконечный цикл?)",
        "negative": "штраф {got} < 0",
        "not_invariant": "прибавление {shift} ко всем Q изменило штраф: было {got}, стало {other}",
        "double_above": "цель Double DQN {got} больше цели DQN {want}",
        "terminal": "в терминальных строках цель должна равняться награде: получено {got}, ожидалось {want}",
        "last_step": "на последнем шаге G должно равняться награде: получено {got}, ожидалось {want}",
        "recursion": "не выполняется G_t = r_t + gamma G_(t+1): получено {got}, ожидалось {want}",
        "more_data_lowers": "больше данных (counts + 1) снизило значение: было {got}, стало {other}",
        "unseen": "при count = 0 значение должно быть -inf, получено {got}",
        "argmax": "самое вероятное действие не допущено: маска {got}",
        "lower_ratio": "меньший threshold_ratio убрал действие: было {got}, стало {other}",
        "not_monotone": "веса убывают, хотя преимущества растут: {got}",
        "not_capped": "веса должны лежать в [0, max_weight = {cap}]: {got}",
    },
}


def plural_ru(n: int, one: str, few: str, many: str) -> str:
    """The Russian form of a word after the number ``n``: 1, 21 -> one; 2-4, 22-24 -> few; else many."""
    n = abs(int(n))
    if n % 10 == 1 and n % 100 != 11:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


class CheckFailure(AssertionError):
    """A check's verdict: the key of its message in :data:`MESSAGES` and the values to fill in."""

    def __init__(self, key: str, **params):
        super().__init__(MESSAGES["en"][key].format(**params))
        self.key, self.params = key, params

    def text(self, lang: str) -> str:
        return MESSAGES[lang][self.key].format(**self.params)


def require(condition, key: str, **params) -> None:
    """Raise :class:`CheckFailure` ``key`` unless ``condition`` holds."""
    if not condition:
        raise CheckFailure(key, **params)


def _number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    text = f"{x:.6g}"
    return text if any(c in text for c in ".e") else text + ".0"


def show(value, limit: int = 24) -> str:
    """A short, readable spelling of a kernel's argument or result (lists, numbers, bools)."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype != object):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            return repr(value)[:80]
        if arr.size == 0:
            return f"[] (shape {arr.shape})" if arr.ndim > 1 else "[]"
        if arr.size > limit:
            flat = ", ".join(_number(x) for x in arr.ravel()[:limit])
            return f"[{flat}, ...] (shape {arr.shape})"

        def nested(a):
            return _number(a) if np.ndim(a) == 0 else "[" + ", ".join(nested(x) for x in a) + "]"

        return nested(arr)
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return _number(value)
    return repr(value)[:80]


def _argument_names(fn: Callable, args: tuple, kwargs: dict) -> list[str]:
    """The parameter name of each positional argument (``argument 1``, ... when unknown)."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"argument {i + 1}" for i in range(len(args))]


def show_call(name: str, fn: Callable, args: tuple, kwargs: dict) -> str:
    """``kernel(arg=value, ...)`` as the student could type it."""
    names = _argument_names(fn, args, kwargs)
    parts = [f"{n}={show(a)}" for n, a in zip(names, args)] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


class Recorder:
    """Calls the student's kernel, remembers each call's inputs (as given) and fails a
    call that modified one of its input arrays."""

    def __init__(self, fn: Callable, name: str):
        self.fn, self.name, self.calls = fn, name, []

    def __call__(self, *args, **kwargs):
        before = [a.copy() if isinstance(a, np.ndarray) else None for a in args]
        self.calls.append((tuple(before[i] if before[i] is not None else a for i, a in enumerate(args)), dict(kwargs)))
        out = self.fn(*args, **kwargs)
        names = _argument_names(self.fn, args, kwargs)
        for arg, copy, name in zip(args, before, names):
            if copy is not None and not _same_bytes(arg, copy):
                raise CheckFailure("mutated", arg=name, before=show(copy), after=show(arg))
        return out

    def shown(self) -> list[str]:
        return [show_call(self.name, self.fn, args, kwargs) for args, kwargs in self.calls[-3:]]
