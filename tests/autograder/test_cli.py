"""`m5` command line: exit codes, --json, outputs, course folders, hostile names, help."""

import argparse
import csv
import json
import os
import shlex
import subprocess
import sys

import pytest
from uploads import ASSIGNMENT, LAB, nbgrader_course, release_notebook  # tests/autograder is on sys.path

from autograder import cli, cli_parser
from autograder.demo import CORRECT
from autograder.grade.score import assignment_total

TOTAL = f"{assignment_total():g}"


def run_m5(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=900, errors="backslashreplace"
    )


def read_csv(path):
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_grade_json_prints_only_the_results(tmp_path, corpus):
    proc = run_m5("grade", str(CORRECT), "--json", "--no-shrink", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["score"] == assignment_total() == 120  # kernels and exNN_ answers: same total as a notebook
    assert (tmp_path / "correct.py" / "results.json").exists() and (tmp_path / "grades.csv").exists()


def test_grade_folder_prints_table_and_summary_without_a_progress_bar_off_a_tty(tmp_path, corpus, correct_source):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(correct_source)
    (folder / "bob.py").write_text("import numpy as np\n")
    (folder / "notes.txt").write_text("ignored")
    proc = run_m5("grade", str(folder), "--jobs", "2", "--no-shrink", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "alice.py" in proc.stdout and "bob.py" in proc.stdout and "most failed test" in proc.stdout
    assert "\r" not in proc.stderr  # tqdm only on a terminal
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "alice.py",
        "bob.py",
        "class_report.html",
        "class_report.json",
        "grades.csv",
        "grades.json",
        "grades_final.csv",
        "similarity_pairs.json",
        "written_answers.json",
    ]


def test_json_with_several_paths_prints_a_list(tmp_path, corpus, correct_source):
    (tmp_path / "a.py").write_text(correct_source)
    (tmp_path / "b.py").write_text("import numpy as np\n")
    proc = run_m5("grade", str(tmp_path / "a.py"), str(tmp_path / "b.py"), "--json", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(d["submission"], d["score"]) for d in data] == [("a.py", 120), ("b.py", 0)]
    assert all(os.path.exists(d["results_file"]) for d in data)


def test_course_folder_with_three_students(tmp_path, corpus):
    # alice filled the English notebook, bob the Russian one, carol handed in the release
    # untouched; everyone has the lab notebook too
    submitted = nbgrader_course(tmp_path / "course", {"alice": 0, "bob": 1, "carol": None}, extra=(LAB[0],))
    out = tmp_path / "grades"
    proc = run_m5("grade", str(submitted), "--jobs", "2", "--out", str(out), "--csv-format", "moodle")
    assert proc.returncode == 0, proc.stderr
    skipped = [line for line in proc.stderr.splitlines() if "'lab' notebook" in line]
    assert sorted(line.split(":")[0] for line in skipped) == [f"{s}/module05/{LAB[0]}" for s in ("alice", "bob", "carol")]
    rows = {r["submission"]: r for r in read_csv(out / "grades.csv")}
    assert set(rows) == {f"{s}/module05/{n}" for s in ("alice", "bob", "carol") for n in ASSIGNMENT}
    alice = rows[f"alice/module05/{ASSIGNMENT[0]}"]
    assert (alice["student"], alice["assignment"], alice["language"], alice["score"], alice["max_score"]) == (
        "alice",
        "module05",
        "en",
        TOTAL,
        TOTAL,
    )
    assert alice["timestamp"] == "2026-12-01 10:00:00.000000 UTC"  # from alice's timestamp.txt
    assert rows[f"bob/module05/{ASSIGNMENT[1]}"]["language"] == "ru"
    assert rows[f"bob/module05/{ASSIGNMENT[1]}"]["score"] == TOTAL
    assert {"dqn_targets", "iql_advantage_weights", "ex09", "ex15"} <= set(alice)
    for student in ("alice", "bob", "carol"):  # every student's results, none overwritten
        for name in ASSIGNMENT:
            assert json.loads((out / student / "module05" / name / "results.json").read_text())["score"] >= 0
    moodle = list(csv.reader((out / "grades_moodle.csv").open(encoding="utf-8")))
    assert moodle == [["Username", "module05"], ["alice", TOTAL], ["bob", TOTAL], ["carol", "0"]]
    # the class mean counts the six assignment notebooks only (two of them full marks)
    assert "3.33/10" in proc.stdout


def test_refused_files_get_their_own_row_and_the_class_is_graded(tmp_path, corpus, correct_source):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(correct_source)
    (tmp_path / "secret.txt").write_text("root-only secret")
    (folder / "link.py").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(folder / "fifo.py")
    (folder / "grades.csv.py").write_text("import numpy as np\n")
    (folder / "=1+1\x1b[2J\nevil.py").write_text("import numpy as np\n")
    proc = run_m5("grade", str(folder), "--no-shrink", "--out", str(tmp_path / "out"))
    assert proc.returncode == cli.EXIT_INCOMPLETE, proc.stderr  # done, but some could not be graded
    assert "could not be graded" in proc.stderr
    assert "\x1b" not in proc.stdout and "root-only secret" not in proc.stdout
    rows = {r["submission"]: r for r in read_csv(tmp_path / "out" / "grades.csv")}
    assert rows["alice.py"]["score"] == TOTAL
    assert "symbolic link" in rows["link.py"]["error"] and "not a regular file" in rows["fifo.py"]["error"]
    assert rows["grades.csv.py"]["score"] == "0"
    assert "'=1+1\\x1b[2J\\nevil.py" in rows  # no formula, no control characters
    assert (tmp_path / "out" / "link.py" / "results.json").exists()  # the refusal is in its own result
    table = proc.stdout.splitlines()
    assert sum("link.py" in line for line in table) == 1 and sum("evil" in line for line in table) == 1


def test_a_lab_notebook_alone_is_refused_with_one_line(tmp_path):
    proc = run_m5("grade", str(release_notebook(LAB[0])), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "'lab' notebook" in proc.stderr and "no submissions" in proc.stderr


@pytest.mark.parametrize("content", [None, "{oops"])
def test_unreadable_input_exits_2_with_one_line(tmp_path, content):
    path = tmp_path / "sub.ipynb"
    if content is not None:
        path.write_text(content)
    proc = run_m5("grade", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and str(path) in proc.stderr


def test_a_single_symlink_is_refused_with_one_line(tmp_path):
    (tmp_path / "a.py").symlink_to(CORRECT)
    proc = run_m5("grade", str(tmp_path / "a.py"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "symbolic link" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_bad_jobs_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        cli.main(["grade", "x.py", "--jobs", "0"])
    assert info.value.code == 2


def test_limits_the_grader_cannot_work_with_stop_it(tmp_path):
    # In a child process: the sandbox reports a fatal condition (as under a too-low ulimit -v).
    fatal = "the address-space limit (ulimit -v) is too low for the sandboxed worker"
    script = (
        "import sys, types\n"
        "from autograder.grade import sandbox\n"
        "sandbox.isolation = lambda: types.SimpleNamespace(warning=None, fatal=sys.argv[1])\n"
        "from autograder import cli\n"
        "raise SystemExit(cli.main(sys.argv[2:]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, fatal, "grade", str(CORRECT), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == cli.EXIT_ISOLATION == 3
    assert proc.stderr.strip() == f"m5 grade: {fatal}" and not (tmp_path / "out").exists()


def test_version_and_every_help_has_purpose_defaults_and_an_example(capsys, monkeypatch):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"m5 {cli_parser.version()}\n"
    with monkeypatch.context() as patch:  # looked up only for --version: other commands do not pay for it
        patch.setattr(cli_parser, "version", lambda: 1 / 0)
        cli.build_parser().parse_args(["grade", "x.py"])
    parser = cli.build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert set(commands) == {
        "grade",
        "check",
        "gradescope-bundle",
        "lab",
        "release",
        "solutions",
        "demo",
        "course",
        "merge",
        "review",
        "adjust",
        "feedback",
        "sheets",
        "validate",
    }
    for name, sub in commands.items():
        text = sub.format_help()
        assert sub.description and "example:" in text and f"m5 {name}" in text, name
    grade = commands["grade"].format_help()
    assert "(default: grades)" in grade and "(default: 1)" in grade
    assert f"out of {TOTAL} points" in " ".join(grade.split())  # the documented total is the computed one
    assert f"enter {TOTAL} as the assignment total" in " ".join(commands["gradescope-bundle"].format_help().split())


def _options(sub):
    return {flag: action for action in sub._actions for flag in action.option_strings}


def test_every_command_follows_one_convention():
    """The README's "Command line" section, checked across the parser: exit statuses in every
    --help, --lang en|ru only (repeated, never a second spelling, for a command that writes both),
    --out always defaulted."""
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        text = " ".join(sub.format_help().split())
        assert "Exit status: 0 " in text and "; 2 refused (" in text, name
        options = _options(sub)
        lang = options.get("--lang")
        if lang is not None:
            assert tuple(lang.choices or ()) == ("en", "ru"), name
            assert lang.nargs is None and type(lang).__name__ in ("_StoreAction", "_AppendAction"), name
        out = options.get("--out")
        if out is not None:
            assert not out.required and out.default, name
    for old in (["lab", "--lang", "both"], ["lab", "--lang", "en", "ru"], ["release", "--lang", "en"]):
        with pytest.raises(SystemExit) as info:  # refused by the parser, never half-read
            cli.main(old)
        assert info.value.code == 2


def test_commands_that_write_both_languages_take_lang_repeated():
    parser = cli.build_parser()
    assert cli._langs(parser.parse_args(["solutions"])) == ("en", "ru")
    assert cli._langs(parser.parse_args(["solutions", "--lang", "ru"])) == ("ru",)
    assert cli._langs(parser.parse_args(["course", "init", "x", "--lang", "ru", "--lang", "en"])) == ("ru", "en")
    for old in (["solutions", "--lang", "both"], ["course", "init", "x", "--lang", "en", "ru"]):
        with pytest.raises(SystemExit) as info:
            parser.parse_args(old)
        assert info.value.code == 2
    lab = parser.parse_args(["lab", "--profile", "smoke", "--lang", "en", "--lang", "ru"])  # m5 lab under the main parser
    assert cli.COMMANDS[lab.command] is cli.cmd_lab and lab.lang == ["en", "ru"] and lab.profile == "smoke"


@pytest.mark.parametrize("args", [["check", str(CORRECT)], ["--help"]])
def test_a_closed_pipe_exits_cleanly(args):
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is written (`| head -0`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_a_closed_pipe_after_grading_exits_cleanly(tmp_path, corpus):
    shell = (
        f"{shlex.quote(sys.executable)} -m autograder.cli grade {shlex.quote(str(CORRECT))} --no-shrink "
        f"--out {shlex.quote(str(tmp_path))} | head -1"
    )  # a checkout path may hold spaces
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and proc.stdout.startswith("submission")


def test_check_reports_and_exit_status(tmp_path, correct_source):
    good = run_m5("check", str(CORRECT))
    assert good.returncode == 0 and "does not guarantee full marks" in good.stdout
    broken = tmp_path / "broken.py"
    broken.write_text(correct_source + "\ndef return_to_go(rewards, gamma=1.0):\n    return np.cumsum(rewards)\n")
    bad = run_m5("check", str(broken), "--lang", "ru")
    assert bad.returncode == 1 and "return_to_go" in bad.stdout and "не гарантирует" in bad.stdout


def test_check_stops_a_kernel_that_never_returns():
    from autograder.check.public import run_checks

    def return_to_go(rewards, gamma=1.0):
        while True:
            pass

    results = run_checks(return_to_go, timeout=0.25)
    assert results and all(not r.passed and "did not finish" in r.detail for r in results)


def test_readme_commands_use_the_venv_and_the_computed_total():
    """The README's instructor table runs m5 from the .venv; the totals it and the Gradescope
    page state are the computed one (the command table itself: tests/test_docs.py)."""
    from pathlib import Path

    root = Path(cli.__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    instructors = readme.split("## Instructors", 1)[1].split("\n## ", 1)[0]
    steps = [line for line in instructors.splitlines() if line[:2] == "| " and line[2:3].isdigit()]  # the ten steps
    assert len(steps) == 10 and all("`.venv/bin/m5 " in line or "`nbgrader " in line for line in steps)
    assert f"out of **{TOTAL}** automatic points" in " ".join(readme.split())
    gradescope = (root / "docs" / "instructor" / "gradescope.md").read_text(encoding="utf-8")
    assert f"enter **{TOTAL}**" in " ".join(gradescope.split())


# ---------------------------------------------------------------- the early start
def _recording_first_worker(monkeypatch):
    """cache.first_worker wrapped to record each worker it starts."""
    from autograder.grade import cache

    started = []
    real = cache.first_worker

    def first_worker(*args, **kwargs):
        worker = real(*args, **kwargs)
        started.append(worker)
        return worker

    monkeypatch.setattr(cache, "first_worker", first_worker)
    return started


def test_the_worker_started_early_grades_the_first_submission(tmp_path, corpus, correct_source, monkeypatch, handed_over):
    handed = handed_over
    started = _recording_first_worker(monkeypatch)
    (tmp_path / "s.py").write_text(correct_source)
    assert cli.main(["grade", str(tmp_path / "s.py"), "--out", str(tmp_path / "out"), "--json"]) == 0
    assert len(started) == 1 and started[0] is not None  # one worker, started by the CLI's early start
    assert handed[0] == (started[0], True) and started[0]._holder is None  # and the submission took it


def test_a_failing_early_start_is_said_once_and_the_run_still_grades(tmp_path, corpus, correct_source, monkeypatch, capsys):
    from autograder.grade import cache

    def broken(*args, **kwargs):
        raise RuntimeError("forms unreadable")

    monkeypatch.setattr(cache, "first_worker", broken)
    (tmp_path / "s.py").write_text(correct_source)
    assert cli.main(["grade", str(tmp_path / "s.py"), "--out", str(tmp_path / "out"), "--json"]) == 0
    err = capsys.readouterr().err
    assert err.count("the early start failed (RuntimeError: forms unreadable)") == 1
    result = json.loads((tmp_path / "out" / "s.py" / "results.json").read_text(encoding="utf-8"))
    assert result["score"] == assignment_total()  # graded by a worker started in order


@pytest.mark.parametrize("why", ["nothing to grade", "a fatal sandbox", "two jobs"])
def test_an_early_worker_is_closed_or_never_started_when_nothing_takes_it(tmp_path, corpus, correct_source, monkeypatch, why):
    import types

    from autograder.grade import sandbox

    started = _recording_first_worker(monkeypatch)
    (tmp_path / "s.py").write_text(correct_source)
    args = ["grade", str(tmp_path / "s.py"), "--out", str(tmp_path / "out"), "--json"]
    if why == "nothing to grade":
        (tmp_path / "empty").mkdir()
        assert cli.main(["grade", str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == cli.EXIT_USAGE
        assert len(started) == 1 and started[0] is not None and started[0]._holder is None  # closed
    elif why == "a fatal sandbox":
        monkeypatch.setattr(sandbox, "isolation", lambda: types.SimpleNamespace(warning=None, fatal="no sandbox"))
        assert cli.main(args) == cli.EXIT_ISOLATION and started == []
    else:  # each grading process of a --jobs 2 run starts its own recycled sandbox
        assert cli.main([*args, "--jobs", "2"]) == 0 and started == []


def test_the_csv_formats_offered_are_the_ones_the_report_writes():
    # Spelled out in the CLI so that building the parser imports nothing of the grader.
    from autograder.grade import report

    assert ("m5", *report.LMS_FORMATS) == cli_parser.CSV_FORMATS


def test_every_command_of_the_parser_has_one_function_and_no_function_lacks_a_command():
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(cli.COMMANDS)
