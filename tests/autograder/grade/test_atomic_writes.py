"""Every class output survives a kill in the middle of a command (``autograder/grade/outputs.py``).

Each command runs in a child process that ``SIGKILL``s itself at its k-th file rename, the
instant before a new file would appear; afterwards every file of ``--out`` is either what a
previous complete run left or what a complete run of the command writes, never a half.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# tests/autograder is on sys.path
from tests.autograder.grade.test_merge import shard_out

KILLER = """
import atexit, os, signal, sys
from autograder.grade import outputs
count, target, real = 0, int(os.environ["M5_KILL_AT"]), outputs._replace
def replace(tmp, path):
    global count
    count += 1
    if count == target:
        os.kill(os.getpid(), signal.SIGKILL)
    real(tmp, path)
outputs._replace = replace
atexit.register(lambda: print("renames:", count))
from autograder.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run(args: list[str], kill_at: int = 0) -> subprocess.CompletedProcess:
    env = {**os.environ, "M5_KILL_AT": str(kill_at), "M5_PROGRESS": "0"}
    return subprocess.run([sys.executable, "-c", KILLER, *args], env=env, capture_output=True, text=True, timeout=600)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def complete(name: str, data: bytes) -> bool:
    """A whole file of its kind (for outputs holding timings, which differ from run to run)."""
    text = data.decode("utf-8")
    if name.endswith(".json"):
        json.loads(text)
        return True
    if name.endswith(".html"):
        return text.endswith("</html>\n")
    return text.endswith("\n")


def assert_whole(folder: Path, before: dict[str, bytes], after: dict[str, bytes], timed: bool = False) -> None:
    """Every file is the previous run's or the complete new run's (``timed``: a whole file of its
    kind, its timings aside); none missing, no temporary left visible."""
    now = snapshot(folder)
    visible = {name: data for name, data in now.items() if not Path(name).name.startswith(".")}
    assert set(before) <= set(visible), set(before) - set(visible)
    for name, data in visible.items():
        assert data in (before.get(name), after.get(name)) or (timed and complete(name, data)), name


def killed_everywhere(tmp_path: Path, command, previous: Path, points=None, timed: bool = False) -> int:
    """Run ``command(folder)`` (its args, writing into ``folder``) complete, then killed at each
    rename in turn (or at ``points``), each time from a copy of ``previous``; returns the renames."""
    complete = tmp_path / "complete"
    shutil.copytree(previous, complete)
    done = run(command(complete))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    renames = int(done.stdout.strip().splitlines()[-1].split()[-1])
    before, after = snapshot(previous), snapshot(complete)
    assert before != after  # the new run changes something, so a half-written state would show
    out = tmp_path / "out"
    for k in points(renames) if points else range(1, renames + 1):
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(previous, out)
        killed = run(command(out), kill_at=k)
        assert killed.returncode == -9, (k, killed.stdout[-500:], killed.stderr[-500:])
        assert_whole(out, before, after, timed)
    return renames


def _shards(folder: Path, score: float) -> list[Path]:
    def edit(entries):
        for entry in entries:
            entry.update(score=score)
            entry["record"].update(score=score)

    return [shard_out(folder / "p1", (1, 2), 2, [0], edit=edit), shard_out(folder / "p2", (2, 2), 2, [1], edit=edit)]


def test_a_killed_merge_leaves_every_file_whole(tmp_path):
    old = _shards(tmp_path / "old", 1.0)
    assert run(["merge", *map(str, old), "--out", str(tmp_path / "previous")]).returncode == 0
    new = _shards(tmp_path / "new", 7.0)
    renames = killed_everywhere(tmp_path, lambda out: ["merge", *map(str, new), "--out", str(out)], tmp_path / "previous")
    assert renames >= 7  # two results, grades.csv, the class report (2), written answers, grades.json


@pytest.mark.parametrize("with_marks", [False, True])
def test_a_killed_review_leaves_every_file_whole(tmp_path, with_marks):
    previous = tmp_path / "previous"
    assert run(["merge", *map(str, _shards(tmp_path / "s", 5.0)), "--out", str(previous)]).returncode == 0
    (previous / "written_answers.json").write_text(
        json.dumps(
            {"format": 1, "submissions": [{"label": "s0.py", "student": "s0", "notebook": "assignment", "answers": {"q01_answer": "yes"}}]}
        )
    )
    extra = []
    if with_marks:
        assert run(["review", str(previous)]).returncode == 0
        lines = (previous / "marks.csv").read_text(encoding="utf-8").splitlines()
        header = lines[0].split(",")
        filled = [lines[0], lines[1]] + [
            ",".join(["2" if h == "q01_answer" else c for h, c in zip(header, row.split(","))]) for row in lines[2:]
        ]
        (tmp_path / "marks.csv").write_text("\n".join(filled) + "\n", encoding="utf-8")
        extra = ["--marks", str(tmp_path / "marks.csv"), "--csv-format", "moodle"]
    killed_everywhere(tmp_path, lambda out: ["review", str(out), *extra], previous, points=lambda n: sorted({1, n // 2, n}))


def test_a_killed_class_run_leaves_every_file_whole(tmp_path, correct_source):
    submitted = tmp_path / "class"
    for student, text in (("alice", correct_source), ("bob", "import numpy as np\n")):
        (submitted / student).mkdir(parents=True)
        (submitted / student / "homework.py").write_text(text)
    previous = tmp_path / "previous"
    assert run(["grade", str(submitted), "--no-shrink", "--out", str(previous)]).returncode in (0, 1)
    (submitted / "bob" / "homework.py").write_text(correct_source)  # the new run grades bob differently
    killed_everywhere(
        tmp_path,
        lambda out: ["grade", str(submitted / "bob"), "--no-shrink", "--update", "--out", str(out)],
        previous,
        points=lambda n: (1, 3, n),  # a result, the first class file, the last one
        timed=True,  # results.json and the class report hold execution times
    )


@pytest.mark.parametrize("command", ["adjust", "sheets"])
def test_a_killed_adjustment_or_rebuild_leaves_every_file_whole(tmp_path, command):
    previous = tmp_path / "previous"
    assert run(["merge", *map(str, _shards(tmp_path / "s", 5.0)), "--out", str(previous)]).returncode == 0
    if command == "sheets":  # a hand edit the rebuild takes in
        (previous / "adjustments.csv").write_text("student,points,item,reason,by,at\ns1,3,,oral exam,me,today\n", encoding="utf-8")
    args = ["adjust", "s0", "2.5", "--reason", "regrade request accepted"] if command == "adjust" else ["sheets"]
    # timed: an adjustment records when it was made, so each run's row differs by its time
    renames = killed_everywhere(tmp_path, lambda out: [args[0], str(out), *args[1:]], previous, timed=command == "adjust")
    assert renames >= (3 if command == "adjust" else 2)  # adjustments.csv (adjust only), grades.csv, grades_final.csv
