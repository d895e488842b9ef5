"""The mistake catalog's core: what a mistake is, and the validated inputs it reads.

A :class:`Mistake` is a wrong kernel written on the grader's side: trusted numpy code
that embodies one misconception, with an explanation in English and Russian. It runs
only on the corpus inputs, never on anything a student wrote. It first runs the
reference kernel on the same arguments, so it rejects invalid input exactly as the
contract says; then it computes its wrong formula on the validated arrays
(:func:`prepare`).
"""
from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import reference_impl
from autograder.grade.properties import Call

LEAD = {"en": "Likely mistake", "ru": "Вероятная ошибка"}


@dataclass(frozen=True)
class Mistake:
    kernel: str
    key: str                            # e.g. "bootstraps_terminal"; named as f"{kernel}.{key}"
    explanation: dict[str, str]         # {"en": ..., "ru": ...}
    formula: Callable[[types.SimpleNamespace], object]

    @property
    def name(self) -> str:
        return f"{self.kernel}.{self.key}"

    def outcome(self, call: Call) -> dict:
        """What this wrong kernel gives on one call, as the worker would report it."""
        try:
            inputs = prepare(self.kernel, call)
            with np.errstate(all="ignore"):
                value = self.formula(inputs)
        except Exception as exc:  # the reference's ValueError, or the mistake's own error
            return {"s": "raised", "exc": [c.__name__ for c in type(exc).__mro__]}
        return {"s": "ok", "v": np.asarray(value)}


CATALOG: dict[str, list[Mistake]] = {name: [] for name in reference_impl.KERNEL_NAMES}


def _mistake(kernel: str, key: str, en: str, ru: str):
    def register(formula):
        CATALOG[kernel].append(Mistake(kernel, key, {"en": en, "ru": ru}, formula))
        return formula
    return register


# ---------------------------------------------------------------- validated inputs
def _bound(kernel: str, call: Call) -> dict:
    """The call's arguments by parameter name, defaults filled in, and the names given."""
    bound = inspect.signature(getattr(reference_impl, kernel)).bind(*call.args, **call.kwargs)
    given = set(bound.arguments)
    bound.apply_defaults()
    return bound.arguments, given


def _floats(x):
    return np.asarray(x, dtype=np.float64)


def prepare(kernel: str, call: Call) -> types.SimpleNamespace:
    """Run the reference (it raises ValueError on invalid input), then name the arrays."""
    getattr(reference_impl, kernel)(*call.args, **call.kwargs)
    a, given = _bound(kernel, call)
    x = types.SimpleNamespace(args=a, explicit=given)
    if "rewards" in a:
        x.raw_r = np.asarray(a["rewards"])
        x.r = _floats(a["rewards"])
    if "terminated" in a:
        x.raw_d = np.asarray(a["terminated"])
        x.d = x.raw_d.astype(bool)
        x.live = ~x.d
    if "gamma" in a:
        x.g = float(a["gamma"])
    for name in ("next_q_target", "next_q_online", "next_q", "next_policy_probs", "token_logprobs", "diff",
                 "empirical_means", "counts", "probabilities", "advantages"):
        if name in a:
            setattr(x, name, _floats(a[name]))
    if kernel == "masked_token_nll":
        x.raw_mask = np.asarray(a["mask"])
        x.m = x.raw_mask.astype(bool)
    if kernel == "cql_discrete_penalty":
        x.q = np.atleast_2d(_floats(a["q_values"]))
        x.act = np.reshape(np.asarray(a["actions"]).astype(np.intp), -1)
        x.taken = x.q[np.arange(len(x.act)), x.act]
    return x


def _masked(x, values):
    """Bootstrap only the live rows; terminal rows give 0 whatever ``values`` holds there."""
    return np.where(x.d, 0.0, values)


def _lse(q, axis=1):
    top = q.max(axis=axis, keepdims=True)
    return np.squeeze(top, axis) + np.log(np.exp(q - top).sum(axis=axis))


