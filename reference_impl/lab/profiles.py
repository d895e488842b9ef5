"""The lab's parameters: its sections, its two profiles and every section's settings.

``PROFILE_PARAMS[name]`` is a :class:`LabProfile` with one frozen dataclass per section;
the lab notebook, ``m5 lab`` and the pinned protocol all read their numbers from here.
:func:`resolve_profile` picks the profile from the command line or ``$RL_LLM_M5_PROFILE``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from reference_impl.expert import plan_distances
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.stats import episode_return_bounds, episodes_for_standard_error

__all__ = [
    "SECTIONS",
    "PROFILES",
    "PROFILE_ENV",
    "LabUsageError",
    "EnvironmentParams",
    "DaggerParams",
    "DQNParams",
    "LogParams",
    "OfflineParams",
    "DTParams",
    "LanguageParams",
    "LabProfile",
    "PROFILE_PARAMS",
    "DT_MAX_STANDARD_ERROR",
    "dt_return_bounds",
    "dt_evaluation_episodes",
    "offset_seeds",
    "resolve_profile",
]

SECTIONS: tuple[str, ...] = ("environment", "dagger", "dqn", "log", "offline", "fqe", "dt", "language")
PROFILES: tuple[str, ...] = ("smoke", "full")
PROFILE_ENV = "RL_LLM_M5_PROFILE"


class LabUsageError(Exception):
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
    # BC and DAgger at equal expert-label budgets (imitation.label_budget_curve, its own setting).
    label_budgets: tuple[int, ...] = (40, 80, 120, 160, 200, 300, 400)
    budget_evaluation_episodes: int = 300
    budget_epochs: int = 20


@dataclass(frozen=True)
class DQNParams:
    seed: int
    episodes: int


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
    env = KeyDoorGrid()
    distances = plan_distances(env)
    shortest = min(int(distances[r, c, 0]) for r, c in env.start_positions)
    return episode_return_bounds(
        step_cost=env.step_cost,
        goal_reward=env.goal_reward,
        trap_reward=env.trap_reward,
        max_steps=env.max_steps,
        shortest_goal_steps=shortest,
    )


def dt_evaluation_episodes(max_se: float = DT_MAX_STANDARD_ERROR) -> int:
    """Evaluation episodes per request so that every point's measured standard error is <=
    ``max_se`` whatever the policy does: :func:`reference_impl.stats.episodes_for_standard_error`
    over :func:`dt_return_bounds` (no search over runs)."""
    return episodes_for_standard_error(*dt_return_bounds(), max_se)


# Requests from a trap-level return to well above the best return in the log
# (about 0.8 in KeyDoorGrid), so both the rising part and the plateau show.
_FULL_TARGETS = (-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
_SMOKE_TARGETS = (-1.0, 0.0, 0.5, 1.0, 2.0)

PROFILE_PARAMS: dict[str, LabProfile] = {
    "full": LabProfile(
        name="full",
        dagger=DaggerParams(seed=17, expert_episodes=4, rounds=3, learner_episodes_per_round=8, epochs=12),
        dqn=DQNParams(seed=5, episodes=130),
        log=LogParams(seed=41, episodes=80),
        offline=OfflineParams(seed=41, dataset_episodes=80, train_epochs=40),
        dt=DTParams(
            data_seed=41,
            train_seed=61,
            episodes=120,
            epochs=12,
            context_steps=16,
            batch_size=96,
            evaluation_episodes=dt_evaluation_episodes(),
            eval_env_seed=41,
            eval_seed=2000,
            target_returns=_FULL_TARGETS,
        ),
        language=LanguageParams(seed=71, episodes_per_prompt=45, bc_epochs=12, iql_epochs=20),
    ),
    "smoke": LabProfile(
        name="smoke",
        dagger=DaggerParams(
            seed=17,
            expert_episodes=4,
            rounds=2,
            learner_episodes_per_round=6,
            epochs=6,
            label_budgets=(40, 80),
            budget_evaluation_episodes=30,
            budget_epochs=5,
        ),
        dqn=DQNParams(seed=5, episodes=35),
        log=LogParams(seed=41, episodes=30),
        offline=OfflineParams(seed=41, dataset_episodes=30, train_epochs=5),
        dt=DTParams(
            data_seed=41,
            train_seed=61,
            episodes=40,
            epochs=4,
            context_steps=12,
            batch_size=64,
            evaluation_episodes=64,
            eval_env_seed=41,
            eval_seed=2000,
            target_returns=_SMOKE_TARGETS,
        ),
        language=LanguageParams(seed=71, episodes_per_prompt=20, bc_epochs=5, iql_epochs=8),
    ),
}


def offset_seeds(params, offset: int):
    """``params`` with every field whose name ends in ``seed`` shifted by ``offset``."""
    shifted = {f.name: getattr(params, f.name) + offset for f in dataclasses.fields(params) if f.name.endswith("seed")}
    return dataclasses.replace(params, **shifted)


def resolve_profile(cli_value: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The profile to run: ``--profile`` if given, else ``$RL_LLM_M5_PROFILE``, else smoke.

    Raises LabUsageError when the environment variable is set to anything but smoke/full
    (surrounding spaces and case are ignored), even if ``--profile`` is given: a
    misspelt variable would silently change what a notebook runs.
    """
    environ = os.environ if environ is None else environ
    raw = environ.get(PROFILE_ENV)
    from_env = None
    if raw is not None and raw.strip() != "":
        from_env = raw.strip().lower()
        if from_env not in PROFILES:
            raise LabUsageError(f"{PROFILE_ENV} must be 'smoke' or 'full', got {raw!r}")
    return cli_value or from_env or "smoke"


#: The label budget at which BC and DAgger are compared in the claims (one of the lab's budgets).
EQUAL_BUDGET = 200
