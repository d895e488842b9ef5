"""The capstone lab notebook (EN/RU), built with the same rules as the assignment.

Every section of the module's lab: environment, DAgger, the DQN pair, the fixed log
with its support mask, the offline methods, FQE against the simulator, the Decision
Transformer sweep, the token pipeline and the takeaways. Each loop that uses a
kernel receives the student's own: the numpy kernels come from the assignment
notebook (``m5_student.notebook.load_kernels``), the four torch losses are ported
in this notebook (answer cells checked against the numpy kernels by ``check_port``).
The loops run the smoke profile unless ``RL_LLM_M5_PROFILE=full`` (the student's run,
one seed); every figure and table of the course's run shows the mean over its seeds with
the 95 % interval (:mod:`reference_impl.course_run`), titled so, and before each question
a short table gives the course's numbers the question is about.
"""

from __future__ import annotations

from autograder.assign import sources
from autograder.assign.claims import cited_claims
from autograder.assign.lab_text import TEXT
from reference_impl.lab.design import REPORT_FIRST_OFFSET, search_lines
from reference_impl.lab.labels import labels_for

ANALYSIS_POINTS = 2
PORTS = ("masked_token_nll", "cql_discrete_penalty", "expectile_loss", "iql_advantage_weights")

LAB_SETUP = '''
import json
import warnings

import numpy as np

from m5_student import course_run
from m5_student.lab import figures
from m5_student.lab.labels import display_name, labels_for
from m5_student.lab.pins import DATA_DIR, load_pinned
from m5_student.lab.profiles import PROFILE_PARAMS, resolve_profile
from m5_student.lab.side_studies import SIDE_FILE, side_table
from m5_student.notebook import check_port, lab_section, load_kernels, ported

PROFILE = resolve_profile(None)  # smoke unless RL_LLM_M5_PROFILE=full
P = PROFILE_PARAMS[PROFILE]
LABELS = labels_for(LANG)
K = load_kernels(lang=LANG)  # your ten numpy kernels, from the saved assignment notebook next to this one
YOUR_RUN = LABELS["run.yours"].format(profile=PROFILE)  # the title of a figure of your own run
SEEDS = load_pinned("M5_lab_seeds")  # the course's run: every quantity in each of its seeds
COURSE = load_pinned("M5_course_numbers")  # its claims and paired comparisons, as its report states them
SIDE = json.loads((DATA_DIR / SIDE_FILE).read_text(encoding="utf-8"))  # the two side studies, as their pages state them
COURSE_RUN = LABELS["run.pinned_seeds"].format(seeds=int(SEEDS["seeds"]))  # the title of a figure of the course's run


def course_band(key):
    """The course's run: the mean over its seeds and the half-width of its 95 % interval."""
    return course_run.bands(SEEDS[key])


def show(key, **fields):
    """Print the notebook's message ``key`` in its language, with ``fields`` filled in."""
    print(LABELS[key].format(**fields))


def compare(rows, digits=2, bounds=None):
    """Your run beside the course's: (name, your value, the course's value in each of its seeds) rows;
    ``bounds`` (0, 1) for a share, whose intervals stop at its bounds."""
    print()
    show("nb.compare", profile=PROFILE, seeds=int(SEEDS["seeds"]))
    print(course_run.compare_table(LABELS, rows, digits, bounds))


def name_of(raw):
    return display_name(LABELS, str(raw))


def side_study(name):
    """A side study of the course, run on its own fresh seeds: its table and its figure."""
    from IPython.display import Image, Markdown, display

    display(Markdown("\\n".join(side_table(SIDE[name], LANG))))
    display(Image(filename=str(DATA_DIR / f"M5_{name}{'' if LANG == 'en' else '.ru'}.png")))


def course_numbers(ids):
    """The course's numbers ``ids`` (or every number of a section, e.g. "dagger"): mean [95 % interval],
    and paired differences with their verdict."""
    if isinstance(ids, str):
        ids = [cid for cid in COURSE["rows"] if cid.startswith(ids + ".")]
    show("nb.course_numbers", seeds=COURSE["seeds"])
    print(course_run.course_table(COURSE, ids, LANG))


show("nb.profile", profile=PROFILE)
'''

