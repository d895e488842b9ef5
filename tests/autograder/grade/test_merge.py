"""``m5 merge`` under attack (``autograder/grade/merge.py``): everything checked before anything
is written, nothing read or written outside the shard folders and ``--out``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from autograder import cli
from autograder.grade import merge, shards, written

RUN = {"class": "c" * 64, "grader": "g" * 16}


def _row(i: int, score: float = 1.0, maximum: float = 120.0) -> dict:
    label = f"s{i}.py"
    record = {
        "label": label,
        "score": score,
        "maximum": maximum,
        "graded": True,
        "error": "",
        "seconds": 0.5,
        "failed": [],
        "mistakes": [],
        "answers": [],
        "limits": [],
    }
    return {
        "index": i,
        "label": label,
        "student": f"s{i}",
        "assignment": "",
        "language": "en",
        "timestamp": "",
        "score": score,
        "maximum": maximum,
        "groups": [["dqn_targets", min(score, 10.0)]],
        "error": "",
        "record": record,
    }


def shard_out(folder: Path, shard, size: int, rows, *, run=RUN, edit=None) -> Path:
    """A shard's output folder as m5 grade --shard writes it: grades.json and a results folder per row."""
    folder.mkdir(parents=True)
    entries = [_row(i) for i in rows]
    if edit:
        edit(entries)
    document = {"format": shards.FORMAT, "shard": list(shard), "class_size": size, "run": dict(run), "rows": entries}
    (folder / shards.ROWS_FILE).write_text(json.dumps(document))
    for i in rows:
        (folder / f"s{i}.py").mkdir()
        (folder / f"s{i}.py" / "results.json").write_text('{"score": 1}')
    return folder


def two_shards(tmp_path: Path, **second) -> list[Path]:
    return [shard_out(tmp_path / "p1", (1, 2), 2, [0]), shard_out(tmp_path / "p2", (2, 2), 2, [1], **second)]


def refused(folders, out: Path, says: str) -> None:
    before = sorted(p.name for p in out.iterdir()) if out.exists() else None
    with pytest.raises(shards.ShardError, match=says):
        merge.merge_shards(folders, out)
    after = sorted(p.name for p in out.iterdir()) if out.exists() else None
    assert before == after  # nothing written
    assert cli.main(["merge", *map(str, folders), "--out", str(out)]) == cli.EXIT_USAGE


def test_two_clean_shards_merge(tmp_path):
    folders = two_shards(tmp_path)
    rows = merge.merge_shards(folders, tmp_path / "out")
    assert [r.label for r in rows] == ["s0.py", "s1.py"]
    assert (tmp_path / "out" / "s1.py" / "results.json").read_text() == '{"score": 1}'
    merged = json.loads((tmp_path / "out" / shards.ROWS_FILE).read_text())
    assert merged["run"] == RUN and merged["shard"] is None


@pytest.mark.parametrize(
    "layout, says",
    [
        ({(1, 2): [0], (2, 2): [0]}, "also in another shard"),
        ({(1, 2): [0]}, "shard\\(s\\) 2/2 missing"),
        ({(1, 2): [0], (1, 2, "again"): [1]}, "shard 1/2 again"),
        ({(1, 2): [0], (2, 3): [1]}, "shard 2/3"),
        ({(1, 2): [0], (2, 2): []}, "in no shard"),
        ({(1, 2): [0], (2, 2): [7]}, "no valid index"),
    ],
)
def test_a_merge_that_cannot_be_right_is_refused_and_writes_nothing(tmp_path, layout, says):
    folders = [shard_out(tmp_path / f"s{n}", shard[:2], 2, rows) for n, (shard, rows) in enumerate(layout.items())]
    refused(folders, tmp_path / "merged", says)


@pytest.mark.parametrize(
    "score, maximum, says",
    [
        (1000.0, 120.0, "score 1000 is outside 0..120"),
        (-50.0, 120.0, "score -50 is outside"),
        (float("nan"), 120.0, "not finite"),
        (float("inf"), 120.0, "not finite"),
        (5.0, 5000.0, "maximum 5000 is outside"),
    ],
)
def test_a_tampered_score_is_refused_before_anything_is_written(tmp_path, score, maximum, says):
    def tamper(entries):
        entries[0].update(score=score, maximum=maximum)
        entries[0]["record"].update(score=score, maximum=maximum)

    folders = two_shards(tmp_path, edit=tamper)
    refused(folders, tmp_path / "out", says)


@pytest.mark.parametrize(
    "edit, says",
    [
        (lambda e: e[0].update(score="1"), "malformed"),
        (lambda e: e[0].update(score=True), "malformed"),
        (lambda e: e[0].update(groups=[["a", 1, 2]]), "malformed"),
        (lambda e: e[0]["record"].update(score=2.0), "record disagrees"),
        (lambda e: e[0].pop("record"), "malformed"),
        (lambda e: e[0].update(groups=[["dqn_targets", 500.0]]), "group 'dqn_targets' has 500 points"),
        (lambda e: e[0]["record"].update(outputs={"dqn_targets": "not hex at all!!"}), "row 1 is malformed \\(its outputs"),
        (lambda e: e[0]["record"].update(outputs={"dqn_targets": "0123456789ABCDEF"}), "its outputs are not a mapping"),
        (lambda e: e[0]["record"].update(outputs={"dqn_targets": "0123456789abcdef0"}), "its outputs are not a mapping"),
        (lambda e: e[0]["record"].update(outputs={"dqn_targets": 7}), "its outputs are not a mapping"),
        (lambda e: e[0]["record"].update(outputs=["dqn_targets"]), "its outputs are not a mapping"),
        (lambda e: e[0]["record"].update(outputs=None), "its outputs are not a mapping"),
    ],
)
def test_a_malformed_row_is_refused_naming_its_row(tmp_path, edit, says):
    refused(two_shards(tmp_path, edit=edit), tmp_path / "out", says)


