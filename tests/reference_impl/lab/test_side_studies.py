"""The side studies the lab shows are the committed studies' own numbers, pinned unchanged."""

from __future__ import annotations

import json

from reference_impl.lab import side_studies
from reference_impl.lab.labels import LANGUAGES
from reference_impl.lab.pins import DATA_DIR

DOCS = side_studies.DOCS


def _studies() -> tuple[dict, dict]:
    return (json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8")) for name in ("cql_alpha", "maxbias"))


def test_the_pinned_side_studies_equal_a_fresh_reading_of_the_committed_studies():
    """Re-pin with `python -m reference_impl.lab.side_studies` whenever a study's JSON changes."""
    pinned = json.loads((DATA_DIR / side_studies.SIDE_FILE).read_text(encoding="utf-8"))
    assert pinned == json.loads(json.dumps(side_studies.side_numbers(*_studies())))
    for name in side_studies.FIGURES:
        for suffix in ("", ".ru"):
            own = (DOCS / f"{name}{suffix}.png").read_bytes()
            assert (DATA_DIR / f"M5_{name}{suffix}.png").read_bytes() == side_studies.compact_png(own)


def test_every_alpha_and_both_ends_are_rows_and_each_value_is_the_studys_interval():
    cql, maxbias = _studies()
    numbers = side_studies.side_numbers(cql, maxbias)
    for lang in LANGUAGES:
        rows = numbers["cql_alpha"][lang]["rows"]
        assert len(rows) == len(cql["summary"]["cql"]) + 2  # naive DQN, each alpha, cloning
        entry = cql["summary"]["cql"]["1"]["return"]
        assert [r for r in rows if r[0].endswith("= 1")][0][1] == f"{entry['mean']:.2f} [{entry['low']:.2f}, {entry['high']:.2f}]"
        by_id = {c["id"]: c for c in maxbias["comparisons"]}
        for (_, shown), q in zip(numbers["maxbias"][lang]["rows"], side_studies.MAXBIAS_QUANTITIES):
            assert shown.startswith(f"{by_id[f'dqn_vs_double_dqn.{q}']['effect']:+.2f} [")
    assert numbers["seeds"]["maxbias"] == maxbias["seeds"]["report"]


def test_the_table_has_a_header_and_a_row_per_line(tmp_path):
    numbers = side_studies.side_numbers(*_studies())
    lines = side_studies.side_table(numbers["maxbias"], "ru")
    assert lines[0].startswith("**") and lines[2].count("|") == lines[4].count("|")
    written = side_studies.write_side_studies(data_dir=tmp_path)
    figures = {f"M5_{name}{suffix}.png" for name in ("cql_alpha", "maxbias") for suffix in ("", ".ru")}
    assert {p.name for p in written} == {side_studies.SIDE_FILE, *figures}
