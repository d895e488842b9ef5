"""The registry of the lab's claims: every number the course states, as a function of one seed's result.

Each :class:`Claim` has an id, its text in English and Russian, the section it comes from
and a function from one seed's section result (what :mod:`reference_impl.lab.runners`
returns for that seed) to a number, or None where that seed's run lacks it.
:mod:`reference_impl.lab.results` evaluates them, writes ``claims.json`` and the results
page; :data:`README_CLAIMS` are the ones that page's table shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from reference_impl.lab.labels import LANGUAGES, display_name, labels_for, method_slug
from reference_impl.lab.profiles import EQUAL_BUDGET, PROFILE_PARAMS
from reference_impl.language_task import LANGUAGE_METHODS
from reference_impl.offline import METHOD_NAMES

__all__ = ["Claim", "CLAIMS", "README_CLAIMS", "DT_LOG_GROUPS", "log_return_groups", "digits_of"]

#: The groups of the Decision Transformer's log, by how an episode ended: a trap, the time
#: limit (every step cost and nothing else), the goal. Their index is the log's outcome code.
DT_LOG_GROUPS = ("trap", "timeout", "goal")


@dataclass(frozen=True)
class Claim:
    """One number the course states: ``value(seed_result)`` for each seed of ``section``."""

    id: str
    section: str
    text: Mapping[str, str]
    value: Callable[[dict], float | None]
    digits: int = 3


_slug = method_slug  # the claim ids' spelling of a method name


def _texts(template: Mapping[str, str], raw_name: str | None = None, **fields) -> dict[str, str]:
    """``template[lang]`` filled in per language, ``{name}`` being ``raw_name``'s display name."""
    out = {}
    for lang in LANGUAGES:
        extra = {} if raw_name is None else {"name": display_name(labels_for(lang), raw_name)}
        out[lang] = template[lang].format(**fields, **extra)
    return out


def _indexed(key: str, names_key: str, name: str) -> Callable[[dict], float | None]:
    """Value function: ``result[key][i]`` where ``result[names_key][i] == name``."""

    def value(result: dict) -> float | None:
        names = [str(n) for n in result[names_key]]
        if name not in names:
            return None
        v = result[key][names.index(name)]
        return None if v is None else float(v)

    return value


def _at_request(request: float) -> Callable[[dict], float | None]:
    def value(result: dict) -> float | None:
        targets = np.asarray(result["target_return"], dtype=np.float64)
        hit = np.flatnonzero(np.isclose(targets, request))
        return float(result["mean_return"][hit[0]]) if hit.size else None

    return value


def _series_mean(key: str) -> Callable[[dict], float | None]:
    """Value function: the mean of the per-checkpoint series ``key`` (None where the run has none)."""
    return lambda result: float(np.mean(result[key])) if key in result else None


def _series_last(key: str) -> Callable[[dict], float | None]:
    """Value function: the last checkpoint of the series ``key`` (None where the run has none)."""
    return lambda result: float(result[key][-1]) if key in result else None


def log_return_groups(returns, outcomes) -> dict[str, dict]:
    """The log's episodes grouped by how they ended, as they are.

    ``outcomes[i]`` is episode i's end: a name of :data:`DT_LOG_GROUPS` or its index
    there (the run's outcome codes). Returns ``{group: {"count", "share", "min", "max"}}``
    for every group in :data:`DT_LOG_GROUPS` order: share = count / len(returns), and
    min / max the group's lowest and highest return (None for an empty group).
    Raises ValueError on unequal lengths, an empty log, non-finite returns or an unknown outcome.
    """
    r = np.asarray(returns, dtype=np.float64)
    names = [
        DT_LOG_GROUPS[int(o)]
        if isinstance(o, (int, np.integer, float, np.floating))
        and not isinstance(o, bool)
        and float(o).is_integer()
        and 0 <= int(o) < len(DT_LOG_GROUPS)
        else o
        for o in np.asarray(outcomes).tolist()
    ]
    if r.ndim != 1 or r.size == 0 or len(names) != r.size:
        raise ValueError(f"log_return_groups: `returns` ({r.shape}) and `outcomes` ({len(names)}) must be equal non-empty 1-D")
    if not np.isfinite(r).all():
        raise ValueError("log_return_groups: `returns` must be finite")
    unknown = sorted({str(n) for n in names if n not in DT_LOG_GROUPS})
    if unknown:
        raise ValueError(f"log_return_groups: `outcomes` holds {unknown}; expected {DT_LOG_GROUPS} or their indices")
    out = {}
    for group in DT_LOG_GROUPS:
        members = r[np.asarray([n == group for n in names])]
        out[group] = {
            "count": int(members.size),
            "share": float(members.size / r.size),
            "min": float(members.min()) if members.size else None,
            "max": float(members.max()) if members.size else None,
        }
    return out


