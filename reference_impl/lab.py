"""``m5 lab``: rerun the Module 5 lab, draw its figures, write a report, re-pin artifacts.

    m5 lab [--profile smoke|full] [--section NAME...] [--seeds N] [--out DIR] [--pin] [--lang en|ru ...]

Sections (in lab order): environment, dagger, dqn, log, offline, fqe, dt, language.
Each section calls the reference implementation with the parameters of the lab
notebook's profile (:data:`PROFILE_PARAMS`), writes ``<section>.png`` and adds its
tables to ``report.md`` in ``--out`` (default ``lab-out``), next to ``claims.json``:
every claim of :mod:`reference_impl.lab_results` with its per-seed values, mean and sd
(the README's results table is generated from it).

* ``--profile`` defaults to ``$RL_LLM_M5_PROFILE`` (smoke | full), else smoke; any
  other value of the variable is an error (exit 2).
* ``--seeds N`` repeats every seeded section with seed offsets 0..N-1 (every seed of
  the section is shifted by the offset) and reports mean, spread (sample standard
  deviation) and the per-seed values; with N >= 2 every comparison of
  :mod:`reference_impl.lab_comparisons` gets its paired 95 % interval, which alone
  chooses the report's words (:mod:`reference_impl.lab_caveats`), and the Decision
  Transformer's rise/saturation check runs per seed.
* ``--pin`` runs every section on the full profile (``--profile smoke`` or
  ``--section`` together with ``--pin`` is an error) and rewrites the pinned artifacts
  in ``reference_impl/data/``: each section's seed-offset-0 run (:data:`PINNED_KEYS`),
  every seed stacked (:data:`SEEDS_PIN`), the numbers the lab notebook prints
  (:data:`CLAIMS_PIN`) and the protocol. The ``.npz`` files hold no object arrays (names
  are fixed-width unicode) and are written byte-for-byte deterministically, so
  re-pinning identical results changes nothing. The committed pins come from
  ``make pin`` (10 seeds); a pin from fewer seeds changes what the notebook shows, and
  the tests that compare the pins with ``docs/lab-results/claims.json`` say so.

``--lang en|ru`` (default en; ``--lang en ru`` writes both from one run: ``report.md``
with ``<section>.png`` and ``report.ru.md`` with ``<section>.ru.png``) sets the
language of the report (headers included), the figure titles, legends and tick labels
and the printed lines (those follow the first language); it comes only from this
argument, never from the environment. Texts are in :mod:`reference_impl.labels`.

Exit status: 0 on success, 2 on a usage error (unknown section or profile, bad flag).
Notebooks read the pinned files with :func:`load_pinned`.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import platform
import sys
import time
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reference_impl.common import progress
from reference_impl.labels import LABELS, LANGUAGES, display_name, labels_for

__all__ = [
    "SECTIONS",
    "PROFILES",
    "PROFILE_ENV",
    "DATA_DIR",
    "PINNED_KEYS",
    "PROFILE_PARAMS",
    "LabProfile",
    "LabOptions",
    "UsageError",
    "resolve_profile",
    "parse_options",
    "run_lab",
    "write_outputs",
    "load_pinned",
    "write_npz",
    "dt_claims",
    "dt_evaluation_episodes",
    "dt_return_bounds",
    "DT_MAX_STANDARD_ERROR",
    "compare_runs",
    "main",
]

SECTIONS: tuple[str, ...] = ("environment", "dagger", "dqn", "log", "offline", "fqe", "dt", "language")
PROFILES: tuple[str, ...] = ("smoke", "full")
PROFILE_ENV = "RL_LLM_M5_PROFILE"
DATA_DIR = Path(__file__).resolve().parent / "data"
PROTOCOL_FILE = "M5_experiment_protocol.json"
#: The full run's claims and comparisons as the lab notebook prints them (see :func:`course_lines`):
#: the numbers its worked answers quote, over every seed.
CLAIMS_PIN = "M5_course_numbers.json"

#: Pinned artifact -> the arrays it must hold (extra arrays may follow these).
#: Every seed of the run, for the sections whose figures the lab notebook draws over all
#: seeds: ``<section>_<key>`` -> the per-seed results stacked on a first axis of seeds
#: (NaN where a method has no value). One file, so each section's own pin stays the
#: seed-offset-0 run that a one-seed ``--pin`` reproduces byte for byte.
SEEDS_PIN = "M5_lab_seeds.npz"
BY_SEED: dict[str, tuple[str, ...]] = {
    "dagger": ("success_rate", "budget_bc_success", "budget_dagger_success", "budget_bc_labels",
               "budget_bc_unseen_share", "budget_bc_error_unseen", "budget_bc_error_seen",
               "budget_dagger_unseen_share", "budget_dagger_error_unseen", "budget_dagger_error_seen"),
    "dqn": ("dqn_success", "double_success", "dqn_overestimation", "double_overestimation"),
    "offline": ("mean_return", "success_rate", "greedy_q_mean", "greedy_value_true", "fqe_logged_value",
                "q_logged_error", "q_unlogged_error", "optimal_return"),
    "fqe": ("fqe_values", "simulated_values"),
    "dt": ("mean_return", "return_se", "log_returns", "log_outcome_codes"),
    "language": ("exact_match", "heldout_exact_match"),
}

PINNED_KEYS: dict[str, tuple[str, ...]] = {
    "M5_dagger_curve.npz": ("rounds", "success_rate", "budget_labels", "budget_bc_success", "budget_dagger_success"),
    "M5_online_dqn_curve.npz": ("dqn_success", "double_success", "overestimation_episodes", "dqn_overestimation",
                                "double_overestimation"),
    "M5_offline_method_results.npz": ("method_names", "mean_return", "success_rate", "fqe_names", "fqe_values",
                                      "greedy_q_mean", "greedy_value_true", "fqe_logged_values", "q_logged_error",
                                      "q_unlogged_error", "above_max_share", "optimal_return"),
    "M5_decision_transformer_results.npz": ("target_return", "mean_return", "log_returns"),
    "M5_language_ilql_results.npz": ("method_names", "exact_match"),
}

ARTIFACT_SCOPE = LABELS["en"]["nb.artifact_scope"]


class UsageError(Exception):
    """A bad command line or environment setting (exit status 2)."""


# --------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class EnvironmentParams:
    seed: int = 5
    start: tuple[int, int] = (6, 0)


@dataclass(frozen=True)
class DaggerParams:
    seed: int
    expert_episodes: int
    rounds: int
    learner_episodes_per_round: int
    epochs: int
    evaluation_episodes: int
    # BC and DAgger at equal expert-label budgets (imitation.label_budget_curve, its own setting).
    label_budgets: tuple[int, ...] = (40, 80, 120, 160, 200, 300, 400)
    budget_evaluation_episodes: int = 300
    budget_epochs: int = 20


@dataclass(frozen=True)
class DQNParams:
    seed: int
    episodes: int
    evaluation_episodes: int


@dataclass(frozen=True)
class LogParams:
    seed: int
    episodes: int
    profile: str = "mediocre"
    support_threshold: float = 0.35


@dataclass(frozen=True)
class OfflineParams:
    seed: int
    dataset_episodes: int
    train_epochs: int
    evaluation_episodes: int
    # FQE's own budget (reference_impl.fqe.FQEConfig defaults); the same in both profiles.
    fqe_iterations: int = 50
    fqe_steps_per_iteration: int = 25


@dataclass(frozen=True)
class DTParams:
    data_seed: int
    train_seed: int
    episodes: int
    epochs: int
    context_steps: int
    batch_size: int
    evaluation_episodes: int
    eval_env_seed: int
    eval_seed: int
    target_returns: tuple[float, ...]


@dataclass(frozen=True)
class LanguageParams:
    seed: int
    episodes_per_prompt: int
    bc_epochs: int
    iql_epochs: int


@dataclass(frozen=True)
class LabProfile:
    """Every section's parameters for one profile (the lab notebook's numbers)."""

    name: str
    dagger: DaggerParams
    dqn: DQNParams
    log: LogParams
    offline: OfflineParams
    dt: DTParams
    language: LanguageParams
    environment: EnvironmentParams = field(default_factory=EnvironmentParams)


#: The Decision Transformer sweep's bound on each point's standard error (full profile).
DT_MAX_STANDARD_ERROR = 0.05


def dt_return_bounds() -> tuple[float, float]:
    """(lowest, highest) return of any episode in the DT sweep's env (a default KeyDoorGrid):
    :func:`reference_impl.stats.episode_return_bounds` with its reward design, time limit
    and the fewest steps from any start cell to the goal."""
    from reference_impl.expert import plan_distances
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.stats import episode_return_bounds

    env = KeyDoorGrid()
    distances = plan_distances(env)
    shortest = min(int(distances[r, c, 0]) for r, c in env.start_positions)
    return episode_return_bounds(step_cost=env.step_cost, goal_reward=env.goal_reward, trap_reward=env.trap_reward,
                                 max_steps=env.max_steps, shortest_goal_steps=shortest)


def dt_evaluation_episodes(max_se: float = DT_MAX_STANDARD_ERROR) -> int:
    """Evaluation episodes per request so that every point's measured standard error is <=
    ``max_se`` whatever the policy does: :func:`reference_impl.stats.episodes_for_standard_error`
    over :func:`dt_return_bounds` (no search over runs)."""
    from reference_impl.stats import episodes_for_standard_error

    return episodes_for_standard_error(*dt_return_bounds(), max_se)


# Requests from a trap-level return to well above the best return in the log
# (about 0.8 in KeyDoorGrid), so both the rising part and the plateau show.
_FULL_TARGETS = (-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
_SMOKE_TARGETS = (-1.0, 0.0, 0.5, 1.0, 2.0)

PROFILE_PARAMS: dict[str, LabProfile] = {
    "full": LabProfile(
        name="full",
        dagger=DaggerParams(seed=17, expert_episodes=4, rounds=3, learner_episodes_per_round=8, epochs=12, evaluation_episodes=24),
        dqn=DQNParams(seed=5, episodes=130, evaluation_episodes=24),
        log=LogParams(seed=41, episodes=80),
        offline=OfflineParams(seed=41, dataset_episodes=80, train_epochs=40, evaluation_episodes=24),
        dt=DTParams(data_seed=41, train_seed=61, episodes=120, epochs=12, context_steps=16, batch_size=96,
                    evaluation_episodes=dt_evaluation_episodes(), eval_env_seed=41, eval_seed=2000, target_returns=_FULL_TARGETS),
        language=LanguageParams(seed=71, episodes_per_prompt=45, bc_epochs=12, iql_epochs=20),
    ),
    "smoke": LabProfile(
        name="smoke",
        dagger=DaggerParams(seed=17, expert_episodes=4, rounds=2, learner_episodes_per_round=6, epochs=6, evaluation_episodes=12,
                            label_budgets=(40, 80), budget_evaluation_episodes=30, budget_epochs=5),
        dqn=DQNParams(seed=5, episodes=35, evaluation_episodes=12),
        log=LogParams(seed=41, episodes=30),
        offline=OfflineParams(seed=41, dataset_episodes=30, train_epochs=5, evaluation_episodes=12),
        dt=DTParams(data_seed=41, train_seed=61, episodes=40, epochs=4, context_steps=12, batch_size=64,
                    evaluation_episodes=64, eval_env_seed=41, eval_seed=2000, target_returns=_SMOKE_TARGETS),
        language=LanguageParams(seed=71, episodes_per_prompt=20, bc_epochs=5, iql_epochs=8),
    ),
}


def _offset(params, offset: int):
    """``params`` with every field whose name ends in ``seed`` shifted by ``offset``."""
    shifted = {f.name: getattr(params, f.name) + offset for f in dataclasses.fields(params) if f.name.endswith("seed")}
    return dataclasses.replace(params, **shifted)


def resolve_profile(cli_value: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The profile to run: ``--profile`` if given, else ``$RL_LLM_M5_PROFILE``, else smoke.

    Raises UsageError when the environment variable is set to anything but smoke/full
    (surrounding spaces and case are ignored), even if ``--profile`` is given: a
    misspelt variable would silently change what a notebook runs.
    """
    environ = os.environ if environ is None else environ
    raw = environ.get(PROFILE_ENV)
    from_env = None
    if raw is not None and raw.strip() != "":
        from_env = raw.strip().lower()
        if from_env not in PROFILES:
            raise UsageError(f"{PROFILE_ENV} must be 'smoke' or 'full', got {raw!r}")
    return cli_value or from_env or "smoke"


