"""The registry of the lab's claims: every number the course states, as a function of one seed's result.

Each :class:`Claim` has an id, its text in English and Russian, the section it comes from
and a function from one seed's section result (what :mod:`reference_impl.lab.runners`
returns for that seed) to a number, or None where that seed's run lacks it. The registry is
data: the tables below name each claim's value function and digits, the language files
(``text/<lang>.toml``, tables ``claims`` and ``claim_families``) hold its text.
:mod:`reference_impl.lab.results` evaluates them, writes ``claims.json`` and the results
page; :data:`README_CLAIMS` are the ones that page's table shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from reference_impl.lab.labels import LANGUAGES, display_name, labels_for, method_slug
from reference_impl.lab.profiles import EQUAL_BUDGET, PROFILE_PARAMS
from reference_impl.lab.text import language_text
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


def _at_budget(result: dict, key: str) -> float | None:
    """``result[key]`` at :data:`EQUAL_BUDGET` labels, None when the run did not use that budget (smoke)."""
    where = np.flatnonzero(np.asarray(result["budget_labels"]) == EQUAL_BUDGET)
    return float(np.asarray(result[key])[where[0]]) if where.size else None


def _matched(key: str) -> Callable[[dict], float | None]:
    """``result[key]`` of the matched runs (runners._dagger_matched_runs), None unless they ran at :data:`EQUAL_BUDGET`."""
    return lambda r: float(r[key]) if r.get("matched_budget") == EQUAL_BUDGET else None


def _item(key: str, index: int) -> Callable[[dict], float | None]:
    """Value function: ``result[key][index]`` (a round, a checkpoint, an end of a range)."""
    return lambda r: float(r[key][index])


def _number(key: str) -> Callable[[dict], float | None]:
    """Value function: the number ``result[key]``."""
    return lambda r: float(r[key])


def _optional(key: str) -> Callable[[dict], float | None]:
    """Value function: ``result[key]``, None where the run has no such entry."""
    return lambda r: float(r[key]) if key in r else None


def _budget(key: str) -> Callable[[dict], float | None]:
    """Value function: ``result[key]`` at :data:`EQUAL_BUDGET` labels (:func:`_at_budget`)."""
    return lambda r: _at_budget(r, key)


#: The claims stated once, in report order up to the offline methods: (id, value, digits).
#: Their text is ``claims.<id>`` of the language files, ``{budget}`` being :data:`EQUAL_BUDGET`.
_SINGLE_BEFORE_METHODS: tuple[tuple[str, Callable[[dict], float | None], int], ...] = (
    ("dagger.bc_success", _item("success_rate", 0), 3),
    ("dagger.bc_labels", _item("dataset_size", 0), 0),
    ("dagger.dagger_success", _item("success_rate", -1), 3),
    ("dagger.dagger_labels", _item("dataset_size", -1), 0),
    ("dagger.equal_budget_labels", _budget("budget_labels"), 0),
    ("dagger.bc_equal_budget_labels", _budget("budget_bc_labels"), 0),
    ("dagger.bc_equal_budget_success", _budget("budget_bc_success"), 3),
    ("dagger.dagger_equal_budget_success", _budget("budget_dagger_success"), 3),
    ("dagger.equal_budget_expert_success", _number("budget_expert_success"), 3),
    ("dagger.bc_equal_budget_unseen_share", _budget("budget_bc_unseen_share"), 3),
    ("dagger.dagger_equal_budget_unseen_share", _budget("budget_dagger_unseen_share"), 3),
    ("dagger.bc_equal_budget_error_unseen", _budget("budget_bc_error_unseen"), 3),
    ("dagger.bc_equal_budget_error_seen", _budget("budget_bc_error_seen"), 3),
    ("dagger.dagger_equal_budget_labels", _budget("budget_dagger_labels"), 0),
    # DAgger against cloning where what is equal is exact: the distinct labels, or demonstrations that slip.
    ("dagger.matched_labels", _matched("matched_labels"), 0),
    ("dagger.matched_bc_success", _matched("matched_bc_success"), 3),
    ("dagger.matched_dagger_success", _matched("matched_dagger_success"), 3),
    ("dagger.slipped_bc_labels", _matched("slipped_bc_labels"), 0),
    ("dagger.slipped_dagger_labels", _matched("slipped_dagger_labels"), 0),
    ("dagger.slipped_bc_success", _matched("slipped_bc_success"), 3),
    ("dagger.slipped_dagger_success", _matched("slipped_dagger_success"), 3),
    ("dqn.dqn_success", _number("dqn_eval_success"), 3),
    ("dqn.double_success", _number("double_eval_success"), 3),
    ("dqn.dqn_overestimation_mean", _series_mean("dqn_overestimation"), 3),
    ("dqn.double_overestimation_mean", _series_mean("double_overestimation"), 3),
    ("dqn.dqn_overestimation_final", _series_last("dqn_overestimation"), 3),
    ("dqn.double_overestimation_final", _series_last("double_overestimation"), 3),
    ("log.mean_return", _number("mean_return"), 3),
    ("offline.log_goal_share", _optional("log_goal_share"), 3),
    ("offline.replay_log_goal_share", _optional("replay_log_goal_share"), 3),
    ("offline.replay_log_mean_return", _optional("replay_log_mean_return"), 3),
    ("offline.replay_log_transitions", _optional("replay_log_transitions"), 0),
    ("offline.return_optimal", _number("optimal_return"), 3),
)

#: The Decision Transformer's claims stated once, after its per-request returns: (id, value, digits).
_SINGLE_DT: tuple[tuple[str, Callable[[dict], float | None], int], ...] = (
    *(
        (f"dt.log_{what}.{group}", _log_group(group, what), 0 if what == "count" else 3)
        for group in DT_LOG_GROUPS
        for what in ("count", "share")
    ),
    ("dt.max_standard_error", _largest_standard_error, 3),
    ("dt.evaluation_episodes", _optional("evaluation_episodes"), 0),
    ("dt.log_return_max", _item("data_return_range", 1), 3),
)

#: Claims stated once per offline method (the offline and FQE sections): family -> (the result's key, the key of its
#: method names).
#: A family's text is ``claim_families.<family>``, ``{name}`` being the method's display name;
#: its claims are ``<family>.<method slug>``.
_METHOD_FAMILIES: dict[str, tuple[str, str]] = {
    "offline.return": ("mean_return", "method_names"),
    "offline.success": ("success_rate", "method_names"),
    "offline.greedy_q_learned": ("greedy_q_mean", "method_names"),
    "offline.greedy_value_true": ("greedy_value_true", "method_names"),
    "offline.greedy_value_fqe": ("fqe_logged_value", "method_names"),
    "offline.logged_pair_share": ("logged_pair_share", "method_names"),
    "offline.q_logged_error": ("q_logged_error", "method_names"),
    "offline.q_unlogged_error": ("q_unlogged_error", "method_names"),
    "offline.above_max_share": ("above_max_share", "method_names"),
    "offline.replay_return": ("replay_mean_return", "method_names"),
    "offline.replay_success": ("replay_success_rate", "method_names"),
    "fqe.estimate": ("fqe_values", "fqe_names"),
    "fqe.simulator": ("simulated_values", "fqe_names"),
    "fqe.abs_error": ("abs_error", "fqe_names"),
}
_LANGUAGE_FAMILIES: dict[str, tuple[str, str]] = {
    f"language.{what}": (what, "method_names") for what in ("exact_match", "mean_reward", "heldout_exact_match", "heldout_mean_reward")
}

#: Offline measurements that read a learned Q (behavior cloning has none).
Q_ONLY = ("greedy_q_learned", "q_logged_error", "q_unlogged_error", "above_max_share")


def _claim_text(key: str, table: str = "claims", raw_name: str | None = None, **fields) -> dict[str, str]:
    """The text ``<table>.<key>`` of every language filled in, ``{name}`` being ``raw_name``'s display name."""
    out = {}
    for lang in LANGUAGES:
        extra = {} if raw_name is None else {"name": display_name(labels_for(lang), raw_name)}
        out[lang] = language_text(lang)[table][key].format(**fields, **extra)
    return out


