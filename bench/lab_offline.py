"""Offline-RL experiment: wall time per profile and gradient updates per second.

Prints, for the smoke profile (30 log episodes, 5 epochs, 12 evaluation episodes)
and the full profile (80, 16, 24):

* wall time of ``offline_experiment`` by stage (collect, train, evaluate, FQE) and its
  ratio to the budget (full: 120 s, smoke: 30 s; a ratio <= 1 is within budget);
* gradient updates per second of each learner (IQL counts one update per minibatch
  although it steps three networks);
* the cost of the validated reference kernels inside the loop: updates/s of naive
  DQN and CQL driven by the reference kernels vs by bare, unvalidated expressions of
  the same formulas (ratio = bare / reference; ~1 means validation is free here).

    .venv/bin/python bench/lab_offline.py [--profile smoke|full|both] [--seed 41]

Runs on its own, and bench/lab.py imports bench_profile and bench_kernel_overhead
from here for its "offline" and "kernels" rows.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from reference_impl.common import seed_everything
from reference_impl.offline import offline_experiment
from reference_impl.offline_data import collect_offline_dataset, to_arrays
from reference_impl.offline_methods import OfflineLog, train_cql, train_offline_dqn

PROFILES = {"smoke": (30, 5, 12), "full": (80, 16, 24)}
BUDGET_SECONDS = {"smoke": 30.0, "full": 120.0}


def bare_dqn_targets(rewards, terminated, next_q, gamma=0.99):
    return rewards + gamma * (1.0 - np.asarray(terminated, float)) * next_q.max(axis=1)


def bare_cql_penalty(q_values, actions):
    return (torch.logsumexp(q_values, dim=1) - q_values.gather(1, actions[:, None]).squeeze(1)).mean()


def bench_profile(name: str, seed: int) -> None:
    episodes, epochs, evaluation = PROFILES[name]
    start = time.perf_counter()
    run = offline_experiment(seed, episodes, epochs, evaluation, progress=False)
    wall = time.perf_counter() - start
    print(
        f"[{name}] offline_experiment(seed={seed}, {episodes}, {epochs}, {evaluation}): "
        f"{wall:.2f} s  (budget {BUDGET_SECONDS[name]:.0f} s, ratio {wall / BUDGET_SECONDS[name]:.2f})"
    )
    print(f"[{name}]   stages: " + ", ".join(f"{k} {v:.2f} s" for k, v in run["seconds"].items()))
    for method, metrics in run["results"].items():
        rate = metrics["updates"] / max(metrics["train_seconds"], 1e-9)
        print(f"[{name}]   {method:>16s}: {metrics['updates']:5d} updates in {metrics['train_seconds']:.2f} s = {rate:7.0f} updates/s")


def bench_kernel_overhead(seed: int, epochs: int = 4) -> None:
    seed_everything(seed)
    log = OfflineLog.from_arrays(to_arrays(collect_offline_dataset(seed, 80)[1]))
    for label, train, bare in (
        ("naive DQN", train_offline_dqn, {"dqn_targets": bare_dqn_targets}),
        ("CQL", train_cql, {"dqn_targets": bare_dqn_targets, "cql_discrete_penalty": bare_cql_penalty}),
    ):
        rates = {}
        for kind, plugged in (("reference", None), ("bare", bare)):
            t0 = time.perf_counter()
            result = train(log, 4, epochs=epochs, seed=seed, kernels=plugged)
            rates[kind] = result.updates / (time.perf_counter() - t0)
        print(
            f"[kernels] {label:>9s}: reference {rates['reference']:7.0f} updates/s, bare {rates['bare']:7.0f} updates/s, "
            f"ratio bare/reference {rates['bare'] / rates['reference']:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=("smoke", "full", "both"), default="both")
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    torch.set_num_threads(1)
    # Warm-up: the first torch calls pay one-off costs that would land on the first learner.
    offline_experiment(args.seed, 3, 1, 1, progress=False, run_fqe=False)
    for name in ("smoke", "full") if args.profile == "both" else (args.profile,):
        bench_profile(name, args.seed)
    bench_kernel_overhead(args.seed)


if __name__ == "__main__":
    main()
