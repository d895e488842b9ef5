"""Naming the likely mistake: the catalog entry that best explains a student's failing calls.

A student's code rarely differs from a catalog mistake in the misconception alone: it
may skip input checks, raise another error on an edge input, read padding with
``0 * -inf``, or compute in float32. So a mistake is judged only on the *value calls*:
the calls of the value properties (not the edge inputs) where the reference returns a
value, i.e. valid input. There it must

* reproduce at least :data:`MIN_SHARE` of the student's failing calls on which it
  returns a value itself (a call where the student's value is NaN or infinite and the
  reference's is finite is a numeric breakdown of its own, counted only when the
  mistake reproduces it), these being at least half of the failing calls, and
* contradict none of the calls the student got right.

Of the mistakes that qualify, the one that reproduces the most failing calls is named
(then the higher share, then catalog order), with how many it explains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder.grade.properties import compare, same_values
from autograder.hidden.mistakes.core import CATALOG, Mistake

MIN_SHARE = 0.9

# Properties about edge inputs (invalid ones, empty batches): a mistake in the formula
# says nothing about them, and a kernel may get them wrong on its own.
EDGE_PROPERTIES = ("bad_input", "empty_batch")


@dataclass(frozen=True)
class Diagnosis:
    """A named mistake and what it explains: ``explained`` of the ``failing`` value calls
    it was judged on."""

    mistake: Mistake
    explained: int
    failing: int

    @property
    def name(self) -> str:
        return self.mistake.name

    @property
    def explanation(self) -> dict[str, str]:
        return self.mistake.explanation


_OUTCOMES: dict[tuple[str, int], tuple] = {}


def outcome_at(mistake: Mistake, kc, index: int) -> dict:
    """The mistake's outcome on call ``index`` of a corpus, computed at most once per process."""
    key = (mistake.name, id(kc))
    if key not in _OUTCOMES or _OUTCOMES[key][0] is not kc:  # holding kc keeps its id unique
        _OUTCOMES[key] = (kc, {})
    done = _OUTCOMES[key][1]
    if index not in done:
        done[index] = mistake.outcome(kc.calls[index])
    return done[index]


def judged_calls(kc) -> list[int]:
    """Indices of the calls whose values matter: every case except the edge inputs."""
    return [i for case in kc.cases if case.prop.key not in EDGE_PROPERTIES for i in range(case.first_call, case.first_call + case.n_calls)]


def value_calls(kc, outcomes: list[dict], passed: set[int] | None = None) -> tuple[list[int], list[int]]:
    """(failing, passing): the judged calls where the reference and the student both
    return a value, split by whether the student's value agrees with the reference.

    ``passed``, if given, lists calls already known to agree (a shortcut only).
    """
    failing, passing = [], []
    for i in judged_calls(kc):
        if kc.expected[i].get("s") != "ok" or outcomes[i].get("s") != "ok":
            continue
        agrees = (passed is not None and i in passed) or compare(outcomes[i], kc.expected[i]) is None
        (passing if agrees else failing).append(i)
    return failing, passing


def broken(got: dict, want: dict) -> bool:
    """The student's value is NaN or infinite somewhere the reference's is finite."""
    g, w = np.asarray(got["v"]), np.asarray(want["v"])
    if g.dtype.kind not in "fc" or g.size != w.size:
        return False
    with np.errstate(all="ignore"):
        return bool((~np.isfinite(g.reshape(w.shape)) & np.isfinite(w.astype(np.float64))).any())


FIRST_CHUNK = 8  # calls judged together at first; each next chunk twice as many


def reproduced(mistake: Mistake, kc, outcomes: list[dict], calls: list[int]):
    """For each of ``calls`` (where the student returned a value), in order: (call, None)
    where the mistake raises, else (call, whether the mistake's value is the student's:
    :func:`same_outcome` at the reference's scale). Judged a chunk at a time
    (:func:`same_values`), growing, so a caller that stops early computes little of the
    mistake's outcomes."""
    start, size = 0, FIRST_CHUNK
    while start < len(calls):
        chunk = calls[start : start + size]
        valued = [i for i in chunk if outcome_at(mistake, kc, i).get("s") == "ok"]
        pairs = [(outcomes[i]["v"], outcome_at(mistake, kc, i)["v"], kc.expected[i].get("scale")) for i in valued]
        same = dict(zip(valued, same_values(pairs).tolist()))
        yield from ((i, same.get(i)) for i in chunk)
        start, size = start + size, 2 * size


def explains(mistake: Mistake, kc, outcomes: list[dict], failing: list[int], passing: list[int]) -> Diagnosis | None:
    """The mistake's diagnosis if it explains enough failing calls and contradicts no
    passing one, else None. Stops as soon as the share cannot be reached."""
    allowed_misses = int((1.0 - MIN_SHARE) * len(failing) + 1e-9)
    explained = counted = 0
    for i, same in reproduced(mistake, kc, outcomes, failing):
        if same is None:  # the mistake raises here: says nothing
            continue
        if same:
            explained += 1
        elif broken(outcomes[i], kc.expected[i]):
            continue  # the student's own numeric breakdown: not counted against the mistake
        counted += 1
        if counted - explained > allowed_misses:
            return None
    if explained < MIN_SHARE * counted or 2 * counted < len(failing):
        return None  # too few explained, or judged on too few of the failing calls (the rest raise or break)
    if any(same is False for _, same in reproduced(mistake, kc, outcomes, passing)):
        return None
    return Diagnosis(mistake, explained, counted)


def diagnose_mistake(kc, outcomes: list[dict], passed: set[int] | None = None) -> Diagnosis | None:
    """The catalog mistake that best explains the student's failing value calls, if any.

    ``kc`` is the kernel's corpus; ``outcomes`` are the student's outcomes of its calls;
    ``passed``, if known, the calls already found to agree with the reference (a
    shortcut: the answer is the same without it). Every catalog entry differs from the
    reference on some value call (tests/autograder/hidden/test_mistakes.py checks it), so a
    kernel that agrees with the reference on every value call is never named.
    """
    failing, passing = value_calls(kc, outcomes, passed)
    if not failing:
        return None
    found = [d for d in (explains(m, kc, outcomes, failing, passing) for m in CATALOG[kc.kernel]) if d is not None]
    if not found:
        return None
    return max(found, key=lambda d: (d.explained, d.explained / d.failing, -found.index(d)))


def likely_mistake(kc, outcomes: list[dict], passed: set[int] | None = None) -> Mistake | None:
    """The mistake :func:`diagnose_mistake` names, without its counts."""
    diagnosis = diagnose_mistake(kc, outcomes, passed)
    return None if diagnosis is None else diagnosis.mistake
