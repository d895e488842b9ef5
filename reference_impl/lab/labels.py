"""Figure and summary text of the Module 5 lab, in English and Russian.

``LABELS[lang][key]`` holds the axis labels, titles and closing takeaways the lab
figures (:mod:`reference_impl.lab.figures`) and the notebooks use, the display names of
methods, actions and outcomes (``name.<raw>``, see :func:`display_name`) and the text
of the ``m5 lab`` report (``report.<what>``). Both languages carry exactly the same
keys; :func:`labels_for` picks one and rejects an unknown language. The language is
always an explicit argument (the lab's ``--lang``, the notebook's own language),
never read from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping

from reference_impl.lab.report_labels import REPORT

__all__ = ["LABELS", "LANGUAGES", "LABEL_KEYS", "labels_for", "display_name", "method_slug"]

LANGUAGES: tuple[str, ...] = ("en", "ru")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "grid_title": (
            "KeyDoorGrid: K key, D door, G goal, × trap, blue dots: start cells\n"
            "an episode ends at a terminal cell or is truncated by the step limit"
        ),
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
        "budget_note": (
            "its own setting: a {rows}×{cols} grid with {starts} start cells; the learner's actions slip with probability {slip}"
        ),
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
        "q_error_logged": "on (state, action) pairs the log holds",
        "q_error_unlogged": "on actions the log never shows there",
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
        "run.pinned_seeds": "the course's run ({seeds} seeds): mean and 95 % interval; dots: single seeds",
        "run.yours": "your run (profile {profile}, one seed)",
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
        "nb.language_heldout_row": "{name}, exact match on held-out prompts",
        "nb.cql_note": (
            "CQL in the course's run: the learned value of its greedy action is {learned} and the true value of "
            "its policy {true}; learned minus true: {gap}. Learned minus true Q is {logged} on the (state, action) "
            "pairs the log holds and {unlogged} on the actions it never shows. This is what the course measured, "
            "not a bug in your ports. CQL's lower bound (Kumar et al. 2020) is about evaluating a fixed policy: for "
            "a large enough penalty weight it holds in expectation over the data's states, proved for exact and "
            "linear function classes, and its margin vanishes only where the policy equals the behavior policy; "
            "here the weight is alpha = {alpha}, Q is a neural network, and the gap above is another quantity (the "
            "greedy policy's own action). How the penalty weight moves CQL between naive DQN and cloning on this "
            "log: `docs/lab-results/cql_alpha.md`. The penalty, a softmax cross-entropy "
            "towards the logged action, sets the logged actions' values against the others' but does not anchor "
            "their level: here the excess sits on the logged pairs."
        ),
        "nb.compare": "Your run (profile {profile}, one seed) beside the course's run ({seeds} seeds: mean [95 % interval]):",
        "nb.course_numbers": (
            "The course's run ({seeds} seeds), the numbers this question is about: mean [95 % interval], and "
            "differences between methods, paired by seed, with the verdict their interval allows:"
        ),
        "nb.design_intro": (
            "Every setting of this lab was chosen while looking at runs with seed offsets 0..{last} (the design "
            "seeds). The course's run, whose numbers this notebook shows, uses offsets from {first} on: seeds never "
            "looked at while choosing anything. What was tried, per section:"
        ),
        "nb.your_run": "your run",
        "nb.course_run": "course's run",
        "nb.artifacts": "The course's run:",
        "nb.artifact_scope": (
            "the full profile, {seeds} seeds of every section, on a CPU, with small networks on a synthetic task. "
            "Every table and figure titled with it shows the mean over those seeds with its 95 % interval, and "
            "a difference between methods is paired by seed; your own run is one seed, named as such. These "
            "are the course's measurements, not results of external benchmarks."
        ),
        "summary_heading": "What the lab shows",
        "summary_bc": (
            "Behavior cloning works on the states the expert visits; DAgger adds expert labels on the states the learner itself reaches."
        ),
        "summary_dqn": (
            "Double DQN picks the next action with the online network and scores it with the target network, "
            "which reduces the upward bias of a maximum over noisy estimates in expectation without removing it; "
            "whether a run shows less overestimation is read from its paired interval."
        ),
        "summary_offline": (
            "With a fixed log, what the data cover limits what can be learned; "
            "where the log's most common behavior is wrong, a method that reads the rewards can do better than imitation, "
            "and both its values and FQE's estimates need checking against the truth."
        ),
        "summary_dt": (
            "A Decision Transformer is a conditional sequence model; asking for a high return-to-go does not make it achieve that return."
        ),
        "summary_llm": (
            "Token-level Q and V can be learned from logged responses, "
            "but this small ILQL-like model is an illustration, not an LLM-scale result."
        ),
    },
    "ru": {
        "grid_title": (
            "KeyDoorGrid: K — ключ, D — дверь, G — цель, × — ловушка, синие точки — стартовые клетки\n"
            "эпизод завершается в терминальной клетке или усекается лимитом шагов"
        ),
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
        "budget_note": (
            "своя постановка: сетка {rows}×{cols} с {starts} стартовыми клетками; действия ученика срываются с вероятностью {slip}"
        ),
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
        "q_error_logged": "на парах (состояние, действие) из журнала",
        "q_error_unlogged": "на действиях, которых журнал там не содержит",
        "q_error_axis": "выученное Q минус истинное Q\n(среднее по парам; симметричная лог. шкала)",
        "q_error_title": "Где выученные ценности ошибаются: записанные и незаписанные действия",
        "value_learned": "выученное Q(s, π(s)) обучаемого",
        "value_true": "истинная ценность V^π(s) (модель симулятора, точно)",
        "value_fqe": "оценка FQE для V^π(s)",
        "value_axis": "дисконтированная ценность\n(среднее по состояниям журнала)",
        "dt_log_title": "Отдачи эпизодов в обучающем журнале Decision Transformer",
        "log_episode_return": "отдача эпизода в журнале (та же ось, что у запроса выше)",
        "episodes": "эпизодов (все запуски)",
        "dt_group": "{group}: {share:.0%} эпизодов ({count}), отдачи [{lo:.2f}, {hi:.2f}]",
        "dt_group_empty": "{group}: эпизодов нет",
        "dt_data_range": "отдачи, которые есть в журнале: [{lo:.2f}, {hi:.2f}]",
        "run.pinned": "зафиксированный полный прогон курса, запуск 0",
        "run.pinned_seeds": "прогон курса (запусков: {seeds}): среднее и 95 % интервал; точки — отдельные запуски",
        "run.yours": "ваш прогон (профиль {profile}, один запуск)",
        "run.lab": "прогон m5 lab: профиль {profile}, запусков: {seeds}",
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
        "nb.offline": (
            "{name}: средняя отдача {ret:.3f}, доля успехов {success:.2f}, выученное Q жадного действия {q}, истинная ценность {v:.3f}"
        ),
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
        "nb.language_heldout_row": "{name}, точное совпадение на отложенных запросах",
        "nb.cql_note": (
            "CQL в прогоне курса: выученная ценность его жадного действия — {learned}, истинная ценность его "
            "политики — {true}; выученная минус истинная: {gap}. Выученное минус истинное Q равно {logged} на "
            "парах (состояние, действие) из журнала и {unlogged} на действиях, которых журнал не содержит. Это "
            "измерено в прогоне курса, а не ошибка в ваших версиях на torch. Нижняя оценка CQL (Kumar et al. "
            "2020) относится к оценке фиксированной политики: при достаточно большом весе штрафа она выполняется в "
            "среднем по состояниям данных, доказана для точного и линейного классов функций, и её запас исчезает "
            "только там, где политика совпадает с политикой сбора данных; здесь вес alpha = {alpha}, Q — нейросеть, "
            "а разрыв выше — другая величина (собственное действие жадной политики). Как вес штрафа сдвигает CQL "
            "между наивным DQN и клонированием на этом журнале: `docs/lab-results/cql_alpha.ru.md`. Штраф — "
            "перекрёстная энтропия softmax по направлению к записанному действию — задаёт ценности записанных "
            "действий относительно остальных, но не закрепляет их уровень: здесь избыток приходится на пары из журнала."
        ),
        "nb.compare": "Ваш прогон (профиль {profile}, один запуск) рядом с прогоном курса (запусков: {seeds}; среднее [95 % интервал]):",
        "nb.course_numbers": (
            "Прогон курса (запусков: {seeds}), числа, о которых этот вопрос: среднее [95 % интервал] и разности "
            "методов, парные по запускам, с выводом, который допускает их интервал:"
        ),
        "nb.design_intro": (
            "Все настройки этой лабораторной выбраны по запускам со сдвигами 0..{last} (проектные запуски). Прогон "
            "курса, числа которого показывает этот ноутбук, использует сдвиги от {first}: эти запуски ни разу не "
            "просматривались при выборе настроек. Что пробовали, по разделам:"
        ),
        "nb.your_run": "ваш прогон",
        "nb.course_run": "прогон курса",
        "nb.artifacts": "Прогон курса:",
        "nb.artifact_scope": (
            "полный профиль, по {seeds} запусков каждого раздела, на центральном процессоре, небольшие сети на "
            "синтетической задаче. Каждая таблица и каждый график с его названием показывают среднее по этим "
            "запускам с 95 % интервалом, а разность методов — парную по запускам; ваш прогон — один запуск, и он "
            "так и назван. Это измерения курса, а не результаты внешних бенчмарков."
        ),
        "summary_heading": "Что показала лабораторная работа",
        "summary_bc": (
            "Клонирование поведения справляется на состояниях, которые посещает эксперт; "
            "DAgger добавляет метки эксперта в тех состояниях, куда попадает сам обучаемый агент."
        ),
        "summary_dqn": (
            "Double DQN выбирает следующее действие онлайн-сетью, а оценивает целевой сетью; это в среднем "
            "уменьшает завышение максимума по шумным оценкам, но не убирает его, а показывает ли прогон меньшее "
            "завышение, решает его парный интервал."
        ),
        "summary_offline": (
            "Когда журнал фиксирован, чему можно научиться, ограничено покрытием данных; "
            "где самое частое поведение журнала ошибочно, метод, читающий награды, может превзойти имитацию, "
            "а его ценности и оценки FQE нужно сверять с истиной."
        ),
        "summary_dt": (
            "Decision Transformer — условная модель последовательностей; "
            "если запросить высокую оставшуюся отдачу (return-to-go), модель вовсе не обязательно её наберёт."
        ),
        "summary_llm": (
            "Q и V на уровне токенов можно обучить по записанным ответам, "
            "но эта маленькая ILQL-подобная модель — иллюстрация, а не результат в масштабе LLM."
        ),
    },
}

#: Display names of the raw names that reach the figures and the report (method,
#: action and outcome identifiers), keyed ``name.<raw>``; see :func:`display_name`.
_NAMES: dict[str, dict[str, str]] = {
    "en": {
        "behavior cloning": "behavior cloning",
        "naive DQN": "naive DQN",
        "restricted DQN": "restricted DQN",
        "CQL": "CQL",
        "IQL": "IQL",
        "DQN": "DQN",
        "Double DQN": "Double DQN",
        "behavior_cloning": "behavior cloning",
        "return_weighted_bc": "return-weighted BC",
        "advantage_weighted_bc": "advantage-weighted BC",
        "ilql_like": "ILQL-like",
        "up": "up",
        "right": "right",
        "down": "down",
        "left": "left",
        "goal": "goal",
        "trap": "trap",
        "timeout": "timeout",
    },
    "ru": {
        "behavior cloning": "клонирование поведения",
        "naive DQN": "наивный DQN",
        "restricted DQN": "DQN с ограничением",
        "CQL": "CQL",
        "IQL": "IQL",
        "DQN": "DQN",
        "Double DQN": "Double DQN",
        "behavior_cloning": "клонирование поведения",
        "return_weighted_bc": "клонирование с весами по отдаче",
        "advantage_weighted_bc": "клонирование с весами преимущества",
        "ilql_like": "ILQL-подобный метод",
        "up": "вверх",
        "right": "вправо",
        "down": "вниз",
        "left": "влево",
        "goal": "цель",
        "trap": "ловушка",
        "timeout": "таймаут",
    },
}

for _lang in LANGUAGES:
    LABELS[_lang].update({f"name.{k}": v for k, v in _NAMES[_lang].items()})
    LABELS[_lang].update({f"report.{k}": v for k, v in REPORT[_lang].items()})

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
