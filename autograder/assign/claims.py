"""Lab numbers in course texts come from the lab report, never from typing.

Texts (lab notebook answers, notebook introductions) cite a measured figure with a
placeholder that names a claim of ``docs/lab-results/claims.json`` (written by
``make pin``: ``m5 lab --profile full --seeds 10 ...``)::

    {{claim:offline.return.cql:mean:.2f}}       -> 0.79
    {{claim:offline.return.cql:mean_sd:.2f}}    -> 0.79 ± 0.00
    {{claim:dagger.bc_success:mean_ci:.2f}}     -> 0.72 [0.55, 0.90]  (mean and 95 % interval)
    {{claim:dagger.bc_success:per_seed:.2f}}    -> 1.00, 0.96, 1.00, 1.00, 1.00

The form is ``{{claim:ID:FIELD:SPEC}}``: ``ID`` a claim id, ``FIELD`` one of
:data:`FIELDS`, ``SPEC`` an optional Python format spec (default ``.2f``).

A comparison of the report (its ``comparisons``: a paired difference over seeds with
its 95 % interval) is cited as ``{{compare:ID}}`` and becomes, in the notebook's
language, ``+0.61 (95 % CI +0.40 to +0.82, 10 paired seeds): ahead``: the words come
from the interval, so a text cannot call a difference that its numbers do not show.
:func:`fill_claims` resolves every placeholder when the notebooks are built; an
unknown id or field, or a missing/ill-formed report, is a ``ClaimError`` naming it.
The report is read only when a text actually cites a claim.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from reference_impl.course_run import claim_bounds, clip_to_bounds, interval
from reference_impl.lab.comparisons import phrase

REPO = Path(__file__).resolve().parents[2]
CLAIMS_PATH = REPO / "docs" / "lab-results" / "claims.json"
MAX_REPORT_BYTES = 2_000_000  # the report is a few kilobytes; refuse anything absurd
FIELDS = ("mean", "sd", "min", "max", "per_seed", "mean_sd", "mean_ci", "n_seeds")
DEFAULT_SPEC = ".2f"

CLAIM = re.compile(r"\{\{claim:([A-Za-z0-9_.\-]+)(?::([a-z_]+))?(?::([^}]*))?\}\}")
COMPARE = re.compile(r"\{\{compare:([A-Za-z0-9_.\-]+)\}\}")


class ClaimError(ValueError):
    """A placeholder that cannot be resolved, or an unusable claims report."""


def cited_claims(text: str) -> list[str]:
    """The claim and comparison ids ``text`` cites, in order of appearance (repeats kept)."""
    return [m.group(1) for m in CLAIM.finditer(text)] + [m.group(1) for m in COMPARE.finditer(text)]


def load_comparisons(claims_path: Path = CLAIMS_PATH) -> dict[str, dict[str, Any]]:
    """``{id: entry}`` of the report's ``comparisons``; ClaimError when absent or ill-formed
    (or when the report fails :func:`load_claims`' checks)."""
    comparisons = _read_report(claims_path).get("comparisons")
    if not isinstance(comparisons, dict) or not all(isinstance(v, dict) for v in comparisons.values()):
        raise ClaimError(f"claims report `{claims_path}` holds no `comparisons` object: rerun the lab")
    return comparisons


def load_claims(claims_path: Path = CLAIMS_PATH) -> dict[str, dict[str, Any]]:
    """``{id: entry}`` from a claims report ``{"claims": {id: {"mean", "sd", "per_seed", ...}}}``.

    Raises ClaimError when the file is missing, too large, not JSON, or not of that shape.
    """
    return _read_report(claims_path)["claims"]


def _read_report(claims_path: Path) -> dict[str, Any]:
    """The whole claims report, read once, after the checks :func:`load_claims` promises."""
    path = Path(claims_path)
    if not path.is_file():
        raise ClaimError(
            f"claims report `{path}` is missing: "
            "run `m5 lab --profile full --seeds 10 --out docs/lab-results --lang en --lang ru --pin` (make pin) "
            "to write it before building texts that cite lab numbers"
        )
    if path.stat().st_size > MAX_REPORT_BYTES:
        raise ClaimError(f"claims report `{path}` is larger than {MAX_REPORT_BYTES} bytes")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ClaimError(f"claims report `{path}` is not valid JSON: {exc}") from None
    claims = report.get("claims") if isinstance(report, dict) else None
    if not isinstance(claims, dict) or not all(isinstance(v, dict) for v in claims.values()):
        raise ClaimError(f'claims report `{path}` must hold {{"claims": {{id: {{...}}}}}}')
    return report


def _number(entry: dict, key: str, claim_id: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ClaimError(f"claim `{claim_id}`: `{key}` must be a finite number, got {value!r}")
    return float(value)


def _per_seed(entry: dict, claim_id: str) -> list[float]:
    values = entry.get("per_seed")
    if not isinstance(values, list) or not values:
        raise ClaimError(f"claim `{claim_id}`: `per_seed` must be a non-empty list, got {values!r}")
    return [_number({"v": v}, "v", claim_id) for v in values]


def claim_value(entry: dict, field: str, spec: str, claim_id: str) -> str:
    """One field of a claim entry, formatted with ``spec``."""
    if field not in FIELDS:
        raise ClaimError(f"claim `{claim_id}`: unknown field `{field}` (known: {', '.join(FIELDS)})")
    try:
        if field in ("mean", "sd"):
            return format(_number(entry, field, claim_id), spec)
        if field == "mean_sd":
            return f"{_number(entry, 'mean', claim_id):{spec}} ± {_number(entry, 'sd', claim_id):{spec}}"
        seeds = _per_seed(entry, claim_id)
        if field == "mean_ci":  # as the lab notebook's tables show it: the mean of the seeds and its 95 % interval
            mean, low, high = interval(seeds)
            low, high = clip_to_bounds(low, high, claim_bounds(claim_id))
            return format(mean, spec) if low == high else f"{format(mean, spec)} [{format(low, spec)}, {format(high, spec)}]"
        if field == "n_seeds":
            return str(len(seeds))
        if field == "per_seed":
            return ", ".join(format(v, spec) for v in seeds)
        return format(min(seeds) if field == "min" else max(seeds), spec)
    except ValueError as exc:  # a bad format spec
        if isinstance(exc, ClaimError):
            raise
        raise ClaimError(f"claim `{claim_id}`: bad format spec {spec!r} ({exc})") from None


def fill_claims(
    text: str, claims_path: Path = CLAIMS_PATH, claims: dict | None = None, *, lang: str = "en", comparisons: dict | None = None
) -> str:
    """``text`` with every ``{{claim:ID:FIELD:SPEC}}`` replaced by the measured figure and
    every ``{{compare:ID}}`` by the comparison's phrase in ``lang``.

    ``claims`` / ``comparisons`` (already loaded) take precedence over ``claims_path``;
    the file is read only if ``text`` cites something. Raises ClaimError naming an
    unknown id or field, a bad spec, or a missing report. A text without placeholders
    is returned unchanged.
    """
    if "{{compare:" in text:
        found = comparisons if comparisons is not None else load_comparisons(claims_path)

        def compare(match: re.Match) -> str:
            if match.group(1) not in found:
                raise ClaimError(f"unknown comparison `{match.group(1)}` in a course text (see docs/lab-results/claims.json)")
            return phrase(found[match.group(1)], lang)

        text = COMPARE.sub(compare, text)
    if "{{claim:" not in text:
        return text
    table = claims if claims is not None else load_claims(claims_path)

    def fill(match: re.Match) -> str:
        claim_id, field, spec = match.group(1), match.group(2) or "mean", match.group(3) or DEFAULT_SPEC
        if claim_id not in table:
            raise ClaimError(
                f"unknown claim `{claim_id}` in a course text (the report holds {len(table)} claims; see docs/lab-results/claims.json)"
            )
        return claim_value(table[claim_id], field, spec, claim_id)

    filled = CLAIM.sub(fill, text)
    if "{{claim:" in filled:
        raise ClaimError(f"malformed claim placeholder near {filled[filled.index('{{claim:') :][:60]!r}; write {{{{claim:ID:FIELD:SPEC}}}}")
    return filled


__all__ = ["CLAIMS_PATH", "ClaimError", "FIELDS", "cited_claims", "claim_value", "fill_claims", "load_claims", "load_comparisons"]