def test_the_outputs_digests_are_merged_as_the_shards_kept_them(tmp_path):
    """A record's outputs (kernel -> digest or null) pass through; a record without them (an
    older shard's) is read as having none."""
    outputs = {"dqn_targets": "0123456789abcdef", "fqe_targets": None}
    folders = two_shards(tmp_path, edit=lambda e: e[0]["record"].update(outputs=outputs))
    merge.merge_shards(folders, tmp_path / "out")
    rows = json.loads((tmp_path / "out" / shards.ROWS_FILE).read_text())["rows"]
    assert rows[1]["record"]["outputs"] == outputs and "outputs" not in rows[0]["record"]


def test_shards_of_another_class_or_grader_or_an_older_format_are_refused(tmp_path):
    refused(two_shards(tmp_path / "a", run={**RUN, "class": "d" * 64}), tmp_path / "out", "another class")
    refused(two_shards(tmp_path / "b", run={**RUN, "grader": "h" * 16}), tmp_path / "out", "another version of the grader")
    old = two_shards(tmp_path / "c")
    document = json.loads((old[1] / shards.ROWS_FILE).read_text())
    (old[1] / shards.ROWS_FILE).write_text(json.dumps({**document, "format": 1}))
    refused(old, tmp_path / "out", "older m5 grade")


def test_out_inside_or_around_a_shard_is_refused(tmp_path):
    folders = two_shards(tmp_path)
    refused(folders, folders[0], "is one of the shard folders")
    refused(folders, folders[0] / "merged", "inside the shard folder")
    refused(folders, tmp_path, "is inside --out")


def test_links_fifos_and_symlinked_inputs_inside_a_shard_are_refused_by_name(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    cases = {
        "link_file": lambda f: os.symlink("/etc/passwd", f / "s0.py" / "passwd"),
        "link_dir": lambda f: os.symlink(tmp_path, f / "s0.py" / "up"),
        "fifo": lambda f: os.mkfifo(f / "s0.py" / "pipe"),
        "rows_link": lambda f: os.symlink((f / shards.ROWS_FILE).rename(f / "real.json"), f / shards.ROWS_FILE),
        "answers_link": lambda f: os.symlink(outside, f / written.ANSWERS_FILE),
    }
    says = {
        "link_file": "s0.py/passwd is a symbolic link",
        "link_dir": "s0.py/up is a symbolic link",
        "fifo": "s0.py/pipe is a FIFO",
        "rows_link": "symbolic link",
        "answers_link": "symbolic link",
    }
    for name, plant in cases.items():
        folders = two_shards(tmp_path / name)
        plant(folders[0])
        refused(folders, tmp_path / name / "out", says[name])
    assert outside.read_text() == "keep me"


def test_nested_links_in_out_are_never_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "results.json").write_text("untouched")
    folders = two_shards(tmp_path / "shards")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "s0.py")  # a planted link where a result folder goes
    refused(folders, out, "in --out is a symbolic link")
    assert (victim / "results.json").read_text() == "untouched" and sorted(p.name for p in victim.iterdir()) == ["results.json"]


def test_a_malformed_written_answers_file_is_refused_before_anything_is_written(tmp_path):
    folders = two_shards(tmp_path)
    (folders[1] / written.ANSWERS_FILE).write_text(json.dumps({"format": 1, "submissions": [{"label": 3}]}))
    refused(folders, tmp_path / "out", "malformed")
    (folders[1] / written.ANSWERS_FILE).write_text("{not json")
    refused(folders, tmp_path / "out", "unreadable")


def test_an_interrupted_writes_temporary_files_are_not_copied(tmp_path):
    folders = two_shards(tmp_path)
    (folders[0] / "s0.py" / ".results.json.x1.tmp").write_text("half")
    merge.merge_shards(folders, tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.tmp"))


def test_the_number_check_names_each_problem():
    assert merge._number_problem({"score": 1.0, "maximum": 2.0}, 120.0) is None
    assert "not finite" in merge._number_problem({"score": math.nan, "maximum": 2.0}, 120.0)


def test_the_shards_late_policy_is_merged_or_their_disagreement_refused(tmp_path):
    folders = two_shards(tmp_path)
    for folder in folders:
        (folder / "policy.json").write_text('{"format": 1, "file": "/course/m5_course.toml"}')
    (tmp_path / "p2" / "policy.json").write_text('{"format": 1, "file": "/other/m5_course.toml"}')
    refused(folders, tmp_path / "out", "different late policies")
    (tmp_path / "p2" / "policy.json").write_text('{"format": 1, "file": "/course/m5_course.toml"}')
    refused(folders, tmp_path / "out", "m5_course.toml")  # the policy the sheets are built from must be readable
    policy = tmp_path / "m5_course.toml"
    policy.write_text('[policy]\ndue = "2026-12-20T23:59:00+03:00"\npenalty_percent = 10\n', encoding="utf-8")
    link = json.dumps({"format": 1, "file": str(policy)})
    for folder in folders:
        (folder / "policy.json").write_text(link)
    merge.merge_shards(folders, tmp_path / "out")
    assert (tmp_path / "out" / "policy.json").read_text() == link
