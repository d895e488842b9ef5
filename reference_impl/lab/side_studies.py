"""The two side studies the lab shows beside its own sections, in the kit's pinned data.

* **CQL's penalty weight** (:mod:`reference_impl.cql_sweep`, ``docs/lab-results/cql_alpha.json``):
  CQL at each α of the grid, with cloning and naive DQN, on the offline section's log.
* **Maximization bias** (:mod:`reference_impl.maxbias`, ``docs/lab-results/maxbias.json``):
  DQN against Double DQN where the theory predicts a gap.

Both are long runs of their own (their own design and report seeds, stated in their pages),
so the kit does not rerun them: :func:`side_numbers` turns each committed JSON into a few
rows of the course's numbers (mean and 95 % interval, or a paired difference with the verdict
its interval allows), and :func:`write_side_studies` pins them, with the two figures (in a
32-color palette, :func:`compact_png`), into
``reference_impl/data`` (``M5_side_studies.json``, ``M5_cql_alpha[.ru].png``,
``M5_maxbias[.ru].png``), where the lab notebook and the report read them.

    python -m reference_impl.lab.side_studies   (after either study's JSON changes; make pin runs it)
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from reference_impl.lab.labels import LANGUAGES, labels_for
from reference_impl.lab.pins import DATA_DIR
from reference_impl.lab.text import language_text

__all__ = ["SIDE_FILE", "FIGURES", "side_numbers", "side_table", "write_side_studies", "compact_png", "main"]

SIDE_FILE = "M5_side_studies.json"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "lab-results"
#: Pinned figure name -> the study's own figure in docs/lab-results (per language suffix).
FIGURES = {"cql_alpha": "cql_alpha", "maxbias": "maxbias"}

#: The side studies' table text per language (``side_studies`` of the language files).
TEXT = {lang: dict(language_text(lang)["side_studies"]) for lang in LANGUAGES}
MAXBIAS_QUANTITIES = ("left_share_first", "left_share_last", "over_a_mean", "over_a_end")


def _interval(entry: Mapping, digits: int = 2, signed: bool = False) -> str:
    spec = f"{'+' if signed else ''}.{digits}f"
    return f"{entry['mean']:{spec}} [{entry['low']:{spec}}, {entry['high']:{spec}}]"


def _difference(entry: Mapping, lang: str, digits: int = 2) -> str:
    verdict = labels_for(lang)[f"report.verdict.level.{entry['verdict']}"]  # a difference above or below zero
    return f"{entry['effect']:+.{digits}f} [{entry['low']:+.{digits}f}, {entry['high']:+.{digits}f}]: {verdict}"


def _cql_row(name: str, entry: Mapping) -> list[str]:
    # One decimal: the errors run from tenths to thousands, and a third digit would say nothing more.
    errors = [_interval(entry[k], digits=1, signed=True) for k in ("logged_error", "unlogged_error")]
    return [name, _interval(entry["return"]), _interval(entry["success"]), *errors]


def side_numbers(cql: Mapping, maxbias: Mapping) -> dict:
    """``{"cql_alpha": {lang: {"title", "header", "rows"}}, "maxbias": {...}, "seeds": {...}}``
    from the two studies' JSON documents: every string formatted once, here."""
    seeds = {"cql_alpha": cql["seeds"]["report_offsets"], "maxbias": maxbias["seeds"]["report"]}
    out: dict = {"cql_alpha": {}, "maxbias": {}, "seeds": seeds}
    summary = cql["summary"]
    by_id = {c["id"]: c for c in maxbias["comparisons"]}
    for lang in LANGUAGES:
        t = TEXT[lang]
        rows = [_cql_row(t["cql.naive"], summary["naive_dqn"])]
        rows += [_cql_row(t["cql.alpha"].format(alpha=alpha), entry) for alpha, entry in summary["cql"].items()]
        rows.append([t["cql.bc"], _interval(summary["bc"]["return"]), _interval(summary["bc"]["success"]), "—", "—"])
        out["cql_alpha"][lang] = {"title": t["cql.title"], "header": list(t["cql.header"]), "rows": rows}
        maxbias_rows = [[t[f"maxbias.{q}"], _difference(by_id[f"dqn_vs_double_dqn.{q}"], lang)] for q in MAXBIAS_QUANTITIES]
        out["maxbias"][lang] = {"title": t["maxbias.title"], "header": list(t["maxbias.header"]), "rows": maxbias_rows}
    return out


def side_table(study: Mapping, lang: str) -> list[str]:
    """One study's rows as a markdown table in ``lang``, under its title."""
    block = study[lang]
    lines = [f"**{block['title']}**", "", "| " + " | ".join(block["header"]) + " |", "|" + "---|" * len(block["header"])]
    return lines + ["| " + " | ".join(row) + " |" for row in block["rows"]]


def write_side_studies(docs: Path = DOCS, data_dir: Path | None = None) -> list[Path]:
    """Pin :func:`side_numbers` and the studies' figures into ``data_dir`` (the kit's data)."""
    target = DATA_DIR if data_dir is None else data_dir
    cql = json.loads((docs / "cql_alpha.json").read_text(encoding="utf-8"))
    maxbias = json.loads((docs / "maxbias.json").read_text(encoding="utf-8"))
    written = [target / SIDE_FILE]
    written[0].write_text(json.dumps(side_numbers(cql, maxbias), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for pinned, own in FIGURES.items():
        for suffix in ("", ".ru"):
            path = target / f"M5_{pinned}{suffix}.png"
            path.write_bytes(compact_png((docs / f"{own}{suffix}.png").read_bytes()))
            written.append(path)
    return written


def compact_png(png: bytes, colors: int = 32) -> bytes:
    """A line plot's PNG in a palette of ``colors`` (median cut), for the kit, whose data files stay
    under 64 KB each; the same bytes in give the same bytes out."""
    from PIL import Image  # why: only the instructor's pinning step needs Pillow, never the kit's readers

    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reference_impl.lab.side_studies``: re-pin the side studies from docs/lab-results."""
    if argv is None:
        argv = sys.argv[1:]
    if argv:
        print("usage: python -m reference_impl.lab.side_studies", file=sys.stderr)
        return 2
    for path in write_side_studies():
        print(f"side studies: pinned {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