def _largest_standard_error(result: dict) -> float | None:
    """Value function: the sweep's largest standard error (None without one: one episode per request has no sd)."""
    se = np.asarray(result.get("return_se", []), dtype=np.float64)
    return None if se.size == 0 or np.isnan(se).all() else float(np.nanmax(se))


def _log_group(group: str, what: str) -> Callable[[dict], float | None]:
    """Value function: ``what`` (count or share) of a log group (None where the run has no outcomes).
    The group's return range is not a claim: a group can be empty on one seed (the report
    gives the ranges pooled over seeds)."""

    def value(result: dict) -> float | None:
        if "log_outcome_codes" not in result:
            return None
        v = log_return_groups(result["log_returns"], result["log_outcome_codes"])[group][what]
        return None if v is None else float(v)

    return value


#: Offline measurements that read a learned Q (behavior cloning has none).
Q_ONLY = ("greedy_q_learned", "q_logged_error", "q_unlogged_error", "above_max_share")


def _at_budget(result: dict, key: str) -> float | None:
    """``result[key]`` at :data:`EQUAL_BUDGET` labels, None when the run did not use that budget (smoke)."""
    where = np.flatnonzero(np.asarray(result["budget_labels"]) == EQUAL_BUDGET)
    return float(np.asarray(result[key])[where[0]]) if where.size else None


def _matched(key: str) -> Callable[[dict], float | None]:
    """``result[key]`` of the matched runs (runners._dagger_matched_runs), None unless they ran at :data:`EQUAL_BUDGET`."""
    return lambda r: float(r[key]) if r.get("matched_budget") == EQUAL_BUDGET else None


def _matched_claims() -> list[Claim]:
    """DAgger against cloning where what is equal is exact: the distinct labels, or demonstrations that slip."""
    b = EQUAL_BUDGET
    texts = {
        "matched_labels": (
            "Matched comparison: distinct expert labels each learner holds (cloning's, at a budget of {b})",
            "Сравнение с уравненными метками: различных меток эксперта у каждого ученика (столько у клонирования при бюджете {b})",
        ),
        "matched_bc_success": (
            "Behavior cloning with those distinct labels: greedy success rate",
            "Клонирование поведения с этими различными метками: доля успехов жадной политики",
        ),
        "matched_dagger_success": (
            "DAgger with as many distinct labels as cloning: greedy success rate",
            "DAgger с тем же числом различных меток, что у клонирования: доля успехов жадной политики",
        ),
        "slipped_bc_labels": (
            "Slipped demonstrations, budget {b}: distinct labels cloning holds",
            "Демонстрации с проскальзыванием, бюджет {b}: различных меток у клонирования",
        ),
        "slipped_dagger_labels": (
            "Slipped demonstrations, budget {b}: distinct labels DAgger holds",
            "Демонстрации с проскальзыванием, бюджет {b}: различных меток у DAgger",
        ),
        "slipped_bc_success": (
            "Behavior cloning on demonstrations that slip as the learner does, budget {b}: greedy success rate",
            "Клонирование поведения на демонстрациях с тем же проскальзыванием, что у ученика, бюджет {b}: доля успехов",
        ),
        "slipped_dagger_success": (
            "DAgger starting from demonstrations that slip, budget {b}: greedy success rate",
            "DAgger, начатый с демонстраций с проскальзыванием, бюджет {b}: доля успехов",
        ),
    }
    return [
        Claim(f"dagger.{key}", "dagger", {"en": en.format(b=b), "ru": ru.format(b=b)}, _matched(key), 0 if key.endswith("labels") else 3)
        for key, (en, ru) in texts.items()
    ]