ENVIRONMENT = """
from m5_student.expert import ExpertPolicy
from m5_student.keydoor import KeyDoorGrid
from m5_student.rollout import rollout

env = KeyDoorGrid(seed=P.environment.seed)
_, info = env.reset(start=P.environment.start, seed=P.environment.seed)
expert_episode = rollout(env, ExpertPolicy(env), seed=P.environment.seed, start=P.environment.start)
show("nb.dims", obs=env.observation_dim, act=env.action_dim)
show("nb.expert", start=P.environment.start, ret=round(expert_episode.return_, 3), steps=expert_episode.length,
     outcome=name_of(expert_episode.outcome))
figures.plot_environment(env, labels=LABELS);
show("nb.kernel_examples")
print("  dqn_targets:", K["dqn_targets"]([0.5, 2.0], [0, 1], [[1.0, 3.0], [4.0, -2.0]], gamma=0.8))
print("  cql_discrete_penalty:", round(float(K["cql_discrete_penalty"]([0.0, 0.0, 0.0, 0.0], 3)), 6))
print("  return_to_go:", K["return_to_go"]([2.0, -1.0, 0.5]))
"""

DAGGER = """
from m5_student.imitation import LabelBudgetConfig, dagger_experiment

d = P.dagger
dagger_run = dagger_experiment(d.seed, d.expert_episodes, d.rounds, d.learner_episodes_per_round, d.epochs)
for record in dagger_run["records"]:
    show("nb.round", round=record["round"], success=record["success_rate"], ret=record["mean_return"],
         labels=record["dataset_size"])
course = load_pinned("M5_dagger_curve")  # the course's rounds and label budgets (the x axes)
yours = {record["round"]: record["success_rate"] for record in dagger_run["records"]}
compare([(LABELS["nb.round_row"].format(round=int(k)), yours.get(int(k)), SEEDS["dagger_success_rate"][:, i])
         for i, k in enumerate(course["rounds"])], bounds=(0, 1))
success, success_band = course_band("dagger_success_rate")
figures.plot_dagger_curve(course["rounds"], success, labels=LABELS, success_spread=success_band, run_label=COURSE_RUN);
# the same number of expert labels for both learners: a separate setting (its caption says how it differs)
(bc, bc_band), (dagger, dagger_band) = course_band("dagger_budget_bc_success"), course_band("dagger_budget_dagger_success")
figures.plot_label_budget(course["budget_labels"], bc, dagger, labels=LABELS, bc_spread=bc_band, dagger_spread=dagger_band,
                          setting=LabelBudgetConfig().describe(), run_label=COURSE_RUN);
# distribution shift: the share of each learner's own visits on states absent from its labels, and its errors there
figures.plot_distribution_shift(course["budget_labels"], {k: SEEDS[f"dagger_budget_{k}"] for k in figures.SHIFT_KEYS},
                                labels=LABELS, run_label=COURSE_RUN);
"""

DQN = """
from m5_student.online_dqn import train_online_dqn

q = P.dqn
dqn_greedy = {}
for name, double, targets in (("DQN", False, K["dqn_targets"]), ("Double DQN", True, K["double_dqn_targets"])):
    run = train_online_dqn(q.seed, q.episodes, double, targets_fn=targets)
    dqn_greedy[name] = run["evaluation"]["success_rate"]
    show("nb.dqn", name=name_of(name), train=np.mean(run["episode_success"]), greedy=dqn_greedy[name])
    show("nb.dqn_overestimation", name=name_of(name), final=run["overestimation"][-1][1])
course = load_pinned("M5_online_dqn_curve")  # the course's checkpoints (the x axis)
compare([(LABELS["nb.dqn_row"].format(name=name_of(n)), dqn_greedy[n], COURSE["rows"][cid]["value"][LANG])
         for n, cid in (("DQN", "dqn.dqn_success"), ("Double DQN", "dqn.double_success"))])
figures.plot_dqn_curves(SEEDS["dqn_dqn_success"].mean(axis=0), SEEDS["dqn_double_success"].mean(axis=0), labels=LABELS,
                        run_label=COURSE_RUN);
figures.plot_overestimation(course["overestimation_episodes"], SEEDS["dqn_dqn_overestimation"], SEEDS["dqn_double_overestimation"],
                            labels=LABELS, run_label=COURSE_RUN);
"""

