"""The report's sentences about the numbers ("What the numbers say"), in each language.

Each sentence is a template of :mod:`reference_impl.lab.labels` (``report.caveat_*``) filled
in with claims of ``claims.json`` and with the comparisons of
:mod:`reference_impl.lab.comparisons`. A sentence that compares says so only through a
comparison's :func:`~reference_impl.lab.comparisons.phrase`, whose words are chosen by
the 95 % interval; no sentence counts seeds. Only sentences whose claims are present
are written, so a single-section run gets the sentences of that section.
"""

from __future__ import annotations

from collections.abc import Mapping

from reference_impl.keydoor import KeyDoorGrid
from reference_impl.lab.comparisons import OFFLINE_VALUE_METHODS, evaluate_comparisons, phrase
from reference_impl.lab.labels import display_name, labels_for, method_slug
from reference_impl.lab.number_format import format_listed, format_mean_sd
from reference_impl.lab.profiles import EQUAL_BUDGET
from reference_impl.language_task import HELDOUT_PROMPTS, LANGUAGE_METHODS, BehaviorMix
from reference_impl.offline import METHOD_NAMES
from reference_impl.offline_methods import CQLConfig

__all__ = ["caveats"]


def caveats(claims: Mapping[str, dict], lang: str) -> list[str]:
    """The report's sentences about ``claims`` in ``lang``, each starting with a capital."""
    labels = labels_for(lang)
    compared = evaluate_comparisons(claims)
    out = []
    for write in (_dagger, _dqn, _offline, _replay, _naive, _cql, _fqe, _dt, _language):
        out += write(claims, compared, labels, lang)
    return [s[:1].upper() + s[1:] for s in out]  # a sentence may open with a method's display name


def _ms(claims: Mapping[str, dict], claim_id: str, digits: int = 2) -> str:
    return format_mean_sd(claims[claim_id], digits)


def _has(mapping: Mapping, *ids: str) -> bool:
    return all(i in mapping for i in ids)


def _dagger(claims, compared, labels, lang) -> list[str]:
    out = []
    if _has(compared, "dagger.final_vs_round0") and _has(claims, "dagger.bc_labels", "dagger.dagger_labels"):
        out.append(
            labels["report.caveat_dagger"].format(
                cmp=phrase(compared["dagger.final_vs_round0"], lang),
                bc_labels=format_listed(claims["dagger.bc_labels"], 0),
                dagger_labels=format_listed(claims["dagger.dagger_labels"], 0),
            )
        )
    if _has(compared, "dagger.equal_budget") and _has(claims, "dagger.equal_budget_expert_success"):
        out.append(
            labels["report.caveat_equal_budget"].format(
                budget=EQUAL_BUDGET,
                bc=_ms(claims, "dagger.bc_equal_budget_success"),
                dagger=_ms(claims, "dagger.dagger_equal_budget_success"),
                expert=_ms(claims, "dagger.equal_budget_expert_success"),
                cmp=phrase(compared["dagger.equal_budget"], lang),
            )
        )
    if _has(compared, "dagger.equal_budget_unseen_share", "dagger.bc_error_unseen_vs_seen") and _has(
        claims, "dagger.bc_equal_budget_labels"
    ):
        out.append(
            labels["report.caveat_shift"].format(
                bc_labels=_ms(claims, "dagger.bc_equal_budget_labels", 0),
                bc_unseen=_ms(claims, "dagger.bc_equal_budget_unseen_share"),
                dagger_unseen=_ms(claims, "dagger.dagger_equal_budget_unseen_share"),
                cmp_unseen=phrase(compared["dagger.equal_budget_unseen_share"], lang),
                error_unseen=_ms(claims, "dagger.bc_equal_budget_error_unseen"),
                error_seen=_ms(claims, "dagger.bc_equal_budget_error_seen"),
                cmp_error=phrase(compared["dagger.bc_error_unseen_vs_seen"], lang),
            )
        )
    if _has(compared, "dagger.matched_distinct_labels", "dagger.slipped_demonstrations") and _has(
        claims, "dagger.matched_labels", "dagger.slipped_bc_labels", "dagger.slipped_dagger_labels"
    ):
        out.append(
            labels["report.caveat_matched"].format(
                labels=_ms(claims, "dagger.matched_labels", 0),
                cmp_matched=phrase(compared["dagger.matched_distinct_labels"], lang),
                slipped_bc=_ms(claims, "dagger.slipped_bc_labels", 0),
                slipped_dagger=_ms(claims, "dagger.slipped_dagger_labels", 0),
                cmp_slipped=phrase(compared["dagger.slipped_demonstrations"], lang),
            )
        )
    return out


