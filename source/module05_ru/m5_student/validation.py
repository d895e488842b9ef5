# Generated from reference_impl/validation.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Проверки входов, общие для ядер.

Каждая проверка выбрасывает :class:`KernelInputError` (это ``ValueError``), сообщение
которой начинается с ``"<kernel>: `<argument>` ..."``: студент видит, какой вызов и
какой аргумент неверны, а не ошибку согласования форм numpy глубоко внутри выражения.
Остальная часть сообщения написана на языке ноутбуков студенческого набора (:data:`PROBLEMS`).

Проверки конечности идут по быстрому пути (одна редукция, без временного массива) и
смотрят поэлементно, только когда редукция не конечна, поэтому ядра с проверками
остаются близки по скорости к голому выражению numpy на больших пакетах.
"""
from __future__ import annotations

import math
import numbers
import sys

import numpy as np

# Что не так с аргументом, по языкам; язык выбирают ноутбуки набора (см. :func:`problem`).
PROBLEMS = {
    "en": {
        "not_rectangular": "is not a rectangular array of numbers ({error})",
        "complex": "must be real, got complex numbers",
        "not_numbers": "must hold numbers, got dtype {dtype}",
        "not_flags_dtype": "must hold bools or 0/1 numbers, got dtype {dtype}",
        "not_flags": "must hold only 0/1 or bools, found {bad}",
        "shape": "must have shape {layout}, got shape {shape}",
        "rows": "has {rows} rows but `{other}` has {length}",
        "no_actions": "has an empty action axis (shape {shape})",
        "not_finite": "contains NaN or infinity",
        "not_real": "must be a real number, got {value}",
        "not_finite_scalar": "must be finite, got {value}",
        "outside": "must lie in [0, 1], got {value}",
        "not_actions_dtype": "must hold integer action indices, got dtype {dtype}",
        "not_integer": "must hold integer action indices, found a non-integer value",
        "action_range": "holds action {bad} outside [0, {n})",
    },
    "ru": {
        "not_rectangular": "не является прямоугольным массивом чисел ({error})",
        "complex": "должен быть вещественным, получены комплексные числа",
        "not_numbers": "должен содержать числа, получен dtype {dtype}",
        "not_flags_dtype": "должен содержать bool или числа 0/1, получен dtype {dtype}",
        "not_flags": "должен содержать только 0/1 или bool, найдено {bad}",
        "shape": "должен иметь форму {layout}, получена форма {shape}",
        "rows": "содержит строк: {rows}, а `{other}` — {length}",
        "no_actions": "имеет пустую ось действий (форма {shape})",
        "not_finite": "содержит NaN или бесконечность",
        "not_real": "должен быть вещественным числом, получено {value}",
        "not_finite_scalar": "должен быть конечным, получено {value}",
        "outside": "должен лежать в [0, 1], получено {value}",
        "not_actions_dtype": "должен содержать целые номера действий, получен dtype {dtype}",
        "not_integer": "должен содержать целые номера действий, найдено нецелое значение",
        "action_range": "содержит действие {bad} вне [0, {n})",
    },
}


class KernelInputError(ValueError):
    """Неверный вход ядра; сообщение называет ядро и аргумент."""


def language() -> str:
    """Язык сообщений: язык студенческого набора (его ``notebook_language()``), иначе английский."""
    package = sys.modules.get(__name__.rpartition(".")[0])
    find = getattr(package, "notebook_language", None)
    found = find() if callable(find) else "en"
    return found if found in PROBLEMS else "en"


def problem(key: str, **params) -> str:
    """Текст проблемы ``key`` из :data:`PROBLEMS` на языке :func:`language`, с подставленными значениями."""
    return PROBLEMS[language()][key].format(**params)


def fail(kernel: str, name: str, problem: str) -> KernelInputError:
    """Ошибка аргумента ``name`` ядра ``kernel``: "<kernel>: `<name>` <problem>"."""
    return KernelInputError(f"{kernel}: `{name}` {problem}")


def float_array(value, name: str, kernel: str) -> np.ndarray:
    """``value`` как массив float64 (без копии, если он уже такой)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # вложенные списки разной длины, странные объекты
        raise fail(kernel, name, problem("not_rectangular", error=exc)) from None
    if arr.dtype == object and arr.size and all(isinstance(v, numbers.Real) for v in arr.flat):
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "c":
        raise fail(kernel, name, problem("complex"))
    if arr.dtype.kind not in "biuf":
        raise fail(kernel, name, problem("not_numbers", dtype=arr.dtype))
    return arr.astype(np.float64, copy=False)


