"""The lab's comparisons: which claims are compared, their paired intervals, their words.

A *comparison* is the difference of two claims measured on the same seeds (``a - b``),
or one claim against zero (``b`` is None). :func:`evaluate_comparisons` turns the
per-seed values of ``claims.json`` into :func:`reference_impl.stats.paired_difference`
entries; :func:`phrase` writes one as a sentence fragment whose last words are the
interval's verdict ("ahead", "behind", "no detectable difference"), in English or
Russian. Every comparative sentence of the report and the README is built from these
(see :mod:`reference_impl.lab.caveats`), so its wording cannot disagree with its numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reference_impl.course_run import claim_bounds, clip_to_bounds
from reference_impl.lab.labels import display_name, labels_for, method_slug
from reference_impl.language_task import LANGUAGE_METHODS
from reference_impl.stats import paired_difference

__all__ = ["Comparison", "COMPARISONS", "OFFLINE_VALUE_METHODS", "evaluate_comparisons", "phrase", "comparisons_table"]

#: The value-based offline learners (everything but behavior cloning), as the lab names them.
OFFLINE_VALUE_METHODS = ("naive DQN", "restricted DQN", "CQL", "IQL")


_slug = method_slug  # the claim ids' spelling of a method name


@dataclass(frozen=True)
class Comparison:
    """``a - b`` over paired seeds (``b`` None: ``a`` against zero), with its text in both languages."""

    id: str
    a: str
    b: str | None
    text: Mapping[str, str]
    #: "order" (ahead / behind: one method against another) or "level" (above / below zero)
    words: str = "order"


def _build() -> list[Comparison]:
    c = [
        Comparison(
            "dagger.final_vs_round0",
            "dagger.dagger_success",
            "dagger.bc_success",
            {
                "en": "DAgger's final round minus behavior cloning (round 0), success rate (unequal label counts)",
                "ru": "последний раунд DAgger минус клонирование поведения (раунд 0), доля успехов (число меток разное)",
            },
        ),
        Comparison(
            "dagger.equal_budget",
            "dagger.dagger_equal_budget_success",
            "dagger.bc_equal_budget_success",
            {
                "en": (
                    "DAgger minus behavior cloning at an equal label budget (cloning's clean demonstrations hold fewer "
                    "distinct labels), success rate"
                ),
                "ru": (
                    "DAgger минус клонирование поведения при равном бюджете меток (в чистых демонстрациях клонирования "
                    "различных меток меньше), доля успехов"
                ),
            },
        ),
        Comparison(
            "dagger.matched_distinct_labels",
            "dagger.matched_dagger_success",
            "dagger.matched_bc_success",
            {
                "en": "DAgger minus behavior cloning, both with the same number of distinct expert labels, success rate",
                "ru": "DAgger минус клонирование поведения при одинаковом числе различных меток эксперта, доля успехов",
            },
        ),
        Comparison(
            "dagger.slipped_demonstrations",
            "dagger.slipped_dagger_success",
            "dagger.slipped_bc_success",
            {
                "en": "DAgger minus behavior cloning when the demonstrations slip as the learner does, success rate",
                "ru": "DAgger минус клонирование поведения, когда демонстрации проскальзывают так же, как ученик, доля успехов",
            },
        ),
        Comparison(
            "dagger.equal_budget_unseen_share",
            "dagger.dagger_equal_budget_unseen_share",
            "dagger.bc_equal_budget_unseen_share",
            {
                "en": (
                    "DAgger minus behavior cloning at an equal label budget, share of the learner's own visits to "
                    "states absent from its labels"
                ),
                "ru": (
                    "DAgger минус клонирование поведения при равном бюджете меток, доля посещений ученика в "
                    "состояниях, которых нет среди его меток"
                ),
            },
            words="level",
        ),
        Comparison(
            "dagger.bc_error_unseen_vs_seen",
            "dagger.bc_equal_budget_error_unseen",
            "dagger.bc_equal_budget_error_seen",
            {
                "en": "Behavior cloning, share of non-optimal actions on unlabeled minus on labeled states",
                "ru": "Клонирование поведения, доля неоптимальных действий в неразмеченных минус в размеченных состояниях",
            },
            words="level",
        ),
        Comparison(
            "dqn.double_vs_dqn",
            "dqn.double_success",
            "dqn.dqn_success",
            {
                "en": "Double DQN minus DQN, greedy success rate after training",
                "ru": "Double DQN минус DQN, доля успехов жадной политики после обучения",
            },
        ),
        Comparison(
            "dqn.double_vs_dqn_overestimation_mean",
            "dqn.double_overestimation_mean",
            "dqn.dqn_overestimation_mean",
            {
                "en": "Double DQN minus DQN, overestimation of the greedy action averaged over training",
                "ru": "Double DQN минус DQN, завышение оценки жадного действия в среднем за обучение",
            },
            words="level",
        ),
        Comparison(
            "dqn.double_vs_dqn_overestimation_final",
            "dqn.double_overestimation_final",
            "dqn.dqn_overestimation_final",
            {
                "en": "Double DQN minus DQN, overestimation of the greedy action at the end of training",
                "ru": "Double DQN минус DQN, завышение оценки жадного действия в конце обучения",
            },
            words="level",
        ),
    ]
    en, ru = labels_for("en"), labels_for("ru")
    for m in OFFLINE_VALUE_METHODS:
        c.append(
            Comparison(
                f"offline.vs_bc.{_slug(m)}",
                f"offline.return.{_slug(m)}",
                "offline.return.behavior_cloning",
                {
                    "en": f"Offline, {display_name(en, m)} minus behavior cloning, return of the greedy policy",
                    "ru": f"Офлайн, {display_name(ru, m)} минус клонирование поведения, отдача жадной политики",
                },
            )
        )
    for m in OFFLINE_VALUE_METHODS:
        c.append(
            Comparison(
                f"offline.replay_vs_bc.{_slug(m)}",
                f"offline.replay_return.{_slug(m)}",
                "offline.replay_return.behavior_cloning",
                {
                    "en": f"Offline on online DQN's replay buffer, {display_name(en, m)} minus behavior cloning, return",
                    "ru": f"Офлайн на буфере воспроизведения онлайн-DQN, {display_name(ru, m)} минус клонирование поведения, отдача",
                },
            )
        )
    for m in OFFLINE_VALUE_METHODS:
        c.append(
            Comparison(
                f"offline.unlogged_overestimation.{_slug(m)}",
                f"offline.q_unlogged_error.{_slug(m)}",
                None,
                {
                    "en": f"Offline, {display_name(en, m)}: learned minus true Q on actions the log never shows in a state, against zero",
                    "ru": f"Офлайн, {display_name(ru, m)}: выученное минус истинное Q на действиях, которых нет в журнале, против нуля",
                },
                words="level",
            )
        )
    c += [
        Comparison(
            "offline.cql_level",
            "offline.greedy_q_learned.cql",
            "offline.greedy_value_true.cql",
            {
                "en": "Offline, CQL: learned value of its greedy action minus the true value of its policy",
                "ru": "Офлайн, CQL: выученная ценность жадного действия минус истинная ценность его политики",
            },
            words="level",
        ),
        Comparison(
            "fqe.naive_vs_iql_error",
            "fqe.abs_error.naive_dqn",
            "fqe.abs_error.iql",
            {
                "en": "FQE's absolute error, naive DQN's policy minus IQL's",
                "ru": "абсолютная ошибка FQE, политика наивного DQN минус политика IQL",
            },
        ),
        Comparison(
            "dt.saturation",
            "dt.achieved.2.00",
            "dt.achieved.0.75",
            {
                "en": (
                    "Decision Transformer, achieved return: the highest request (2.00, far above any logged "
                    "return) minus the highest request inside the log's range (0.75)"
                ),
                "ru": (
                    "Decision Transformer, полученная отдача: самый высокий запрос (2.00, намного выше "
                    "любой отдачи журнала) минус наибольший запрос внутри диапазона журнала (0.75)"
                ),
            },
        ),
    ]
    c += _language_comparisons(en, ru)
    return c


#: The token-level differences that separate what rewards, the critic's weights and its value heads give:
#: (id, a, b, English, Russian), each measured on the training prompts and on the held-out ones.
_LANGUAGE_PAIRS = (
    (
        "rwbc_vs_bc",
        "return_weighted_bc",
        "behavior_cloning",
        "return-weighted BC (rewards, no critic) minus behavior cloning: what weighting by rewards gives",
        "клонирование с весами по отдаче (награды без критика) минус клонирование поведения: что даёт взвешивание по наградам",
    ),
    (
        "awbc_vs_rwbc",
        "advantage_weighted_bc",
        "return_weighted_bc",
        "advantage-weighted BC minus return-weighted BC: what the critic adds to the weights",
        "клонирование с весами преимущества минус клонирование с весами по отдаче: что критик добавляет к весам",
    ),
    (
        "ilql_vs_bc",
        "ilql_like",
        "behavior_cloning",
        "ILQL-like minus behavior cloning: what the value heads add at decoding to the cloned policy",
        "ILQL-подобный метод минус клонирование поведения: что головы ценности добавляют при декодировании к клонированной политике",
    ),
    (
        "ilql_vs_rwbc",
        "ilql_like",
        "return_weighted_bc",
        "ILQL-like minus return-weighted BC: the critic's value heads at decoding against rewards alone",
        "ILQL-подобный метод минус клонирование с весами по отдаче: головы ценности критика при декодировании против одних наград",
    ),
    (
        "ilql_vs_awbc",
        "ilql_like",
        "advantage_weighted_bc",
        "ILQL-like minus advantage-weighted BC: value heads at decoding against the critic's weights",
        "ILQL-подобный метод минус клонирование с весами преимущества: головы ценности при декодировании против весов критика",
    ),
)


def _language_comparisons(en: Mapping[str, str], ru: Mapping[str, str]) -> list[Comparison]:
    """:data:`_LANGUAGE_PAIRS` on the training prompts (``language.<id>``, exact match) and
    on the held-out prompts (``language.heldout.<id>``), then each method's held-out
    minus training exact match (``language.heldout_vs_train.<method>``)."""
    c = [
        Comparison(
            f"language.{cid}",
            f"language.exact_match.{a}",
            f"language.exact_match.{b}",
            {
                "en": f"Token level, {text_en}, exact match on the training prompts",
                "ru": f"Уровень токенов, {text_ru}, точное совпадение на обучающих запросах",
            },
        )
        for cid, a, b, text_en, text_ru in _LANGUAGE_PAIRS
    ]
    c += [
        Comparison(
            f"language.heldout.{cid}",
            f"language.heldout_exact_match.{a}",
            f"language.heldout_exact_match.{b}",
            {
                "en": f"Token level, {text_en}, exact match on the held-out prompts",
                "ru": f"Уровень токенов, {text_ru}, точное совпадение на отложенных запросах",
            },
        )
        for cid, a, b, text_en, text_ru in _LANGUAGE_PAIRS
    ]
    c += [
        Comparison(
            f"language.heldout_vs_train.{m}",
            f"language.heldout_exact_match.{m}",
            f"language.exact_match.{m}",
            {
                "en": f"Token level, {display_name(en, m)}: exact match on the held-out minus the training prompts",
                "ru": f"Уровень токенов, {display_name(ru, m)}: точное совпадение на отложенных минус на обучающих запросах",
            },
            words="level",
        )
        for m in LANGUAGE_METHODS
    ]
    return c


#: Every comparison, in report order.
COMPARISONS: list[Comparison] = _build()


def evaluate_comparisons(claims: Mapping[str, dict], comparisons: Sequence[Comparison] | None = None) -> dict[str, dict]:
    """``{id: paired_difference(...) + {"a", "b", "text"}}`` for the comparisons whose claims
    are present with at least two seeds (a single-seed run compares nothing)."""
    out = {}
    for comp in COMPARISONS if comparisons is None else comparisons:
        if comp.a not in claims or (comp.b is not None and comp.b not in claims):
            continue
        a = claims[comp.a]["per_seed"]
        b = [0.0] * len(a) if comp.b is None else claims[comp.b]["per_seed"]
        if len(a) < 2:
            continue
        entry = {**paired_difference(a, b), "a": comp.a, "b": comp.b, "words": comp.words, "text": dict(comp.text)}
        # Against zero the interval is a one-sample one, not a paired difference: say so.
        entry["paired"] = comp.b is not None
        entry["low"], entry["high"] = clip_to_bounds(entry["low"], entry["high"], difference_bounds(comp))
        out[comp.id] = entry
    return out


def difference_bounds(comp: Comparison) -> tuple[float, float] | None:
    """The range ``a - b`` can take: (-1, 1) for two shares, (0, 1) for a share against zero, else None."""
    a = claim_bounds(comp.a)
    if a is None:
        return None
    if comp.b is None:
        return a
    b = claim_bounds(comp.b)
    return None if b is None else (a[0] - b[1], a[1] - b[0])


def phrase(entry: Mapping, lang: str, digits: int = 2) -> str:
    """``+0.61 (95 % CI +0.40 to +0.82, 10 paired seeds): ahead``, in ``lang``; the last
    words are the verdict of the interval, from the label table. Identical results on
    every seed are named as a tie instead of a zero-width interval."""
    labels = labels_for(lang)
    if entry["low"] == entry["high"] == 0.0:
        return labels["report.comparison_tie"].format(n=entry["n_seeds"])
    return labels["report.comparison" if entry.get("paired", True) else "report.comparison_one_sample"].format(
        effect=f"{entry['effect']:+.{digits}f}",
        low=f"{entry['low']:+.{digits}f}",
        high=f"{entry['high']:+.{digits}f}",
        n=entry["n_seeds"],
        verdict=labels[f"report.verdict.{entry.get('words', 'order')}.{entry['verdict']}"],
    )


def comparisons_table(comparisons: Mapping[str, dict], lang: str) -> list[str]:
    """Markdown table: id, what is compared, the difference with its interval and verdict."""
    labels = labels_for(lang)
    rows = [f"| {labels['report.claim_id']} | {labels['report.compared']} | {labels['report.difference']} |", "|---|---|---|"]
    rows += [f"| `{cid}` | {entry['text'][lang]} | {phrase(entry, lang)} |" for cid, entry in comparisons.items()]
    return rows


def compact_phrase(entry: Mapping, lang: str, digits: int = 2) -> str:
    """``+0.16 [+0.15, +0.18]: ahead``: the paired difference, its 95 % interval and the verdict
    the interval allows, in ``lang`` (a table cell; :func:`phrase` is the sentence form)."""
    labels = labels_for(lang)
    if entry["low"] == entry["high"] == 0.0:
        return labels["report.comparison_tie"].format(n=entry["n_seeds"])
    verdict = labels[f"report.verdict.{entry.get('words', 'order')}.{entry['verdict']}"]
    return f"{entry['effect']:+.{digits}f} [{entry['low']:+.{digits}f}, {entry['high']:+.{digits}f}]: {verdict}"
