"""Grading a class in shards (m5 grade --shard K/N) and joining them (m5 merge)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder import cli
from autograder.grade import shards


@pytest.mark.parametrize("text", ["1/3", "3/3", " 2/5 ", "1/1"])
def test_a_shard_is_k_of_n(text):
    k, n = shards.parse_shard(text)
    assert 1 <= k <= n


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "1/0", "a/b", "-1/3", "1/3/5", ""])
def test_a_bad_shard_is_refused_naming_the_option(text):
    with pytest.raises(shards.ShardError, match="--shard"):
        shards.parse_shard(text)


def test_every_submission_is_in_exactly_one_shard_whatever_the_order():
    found = [SimpleNamespace(relative=f"student{i}/module05/m05_assignment_en.ipynb", path=Path("x")) for i in range(60)]
    for n in (1, 2, 3, 7):
        parts = [shards.select(found, (k, n)) for k in range(1, n + 1)]
        assert sorted(i for part in parts for i in part) == list(range(60))
        # the shard depends on the path alone: the same in a reversed listing
        reversed_found = found[::-1]
        assert {found[i].relative for i in parts[0]} == {reversed_found[i].relative for i in shards.select(reversed_found, (1, n))}
    assert len({len(p) for p in (shards.select(found, (k, 3)) for k in (1, 2, 3))}) > 0


def _class(folder: Path, correct_source: str) -> Path:
    for student, text in {
        "alice": correct_source,
        "bob": correct_source + "\n\ndef dqn_targets(*args, **kwargs):\n    return 0.0\n",
        "carol": "import numpy as np\n",
        "dave": correct_source,
    }.items():
        (folder / student).mkdir(parents=True)
        (folder / student / "homework.py").write_text(text)
    (folder / "grades.csv.py").write_text("import numpy as np\n")  # a name that clashes with the sheet's
    return folder


def _files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != shards.ROWS_FILE}


def test_three_shards_merged_give_the_unsharded_sheets_byte_for_byte(tmp_path, corpus, correct_source, capsys):
    submitted = _class(tmp_path / "class", correct_source)
    whole = tmp_path / "whole"
    assert cli.main(["grade", str(submitted), "--no-shrink", "--out", str(whole), "--csv-format", "canvas"]) == 0
    parts = []
    for k in (1, 2, 3):
        parts.append(tmp_path / f"part{k}")
        assert cli.main(["grade", str(submitted), "--no-shrink", "--out", str(parts[-1]), "--shard", f"{k}/3"]) == 0
    graded = [json.loads((p / shards.ROWS_FILE).read_text())["rows"] for p in parts]
    assert sorted(row["index"] for rows in graded for row in rows) == list(range(5))
    merged = tmp_path / "merged"
    assert cli.main(["merge", *map(str, parts[::-1]), "--out", str(merged), "--csv-format", "canvas"]) == 0
    for sheet in ("grades.csv", "grades_canvas.csv"):
        assert (merged / sheet).read_bytes() == (whole / sheet).read_bytes()
    assert _files(merged) == _files(whole)  # every results.json, in the folder the whole run gives it
    scores = {r.split(",")[0]: r.split(",")[5] for r in (whole / "grades.csv").read_text().splitlines()[1:]}
    assert scores["alice/homework.py"] != scores["bob/homework.py"]  # the sheets compared hold differences
    # the class report of the merge says what the unsharded one says (only the timings differ)
    reports = [json.loads((folder / "class_report.json").read_text()) for folder in (whole, merged)]
    for document in reports:
        document.pop("slowest")
    assert reports[0] == reports[1]
