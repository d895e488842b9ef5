"""The lab's section runners: one seed of one section each, as a plain dict of results.

``RUNNERS[section](profile, offset, cache)`` runs ``section`` with the profile's
parameters, every seed shifted by ``offset``; ``cache`` lets the offline and FQE
sections share one training run. The learners are imported inside each runner: torch
and the training code load only for the sections asked for (``m5 lab --help`` and the
notebooks' pinned-file readers start without them).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable

import numpy as np

from reference_impl.decision_transformer import dt_return_sweep, train_decision_transformer
from reference_impl.expert import ExpertPolicy
from reference_impl.fqe import FQEConfig
from reference_impl.imitation import LabelBudgetConfig, dagger_experiment, label_budget_curve
from reference_impl.kernels import behavior_support_mask
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.lab.claims import DT_LOG_GROUPS
from reference_impl.lab.figures import SHIFT_KEYS
from reference_impl.lab.profiles import EQUAL_BUDGET, LabProfile, offset_seeds
from reference_impl.language import language_offline_experiment
from reference_impl.language_task import HELDOUT_PROMPTS, PROMPTS, token_text
from reference_impl.offline import OfflineExperimentConfig, offline_experiment, offline_experiment_on
from reference_impl.offline_data import action_frequencies, collect_offline_dataset, summarize_dataset
from reference_impl.online_dqn import train_online_dqn
from reference_impl.rollout import rollout

__all__ = ["RUNNERS", "UNSEEDED"]


# Each runner takes (profile, offset, cache) and returns a plain dict for that seed.
def _run_environment(profile: LabProfile, offset: int, cache: dict) -> dict:
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
    p = offset_seeds(profile.dagger, offset)
    run = dagger_experiment(p.seed, p.expert_episodes, p.rounds, p.learner_episodes_per_round, p.epochs)
    records = run["records"]
    budget_config = LabelBudgetConfig(epochs=p.budget_epochs, evaluation_episodes=p.budget_evaluation_episodes)
    budget = label_budget_curve(p.seed, p.label_budgets, budget_config)
    return {
        **_dagger_matched_runs(p.seed, p.label_budgets, budget, budget_config),
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


def _dagger_matched_runs(seed: int, budgets, curve: dict, config: LabelBudgetConfig) -> dict:
    """The two comparisons that make "the same budget" exact, at the headline budget (the
    equal-budget one, else the profile's largest):

    * **matched distinct labels**: clean demonstrations run out of new states (cloning
      trains on fewer distinct labels than the budget allows), so DAgger is run again with
      a budget of exactly cloning's distinct labels: both learners then hold the same
      number of distinct expert labels (cloning's set is unchanged: it is all it has);
    * **slipped demonstrations**: the expert's demonstrations slip as the learner does
      (``demonstration_slip_probability=None``), so they show recoveries and hold more
      distinct states; both learners at the headline budget.
    """
    headline = EQUAL_BUDGET if EQUAL_BUDGET in budgets else max(budgets)
    at = list(curve["budgets"]).index(headline)
    matched = int(curve["bc_labels"][at])
    same = label_budget_curve(seed, (matched,), config)
    slipped = label_budget_curve(seed, (headline,), dataclasses.replace(config, demonstration_slip_probability=None))
    return {
        "matched_budget": headline,
        "matched_labels": matched,
        "matched_bc_labels": int(same["bc_labels"][0]),
        "matched_dagger_labels": int(same["dagger_labels"][0]),
        "matched_bc_success": float(same["bc_success_rate"][0]),
        "matched_dagger_success": float(same["dagger_success_rate"][0]),
        "slipped_bc_labels": int(slipped["bc_labels"][0]),
        "slipped_dagger_labels": int(slipped["dagger_labels"][0]),
        "slipped_bc_success": float(slipped["bc_success_rate"][0]),
        "slipped_dagger_success": float(slipped["dagger_success_rate"][0]),
    }


def _run_dqn(profile: LabProfile, offset: int, cache: dict) -> dict:
    p = offset_seeds(profile.dqn, offset)
    out = {"seed": p.seed}
    for key, double in (("dqn", False), ("double", True)):
        run = train_online_dqn(p.seed, p.episodes, double)
        if not double:  # DQN's replay history: the offline section's second log
            cache[("replay", offset)] = run["played_episodes"]
        out[f"{key}_success"] = np.asarray(run["episode_success"], dtype=np.int64)
        out[f"{key}_eval_success"] = float(run["evaluation"]["success_rate"])
        out[f"{key}_eval_return"] = float(run["evaluation"]["mean_return"])
        # learned minus exact Q of the greedy action, over the buffer's states, at checkpoints
        out["overestimation_episodes"] = np.asarray([e for e, _ in run["overestimation"]], dtype=np.int64)
        out[f"{key}_overestimation"] = np.asarray([v for _, v in run["overestimation"]], dtype=np.float64)
    return out


def _run_log(profile: LabProfile, offset: int, cache: dict) -> dict:
    p = offset_seeds(profile.log, offset)
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
    key = ("offline", offset)
    if key in cache and (cache[key]["fqe"] or not with_fqe):
        return cache[key]
    p = offset_seeds(profile.offline, offset)
    config = OfflineExperimentConfig(fqe=FQEConfig(gamma=0.99, iterations=p.fqe_iterations, steps_per_iteration=p.fqe_steps_per_iteration))
    run = offline_experiment(p.seed, p.dataset_episodes, p.train_epochs, run_fqe=with_fqe, config=config)
    run["replay"] = offline_experiment_on(_replay_log(profile, offset, cache), p.seed, p.train_epochs, run_fqe=False, config=config)
    cache[key] = run
    return run


def _replay_log(profile: LabProfile, offset: int, cache: dict) -> list:
    """The online DQN section's replay history at this offset (trained here when that section did not run)."""
    if ("replay", offset) not in cache:
        q = offset_seeds(profile.dqn, offset)
        cache[("replay", offset)] = train_online_dqn(q.seed, q.episodes, False)["played_episodes"]
    return cache[("replay", offset)]


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
        # the same five methods on the second log: online DQN's replay history (exploratory to good)
        "replay_mean_return": np.asarray([run["replay"]["results"][n]["mean_return"] for n in names]),
        "replay_success_rate": np.asarray([run["replay"]["results"][n]["success_rate"] for n in names]),
        "replay_log_episodes": int(run["replay"]["dataset"]["episodes"]),
        "replay_log_transitions": int(run["replay"]["dataset"]["transitions"]),
        "replay_log_mean_return": float(run["replay"]["dataset"]["mean_return"]),
        "replay_log_goal_share": run["replay"]["dataset"]["outcomes"]["goal"] / run["replay"]["dataset"]["episodes"],
        "log_mean_return": float(run["dataset"]["mean_return"]),
        "log_goal_share": run["dataset"]["outcomes"]["goal"] / run["dataset"]["episodes"],
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
    p = offset_seeds(profile.dt, offset)
    episodes, _ = collect_offline_dataset(p.data_seed, p.episodes, "mixed")
    returns = np.asarray([ep.return_ for ep in episodes])
    # How each logged episode ended, as an index of DT_LOG_GROUPS (trap, timeout, goal).
    outcome_codes = np.asarray([DT_LOG_GROUPS.index(ep.outcome) for ep in episodes], dtype=np.int64)
    probe = KeyDoorGrid()
    with warnings.catch_warnings():
        # torch warns that nested tensors are off when norm_first is set; harmless here.
        warnings.filterwarnings("ignore", message="enable_nested_tensor")
        model, losses = train_decision_transformer(
            episodes, p.train_seed, probe.observation_dim, probe.action_dim, p.context_steps, p.epochs, p.batch_size
        )
    sweep = dt_return_sweep(
        model,
        lambda: KeyDoorGrid(seed=p.eval_env_seed),
        p.target_returns,
        episodes=p.evaluation_episodes,
        seed=p.eval_seed,
        context_steps=p.context_steps,
    )
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
    p = offset_seeds(profile.language, offset)
    run = language_offline_experiment(p.seed, p.episodes_per_prompt, p.bc_epochs, p.iql_epochs)
    names = list(run["evaluation"])

    def examples(evaluation: dict, prompts) -> dict:
        return {
            n: [
                (prompt, token_text(seq), reward)
                for prompt, seq, reward in zip(prompts, evaluation[n]["sequences"], evaluation[n]["rewards"])
            ]
            for n in names
        }

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