LOG = """
from m5_student.keydoor import ACTION_NAMES
from m5_student.offline_data import action_frequencies, collect_offline_dataset, summarize_dataset

g = P.log
log_episodes, log_transitions = collect_offline_dataset(g.seed, g.episodes, g.profile)
probabilities = action_frequencies(np.asarray([t.action for t in log_transitions], dtype=np.int64))
support = np.asarray(K["behavior_support_mask"](probabilities, threshold_ratio=g.support_threshold), dtype=bool)
summary = summarize_dataset(log_episodes)
show("nb.action_counts", counts=", ".join(f"{name_of(a)} {c}" for a, c in summary["action_counts"].items()))
show("nb.behavior_probs", probs=", ".join(f"{name_of(a)} {p:.4f}" for a, p in zip(ACTION_NAMES, probabilities)))
show("nb.support", threshold=g.support_threshold,
     mask=", ".join(f"{name_of(a)} {LABELS['report.yes' if s else 'report.no']}" for a, s in zip(ACTION_NAMES, support)))
show("nb.log_return", ret=round(summary["mean_return"], 4),
     outcomes=", ".join(f"{name_of(o)} {c}" for o, c in summary["outcomes"].items()))
figures.plot_log_actions(list(summary["action_counts"].values()), ACTION_NAMES, labels=LABELS, run_label=YOUR_RUN);
"""

PORT_IMPORTS = """
import math

import torch

from m5_student import validation as v
"""

PORTS_TABLE = """
TORCH_PORTS = {
    "masked_token_nll": ported(masked_token_nll_torch, "masked_token_nll"),
    "cql_discrete_penalty": ported(cql_discrete_penalty_torch, "cql_discrete_penalty"),
    "expectile_loss": ported(expectile_loss_torch, "expectile_loss"),
    "iql_advantage_weights": ported(iql_advantage_weights_torch, "iql_advantage_weights"),
}
"""

OFFLINE = """
from m5_student.fqe import FQEConfig
from m5_student.offline import OfflineExperimentConfig, offline_experiment

o = P.offline
offline_kernels = {name: K[name] for name in ("dqn_targets", "double_dqn_targets", "behavior_support_mask", "fqe_targets")}
offline_kernels.update(TORCH_PORTS)
offline_config = OfflineExperimentConfig(fqe=FQEConfig(gamma=0.99, iterations=o.fqe_iterations,
                                                       steps_per_iteration=o.fqe_steps_per_iteration))
offline_run = offline_experiment(o.seed, o.dataset_episodes, o.train_epochs, kernels=offline_kernels,
                                 config=offline_config)
for name, m in offline_run["results"].items():
    learned = LABELS["report.not_available"] if m["greedy_q_mean"] is None else f"{m['greedy_q_mean']:.3f}"
    show("nb.offline", name=name_of(name), ret=m["mean_return"], success=m["success_rate"], q=learned, v=m["greedy_value_true"])
methods = [str(n) for n in load_pinned("M5_offline_method_results")["method_names"]]
compare([(LABELS["nb.return_row"].format(name=name_of(n)), offline_run["results"][n]["mean_return"], SEEDS["offline_mean_return"][:, i])
         for i, n in enumerate(methods)])
figures.plot_offline_methods(methods, *(SEEDS[k].mean(axis=0) for k in ("offline_mean_return", "offline_success_rate")),
                             labels=LABELS, return_spread=course_band("offline_mean_return")[1],
                             optimum=float(SEEDS["offline_optimal_return"].mean()), run_label=COURSE_RUN);
figures.plot_offline_values(methods, SEEDS["offline_greedy_q_mean"], SEEDS["offline_greedy_value_true"], labels=LABELS,
                            fqe=SEEDS["offline_fqe_logged_value"], run_label=COURSE_RUN);
figures.plot_q_errors(methods, SEEDS["offline_q_logged_error"], SEEDS["offline_q_unlogged_error"], labels=LABELS,
                      run_label=COURSE_RUN);
# CQL's learned values sit above the true ones here: what the course measured, and why that is not a bug in your ports
show("nb.cql_note", **{key: COURSE["rows"][cid]["value"][LANG] for key, cid in (
    ("learned", "offline.greedy_q_learned.cql"), ("true", "offline.greedy_value_true.cql"), ("gap", "offline.cql_level"),
    ("logged", "offline.q_logged_error.cql"), ("unlogged", "offline.q_unlogged_error.cql"))}, alpha=offline_config.cql.alpha)
"""

