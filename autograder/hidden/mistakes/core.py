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
import tomllib
import types
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

import reference_impl
from autograder.grade.properties import Call
from autograder.hidden.mistakes.formulas import FORMULAS

LEAD = {"en": "Likely mistake", "ru": "Вероятная ошибка"}


@dataclass(frozen=True)
class Mistake:
    kernel: str
    key: str  # e.g. "bootstraps_terminal"; named as f"{kernel}.{key}"
    explanation: dict[str, str]  # {"en": ..., "ru": ...}
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
        except Exception as exc:  # noqa: BLE001 - the reference's ValueError, or the mistake's own error
            return {"s": "raised", "exc": [c.__name__ for c in type(exc).__mro__]}
        return {"s": "ok", "v": np.asarray(value)}


CATALOG_FILE = "catalog.toml"


def load_catalog(text: str, formulas: dict[str, Callable]) -> dict[str, list[Mistake]]:
    """The mistakes of ``catalog.toml`` (its text) per kernel, in file order, each with its
    formula. Raises ValueError naming the entry for an unknown kernel or shared text, a key
    given twice, an entry without a formula or a formula without an entry."""
    data = tomllib.loads(text)
    texts = data.get("texts", {})
    catalog: dict[str, list[Mistake]] = {name: [] for name in reference_impl.KERNEL_NAMES}
    for number, entry in enumerate(data.get("mistakes", []), 1):
        kernel, key = entry.get("kernel"), entry.get("key")
        where = f"catalog entry {number} ({kernel}.{key})"
        if kernel not in catalog:
            raise ValueError(f"{where}: unknown kernel {kernel!r}")
        if any(m.key == key for m in catalog[kernel]):
            raise ValueError(f"{where}: the key is given twice")
        if "text" in entry and entry["text"] not in texts:
            raise ValueError(f"{where}: no shared text {entry['text']!r}")
        words = texts[entry["text"]] if "text" in entry else entry
        if not (isinstance(words.get("en"), str) and isinstance(words.get("ru"), str)):
            raise ValueError(f"{where}: needs an explanation in en and ru")
        if f"{kernel}.{key}" not in formulas:
            raise ValueError(f"{where}: no formula FORMULAS[{kernel + '.' + key!r}]")
        catalog[kernel].append(Mistake(kernel, key, {"en": words["en"], "ru": words["ru"]}, formulas[f"{kernel}.{key}"]))
    named = {m.name for mistakes in catalog.values() for m in mistakes}
    orphans = sorted(set(formulas) - named)
    if orphans:
        raise ValueError(f"formulas without a catalog entry: {orphans}")
    return catalog


CATALOG = load_catalog(resources.files(__package__).joinpath(CATALOG_FILE).read_text(encoding="utf-8"), FORMULAS)


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
    for name in (
        "next_q_target",
        "next_q_online",
        "next_q",
        "next_policy_probs",
        "token_logprobs",
        "diff",
        "empirical_means",
        "counts",
        "probabilities",
        "advantages",
    ):
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
