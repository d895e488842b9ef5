"""Figure and summary text of the Module 5 lab, in English and Russian.

``LABELS[lang][key]`` holds the axis labels, titles and closing takeaways the lab
figures (:mod:`reference_impl.figures`) and the notebooks use, the display names of
methods, actions and outcomes (``name.<raw>``, see :func:`display_name`) and the text
of the ``m5 lab`` report (``report.<what>``). Both languages carry exactly the same
keys; :func:`labels_for` picks one and rejects an unknown language. The language is
always an explicit argument (the lab's ``--lang``, the notebook's own language),
never read from the environment.
"""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["LABELS", "LANGUAGES", "LABEL_KEYS", "labels_for", "display_name", "method_slug"]

LANGUAGES: tuple[str, ...] = ("en", "ru")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "grid_title": "KeyDoorGrid: K key, D door, G goal, × trap, blue dots: start cells\n"
                      "an episode ends at a terminal cell or is truncated by the step limit",
        "grid_x": "column",
        "grid_y": "row",
        "dagger_x": "DAgger round (0 = behavior cloning only)",
        "success": "share of episodes that reach the goal",
        "success_short": "success",
        "dagger_title": "Behavior cloning, then DAgger relabeling rounds",
        "budget_title": "Behavior cloning and DAgger with the same number of expert labels",
        "budget_x": "expert labels (state, expert action) pairs",
        "budget_bc": "behavior cloning (expert demonstrations)",
        "budget_dagger": "DAgger (labels on the learner's own states)",
        "budget_note": "its own setting: a {rows}×{cols} grid with {starts} start cells; the learner's actions slip "
                       "with probability {slip}",
        "shift_title": "Distribution shift: where each learner goes, and how it acts there",
        "shift_unseen": "share of visits to states\nabsent from its training labels",
        "shift_error": "share of visits with a\nnon-optimal action",
        "shift_error_unseen": "{who}: on states absent from its labels",
        "shift_error_seen": "{who}: on states it was trained on",
        "shift_bc": "cloning",
        "episode": "training episode",
        "rolling_success": "success rate over the last 15 episodes",
        "dqn_title": "DQN vs Double DQN (rolling window 15)",
        "count": "number of logged transitions",
        "log_title": "Which actions the fixed log contains",
        "mean_return": "mean episode return",
        "offline_title": "The same log, different guards against extrapolation",
        "fqe_warning": "FQE is itself a fitted model: check its estimates against the simulator before trusting them.",
        "identity": "achieved = requested",
        "requested_return": "requested initial return-to-go",
        "achieved_return": "mean return actually obtained",
        "dt_title": "Decision Transformer: the return condition is a request, not a promise",
        "exact_match": "share of prompts answered exactly",
        "language_title": "Token-level offline learning on a synthetic arithmetic task",
        "language_train": "training prompts",
        "language_heldout": "held-out prompts (never trained on)",
        "fqe_title": "FQE estimate next to the simulator's value of the same policy",
        "fqe_estimate": "FQE estimate (from the log)",
        "simulator_value": "simulator (discounted, log start cells)",
        "discounted_value": "discounted value",
        "values_title": "What each learner believes its greedy action is worth, and what it is worth",
        "optimum": "expert (optimum): {value:.2f}",
        "overestimation_axis": "learned − exact Q of the greedy action\n(mean over the buffer's states)",
        "overestimation_title": "Overestimation during training: DQN and Double DQN",
        "q_error_logged": "on (state, action) pairs the log holds", "q_error_unlogged": "on actions the log never shows there",
        "q_error_axis": "learned Q minus true Q\n(mean over pairs; symmetric log scale)",
        "q_error_title": "Where the learned values go wrong: logged and unlogged actions",
        "value_learned": "learned Q(s, π(s)) of the learner",
        "value_true": "true value V^π(s) (simulator's model, exact)",
        "value_fqe": "FQE estimate of V^π(s)",
        "value_axis": "discounted value\n(mean over the log's states)",
        "dt_log_title": "Episode returns in the Decision Transformer's training log",
        "log_episode_return": "episode return in the log (same axis as the request above)",
        "episodes": "episodes (all seeds)",
        "dt_group": "{group}: {share:.0%} of episodes ({count}), returns [{lo:.2f}, {hi:.2f}]",
        "dt_group_empty": "{group}: no episodes",
        "dt_data_range": "returns the log contains: [{lo:.2f}, {hi:.2f}]",
        "run.pinned": "the course's pinned full run, seed offset 0",
        "run.pinned_seeds": "the course's pinned full run, {seeds} seeds: mean ± sd, dots per seed",
        "run.yours": "your run (profile {profile})",
        "run.lab": "m5 lab run: profile {profile}, seeds: {seeds}",
        "nb.profile": "profile: {profile}",
        "nb.dims": "observation size (observation_dim): {obs}, number of actions (action_dim): {act}",
        "nb.expert": "expert from {start}: return {ret}, steps {steps}, outcome {outcome}",
        "nb.kernel_examples": "your kernels on the lab's small examples:",
        "nb.round": "round {round}: success {success:.2f}, return {ret:.3f}, expert labels {labels}",
        "nb.round_row": "round {round}, success",
        "nb.dqn": "{name}: training success {train:.2f}, greedy evaluation success {greedy:.2f}",
        "nb.dqn_overestimation": "{name}: learned minus exact Q of the greedy action at the end of training {final:+.3f}",
        "nb.dqn_row": "{name}, greedy evaluation success",
        "nb.action_counts": "action counts: {counts}",
        "nb.behavior_probs": "behavior policy probabilities: {probs}",
        "nb.support": "in the support (relative threshold {threshold}): {mask}",
        "nb.log_return": "mean return in the log: {ret}, outcomes: {outcomes}",
        "nb.offline": "{name}: mean return {ret:.3f}, success {success:.2f}, learned Q of the greedy action {q}, true value {v:.3f}",
        "nb.return_row": "{name}, mean return",
        "nb.fqe": "{name}: FQE {fqe:.4f}, simulator {sim:.4f}",
        "nb.fqe_row": "{name}, FQE absolute error",
        "nb.fqe_example": "fqe_targets example:",
        "nb.dt_loss": "final training loss: {loss:.4f}",
        "nb.dt_request": "requested {requested:5.2f} -> achieved {achieved:.3f}",
        "nb.dt_row": "requested {requested:.2f}, achieved",
        "nb.language": "{name}: exact match {em:.2f}, mean reward {reward:.3f}",
        "nb.language_heldout": "{name}, held-out prompts: exact match {em:.2f}, mean reward {reward:.3f}",
        "nb.language_example": "    {prompt} -> {text}, reward {reward}",
        "nb.language_row": "{name}, exact match",
        "nb.compare": "Your run next to the pinned full run (the figure below shows the pinned run):",
        "nb.course_numbers": "The course's pinned full run over {seeds} seeds (shipped with the notebooks): the numbers the "
                             "worked answer to the next question quotes: means ± sd over the seeds, and differences between "
                             "methods with their paired 95 % interval and the verdict it allows:",
        "nb.your_run": "your run", "nb.pinned_run": "pinned full run",
        "nb.artifacts": "Pinned artifacts:",
        "nb.artifact_scope": "Course-generated artifacts: the course's full-profile run on CPU, "
                             "one seed per artifact (seed offset 0), "
                             "small networks and a synthetic task. They make the notebook figures stable; they "
                             "are not external benchmark results and one seed does not rank methods.",
        "summary_heading": "What the lab shows",
        "summary_bc": "Behavior cloning works on the states the expert visits; "
                      "DAgger adds expert labels on the states the learner itself reaches.",
        "summary_dqn": "Double DQN picks the next action with the online network and scores it with the target network, "
                       "which curbs the upward bias of a maximum over noisy estimates.",
        "summary_offline": "With a fixed log, what the data cover limits what can be learned; "
                           "where the log's most common behavior is wrong, a method that reads the rewards can do better than imitation, "
                           "and both its values and FQE's estimates need checking against the truth.",
        "summary_dt": "A Decision Transformer is a conditional sequence model; "
                      "asking for a high return-to-go does not make it achieve that return.",
        "summary_llm": "Token-level Q and V can be learned from logged responses, "
                       "but this small ILQL-like model is an illustration, not an LLM-scale result.",
    },
    "ru": {
        "grid_title": "KeyDoorGrid: K — ключ, D — дверь, G — цель, × — ловушка, синие точки — стартовые клетки\n"
                      "эпизод завершается в терминальной клетке или усекается лимитом шагов",
        "grid_x": "столбец",
        "grid_y": "строка",
        "dagger_x": "раунд DAgger (0 — только клонирование поведения)",
        "success": "доля эпизодов, дошедших до цели",
        "success_short": "успех",
        "dagger_title": "Клонирование поведения, затем раунды DAgger",
        "budget_title": "Клонирование поведения и DAgger при одинаковом числе меток эксперта",
        "budget_x": "метки эксперта (пары «состояние, действие эксперта»)",
        "budget_bc": "клонирование поведения (демонстрации эксперта)",
        "budget_dagger": "DAgger (метки в состояниях самого ученика)",
        "budget_note": "своя постановка: сетка {rows}×{cols} с {starts} стартовыми клетками; действия ученика "
                       "срываются с вероятностью {slip}",
        "shift_title": "Сдвиг распределения: куда попадает каждый ученик и как он там действует",
        "shift_unseen": "доля посещений состояний,\nкоторых нет среди его меток",
        "shift_error": "доля посещений с\nнеоптимальным действием",
        "shift_error_unseen": "{who}: в состояниях, которых нет среди его меток",
        "shift_error_seen": "{who}: в состояниях, на которых он обучен",
        "shift_bc": "клонирование",
        "episode": "эпизод обучения",
        "rolling_success": "доля успехов за последние 15 эпизодов",
        "dqn_title": "DQN и Double DQN (скользящее окно 15)",
        "count": "число переходов в журнале",
        "log_title": "Какие действия встречаются в фиксированном журнале",
        "mean_return": "средняя отдача за эпизод",
        "offline_title": "Один и тот же журнал, разные защиты от экстраполяции",
        "fqe_warning": "FQE — тоже обученная модель: прежде чем доверять её оценкам, сверьте их с симулятором.",
        "identity": "получено = запрошено",
        "requested_return": "запрошенная отдача (return-to-go на первом шаге)",
        "achieved_return": "фактически полученная средняя отдача",
        "dt_title": "Decision Transformer: запрошенная отдача — условие, а не обещание",
        "exact_match": "доля запросов с точным ответом",
        "language_title": "Офлайн-обучение на уровне токенов: синтетическая задача на сложение",
        "language_train": "обучающие запросы",
        "language_heldout": "отложенные запросы (в обучении не участвуют)",
        "fqe_title": "Оценка FQE рядом с ценностью той же политики в симуляторе",
        "fqe_estimate": "оценка FQE (по журналу)",
        "simulator_value": "симулятор (с дисконтом, стартовые клетки журнала)",
        "discounted_value": "дисконтированная ценность",
        "values_title": "Во что обучаемый оценивает своё жадное действие и сколько оно стоит на самом деле",
        "optimum": "эксперт (оптимум): {value:.2f}",
        "overestimation_axis": "выученное − точное Q жадного действия\n(среднее по состояниям буфера)",
        "overestimation_title": "Завышение оценок во время обучения: DQN и Double DQN",
        "q_error_logged": "на парах (состояние, действие) из журнала", "q_error_unlogged": "на действиях, которых журнал там не содержит",
        "q_error_axis": "выученное Q минус истинное Q\n(среднее по парам; симметричная лог. шкала)",
        "q_error_title": "Где выученные ценности ошибаются: записанные и незаписанные действия",
        "value_learned": "выученное Q(s, π(s)) обучаемого",
        "value_true": "истинная ценность V^π(s) (модель симулятора, точно)",
        "value_fqe": "оценка FQE для V^π(s)",
        "value_axis": "дисконтированная ценность\n(среднее по состояниям журнала)",
        "dt_log_title": "Отдачи эпизодов в обучающем журнале Decision Transformer",
        "log_episode_return": "отдача эпизода в журнале (та же ось, что у запроса выше)",
        "episodes": "эпизодов (все seed)",
        "dt_group": "{group}: {share:.0%} эпизодов ({count}), отдачи [{lo:.2f}, {hi:.2f}]",
        "dt_group_empty": "{group}: эпизодов нет",
        "dt_data_range": "отдачи, которые есть в журнале: [{lo:.2f}, {hi:.2f}]",
        "run.pinned": "зафиксированный полный прогон курса, сдвиг seed 0",
        "run.pinned_seeds": "зафиксированный полный прогон курса, seed: {seeds}; среднее ± ст. откл., точки — seed",
        "run.yours": "ваш прогон (профиль {profile})",
        "run.lab": "прогон m5 lab: профиль {profile}, число seed: {seeds}",
        "nb.profile": "профиль: {profile}",
        "nb.dims": "размер наблюдения (observation_dim): {obs}, число действий (action_dim): {act}",
        "nb.expert": "эксперт из {start}: отдача {ret}, шагов {steps}, исход: {outcome}",
        "nb.kernel_examples": "ваши ядра на небольших примерах лабораторной работы:",
        "nb.round": "раунд {round}: доля успехов {success:.2f}, отдача {ret:.3f}, меток эксперта {labels}",
        "nb.round_row": "раунд {round}, доля успехов",
        "nb.dqn": "{name}: доля успехов при обучении {train:.2f}, доля успехов жадной политики {greedy:.2f}",
        "nb.dqn_overestimation": "{name}: выученное минус точное Q жадного действия в конце обучения {final:+.3f}",
        "nb.dqn_row": "{name}, доля успехов жадной политики",
        "nb.action_counts": "число действий в журнале: {counts}",
        "nb.behavior_probs": "вероятности поведенческой политики: {probs}",
        "nb.support": "в поддержке журнала (относительный порог {threshold}): {mask}",
        "nb.log_return": "средняя отдача в журнале: {ret}, исходы: {outcomes}",
        "nb.offline": "{name}: средняя отдача {ret:.3f}, доля успехов {success:.2f}, выученное Q жадного действия {q}, "
                      "истинная ценность {v:.3f}",
        "nb.return_row": "{name}, средняя отдача",
        "nb.fqe": "{name}: FQE {fqe:.4f}, симулятор {sim:.4f}",
        "nb.fqe_row": "{name}, абсолютная ошибка FQE",
        "nb.fqe_example": "пример fqe_targets:",
        "nb.dt_loss": "функция потерь в конце обучения: {loss:.4f}",
        "nb.dt_request": "запрошено {requested:5.2f} -> получено {achieved:.3f}",
        "nb.dt_row": "запрошено {requested:.2f}, получено",
        "nb.language": "{name}: точное совпадение {em:.2f}, средняя награда {reward:.3f}",
        "nb.language_heldout": "{name}, отложенные запросы: точное совпадение {em:.2f}, средняя награда {reward:.3f}",
        "nb.language_example": "    {prompt} -> {text}, награда {reward}",
        "nb.language_row": "{name}, точное совпадение",
        "nb.compare": "Ваш прогон рядом с зафиксированным полным прогоном (график ниже — по зафиксированному прогону):",
        "nb.course_numbers": "Зафиксированный полный прогон курса по {seeds} seed (поставляется с ноутбуками): числа, которые "
                             "приводит разобранный ответ на следующий вопрос: средние ± ст. откл. по seed и разности "
                             "методов с парным 95 % интервалом и выводом, который он допускает:",
        "nb.your_run": "ваш прогон", "nb.pinned_run": "зафиксированный полный прогон",
        "nb.artifacts": "Зафиксированные артефакты:",
        "nb.artifact_scope": "Артефакты курса: прогон курса в полном профиле "
                             "на центральном процессоре, по одному seed на артефакт (сдвиг seed 0), с "
                             "небольшими сетями на синтетической задаче. Они делают графики ноутбука стабильными; это не "
                             "результаты внешних бенчмарков, и один seed не ранжирует методы.",
        "summary_heading": "Что показала лабораторная работа",
        "summary_bc": "Клонирование поведения справляется на состояниях, которые посещает эксперт; "
                      "DAgger добавляет метки эксперта в тех состояниях, куда попадает сам обучаемый агент.",
        "summary_dqn": "Double DQN выбирает следующее действие онлайн-сетью, а оценивает целевой сетью, "
                       "и это сдерживает завышение максимума по шумным оценкам.",
        "summary_offline": "Когда журнал фиксирован, чему можно научиться, ограничено покрытием данных; "
                           "где самое частое поведение журнала ошибочно, метод, читающий награды, может превзойти имитацию, "
                           "а его ценности и оценки FQE нужно сверять с истиной.",
        "summary_dt": "Decision Transformer — условная модель последовательностей; "
                      "если запросить высокую оставшуюся отдачу (return-to-go), модель вовсе не обязательно её наберёт.",
        "summary_llm": "Q и V на уровне токенов можно обучить по записанным ответам, "
                       "но эта маленькая ILQL-подобная модель — иллюстрация, а не результат в масштабе LLM.",
    },
}

