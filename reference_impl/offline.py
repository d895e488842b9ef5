"""The offline-RL experiment of the lab: one fixed log, five learners, FQE next to the simulator.

:func:`offline_experiment` collects a mixed log, trains behavior cloning, naive
offline DQN, support-restricted DQN, discrete CQL and IQL on it (same log, same
seed), evaluates each greedy policy in the simulator, and estimates each policy's
value from the log alone with FQE, so the lab can put the two side by side.

The log and the learners are imported from where they live: :mod:`reference_impl.offline_data`
and :mod:`reference_impl.offline_methods` (this module re-exports nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from reference_impl.common import progress as progress_bar
from reference_impl.common import seed_everything
from reference_impl.exact_eval import exact_outcomes
from reference_impl.expert import ExpertPolicy
from reference_impl.fqe import FQEConfig, exact_action_values, fit_fqe, policy_value
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.offline_data import (
    action_frequencies,
    collect_offline_dataset,
    episode_start_indices,
    summarize_dataset,
    to_arrays,
)
from reference_impl.offline_methods import (
    BehaviorCloningConfig,
    CQLConfig,
    DQNConfig,
    GreedyPolicy,
    IQLConfig,
    OfflineLog,
    RestrictedDQNConfig,
    resolve_kernels,
    train_behavior_cloning,
    train_cql,
    train_iql,
    train_offline_dqn,
    train_restricted_dqn,
)
from reference_impl.records import Episode
from reference_impl.rollout import rollout

__all__ = [
    "METHOD_NAMES",
    "OfflineExperimentConfig",
    "offline_experiment",
    "offline_experiment_on",
    "simulated_value",
    "greedy_q_mean",
    "true_state_values",
    "logged_pair_share",
    "q_value_errors",
    "pinned_arrays",
]

#: Method names, in the order the lab plots them.
METHOD_NAMES = ("behavior cloning", "naive DQN", "restricted DQN", "CQL", "IQL")
#: The lab's support threshold (relative to the most likely action).
SUPPORT_THRESHOLD = 0.35


@dataclass(frozen=True)
class OfflineExperimentConfig:
    """Every learner's hyper-parameters and the FQE evaluator's, in one place."""

    bc: BehaviorCloningConfig = field(default_factory=BehaviorCloningConfig)
    dqn: DQNConfig = field(default_factory=DQNConfig)
    restricted: RestrictedDQNConfig = field(default_factory=lambda: RestrictedDQNConfig(threshold_ratio=SUPPORT_THRESHOLD))
    cql: CQLConfig = field(default_factory=CQLConfig)
    iql: IQLConfig = field(default_factory=IQLConfig)
    fqe: FQEConfig = field(default_factory=lambda: FQEConfig(gamma=0.99))
    profile: str = "mediocre"


def simulated_value(env: KeyDoorGrid, policy: Callable, starts, gamma: float) -> float:
    """The discounted return of a *deterministic* policy, averaged over ``starts``.

    With no slips the environment is deterministic, so one rollout per distinct start
    cell is exact. This is the ground truth an FQE estimate over the same start cells
    is compared with (rollouts stop at the time limit, as the log's episodes do).
    """
    if env.slip_probability:
        raise ValueError("simulated_value: `env` must be deterministic (slip_probability == 0)")
    cache: dict[tuple[int, int], float] = {}
    total = 0.0
    for start in starts:
        start = tuple(int(x) for x in start)
        if start not in cache:
            ep = rollout(env, policy, seed=0, start=start)
            cache[start] = float(sum(gamma**t * tr.reward for t, tr in enumerate(ep.transitions)))
        total += cache[start]
    return total / len(starts)


def greedy_q_mean(q_net, policy: GreedyPolicy, observations: np.ndarray) -> float:
    """Mean over logged states of Q(s, pi(s)): what the learner believes its policy earns
    per state. Returns above the largest achievable return (1.0 in KeyDoorGrid) are
    overestimation, the signature of bootstrapping from actions the log never shows."""
    with torch.no_grad():
        q = q_net(torch.as_tensor(np.asarray(observations, dtype=np.float32))).double().numpy()
    chosen = policy.actions(observations)
    return float(q[np.arange(len(chosen)), chosen].mean())


def true_state_values(env: KeyDoorGrid, policy: GreedyPolicy, observations: np.ndarray, gamma: float) -> np.ndarray:
    """V^pi(s) of the policy at each observation, exact: shape (N,).

    Solves the Bellman equation of the environment's tabular model
    (:meth:`KeyDoorGrid.tabular_model`, no time limit, the same fixed point a learner
    that bootstraps across the time limit aims at), so a learner's Q(s, pi(s)) can be
    compared with the truth state by state, not only through start-cell rollouts.
    """
    model = env.tabular_model()
    probs = policy.probs(model["observations"])
    values = np.sum(probs * exact_action_values(model, probs, gamma), axis=1)
    return values[[env.state_index(o) for o in np.asarray(observations)]]


def logged_pair_share(env: KeyDoorGrid, policy: GreedyPolicy, observations: np.ndarray, actions: np.ndarray) -> float:
    """Share of the log's distinct states where the policy's greedy action was itself logged in that state.

    1.0: the policy never leaves the log's (state, action) pairs; lower: it bootstraps
    on actions it has no data for. How CQL and IQL protect (the ranking of actions),
    measured apart from what the Q values are worth in level. Each state counts once,
    however often the log visits it: the same states as :func:`q_value_errors`.
    """
    obs = np.asarray(observations)
    states = np.asarray([env.state_index(o) for o in obs])
    seen = set(zip(states.tolist(), (int(a) for a in actions)))
    distinct, first = np.unique(states, return_index=True)
    chosen = policy.actions(obs[first])
    return float(np.mean([(int(s), int(a)) in seen for s, a in zip(distinct, chosen)]))


def q_value_errors(
    env: KeyDoorGrid, q_net, policy: GreedyPolicy, observations: np.ndarray, actions: np.ndarray, gamma: float
) -> dict[str, float]:
    """How far a learned Q is from the truth, split by whether the log holds the action.

    Over the distinct states of the log, with Q^pi the exact action values of the
    learner's own greedy policy (the fixed point its TD targets aim at)::

        logged_error   = mean over logged (s, a) pairs   of Q(s, a) - Q^pi(s, a)
        unlogged_error = mean over unlogged (s, a) pairs of Q(s, a) - Q^pi(s, a)
        above_max_share = share of states with max_a Q(s, a) > goal_reward

    ``goal_reward`` bounds every return of the task (all other rewards are <= 0), so a
    state above it is overestimation beyond doubt. A learner that bootstraps from
    actions the log never shows overestimates on unlogged pairs first: that is the
    mechanism the protected methods guard against. ``unlogged_error`` is NaN when the
    log holds every action of every state it visits.
    """
    obs = np.asarray(observations, dtype=np.float32)
    states = np.asarray([env.state_index(o) for o in obs])
    distinct, first = np.unique(states, return_index=True)
    logged = np.zeros((len(distinct), env.action_dim), dtype=bool)
    logged[np.searchsorted(distinct, states), np.asarray(actions, dtype=np.int64)] = True

    model = env.tabular_model()
    q_true = exact_action_values(model, policy.probs(model["observations"]), gamma)[distinct]
    with torch.no_grad():
        q_learned = q_net(torch.as_tensor(obs[first])).double().numpy()
    error = q_learned - q_true
    return {
        "logged_error": float(error[logged].mean()),
        "unlogged_error": float(error[~logged].mean()) if (~logged).any() else float("nan"),
        "above_max_share": float(np.mean(q_learned.max(axis=1) > env.goal_reward)),
    }


def pinned_arrays(run: dict) -> dict[str, np.ndarray]:
    """Flat arrays of an :func:`offline_experiment` result for a pinned ``.npz``
    (unicode names, no object arrays): method_names, mean_return, success_rate,
    fqe_names, fqe_values, fqe_simulated_values."""
    names = list(run["results"])
    fqe_names = list(run["fqe"])
    return {
        "method_names": np.asarray(names, dtype=str),
        "mean_return": np.asarray([run["results"][n]["mean_return"] for n in names], dtype=np.float64),
        "success_rate": np.asarray([run["results"][n]["success_rate"] for n in names], dtype=np.float64),
        "fqe_names": np.asarray(fqe_names, dtype=str),
        "fqe_values": np.asarray([run["fqe"][n]["fqe_value"] for n in fqe_names], dtype=np.float64),
        "fqe_simulated_values": np.asarray([run["fqe"][n]["simulated_value"] for n in fqe_names], dtype=np.float64),
    }


def _positive(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"offline_experiment: `{name}` must be a positive integer, got {value!r}")
    return int(value)


def offline_experiment(
    seed: int,
    dataset_episodes: int,
    train_epochs: int,
    *,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
    config: OfflineExperimentConfig | None = None,
    run_fqe: bool = True,
) -> dict:
    """Train the five offline learners on one mixed log and evaluate them two ways.

    Returns a dict with
      ``results``: {method: metrics dict (mean_return, success_rate, outcomes: exact, from the
                   environment's model, :func:`reference_impl.exact_eval.exact_outcomes`)
                   plus ``updates`` (gradient steps), ``train_seconds`` and
                   ``greedy_q_mean`` (mean logged-state Q(s, pi(s)); None for BC),
                   ``greedy_value_true`` (mean logged-state V^pi(s), exact, gamma of the
                   learners), ``logged_pair_share`` (see :func:`logged_pair_share`) and
                   ``q_logged_error``, ``q_unlogged_error``, ``above_max_share`` (see
                   :func:`q_value_errors`; None for BC)};
      ``fqe``: {method: {"fqe_value", "simulated_value", "error" = fqe - simulated,
               "gamma", "logged_value"}}: discounted values over the log's own start cells
               (``logged_value``: FQE's value over every logged state);
      ``dataset``: the log summary (sizes, outcomes, action counts and frequencies),
               plus ``support_mask`` = behavior_support_mask(frequencies, 0.35) and
               ``optimal_return`` (the expert's exact mean return over the start cells);
      ``config``: the hyper-parameters as plain dicts; ``seconds``: wall time by stage.
    Every method is scored exactly (the start cell is drawn uniformly; the environment has no
    slips), so no evaluation episode is sampled. ``kernels`` swaps kernels by name (see
    :data:`reference_impl.offline_methods.DEFAULT_KERNELS`).
    """
    dataset_episodes = _positive(dataset_episodes, "dataset_episodes")
    _positive(train_epochs, "train_epochs")  # before the log is collected
    cfg = config or OfflineExperimentConfig()
    seed_everything(seed)
    started = time.perf_counter()
    episodes, _ = collect_offline_dataset(seed, dataset_episodes, cfg.profile, env=KeyDoorGrid())
    return offline_experiment_on(
        episodes,
        seed,
        train_epochs,
        kernels=kernels,
        progress=progress,
        config=cfg,
        run_fqe=run_fqe,
        collect_seconds=time.perf_counter() - started,
    ) | {"config": _config_record(seed, dataset_episodes, train_epochs, cfg)}


def _config_record(seed: int, dataset_episodes: int | None, train_epochs: int, cfg: OfflineExperimentConfig) -> dict:
    return {
        "seed": seed,
        "dataset_episodes": dataset_episodes,
        "train_epochs": train_epochs,
        **{key: asdict(value) if hasattr(value, "__dataclass_fields__") else value for key, value in cfg.__dict__.items()},
    }


def offline_experiment_on(
    episodes: Sequence[Episode],
    seed: int,
    train_epochs: int,
    *,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
    config: OfflineExperimentConfig | None = None,
    run_fqe: bool = True,
    collect_seconds: float = 0.0,
) -> dict:
    """:func:`offline_experiment` on a log given as its episodes (in log order) instead of
    collected here: e.g. a learning agent's replay history
    (:func:`reference_impl.online_dqn.train_online_dqn`'s ``played_episodes``) beside the
    designed log. The episodes must come from ``KeyDoorGrid()`` (the lab's layout, 50-step
    limit, no slips), where every method is scored. Returns what :func:`offline_experiment`
    returns (``config["dataset_episodes"]`` None: the log was given).
    """
    train_epochs = _positive(train_epochs, "train_epochs")
    if len(episodes) == 0:
        raise ValueError("offline_experiment_on: `episodes` is empty")
    cfg = config or OfflineExperimentConfig()
    k = resolve_kernels(kernels)
    seed_everything(seed)
    clock = {"collect": collect_seconds}

    env = KeyDoorGrid()
    transitions = [t for episode in episodes for t in episode.transitions]
    arrays = to_arrays(transitions)
    log = OfflineLog.from_arrays(arrays)
    n_actions = env.action_dim
    frequencies = action_frequencies(arrays["actions"], n_actions)
    dataset = summarize_dataset(episodes)
    dataset["support_mask"] = np.asarray(k["behavior_support_mask"](frequencies, SUPPORT_THRESHOLD), bool).tolist()

    trained = {}
    train_seconds = {}
    steps = progress_bar(METHOD_NAMES, desc="offline methods", total=len(METHOD_NAMES), enabled=progress)
    for i, name in enumerate(steps):
        t0 = time.perf_counter()
        method_seed = seed * 100 + i
        if name == "behavior cloning":
            run = train_behavior_cloning(log, n_actions, epochs=train_epochs, seed=method_seed, config=cfg.bc, kernels=k)
        elif name == "naive DQN":
            run = train_offline_dqn(log, n_actions, epochs=train_epochs, seed=method_seed, config=cfg.dqn, kernels=k)
        elif name == "restricted DQN":
            behavior = trained["behavior cloning"].networks["policy"]
            run = train_restricted_dqn(log, n_actions, behavior, epochs=train_epochs, seed=method_seed, config=cfg.restricted, kernels=k)
        elif name == "CQL":
            run = train_cql(log, n_actions, epochs=train_epochs, seed=method_seed, config=cfg.cql, kernels=k)
        else:
            run = train_iql(log, n_actions, epochs=train_epochs, seed=method_seed, config=cfg.iql, kernels=k)
        trained[name] = run
        train_seconds[name] = time.perf_counter() - t0

    t0 = time.perf_counter()
    learner_configs = dict(zip(METHOD_NAMES, (cfg.bc, cfg.dqn, cfg.restricted, cfg.cql, cfg.iql)))
    results = {}
    for name, run in trained.items():
        metrics = exact_outcomes(env, run.policy)
        metrics["updates"] = run.updates
        q_net = run.networks.get("q")
        metrics["greedy_q_mean"] = None if q_net is None else greedy_q_mean(q_net, run.policy, arrays["observations"])
        # The truth the learned value is compared with: same policy, same logged states, same gamma.
        gamma = getattr(learner_configs[name], "gamma", cfg.fqe.gamma)  # BC has no gamma of its own
        metrics["greedy_value_true"] = float(true_state_values(env, run.policy, arrays["observations"], gamma).mean())
        metrics["logged_pair_share"] = logged_pair_share(env, run.policy, arrays["observations"], arrays["actions"])
        errors = {} if q_net is None else q_value_errors(env, q_net, run.policy, arrays["observations"], arrays["actions"], gamma)
        for key in ("logged_error", "unlogged_error", "above_max_share"):
            metrics[key if key == "above_max_share" else f"q_{key}"] = errors.get(key)
        metrics["train_seconds"] = round(train_seconds[name], 4)
        results[name] = metrics
    # The ceiling every return is read against: the expert from the same evaluation starts.
    dataset["optimal_return"] = exact_outcomes(env, ExpertPolicy(env))["mean_return"]
    clock["train"] = float(sum(train_seconds.values()))
    clock["evaluate"] = time.perf_counter() - t0

    fqe = {}
    if run_fqe:
        t0 = time.perf_counter()
        start_rows = episode_start_indices(arrays)
        start_obs = arrays["observations"][start_rows]
        start_cells = [env.decode(o)[0] for o in start_obs]
        for i, (name, run) in enumerate(trained.items()):
            q_net = fit_fqe(arrays, run.policy.probs, n_actions, cfg.fqe, seed=seed * 100 + 50 + i, targets_kernel=k["fqe_targets"])
            estimate = policy_value(q_net, start_obs, run.policy.probs)
            truth = simulated_value(env, run.policy, start_cells, cfg.fqe.gamma)
            fqe[name] = {
                "fqe_value": estimate,
                "simulated_value": truth,
                "error": estimate - truth,
                "gamma": cfg.fqe.gamma,
                # FQE's value of the policy over every logged state, next to greedy_value_true
                "logged_value": policy_value(q_net, arrays["observations"], run.policy.probs),
            }
        clock["fqe"] = time.perf_counter() - t0

    return {
        "results": results,
        "fqe": fqe,
        "dataset": dataset,
        "config": _config_record(seed, None, train_epochs, cfg),
        "seconds": {key: round(value, 4) for key, value in clock.items()},
    }
