"""Input checks shared by the kernels.

Every check raises :class:`KernelInputError` (a ``ValueError``) whose message starts
with ``"<kernel>: `<argument>` ..."`` so a student sees which call and which argument
is wrong, instead of a numpy broadcasting error deep inside an expression. The rest
of the message is in the language of the student kit's notebooks (:data:`PROBLEMS`).

The finiteness checks take a fast path (one reduction, no temporary array) and only
look element by element when that reduction is not finite, so validated kernels stay
close to the speed of the bare numpy expression on large batches.
"""

from __future__ import annotations

import math
import numbers
import sys

import numpy as np

# What is wrong with an argument, by language; the kit's notebooks choose (see :func:`problem`).
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
    """Bad input to a kernel; the message names the kernel and the argument."""


def language() -> str:
    """The language of the messages: the student kit's (its ``notebook_language()``), else English."""
    package = sys.modules.get(__name__.rpartition(".")[0])
    find = getattr(package, "notebook_language", None)
    found = find() if callable(find) else "en"
    return found if found in PROBLEMS else "en"


def problem(key: str, **params) -> str:
    """The text of problem ``key`` of :data:`PROBLEMS` in :func:`language`, filled in."""
    return PROBLEMS[language()][key].format(**params)


def fail(kernel: str, name: str, problem: str) -> KernelInputError:
    """The error for argument ``name`` of ``kernel``: "<kernel>: `<name>` <problem>"."""
    return KernelInputError(f"{kernel}: `{name}` {problem}")


def float_array(value, name: str, kernel: str) -> np.ndarray:
    """``value`` as a float64 array (no copy when it already is one)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists, odd objects
        raise fail(kernel, name, problem("not_rectangular", error=exc)) from None
    if arr.dtype == object and arr.size and all(isinstance(v, numbers.Real) for v in arr.flat):
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "c":
        raise fail(kernel, name, problem("complex"))
    if arr.dtype.kind not in "biuf":
        raise fail(kernel, name, problem("not_numbers", dtype=arr.dtype))
    return arr.astype(np.float64, copy=False)


def flag_array(value, name: str, kernel: str) -> np.ndarray:
    """A 0/1 or bool array as bool; any other value is an error."""
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
    """True when no entry is NaN or infinite (one reduction, no temporary array)."""
    if arr.size == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        if math.isfinite(arr.sum()):
            return True
    return bool(np.isfinite(arr).all())  # the sum may overflow although every entry is finite


def require_finite(arr: np.ndarray, name: str, kernel: str, used: np.ndarray | None = None) -> None:
    """No NaN or infinity among the entries that are used.

    ``used`` is a boolean mask over the leading axes (e.g. non-terminal rows); entries
    outside it may hold anything because the kernel never reads them.
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
    """Integer action indices in [0, n_actions); integral floats are accepted."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise fail(kernel, name, problem("not_actions_dtype", dtype=arr.dtype))
    if arr.dtype.kind == "f" and (not np.isfinite(arr).all() or (arr != np.floor(arr)).any()):
        raise fail(kernel, name, problem("not_integer"))
    if arr.size and ((arr < 0).any() or (arr >= n_actions).any()):
        bad = arr[(arr < 0) | (arr >= n_actions)].flat[0]
        raise fail(kernel, name, problem("action_range", bad=repr(bad.item()), n=n_actions))
    return arr.astype(np.intp, copy=False)