FQE = """
section.require(offline_run, "5b")
for name, row in offline_run["fqe"].items():
    show("nb.fqe", name=name_of(name), fqe=row["fqe_value"], sim=row["simulated_value"])
fqe_names = [str(n) for n in load_pinned("M5_offline_method_results")["fqe_names"]]
course_errors = np.abs(SEEDS["fqe_fqe_values"] - SEEDS["fqe_simulated_values"])  # each seed's absolute error
compare([(LABELS["nb.fqe_row"].format(name=name_of(n)), abs(offline_run["fqe"][n]["error"]), course_errors[:, i])
         for i, n in enumerate(fqe_names)], digits=3)
# One target by hand: FQE averages the next values under the evaluated policy (no max).
show("nb.fqe_example")
print(K["fqe_targets"]([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]], gamma=0.9))
(estimate, estimate_band), (simulated, simulated_band) = course_band("fqe_fqe_values"), course_band("fqe_simulated_values")
figures.plot_fqe_vs_simulator(fqe_names, estimate, simulated, labels=LABELS,
                              fqe_spread=estimate_band, simulated_spread=simulated_band, run_label=COURSE_RUN);
"""

DT = """
from m5_student.decision_transformer import dt_return_sweep, train_decision_transformer
from m5_student.lab.claims import DT_LOG_GROUPS

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
show("nb.dt_loss", loss=dt_losses[-1])
for requested, achieved in zip(sweep["target_return"], sweep["mean_return"]):
    show("nb.dt_request", requested=requested, achieved=achieved)
requests = load_pinned("M5_decision_transformer_results")["target_return"]  # the course's requests
yours = {round(float(r), 2): float(a) for r, a in zip(sweep["target_return"], sweep["mean_return"])}
compare([(LABELS["nb.dt_row"].format(requested=r), yours.get(round(float(r), 2)), SEEDS["dt_mean_return"][:, i])
         for i, r in enumerate(requests)])
achieved, achieved_band = course_band("dt_mean_return")
codes = SEEDS.get("dt_log_outcome_codes")
figures.plot_dt_panel(requests, achieved, SEEDS["dt_log_returns"].ravel(), labels=LABELS, return_spread=achieved_band,
                      log_outcomes=None if codes is None else [DT_LOG_GROUPS[int(c)] for c in codes.ravel()],
                      run_label=COURSE_RUN);
"""

