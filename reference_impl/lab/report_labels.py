"""Text of the ``m5 lab`` report, in English and Russian.

:mod:`reference_impl.lab.labels` files it under ``report.<what>`` in each language's
labels; both languages carry exactly the same keys (tests/reference_impl/test_lab.py).
"""

from __future__ import annotations

#: Keyed by ``<what>``; ``{...}`` fields are filled by :mod:`reference_impl.lab` (numbers
#: are formatted there, the same in both languages).
REPORT: dict[str, dict[str, str]] = {
    "en": {
        "title": "Module 5 lab report",
        "intro": (
            "Profile `{profile}`, seed offsets {first_offset}..{last_offset}, sections: {sections}. "
            "Values with ± are mean ± sample standard deviation over seeds."
        ),
        "done": "m5 lab: profile {profile}, {count} section(s) in {seconds} s; report {report}",
        "pinned": "m5 lab: pinned {path}",
        "section.environment": "Environment",
        "section.dagger": "Behavior cloning and DAgger",
        "section.dqn": "DQN and Double DQN",
        "section.log": "The fixed log",
        "section.offline": "Offline methods",
        "section.fqe": "Fitted Q evaluation (FQE)",
        "section.dt": "Decision Transformer",
        "section.language": "Token-level pipeline",
        "section": "section",
        "wall_time": "wall time, s",
        "total": "total",
        "quantity": "quantity",
        "value": "value",
        "observation_dim": "observation size (observation_dim)",
        "action_dim": "number of actions (action_dim)",
        "initial_state": "initial state",
        "expert_from_start": "expert from the start cell",
        "expert_run": "{outcome}, steps: {steps}, return {ret}",
        "round": "round",
        "dataset_size": "dataset size (seed offset 0)",
        "success_rate": "success rate",
        "mean_return": "mean return",
        "success_per_seed": "success per seed",
        "expert_labels": "expert labels",
        "bc_success": "behavior cloning: success",
        "dagger_success": "DAgger: success",
        "dagger_minus_bc": "DAgger − BC, paired 95 % interval",
        "budget_intro": (
            "At an equal label budget, in a setting of its own (`imitation.label_budget_curve`): a larger "
            "grid ({rows}×{cols}, {starts} start cells, a limit of {max_steps} steps), where a few "
            "demonstrations cover a narrow tube of the states a learner can reach; the learner's actions "
            "slip with probability {slip}, the expert demonstrates without slips. A label is a distinct "
            "state with the expert's action (asking a deterministic expert about a state twice teaches "
            "nothing), so a learner whose collection finds no new state cannot spend the rest of its "
            "budget: cloning once the demonstrations repeat themselves (the columns of distinct labels). "
            "The expert's own success in this setting, the ceiling: {expert}."
        ),
        "bc_distinct_labels": "cloning: distinct labels",
        "dagger_distinct_labels": "DAgger: distinct labels",
        "shift_intro": (
            "Distribution shift, measured on each learner's own evaluation episodes at each budget "
            "(`shift.shift_metrics`): the share of its visits to states absent from its training labels, "
            "and the share of visits with a non-optimal action on those states and on the states it was "
            "trained on (mean ± sd over the seeds that have such visits; — where none has)."
        ),
        "shift_bc_unseen_share": "cloning: visits to unlabeled states",
        "shift_bc_error_unseen": "cloning: error there",
        "shift_bc_error_seen": "cloning: error on labeled states",
        "shift_dagger_unseen_share": "DAgger: visits to unlabeled states",
        "shift_dagger_error_unseen": "DAgger: error there",
        "shift_dagger_error_seen": "DAgger: error on labeled states",
        "seeds_suffix": "[seeds: {count}]",
        "method": "method",
        "greedy_eval_success": "greedy evaluation success",
        "greedy_eval_return": "greedy evaluation return",
        "late_success": "success, last 15 training episodes",
        "eval_success_per_seed": "evaluation success per seed",
        "log_summary": "Seed {seed}: transitions: {transitions}, outcomes: {outcomes}, mean episode return {ret} (all seeds: {all_seeds}).",
        "action": "action",
        "count": "count",
        "behavior_probability": "behavior policy probability",
        "in_support": "supported by the log (ratio >= {threshold})",
        "logged_q": "mean Q(s, pi(s)) over logged states",
        "not_available": "n/a",
        "fqe_intro": "Discounted values (gamma = {gamma}) over the log's start cells.",
        "policy": "policy",
        "fqe_estimate": "FQE estimate",
        "simulator": "simulator",
        "fqe_minus_simulator": "FQE − simulator",
        "abs_error": "absolute error",
        "dt_intro": "Log returns lie in [{low}, {high}] (shaded).",
        "requested_return": "requested return",
        "achieved_return": "achieved mean return",
        "achieved_per_seed": "achieved per seed",
        "dataset": "Dataset (запуск {seed}): `{dataset}`",
        "exact_match": "exact match",
        "mean_reward": "mean reward",
        "exact_match_per_seed": "exact match per seed",
        "greedy_responses": "Greedy responses (запуск {seed}):",
        "prompt": "prompt",
        "language_heldout": "Held-out prompts (the log never holds them; the first two swap the operands of a training prompt): {prompts}.",
        "language_train_exact_match": "exact match, training prompts",
        "language_heldout_exact_match": "exact match, held-out prompts",
        "language_train_mean_reward": "mean reward, training prompts",
        "language_heldout_mean_reward": "mean reward, held-out prompts",
        "language_heldout_exact_match_per_seed": "held-out exact match per seed",
        "language_heldout_responses": "Greedy responses to the held-out prompts (seed {seed}):",
        "claims": "Claims",
        "one_seed": "one seed (no interval)",
        "design": "How the settings were chosen",
        "design_intro": (
            "Every setting below was chosen while looking at runs with seed offsets 0..{last} (the design seeds). "
            "The course's report runs offsets from {first} on, seeds never looked at while choosing anything; "
            "`claims.json` records both blocks. What was tried, per section:"
        ),
        "dt_claim": (
            "**Decision Transformer**: the highest request within the log's range achieves more than the lowest "
            "(with a positive least-squares slope over those requests), and the curve stops rising above the log's "
            "best return: no request above it achieves more than the highest request inside the range by more "
            "than two standard errors of the difference (2 × √(SE² + SE²) of the two points). Over the seeds (mean "
            "with a one-sample 95 % interval): the rise inside the range is {rise}, and what requests above the range "
            "achieve beyond the highest request inside it is {excess}. "
            "Within the range the log may have no episodes at some returns (see the histogram): "
            "there the curve is the model's interpolation."
        ),
        "not_checkable": "not checkable: needs two requests at or below the log's best return and one above it",
        "train_seed": "train seed",
        "log_max_return": "log max return",
        "slope_inside": "slope inside",
        "rise_inside": "rise inside",
        "top_inside_request": "highest request inside",
        "excess_above": "achieved above the range minus at that request",
        "excess_allowance": "allowed (2 SE)",
        "rises": "rises",
        "saturates": "saturates",
        "seed": "запуск",
        "claim_id": "id",
        "claim": "claim",
        "per_seed": "per seed",
        "mean_sd": "mean ± sd",
        "all_claims": "Every claim of this run (also in `claims.json`):",
        "caveats": "What the numbers say",
        "true_value": "true value of the policy over logged states",
        "fqe_logged": "FQE value over logged states",
        "logged_pair_share": "share of states whose greedy action the log holds there",
        "optimum_intro": "Dashed line: the expert's return from the same evaluation starts, the best any policy can do ({optimum}).",
        "mechanism_intro": (
            "The mechanism, measured: each learner's Q against the exact action values of its own greedy policy "
            "(from the simulator's tabular model), over the log's distinct states, split into the (state, action) "
            "pairs the log holds and the actions it never shows in that state; the share of states whose greedy "
            "action is one the log never shows there; and the share of states whose largest learned Q exceeds "
            "the largest possible return (1.00, the goal's reward). Mean ± sd over seeds."
        ),
        "unlogged_greedy_share": "share of states with an unlogged greedy action",
        "overestimation_intro": (
            "Overestimation, measured: every 10 episodes, each network's Q of its greedy action minus the "
            "exact value of that action under the network's own greedy policy (the simulator's tabular "
            "model, gamma = 0.95, no time limit), averaged over the distinct states in the replay buffer. "
            "Lines: mean over seeds; bands: its 95 % interval."
        ),
        "overestimation_mean": "overestimation, mean over training",
        "overestimation_final": "overestimation, end of training",
        "above_max_share": "share of states with max Q > 1",
        "q_error_logged": "learned − true Q, logged pairs",
        "q_error_unlogged": "learned − true Q, unlogged actions",
        "values_intro": (
            "The learned value of each learner's greedy action (its own Q(s, π(s)), mean over the log's states) "
            "next to the true value of the same policy over the same states (exact, from the simulator's tabular "
            "model, gamma = 0.99, no time limit) and FQE's estimate of it. Bars: mean over seeds with its 95 % interval; dots: seeds."
        ),
        "dt_hist_intro": (
            "Under the sweep: the histogram of the log's episode returns (all seeds pooled), colored by how "
            "each episode ended. A request is only backed by the log where episodes with that return exist."
        ),
        "dt_groups_intro": "The log's episodes by how they ended (from each episode's outcome, not from its return):",
        "log_group": "episodes that ended as",
        "episodes_per_seed": "episodes per seed",
        "share_of_log": "share of the log",
        "returns_all_seeds": "returns (all seeds)",
        "return_range": "from {lo} to {hi}",
        "dt_se_intro": (
            "Each point averages {episodes} evaluation episodes per seed, enough for a standard error of at most "
            "{bound} whatever the policy does (returns lie in [{low}, {high}]; by Popoviciu's inequality their sd is "
            "at most half that range). Largest measured standard error over all points and seeds: {se_max} "
            "(request {request})."
        ),
        "standard_error_per_seed": "standard error per seed",
        "comparison": "{effect} (95 % CI {low} to {high}, {n} paired seeds): {verdict}",
        "comparison_one_sample": "{effect} (95 % CI {low} to {high}, one-sample, {n} seeds): {verdict}",
        "comparison_tie": "identical on all {n} paired seeds: a tie",
        "verdict.order.ahead": "ahead",
        "verdict.order.behind": "behind",
        "verdict.order.no detectable difference": "no detectable difference",
        "verdict.level.ahead": "above zero",
        "verdict.level.behind": "below zero",
        "verdict.level.no detectable difference": "no detectable difference from zero",
        "compared": "compared",
        "difference": "difference (95 % interval, seeds): verdict",
        "comparisons": "Comparisons, paired over seeds: the verdict follows the 95 % interval and nothing else (also in `claims.json`):",
        "caveat_dagger": (
            "DAgger's final round against behavior cloning (round 0), success rate: {cmp}. Behavior cloning "
            "trains on {bc_labels} expert labels and DAgger's final round on {dagger_labels}, so this is not a "
            "comparison at an equal label budget."
        ),
        "caveat_equal_budget": (
            "With the same budget of {budget} expert labels, DAgger reaches {dagger} and behavior cloning "
            "{bc} (the expert itself {expert}); DAgger minus behavior cloning: {cmp}. What is equal here is the "
            "budget, not the labels: cloning's clean demonstrations run out of new states, so it holds fewer "
            "distinct labels than DAgger."
        ),
        "caveat_matched": (
            "Two comparisons make the equality exact. With the same number of distinct expert labels ({labels}, "
            "all cloning's demonstrations hold), DAgger minus cloning: {cmp_matched}. With demonstrations that slip "
            "as the learner does (so they show recoveries; cloning then holds {slipped_bc} distinct labels and "
            "DAgger {slipped_dagger}), DAgger minus cloning: {cmp_slipped}."
        ),
        "caveat_shift": (
            "Where the gap comes from: cloning's demonstrations hold {bc_labels} distinct states, and "
            "{bc_unseen} of its own visits fall on states outside them, against {dagger_unseen} for DAgger "
            "(DAgger minus cloning: {cmp_unseen}). On those states cloning's action is non-optimal in "
            "{error_unseen} of visits, on its labeled states in {error_seen} (difference: {cmp_error})."
        ),
        "caveat_dqn": (
            "Overestimation of the greedy action (learned minus exact Q, mean over the buffer's states and "
            "over training): DQN {dqn}, Double DQN {double}; Double DQN minus DQN: {cmp_mean}; at the end of "
            "training: {cmp_final}. Greedy success, Double DQN minus DQN: {cmp_success}."
        ),
        "caveat_bc_offline": (
            "On the designed log (a fixed mix: a noisy expert, a planner that forgets the key, random actions), "
            "behavior cloning's greedy policy returns {bc}, and the expert {optimum} from the same starts (the "
            "optimum). Each value-based method minus behavior cloning: {each}."
        ),
        "caveat_replay": (
            "On the second log, online DQN's replay buffer (every episode from its warm start to its last; "
            "{transitions} transitions, mean return {log_return}, {goal} of its episodes reach the goal), behavior "
            "cloning returns {bc}. Each value-based method minus behavior cloning there: {each}. A learning agent's "
            "buffer is mostly its later, good play, so copying it can be hard to beat; the designed log's majority is wrong."
        ),
        "caveat_cql": (
            "What CQL's analysis gives (Kumar et al. 2020, Theorem 3.2): when a fixed policy is evaluated with a large "
            "enough penalty weight, its learned value is a lower bound of its true value in expectation over the data's "
            "states; the margin vanishes only where that policy equals the behavior policy, not wherever it picks an "
            "action the log holds. The lab measures another quantity: here (alpha = {alpha}) the learned Q of CQL's own "
            "greedy action is {q} and the true value of that greedy policy {v}; learned minus true: {cmp}. Its greedy "
            "action is one the log holds in that state in {share} of the log's states (naive DQN: {naive_share}). The "
            "log-sum-exp penalty raises the actions the behavior policy takes more often than the softmax of Q does, "
            "and bootstrapping carries that surplus along the logged pairs; the penalty weight study "
            "(`cql_alpha.md`) shows where CQL sits between naive DQN and cloning on this log."
        ),
        "caveat_naive": (
            "Naive DQN, learned minus true Q on the actions the log never shows in a state: {cmp}; on the pairs "
            "the log holds: {logged}. Its largest learned Q exceeds the largest possible return ({bound}) in "
            "{above} of the log's states, and its greedy policy's true value is {v}. Errors this large on both kinds "
            "of pairs, where no true Q exceeds {bound}, mean the bootstrapped regression diverged; restricted DQN, "
            "whose targets use only actions the log holds, stays close even on the actions it never saw ({restricted})."
        ),
        "caveat_fqe": (
            "FQE's absolute error, per method (mean ± sd over seeds): {errors}. No order of these errors is "
            "claimed: the paired difference naive DQN minus IQL is {cmp}. Check an FQE estimate against the "
            "simulator before trusting it."
        ),
        "caveat_dt_groups": (
            "The Decision Transformer's logs hold three groups of episodes, by how they ended: per seed, "
            "{trap} end in a trap (the lowest returns), {timeout} are cut by the time limit (each returns "
            "exactly {timeout_return}, every step cost and nothing else) and {goal} reach the goal (the "
            "positive returns); the report's table gives each group's range. Between the groups no episode "
            "exists: there a request's achieved return is the model's interpolation, a mix of failing and "
            "succeeding episodes, not a return the log shows."
        ),
        "caveat_dt_saturation": (
            "Each point of the sweep averages {episodes} evaluation episodes per seed (largest standard "
            "error {se}). Highest request minus the highest request inside the log's range: {cmp}."
        ),
        "caveat_language": (
            "Token level, exact match on the training prompts: return-weighted BC (rewards, no critic) "
            "minus behavior cloning {cmp_rw}; advantage-weighted BC minus return-weighted BC (what the "
            "critic adds to the weights) {cmp_aw_rw}; ILQL-like (the critic's value heads at decoding) "
            "minus behavior cloning {cmp_bc}; ILQL-like minus return-weighted BC {cmp_il_rw}; ILQL-like minus "
            "advantage-weighted BC {cmp_aw}."
        ),
        "caveat_language_no_critic": (
            "On the training prompts this run detects nothing that the learned value heads "
            "add to weighting the log by its rewards: the gain over behavior cloning is "
            "already there without a critic."
        ),
        "caveat_language_heldout": (
            "Held-out prompts ({n} digit sums the log never holds), exact match: {each}. "
            "Held-out minus training prompts: {gaps}. ILQL-like minus behavior cloning on the "
            "held-out prompts {cmp_bc}; ILQL-like minus advantage-weighted BC {cmp_aw}."
        ),
        "caveat_language_no_transfer": (
            "No method carries its accuracy on the training prompts over to the held-out "
            "ones: with twelve training prompts every method learns answers to those prompts, "
            "not addition."
        ),
        "caveat_language_why": (
            "Behavior cloning loses by construction: the annotator's most frequent response is a "
            "consistent slip (answer + 1, probability {slip}, against {exact} for the exact answer), "
            "and imitation copies it."
        ),
        "caveat_smoke": "The smoke profile only proves that the code runs; the notebooks plot the pinned full runs.",
        "yes": "yes",
        "no": "no",
    },
    "ru": {
        "title": "Отчёт по лабораторной работе модуля 5",
        "intro": (
            "Профиль `{profile}`, сдвиги запусков {first_offset}..{last_offset}, разделы: {sections}. "
            "Запись вида a ± b — среднее ± выборочное стандартное отклонение по запускам."
        ),
        "done": "m5 lab: профиль {profile}, разделов: {count}, время {seconds} с; отчёт {report}",
        "pinned": "m5 lab: зафиксирован файл {path}",
        "section.environment": "Среда",
        "section.dagger": "Клонирование поведения и DAgger",
        "section.dqn": "DQN и Double DQN",
        "section.log": "Фиксированный журнал",
        "section.offline": "Офлайн-методы",
        "section.fqe": "Оценка политики методом FQE",
        "section.dt": "Decision Transformer и запрошенная отдача",
        "section.language": "Офлайн-обучение на уровне токенов",
        "section": "раздел",
        "wall_time": "время, с",
        "total": "всего",
        "quantity": "величина",
        "value": "значение",
        "observation_dim": "размер наблюдения (observation_dim)",
        "action_dim": "число действий (action_dim)",
        "initial_state": "начальное состояние",
        "expert_from_start": "эксперт из стартовой клетки",
        "expert_run": "{outcome}, шагов: {steps}, отдача {ret}",
        "round": "раунд",
        "dataset_size": "размер набора данных (запуск 0)",
        "success_rate": "доля успехов",
        "mean_return": "средняя отдача",
        "success_per_seed": "успех по запускам",
        "expert_labels": "метки эксперта",
        "bc_success": "клонирование поведения: успех",
        "dagger_success": "DAgger: успех",
        "dagger_minus_bc": "DAgger − BC, парный 95 % интервал",
        "budget_intro": (
            "При равном числе меток, в отдельной постановке (`imitation.label_budget_curve`): сетка крупнее "
            "({rows}×{cols}, стартовых клеток: {starts}, лимит {max_steps} шагов), где несколько демонстраций "
            "покрывают узкую трубку из состояний, в которые может попасть ученик; действия ученика с "
            "вероятностью {slip} заменяются случайными, эксперт демонстрирует без таких срывов. Метка — это "
            "отдельное состояние с действием эксперта (повторный вопрос детерминированному эксперту о том же "
            "состоянии ничему не учит), поэтому ученик, чей сбор больше не находит новых состояний, не может "
            "потратить остаток бюджета: клонирование — как только демонстрации начинают повторяться (столбцы "
            "различных меток). Успех самого эксперта в этой постановке, "
            "потолок: {expert}."
        ),
        "bc_distinct_labels": "клонирование: различных меток",
        "dagger_distinct_labels": "DAgger: различных меток",
        "shift_intro": (
            "Сдвиг распределения, измеренный на собственных оценочных эпизодах каждого ученика при каждом "
            "бюджете (`shift.shift_metrics`): доля его посещений состояний, которых нет среди его обучающих "
            "меток, и доля посещений с неоптимальным действием в этих состояниях и в состояниях, на которых он "
            "обучен (среднее ± стандартное отклонение по запускам, где такие посещения есть; — где их нет ни у одного)."
        ),
        "shift_bc_unseen_share": "клонирование: посещения неразмеченных состояний",
        "shift_bc_error_unseen": "клонирование: ошибка в них",
        "shift_bc_error_seen": "клонирование: ошибка в размеченных состояниях",
        "shift_dagger_unseen_share": "DAgger: посещения неразмеченных состояний",
        "shift_dagger_error_unseen": "DAgger: ошибка в них",
        "shift_dagger_error_seen": "DAgger: ошибка в размеченных состояниях",
        "seeds_suffix": "[запусков: {count}]",
        "method": "метод",
        "greedy_eval_success": "успех жадной политики при оценке",
        "greedy_eval_return": "отдача жадной политики при оценке",
        "late_success": "успех за последние 15 эпизодов обучения",
        "eval_success_per_seed": "успех при оценке по запускам",
        "log_summary": (
            "Запуск {seed}: переходов: {transitions}, исходы: {outcomes}, средняя отдача за эпизод {ret} (все запуски: {all_seeds})."
        ),
        "action": "действие",
        "count": "число",
        "behavior_probability": "вероятность у поведенческой политики",
        "in_support": "поддержано журналом (отношение >= {threshold})",
        "logged_q": "среднее Q(s, pi(s)) по состояниям журнала",
        "not_available": "н/д",
        "fqe_intro": "Дисконтированные ценности (gamma = {gamma}) по стартовым клеткам журнала.",
        "policy": "политика",
        "fqe_estimate": "оценка FQE",
        "simulator": "симулятор",
        "fqe_minus_simulator": "FQE − симулятор",
        "abs_error": "абсолютная ошибка",
        "dt_intro": "Отдачи эпизодов журнала лежат в [{low}, {high}] (серая полоса).",
        "requested_return": "запрошенная отдача",
        "achieved_return": "полученная средняя отдача",
        "achieved_per_seed": "полученная отдача по запускам",
        "dataset": "Набор данных (запуск {seed}): `{dataset}`",
        "exact_match": "точное совпадение",
        "mean_reward": "средняя награда",
        "exact_match_per_seed": "точное совпадение по запускам",
        "greedy_responses": "Жадные ответы (запуск {seed}):",
        "prompt": "запрос",
        "language_heldout": "Отложенные запросы (в журнале их нет; в первых двух слагаемые обучающего запроса переставлены): {prompts}.",
        "language_train_exact_match": "точное совпадение, обучающие запросы",
        "language_heldout_exact_match": "точное совпадение, отложенные запросы",
        "language_train_mean_reward": "средняя награда, обучающие запросы",
        "language_heldout_mean_reward": "средняя награда, отложенные запросы",
        "language_heldout_exact_match_per_seed": "точное совпадение на отложенных запросах по запускам",
        "language_heldout_responses": "Жадные ответы на отложенные запросы (запуск {seed}):",
        "claims": "Проверка утверждений",
        "one_seed": "один запуск (без интервала)",
        "design": "Как выбирались настройки",
        "design_intro": (
            "Все настройки ниже выбраны по запускам со сдвигами 0..{last} (проектные запуски). Отчёт курса "
            "использует сдвиги от {first}: эти запуски ни разу не просматривались при выборе настроек; "
            "`claims.json` хранит оба блока. Что пробовали, по разделам:"
        ),
        "dt_claim": (
            "**Decision Transformer**: наибольший запрос внутри диапазона журнала даёт больше, чем наименьший "
            "(и наклон прямой по методу наименьших квадратов по этим запросам положителен), а выше лучшей отдачи "
            "журнала кривая перестаёт расти: ни один запрос выше неё не даёт больше, чем наибольший запрос внутри "
            "диапазона, более чем на две стандартные ошибки разности (корень из суммы квадратов ошибок двух точек). По "
            "запускам (среднее и одновыборочный 95-процентный интервал): подъём внутри диапазона {rise}, а прибавка "
            "запросов выше диапазона сверх наибольшего запроса внутри него {excess}. "
            "Внутри диапазона у некоторых отдач в журнале может не быть ни одного эпизода (см. гистограмму): "
            "там кривая — интерполяция модели."
        ),
        "not_checkable": "не проверяется: нужны два запроса не выше лучшей отдачи журнала и один выше неё",
        "train_seed": "запуск обучения",
        "log_max_return": "лучшая отдача в журнале",
        "slope_inside": "наклон внутри диапазона",
        "rise_inside": "прирост внутри диапазона",
        "top_inside_request": "наибольший запрос внутри диапазона",
        "excess_above": "полученное выше диапазона минус полученное при этом запросе",
        "excess_allowance": "допуск (две стандартные ошибки)",
        "rises": "растёт",
        "saturates": "насыщается",
        "seed": "запуск",
        "claim_id": "идентификатор",
        "claim": "утверждение",
        "per_seed": "по запускам",
        "mean_sd": "среднее ± ст. откл.",
        "all_claims": "Все утверждения этого прогона (они же в `claims.json`):",
        "caveats": "Что говорят числа",
        "true_value": "истинная ценность политики по состояниям журнала",
        "fqe_logged": "оценка FQE по состояниям журнала",
        "logged_pair_share": "доля состояний, где жадное действие записано в журнале",
        "optimum_intro": "Пунктир: отдача эксперта с тех же стартов оценки, лучшее, что может любая политика ({optimum}).",
        "mechanism_intro": (
            "Механизм, измеренный: Q каждого обучаемого против точных ценностей действий его собственной "
            "жадной политики (по табличной модели симулятора) на различных состояниях журнала, отдельно для пар "
            "(состояние, действие) из журнала и для действий, которых журнал в этом состоянии не содержит; доля "
            "состояний, где жадное действие в журнале там не встречается; доля состояний, где наибольшее "
            "выученное Q выше наибольшей возможной отдачи (1.00, награда за цель). Среднее ± ст. откл. по запускам."
        ),
        "unlogged_greedy_share": "доля состояний с незаписанным жадным действием",
        "overestimation_intro": (
            "Завышение, измеренное: каждые 10 эпизодов — Q жадного действия каждой сети минус точная "
            "ценность этого действия при собственной жадной политике сети (табличная модель симулятора, "
            "gamma = 0.95, без лимита шагов), среднее по различным состояниям буфера воспроизведения. "
            "Линии — среднее по запускам, полосы — его 95 % интервал."
        ),
        "overestimation_mean": "завышение, среднее за обучение",
        "overestimation_final": "завышение в конце обучения",
        "above_max_share": "доля состояний с наибольшим Q > 1",
        "q_error_logged": "выученное − истинное Q, пары из журнала",
        "q_error_unlogged": "выученное − истинное Q, незаписанные действия",
        "values_intro": (
            "Выученная ценность жадного действия каждого обучаемого (его собственное Q(s, π(s)), среднее по "
            "состояниям журнала) рядом с истинной ценностью той же политики в тех же состояниях (точно, по "
            "табличной модели симулятора, gamma = 0.99, без лимита шагов) и с её оценкой FQE. Столбцы: среднее "
            "по запускам с его 95 % интервалом; точки: отдельные запуски."
        ),
        "dt_hist_intro": (
            "Под кривой запросов: гистограмма отдач эпизодов журнала (все запуски вместе), цвет — чем закончился "
            "эпизод. Запрос опирается на журнал только там, где есть эпизоды с такой отдачей."
        ),
        "dt_groups_intro": "Эпизоды журнала по тому, чем они закончились (по исходу эпизода, а не по его отдаче):",
        "log_group": "чем закончился эпизод",
        "episodes_per_seed": "эпизодов на запуск",
        "share_of_log": "доля журнала",
        "returns_all_seeds": "отдачи (все запуски)",
        "return_range": "от {lo} до {hi}",
        "dt_se_intro": (
            "Каждая точка — среднее по {episodes} эпизодам оценки на запуск: этого хватает, чтобы стандартная "
            "ошибка была не больше {bound} при любой политике (отдачи лежат в [{low}, {high}], и по неравенству "
            "Поповичу их ст. откл. не больше половины этого диапазона). Наибольшая измеренная стандартная "
            "ошибка по всем точкам и запускам: {se_max} (запрос {request})."
        ),
        "standard_error_per_seed": "стандартная ошибка по запускам",
        "comparison": "{effect} (95 % ДИ от {low} до {high}, парных запусков: {n}): {verdict}",
        "comparison_one_sample": "{effect} (95 % ДИ от {low} до {high}, одновыборочный, запусков: {n}): {verdict}",
        "comparison_tie": "совпадает на всех парных запусках ({n}): ничья",
        "verdict.order.ahead": "впереди",
        "verdict.order.behind": "позади",
        "verdict.order.no detectable difference": "различие не обнаружено",
        "verdict.level.ahead": "выше нуля",
        "verdict.level.behind": "ниже нуля",
        "verdict.level.no detectable difference": "отличие от нуля не обнаружено",
        "compared": "что сравнивается",
        "difference": "разность (95 % интервал, запуски): вывод",
        "comparisons": "Сравнения, парные по запускам: вывод следует только из 95 % интервала (они же в `claims.json`):",
        "caveat_dagger": (
            "Последний раунд DAgger против клонирования поведения (раунд 0), доля успехов: {cmp}. "
            "Клонирование поведения обучается на {bc_labels} метках эксперта, а последний раунд DAgger — на "
            "{dagger_labels}, так что это сравнение не при равном числе меток."
        ),
        "caveat_equal_budget": (
            "При одном и том же бюджете в {budget} меток эксперта DAgger достигает {dagger}, а клонирование "
            "поведения — {bc} (сам эксперт — {expert}); DAgger минус клонирование поведения: {cmp}. Равен здесь "
            "бюджет, а не метки: чистые демонстрации клонирования быстро перестают давать новые состояния, и "
            "различных меток у него меньше, чем у DAgger."
        ),
        "caveat_matched": (
            "Два сравнения делают равенство точным. При одинаковом числе различных меток эксперта ({labels} — все, "
            "что есть в демонстрациях клонирования) DAgger минус клонирование: {cmp_matched}. С демонстрациями, "
            "которые проскальзывают так же, как ученик (и потому показывают исправление ошибок; у клонирования "
            "тогда {slipped_bc} различных меток, у DAgger {slipped_dagger}), DAgger минус клонирование: {cmp_slipped}."
        ),
        "caveat_shift": (
            "Откуда разрыв: в демонстрациях клонирования {bc_labels} различных состояний, и {bc_unseen} его "
            "собственных посещений приходятся на состояния вне их, против {dagger_unseen} у DAgger (DAgger "
            "минус клонирование: {cmp_unseen}). В этих состояниях действие клонирования неоптимально в "
            "{error_unseen} посещений, в размеченных — в {error_seen} (разность: {cmp_error})."
        ),
        "caveat_dqn": (
            "Завышение оценки жадного действия (выученное минус точное Q, среднее по состояниям буфера и по "
            "обучению): DQN {dqn}, Double DQN {double}; Double DQN минус DQN: {cmp_mean}; в конце обучения: "
            "{cmp_final}. Доля успехов, Double DQN минус DQN: {cmp_success}."
        ),
        "caveat_bc_offline": (
            "На спроектированном журнале (постоянная смесь: эксперт с шумом, планировщик, забывающий ключ, случайные "
            "действия) жадная политика клонирования поведения даёт отдачу {bc}, а эксперт с тех же стартов — "
            "{optimum} (оптимум). Каждый ценностный метод минус клонирование поведения: {each}."
        ),
        "caveat_replay": (
            "На втором журнале, буфере воспроизведения онлайн-DQN (все эпизоды от разогрева до последнего; "
            "переходов: {transitions}, средняя отдача {log_return}, до цели доходит доля {goal} эпизодов), клонирование "
            "поведения даёт {bc}. Каждый ценностный метод минус клонирование поведения там: {each}. Буфер обучающегося "
            "агента — в основном его поздняя, хорошая игра, и копирование её бывает трудно превзойти; в спроектированном "
            "журнале большинство действует неверно."
        ),
        "caveat_cql": (
            "Что даёт анализ CQL (Kumar et al. 2020, теорема 3.2): если оценивать фиксированную политику с достаточно "
            "большим весом штрафа, её выученная ценность — нижняя оценка истинной в среднем по состояниям данных; запас "
            "исчезает только там, где эта политика совпадает с политикой сбора данных, а не везде, где она выбирает "
            "действие из журнала. Лаборатория измеряет другую величину: здесь (alpha = {alpha}) выученное Q "
            "собственного жадного действия CQL равно {q}, а истинная ценность этой жадной политики — {v}; выученная "
            "минус истинная: {cmp}. Жадное действие CQL записано в журнале для этого же состояния в доле {share} "
            "состояний журнала (наивный DQN: {naive_share}). Штраф `logsumexp` поднимает действия, которые политика "
            "сбора данных выбирает чаще, чем softmax от Q, а бутстрэп переносит этот избыток вдоль пар из журнала; "
            "исследование веса штрафа (`cql_alpha.ru.md`) показывает, где CQL находится между наивным DQN и "
            "клонированием на этом журнале."
        ),
        "caveat_naive": (
            "Наивный DQN, выученное минус истинное Q на действиях, которых журнал в этом состоянии не содержит: "
            "{cmp}; на парах из журнала: {logged}. Его наибольшее выученное Q выше наибольшей возможной отдачи "
            "({bound}) в доле {above} состояний журнала, а истинная ценность его жадной политики — {v}. Ошибки "
            "такого размера на парах обоих видов, когда ни одно истинное Q не больше {bound}, означают, что "
            "регрессия с бутстрэпом разошлась; DQN с ограничением, чьи цели берут только действия из журнала, "
            "остаётся близок даже на ненаблюдавшихся действиях ({restricted})."
        ),
        "caveat_fqe": (
            "Абсолютная ошибка FQE по методам (среднее ± ст. откл. по запускам): {errors}. Порядок этих ошибок "
            "не утверждается: парная разность «наивный DQN минус IQL» — {cmp}. Прежде чем доверять оценке FQE, "
            "сверьте её с симулятором."
        ),
        "caveat_dt_groups": (
            "В журналах Decision Transformer три группы эпизодов — по тому, чем они закончились: для "
            "каждого запуска {trap} закончились в ловушке (самые низкие отдачи), {timeout} усечены лимитом "
            "шагов (у каждого отдача ровно {timeout_return}: только плата за шаги) и {goal} дошли до цели "
            "(положительные отдачи); диапазон каждой группы — в таблице отчёта. Между группами эпизодов "
            "нет: там полученная на запрос отдача — интерполяция модели, смесь неудачных и успешных "
            "эпизодов, а не отдача, которую показывает журнал."
        ),
        "caveat_dt_saturation": (
            "Каждая точка кривой запросов — среднее по {episodes} эпизодам оценки на запуск (наибольшая "
            "стандартная ошибка {se}). Самый высокий запрос минус наибольший запрос внутри диапазона "
            "журнала: {cmp}."
        ),
        "caveat_language": (
            "Уровень токенов, точное совпадение на обучающих запросах: клонирование с весами по отдаче (награды "
            "без критика) минус клонирование поведения {cmp_rw}; клонирование с весами преимущества минус "
            "клонирование с весами по отдаче (что критик добавляет к весам) {cmp_aw_rw}; ILQL-подобный метод (головы "
            "ценности критика при декодировании) минус клонирование поведения {cmp_bc}; ILQL-подобный "
            "метод минус клонирование с весами по отдаче {cmp_il_rw}; ILQL-подобный метод минус "
            "клонирование с весами преимущества {cmp_aw}."
        ),
        "caveat_language_no_critic": (
            "На обучающих запросах этот прогон не обнаруживает ничего, что выученные головы "
            "ценности добавляют к взвешиванию журнала по наградам: выигрыш над клонированием "
            "поведения есть и без критика."
        ),
        "caveat_language_heldout": (
            "Отложенные запросы ({n} сумм цифр, которых нет в журнале), точное совпадение: "
            "{each}. Отложенные минус обучающие запросы: {gaps}. ILQL-подобный метод минус "
            "клонирование поведения на отложенных запросах {cmp_bc}; ILQL-подобный метод минус "
            "клонирование с весами преимущества {cmp_aw}."
        ),
        "caveat_language_no_transfer": (
            "Ни один метод не переносит точность с обучающих запросов на отложенные: на "
            "двенадцати обучающих запросах каждый метод выучивает ответы на эти запросы, а не "
            "сложение."
        ),
        "caveat_language_why": (
            "Клонирование поведения проигрывает по построению: самый частый ответ разметчика — "
            "устойчивая ошибка (ответ + 1, вероятность {slip} против {exact} у точного ответа), и "
            "имитация её копирует."
        ),
        "caveat_smoke": "Профиль smoke лишь проверяет, что код работает; ноутбуки строят графики по зафиксированным полным прогонам.",
        "yes": "да",
        "no": "нет",
    },
}