def _dqn(claims, compared, labels, lang) -> list[str]:
    if not _has(compared, "dqn.double_vs_dqn", "dqn.double_vs_dqn_overestimation_mean", "dqn.double_vs_dqn_overestimation_final"):
        return []
    return [
        labels["report.caveat_dqn"].format(
            dqn=_ms(claims, "dqn.dqn_overestimation_mean", 3),
            double=_ms(claims, "dqn.double_overestimation_mean", 3),
            cmp_mean=phrase(compared["dqn.double_vs_dqn_overestimation_mean"], lang, 3),
            cmp_final=phrase(compared["dqn.double_vs_dqn_overestimation_final"], lang, 3),
            cmp_success=phrase(compared["dqn.double_vs_dqn"], lang),
        )
    ]


def _each_vs_bc(compared, prefix: str, labels, lang) -> str:
    """``IQL +0.74 (…): ahead; …``: every value-based method's ``<prefix>.<method>`` comparison present."""
    ids = [(m, f"{prefix}.{method_slug(m)}") for m in OFFLINE_VALUE_METHODS]
    return "; ".join(f"{display_name(labels, m)} {phrase(compared[cid], lang)}" for m, cid in ids if cid in compared)


def _offline(claims, compared, labels, lang) -> list[str]:
    each = _each_vs_bc(compared, "offline.vs_bc", labels, lang)
    if not each or not _has(claims, "offline.return_optimal"):
        return []
    return [
        labels["report.caveat_bc_offline"].format(
            bc=_ms(claims, "offline.return.behavior_cloning"), optimum=_ms(claims, "offline.return_optimal"), each=each
        )
    ]


def _naive(claims, compared, labels, lang) -> list[str]:
    needed = ("offline.q_logged_error.naive_dqn", "offline.above_max_share.naive_dqn", "offline.greedy_value_true.naive_dqn")
    if not (_has(compared, "offline.unlogged_overestimation.naive_dqn") and _has(claims, *needed)):
        return []

    return [
        labels["report.caveat_naive"].format(
            cmp=phrase(compared["offline.unlogged_overestimation.naive_dqn"], lang),
            logged=_ms(claims, "offline.q_logged_error.naive_dqn"),
            bound=f"{KeyDoorGrid().goal_reward:.2f}",
            above=_ms(claims, "offline.above_max_share.naive_dqn"),
            v=_ms(claims, "offline.greedy_value_true.naive_dqn"),
            restricted=_ms(claims, "offline.q_unlogged_error.restricted_dqn")
            if _has(claims, "offline.q_unlogged_error.restricted_dqn")
            else "—",
        )
    ]


def _replay(claims, compared, labels, lang) -> list[str]:
    each = _each_vs_bc(compared, "offline.replay_vs_bc", labels, lang)
    needed = ("offline.replay_log_transitions", "offline.replay_log_mean_return", "offline.replay_log_goal_share")
    if not each or not _has(claims, "offline.replay_return.behavior_cloning", *needed):
        return []
    return [
        labels["report.caveat_replay"].format(
            transitions=_ms(claims, "offline.replay_log_transitions", 0),
            log_return=_ms(claims, "offline.replay_log_mean_return"),
            goal=_ms(claims, "offline.replay_log_goal_share"),
            bc=_ms(claims, "offline.replay_return.behavior_cloning"),
            each=each,
        )
    ]


def _cql(claims, compared, labels, lang) -> list[str]:
    if not (_has(compared, "offline.cql_level") and _has(claims, "offline.logged_pair_share.cql", "offline.logged_pair_share.naive_dqn")):
        return []

    return [
        labels["report.caveat_cql"].format(
            alpha=CQLConfig().alpha,
            q=_ms(claims, "offline.greedy_q_learned.cql"),
            v=_ms(claims, "offline.greedy_value_true.cql"),
            cmp=phrase(compared["offline.cql_level"], lang),
            share=_ms(claims, "offline.logged_pair_share.cql"),
            naive_share=_ms(claims, "offline.logged_pair_share.naive_dqn"),
        )
    ]