LANGUAGE = """
from m5_student.language import language_offline_experiment
from m5_student.language_task import HELDOUT_PROMPTS, PROMPTS, token_text

w = P.language
language_run = language_offline_experiment(w.seed, w.episodes_per_prompt, w.bc_epochs, w.iql_epochs, kernels=TORCH_PORTS)
for split, prompts, message in (("evaluation", PROMPTS, "nb.language"), ("heldout_evaluation", HELDOUT_PROMPTS, "nb.language_heldout")):
    for name, row in language_run[split].items():
        show(message, name=name_of(name), em=row["exact_match"], reward=row["mean_reward"])
        for prompt, sequence, reward in zip(prompts, row["sequences"], row["rewards"]):
            show("nb.language_example", prompt=prompt, text=token_text(sequence), reward=reward)
methods = [str(n) for n in load_pinned("M5_language_ilql_results")["method_names"]]
compare([(LABELS[row].format(name=name_of(n)), language_run[split][n]["exact_match"], SEEDS[key][:, i])
         for row, split, key in (("nb.language_row", "evaluation", "language_exact_match"),
                                 ("nb.language_heldout_row", "heldout_evaluation", "language_heldout_exact_match"))
         for i, n in enumerate(methods)], bounds=(0, 1))
(exact, exact_band), (heldout, heldout_band) = course_band("language_exact_match"), course_band("language_heldout_exact_match")
figures.plot_language_exact_match(methods, exact, labels=LABELS, match_spread=exact_band, heldout_exact_match=heldout,
                                  heldout_spread=heldout_band, run_label=COURSE_RUN);
"""

TAKEAWAYS = """
print(LABELS["summary_heading"])
for key in ("summary_bc", "summary_dqn", "summary_offline", "summary_dt", "summary_llm"):
    print("-", LABELS[key])
print()
show("nb.artifacts")
show("nb.artifact_scope", seeds=int(SEEDS["seeds"]))
"""


def section(body: str, before: str = "") -> str:
    """A lab section's cell: ``body`` inside ``with lab_section() as section:``, so a missing
    kernel or port stops only this section, with one line saying what to implement
    (:class:`m5_student.notebook.lab_section`); ``before`` runs first, outside it."""
    lines = [line and "    " + line for line in body.strip("\n").split("\n")]
    return before + "with lab_section() as section:\n" + "\n".join(lines) + "\n"


def answer_ids(t: dict, key: str) -> list[str]:
    """The claim and comparison ids the worked answer of section ``key`` quotes, once each, in order."""
    return list(dict.fromkeys(cited_claims(t["answers"][key])))


# The course's numbers printed before each question: what the question needs (every comparison
# its worked answer quotes among them); every other number of the section is one call away.
QUESTION_NUMBERS = {
    "dagger": [
        "dagger.bc_equal_budget_success",
        "dagger.dagger_equal_budget_success",
        "dagger.equal_budget",
        "dagger.matched_distinct_labels",
        "dagger.slipped_demonstrations",
        "dagger.equal_budget_unseen_share",
        "dagger.bc_error_unseen_vs_seen",
        "dagger.final_vs_round0",
    ],
    "dqn": [
        "dqn.dqn_success",
        "dqn.double_success",
        "dqn.double_vs_dqn",
        "dqn.double_vs_dqn_overestimation_mean",
        "dqn.double_vs_dqn_overestimation_final",
    ],
    "offline": [
        "offline.return.behavior_cloning",
        "offline.vs_bc.iql",
        "offline.vs_bc.restricted_dqn",
        "offline.vs_bc.cql",
        "offline.vs_bc.naive_dqn",
        "offline.unlogged_overestimation.naive_dqn",
        "offline.cql_level",
        "offline.replay_vs_bc.iql",
    ],
    "fqe": [
        "fqe.abs_error.behavior_cloning",
        "fqe.abs_error.naive_dqn",
        "fqe.abs_error.restricted_dqn",
        "fqe.abs_error.cql",
        "fqe.abs_error.iql",
        "fqe.naive_vs_iql_error",
    ],
    "dt": ["dt.achieved.0.25", "dt.achieved.0.75", "dt.achieved.2.00", "dt.saturation"],
    "language": [
        "language.exact_match.behavior_cloning",
        "language.ilql_vs_bc",
        "language.rwbc_vs_bc",
        "language.awbc_vs_rwbc",
        "language.ilql_vs_rwbc",
        "language.ilql_vs_awbc",
        "language.heldout_exact_match.ilql_like",
        "language.heldout_exact_match.return_weighted_bc",
        "language.heldout_vs_train.ilql_like",
        "language.heldout.ilql_vs_bc",
    ],
}