# --------------------------------------------------------------------------- small utilities
def _stats(values) -> dict:
    """Across-seed mean and spread (sample std; zeros for one seed) of stacked values."""
    arr = np.asarray(values, dtype=np.float64)
    mean = arr.mean(axis=0)
    std = arr.std(axis=0, ddof=1) if len(arr) > 1 else np.zeros_like(mean)
    return {"mean": mean, "std": std, "values": arr}


def _fmt(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def _cell(values: Sequence[float], digits: int = 3) -> str:
    """``mean ± std`` for several seeds, the value alone for one."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 1:
        return _fmt(float(arr[0]), digits)
    return f"{_fmt(float(arr.mean()), digits)} ± {_fmt(float(arr.std(ddof=1)), digits)}"


def _per_seed(values: Sequence[float], digits: int = 2) -> str:
    return ", ".join(_fmt(float(v), digits) for v in values)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def write_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to a compressed ``.npz`` byte-for-byte deterministically.

    Members are written in sorted order with a fixed timestamp, and through a
    temporary file then renamed, so equal arrays give an identical file. Raises
    ValueError when an array has dtype object (it would need pickle to load).
    """
    path = Path(path)
    for key, value in arrays.items():
        if np.asarray(value).dtype == object:
            raise ValueError(f"write_npz: array `{key}` has dtype object; store names as fixed-width unicode")
    tmp = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(arrays[key]), allow_pickle=False)
            archive.writestr(info, buffer.getvalue())
    os.replace(tmp, path)