def _build_claims() -> list[Claim]:
    c = [
        Claim(
            "dagger.bc_success",
            "dagger",
            {
                "en": "Behavior cloning (DAgger round 0): greedy success rate",
                "ru": "Клонирование поведения (раунд 0 DAgger): доля успехов жадной политики",
            },
            lambda r: float(r["success_rate"][0]),
        ),
        Claim(
            "dagger.bc_labels",
            "dagger",
            {
                "en": "Behavior cloning (DAgger round 0): expert labels it trains on",
                "ru": "Клонирование поведения (раунд 0 DAgger): число меток эксперта в обучении",
            },
            lambda r: float(r["dataset_size"][0]),
            0,
        ),
        Claim(
            "dagger.dagger_success",
            "dagger",
            {"en": "DAgger, final round: greedy success rate", "ru": "DAgger, последний раунд: доля успехов жадной политики"},
            lambda r: float(r["success_rate"][-1]),
        ),
        Claim(
            "dagger.dagger_labels",
            "dagger",
            {"en": "DAgger, final round: expert labels it trains on", "ru": "DAgger, последний раунд: число меток эксперта в обучении"},
            lambda r: float(r["dataset_size"][-1]),
            0,
        ),
        Claim(
            "dagger.equal_budget_labels",
            "dagger",
            {
                "en": "Equal-budget comparison: the label budget of each learner",
                "ru": "Сравнение при равном бюджете: бюджет меток эксперта у каждого ученика",
            },
            lambda r: _at_budget(r, "budget_labels"),
            0,
        ),
        Claim(
            "dagger.bc_equal_budget_labels",
            "dagger",
            {
                "en": f"Behavior cloning at a budget of {EQUAL_BUDGET} labels: distinct states its demonstrations hold",
                "ru": f"Клонирование поведения при бюджете {EQUAL_BUDGET} меток: различных состояний в его демонстрациях",
            },
            lambda r: _at_budget(r, "budget_bc_labels"),
            0,
        ),
        Claim(
            "dagger.bc_equal_budget_success",
            "dagger",
            {
                "en": f"Behavior cloning at a budget of {EQUAL_BUDGET} expert labels (larger grid): greedy success rate",
                "ru": f"Клонирование поведения при бюджете {EQUAL_BUDGET} меток эксперта (сетка крупнее): доля успехов",
            },
            lambda r: _at_budget(r, "budget_bc_success"),
        ),
        Claim(
            "dagger.dagger_equal_budget_success",
            "dagger",
            {
                "en": f"DAgger at a budget of {EQUAL_BUDGET} expert labels (larger grid): greedy success rate",
                "ru": f"DAgger при бюджете {EQUAL_BUDGET} меток эксперта (сетка крупнее): доля успехов",
            },
            lambda r: _at_budget(r, "budget_dagger_success"),
        ),
        Claim(
            "dagger.equal_budget_expert_success",
            "dagger",
            {
                "en": "The expert's own success in the label-budget setting (the ceiling)",
                "ru": "Успех самого эксперта в постановке с бюджетом меток (потолок)",
            },
            lambda r: float(r["budget_expert_success"]),
        ),
        Claim(
            "dagger.bc_equal_budget_unseen_share",
            "dagger",
            {
                "en": f"Behavior cloning at {EQUAL_BUDGET} labels: share of its own visits to states absent from its labels",
                "ru": f"Клонирование поведения при {EQUAL_BUDGET} метках: доля его посещений состояний, которых нет среди его меток",
            },
            lambda r: _at_budget(r, "budget_bc_unseen_share"),
        ),
        Claim(
            "dagger.dagger_equal_budget_unseen_share",
            "dagger",
            {
                "en": f"DAgger at {EQUAL_BUDGET} labels: share of its own visits to states absent from its labels",
                "ru": f"DAgger при {EQUAL_BUDGET} метках: доля его посещений состояний, которых нет среди его меток",
            },
            lambda r: _at_budget(r, "budget_dagger_unseen_share"),
        ),
        Claim(
            "dagger.bc_equal_budget_error_unseen",
            "dagger",
            {
                "en": f"Behavior cloning at {EQUAL_BUDGET} labels: share of non-optimal actions on its visits to unlabeled states",
                "ru": (
                    f"Клонирование поведения при {EQUAL_BUDGET} метках: доля неоптимальных действий при посещениях неразмеченных состояний"
                ),
            },
            lambda r: _at_budget(r, "budget_bc_error_unseen"),
        ),
        Claim(
            "dagger.bc_equal_budget_error_seen",
            "dagger",
            {
                "en": f"Behavior cloning at {EQUAL_BUDGET} labels: share of non-optimal actions on its visits to labeled states",
                "ru": f"Клонирование поведения при {EQUAL_BUDGET} метках: доля неоптимальных действий при посещениях размеченных состояний",
            },
            lambda r: _at_budget(r, "budget_bc_error_seen"),
        ),
        Claim(
            "dagger.dagger_equal_budget_labels",
            "dagger",
            {
                "en": f"DAgger at a budget of {EQUAL_BUDGET} labels: distinct states it holds labels for",
                "ru": f"DAgger при бюджете {EQUAL_BUDGET} меток: различных состояний с метками",
            },
            lambda r: _at_budget(r, "budget_dagger_labels"),
            0,
        ),
        *_matched_claims(),
        Claim(
            "dqn.dqn_success",
            "dqn",
            {"en": "DQN: greedy evaluation success rate after training", "ru": "DQN: доля успехов жадной политики после обучения"},
            lambda r: float(r["dqn_eval_success"]),
        ),
        Claim(
            "dqn.double_success",
            "dqn",
            {
                "en": "Double DQN: greedy evaluation success rate after training",
                "ru": "Double DQN: доля успехов жадной политики после обучения",
            },
            lambda r: float(r["double_eval_success"]),
        ),
        Claim(
            "dqn.dqn_overestimation_mean",
            "dqn",
            {
                "en": "DQN: learned minus exact Q of the greedy action, mean over training checkpoints",
                "ru": "DQN: выученное минус точное Q жадного действия, среднее по контрольным точкам обучения",
            },
            _series_mean("dqn_overestimation"),
        ),
        Claim(
            "dqn.double_overestimation_mean",
            "dqn",
            {
                "en": "Double DQN: learned minus exact Q of the greedy action, mean over training checkpoints",
                "ru": "Double DQN: выученное минус точное Q жадного действия, среднее по контрольным точкам обучения",
            },
            _series_mean("double_overestimation"),
        ),
        Claim(
            "dqn.dqn_overestimation_final",
            "dqn",
            {
                "en": "DQN: learned minus exact Q of the greedy action at the end of training",
                "ru": "DQN: выученное минус точное Q жадного действия в конце обучения",
            },
            _series_last("dqn_overestimation"),
        ),
        Claim(
            "dqn.double_overestimation_final",
            "dqn",
            {
                "en": "Double DQN: learned minus exact Q of the greedy action at the end of training",
                "ru": "Double DQN: выученное минус точное Q жадного действия в конце обучения",
            },
            _series_last("double_overestimation"),
        ),
        Claim(
            "log.mean_return",
            "log",
            {"en": "The fixed log: mean episode return", "ru": "Фиксированный журнал: средняя отдача за эпизод"},
            lambda r: float(r["mean_return"]),
        ),
    ]
    offline_texts = {
        "return": {
            "en": "Offline, {name}: mean return of the greedy policy in the simulator",
            "ru": "Офлайн, {name}: средняя отдача жадной политики в симуляторе",
        },
        "success": {
            "en": "Offline, {name}: success rate of the greedy policy in the simulator",
            "ru": "Офлайн, {name}: доля успехов жадной политики в симуляторе",
        },
        "greedy_q_learned": {
            "en": "Offline, {name}: learned Q of its greedy action, mean over the log's states",
            "ru": "Офлайн, {name}: выученное Q жадного действия, среднее по состояниям журнала",
        },
        "greedy_value_true": {
            "en": "Offline, {name}: true value of the same policy (exact, from the simulator's model), mean over the log's states",
            "ru": "Офлайн, {name}: истинная ценность той же политики (точно, по модели симулятора), среднее по состояниям журнала",
        },
        "greedy_value_fqe": {
            "en": "Offline, {name}: FQE's value of the same policy, mean over the log's states",
            "ru": "Офлайн, {name}: оценка FQE ценности той же политики, среднее по состояниям журнала",
        },
        "logged_pair_share": {
            "en": "Offline, {name}: share of the log's states whose greedy action the log holds for that state",
            "ru": "Офлайн, {name}: доля состояний журнала, где жадное действие записано в журнале",
        },
        "q_logged_error": {
            "en": "Offline, {name}: learned minus true Q on the (state, action) pairs the log holds",
            "ru": "Офлайн, {name}: выученное минус истинное Q на парах (состояние, действие) из журнала",
        },
        "q_unlogged_error": {
            "en": "Offline, {name}: learned minus true Q on the actions the log never shows in a logged state",
            "ru": "Офлайн, {name}: выученное минус истинное Q на действиях, которых журнал в этом состоянии не содержит",
        },
        "above_max_share": {
            "en": "Offline, {name}: share of the log's states whose largest learned Q exceeds the largest possible return",
            "ru": "Офлайн, {name}: доля состояний журнала, где наибольшее выученное Q выше наибольшей возможной отдачи",
        },
        "replay_return": {
            "en": "Offline on online DQN's replay buffer, {name}: mean return of the greedy policy (exact)",
            "ru": "Офлайн на буфере воспроизведения онлайн-DQN, {name}: средняя отдача жадной политики (точно)",
        },
        "replay_success": {
            "en": "Offline on online DQN's replay buffer, {name}: success rate of the greedy policy (exact)",
            "ru": "Офлайн на буфере воспроизведения онлайн-DQN, {name}: доля успехов жадной политики (точно)",
        },
    }
    keys = {
        "return": "mean_return",
        "success": "success_rate",
        "greedy_q_learned": "greedy_q_mean",
        "greedy_value_true": "greedy_value_true",
        "greedy_value_fqe": "fqe_logged_value",
        "logged_pair_share": "logged_pair_share",
        "q_logged_error": "q_logged_error",
        "q_unlogged_error": "q_unlogged_error",
        "above_max_share": "above_max_share",
        "replay_return": "replay_mean_return",
        "replay_success": "replay_success_rate",
    }
    logs = {
        "log_goal_share": (
            "the designed log (expert 30 %, key-forgetting planner 55 %, random 15 %)",
            "спроектированный журнал (эксперт 30 %, забывающий ключ планировщик 55 %, случайные действия 15 %)",
        ),
        "replay_log_goal_share": (
            "online DQN's replay buffer (warm start, then exploration to good play)",
            "буфер воспроизведения онлайн-DQN (разогрев, затем от исследования к хорошей игре)",
        ),
    }
    for key, (en, ru) in logs.items():
        c.append(
            Claim(
                f"offline.{key}",
                "offline",
                {
                    "en": f"Offline log, {en}: share of its episodes that reach the goal",
                    "ru": f"Офлайн-журнал, {ru}: доля эпизодов, дошедших до цели",
                },
                lambda r, key=key: float(r[key]) if key in r else None,
            )
        )
    c.append(
        Claim(
            "offline.replay_log_mean_return",
            "offline",
            {
                "en": "Online DQN's replay buffer as a log: mean episode return",
                "ru": "Буфер воспроизведения онлайн-DQN как журнал: средняя отдача за эпизод",
            },
            lambda r: float(r["replay_log_mean_return"]) if "replay_log_mean_return" in r else None,
        )
    )
    c.append(
        Claim(
            "offline.replay_log_transitions",
            "offline",
            {
                "en": "Online DQN's replay buffer as a log: transitions",
                "ru": "Буфер воспроизведения онлайн-DQN как журнал: число переходов",
            },
            lambda r: float(r["replay_log_transitions"]) if "replay_log_transitions" in r else None,
            0,
        )
    )
    c.append(
        Claim(
            "offline.return_optimal",
            "offline",
            {
                "en": "Offline: the expert's (optimal) mean return over the start cells (exact)",
                "ru": "Офлайн: средняя (оптимальная) отдача эксперта по стартовым клеткам (точно)",
            },
            lambda r: float(r["optimal_return"]),
        )
    )
    for what, template in offline_texts.items():
        for m in METHOD_NAMES:
            if what in Q_ONLY and m == "behavior cloning":
                continue  # BC learns a policy, no Q
            c.append(Claim(f"offline.{what}.{_slug(m)}", "offline", _texts(template, m), _indexed(keys[what], "method_names", m)))
    fqe_texts = {
        "estimate": (
            {
                "en": "FQE, {name}: estimated discounted value over the log's start cells",
                "ru": "FQE, {name}: оценка дисконтированной ценности по стартовым клеткам журнала",
            },
            "fqe_values",
        ),
        "simulator": (
            {
                "en": "FQE, {name}: the simulator's discounted value over the same start cells",
                "ru": "FQE, {name}: дисконтированная ценность в симуляторе по тем же стартовым клеткам",
            },
            "simulated_values",
        ),
        "abs_error": ({"en": "FQE, {name}: absolute error of the estimate", "ru": "FQE, {name}: абсолютная ошибка оценки"}, "abs_error"),
    }
    for what, (template, key) in fqe_texts.items():
        for m in METHOD_NAMES:
            c.append(Claim(f"fqe.{what}.{_slug(m)}", "fqe", _texts(template, m), _indexed(key, "fqe_names", m)))
    for request in sorted(set(PROFILE_PARAMS["full"].dt.target_returns) | set(PROFILE_PARAMS["smoke"].dt.target_returns)):
        c.append(
            Claim(
                f"dt.achieved.{request:.2f}",
                "dt",
                _texts(
                    {
                        "en": "Decision Transformer: mean return achieved when {request} is requested",
                        "ru": "Decision Transformer: средняя отдача при запросе {request}",
                    },
                    request=f"{request:.2f}",
                ),
                _at_request(request),
            )
        )
    group_text = {
        "trap": ("that ended in a trap", "которые закончились в ловушке"),
        "timeout": ("cut by the time limit", "усечённых лимитом шагов"),
        "goal": ("that reached the goal", "которые дошли до цели"),
    }
    for group in DT_LOG_GROUPS:
        en, ru = group_text[group]
        c += [
            Claim(
                f"dt.log_count.{group}",
                "dt",
                {"en": f"Decision Transformer log: episodes {en}", "ru": f"Журнал Decision Transformer: эпизодов, {ru}"},
                _log_group(group, "count"),
                0,
            ),
            Claim(
                f"dt.log_share.{group}",
                "dt",
                {"en": f"Decision Transformer log: share of episodes {en}", "ru": f"Журнал Decision Transformer: доля эпизодов, {ru}"},
                _log_group(group, "share"),
            ),
        ]
    c += [
        Claim(
            "dt.max_standard_error",
            "dt",
            {
                "en": (
                    "Decision Transformer: largest standard error of a request's mean return "
                    "(sample sd divided by the square root of the episode count; "
                    "the largest over the requests)"
                ),
                "ru": (
                    "Decision Transformer: наибольшая стандартная ошибка средней отдачи запроса "
                    "(выборочное ст. откл., делённое на корень из числа эпизодов; наибольшая по запросам)"
                ),
            },
            _largest_standard_error,
        ),
        Claim(
            "dt.evaluation_episodes",
            "dt",
            {"en": "Decision Transformer: evaluation episodes per request", "ru": "Decision Transformer: эпизодов оценки на каждый запрос"},
            lambda r: float(r["evaluation_episodes"]) if "evaluation_episodes" in r else None,
            0,
        ),
        Claim(
            "dt.log_return_max",
            "dt",
            {"en": "Decision Transformer log: best episode return", "ru": "Журнал Decision Transformer: лучшая отдача эпизода"},
            lambda r: float(r["data_return_range"][1]),
        ),
    ]
    for what, template in (
        (
            "exact_match",
            {
                "en": "Token level, {name}: share of the training prompts answered exactly",
                "ru": "Уровень токенов, {name}: доля обучающих запросов с точным ответом",
            },
        ),
        (
            "mean_reward",
            {
                "en": "Token level, {name}: mean reward of the greedy response to the training prompts",
                "ru": "Уровень токенов, {name}: средняя награда жадного ответа на обучающие запросы",
            },
        ),
        (
            "heldout_exact_match",
            {
                "en": "Token level, {name}: share of the held-out prompts (never in the log) answered exactly",
                "ru": "Уровень токенов, {name}: доля отложенных запросов (их нет в журнале) с точным ответом",
            },
        ),
        (
            "heldout_mean_reward",
            {
                "en": "Token level, {name}: mean reward of the greedy response to the held-out prompts",
                "ru": "Уровень токенов, {name}: средняя награда жадного ответа на отложенные запросы",
            },
        ),
    ):
        for m in LANGUAGE_METHODS:
            c.append(Claim(f"language.{what}.{m}", "language", _texts(template, m), _indexed(what, "method_names", m)))
    return c


