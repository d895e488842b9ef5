"""A short, stable digest of what one kernel of a submission returned on the hidden inputs.

The similarity flags (:mod:`.copy_clusters`) compare two submissions' digests kernel by
kernel: equal digests mean the two kernels gave the same outputs on every input of the
corpus; different digests mean that on some input they did not. Near-identical code whose
outputs differ is the same shape with different logic (``max`` written ``min``), not a copy
of a working solution.

The digest is computed on the grader's side from the outcomes the sandboxed worker sent
back (:func:`digest`, called by :func:`.judge.grade_kernel`); no student code runs here.
What is hashed, call by call in corpus order:

* **a call that agrees with the reference** (within the grading tolerance, or raising a
  ``ValueError`` where the reference does; :func:`.properties.passing_calls`'s rule) is
  one token, "agrees": every correct kernel has the same digest whatever its float noise
  (float32, another order of summation);
* **a value that does not**: its shape, and each element rounded to :data:`DIGITS` (six)
  significant decimal digits, magnitudes below :data:`ZERO_BELOW` (1e-12) taken as zero,
  NaN, +inf and -inf each one value. Noise far below the rounding step (equivalent float64
  formulas differ by about 1e-15 relative) splits two outputs only where a value lies within
  the noise of a step's boundary. The boundaries are not at half a step but at
  :data:`BOUNDARY` (0.618…, the golden ratio's fraction) of it, on purpose: the corpus'
  values are binary fractions of few bits (1.015625 = 65/64; most computed values too), and
  scaled to six digits such a value often ends in exactly .5, where rounding half-way would
  let any noise split it; no binary fraction of few bits ends near .618. The rounding uses
  only comparisons, IEEE multiplication and division by the nearest floats to powers of ten,
  and ``floor``, so it is the same on every machine. Float32 noise (about 1e-7) on a wrong
  value may split it;
* **an error**: its exception type only (messages may hold addresses or timings);
* **a return that is not an array of numbers**: one token.

The worker's write check (did the call modify its inputs) is not an output and is left out.
A kernel that was not run to the end (missing, not implemented, the worker lost, a call past
its time limit) has no digest: None, never a made-up one. Nothing here reads a clock, so a
regrade gives the same digests, as it gives the same grades.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np

SCHEME = "m5-outputs-1"  # hashed into every digest; m5 merge never mixes two schemes (classrun.grader_identity)
DIGITS = 6  # significant decimal digits kept of a value that disagrees with the reference
BOUNDARY = (np.sqrt(5.0) - 1) / 2  # where in a step rounding goes up: far from the .5 of few-bit binary fractions
ZERO_BELOW = 1e-12  # noise around zero (1e-17 against 0.0) is zero
DIGEST_CHARS = 16
_HEX = re.compile(f"[0-9a-f]{{{DIGEST_CHARS}}}")
# 10**m for m = 0..308, each the float nearest to it (exact up to 10**22): the rounding uses
# only these, comparisons and IEEE multiplication and division, never a library's pow or log.
_POW10 = np.array([float(10**m) for m in range(309)])
_LOW, _HIGH = -12, 308  # decades of the values kept (ZERO_BELOW up to the largest float)
# Exponents no finite value has: the non-finite values.
_NAN, _POS_INF, _NEG_INF = 1000, 1001, 1002
# One status byte per call.
_AGREES, _VALUE, _RAISED, _BAD_RETURN = 0, 1, 2, 3


def _power(k: np.ndarray) -> np.ndarray:
    """10**k for integer k in -308..308 (as 1 / 10**-k below zero: the comparisons below use it)."""
    return np.where(k >= 0, _POW10[np.abs(k)], 1.0 / _POW10[np.abs(k)])


def rounded(values) -> np.ndarray:
    """``values`` (any real array) as int64 pairs (digits, decimal exponent): each element
    rounded to :data:`DIGITS` significant decimal digits, up from :data:`BOUNDARY` of a step
    (see the module docstring)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    finite = np.isfinite(x)
    size = np.abs(np.where(finite, x, 0.0))
    kept = size >= ZERO_BELOW
    with np.errstate(divide="ignore"):
        decade = np.clip(np.floor(np.log10(np.where(kept, size, 1.0))), _LOW, _HIGH).astype(np.int64)
    # log10 may be off by one ulp near a power of ten, differently on another machine: settle
    # the decade by comparing with the powers themselves.
    decade += (decade < _HIGH) & (size >= _power(np.minimum(decade + 1, _HIGH)))
    decade -= (decade > _LOW) & (size < _power(decade))
    shift = DIGITS - 1 - decade  # scale the value to DIGITS digits before the point
    scaled = np.where(shift >= 0, x * _POW10[np.clip(shift, 0, 308)], x / _POW10[np.clip(-shift, 0, 308)])
    digits = np.floor(np.where(kept, scaled, 0.0) + (1 - BOUNDARY))
    carry = np.abs(digits) >= 10**DIGITS  # 999999.7 rounds to 1000000: one decade up
    digits = np.where(carry, digits / 10, digits).astype(np.int64)
    decade = np.where(kept, decade + carry, 0)
    nan = np.isnan(x)
    decade[~finite] = np.where(nan[~finite], _NAN, np.where(x[~finite] > 0, _POS_INF, _NEG_INF))
    return np.stack([digits, decade], axis=-1)


def _section(h, data: bytes) -> None:
    h.update(len(data).to_bytes(8, "little"))
    h.update(data)


def digest(kernel: str, outcomes: list[dict], agreeing: Iterable[int]) -> str | None:
    """The digest (:data:`DIGEST_CHARS` hex characters) of one kernel's ``outcomes`` (the
    worker's, one per corpus call, in corpus order); ``agreeing``: the indices of the calls
    that agree with the reference. None when a call did not run to the end (a timeout, or
    an outcome never sent)."""
    agree = set(agreeing)
    status = np.empty(len(outcomes), dtype=np.uint8)
    dims: list[int] = []
    values: list[np.ndarray] = []
    errors: list[str] = []
    for i, outcome in enumerate(outcomes):
        kind = outcome.get("s")
        if i in agree:
            status[i] = _AGREES
        elif kind == "ok":
            value = np.asarray(outcome["v"])
            status[i] = _VALUE
            dims += [value.ndim, *value.shape]
            values.append(value.astype(np.float64, copy=False).ravel())
        elif kind == "raised":
            status[i] = _RAISED
            names = outcome.get("exc") or ["?"]
            errors.append(str(names[0]))
        elif kind == "bad_return":
            status[i] = _BAD_RETURN
        else:  # timeout, idle, unsent: how far it got depends on time
            return None
    h = hashlib.sha256()
    _section(h, f"{SCHEME}\0{kernel}".encode())
    _section(h, status.tobytes())
    _section(h, np.asarray(dims, dtype="<i8").tobytes())
    _section(h, rounded(np.concatenate(values) if values else np.zeros(0)).astype("<i8").tobytes())
    _section(h, "\0".join(errors).encode("utf-8", "backslashreplace"))
    return h.hexdigest()[:DIGEST_CHARS]


def well_formed(value) -> bool:
    """Whether ``value`` is a record's ``outputs``: {kernel name: a digest or None}."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and k and (v is None or (isinstance(v, str) and _HEX.fullmatch(v) is not None)) for k, v in value.items()
    )
