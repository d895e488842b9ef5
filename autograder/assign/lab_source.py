"""The capstone lab notebook (EN/RU), built with the same rules as the assignment.

Every section of the module's lab: environment, DAgger, the DQN pair, the fixed log
with its support mask, the offline methods, FQE against the simulator, the Decision
Transformer sweep, the token pipeline and the takeaways. Each loop that uses a
kernel receives the student's own: the numpy kernels come from the assignment
notebook (``m5_student.notebook.load_kernels``), the four torch losses are ported
in this notebook (answer cells checked against the numpy kernels by ``check_port``).
The loops run the smoke profile unless ``RL_LLM_M5_PROFILE=full``; the figures are
drawn from the pinned full-profile artifacts so they do not depend on the profile.
"""
from __future__ import annotations

from autograder.assign import sources as s
from autograder.assign.lab_text import TEXT

ANALYSIS_POINTS = 2
PORTS = ("masked_token_nll", "cql_discrete_penalty", "expectile_loss", "iql_advantage_weights")

LAB_SETUP = '''
import warnings

import numpy as np

from m5_student import figures, lab
from m5_student.labels import labels_for
from m5_student.notebook import check_port, load_kernels

PROFILE = lab.resolve_profile(None)  # smoke unless RL_LLM_M5_PROFILE=full
P = lab.PROFILE_PARAMS[PROFILE]
LABELS = labels_for(LANG)
K = load_kernels(lang=LANG)  # your ten numpy kernels, from the assignment notebook next to this one
print("profile:", PROFILE)
'''

ENVIRONMENT = '''
from m5_student.expert import ExpertPolicy
from m5_student.keydoor import KeyDoorGrid
from m5_student.rollout import rollout

env = KeyDoorGrid(seed=P.environment.seed)
_, info = env.reset(start=P.environment.start, seed=P.environment.seed)
expert_episode = rollout(env, ExpertPolicy(env), seed=P.environment.seed, start=P.environment.start)
print("observation_dim:", env.observation_dim, "action_dim:", env.action_dim)
print("expert from", P.environment.start, ": return", round(expert_episode.return_, 3),
      "steps", expert_episode.length, "outcome", expert_episode.outcome)
print("your kernels on the lab's small examples:")
print("  dqn_targets:", K["dqn_targets"]([0.2, -1.0], [0, 1], [[1.1, 1.6], [10.0, 20.0]], gamma=0.95))
print("  cql_discrete_penalty:", round(float(K["cql_discrete_penalty"]([2.0, 0.0, -1.0], 0)), 6))
print("  return_to_go:", K["return_to_go"]([1.0, 0.0, -0.5, 2.0]))
figures.plot_environment(env, labels=LABELS);
'''

DAGGER = '''
from m5_student.imitation import dagger_experiment

d = P.dagger
dagger_run = dagger_experiment(d.seed, d.expert_episodes, d.rounds, d.learner_episodes_per_round, d.epochs,
                               d.evaluation_episodes)
for record in dagger_run["records"]:
    print(f"round {record['round']}: success {record['success_rate']:.2f}, "
          f"return {record['mean_return']:.3f}, labeled states {record['dataset_size']}")
pinned = lab.load_pinned("M5_dagger_curve")  # the full protocol, independent of PROFILE
figures.plot_dagger_curve(pinned["rounds"], pinned["success_rate"], labels=LABELS);
'''

DQN = '''
from m5_student.online_dqn import train_online_dqn

q = P.dqn
for name, double, targets in (("DQN", False, K["dqn_targets"]), ("Double DQN", True, K["double_dqn_targets"])):
    run = train_online_dqn(q.seed, q.episodes, double, q.evaluation_episodes, targets_fn=targets)
    print(f"{name}: training success {np.mean(run['episode_success']):.2f}, "
          f"greedy evaluation success {run['evaluation']['success_rate']:.2f}")
pinned = lab.load_pinned("M5_online_dqn_curve")
figures.plot_dqn_curves(pinned["dqn_success"], pinned["double_success"], labels=LABELS);
'''

