# Generated from reference_impl/labels.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Figure and summary text of the Module 5 lab, in English and Russian.

``LABELS[lang][key]`` holds the axis labels, titles and closing takeaways the lab
figures (:mod:`m5_student.figures`) and the notebooks use, the display names of
methods, actions and outcomes (``name.<raw>``, see :func:`display_name`) and the text
of the ``m5 lab`` report (``report.<what>``). Both languages carry exactly the same
keys; :func:`labels_for` picks one and rejects an unknown language. The language is
always an explicit argument (the lab's ``--lang``, the notebook's own language),
never read from the environment.
"""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["LABELS", "LANGUAGES", "LABEL_KEYS", "labels_for", "display_name"]

LANGUAGES: tuple[str, ...] = ("en", "ru")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "grid_title": "KeyDoorGrid: K key, D door, G goal, × trap\nan episode ends at a terminal cell or is truncated by the step limit",
        "grid_x": "column",
        "grid_y": "row",
        "dagger_x": "DAgger round (0 = behavior cloning only)",
        "success": "share of episodes that reach the goal",
        "success_short": "success",
        "dagger_title": "Pinned run: behavior cloning, then DAgger relabeling rounds",
        "episode": "training episode",
        "rolling_success": "success rate over the last 15 episodes",
        "dqn_title": "DQN vs Double DQN on one pinned seed (rolling window 15)",
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
        "fqe_title": "FQE estimate next to the simulator's value of the same policy",
        "fqe_estimate": "FQE estimate (from the log)",
        "simulator_value": "simulator (discounted, log start cells)",
        "discounted_value": "discounted value",
        "summary_heading": "What the lab shows",
        "summary_bc": "Behavior cloning works on the states the expert visits; DAgger adds expert labels on the states the learner itself reaches.",
        "summary_dqn": "A replay buffer and a target network keep online Q-learning stable; Double DQN picks the next action with one network and scores it with another.",
        "summary_offline": "With a fixed log, what the data cover limits what can be learned; pessimistic methods and FQE estimates both need checking.",
        "summary_dt": "A Decision Transformer is a conditional sequence model; asking for a high return-to-go does not make it achieve that return.",
        "summary_llm": "Token-level Q and V can be learned from logged responses, but this small ILQL-like model is an illustration, not an LLM-scale result.",
    },
    "ru": {
        "grid_title": "KeyDoorGrid: K — ключ, D — дверь, G — цель, × — ловушка\nэпизод завершается в терминальной клетке или усекается лимитом шагов",
        "grid_x": "столбец",
        "grid_y": "строка",
        "dagger_x": "раунд DAgger (0 — только клонирование поведения)",
        "success": "доля эпизодов, дошедших до цели",
        "success_short": "успех",
        "dagger_title": "Зафиксированный прогон: клонирование поведения, затем раунды DAgger",
        "episode": "эпизод обучения",
        "rolling_success": "доля успехов за последние 15 эпизодов",
        "dqn_title": "DQN и Double DQN на одном зафиксированном seed (скользящее окно 15)",
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
        "fqe_title": "Оценка FQE рядом с ценностью той же политики в симуляторе",
        "fqe_estimate": "оценка FQE (по журналу)",
        "simulator_value": "симулятор (с дисконтом, стартовые клетки журнала)",
        "discounted_value": "дисконтированная ценность",
        "summary_heading": "Что показала лабораторная работа",
        "summary_bc": "Клонирование поведения справляется на состояниях, которые посещает эксперт; DAgger добавляет метки эксперта в тех состояниях, куда попадает сам обучаемый агент.",
        "summary_dqn": "Буфер воспроизведения и целевая сеть делают онлайн Q-обучение устойчивым; Double DQN выбирает следующее действие одной сетью, а оценивает другой.",
        "summary_offline": "Когда журнал фиксирован, чему можно научиться, ограничено покрытием данных; и пессимистичные методы, и оценки FQE нужно проверять.",
        "summary_dt": "Decision Transformer — условная модель последовательностей; если запросить высокую оставшуюся отдачу (return-to-go), модель вовсе не обязательно её наберёт.",
        "summary_llm": "Q и V на уровне токенов можно обучить по записанным ответам, но эта маленькая ILQL-подобная модель — иллюстрация, а не результат в масштабе LLM.",
    },
}

#: Display names of the raw names that reach the figures and the report (method,
#: action and outcome identifiers), keyed ``name.<raw>``; see :func:`display_name`.
_NAMES: dict[str, dict[str, str]] = {
    "en": {
        "behavior cloning": "behavior cloning", "naive DQN": "naive DQN", "restricted DQN": "restricted DQN",
        "CQL": "CQL", "IQL": "IQL", "DQN": "DQN", "Double DQN": "Double DQN",
        "behavior_cloning": "behavior cloning", "advantage_weighted_bc": "advantage-weighted BC", "ilql_like": "ILQL-like",
        "up": "up", "right": "right", "down": "down", "left": "left",
        "goal": "goal", "trap": "trap", "timeout": "timeout",
    },
    "ru": {
        "behavior cloning": "клонирование поведения", "naive DQN": "наивный DQN", "restricted DQN": "DQN с ограничением",
        "CQL": "CQL", "IQL": "IQL", "DQN": "DQN", "Double DQN": "Double DQN",
        "behavior_cloning": "клонирование поведения", "advantage_weighted_bc": "BC с весами по преимуществу",
        "ilql_like": "ILQL-подобный метод",
        "up": "вверх", "right": "вправо", "down": "вниз", "left": "влево",
        "goal": "цель", "trap": "ловушка", "timeout": "таймаут",
    },
}

#: Text of the ``m5 lab`` report, keyed ``report.<what>``; ``{...}`` fields are
#: filled by :mod:`m5_student.lab` (numbers are formatted there, the same in both languages).
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
        "claims": "Claims",
        "dt_claim": "**Decision Transformer**: the achieved return rises with the request inside the log's range and "
                    "saturates above it; holds on {holding} of {seeds} seeds. (Rises: a positive least-squares slope and a "
                    "higher return at the highest in-range request than at the lowest; saturates: no request above the "
                    "log's best return achieves more than that return + 0.05.)",
        "not_checkable": "not checkable: needs two requests at or below the log's best return and one above it",
        "train_seed": "train seed", "log_max_return": "log max return", "slope_inside": "slope inside",
        "rise_inside": "rise inside", "max_achieved_above": "max achieved above", "rises": "rises", "saturates": "saturates",
        "token_claim": "**Token-level pipeline**: the ILQL-like method's exact match exceeds behavior cloning's; holds on "
                       "{holding} of {seeds} seeds.",
        "seed": "seed", "bc_exact_match": "BC exact match", "ilql_exact_match": "ILQL-like exact match",
        "ilql_beats_bc": "ILQL-like > BC",
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
        "claims": "Проверка утверждений",
        "dt_claim": "**Decision Transformer**: полученная отдача растёт вместе с запросом внутри диапазона журнала и "
                    "перестаёт расти выше него; выполняется для {holding} из {seeds} seed. (Растёт: наклон прямой по методу "
                    "наименьших квадратов положителен, и при наибольшем запросе внутри диапазона отдача выше, чем при "
                    "наименьшем; насыщается: ни один запрос выше лучшей отдачи журнала не даёт больше этой отдачи + 0.05.)",
        "not_checkable": "не проверяется: нужны два запроса не выше лучшей отдачи журнала и один выше неё",
        "train_seed": "seed обучения", "log_max_return": "лучшая отдача в журнале", "slope_inside": "наклон внутри диапазона",
        "rise_inside": "прирост внутри диапазона", "max_achieved_above": "наибольшая полученная выше диапазона",
        "rises": "растёт", "saturates": "насыщается",
        "token_claim": "**Офлайн-обучение на уровне токенов**: точное совпадение у ILQL-подобного метода выше, чем у "
                       "клонирования поведения; выполняется для {holding} из {seeds} seed.",
        "seed": "seed", "bc_exact_match": "точное совпадение, BC", "ilql_exact_match": "точное совпадение, ILQL-подобный",
        "ilql_beats_bc": "ILQL-подобный > BC",
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