def load_pinned(name: str, data_dir: str | os.PathLike | None = None):
    """Load a pinned artifact by file name, with or without its extension.

    ``.npz`` artifacts come back as ``{key: ndarray}`` (loaded with
    ``allow_pickle=False``); the protocol (``M5_experiment_protocol``) as a dict.
    Raises ValueError for a name that is not a pinned artifact and FileNotFoundError
    (with the command that regenerates it) when the file is missing.
    """
    known = {Path(n).stem: n for n in (*PINNED_KEYS, PROTOCOL_FILE, CLAIMS_PIN, SEEDS_PIN)}
    stem = Path(str(name)).stem if str(name).endswith((".npz", ".json")) else str(name)
    if stem not in known:
        raise ValueError(f"load_pinned: `name` must be one of {sorted(known)}, got {name!r}")
    path = Path(DATA_DIR if data_dir is None else data_dir) / known[stem]
    if not path.is_file():
        raise FileNotFoundError(f"load_pinned: {path} is missing; regenerate it with `make pin` "
                                "(m5 lab --profile full --seeds 10 --out docs/lab-results --lang en ru --pin)")
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    with np.load(path, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def compare_runs(labels: Mapping[str, str], rows: Sequence[tuple[str, float | None, float | None]], digits: int = 2) -> str:
    """A text table a notebook prints: one row per quantity, ``your run | pinned full run``.

    ``rows`` holds ``(name, yours, pinned)``; None (a request or round one of the runs
    does not have) prints as a dash. The column headers come from ``labels``, so the
    table is in the notebook's language.
    """
    def cell(value) -> str:
        return "—" if value is None else f"{float(value):.{digits}f}"

    table = [("", labels["nb.your_run"], labels["nb.pinned_run"])] + [(str(n), cell(a), cell(b)) for n, a, b in rows]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    return "\n".join(f"{row[0]:<{widths[0]}} | {row[1]:>{widths[1]}} | {row[2]:>{widths[2]}}" for row in table)


def _package_versions() -> dict[str, str]:
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for package in ("numpy", "torch", "gymnasium", "matplotlib"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - all are pinned deps
            versions[package] = "missing"
    return versions


def machine_description() -> dict[str, str]:
    """What, besides the package versions, decides the bits of a run's floats.

    torch picks its vectorised CPU kernels by the instructions the CPU offers
    (``get_cpu_capability``: AVX2, AVX512, ...), and its BLAS (MKL) picks its own code
    path by the CPU's vendor and model; both sum in different orders. Measured: forcing
    torch's default kernels (``ATEN_CPU_CAPABILITY=default``) changes the online DQN
    curves; on two AMD hosts (family 25, one AVX2, one AVX512) the pins of 2026-12-01
    (made on a host described only as x86_64, with the same code and packages) came
    out with the same differences (20 and 24 of 130 DQN flags, FQE values within
    0.064). So the capability alone does not name the machine: the record names the
    CPU too.
    """
    import torch

    return {"arch": platform.machine(), "cpu": cpu_identity(),
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}


def cpu_identity(cpuinfo: str = "/proc/cpuinfo") -> str:
    """``"<vendor_id> family <f> model <m>"`` of the first CPU, e.g. ``"AuthenticAMD family
    25 model 17"``; ``platform.processor()`` where ``/proc/cpuinfo`` is missing."""
    fields: dict[str, str] = {}
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "vendor_id" in fields:
        return f"{fields['vendor_id']} family {fields.get('cpu family', '?')} model {fields.get('model', '?')}"
    return platform.processor() or "unknown"


def same_machine(a: Mapping, b: Mapping) -> bool:
    """Whether two run records (protocol or claims.json) come from equivalent machines.

    Only then must a rerun reproduce a committed run bit for bit. A record written
    before the machine was described this fully (``machine`` missing, a bare
    architecture string, or a description without ``cpu``) never equals a current
    description: what decided its bits is unknown.
    """
    machine = a.get("machine")
    return isinstance(machine, dict) and machine == b.get("machine") and a.get("package_versions") == b.get("package_versions")


# --------------------------------------------------------------------------- section runners
# Each runner takes (profile, offset, cache) and returns a plain dict for that seed.
def _run_environment(profile: LabProfile, offset: int, cache: dict) -> dict:
    from reference_impl.expert import ExpertPolicy
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.rollout import rollout

    p = profile.environment
    env = KeyDoorGrid(seed=p.seed)
    _, info = env.reset(start=p.start, seed=p.seed)
    expert_episode = rollout(env, ExpertPolicy(env), seed=p.seed, start=p.start)
    return {
        "env": env,
        "observation_dim": env.observation_dim,
        "action_dim": env.action_dim,
        "initial_state": info["state"],
        "expert_return": expert_episode.return_,
        "expert_steps": expert_episode.length,
        "expert_outcome": expert_episode.outcome,
    }


def _run_dagger(profile: LabProfile, offset: int, cache: dict) -> dict:
    from reference_impl.figures import SHIFT_KEYS
    from reference_impl.imitation import LabelBudgetConfig, dagger_experiment, label_budget_curve

    p = _offset(profile.dagger, offset)
    run = dagger_experiment(p.seed, p.expert_episodes, p.rounds, p.learner_episodes_per_round, p.epochs, p.evaluation_episodes)
    records = run["records"]
    budget_config = LabelBudgetConfig(epochs=p.budget_epochs, evaluation_episodes=p.budget_evaluation_episodes)
    budget = label_budget_curve(p.seed, p.label_budgets, budget_config)
    return {
        "seed": p.seed,
        "rounds": np.asarray([r["round"] for r in records], dtype=np.int64),
        "success_rate": np.asarray([r["success_rate"] for r in records], dtype=np.float64),
        "mean_return": np.asarray([r["mean_return"] for r in records], dtype=np.float64),
        "dataset_size": np.asarray([r["dataset_size"] for r in records], dtype=np.int64),
        "budget_labels": np.asarray(budget["budgets"], dtype=np.int64),
        "budget_bc_success": np.asarray(budget["bc_success_rate"], dtype=np.float64),
        "budget_dagger_success": np.asarray(budget["dagger_success_rate"], dtype=np.float64),
        "budget_expert_success": float(budget["expert_success_rate"]),
        "budget_slip_probability": float(budget_config.slip_probability),  # the report says it
        "budget_setting": budget_config.describe(),
        # distinct expert labels each learner trains on (cloning's demonstrations may hold fewer than the budget)
        "budget_bc_labels": np.asarray(budget["bc_labels"], dtype=np.int64),
        "budget_dagger_labels": np.asarray(budget["dagger_labels"], dtype=np.int64),
        # the learners' own visits: share on states absent from their labels, non-optimal actions there and elsewhere
        **{f"budget_{key}": np.asarray(budget[key], dtype=np.float64) for key in SHIFT_KEYS},
    }


def _run_dqn(profile: LabProfile, offset: int, cache: dict) -> dict:
    from reference_impl.online_dqn import train_online_dqn

    p = _offset(profile.dqn, offset)
    out = {"seed": p.seed}
    for key, double in (("dqn", False), ("double", True)):
        run = train_online_dqn(p.seed, p.episodes, double, p.evaluation_episodes)
        out[f"{key}_success"] = np.asarray(run["episode_success"], dtype=np.int64)
        out[f"{key}_eval_success"] = float(run["evaluation"]["success_rate"])
        out[f"{key}_eval_return"] = float(run["evaluation"]["mean_return"])
        # learned minus exact Q of the greedy action, over the buffer's states, at checkpoints
        out["overestimation_episodes"] = np.asarray([e for e, _ in run["overestimation"]], dtype=np.int64)
        out[f"{key}_overestimation"] = np.asarray([v for _, v in run["overestimation"]], dtype=np.float64)
    return out


def _run_log(profile: LabProfile, offset: int, cache: dict) -> dict:
    from reference_impl.kernels import behavior_support_mask
    from reference_impl.offline_data import action_frequencies, collect_offline_dataset, summarize_dataset

    p = _offset(profile.log, offset)
    episodes, transitions = collect_offline_dataset(p.seed, p.episodes, p.profile)
    actions = np.asarray([t.action for t in transitions], dtype=np.int64)
    frequencies = action_frequencies(actions)
    summary = summarize_dataset(episodes)
    return {
        "seed": p.seed,
        "counts": np.asarray(list(summary["action_counts"].values()), dtype=np.int64),
        "probabilities": frequencies,
        "support_mask": np.asarray(behavior_support_mask(frequencies, threshold_ratio=p.support_threshold), dtype=bool),
        "support_threshold": p.support_threshold,
        "mean_return": summary["mean_return"],
        "outcomes": summary["outcomes"],
        "transitions": summary["transitions"],
    }


def _offline_run(profile: LabProfile, offset: int, cache: dict, with_fqe: bool) -> dict:
    """One offline_experiment per seed, shared by the offline and fqe sections."""
    from reference_impl.fqe import FQEConfig
    from reference_impl.offline import OfflineExperimentConfig, offline_experiment

    key = ("offline", offset)
    if key in cache and (cache[key]["fqe"] or not with_fqe):
        return cache[key]
    p = _offset(profile.offline, offset)
    config = OfflineExperimentConfig(fqe=FQEConfig(gamma=0.99, iterations=p.fqe_iterations, steps_per_iteration=p.fqe_steps_per_iteration))
    cache[key] = offline_experiment(p.seed, p.dataset_episodes, p.train_epochs, p.evaluation_episodes, run_fqe=with_fqe, config=config)
    return cache[key]


def _run_offline(profile: LabProfile, offset: int, cache: dict) -> dict:
    run = _offline_run(profile, offset, cache, with_fqe=cache.get("need_fqe", False))
    names = list(run["results"])
    return {
        "seed": run["config"]["seed"],
        "method_names": names,
        "mean_return": np.asarray([run["results"][n]["mean_return"] for n in names]),
        "success_rate": np.asarray([run["results"][n]["success_rate"] for n in names]),
        "greedy_q_mean": [run["results"][n]["greedy_q_mean"] for n in names],
        "greedy_value_true": np.asarray([run["results"][n]["greedy_value_true"] for n in names]),
        "logged_pair_share": np.asarray([run["results"][n]["logged_pair_share"] for n in names]),
        # learned minus true Q on logged / unlogged pairs, states valued above the largest return (None for BC)
        "q_logged_error": [run["results"][n]["q_logged_error"] for n in names],
        "q_unlogged_error": [run["results"][n]["q_unlogged_error"] for n in names],
        "above_max_share": [run["results"][n]["above_max_share"] for n in names],
        "optimal_return": float(run["dataset"]["optimal_return"]),
        # FQE's value over the same logged states, when the fqe section runs too
        "fqe_logged_value": [run["fqe"][n]["logged_value"] if run["fqe"] else None for n in names],
    }


def _run_fqe(profile: LabProfile, offset: int, cache: dict) -> dict:
    run = _offline_run(profile, offset, cache, with_fqe=True)
    names = list(run["fqe"])
    return {
        "seed": run["config"]["seed"],
        "fqe_names": names,
        "fqe_values": np.asarray([run["fqe"][n]["fqe_value"] for n in names]),
        "simulated_values": np.asarray([run["fqe"][n]["simulated_value"] for n in names]),
        "abs_error": np.asarray([abs(run["fqe"][n]["error"]) for n in names]),
        "gamma": float(next(iter(run["fqe"].values()))["gamma"]),
        "sim_mean_return": np.asarray([run["results"][n]["mean_return"] for n in names]),
    }


def _run_dt(profile: LabProfile, offset: int, cache: dict) -> dict:
    from reference_impl.decision_transformer import dt_return_sweep, train_decision_transformer
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.offline_data import collect_offline_dataset

    from reference_impl.lab_results import DT_LOG_GROUPS

    p = _offset(profile.dt, offset)
    episodes, _ = collect_offline_dataset(p.data_seed, p.episodes, "mixed")
    returns = np.asarray([ep.return_ for ep in episodes])
    # How each logged episode ended, as an index of DT_LOG_GROUPS (trap, timeout, goal).
    outcome_codes = np.asarray([DT_LOG_GROUPS.index(ep.outcome) for ep in episodes], dtype=np.int64)
    probe = KeyDoorGrid()
    with warnings.catch_warnings():
        # torch warns that nested tensors are off when norm_first is set; harmless here.
        warnings.filterwarnings("ignore", message="enable_nested_tensor")
        model, losses = train_decision_transformer(
            episodes, p.train_seed, probe.observation_dim, probe.action_dim, p.context_steps, p.epochs, p.batch_size)
    sweep = dt_return_sweep(model, lambda: KeyDoorGrid(seed=p.eval_env_seed), p.target_returns,
                            episodes=p.evaluation_episodes, seed=p.eval_seed, context_steps=p.context_steps)
    return {
        "seed": p.train_seed,
        "target_return": sweep["target_return"],
        "mean_return": sweep["mean_return"],
        "success_rate": sweep["success_rate"],
        "return_se": sweep["return_se"],
        "evaluation_episodes": int(p.evaluation_episodes),
        "data_return_range": np.asarray([returns.min(), returns.max()], dtype=np.float64),
        "data_mean_return": float(returns.mean()),
        "log_returns": returns.astype(np.float64),
        "log_outcome_codes": outcome_codes,
        "final_loss": float(losses[-1]),
    }


def _run_language(profile: LabProfile, offset: int, cache: dict) -> dict:
    from reference_impl.language import HELDOUT_PROMPTS, PROMPTS, language_offline_experiment, token_text

    p = _offset(profile.language, offset)
    run = language_offline_experiment(p.seed, p.episodes_per_prompt, p.bc_epochs, p.iql_epochs)
    names = list(run["evaluation"])

    def examples(evaluation: dict, prompts) -> dict:
        return {n: [(prompt, token_text(seq), reward) for prompt, seq, reward in
                    zip(prompts, evaluation[n]["sequences"], evaluation[n]["rewards"])] for n in names}

    held = run["heldout_evaluation"]
    return {
        "seed": p.seed,
        "method_names": names,
        "exact_match": np.asarray([run["evaluation"][n]["exact_match"] for n in names]),
        "mean_reward": np.asarray([run["evaluation"][n]["mean_reward"] for n in names]),
        "heldout_exact_match": np.asarray([held[n]["exact_match"] for n in names]),
        "heldout_mean_reward": np.asarray([held[n]["mean_reward"] for n in names]),
        "examples": examples(run["evaluation"], PROMPTS),
        "heldout_examples": examples(held, HELDOUT_PROMPTS),
        "dataset": run["dataset"],
    }


RUNNERS: dict[str, Callable[[LabProfile, int, dict], dict]] = {
    "environment": _run_environment,
    "dagger": _run_dagger,
    "dqn": _run_dqn,
    "log": _run_log,
    "offline": _run_offline,
    "fqe": _run_fqe,
    "dt": _run_dt,
    "language": _run_language,
}
#: Sections whose result does not depend on a seed run once whatever ``--seeds`` says.
UNSEEDED = frozenset({"environment"})


# --------------------------------------------------------------------------- claims
def dt_claims(target_return, mean_return, data_max: float, *, standard_error=None, z: float = 2.0) -> dict:
    """The lab's Decision Transformer claim for one sweep, as numbers and a verdict.

    ``rises``: inside the log's range (requests <= ``data_max``) the achieved return
    at the highest request exceeds the one at the lowest, and the least-squares slope
    is positive. ``saturates``: the curve stops rising once the request leaves the
    log's range. With y_top, SE_top the achieved return and its standard error at the
    highest request inside the range, every request a above ``data_max`` has

        y_a - y_top <= z * sqrt(SE_a^2 + SE_top^2)

    (``standard_error``: each point's SE, default all zero, i.e. exact values; the two
    means are treated as independent, which can only widen the allowance since the
    requests share their episode seeds). A curve that keeps following the request
    above the log fails it. ``excess_above`` is the largest y_a - y_top and
    ``excess_allowance`` the z * sqrt(...) of that same request a.
    Needs at least two requests inside and one above the range, finite SEs >= 0 and
    ``z`` > 0 (ValueError otherwise, naming the argument).
    """
    x = np.asarray(target_return, dtype=np.float64)
    y = np.asarray(mean_return, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"dt_claims: `target_return` {x.shape} and `mean_return` {y.shape} must be equal 1-D shapes")
    se = np.zeros_like(y) if standard_error is None else np.asarray(standard_error, dtype=np.float64)
    if se.shape != y.shape or not np.all(np.isfinite(se)) or np.any(se < 0):
        raise ValueError(f"dt_claims: `standard_error` must be finite, >= 0 and shaped like `mean_return` {y.shape}")
    if not (np.isfinite(z) and z > 0):
        raise ValueError(f"dt_claims: `z` must be a positive finite number, got {z!r}")
    inside, above = x <= data_max, x > data_max
    if inside.sum() < 2 or above.sum() < 1:
        raise ValueError(f"dt_claims: need >= 2 requests <= data_max ({data_max}) and >= 1 above it, got {x.tolist()}")
    slope_inside = float(np.polyfit(x[inside], y[inside], 1)[0])
    rise = float(y[inside][np.argmax(x[inside])] - y[inside][np.argmin(x[inside])])
    top = np.flatnonzero(inside)[np.argmax(x[inside])]
    excess = y[above] - y[top]
    allowance = z * np.sqrt(se[above] ** 2 + se[top] ** 2)
    worst = int(np.argmax(excess - allowance))
    return {
        "slope_inside": slope_inside,
        "rise_inside": rise,
        "max_achieved_above": float(y[above].max()),
        "top_inside_request": float(x[top]),
        "excess_above": float(excess[worst]),
        "excess_allowance": float(allowance[worst]),
        "rises": bool(rise > 0 and slope_inside > 0),
        "saturates": bool(np.all(excess <= allowance)),
    }


# --------------------------------------------------------------------------- figures and report
@dataclass(frozen=True)
class _Render:
    """Where and in which language one report is written, and which run its figures show."""

    out: Path
    labels: dict
    run_label: str
    suffix: str = ""  # "" for English, ".ru" for Russian: both reports can share a folder

    @property
    def lang(self) -> str:
        return self.suffix.lstrip(".") or "en"

    def figure(self, name: str, draw: Callable, figsize=(9, 4.8), rows: int = 1, height_ratios=None) -> str:
        """Draw with ``draw(ax)`` (or ``draw(axes)`` for several rows), save, return the file name."""
        # A bare Figure renders with Agg and never touches pyplot's backend or state, so
        # running the lab from a notebook leaves its inline plotting alone.
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize)
        axes = fig.subplots(rows, 1, gridspec_kw={"height_ratios": height_ratios} if height_ratios else None)
        draw(axes)
        fig.tight_layout()
        file = f"{name}{self.suffix}.png"
        fig.savefig(self.out / file, dpi=110)
        return file


def _t(labels: Mapping[str, str], key: str, **fields) -> str:
    """The report text ``report.<key>`` in the labels' language, with ``fields`` filled in."""
    text = labels[f"report.{key}"]
    return text.format(**fields) if fields else text


def _header(labels: Mapping[str, str], *keys: str) -> tuple[str, ...]:
    return tuple(_t(labels, k) for k in keys)


def _yes_no(labels: Mapping[str, str], flag) -> str:
    return _t(labels, "yes" if bool(flag) else "no")


def _spread(stats: dict, runs: list) -> np.ndarray | None:
    """The across-seed sd to draw, or None for one seed (no error bars)."""
    return stats["std"] if len(runs) > 1 else None


def _report_environment(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_environment

    labels, run = r.labels, runs[0]
    png = r.figure("environment", lambda ax: plot_environment(run["env"], ax, labels, run_label=r.run_label), (10, 5.5))
    lines = [f"![environment]({png})", ""]
    expert = _t(labels, "expert_run", outcome=display_name(labels, run["expert_outcome"]), steps=run["expert_steps"],
                ret=f"{run['expert_return']:.2f}")
    lines += _table(_header(labels, "quantity", "value"), [
        (_t(labels, "observation_dim"), run["observation_dim"]), (_t(labels, "action_dim"), run["action_dim"]),
        (_t(labels, "initial_state"), f"`{run['initial_state']}`"),
        (_t(labels, "expert_from_start"), expert),
    ])
    return lines


def _report_dagger(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_dagger_curve

    labels = r.labels
    success = _stats([x["success_rate"] for x in runs])
    png = r.figure("dagger", lambda ax: plot_dagger_curve(runs[0]["rounds"], success["mean"], ax, labels,
                                                          success_spread=_spread(success, runs), run_label=r.run_label))
    rows = []
    for i, rnd in enumerate(runs[0]["rounds"]):
        per = [x["success_rate"][i] for x in runs]
        rows.append((int(rnd), int(runs[0]["dataset_size"][i]), _cell(per), _cell([x["mean_return"][i] for x in runs]), _per_seed(per)))
    lines = [f"![dagger]({png})", ""] + _table(
        _header(labels, "round", "dataset_size", "success_rate", "mean_return", "success_per_seed"), rows)
    return lines + ["", ""] + _report_label_budget(runs, r)


def _report_label_budget(runs: list[dict], r: _Render) -> list[str]:
    """BC and DAgger trained on the same number of expert labels (its own setting), and their shift."""
    from reference_impl.figures import SHIFT_KEYS, plot_distribution_shift, plot_label_budget

    labels = r.labels
    budgets = runs[0]["budget_labels"]
    setting = runs[0]["budget_setting"]
    bc, dagger = _stats([x["budget_bc_success"] for x in runs]), _stats([x["budget_dagger_success"] for x in runs])
    png = r.figure("dagger_budget", lambda ax: plot_label_budget(
        budgets, bc["mean"], dagger["mean"], ax, labels, bc_spread=_spread(bc, runs), dagger_spread=_spread(dagger, runs),
        setting=setting, run_label=r.run_label))
    shift = {k: np.stack([x[f"budget_{k}"] for x in runs]) for k in SHIFT_KEYS}
    shift_png = r.figure("dagger_shift", lambda axes: plot_distribution_shift(budgets, shift, axes, labels, run_label=r.run_label),
                         figsize=(9, 7.5), rows=2)
    rows = [(int(b), _cell([x["budget_bc_labels"][i] for x in runs], 0), _cell([x["budget_dagger_labels"][i] for x in runs], 0),
             _cell(bc["values"][:, i]), _cell(dagger["values"][:, i]),
             _difference(dagger["values"][:, i], bc["values"][:, i], r))
            for i, b in enumerate(budgets)]
    shift_rows = [(int(b), *(_cell(v) if (v := _finite(shift[k][:, i])).size else _t(labels, "not_available") for k in SHIFT_KEYS))
                  for i, b in enumerate(budgets)]
    expert = _cell([x["budget_expert_success"] for x in runs])
    return ([_t(labels, "budget_intro", expert=expert, **setting), "", f"![dagger_budget]({png})", ""]
            + _table(_header(labels, "expert_labels", "bc_distinct_labels", "dagger_distinct_labels", "bc_success", "dagger_success", "dagger_minus_bc"), rows)
            + ["", _t(labels, "shift_intro"), "", f"![dagger_shift]({shift_png})", ""]
            + _table(_header(labels, "expert_labels", *(f"shift_{k}" for k in SHIFT_KEYS)), shift_rows))


def _finite(values) -> np.ndarray:
    """The finite entries (a learner with no visits of a kind has NaN there, and no value to average)."""
    arr = np.asarray(values, dtype=np.float64)
    return arr[np.isfinite(arr)]


def _difference(a, b, r: _Render) -> str:
    """``a - b`` over paired seeds as the report words it (interval and verdict), or n/a for one seed."""
    from reference_impl.lab_comparisons import phrase
    from reference_impl.stats import paired_difference

    if len(a) < 2:
        return _t(r.labels, "not_available")
    return phrase(paired_difference(a, b), r.lang)


def _report_dqn(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_dqn_curves, plot_overestimation

    labels = r.labels
    # Several seeds: the curve of the across-seed mean success flag.
    dqn = np.mean([x["dqn_success"] for x in runs], axis=0)
    double = np.mean([x["double_success"] for x in runs], axis=0)
    png = r.figure("dqn", lambda ax: plot_dqn_curves(dqn, double, ax, labels, run_label=r.run_label))
    over_png = r.figure("dqn_overestimation", lambda ax: plot_overestimation(
        runs[0]["overestimation_episodes"], np.stack([x["dqn_overestimation"] for x in runs]),
        np.stack([x["double_overestimation"] for x in runs]), ax, labels, run_label=r.run_label))
    rows = []
    for key, name in (("dqn", "DQN"), ("double", "Double DQN")):
        late = [float(np.mean(x[f"{key}_success"][-15:])) for x in runs]
        rows.append((display_name(labels, name), _cell([x[f"{key}_eval_success"] for x in runs]),
                     _cell([x[f"{key}_eval_return"] for x in runs]), _cell(late), _per_seed([x[f"{key}_eval_success"] for x in runs]),
                     _cell([float(np.mean(x[f"{key}_overestimation"])) for x in runs]),
                     _cell([float(x[f"{key}_overestimation"][-1]) for x in runs])))
    return [f"![dqn]({png})", "", f"![dqn_overestimation]({over_png})", "", _t(labels, "overestimation_intro"), ""] + _table(
        _header(labels, "method", "greedy_eval_success", "greedy_eval_return", "late_success", "eval_success_per_seed",
                "overestimation_mean", "overestimation_final"), rows)


def _outcomes(labels: Mapping[str, str], outcomes: Mapping[str, int]) -> str:
    return ", ".join(f"{display_name(labels, name)} {count}" for name, count in outcomes.items())


def _report_log(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_log_actions
    from reference_impl.keydoor import ACTION_NAMES

    labels, run = r.labels, runs[0]
    png = r.figure("log", lambda ax: plot_log_actions(run["counts"], ACTION_NAMES, ax, labels, run_label=r.run_label), (8, 4.5))
    rows = [(display_name(labels, a), int(run["counts"][i]), _fmt(float(run["probabilities"][i]), 4), _yes_no(labels, run["support_mask"][i]))
            for i, a in enumerate(ACTION_NAMES)]
    summary = _t(labels, "log_summary", seed=run["seed"], transitions=run["transitions"], outcomes=_outcomes(labels, run["outcomes"]),
                 ret=f"{run['mean_return']:.3f}", all_seeds=_cell([x["mean_return"] for x in runs]))
    return [f"![log]({png})", "", summary, ""] + _table(
        (*_header(labels, "action", "count", "behavior_probability"), _t(labels, "in_support", threshold=run["support_threshold"])), rows)


def _nan_none(values) -> np.ndarray:
    """A list that may hold None (a method without Q, a run without FQE) as floats with NaN."""
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def _report_offline(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_offline_methods, plot_offline_values, plot_q_errors

    labels, names = r.labels, runs[0]["method_names"]
    ret = _stats([x["mean_return"] for x in runs])
    suc = _stats([x["success_rate"] for x in runs])
    optimum = [x["optimal_return"] for x in runs]
    png = r.figure("offline", lambda ax: plot_offline_methods(
        names, ret["mean"], suc["mean"], ax, labels, return_spread=_spread(ret, runs), run_label=r.run_label,
        optimum=float(np.mean(optimum))))
    learned = np.stack([_nan_none(x["greedy_q_mean"]) for x in runs])
    true = np.stack([x["greedy_value_true"] for x in runs])
    fqe = np.stack([_nan_none(x["fqe_logged_value"]) for x in runs])
    fqe = None if np.isnan(fqe).all() else fqe
    values_png = r.figure("offline_values", lambda ax: plot_offline_values(
        names, learned, true, ax, labels, fqe=fqe, run_label=r.run_label), (9.5, 5))
    logged_err, unlogged_err = (np.stack([_nan_none(x[k]) for x in runs]) for k in ("q_logged_error", "q_unlogged_error"))
    above = np.stack([_nan_none(x["above_max_share"]) for x in runs])
    errors_png = r.figure("offline_q_errors", lambda ax: plot_q_errors(
        names, logged_err, unlogged_err, ax, labels, run_label=r.run_label), (9.5, 5))

    def cell(column) -> str:
        return _t(labels, "not_available") if np.isnan(column).any() else _cell(column)

    rows, mechanism = [], []
    for i, n in enumerate(names):
        rows.append((display_name(labels, n), _cell(ret["values"][:, i]), _cell(suc["values"][:, i]), _per_seed(suc["values"][:, i]),
                     cell(learned[:, i]), _cell(true[:, i]), _t(labels, "not_available") if fqe is None else cell(fqe[:, i]),
                     _cell([x["logged_pair_share"][i] for x in runs])))
        mechanism.append((display_name(labels, n), cell(logged_err[:, i]), cell(unlogged_err[:, i]),
                          _cell([1.0 - x["logged_pair_share"][i] for x in runs]), cell(above[:, i])))
    return [f"![offline]({png})", "", _t(labels, "optimum_intro", optimum=_cell(optimum)), "",
            f"![offline_values]({values_png})", "", _t(labels, "values_intro"), ""] + _table(
        _header(labels, "method", "mean_return", "success_rate", "success_per_seed", "logged_q", "true_value", "fqe_logged",
                "logged_pair_share"), rows) + [
        "", f"![offline_q_errors]({errors_png})", "", _t(labels, "mechanism_intro"), ""] + _table(
        _header(labels, "method", "q_error_logged", "q_error_unlogged", "unlogged_greedy_share", "above_max_share"), mechanism)


def _report_fqe(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_fqe_vs_simulator

    labels, names = r.labels, runs[0]["fqe_names"]
    est = _stats([x["fqe_values"] for x in runs])
    sim = _stats([x["simulated_values"] for x in runs])
    png = r.figure("fqe", lambda ax: plot_fqe_vs_simulator(names, est["mean"], sim["mean"], ax, labels, fqe_spread=_spread(est, runs),
                                                           simulated_spread=_spread(sim, runs), run_label=r.run_label))
    rows = []
    for i, n in enumerate(names):
        err = est["values"][:, i] - sim["values"][:, i]
        rows.append((display_name(labels, n), _cell(est["values"][:, i]), _cell(sim["values"][:, i]), _cell(err), _cell(np.abs(err))))
    lines = [f"![fqe]({png})", "", _t(labels, "fqe_intro", gamma=runs[0]["gamma"]), ""]
    lines += _table(_header(labels, "policy", "fqe_estimate", "simulator", "fqe_minus_simulator", "abs_error"), rows)
    return lines + ["", f"> {labels['fqe_warning']}"]


def _report_dt(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_dt_panel
    from reference_impl.lab_results import DT_LOG_GROUPS, log_return_groups
    from reference_impl.stats import standard_error_bound

    labels, targets = r.labels, runs[0]["target_return"]
    achieved = _stats([x["mean_return"] for x in runs])
    se = np.stack([x["return_se"] for x in runs])
    pooled = np.concatenate([x["log_returns"] for x in runs])  # every seed's log: the histogram under the sweep
    codes = np.concatenate([x["log_outcome_codes"] for x in runs])
    png = r.figure("dt", lambda axes: plot_dt_panel(targets, achieved["mean"], pooled, axes, labels, return_spread=_spread(achieved, runs),
                                                    log_outcomes=[DT_LOG_GROUPS[c] for c in codes], run_label=r.run_label),
                   (8, 7.5), rows=2, height_ratios=(3, 1.6))
    def se_text(values) -> str:  # one evaluation episode has no sample sd
        return ", ".join(_t(labels, "not_available") if np.isnan(v) else _fmt(float(v), 3) for v in np.atleast_1d(values))

    rows = [(_fmt(t, 2), _cell(achieved["values"][:, i]), _cell([x["success_rate"][i] for x in runs]), _per_seed(achieved["values"][:, i]),
             se_text(se[:, i])) for i, t in enumerate(targets)]
    groups = [log_return_groups(x["log_returns"], x["log_outcome_codes"]) for x in runs]
    group_rows = []
    for g in DT_LOG_GROUPS:
        lows = [s[g]["min"] for s in groups if s[g]["min"] is not None]
        highs = [s[g]["max"] for s in groups if s[g]["max"] is not None]
        span = _t(labels, "return_range", lo=f"{min(lows):.2f}", hi=f"{max(highs):.2f}") if lows else _t(labels, "not_available")
        group_rows.append((display_name(labels, g), _cell([s[g]["count"] for s in groups], 1), _cell([s[g]["share"] for s in groups]),
                           span))
    worst = int(np.unravel_index(np.argmax(np.nan_to_num(se, nan=-1.0)), se.shape)[1])
    lines = [f"![dt]({png})", "", _t(labels, "dt_intro", low=f"{pooled.min():.2f}", high=f"{pooled.max():.2f}"),
             _t(labels, "dt_hist_intro"), "", _t(labels, "dt_groups_intro"), ""]
    lines += _table(_header(labels, "log_group", "episodes_per_seed", "share_of_log", "returns_all_seeds"), group_rows)
    low, high = dt_return_bounds()
    episodes = int(runs[0]["evaluation_episodes"])
    bound = standard_error_bound(low, high, episodes) if episodes > 1 else float("nan")
    lines += ["", _t(labels, "dt_se_intro", episodes=episodes, se_max=se_text(np.nanmax(se) if episodes > 1 else np.nan),
                     request=_fmt(float(targets[worst]), 2), bound=se_text(bound), low=f"{low:.2f}", high=f"{high:.2f}"), ""]
    lines += _table(_header(labels, "requested_return", "achieved_return", "success_rate", "achieved_per_seed", "standard_error_per_seed"),
                    rows)
    return lines


def _report_language(runs: list[dict], r: _Render) -> list[str]:
    from reference_impl.figures import plot_language_exact_match

    from reference_impl.language import HELDOUT_PROMPTS

    labels, names = r.labels, runs[0]["method_names"]
    em = _stats([x["exact_match"] for x in runs])
    held = _stats([x["heldout_exact_match"] for x in runs])
    png = r.figure("language", lambda ax: plot_language_exact_match(
        names, em["mean"], ax, labels, match_spread=_spread(em, runs), run_label=r.run_label,
        heldout_exact_match=held["mean"], heldout_spread=_spread(held, runs)), (8.8, 4.8))
    rows = [(display_name(labels, n), _cell(em["values"][:, i]), _cell(held["values"][:, i]),
             _cell([x["mean_reward"][i] for x in runs]), _cell([x["heldout_mean_reward"][i] for x in runs]),
             _per_seed(em["values"][:, i]), _per_seed(held["values"][:, i]))
            for i, n in enumerate(names)]
    first = runs[0]
    lines = [f"![language]({png})", "", _t(labels, "dataset", seed=first["seed"], dataset=first["dataset"]),
             _t(labels, "language_heldout", prompts=", ".join(f"`{p}`" for p in HELDOUT_PROMPTS)), ""]
    lines += _table(_header(labels, "method", "language_train_exact_match", "language_heldout_exact_match",
                            "language_train_mean_reward", "language_heldout_mean_reward", "exact_match_per_seed",
                            "language_heldout_exact_match_per_seed"), rows)
    for key, heading in (("examples", "greedy_responses"), ("heldout_examples", "language_heldout_responses")):
        lines += ["", _t(labels, heading, seed=first["seed"]), ""]
        lines += _table((_t(labels, "prompt"), *(display_name(labels, n) for n in names)), [
            (first[key][names[0]][j][0], *(f"`{first[key][n][j][1]}` ({first[key][n][j][2]:.1f})" for n in names))
            for j in range(len(first[key][names[0]]))])
    return lines


REPORTERS = {
    "environment": _report_environment, "dagger": _report_dagger, "dqn": _report_dqn, "log": _report_log,
    "offline": _report_offline, "fqe": _report_fqe, "dt": _report_dt, "language": _report_language,
}


def _claims(results: dict[str, list[dict]], labels: Mapping[str, str]) -> tuple[list[str], dict]:
    """Per-seed check of the lab's two claims (only for the sections that ran)."""
    lines, verdicts = [], {}
    if "dt" in results:
        rows, holds = [], []
        for r in results["dt"]:
            try:
                c = dt_claims(r["target_return"], r["mean_return"], float(r["data_return_range"][1]),
                              standard_error=np.nan_to_num(r["return_se"], nan=0.0))
            except ValueError:  # the requests do not straddle the log's best return
                rows.append((r["seed"], _fmt(float(r["data_return_range"][1]), 2), _t(labels, "not_checkable"), "", "", "", "",
                             _yes_no(labels, False), _yes_no(labels, False)))
                holds.append(False)
                continue
            holds.append(c["rises"] and c["saturates"])
            rows.append((r["seed"], _fmt(float(r["data_return_range"][1]), 2), _fmt(c["slope_inside"]), _fmt(c["rise_inside"]),
                         _fmt(c["top_inside_request"], 2), _fmt(c["excess_above"]), _fmt(c["excess_allowance"]),
                         _yes_no(labels, c["rises"]), _yes_no(labels, c["saturates"])))
        verdicts["dt"] = {"seeds_holding": int(sum(holds)), "seeds": len(holds)}
        lines += ["", _t(labels, "dt_claim", holding=sum(holds), seeds=len(holds)), ""]
        lines += _table(_header(labels, "train_seed", "log_max_return", "slope_inside", "rise_inside", "top_inside_request",
                                "excess_above", "excess_allowance", "rises", "saturates"), rows)
    return lines, verdicts


# --------------------------------------------------------------------------- pinning
def _pinned_arrays(results: dict[str, list[dict]]) -> dict[str, dict[str, np.ndarray]]:
    """The pinned artifacts' arrays from the seed-offset-0 run of each section."""
    dagger, dqn, off, fqe, dt, lang = (results[s][0] for s in ("dagger", "dqn", "offline", "fqe", "dt", "language"))
    return {
        "M5_dagger_curve.npz": {
            "rounds": dagger["rounds"], "success_rate": dagger["success_rate"],
            "mean_return": dagger["mean_return"], "dataset_size": dagger["dataset_size"],
            "budget_labels": dagger["budget_labels"], "budget_bc_success": dagger["budget_bc_success"],
            "budget_dagger_success": dagger["budget_dagger_success"],
        },
        "M5_online_dqn_curve.npz": {
            "dqn_success": dqn["dqn_success"], "double_success": dqn["double_success"],
            "overestimation_episodes": dqn["overestimation_episodes"],
            "dqn_overestimation": dqn["dqn_overestimation"], "double_overestimation": dqn["double_overestimation"],
            "eval_success_rate": np.asarray([dqn["dqn_eval_success"], dqn["double_eval_success"]]),
        },
        "M5_offline_method_results.npz": {
            "method_names": np.asarray(off["method_names"], dtype=str),
            "mean_return": np.asarray(off["mean_return"], dtype=np.float64),
            "success_rate": np.asarray(off["success_rate"], dtype=np.float64),
            "fqe_names": np.asarray(fqe["fqe_names"], dtype=str),
            "fqe_values": np.asarray(fqe["fqe_values"], dtype=np.float64),
            "fqe_simulated_values": np.asarray(fqe["simulated_values"], dtype=np.float64),
            "greedy_q_mean": _nan_none(off["greedy_q_mean"]),
            "greedy_value_true": np.asarray(off["greedy_value_true"], dtype=np.float64),
            "logged_pair_share": np.asarray(off["logged_pair_share"], dtype=np.float64),
            "fqe_logged_values": _nan_none(off["fqe_logged_value"]),
            "q_logged_error": _nan_none(off["q_logged_error"]),
            "q_unlogged_error": _nan_none(off["q_unlogged_error"]),
            "above_max_share": _nan_none(off["above_max_share"]),
            "optimal_return": np.asarray(off["optimal_return"], dtype=np.float64),
        },
        "M5_decision_transformer_results.npz": {
            "target_return": dt["target_return"], "mean_return": dt["mean_return"],
            "success_rate": dt["success_rate"], "data_return_range": dt["data_return_range"],
            "log_returns": dt["log_returns"], "return_se": dt["return_se"], "log_outcome_codes": dt["log_outcome_codes"],
        },
        "M5_language_ilql_results.npz": {
            "method_names": np.asarray(lang["method_names"], dtype=str),
            "exact_match": np.asarray(lang["exact_match"], dtype=np.float64),
            "mean_reward": np.asarray(lang["mean_reward"], dtype=np.float64),
            "heldout_exact_match": np.asarray(lang["heldout_exact_match"], dtype=np.float64),
            "heldout_mean_reward": np.asarray(lang["heldout_mean_reward"], dtype=np.float64),
        },
    }


def _seeds_arrays(results: dict[str, list[dict]]) -> dict[str, np.ndarray]:
    """:data:`SEEDS_PIN`'s arrays: :data:`BY_SEED` of every section, stacked over seeds."""
    arrays = {"seeds": np.asarray(len(results["offline"]), dtype=np.int64)}
    for section, keys in BY_SEED.items():
        runs = results[section]
        arrays[f"{section}_seed_ids"] = np.asarray([r["seed"] for r in runs], dtype=np.int64)
        for key in keys:
            arrays[f"{section}_{key}"] = np.stack([_nan_none(r[key]) if np.ndim(r[key]) else np.float64(r[key]) for r in runs])
    return arrays


def course_lines(document: Mapping) -> dict:
    """``{"seeds": n, "lines": {id: {lang: line}}}``: each claim and comparison of a claims.json
    as the lab notebook prints it, the value first (``0.43 ± 0.08 — <claim text>``, or the
    comparison's phrase). Formatted once here, at two decimals, so the kit ships what students
    read rather than raw floats, and every language reads the same numbers."""
    from reference_impl.lab_comparisons import phrase
    from reference_impl.lab_results import format_mean_sd

    lines = {cid: {lang: f"{format_mean_sd(entry, 2)} — {entry['text'][lang]}" for lang in LANGUAGES}
             for cid, entry in document["claims"].items()}
    lines.update({cid: {lang: f"{phrase(entry, lang)} — {entry['text'][lang]}" for lang in LANGUAGES}
                  for cid, entry in document.get("comparisons", {}).items()})
    return {"seeds": document["seeds"], "lines": lines}


def _protocol(profile: LabProfile, seeds: int, verdicts: dict) -> dict:
    params = {s: dataclasses.asdict(getattr(profile, s)) for s in ("environment", "dagger", "dqn", "log", "offline", "dt", "language")}
    return {
        "artifact_scope": ARTIFACT_SCOPE,
        "command": "m5 lab --profile full --pin" + (f" --seeds {seeds}" if seeds > 1 else ""),
        "profile": profile.name,
        "seeds": {s: {k: v for k, v in p.items() if k.endswith("seed")} for s, p in params.items()},
        "seed_offsets_checked": list(range(seeds)),
        "parameters": params,
        "claims": verdicts,
        "artifacts": {name: list(keys) for name, keys in PINNED_KEYS.items()},
        "package_versions": _package_versions(),
        "machine": machine_description(),
    }


def _write_pinned(results: dict[str, list[dict]], profile: LabProfile, seeds: int, verdicts: dict, data_dir: Path,
                  document: Mapping | None = None) -> list[Path]:
    data_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, arrays in _pinned_arrays(results).items():
        missing = [k for k in PINNED_KEYS[name] if k not in arrays]
        assert not missing, f"{name} lacks {missing}"  # guards this module's own tables
        write_npz(data_dir / name, arrays)
        written.append(data_dir / name)
    write_npz(data_dir / SEEDS_PIN, _seeds_arrays(results))
    written.append(data_dir / SEEDS_PIN)
    path = data_dir / PROTOCOL_FILE
    path.write_text(json.dumps(_protocol(profile, seeds, verdicts), indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    if document is not None:
        (data_dir / CLAIMS_PIN).write_text(json.dumps(course_lines(document), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(data_dir / CLAIMS_PIN)
    return written


# --------------------------------------------------------------------------- command line
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="m5 lab", description="Rerun the Module 5 lab: figures, report, pinned artifacts.")
    parser.add_argument("--profile", default=None, help="smoke (reduced, ~1 min) or full (the lab notebook's numbers); "
                        f"default ${PROFILE_ENV}, else smoke")
    parser.add_argument("--section", nargs="+", metavar="NAME", default=None, help=f"sections to run (default all): {', '.join(SECTIONS)}")
    parser.add_argument("--seeds", default="1", help="run every seeded section with seed offsets 0..N-1 (default 1)")
    parser.add_argument("--out", default="lab-out", help="directory for the PNG figures and report.md (default lab-out)")
    parser.add_argument("--pin", action="store_true", help="full profile, all sections; rewrite reference_impl/data/")
    parser.add_argument("--lang", nargs="+", default=["en"], metavar="LANG",
                        help="language(s) of figures and report: en, ru or both (one run, report.md and report.ru.md)")
    return parser


@dataclass(frozen=True)
class LabOptions:
    """A parsed ``m5 lab`` command line (see :func:`parse_options`)."""

    profile: str
    sections: tuple[str, ...]
    seeds: int
    out: Path
    pin: bool
    langs: tuple[str, ...]

    @property
    def lang(self) -> str:
        """The first language asked for: the one printed messages use."""
        return self.langs[0]


def parse_options(argv: Sequence[str], environ: Mapping[str, str]) -> LabOptions:
    """Parse ``m5 lab`` arguments; raises UsageError with a message on any bad input."""
    parser = _parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as stop:  # argparse already printed its message
        if stop.code in (0, None):
            raise
        raise UsageError("invalid arguments (see the usage above)") from None
    if args.profile is not None and args.profile not in PROFILES:
        raise UsageError(f"--profile must be 'smoke' or 'full', got {args.profile!r}")
    profile = resolve_profile(args.profile, environ)
    sections = tuple(args.section) if args.section else SECTIONS
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise UsageError(f"unknown section(s) {', '.join(map(repr, unknown))}; choose from {', '.join(SECTIONS)}")
    try:
        seeds = int(args.seeds)
    except ValueError:
        seeds = 0
    if seeds < 1:
        raise UsageError(f"--seeds must be a positive integer, got {args.seeds!r}")
    bad = [lang for lang in args.lang if lang not in LANGUAGES]
    if bad:
        raise UsageError(f"--lang must be one or more of {', '.join(LANGUAGES)}, got {bad[0]!r}")
    langs = tuple(dict.fromkeys(args.lang))  # in the order typed, without repeats
    if args.pin:
        if args.profile == "smoke":
            raise UsageError("--pin regenerates the full-profile artifacts; drop --profile smoke")
        if args.section:
            raise UsageError("--pin runs every section; drop --section")
        profile = "full"
    # Keep lab order and drop duplicates whatever order the user typed.
    ordered = tuple(s for s in SECTIONS if s in sections)
    return LabOptions(profile, ordered, seeds, Path(args.out), bool(args.pin), langs)


#: Report file of each language; both can share one ``--out`` folder.
REPORT_FILES = {"en": "report.md", "ru": "report.ru.md"}
CLAIMS_FILE = "claims.json"
CLAIMS_INDEX = "README.md"


def _command(options: LabOptions) -> str:
    """The ``m5 lab`` command line that reproduces ``options`` (written into claims.json)."""
    parts = ["m5 lab", "--profile", options.profile]
    if options.sections != SECTIONS:
        parts += ["--section", *options.sections]
    parts += ["--seeds", str(options.seeds), "--out", options.out.as_posix(), "--lang", *options.langs]
    return " ".join(parts + (["--pin"] if options.pin else []))


def _write_report(results: dict, options: LabOptions, seconds: dict, total: float, claims: dict, lang: str) -> tuple[Path, dict]:
    """Figures and the report of one language; returns the report's path and the per-seed verdicts."""
    from reference_impl.lab_caveats import caveats
    from reference_impl.lab_comparisons import comparisons_table, evaluate_comparisons
    from reference_impl.lab_results import claims_table

    labels = labels_for(lang)
    render = _Render(options.out, labels, labels["run.lab"].format(profile=options.profile, seeds=options.seeds),
                     "" if lang == "en" else f".{lang}")
    section_title = {s: _t(labels, f"section.{s}") for s in options.sections}
    lines = [f"# {_t(labels, 'title')}", "", _t(labels, "intro", profile=options.profile, last_offset=options.seeds - 1,
                                                sections=", ".join(section_title.values())), ""]
    lines += _table(_header(labels, "section", "wall_time"),
                    [(section_title[s], _fmt(seconds[s], 1)) for s in options.sections] + [(_t(labels, "total"), _fmt(total, 1))])
    for section in options.sections:
        lines += ["", f"## {section_title[section]}", ""] + REPORTERS[section](results[section], render)
    claim_lines, verdicts = _claims(results, labels)
    if claim_lines or claims:
        lines += ["", f"## {_t(labels, 'claims')}", *claim_lines]
    if claims:
        lines += ["", _t(labels, "all_claims"), "", *claims_table(claims, lang)]
        compared = evaluate_comparisons(claims)
        if compared:
            lines += ["", _t(labels, "comparisons"), "", *comparisons_table(compared, lang)]
        notes = caveats(claims, lang)
        if notes:
            lines += ["", f"## {_t(labels, 'caveats')}", "", *(f"- {n}" for n in notes)]
    lines += ["", f"## {labels['summary_heading']}", ""]
    lines += [f"- {labels[k]}" for k in ("summary_bc", "summary_dqn", "summary_offline", "summary_dt", "summary_llm")]
    report = options.out / REPORT_FILES[lang]
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report, verdicts


def run_lab(options: LabOptions, *, data_dir: Path | None = None) -> dict:
    """Run the requested sections, write figures, reports and claims.json, pin if asked.

    Writes, in ``options.out``: one report per language (:data:`REPORT_FILES`) with
    its figures (``<section>.png``, Russian ones ``<section>.ru.png``), ``claims.json``
    (every claim of :mod:`reference_impl.lab_results` whose section ran; numbers only,
    no timings, so equal runs give equal files) and ``README.md`` (the claim id index).
    Returns ``{"results": {section: [per-seed dict]}, "seconds": {section: s},
    "verdicts": {...}, "claims": {...}, "report": Path (first language),
    "reports": {lang: Path}, "pinned": [Path]}``.
    """
    from reference_impl.lab_results import claims_document, evaluate_claims, id_index

    profile = PROFILE_PARAMS[options.profile]
    options.out.mkdir(parents=True, exist_ok=True)
    cache: dict = {"need_fqe": "fqe" in options.sections}
    tasks = [(s, i) for s in options.sections for i in range(1 if s in UNSEEDED else options.seeds)]
    results: dict[str, list[dict]] = {s: [] for s in options.sections}
    seconds = dict.fromkeys(options.sections, 0.0)
    started = time.perf_counter()
    for section, offset in progress(tasks, desc="m5 lab", total=len(tasks)):
        t0 = time.perf_counter()
        results[section].append(RUNNERS[section](profile, offset, cache))
        seconds[section] += time.perf_counter() - t0
    total = time.perf_counter() - started
    if "offline" in seconds and "fqe" in seconds:
        # One offline_experiment serves both sections and ran under "offline":
        # move its FQE stage to the fqe row.
        moved = sum(run["seconds"].get("fqe", 0.0) for key, run in cache.items() if isinstance(key, tuple))
        seconds["offline"] -= moved
        seconds["fqe"] += moved

    return write_outputs(options, results, seconds, total, data_dir=data_dir)


def write_outputs(options: LabOptions, results: dict[str, list[dict]], seconds: Mapping[str, float], total: float, *,
                  data_dir: Path | None = None) -> dict:
    """Everything :func:`run_lab` writes, from the sections' per-seed results.

    Apart from running so that the figures and texts of a long run (the committed
    10-seed report) can be rewritten from its saved results after a wording change,
    without training again. Returns what :func:`run_lab` returns.
    """
    from reference_impl.lab_results import claims_document, evaluate_claims, id_index

    options.out.mkdir(parents=True, exist_ok=True)
    claims = evaluate_claims(results)
    document = claims_document(_command(options), options.profile, options.seeds, _package_versions(), claims,
                               machine_description(), wall_seconds=total)
    (options.out / CLAIMS_FILE).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (options.out / CLAIMS_INDEX).write_text(id_index(document), encoding="utf-8")
    reports, verdicts = {}, {}
    for lang in options.langs:
        reports[lang], verdicts = _write_report(results, options, dict(seconds), total, claims, lang)

    pinned = []
    if options.pin:
        pinned = _write_pinned(results, PROFILE_PARAMS[options.profile], options.seeds, verdicts, DATA_DIR if data_dir is None else data_dir,
                               document)
    return {"results": results, "seconds": dict(seconds), "total_seconds": total, "verdicts": verdicts, "claims": claims,
            "report": reports[options.langs[0]], "reports": reports, "pinned": pinned}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``m5 lab``; returns the exit status (0 ok, 2 usage error)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        options = parse_options(argv, os.environ)
    except UsageError as error:
        print(f"m5 lab: error: {error}", file=sys.stderr)
        return 2
    run = run_lab(options)
    labels = labels_for(options.lang)
    print(_t(labels, "done", profile=options.profile, count=len(options.sections), seconds=f"{run['total_seconds']:.1f}",
             report=", ".join(str(path) for path in run["reports"].values())))
    for path in run["pinned"]:
        print(_t(labels, "pinned", path=path))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
