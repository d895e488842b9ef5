# Generated from reference_impl/labels.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Figure and summary text of the Module 5 lab, in English and Russian.

``LABELS[lang][key]`` holds the axis labels, titles and closing takeaways the lab
figures (:mod:`m5_student.figures`) and the notebooks use: the lab notebook's keys
plus four for the FQE figure (fqe_title, fqe_estimate, simulator_value,
discounted_value). Both languages carry exactly the same keys; :func:`labels_for` picks one and rejects an unknown language.
"""
from __future__ import annotations

__all__ = ["LABELS", "LANGUAGES", "LABEL_KEYS", "labels_for"]

LANGUAGES: tuple[str, ...] = ("en", "ru")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "grid_title": "KeyDoorGrid: key, door, goal, traps; an episode ends at a terminal or the time limit",
        "grid_x": "column",
        "grid_y": "row",
        "dagger_x": "DAgger round (0 = behavior cloning only)",
        "success": "share of episodes that reach the goal",
        "success_short": "success",
        "dagger_title": "Pinned run: behavior cloning, then DAgger relabelling rounds",
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
        "grid_title": "KeyDoorGrid: ключ, дверь, цель, ловушки; конец эпизода — терминал или лимит шагов",
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
        "mean_return": "средний возврат за эпизод",
        "offline_title": "Один и тот же журнал, разные защиты от экстраполяции",
        "fqe_warning": "FQE — тоже обученная модель: прежде чем доверять её оценкам, сверьте их с симулятором.",
        "identity": "получено = запрошено",
        "requested_return": "запрошенный начальный return-to-go",
        "achieved_return": "фактический средний возврат",
        "dt_title": "Decision Transformer: целевой возврат — это просьба, а не обещание",
        "exact_match": "доля промптов с точным ответом",
        "language_title": "Офлайн-обучение на уровне токенов: синтетическая задача на сложение",
        "fqe_title": "Оценка FQE рядом с ценностью той же политики в симуляторе",
        "fqe_estimate": "оценка FQE (по журналу)",
        "simulator_value": "симулятор (с дисконтом, стартовые клетки журнала)",
        "discounted_value": "дисконтированная ценность",
        "summary_heading": "Что показал практикум",
        "summary_bc": "Клонирование поведения справляется на состояниях, которые посещает эксперт; DAgger добавляет метки эксперта на состояниях, куда приходит сам ученик.",
        "summary_dqn": "Буфер воспроизведения и целевая сеть делают онлайн Q-обучение устойчивым; Double DQN выбирает следующее действие одной сетью, а оценивает другой.",
        "summary_offline": "В фиксированном журнале покрытие данных ограничивает то, чему можно научиться; и пессимистичные методы, и оценки FQE нужно проверять.",
        "summary_dt": "Decision Transformer — условная модель последовательностей; запрос высокого return-to-go ещё не значит, что модель его наберёт.",
        "summary_llm": "Токеновые Q и V можно обучить по записанным ответам, но эта маленькая ILQL-подобная модель — иллюстрация, а не результат масштаба LLM.",
    },
}

#: The keys every language provides (in the order of the English table).
LABEL_KEYS: tuple[str, ...] = tuple(LABELS["en"])


def labels_for(lang: str) -> dict[str, str]:
    """A copy of the label table for ``lang`` ("en" or "ru").

    Raises ValueError naming ``lang`` when the language is not one of :data:`LANGUAGES`.
    """
    if lang not in LABELS:
        raise ValueError(f"labels_for: `lang` must be one of {LANGUAGES}, got {lang!r}")
    return dict(LABELS[lang])