def _question(t: dict, key: str) -> list:
    # Before the question: the course's numbers it is about (the same values the worked answer
    # quotes), in a short table; the section's other numbers are one call away.
    numbers = f"course_numbers({QUESTION_NUMBERS[key]!r})\n# every number of this section: course_numbers({key!r})"
    return [
        sources.locked(f"course_numbers_{key}", numbers),
        sources.markdown(f"question_{key}", t["questions"][key]),
        sources.markdown(f"answer_{key}", t["answers"][key], grade=True, solution=True, points=ANALYSIS_POINTS),
    ]


def design_text(lang: str) -> str:
    """How the course's run was designed: design seeds apart from report seeds, and per section
    what was tried (:mod:`reference_impl.lab.design`, the same paragraphs as the report's)."""
    labels = labels_for(lang)
    titles = {s: labels[f"report.section.{s}"] for s in ("dagger", "dqn", "log", "offline", "fqe", "dt", "language")}
    intro = labels["nb.design_intro"].format(first=REPORT_FIRST_OFFSET, last=REPORT_FIRST_OFFSET - 1)
    # Bold, not a heading: headings carry the points of what follows them.
    return "\n".join([f"**{labels['report.design']}**", "", intro, "", *search_lines(titles, lang, with_docs=False)])


def lab_notebook(lang: str):
    """The instructor lab notebook in ``lang`` ("en" or "ru")."""
    if lang not in sources.LANGS:
        raise ValueError(f"lab_notebook: `lang` must be one of {sources.LANGS}, got {lang!r}")
    t = TEXT[lang]
    cells = [
        sources.markdown("intro", t["title"]),
        sources.locked("setup", sources.SETUP_CODE),
        sources.locked("lab_setup", LAB_SETUP),
        sources.markdown("design", design_text(lang)),
        sources.markdown("environment", t["environment"]),
        sources.locked("run_environment", section(ENVIRONMENT)),
        sources.markdown("dagger", t["dagger"]),
        sources.locked("run_dagger", section(DAGGER)),
        *_question(t, "dagger"),
        sources.markdown("dqn", t["dqn"]),
        sources.locked("run_dqn", section(DQN)),
        sources.locked("side_maxbias", 'side_study("maxbias")'),
        *_question(t, "dqn"),
        sources.markdown("log", t["log"]),
        sources.locked("run_log", section(LOG)),
        sources.markdown("ports", t["ports"]),
        sources.locked("port_imports", PORT_IMPORTS),
    ]
    for name in PORTS:
        cells.append(sources.code(f"port_{name}", sources.solution_source(f"{name}_torch", sources.TORCH_KERNELS_PY), solution=True))
        cells.append(sources.locked(f"check_port_{name}", f'check_port({name}_torch, K["{name}"], "{name}");'))
    cells += [
        sources.locked("ports_table", PORTS_TABLE),
        sources.markdown("offline", t["offline"]),
        sources.locked("run_offline", section(OFFLINE, "offline_run = None  # section 6 needs this section's results\n")),
        sources.locked("side_cql_alpha", 'side_study("cql_alpha")'),
        *_question(t, "offline"),
        sources.markdown("fqe", t["fqe"]),
        sources.locked("run_fqe", section(FQE)),
        *_question(t, "fqe"),
        sources.markdown("dt", t["dt"]),
        sources.locked("run_dt", section(DT)),
        *_question(t, "dt"),
        sources.markdown("language", t["language"]),
        sources.locked("run_language", section(LANGUAGE)),
        *_question(t, "language"),
        sources.markdown("takeaways", t["takeaways"]),
        sources.locked("run_takeaways", TAKEAWAYS),
    ]
    return sources.notebook(cells, "lab", lang)