def _fqe(claims, compared, labels, lang) -> list[str]:
    """Every method's FQE error, side by side: no ranking is stated, since the paired intervals do
    not support one (naive DQN minus IQL is the widest gap, and it is given with its interval)."""
    keys = {m: f"fqe.abs_error.{method_slug(m)}" for m in METHOD_NAMES}
    errors = "; ".join(f"{display_name(labels, m)} {_ms(claims, key, 3)}" for m, key in keys.items() if key in claims)
    if not errors:
        return []
    gap = compared.get("fqe.naive_vs_iql_error")
    return [labels["report.caveat_fqe"].format(errors=errors, cmp=phrase(gap, lang) if gap else "—")]


def _dt(claims, compared, labels, lang) -> list[str]:
    out = []
    if _has(claims, "dt.log_count.trap", "dt.log_count.timeout", "dt.log_count.goal"):
        env = KeyDoorGrid()  # the log's env: a timeout is max_steps step costs and nothing else
        out.append(
            labels["report.caveat_dt_groups"].format(
                trap=format_listed(claims["dt.log_count.trap"], 0),
                timeout=format_listed(claims["dt.log_count.timeout"], 0),
                goal=format_listed(claims["dt.log_count.goal"], 0),
                timeout_return=f"{-env.step_cost * env.max_steps:.2f}",
            )
        )
    if _has(compared, "dt.saturation") and _has(claims, "dt.evaluation_episodes", "dt.max_standard_error"):
        out.append(
            labels["report.caveat_dt_saturation"].format(
                episodes=int(claims["dt.evaluation_episodes"]["per_seed"][0]),
                se=f"{max(claims['dt.max_standard_error']['per_seed']):.3f}",
                cmp=phrase(compared["dt.saturation"], lang),
            )
        )
    return out


def _language(claims, compared, labels, lang) -> list[str]:
    pairs = ("language.rwbc_vs_bc", "language.awbc_vs_rwbc", "language.ilql_vs_bc", "language.ilql_vs_rwbc", "language.ilql_vs_awbc")
    if not _has(compared, *pairs):
        return []
    cmp = {cid: phrase(compared[cid], lang) for cid in pairs}
    sentence = labels["report.caveat_language"].format(
        cmp_rw=cmp["language.rwbc_vs_bc"],
        cmp_aw_rw=cmp["language.awbc_vs_rwbc"],
        cmp_bc=cmp["language.ilql_vs_bc"],
        cmp_il_rw=cmp["language.ilql_vs_rwbc"],
        cmp_aw=cmp["language.ilql_vs_awbc"],
    )
    if compared["language.ilql_vs_bc"]["verdict"] == "ahead":  # "loses by construction" only where it does lose
        mix = BehaviorMix()
        sentence += " " + labels["report.caveat_language_why"].format(slip=mix.slip, exact=mix.exact)
    out = [sentence]
    # Said only when the intervals say it: rewards alone beat cloning, and neither use of the critic (its weights,
    # its value heads at decoding) is ahead of rewards alone.
    if compared["language.rwbc_vs_bc"]["verdict"] == "ahead" and all(
        compared[c]["verdict"] != "ahead" for c in ("language.awbc_vs_rwbc", "language.ilql_vs_rwbc")
    ):
        out.append(labels["report.caveat_language_no_critic"])
    out += _language_heldout(claims, compared, labels, lang)
    return out


def _language_heldout(claims, compared, labels, lang) -> list[str]:
    gaps = [f"language.heldout_vs_train.{m}" for m in LANGUAGE_METHODS]
    if not (
        _has(compared, "language.heldout.ilql_vs_bc", "language.heldout.ilql_vs_awbc", *gaps)
        and _has(claims, *(f"language.heldout_exact_match.{m}" for m in LANGUAGE_METHODS))
    ):
        return []
    out = [
        labels["report.caveat_language_heldout"].format(
            n=len(HELDOUT_PROMPTS),
            each="; ".join(f"{display_name(labels, m)} {_ms(claims, f'language.heldout_exact_match.{m}')}" for m in LANGUAGE_METHODS),
            gaps="; ".join(f"{display_name(labels, m)} {phrase(compared[g], lang)}" for m, g in zip(LANGUAGE_METHODS, gaps)),
            cmp_bc=phrase(compared["language.heldout.ilql_vs_bc"], lang),
            cmp_aw=phrase(compared["language.heldout.ilql_vs_awbc"], lang),
        )
    ]
    if all(compared[g]["verdict"] == "behind" for g in gaps):  # every method's interval lies below zero
        out.append(labels["report.caveat_language_no_transfer"])
    return out