#: Display names of the raw names that reach the figures and the report (method,
#: action and outcome identifiers), keyed ``name.<raw>``; see :func:`display_name`.
_NAMES: dict[str, dict[str, str]] = {
    "en": {
        "behavior cloning": "behavior cloning", "naive DQN": "naive DQN", "restricted DQN": "restricted DQN",
        "CQL": "CQL", "IQL": "IQL", "DQN": "DQN", "Double DQN": "Double DQN",
        "behavior_cloning": "behavior cloning", "return_weighted_bc": "return-weighted BC",
        "advantage_weighted_bc": "advantage-weighted BC", "ilql_like": "ILQL-like",
        "up": "up", "right": "right", "down": "down", "left": "left",
        "goal": "goal", "trap": "trap", "timeout": "timeout",
    },
    "ru": {
        "behavior cloning": "клонирование поведения", "naive DQN": "наивный DQN", "restricted DQN": "DQN с ограничением",
        "CQL": "CQL", "IQL": "IQL", "DQN": "DQN", "Double DQN": "Double DQN",
        "behavior_cloning": "клонирование поведения", "return_weighted_bc": "BC с весами по отдаче",
        "advantage_weighted_bc": "BC с весами по преимуществу",
        "ilql_like": "ILQL-подобный метод",
        "up": "вверх", "right": "вправо", "down": "вниз", "left": "влево",
        "goal": "цель", "trap": "ловушка", "timeout": "таймаут",
    },
}