LOG = '''
from m5_student.keydoor import ACTION_NAMES
from m5_student.offline_data import action_frequencies, collect_offline_dataset, summarize_dataset

g = P.log
log_episodes, log_transitions = collect_offline_dataset(g.seed, g.episodes, g.profile)
probabilities = action_frequencies(np.asarray([t.action for t in log_transitions], dtype=np.int64))
support = np.asarray(K["behavior_support_mask"](probabilities, threshold_ratio=g.support_threshold), dtype=bool)
summary = summarize_dataset(log_episodes)
print("action counts:", summary["action_counts"])
print("behavior probabilities:", dict(zip(ACTION_NAMES, np.round(probabilities, 4).tolist())))
print(f"support mask (relative threshold {g.support_threshold}):", dict(zip(ACTION_NAMES, support.tolist())))
print("mean return in the log:", round(summary["mean_return"], 4), "outcomes:", summary["outcomes"])
figures.plot_log_actions(list(summary["action_counts"].values()), ACTION_NAMES, labels=LABELS);
'''

PORT_IMPORTS = '''
import math

import torch

from m5_student import validation as v
'''

PORTS_TABLE = '''
TORCH_PORTS = {
    "masked_token_nll": masked_token_nll_torch,
    "cql_discrete_penalty": cql_discrete_penalty_torch,
    "expectile_loss": expectile_loss_torch,
    "iql_advantage_weights": iql_advantage_weights_torch,
}
'''

OFFLINE = '''
from m5_student.fqe import FQEConfig
from m5_student.offline import OfflineExperimentConfig, offline_experiment

o = P.offline
offline_kernels = {name: K[name] for name in ("dqn_targets", "double_dqn_targets", "behavior_support_mask", "fqe_targets")}
offline_kernels.update(TORCH_PORTS)
offline_config = OfflineExperimentConfig(fqe=FQEConfig(gamma=0.99, iterations=o.fqe_iterations,
                                                       steps_per_iteration=o.fqe_steps_per_iteration))
offline_run = offline_experiment(o.seed, o.dataset_episodes, o.train_epochs, o.evaluation_episodes,
                                 kernels=offline_kernels, config=offline_config)
for name, metrics in offline_run["results"].items():
    print(f"{name:>18}: mean return {metrics['mean_return']:.3f}, success {metrics['success_rate']:.2f}")
pinned_offline = lab.load_pinned("M5_offline_method_results")
figures.plot_offline_methods([str(n) for n in pinned_offline["method_names"]], pinned_offline["mean_return"],
                             pinned_offline["success_rate"], labels=LABELS);
'''

FQE = '''
for name, row in offline_run["fqe"].items():
    print(f"{name:>18}: FQE {row['fqe_value']:.4f}, simulator {row['simulated_value']:.4f}")
# One target by hand: FQE averages the next values under the evaluated policy (no max).
print("fqe_targets example:", K["fqe_targets"]([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]], gamma=0.9))
figures.plot_fqe_vs_simulator([str(n) for n in pinned_offline["fqe_names"]], pinned_offline["fqe_values"],
                              pinned_offline["fqe_simulated_values"], labels=LABELS);
'''

DT = '''
from m5_student.decision_transformer import dt_return_sweep, train_decision_transformer

t = P.dt
dt_episodes, _ = collect_offline_dataset(t.data_seed, t.episodes, "mixed")
probe = KeyDoorGrid()
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="enable_nested_tensor")  # harmless torch notice
    dt_model, dt_losses = train_decision_transformer(
        dt_episodes, t.train_seed, probe.observation_dim, probe.action_dim, t.context_steps, t.epochs, t.batch_size,
        return_to_go_fn=K["return_to_go"], masked_token_nll=TORCH_PORTS["masked_token_nll"])
sweep = dt_return_sweep(dt_model, lambda: KeyDoorGrid(seed=t.eval_env_seed), t.target_returns,
                        episodes=t.evaluation_episodes, seed=t.eval_seed, context_steps=t.context_steps)
print("final training loss:", round(dt_losses[-1], 4))
for requested, achieved in zip(sweep["target_return"], sweep["mean_return"]):
    print(f"requested {requested:5.2f} -> achieved {achieved:.3f}")
pinned = lab.load_pinned("M5_decision_transformer_results")
figures.plot_dt_sweep(pinned["target_return"], pinned["mean_return"], labels=LABELS,
                      data_range=pinned["data_return_range"]);
'''