#: Every claim, in report order. Append a :class:`Claim` to add one.
CLAIMS: list[Claim] = _build_claims()

#: The claims the README table shows (the report and claims.json hold all of them).
README_CLAIMS: tuple[str, ...] = (
    "dagger.bc_success",
    "dagger.bc_labels",
    "dagger.dagger_success",
    "dagger.dagger_labels",
    "dagger.bc_equal_budget_success",
    "dagger.dagger_equal_budget_success",
    "dagger.equal_budget_expert_success",
    "dagger.bc_equal_budget_unseen_share",
    "dagger.dagger_equal_budget_unseen_share",
    "dagger.bc_equal_budget_error_unseen",
    "dagger.bc_equal_budget_error_seen",
    "dqn.dqn_success",
    "dqn.double_success",
    "dqn.dqn_overestimation_mean",
    "dqn.double_overestimation_mean",
    *(f"offline.return.{_slug(m)}" for m in ("behavior cloning", "naive DQN", "restricted DQN", "CQL", "IQL")),
    *(f"offline.greedy_q_learned.{_slug(m)}" for m in ("naive DQN", "restricted DQN", "CQL", "IQL")),
    *(f"offline.greedy_value_true.{_slug(m)}" for m in ("naive DQN", "restricted DQN", "CQL", "IQL")),
    *(f"fqe.abs_error.{_slug(m)}" for m in ("behavior cloning", "naive DQN", "restricted DQN", "CQL", "IQL")),
    "dt.log_count.trap",
    "dt.log_count.timeout",
    "dt.log_count.goal",
    "dt.max_standard_error",
    "dt.achieved.-1.00",
    "dt.achieved.0.00",
    "dt.achieved.0.25",
    "dt.achieved.0.50",
    "dt.achieved.0.75",
    "dt.achieved.2.00",
    "language.exact_match.behavior_cloning",
    "language.exact_match.return_weighted_bc",
    "language.exact_match.advantage_weighted_bc",
    "language.exact_match.ilql_like",
    "language.heldout_exact_match.behavior_cloning",
    "language.heldout_exact_match.return_weighted_bc",
    "language.heldout_exact_match.advantage_weighted_bc",
    "language.heldout_exact_match.ilql_like",
)


def digits_of(claim_id: str) -> int:
    """The decimals a claim is shown with (3 for an id this registry does not know)."""
    return _DIGITS.get(claim_id, 3)


_DIGITS = {c.id: c.digits for c in CLAIMS}