#: Text of the ``m5 lab`` report, keyed ``report.<what>``; ``{...}`` fields are
#: filled by :mod:`reference_impl.lab` (numbers are formatted there, the same in both languages).
_REPORT: dict[str, dict[str, str]] = {
    "en": {
        "title": "Module 5 lab report",
        "intro": "Profile `{profile}`, seed offsets 0..{last_offset}, sections: {sections}. "
                 "Values with ± are mean ± sample standard deviation over seeds.",
        "done": "m5 lab: profile {profile}, {count} section(s) in {seconds} s; report {report}",
        "pinned": "m5 lab: pinned {path}",
        "section.environment": "Environment", "section.dagger": "Behavior cloning and DAgger",
        "section.dqn": "DQN and Double DQN", "section.log": "The fixed log", "section.offline": "Offline methods",
        "section.fqe": "Fitted Q evaluation (FQE)", "section.dt": "Decision Transformer",
        "section.language": "Token-level pipeline",
        "section": "section", "wall_time": "wall time, s", "total": "total",
        "quantity": "quantity", "value": "value", "observation_dim": "observation size (observation_dim)",
        "action_dim": "number of actions (action_dim)", "initial_state": "initial state",
        "expert_from_start": "expert from the start cell", "expert_run": "{outcome}, steps: {steps}, return {ret}",
        "round": "round", "dataset_size": "dataset size (seed offset 0)", "success_rate": "success rate",
        "mean_return": "mean return", "success_per_seed": "success per seed",
        "expert_labels": "expert labels", "bc_success": "behavior cloning: success", "dagger_success": "DAgger: success",
        "dagger_minus_bc": "DAgger − BC, paired 95 % interval",
        "budget_intro": "At an equal label budget, in a setting of its own (`imitation.label_budget_curve`): a larger "
                        "grid ({rows}×{cols}, {starts} start cells, a limit of {max_steps} steps), where a few "
                        "demonstrations cover a narrow tube of the states a learner can reach; the learner's actions "
                        "slip with probability {slip}, the expert demonstrates without slips. A label is a distinct "
                        "state with the expert's action (asking a deterministic expert about a state twice teaches "
                        "nothing), so a learner whose collection finds no new state cannot spend the rest of its "
                        "budget: cloning once the demonstrations repeat themselves (the columns of distinct labels). "
                        "The expert's own success in this setting, the ceiling: {expert}.",
        "bc_distinct_labels": "cloning: distinct labels", "dagger_distinct_labels": "DAgger: distinct labels",
        "shift_intro": "Distribution shift, measured on each learner's own evaluation episodes at each budget "
                       "(`shift.shift_metrics`): the share of its visits to states absent from its training labels, "
                       "and the share of visits with a non-optimal action on those states and on the states it was "
                       "trained on (mean ± sd over the seeds that have such visits; — where none has).",
        "shift_bc_unseen_share": "cloning: visits to unlabeled states", "shift_bc_error_unseen": "cloning: error there",
        "shift_bc_error_seen": "cloning: error on labeled states",
        "shift_dagger_unseen_share": "DAgger: visits to unlabeled states", "shift_dagger_error_unseen": "DAgger: error there",
        "shift_dagger_error_seen": "DAgger: error on labeled states",
        "seeds_suffix": "[seeds: {count}]", "method": "method", "greedy_eval_success": "greedy evaluation success",
        "greedy_eval_return": "greedy evaluation return", "late_success": "success, last 15 training episodes",
        "eval_success_per_seed": "evaluation success per seed",
        "log_summary": "Seed {seed}: transitions: {transitions}, outcomes: {outcomes}, mean episode return {ret} (all seeds: {all_seeds}).",
        "action": "action", "count": "count", "behavior_probability": "behavior policy probability",
        "in_support": "supported by the log (ratio >= {threshold})",
        "logged_q": "mean Q(s, pi(s)) over logged states", "not_available": "n/a",
        "fqe_intro": "Discounted values (gamma = {gamma}) over the log's start cells.",
        "policy": "policy", "fqe_estimate": "FQE estimate", "simulator": "simulator", "fqe_minus_simulator": "FQE − simulator",
        "abs_error": "absolute error",
        "dt_intro": "Log returns lie in [{low}, {high}] (shaded).", "requested_return": "requested return",
        "achieved_return": "achieved mean return", "achieved_per_seed": "achieved per seed",
        "dataset": "Dataset (seed {seed}): `{dataset}`", "exact_match": "exact match", "mean_reward": "mean reward",
        "exact_match_per_seed": "exact match per seed", "greedy_responses": "Greedy responses (seed {seed}):",
        "prompt": "prompt",
        "language_heldout": "Held-out prompts (the log never holds them; the first two swap the operands of a training "
                            "prompt): {prompts}.",
        "language_train_exact_match": "exact match, training prompts",
        "language_heldout_exact_match": "exact match, held-out prompts",
        "language_train_mean_reward": "mean reward, training prompts",
        "language_heldout_mean_reward": "mean reward, held-out prompts",
        "language_heldout_exact_match_per_seed": "held-out exact match per seed",
        "language_heldout_responses": "Greedy responses to the held-out prompts (seed {seed}):",
        "claims": "Claims",
        "dt_claim": "**Decision Transformer**: the highest request within the log's range achieves more than the lowest "
                    "(with a positive least-squares slope over those requests), and the curve stops rising above the log's "
                    "best return: no request above it achieves more than the highest request inside the range by more "
                    "than two standard errors of the difference (2 × √(SE² + SE²) of the two points); holds on {holding} "
                    "of {seeds} seeds. Within the range the log may have no episodes at some returns (see the histogram): "
                    "there the curve is the model's interpolation.",
        "not_checkable": "not checkable: needs two requests at or below the log's best return and one above it",
        "train_seed": "train seed", "log_max_return": "log max return", "slope_inside": "slope inside",
        "rise_inside": "rise inside", "top_inside_request": "highest request inside",
        "excess_above": "achieved above the range minus at that request", "excess_allowance": "allowed (2 SE)",
        "rises": "rises", "saturates": "saturates",
        "seed": "seed",
        "claim_id": "id", "claim": "claim", "per_seed": "per seed", "mean_sd": "mean ± sd",
        "all_claims": "Every claim of this run (also in `claims.json`):",
        "caveats": "What the numbers say",
        "true_value": "true value of the policy over logged states", "fqe_logged": "FQE value over logged states",
        "logged_pair_share": "share of states whose greedy action the log holds there",
        "optimum_intro": "Dashed line: the expert's return from the same evaluation starts, the best any policy can do ({optimum}).",
        "mechanism_intro": "The mechanism, measured: each learner's Q against the exact action values of its own greedy policy "
                           "(from the simulator's tabular model), over the log's distinct states, split into the (state, action) "
                           "pairs the log holds and the actions it never shows in that state; the share of states whose greedy "
                           "action is one the log never shows there; and the share of states whose largest learned Q exceeds "
                           "the largest possible return (1.00, the goal's reward). Mean ± sd over seeds.",
        "unlogged_greedy_share": "share of states with an unlogged greedy action",
        "overestimation_intro": "Overestimation, measured: every 10 episodes, each network's Q of its greedy action minus the "
                                "exact value of that action under the network's own greedy policy (the simulator's tabular "
                                "model, gamma = 0.95, no time limit), averaged over the distinct states in the replay buffer. "
                                "Lines: mean over seeds; bands: ± sd.",
        "overestimation_mean": "overestimation, mean over training", "overestimation_final": "overestimation, end of training",
        "above_max_share": "share of states with max Q > 1",
        "q_error_logged": "learned − true Q, logged pairs", "q_error_unlogged": "learned − true Q, unlogged actions",
        "values_intro": "The learned value of each learner's greedy action (its own Q(s, π(s)), mean over the log's states) "
                        "next to the true value of the same policy over the same states (exact, from the simulator's tabular "
                        "model, gamma = 0.99, no time limit) and FQE's estimate of it. Bars: mean over seeds ± sd; dots: seeds.",
        "dt_hist_intro": "Under the sweep: the histogram of the log's episode returns (all seeds pooled), colored by how "
                         "each episode ended. A request is only backed by the log where episodes with that return exist.",
        "dt_groups_intro": "The log's episodes by how they ended (from each episode's outcome, not from its return):",
        "log_group": "episodes that ended as", "episodes_per_seed": "episodes per seed", "share_of_log": "share of the log",
        "returns_all_seeds": "returns (all seeds)", "return_range": "from {lo} to {hi}",
        "dt_se_intro": "Each point averages {episodes} evaluation episodes per seed, enough for a standard error of at most "
                       "{bound} whatever the policy does (returns lie in [{low}, {high}]; by Popoviciu's inequality their sd is "
                       "at most half that range). Largest measured standard error over all points and seeds: {se_max} "
                       "(request {request}).",
        "standard_error_per_seed": "standard error per seed",
        "comparison": "{effect} (95 % CI {low} to {high}, {n} paired seeds): {verdict}",
        "comparison_tie": "identical on all {n} paired seeds: a tie",
        "verdict.order.ahead": "ahead", "verdict.order.behind": "behind",
        "verdict.order.no detectable difference": "no detectable difference",
        "verdict.level.ahead": "above zero", "verdict.level.behind": "below zero",
        "verdict.level.no detectable difference": "no detectable difference from zero",
        "compared": "compared", "difference": "difference (95 % interval, seeds): verdict",
        "comparisons": "Comparisons, paired over seeds: the verdict follows the 95 % interval and nothing else "
                       "(also in `claims.json`):",
        "caveat_dagger": "DAgger's final round against behavior cloning (round 0), success rate: {cmp}. Behavior cloning "
                         "trains on {bc_labels} expert labels and DAgger's final round on {dagger_labels}, so this is not a "
                         "comparison at an equal label budget.",
        "caveat_equal_budget": "With the same budget of {budget} expert labels, DAgger reaches {dagger} and behavior cloning "
                               "{bc} (the expert itself {expert}); DAgger minus behavior cloning: {cmp}.",
        "caveat_shift": "Where the gap comes from: cloning's demonstrations hold {bc_labels} distinct states, and "
                        "{bc_unseen} of its own visits fall on states outside them, against {dagger_unseen} for DAgger "
                        "(DAgger minus cloning: {cmp_unseen}). On those states cloning's action is non-optimal in "
                        "{error_unseen} of visits, on its labeled states in {error_seen} (difference: {cmp_error}).",
        "caveat_dqn": "Overestimation of the greedy action (learned minus exact Q, mean over the buffer's states and "
                      "over training): DQN {dqn}, Double DQN {double}; Double DQN minus DQN: {cmp_mean}; at the end of "
                      "training: {cmp_final}. Greedy success, Double DQN minus DQN: {cmp_success}.",
        "caveat_bc_offline": "On the offline log, behavior cloning's greedy policy returns {bc}, and the expert {optimum} "
                             "from the same starts (the optimum). Each value-based method minus behavior cloning: {each}.",
        "caveat_cql": "What CQL's analysis gives (Kumar et al. 2020, Theorem 3.2): with a large enough penalty weight, "
                      "the learned value of the policy is a lower bound of its true value in expectation over the data's "
                      "states, and the margin vanishes where the policy plays the log's own actions. Here (alpha = {alpha}) "
                      "CQL's learned value of its greedy action is {q} and the same policy's true value {v}; learned minus "
                      "true: {cmp}. Its greedy action is one the log holds in that state in {share} of the log's states "
                      "(naive DQN: {naive_share}).",
        "caveat_naive": "Naive DQN, learned minus true Q on the actions the log never shows in a state: {cmp}; on the pairs "
                        "the log holds: {logged}. Its largest learned Q exceeds the largest possible return ({bound}) in "
                        "{above} of the log's states, and its greedy policy's true value is {v}.",
        "caveat_fqe": "FQE's largest absolute error is {worst}'s ({worst_error}), its smallest {best}'s ({best_error}): "
                      "check an FQE estimate against the simulator before trusting it.",
        "caveat_dt_groups": "The Decision Transformer's logs hold three groups of episodes, by how they ended: per seed, "
                            "{trap} end in a trap (the lowest returns), {timeout} are cut by the time limit (each returns "
                            "exactly {timeout_return}, every step cost and nothing else) and {goal} reach the goal (the "
                            "positive returns); the report's table gives each group's range. Between the groups no episode "
                            "exists: there a request's achieved return is the model's interpolation, a mix of failing and "
                            "succeeding episodes, not a return the log shows.",
        "caveat_dt_saturation": "Each point of the sweep averages {episodes} evaluation episodes per seed (largest standard "
                                "error {se}). Highest request minus the highest request inside the log's range: {cmp}.",
        "caveat_language": "Token level, exact match on the training prompts: return-weighted BC (rewards, no critic) "
                           "minus behavior cloning {cmp_rw}; advantage-weighted BC minus return-weighted BC (what the "
                           "critic adds to the weights) {cmp_aw_rw}; ILQL-like (the critic's value heads at decoding) "
                           "minus behavior cloning {cmp_bc}; ILQL-like minus return-weighted BC {cmp_il_rw}; ILQL-like minus "
                           "advantage-weighted BC {cmp_aw}.",
        "caveat_language_no_critic": "On the training prompts this run detects nothing that the learned value heads "
                                     "add to weighting the log by its rewards: the gain over behavior cloning is "
                                     "already there without a critic.",
        "caveat_language_heldout": "Held-out prompts ({n} digit sums the log never holds), exact match: {each}. "
                                   "Held-out minus training prompts: {gaps}. ILQL-like minus behavior cloning on the "
                                   "held-out prompts {cmp_bc}; ILQL-like minus advantage-weighted BC {cmp_aw}.",
        "caveat_language_no_transfer": "No method carries its accuracy on the training prompts over to the held-out "
                                     "ones: with twelve training prompts every method learns answers to those prompts, "
                                     "not addition.",
        "caveat_language_why": "Behavior cloning loses by construction: the annotator's most frequent response is a "
                               "consistent slip (answer + 1, probability {slip}, against {exact} for the exact answer), "
                               "and imitation copies it.",
        "caveat_smoke": "The smoke profile only proves that the code runs; the notebooks plot the pinned full runs.",
        "yes": "yes", "no": "no",
    },
    "ru": {
        "title": "Отчёт по лабораторной работе модуля 5",
        "intro": "Профиль `{profile}`, сдвиги seed 0..{last_offset}, разделы: {sections}. "
                 "Запись вида a ± b — среднее ± выборочное стандартное отклонение по seed.",
        "done": "m5 lab: профиль {profile}, разделов: {count}, время {seconds} с; отчёт {report}",
        "pinned": "m5 lab: зафиксирован файл {path}",
        "section.environment": "Среда", "section.dagger": "Клонирование поведения и DAgger",
        "section.dqn": "DQN и Double DQN", "section.log": "Фиксированный журнал", "section.offline": "Офлайн-методы",
        "section.fqe": "Оценка политики методом FQE", "section.dt": "Decision Transformer и запрошенная отдача",
        "section.language": "Офлайн-обучение на уровне токенов",
        "section": "раздел", "wall_time": "время, с", "total": "всего",
        "quantity": "величина", "value": "значение", "observation_dim": "размер наблюдения (observation_dim)",
        "action_dim": "число действий (action_dim)", "initial_state": "начальное состояние",
        "expert_from_start": "эксперт из стартовой клетки", "expert_run": "{outcome}, шагов: {steps}, отдача {ret}",
        "round": "раунд", "dataset_size": "размер набора данных (сдвиг seed 0)", "success_rate": "доля успехов",
        "mean_return": "средняя отдача", "success_per_seed": "успех по seed",
        "expert_labels": "метки эксперта", "bc_success": "клонирование поведения: успех", "dagger_success": "DAgger: успех",
        "dagger_minus_bc": "DAgger − BC, парный 95 % интервал",
        "budget_intro": "При равном числе меток, в отдельной постановке (`imitation.label_budget_curve`): сетка крупнее "
                        "({rows}×{cols}, стартовых клеток: {starts}, лимит {max_steps} шагов), где несколько демонстраций "
                        "покрывают узкую трубку из состояний, в которые может попасть ученик; действия ученика с "
                        "вероятностью {slip} заменяются случайными, эксперт демонстрирует без таких срывов. Метка — это "
                        "отдельное состояние с действием эксперта (повторный вопрос детерминированному эксперту о том же "
                        "состоянии ничему не учит), поэтому ученик, чей сбор больше не находит новых состояний, не может "
                        "потратить остаток бюджета: клонирование — как только демонстрации начинают повторяться (столбцы "
                        "различных меток). Успех самого эксперта в этой постановке, "
                        "потолок: {expert}.",
        "bc_distinct_labels": "клонирование: различных меток", "dagger_distinct_labels": "DAgger: различных меток",
        "shift_intro": "Сдвиг распределения, измеренный на собственных оценочных эпизодах каждого ученика при каждом "
                       "бюджете (`shift.shift_metrics`): доля его посещений состояний, которых нет среди его обучающих "
                       "меток, и доля посещений с неоптимальным действием в этих состояниях и в состояниях, на которых он "
                       "обучен (среднее ± стандартное отклонение по seed, где такие посещения есть; — где их нет ни у одного).",
        "shift_bc_unseen_share": "клонирование: посещения неразмеченных состояний", "shift_bc_error_unseen": "клонирование: ошибка в них",
        "shift_bc_error_seen": "клонирование: ошибка в размеченных состояниях",
        "shift_dagger_unseen_share": "DAgger: посещения неразмеченных состояний", "shift_dagger_error_unseen": "DAgger: ошибка в них",
        "shift_dagger_error_seen": "DAgger: ошибка в размеченных состояниях",
        "seeds_suffix": "[число seed: {count}]", "method": "метод", "greedy_eval_success": "успех жадной политики при оценке",
        "greedy_eval_return": "отдача жадной политики при оценке", "late_success": "успех за последние 15 эпизодов обучения",
        "eval_success_per_seed": "успех при оценке по seed",
        "log_summary": "Seed {seed}: переходов: {transitions}, исходы: {outcomes}, средняя отдача за эпизод {ret} (все seed: {all_seeds}).",
        "action": "действие", "count": "число", "behavior_probability": "вероятность у поведенческой политики",
        "in_support": "поддержано журналом (отношение >= {threshold})",
        "logged_q": "среднее Q(s, pi(s)) по состояниям журнала", "not_available": "н/д",
        "fqe_intro": "Дисконтированные ценности (gamma = {gamma}) по стартовым клеткам журнала.",
        "policy": "политика", "fqe_estimate": "оценка FQE", "simulator": "симулятор", "fqe_minus_simulator": "FQE − симулятор",
        "abs_error": "абсолютная ошибка",
        "dt_intro": "Отдачи эпизодов журнала лежат в [{low}, {high}] (серая полоса).", "requested_return": "запрошенная отдача",
        "achieved_return": "полученная средняя отдача", "achieved_per_seed": "полученная отдача по seed",
        "dataset": "Набор данных (seed {seed}): `{dataset}`", "exact_match": "точное совпадение", "mean_reward": "средняя награда",
        "exact_match_per_seed": "точное совпадение по seed", "greedy_responses": "Жадные ответы (seed {seed}):",
        "prompt": "запрос",
        "language_heldout": "Отложенные запросы (в журнале их нет; в первых двух слагаемые обучающего запроса переставлены): "
                            "{prompts}.",
        "language_train_exact_match": "точное совпадение, обучающие запросы",
        "language_heldout_exact_match": "точное совпадение, отложенные запросы",
        "language_train_mean_reward": "средняя награда, обучающие запросы",
        "language_heldout_mean_reward": "средняя награда, отложенные запросы",
        "language_heldout_exact_match_per_seed": "точное совпадение на отложенных запросах по seed",
        "language_heldout_responses": "Жадные ответы на отложенные запросы (seed {seed}):",
        "claims": "Проверка утверждений",
        "dt_claim": "**Decision Transformer**: наибольший запрос внутри диапазона журнала даёт больше, чем наименьший "
                    "(и наклон прямой по методу наименьших квадратов по этим запросам положителен), а выше лучшей отдачи "
                    "журнала кривая перестаёт расти: ни один запрос выше неё не даёт больше, чем наибольший запрос внутри "
                    "диапазона, более чем на две стандартные ошибки разности (корень из суммы квадратов ошибок двух точек); выполняется "
                    "для {holding} из {seeds} seed. Внутри диапазона у некоторых отдач в журнале может не быть ни одного "
                    "эпизода (см. гистограмму): там кривая — интерполяция модели.",
        "not_checkable": "не проверяется: нужны два запроса не выше лучшей отдачи журнала и один выше неё",
        "train_seed": "seed обучения", "log_max_return": "лучшая отдача в журнале", "slope_inside": "наклон внутри диапазона",
        "rise_inside": "прирост внутри диапазона", "top_inside_request": "наибольший запрос внутри диапазона",
        "excess_above": "полученное выше диапазона минус полученное при этом запросе",
        "excess_allowance": "допуск (две стандартные ошибки)",
        "rises": "растёт", "saturates": "насыщается",
        "seed": "seed",
        "claim_id": "идентификатор", "claim": "утверждение", "per_seed": "по seed", "mean_sd": "среднее ± ст. откл.",
        "all_claims": "Все утверждения этого прогона (они же в `claims.json`):",
        "caveats": "Что говорят числа",
        "true_value": "истинная ценность политики по состояниям журнала", "fqe_logged": "оценка FQE по состояниям журнала",
        "logged_pair_share": "доля состояний, где жадное действие записано в журнале",
        "optimum_intro": "Пунктир: отдача эксперта с тех же стартов оценки, лучшее, что может любая политика ({optimum}).",
        "mechanism_intro": "Механизм, измеренный: Q каждого обучаемого против точных ценностей действий его собственной "
                           "жадной политики (по табличной модели симулятора) на различных состояниях журнала, отдельно для пар "
                           "(состояние, действие) из журнала и для действий, которых журнал в этом состоянии не содержит; доля "
                           "состояний, где жадное действие в журнале там не встречается; доля состояний, где наибольшее "
                           "выученное Q выше наибольшей возможной отдачи (1.00, награда за цель). Среднее ± ст. откл. по seed.",
        "unlogged_greedy_share": "доля состояний с незаписанным жадным действием",
        "overestimation_intro": "Завышение, измеренное: каждые 10 эпизодов — Q жадного действия каждой сети минус точная "
                                "ценность этого действия при собственной жадной политике сети (табличная модель симулятора, "
                                "gamma = 0.95, без лимита шагов), среднее по различным состояниям буфера воспроизведения. "
                                "Линии — среднее по seed, полосы — ± ст. откл.",
        "overestimation_mean": "завышение, среднее за обучение", "overestimation_final": "завышение в конце обучения",
        "above_max_share": "доля состояний с наибольшим Q > 1",
        "q_error_logged": "выученное − истинное Q, пары из журнала", "q_error_unlogged": "выученное − истинное Q, незаписанные действия",
        "values_intro": "Выученная ценность жадного действия каждого обучаемого (его собственное Q(s, π(s)), среднее по "
                        "состояниям журнала) рядом с истинной ценностью той же политики в тех же состояниях (точно, по "
                        "табличной модели симулятора, gamma = 0.99, без лимита шагов) и с её оценкой FQE. Столбцы: среднее "
                        "по seed ± ст. откл.; точки: отдельные seed.",
        "dt_hist_intro": "Под кривой запросов: гистограмма отдач эпизодов журнала (все seed вместе), цвет — чем закончился "
                         "эпизод. Запрос опирается на журнал только там, где есть эпизоды с такой отдачей.",
        "dt_groups_intro": "Эпизоды журнала по тому, чем они закончились (по исходу эпизода, а не по его отдаче):",
        "log_group": "чем закончился эпизод", "episodes_per_seed": "эпизодов на seed", "share_of_log": "доля журнала",
        "returns_all_seeds": "отдачи (все seed)", "return_range": "от {lo} до {hi}",
        "dt_se_intro": "Каждая точка — среднее по {episodes} эпизодам оценки на seed: этого хватает, чтобы стандартная "
                       "ошибка была не больше {bound} при любой политике (отдачи лежат в [{low}, {high}], и по неравенству "
                       "Поповичу их ст. откл. не больше половины этого диапазона). Наибольшая измеренная стандартная "
                       "ошибка по всем точкам и seed: {se_max} (запрос {request}).",
        "standard_error_per_seed": "стандартная ошибка по seed",
        "comparison": "{effect} (95 % ДИ от {low} до {high}, парных seed: {n}): {verdict}",
        "comparison_tie": "совпадает на всех парных seed ({n}): ничья",
        "verdict.order.ahead": "впереди", "verdict.order.behind": "позади",
        "verdict.order.no detectable difference": "различие не обнаружено",
        "verdict.level.ahead": "выше нуля", "verdict.level.behind": "ниже нуля",
        "verdict.level.no detectable difference": "отличие от нуля не обнаружено",
        "compared": "что сравнивается", "difference": "разность (95 % интервал, seed): вывод",
        "comparisons": "Сравнения, парные по seed: вывод следует только из 95 % интервала (они же в `claims.json`):",
        "caveat_dagger": "Последний раунд DAgger против клонирования поведения (раунд 0), доля успехов: {cmp}. "
                         "Клонирование поведения обучается на {bc_labels} метках эксперта, а последний раунд DAgger — на "
                         "{dagger_labels}, так что это сравнение не при равном числе меток.",
        "caveat_equal_budget": "При одном и том же бюджете в {budget} меток эксперта DAgger достигает {dagger}, а клонирование "
                               "поведения — {bc} (сам эксперт — {expert}); DAgger минус клонирование поведения: {cmp}.",
        "caveat_shift": "Откуда разрыв: в демонстрациях клонирования {bc_labels} различных состояний, и {bc_unseen} его "
                        "собственных посещений приходятся на состояния вне их, против {dagger_unseen} у DAgger (DAgger "
                        "минус клонирование: {cmp_unseen}). В этих состояниях действие клонирования неоптимально в "
                        "{error_unseen} посещений, в размеченных — в {error_seen} (разность: {cmp_error}).",
        "caveat_dqn": "Завышение оценки жадного действия (выученное минус точное Q, среднее по состояниям буфера и по "
                      "обучению): DQN {dqn}, Double DQN {double}; Double DQN минус DQN: {cmp_mean}; в конце обучения: "
                      "{cmp_final}. Доля успехов, Double DQN минус DQN: {cmp_success}.",
        "caveat_bc_offline": "На офлайн-журнале жадная политика клонирования поведения даёт отдачу {bc}, а эксперт с тех же "
                             "стартов — {optimum} (оптимум). Каждый ценностный метод минус клонирование поведения: {each}.",
        "caveat_cql": "Что даёт анализ CQL (Kumar et al. 2020, теорема 3.2): при достаточно большом весе штрафа выученная "
                      "ценность политики — нижняя оценка её истинной ценности в среднем по состояниям данных, и запас "
                      "исчезает там, где политика играет действия самого журнала. Здесь (alpha = {alpha}) выученная "
                      "ценность жадного действия CQL равна {q}, а истинная ценность той же политики — {v}; выученная минус "
                      "истинная: {cmp}. Жадное действие CQL записано в журнале для этого же состояния в доле {share} "
                      "состояний журнала (наивный DQN: {naive_share}).",
        "caveat_naive": "Наивный DQN, выученное минус истинное Q на действиях, которых журнал в этом состоянии не содержит: "
                        "{cmp}; на парах из журнала: {logged}. Его наибольшее выученное Q выше наибольшей возможной отдачи "
                        "({bound}) в доле {above} состояний журнала, а истинная ценность его жадной политики — {v}.",
        "caveat_fqe": "Наибольшая абсолютная ошибка FQE — у политики «{worst}» ({worst_error}), наименьшая — у «{best}» "
                      "({best_error}): прежде чем доверять оценке FQE, сверьте её с симулятором.",
        "caveat_dt_groups": "В журналах Decision Transformer три группы эпизодов — по тому, чем они закончились: для "
                            "каждого seed {trap} закончились в ловушке (самые низкие отдачи), {timeout} усечены лимитом "
                            "шагов (у каждого отдача ровно {timeout_return}: только плата за шаги) и {goal} дошли до цели "
                            "(положительные отдачи); диапазон каждой группы — в таблице отчёта. Между группами эпизодов "
                            "нет: там полученная на запрос отдача — интерполяция модели, смесь неудачных и успешных "
                            "эпизодов, а не отдача, которую показывает журнал.",
        "caveat_dt_saturation": "Каждая точка кривой запросов — среднее по {episodes} эпизодам оценки на seed (наибольшая "
                                "стандартная ошибка {se}). Самый высокий запрос минус наибольший запрос внутри диапазона "
                                "журнала: {cmp}.",
        "caveat_language": "Уровень токенов, точное совпадение на обучающих запросах: BC с весами по отдаче (награды "
                           "без критика) минус клонирование поведения {cmp_rw}; BC с весами по преимуществу минус BC с "
                           "весами по отдаче (что критик добавляет к весам) {cmp_aw_rw}; ILQL-подобный метод (головы "
                           "ценности критика при декодировании) минус клонирование поведения {cmp_bc}; ILQL-подобный "
                           "метод минус BC с весами по отдаче {cmp_il_rw}; ILQL-подобный метод минус BC с весами по "
                           "преимуществу {cmp_aw}.",
        "caveat_language_no_critic": "На обучающих запросах этот прогон не обнаруживает ничего, что выученные головы "
                                     "ценности добавляют к взвешиванию журнала по наградам: выигрыш над клонированием "
                                     "поведения есть и без критика.",
        "caveat_language_heldout": "Отложенные запросы ({n} сумм цифр, которых нет в журнале), точное совпадение: "
                                   "{each}. Отложенные минус обучающие запросы: {gaps}. ILQL-подобный метод минус "
                                   "клонирование поведения на отложенных запросах {cmp_bc}; ILQL-подобный метод минус BC "
                                   "с весами по преимуществу {cmp_aw}.",
        "caveat_language_no_transfer": "Ни один метод не переносит точность с обучающих запросов на отложенные: на "
                                     "двенадцати обучающих запросах каждый метод выучивает ответы на эти запросы, а не "
                                     "сложение.",
        "caveat_language_why": "Клонирование поведения проигрывает по построению: самый частый ответ разметчика — "
                               "устойчивая ошибка (ответ + 1, вероятность {slip} против {exact} у точного ответа), и "
                               "имитация её копирует.",
        "caveat_smoke": "Профиль smoke лишь проверяет, что код работает; ноутбуки строят графики по зафиксированным полным прогонам.",
        "yes": "да", "no": "нет",
    },
}