LANGUAGE = '''
from m5_student.language import PROMPTS, language_offline_experiment, token_text

w = P.language
language_run = language_offline_experiment(w.seed, w.episodes_per_prompt, w.bc_epochs, w.iql_epochs, kernels=TORCH_PORTS)
for name, row in language_run["evaluation"].items():
    print(f"{name}: exact match {row['exact_match']:.2f}, mean reward {row['mean_reward']:.3f}")
    for prompt, sequence, reward in zip(PROMPTS, row["sequences"], row["rewards"]):
        print("   ", prompt, "->", token_text(sequence), "reward", reward)
pinned = lab.load_pinned("M5_language_ilql_results")
figures.plot_language_exact_match([str(n) for n in pinned["method_names"]], pinned["exact_match"], labels=LABELS);
'''

TAKEAWAYS = '''
protocol = lab.load_pinned("M5_experiment_protocol")
print(LABELS["summary_heading"])
for key in ("summary_bc", "summary_dqn", "summary_offline", "summary_dt", "summary_llm"):
    print("-", LABELS[key])
print("pinned artifacts:", protocol["artifact_scope"])
'''

def _question(t: dict, key: str) -> list:
    return [s.markdown(f"question_{key}", t["questions"][key]),
            s.markdown(f"answer_{key}", t["answers"][key], grade=True, solution=True, points=ANALYSIS_POINTS)]


def lab_notebook(lang: str):
    """The instructor lab notebook in ``lang`` ("en" or "ru")."""
    if lang not in s.LANGS:
        raise ValueError(f"lab_notebook: `lang` must be one of {s.LANGS}, got {lang!r}")
    t = TEXT[lang]
    cells = [s.markdown("intro", t["title"]), s.locked("setup", s.SETUP_CODE), s.locked("lab_setup", LAB_SETUP),
             s.markdown("environment", t["environment"]), s.locked("run_environment", ENVIRONMENT),
             s.markdown("dagger", t["dagger"]), s.locked("run_dagger", DAGGER), *_question(t, "dagger"),
             s.markdown("dqn", t["dqn"]), s.locked("run_dqn", DQN), *_question(t, "dqn"),
             s.markdown("log", t["log"]), s.locked("run_log", LOG),
             s.markdown("ports", t["ports"]), s.locked("port_imports", PORT_IMPORTS)]
    for name in PORTS:
        cells.append(s.code(f"port_{name}", s.solution_source(f"{name}_torch", s.TORCH_KERNELS_PY), solution=True))
        cells.append(s.locked(f"check_port_{name}", f'check_port({name}_torch, K["{name}"], "{name}")'))
    cells += [s.locked("ports_table", PORTS_TABLE),
              s.markdown("offline", t["offline"]), s.locked("run_offline", OFFLINE), *_question(t, "offline"),
              s.markdown("fqe", t["fqe"]), s.locked("run_fqe", FQE), *_question(t, "fqe"),
              s.markdown("dt", t["dt"]), s.locked("run_dt", DT), *_question(t, "dt"),
              s.markdown("language", t["language"]), s.locked("run_language", LANGUAGE), *_question(t, "language"),
              s.markdown("takeaways", t["takeaways"]), s.locked("run_takeaways", TAKEAWAYS)]
    return s._notebook(cells, "lab", lang)
