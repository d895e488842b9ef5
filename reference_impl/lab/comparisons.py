"""The lab's comparisons: which claims are compared, their paired intervals, their words.

A *comparison* is the difference of two claims measured on the same seeds (``a - b``),
or one claim against zero (``b`` is None). :func:`evaluate_comparisons` turns the
per-seed values of ``claims.json`` into :func:`reference_impl.stats.paired_difference`
entries; :func:`phrase` writes one as a sentence fragment whose last words are the
interval's verdict ("ahead", "behind", "no detectable difference"), in English or
Russian. Every comparative sentence of the report and the README is built from these
(see :mod:`reference_impl.lab.caveats`), so its wording cannot disagree with its numbers.
The comparisons are data: the tables below name the claims compared, the language files
(``text/<lang>.toml``: ``comparisons``, ``comparison_families``, ``language_pairs``) their text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reference_impl.course_run import claim_bounds, clip_to_bounds
from reference_impl.lab.labels import LANGUAGES, display_name, labels_for, method_slug
from reference_impl.lab.text import language_text
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


#: The comparisons stated once before the offline methods' (id, a, b, words); the text is
#: ``comparisons.<id>`` of the language files.
_SINGLE_FIRST: tuple[tuple[str, str, str | None, str], ...] = (
    ("dagger.final_vs_round0", "dagger.dagger_success", "dagger.bc_success", "order"),
    ("dagger.equal_budget", "dagger.dagger_equal_budget_success", "dagger.bc_equal_budget_success", "order"),
    ("dagger.matched_distinct_labels", "dagger.matched_dagger_success", "dagger.matched_bc_success", "order"),
    ("dagger.slipped_demonstrations", "dagger.slipped_dagger_success", "dagger.slipped_bc_success", "order"),
    ("dagger.equal_budget_unseen_share", "dagger.dagger_equal_budget_unseen_share", "dagger.bc_equal_budget_unseen_share", "level"),
    ("dagger.bc_error_unseen_vs_seen", "dagger.bc_equal_budget_error_unseen", "dagger.bc_equal_budget_error_seen", "level"),
    ("dqn.double_vs_dqn", "dqn.double_success", "dqn.dqn_success", "order"),
    ("dqn.double_vs_dqn_overestimation_mean", "dqn.double_overestimation_mean", "dqn.dqn_overestimation_mean", "level"),
    ("dqn.double_vs_dqn_overestimation_final", "dqn.double_overestimation_final", "dqn.dqn_overestimation_final", "level"),
)
#: The comparisons stated once after them.
_SINGLE_LAST: tuple[tuple[str, str, str | None, str], ...] = (
    ("offline.cql_level", "offline.greedy_q_learned.cql", "offline.greedy_value_true.cql", "level"),
    ("fqe.naive_vs_iql_error", "fqe.abs_error.naive_dqn", "fqe.abs_error.iql", "order"),
    ("dt.saturation", "dt.achieved.2.00", "dt.achieved.0.75", "order"),
)
#: One comparison per offline value method: family -> (claim family of a, claim of b or None, words);
#: the text is ``comparison_families.<family>``, ``{name}`` being the method's display name.
_OFFLINE_FAMILIES: dict[str, tuple[str, str | None, str]] = {
    "offline.vs_bc": ("offline.return", "offline.return.behavior_cloning", "order"),
    "offline.replay_vs_bc": ("offline.replay_return", "offline.replay_return.behavior_cloning", "order"),
    "offline.unlogged_overestimation": ("offline.q_unlogged_error", None, "level"),
}


def _comparison_text(key: str, table: str = "comparisons", **fields) -> dict[str, str]:
    """The text ``<table>.<key>`` of both languages, filled in with ``fields`` (per language when a dict)."""
    return {
        lang: language_text(lang)[table][key].format(**{k: v[lang] if isinstance(v, Mapping) else v for k, v in fields.items()})
        for lang in LANGUAGES
    }


def _single(rows: tuple[tuple[str, str, str | None, str], ...]) -> list[Comparison]:
    return [Comparison(cid, a, b, _comparison_text(cid), words) for cid, a, b, words in rows]


def _method_name(raw: str) -> dict[str, str]:
    """``raw``'s display name in each language."""
    return {lang: display_name(labels_for(lang), raw) for lang in LANGUAGES}


def _offline_families() -> list[Comparison]:
    return [
        Comparison(
            f"{family}.{_slug(m)}", f"{a}.{_slug(m)}", b, _comparison_text(family, "comparison_families", name=_method_name(m)), words
        )
        for family, (a, b, words) in _OFFLINE_FAMILIES.items()
        for m in OFFLINE_VALUE_METHODS
    ]


def _build() -> list[Comparison]:
    """Every comparison in report order: the tables above, their text from the language files."""
    return [*_single(_SINGLE_FIRST), *_offline_families(), *_single(_SINGLE_LAST), *_language_comparisons()]


#: The token-level differences that separate what rewards, the critic's weights and its value heads give:
#: (id, a, b), each measured on the training prompts and on the held-out ones; what each one measures is
#: ``language_pairs.<id>`` of the language files.
_LANGUAGE_PAIRS = (
    ("rwbc_vs_bc", "return_weighted_bc", "behavior_cloning"),
    ("awbc_vs_rwbc", "advantage_weighted_bc", "return_weighted_bc"),
    ("ilql_vs_bc", "ilql_like", "behavior_cloning"),
    ("ilql_vs_rwbc", "ilql_like", "return_weighted_bc"),
    ("ilql_vs_awbc", "ilql_like", "advantage_weighted_bc"),
)


def _language_pair(cid: str) -> dict[str, str]:
    return {lang: language_text(lang)["language_pairs"][cid] for lang in LANGUAGES}


def _language_comparisons() -> list[Comparison]:
    """:data:`_LANGUAGE_PAIRS` on the training prompts (``language.<id>``, exact match) and
    on the held-out prompts (``language.heldout.<id>``), then each method's held-out
    minus training exact match (``language.heldout_vs_train.<method>``)."""
    c = [
        Comparison(
            f"language{prefix}.{cid}",
            f"language.{claims}.{a}",
            f"language.{claims}.{b}",
            _comparison_text(family, "comparison_families", pair=_language_pair(cid)),
        )
        for prefix, claims, family in (("", "exact_match", "language.train"), (".heldout", "heldout_exact_match", "language.heldout"))
        for cid, a, b in _LANGUAGE_PAIRS
    ]
    c += [
        Comparison(
            f"language.heldout_vs_train.{m}",
            f"language.heldout_exact_match.{m}",
            f"language.exact_match.{m}",
            _comparison_text("language.heldout_vs_train", "comparison_families", name=_method_name(m)),
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