for _lang in LANGUAGES:
    LABELS[_lang].update({f"name.{k}": v for k, v in _NAMES[_lang].items()})
    LABELS[_lang].update({f"report.{k}": v for k, v in _REPORT[_lang].items()})

#: The keys every language provides (in the order of the English table).
LABEL_KEYS: tuple[str, ...] = tuple(LABELS["en"])


def labels_for(lang: str) -> dict[str, str]:
    """A copy of the label table for ``lang`` ("en" or "ru").

    Raises ValueError naming ``lang`` when the language is not one of :data:`LANGUAGES`.
    """
    if lang not in LABELS:
        raise ValueError(f"labels_for: `lang` must be one of {LANGUAGES}, got {lang!r}")
    return dict(LABELS[lang])


def display_name(labels: Mapping[str, str], raw: str) -> str:
    """How ``raw`` (a method, action or outcome identifier) is shown with ``labels``.

    Looks up ``name.<raw>`` in the label table; an unknown name is shown as is, so a
    student's own method name still appears on the axis.
    """
    return labels.get(f"name.{raw}", raw)


def method_slug(name: str) -> str:
    """A method name as it appears in a claim or comparison id: ``naive DQN`` -> ``naive_dqn``."""
    return name.lower().replace(" ", "_").replace("-", "_")