def _single(rows: tuple[tuple[str, Callable[[dict], float | None], int], ...]) -> list[Claim]:
    """The claims of ``rows`` (id, value, digits); the section is the id's first part."""
    return [Claim(cid, cid.split(".")[0], _claim_text(cid, budget=EQUAL_BUDGET), value, digits) for cid, value, digits in rows]


def _family(family: str, key: str, names_key: str, methods: tuple[str, ...]) -> list[Claim]:
    """One claim of ``family`` per method of ``methods`` (none for a Q-only family and cloning)."""
    section, what = family.split(".")
    return [
        Claim(f"{family}.{_slug(m)}", section, _claim_text(family, "claim_families", m), _indexed(key, names_key, m))
        for m in methods
        if not (what in Q_ONLY and m == "behavior cloning")  # BC learns a policy, no Q
    ]


def _families(families: dict[str, tuple[str, str]], methods: tuple[str, ...]) -> list[Claim]:
    """Every family's claims, family by family, each in the order of ``methods``."""
    return [claim for family, (key, names_key) in families.items() for claim in _family(family, key, names_key, methods)]


def _dt_requests() -> list[Claim]:
    """The Decision Transformer's mean return at each request of either profile."""
    requests = sorted(set(PROFILE_PARAMS["full"].dt.target_returns) | set(PROFILE_PARAMS["smoke"].dt.target_returns))
    return [
        Claim(f"dt.achieved.{r:.2f}", "dt", _claim_text("dt.achieved", "claim_families", request=f"{r:.2f}"), _at_request(r))
        for r in requests
    ]


def _build_claims() -> list[Claim]:
    """Every claim in report order: the tables above, their text from the language files."""
    return [
        *_single(_SINGLE_BEFORE_METHODS),
        *_families(_METHOD_FAMILIES, METHOD_NAMES),
        *_dt_requests(),
        *_single(_SINGLE_DT),
        *_families(_LANGUAGE_FAMILIES, LANGUAGE_METHODS),
    ]


#: Every claim, in report order. Add one by a row in the tables above and its text in both language files.
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
