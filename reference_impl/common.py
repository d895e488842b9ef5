"""Small utilities shared by every training loop: seeding, progress bars, metrics."""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

OUTCOMES = ("goal", "trap", "timeout")


def seed_everything(seed: int) -> np.random.Generator:
    """Seed python, numpy and (if imported) torch; return a fresh numpy Generator.

    Torch is made single-threaded: on a 2-core machine it is faster for the small
    networks used here, and it removes thread-count dependent summation order.
    """
    random.seed(seed)
    np.random.seed(seed % (2**32))
    if "torch" in sys.modules:
        import torch  # seeded only when loaded: numpy-only callers never pay torch's 1.5 s import

        torch.manual_seed(seed)
        torch.set_num_threads(1)
    return np.random.default_rng(seed)


def progress_enabled() -> bool:
    flag = os.environ.get("M5_PROGRESS", "").strip().lower()
    if flag in {"0", "false", "no", "off"}:
        return False
    if flag in {"1", "true", "yes", "on"}:
        return True
    return sys.stderr.isatty()


def progress(iterable: Iterable, *, desc: str, total: int | None = None, enabled: bool | None = None):
    """Wrap ``iterable`` in a tqdm bar when progress is enabled, else return it as is."""
    if enabled is None:
        enabled = progress_enabled()
    if not enabled:
        return iterable
    from tqdm.auto import tqdm  # only when a bar is shown (tqdm.auto probes for Jupyter)

    return tqdm(iterable, desc=desc, total=total, leave=False, dynamic_ncols=True)


def summarize_episodes(returns: Sequence[float], outcomes: Sequence[str | None]) -> dict:
    """The evaluation metrics dict used by every experiment."""
    if len(returns) != len(outcomes):
        raise ValueError(f"summarize_episodes: {len(returns)} returns but {len(outcomes)} outcomes")
    counts = Counter(outcomes)
    n = len(returns)
    return {
        "mean_return": float(np.mean(returns)) if n else 0.0,
        "success_rate": counts.get("goal", 0) / n if n else 0.0,
        "outcomes": {name: int(counts.get(name, 0)) for name in OUTCOMES},
        "episodes": n,
    }


def with_kernels(defaults: Mapping[str, Callable], overrides: Mapping[str, Callable] | None) -> dict[str, Callable]:
    """``defaults`` with the entries of ``overrides`` swapped in (e.g. a student's kernels).

    Unknown names raise ValueError, so a typo never silently trains with the reference.
    """
    out = dict(defaults)
    if overrides:
        unknown = set(overrides) - set(defaults)
        if unknown:
            raise ValueError(f"`kernels` has unknown names {sorted(unknown)}; known: {sorted(defaults)}")
        out.update(overrides)
    return out