def flag_array(value, name: str, kernel: str) -> np.ndarray:
    """Массив 0/1 или bool как bool; любое другое значение — ошибка."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iuf":
        raise fail(kernel, name, problem("not_flags_dtype", dtype=arr.dtype))
    if not ((arr == 0) | (arr == 1)).all():
        bad = arr[(arr != 0) & (arr != 1)].flat[0]
        raise fail(kernel, name, problem("not_flags", bad=repr(bad.item())))
    return arr != 0


def require_ndim(arr: np.ndarray, name: str, kernel: str, ndims: tuple[int, ...], layout: str) -> None:
    if arr.ndim not in ndims:
        raise fail(kernel, name, problem("shape", layout=layout, shape=arr.shape))


def require_same_length(arr: np.ndarray, name: str, kernel: str, length: int, other: str) -> None:
    if arr.shape[0] != length:
        raise fail(kernel, name, problem("rows", rows=arr.shape[0], other=other, length=length))


def require_actions_axis(arr: np.ndarray, name: str, kernel: str) -> None:
    if arr.shape[-1] == 0:
        raise fail(kernel, name, problem("no_actions", shape=arr.shape))


def all_finite(arr: np.ndarray) -> bool:
    """True, если нет ни NaN, ни бесконечности (одна редукция, без временного массива)."""
    if arr.size == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        if math.isfinite(arr.sum()):
            return True
    return bool(np.isfinite(arr).all())  # сумма может переполниться, хотя все элементы конечны


def require_finite(arr: np.ndarray, name: str, kernel: str, used: np.ndarray | None = None) -> None:
    """Среди используемых элементов нет NaN и бесконечностей.

    ``used`` — булева маска по ведущим осям (например, нетерминальные строки); элементы
    вне неё могут содержать что угодно, потому что ядро их не читает.
    """
    if all_finite(arr):
        return
    values = arr if used is None else arr[used]
    if not np.isfinite(values).all():
        raise fail(kernel, name, problem("not_finite"))


def finite_scalar(value, name: str, kernel: str) -> float:
    is_0d_array = isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"
    if isinstance(value, (bool, np.bool_)) or not (isinstance(value, numbers.Real) or is_0d_array):
        raise fail(kernel, name, problem("not_real", value=repr(value)))
    out = float(value)
    if not math.isfinite(out):
        raise fail(kernel, name, problem("not_finite_scalar", value=out))
    return out


def discount(gamma, kernel: str) -> float:
    g = finite_scalar(gamma, "gamma", kernel)
    if not 0.0 <= g <= 1.0:
        raise fail(kernel, "gamma", problem("outside", value=g))
    return g


def action_indices(value, name: str, kernel: str, n_actions: int) -> np.ndarray:
    """Целые номера действий из [0, n_actions); целые значения типа float допускаются."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise fail(kernel, name, problem("not_actions_dtype", dtype=arr.dtype))
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or (arr != np.floor(arr)).any():
            raise fail(kernel, name, problem("not_integer"))
    if arr.size and ((arr < 0).any() or (arr >= n_actions).any()):
        bad = arr[(arr < 0) | (arr >= n_actions)].flat[0]
        raise fail(kernel, name, problem("action_range", bad=repr(bad.item()), n=n_actions))
    return arr.astype(np.intp, copy=False)
