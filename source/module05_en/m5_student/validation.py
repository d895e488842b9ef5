# Generated from reference_impl/validation.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Input checks shared by the kernels.

Every check raises :class:`KernelInputError` (a ``ValueError``) whose message starts
with ``"<kernel>: `<argument>` ..."`` so a student sees which call and which argument
is wrong, instead of a numpy broadcasting error deep inside an expression.

The finiteness checks take a fast path (one reduction, no temporary array) and only
look element by element when that reduction is not finite, so validated kernels stay
close to the speed of the bare numpy expression on large batches.
"""
from __future__ import annotations

import math
import numbers

import numpy as np


class KernelInputError(ValueError):
    """Bad input to a kernel; the message names the kernel and the argument."""


def fail(kernel: str, name: str, problem: str) -> KernelInputError:
    return KernelInputError(f"{kernel}: `{name}` {problem}")


def float_array(value, name: str, kernel: str) -> np.ndarray:
    """``value`` as a float64 array (no copy when it already is one)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists, odd objects
        raise fail(kernel, name, f"is not a rectangular array of numbers ({exc})") from None
    if arr.dtype == object and arr.size and all(isinstance(v, numbers.Real) for v in arr.flat):
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "c":
        raise fail(kernel, name, "must be real, got complex numbers")
    if arr.dtype.kind not in "biuf":
        raise fail(kernel, name, f"must hold numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def flag_array(value, name: str, kernel: str) -> np.ndarray:
    """A 0/1 or bool array as bool; any other value is an error."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iuf":
        raise fail(kernel, name, f"must hold bools or 0/1 numbers, got dtype {arr.dtype}")
    if not ((arr == 0) | (arr == 1)).all():
        bad = arr[(arr != 0) & (arr != 1)].flat[0]
        raise fail(kernel, name, f"must hold only 0/1 or bools, found {bad.item()!r}")
    return arr != 0


def require_ndim(arr: np.ndarray, name: str, kernel: str, ndims: tuple[int, ...], layout: str) -> None:
    if arr.ndim not in ndims:
        raise fail(kernel, name, f"must have shape {layout}, got shape {arr.shape}")


def require_same_length(arr: np.ndarray, name: str, kernel: str, length: int, other: str) -> None:
    if arr.shape[0] != length:
        raise fail(kernel, name, f"has {arr.shape[0]} rows but `{other}` has {length}")


def require_actions_axis(arr: np.ndarray, name: str, kernel: str) -> None:
    if arr.shape[-1] == 0:
        raise fail(kernel, name, f"has an empty action axis (shape {arr.shape})")


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
        raise fail(kernel, name, "contains NaN or infinity")


def finite_scalar(value, name: str, kernel: str) -> float:
    is_0d_array = isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"
    if isinstance(value, (bool, np.bool_)) or not (isinstance(value, numbers.Real) or is_0d_array):
        raise fail(kernel, name, f"must be a real number, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise fail(kernel, name, f"must be finite, got {out}")
    return out


def discount(gamma, kernel: str) -> float:
    g = finite_scalar(gamma, "gamma", kernel)
    if not 0.0 <= g <= 1.0:
        raise fail(kernel, "gamma", f"must lie in [0, 1], got {g}")
    return g


def action_indices(value, name: str, kernel: str, n_actions: int) -> np.ndarray:
    """Integer action indices in [0, n_actions); integral floats are accepted."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise fail(kernel, name, f"must hold integer action indices, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or (arr != np.floor(arr)).any():
            raise fail(kernel, name, "must hold integer action indices, found a non-integer value")
    if arr.size and ((arr < 0).any() or (arr >= n_actions).any()):
        bad = arr[(arr < 0) | (arr >= n_actions)].flat[0]
        raise fail(kernel, name, f"holds action {bad.item()!r} outside [0, {n_actions})")
    return arr.astype(np.intp, copy=False)
