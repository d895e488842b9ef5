"""Validated reference kernels vs the bare numpy expression, side by side.

Each kernel runs on B = 10**6 rows (A = 4 actions) next to the unvalidated numpy
expression that computes the same numbers; the ratio is the price of validation,
exact overflow-free formulas and the output contract. Goal: <= 1.5x everywhere. The
discounted return-to-go's bare column is the sequential recursion as a Python loop:
there the ratio says how much the vectorised blocked scan gains over it.

    .venv/bin/python bench/kernels.py [--rows N] [--repeats K]
"""

from __future__ import annotations

import argparse
import os
import timeit

import numpy as np

import reference_impl as ref


def cases(b: int, a: int = 4):
    rng = np.random.default_rng(0)
    r = rng.normal(size=b)
    done = rng.random(b) < 0.1
    q = rng.normal(size=(b, a))
    q2 = rng.normal(size=(b, a))
    pi = rng.random((b, a))
    pi /= pi.sum(axis=1, keepdims=True)
    logp = -rng.random(b)
    mask = rng.random(b) < 0.7
    acts = rng.integers(0, a, size=b)
    counts = rng.integers(0, 50, size=b).astype(float)
    rows = np.arange(b)

    def bare_cql():
        m = q.max(1)
        return float(np.mean(m + np.log(np.exp(q - m[:, None]).sum(1)) - q[rows, acts]))

    def bare_pessimistic():
        with np.errstate(divide="ignore"):
            return np.where(counts > 0, r - 1.0 / np.sqrt(counts), -np.inf)

    def bare_rtg_discounted():
        out, run = np.empty(b), 0.0
        for t, x in zip(range(b - 1, -1, -1), r[::-1].tolist()):
            run = x + 0.99 * run
            out[t] = run
        return out

    return [
        ("dqn_targets", lambda: ref.dqn_targets(r, done, q, 0.99), lambda: r + 0.99 * (1.0 - done) * q.max(1)),
        (
            "double_dqn_targets",
            lambda: ref.double_dqn_targets(r, done, q, q2, 0.99),
            lambda: r + 0.99 * (1.0 - done) * q2[rows, q.argmax(1)],
        ),
        ("masked_token_nll", lambda: ref.masked_token_nll(logp, mask), lambda: float(-(logp * mask).sum() / mask.sum())),
        ("cql_discrete_penalty", lambda: ref.cql_discrete_penalty(q, acts), bare_cql),
        ("expectile_loss", lambda: ref.expectile_loss(r, 0.7), lambda: float(np.mean(np.abs(0.7 - (r < 0)) * r**2))),
        ("return_to_go (gamma=1)", lambda: ref.return_to_go(r), lambda: np.cumsum(r[::-1])[::-1]),
        ("return_to_go (gamma=0.99)", lambda: ref.return_to_go(r, 0.99), bare_rtg_discounted),
        ("pessimistic_values", lambda: ref.pessimistic_values(r, counts), bare_pessimistic),
        ("behavior_support_mask", lambda: ref.behavior_support_mask(pi, 0.35), lambda: pi >= 0.35 * pi.max(-1, keepdims=True)),
        ("fqe_targets", lambda: ref.fqe_targets(r, done, q, pi, 0.99), lambda: r + 0.99 * (1.0 - done) * (pi * q).sum(1)),
        ("iql_advantage_weights", lambda: ref.iql_advantage_weights(r, 3.0, 100.0), lambda: np.minimum(np.exp(3.0 * r), 100.0)),
    ]


def best_of(fn, repeats: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeats))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"B = {args.rows:,} rows, A = 4; best of {args.repeats} runs each\n")
    print(f"| {'kernel':<26} | {'reference (ms)':>14} | {'bare numpy (ms)':>15} | {'ratio':>5} |")
    print(f"|{'-' * 28}|{'-' * 16}:|{'-' * 17}:|{'-' * 6}:|")
    worst, scan = 0.0, None
    for name, kernel, bare in cases(args.rows):
        t_kernel, t_bare = best_of(kernel, args.repeats), best_of(bare, args.repeats)
        ratio = t_kernel / t_bare
        worst = max(worst, ratio)
        if name == "return_to_go (gamma=0.99)":
            scan = (t_kernel, t_bare)
        print(f"| {name:<26} | {t_kernel * 1e3:>14.2f} | {t_bare * 1e3:>15.2f} | {ratio:>5.2f} |")
    print(f"\nworst ratio: {worst:.2f} (goal <= 1.5)")
    if scan:  # its bare column is the sequential recursion, a Python loop
        print(
            f"discounted return_to_go: blocked numpy scan {scan[0] * 1e3:.1f} ms vs the Python loop "
            f"{scan[1] * 1e3:.1f} ms ({scan[1] / scan[0]:.1f}x faster); load average {os.getloadavg()[0]:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
