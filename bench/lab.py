"""Lab benchmark: the single entry point for the Module 5 lab's timings.

    .venv/bin/python bench/lab.py [--parts env,dqn,pair,offline,kernels,smoke,full] [--seed 41]

Prints one table, each row a measurement and, where the course sets one, its budget
and the ratio measured / budget (<= 1 is within budget):

* ``env``: KeyDoorGrid steps per second (uniform random actions, resets included);
* ``dqn``: online DQN gradient updates per second (full-profile DQN run, seed 5);
* ``pair``: wall time of the DAgger run and of the DQN + Double DQN pair, smoke and full profile;
* ``offline`` / ``kernels``: the offline-suite benchmark of ``bench/lab_offline.py``
  (imported, not copied): wall time per profile and updates/s per learner, and the
  cost of validated kernels inside the training loop;
* ``smoke`` / ``full``: the whole lab (``m5 lab``, all sections, one seed) at each
  profile (budgets 60 s and 600 s on 2 cores), and from the full run two estimates of
  the committed 10-seed study (every seeded section ten times): in one process, and as
  ``make pin`` runs it, ``--jobs 2`` (the seeded sections' seconds shared by two workers;
  budget 600 s). The committed study's own wall time is in
  docs/lab-results/claims.json (``wall_seconds``).

Wall time depends on what else runs on the machine, so CPU time of this process is
printed next to it: the lab is single-threaded, so on an idle machine wall ~ CPU.

Figures: README.md ("Lab: bench/lab.py"); earlier runs in bench/HISTORY.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package

from lab_offline import bench_kernel_overhead, bench_profile

from reference_impl.imitation import dagger_experiment
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.lab.cli import parse_options, run_lab
from reference_impl.lab.profiles import PROFILE_PARAMS
from reference_impl.lab.runners import UNSEEDED
from reference_impl.online_dqn import train_online_dqn

PARTS = ("env", "dqn", "pair", "offline", "kernels", "smoke", "full")
STUDY_SEEDS = 10  # the committed report's seeds (docs/lab-results)
STUDY_JOBS = 2  # make pin's --jobs
ONE_PROCESS = f"{STUDY_SEEDS}-seed study, one process (estimate)"
TWO_WORKERS = f"{STUDY_SEEDS}-seed study, --jobs {STUDY_JOBS} (estimate)"
BUDGETS = {"lab smoke": 60.0, "lab full": 600.0, TWO_WORKERS: 600.0}
ROWS: list[tuple[str, float, str, float | None]] = []  # (what, value, unit, budget)


def record(what: str, value: float, unit: str, cpu: float | None = None) -> None:
    ROWS.append((what, value, unit, cpu))


class Clock:
    """Wall and process CPU time of a block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def bench_env(steps: int = 50_000, seed: int = 0) -> None:
    env = KeyDoorGrid(seed=seed)
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, env.action_dim, size=steps)
    env.reset(seed=seed)
    with Clock() as c:
        for a in actions.tolist():
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                env.reset()
    record("KeyDoorGrid env steps/s", steps / c.wall, "steps/s")


def bench_dqn_pair(measure_rate: bool, measure_pair: bool) -> None:
    """DAgger and DQN-pair wall times at the smoke and full profiles; DQN updates/s (full)."""
    for name in ("smoke", "full") if measure_pair else ("full",):
        params = PROFILE_PARAMS[name]
        if measure_pair:
            d = params.dagger
            with Clock() as c:
                dagger_experiment(d.seed, d.expert_episodes, d.rounds, d.learner_episodes_per_round, d.epochs, progress=False)
            record(f"DAgger run ({name} profile)", c.wall, "s", c.cpu)
        q = params.dqn
        with Clock() as c:
            runs = [train_online_dqn(q.seed, q.episodes, double, progress=False) for double in (False, True)]
        if measure_pair:
            record(f"DQN + Double DQN pair ({name} profile)", c.wall, "s", c.cpu)
        if measure_rate and name == "full":
            # Updates dominate the DQN loop; env steps and evaluation are included here.
            record("online DQN updates/s (incl. env steps)", sum(r["updates"] for r in runs) / c.wall, "updates/s")


def bench_whole_lab(profile: str) -> dict:
    os.environ["M5_PROGRESS"] = "0"
    with tempfile.TemporaryDirectory() as out, Clock() as c:
        run = run_lab(parse_options(["--profile", profile, "--out", out], {}))
    record(f"lab {profile}", c.wall, "s", c.cpu)
    for section, seconds in run["seconds"].items():
        record(f"  {profile}: {section}", seconds, "s")
    return run


def print_table() -> None:
    print()
    print(f"{'measurement':<42s} {'value':>12s}  {'unit':<10s} {'CPU s':>8s} {'budget':>8s} {'ratio':>6s}")
    print("-" * 92)
    for what, value, unit, cpu in ROWS:
        budget = BUDGETS.get(what)
        ratio = f"{value / budget:6.2f}" if budget else ""
        print(
            f"{what:<42s} {value:12.1f}  {unit:<10s} {'' if cpu is None else f'{cpu:8.1f}':>8s} "
            f"{'' if budget is None else f'{budget:8.0f}':>8s} {ratio:>6s}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    parser.add_argument("--seed", type=int, default=41, help="seed of the offline-suite benchmark")
    args = parser.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s) {unknown}; choose from {','.join(PARTS)}")
    torch.set_num_threads(1)
    if "env" in parts:
        bench_env()
    if "dqn" in parts or "pair" in parts:
        bench_dqn_pair("dqn" in parts, "pair" in parts)
    if "offline" in parts:
        for profile in ("smoke", "full"):
            bench_profile(profile, args.seed)
    if "kernels" in parts:
        bench_kernel_overhead(args.seed)
    for profile in ("smoke", "full"):
        if profile in parts:
            run = bench_whole_lab(profile)
            if profile == "full":
                # A several-seed study repeats every seeded section; the environment section runs once.
                seeded = sum(s for name, s in run["seconds"].items() if name not in UNSEEDED)
                once = run["total_seconds"] - seeded
                record(ONE_PROCESS, STUDY_SEEDS * seeded + once, "s")
                # Each worker takes whole tasks (a section at a seed), each far shorter than
                # the study, so two workers share the seeded time to within one task.
                record(TWO_WORKERS, STUDY_SEEDS * seeded / STUDY_JOBS + once, "s")
    print_table()


if __name__ == "__main__":
    main()
