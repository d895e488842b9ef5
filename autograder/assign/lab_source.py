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

TEXT = {
    "en": {
        "title": "# Module 5 capstone lab: one environment, four ways to learn from fixed data\n\n"
                 "The loops here are complete; they train with **your** kernels: the numpy ones from the assignment "
                 "notebook in this folder (fill it in first) and four torch ports you write below. By default the "
                 "loops run a short smoke profile; set `RL_LLM_M5_PROFILE=full` before starting Jupyter for the full "
                 "runs. The figures show the pinned full-profile results, so they look the same in both profiles.",
        "environment": "## 1. The environment and its transition contract\n\nKeyDoorGrid: picking up the key opens "
                       "the door, traps end an episode for real (`terminated`), and the step limit only cuts it "
                       "(`truncated`, which still bootstraps).",
        "dagger": "## 2. Behavior cloning, then DAgger\n\nThe first learner copies a few expert episodes; each DAgger "
                  "round lets the expert label the states the learner itself reaches.",
        "dqn": "## 3. DQN and Double DQN\n\nReplay, a target network and epsilon-greedy collection, with your target "
               "kernels. The replay buffer is warm-started with noisy expert episodes because the reward is sparse "
               "(a course choice, not part of vanilla DQN).",
        "log": "## 4. Look at the fixed log first\n\nAction counts and outcomes say more than a method name. Your "
               "`behavior_support_mask` marks the actions the log supports.",
        "ports": "## 5a. Port the four losses to torch\n\nThe offline learners backpropagate through these losses. "
                 "Write each one with torch operations so autograd works; the check below compares values and "
                 "gradients with your numpy kernel on random inputs.",
        "offline": "## 5b. One log, several guards against extrapolation\n\nNaive offline DQN, action restriction, CQL "
                   "and IQL, all trained on the same log with your kernels and ports.",
        "fqe": "## 6. FQE needs validation too\n\nFitted Q evaluation replaces the max by the evaluated policy's "
               "average; it is still a fitted model, so compare it with the simulator.",
        "dt": "## 7. Decision Transformer: a requested return is a condition\n\nTrained with your `return_to_go` "
              "and your torch NLL; then asked for a range of returns.",
        "language": "## 8. A small ILQL-like token pipeline\n\nPrefix = state, next token = action, reward at the end "
                    "of the response. The task and model are tiny: the mechanics are real, the scale is not.",
        "takeaways": "## 9. Takeaways",
        "answer": "*Your answer (graded by hand):*",
        "questions": {
            "dagger": "**Question.** Why can DAgger improve on behavior cloning with the same expert, and what does "
                      "it need that plain cloning does not?",
            "dqn": "**Question.** Does Double DQN beat DQN in your run? What would you need before claiming it does "
                   "in general?",
            "offline": "**Question.** Pick two offline methods and say which object each one distrusts (actions, "
                       "values, the policy update).",
            "fqe": "**Question.** Where does the FQE estimate differ most from the simulator, and why can this "
                   "happen with a fixed log?",
            "dt": "**Question.** What happens when the requested return exceeds anything in the log? Explain.",
            "language": "**Question.** Which parts of this pipeline would change for a real language model, and "
                        "which stay the same?",
        },
        "answers": {
            "dagger": "Cloning only sees expert states; once the learner errs it reaches states with no labels and "
                      "errors compound. DAgger collects the learner's own states and has the expert label them, so the "
                      "training distribution moves towards the states the learner visits. It needs an expert that can "
                      "be queried on arbitrary states during training.",
            "dqn": "One seed and a short run do not settle it; the curves are noisy. A claim needs several seeds, a "
                   "confidence interval and the same budget for both; Double DQN mainly removes the upward bias of the "
                   "max, which may or may not change success on this task.",
            "offline": "Action restriction distrusts actions the behavior policy rarely takes (it maximizes only over "
                       "supported ones); CQL distrusts the values of all actions and pushes them down relative to the "
                       "logged one; IQL never queries unseen actions in its targets and only reweights logged actions "
                       "in the policy update.",
            "fqe": "Where the evaluated policy takes actions the log rarely contains, FQE bootstraps from values it "
                   "never saw corrected, so its error is largest there; coverage limits evaluation as much as control.",
            "dt": "The achieved return plateaus near the best returns in the log: the model never saw such a "
                  "condition, so it extrapolates; the request is an input, not a guarantee.",
            "language": "A real model replaces the small network by a transformer, the synthetic rewards by a learned "
                        "or verified reward and the vocabulary by real tokens; the state/action view, the masked "
                        "token loss, the token-level Q/V recursion and the advantage-weighted policy stay.",
        },
    },
    "ru": {
        "title": "# Итоговая лабораторная модуля 5: одна среда, четыре способа учиться на фиксированных данных\n\n"
                 "Циклы обучения здесь готовы; они используют **ваши** ядра: numpy-ядра из ноутбука задания в этой "
                 "папке (сначала заполните его) и четыре переноса на torch, которые вы напишете ниже. По умолчанию "
                 "запускается короткий профиль smoke; задайте `RL_LLM_M5_PROFILE=full` до запуска Jupyter для полного. "
                 "Графики строятся по закреплённым результатам полного профиля, поэтому они одинаковы в обоих профилях.",
        "environment": "## 1. Среда и контракт перехода\n\nKeyDoorGrid: ключ открывает дверь, ловушки по-настоящему "
                       "завершают эпизод (`terminated`), а лимит шагов только обрывает его (`truncated`, бутстрэп "
                       "продолжается).",
        "dagger": "## 2. Клонирование поведения, затем DAgger\n\nПервый ученик копирует несколько эпизодов эксперта; "
                  "в каждом раунде DAgger эксперт размечает состояния, до которых доходит сам ученик.",
        "dqn": "## 3. DQN и Double DQN\n\nБуфер воспроизведения, целевая сеть и epsilon-жадный сбор, с вашими ядрами "
               "целей. Из-за редкой награды буфер заранее заполняется зашумлёнными эпизодами эксперта (решение курса, "
               "а не часть обычного DQN).",
        "log": "## 4. Сначала посмотрите на журнал\n\nЧастоты действий и исходы говорят больше, чем название метода. "
               "Ваша `behavior_support_mask` отмечает действия, которые журнал поддерживает.",
        "ports": "## 5a. Перенесите четыре функции потерь на torch\n\nОфлайн-алгоритмы распространяют градиент через "
                 "эти функции. Напишите каждую на операциях torch, чтобы работал autograd; проверка ниже сравнивает "
                 "значения и градиенты с вашим numpy-ядром на случайных входах.",
        "offline": "## 5b. Один журнал, разные защиты от экстраполяции\n\nНаивный офлайн-DQN, ограничение действий, CQL "
                   "и IQL обучаются на одном журнале с вашими ядрами и переносами.",
        "fqe": "## 6. FQE тоже требует проверки\n\nFitted Q evaluation заменяет максимум средним по оцениваемой "
               "политике; это по-прежнему подогнанная модель, поэтому сравните её с симулятором.",
        "dt": "## 7. Decision Transformer: запрошенная отдача — это условие\n\nОбучен с вашим `return_to_go` и вашей "
              "torch-NLL, затем получает запросы разной отдачи.",
        "language": "## 8. Маленький ILQL-подобный конвейер по токенам\n\nПрефикс — состояние, следующий токен — "
                    "действие, награда в конце ответа. Задача и модель крошечные: устройство то же, что у больших моделей, масштаб — игрушечный.",
        "takeaways": "## 9. Выводы",
        "answer": "*Ваш ответ (проверяется вручную):*",
        "questions": {
            "dagger": "**Вопрос.** Почему DAgger может превзойти клонирование поведения с тем же экспертом и что ему "
                      "нужно такого, чего не требует простое клонирование?",
            "dqn": "**Вопрос.** Обгоняет ли Double DQN обычный DQN в вашем запуске? Что нужно, чтобы утверждать это "
                   "в общем случае?",
            "offline": "**Вопрос.** Выберите два офлайн-метода и скажите, чему каждый из них не доверяет (действиям, "
                       "значениям, обновлению политики).",
            "fqe": "**Вопрос.** Где оценка FQE сильнее всего расходится с симулятором и почему так бывает при "
                   "фиксированном журнале?",
            "dt": "**Вопрос.** Что происходит, когда запрошенная отдача выше всего, что есть в журнале? Объясните.",
            "language": "**Вопрос.** Какие части этого конвейера изменятся для настоящей языковой модели, а какие "
                        "останутся прежними?",
        },
        "answers": {
            "dagger": "Клонирование видит только состояния эксперта; ошибившись, ученик попадает в неразмеченные "
                      "состояния, и ошибки накапливаются. DAgger собирает состояния самого ученика и просит эксперта "
                      "их разметить, так что обучающее распределение сдвигается к посещаемым учеником состояниям. "
                      "Нужен эксперт, которого можно спрашивать о произвольных состояниях во время обучения.",
            "dqn": "Одно seed и короткий запуск вопрос не решают: кривые шумные. Для утверждения нужны несколько "
                   "seed, доверительный интервал и одинаковый бюджет; Double DQN в основном убирает смещение "
                   "максимума вверх, что на этой задаче может и не изменить долю успехов.",
            "offline": "Ограничение действий не доверяет редким для поведенческой политики действиям (максимум берётся "
                       "только по поддержанным); CQL не доверяет значениям всех действий и опускает их относительно "
                       "записанного; IQL вообще не запрашивает ненаблюдавшиеся действия в целях и лишь перевзвешивает "
                       "записанные действия при обновлении политики.",
            "fqe": "Там, где оцениваемая политика выбирает редкие в журнале действия: FQE выполняет бутстрэп от значений, "
                   "которые никогда не исправлялись данными, и ошибка там наибольшая; покрытие ограничивает оценку "
                   "так же, как и управление.",
            "dt": "Достигнутая отдача выходит на плато около лучших отдач журнала: такого условия модель не видела и "
                  "экстраполирует; запрос — это вход модели, а не гарантия.",
            "language": "В настоящей модели маленькая сеть заменяется трансформером, синтетическая награда — "
                        "обученной или проверяемой, словарь — настоящими токенами; взгляд «состояние/действие», "
                        "маскированная функция потерь по токенам, рекурсия Q/V по токенам и политика с весами "
                        "преимущества остаются.",
        },
    },
}


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
