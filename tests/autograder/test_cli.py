"""`m5` command line: exit codes, --json, outputs."""
import json
import subprocess
import sys

import pytest

from autograder import cli

from autograder.demo import CORRECT


def run_m5(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_grade_json_prints_only_the_results(tmp_path, corpus):
    proc = run_m5("grade", str(CORRECT), "--json", "--no-shrink", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["score"] == 100
    assert (tmp_path / "correct" / "results.json").exists() and (tmp_path / "grades.csv").exists()


def test_grade_folder_prints_table_and_summary(tmp_path, corpus, correct_source):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(correct_source)
    (folder / "bob.py").write_text("import numpy as np\n")
    (folder / "notes.txt").write_text("ignored")
    proc = run_m5("grade", str(folder), "--jobs", "2", "--no-shrink", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "alice.py" in proc.stdout and "bob.py" in proc.stdout and "most failed test" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["alice", "bob", "grades.csv"]


@pytest.mark.parametrize("content", [None, "{oops"])
def test_unreadable_input_exits_2_with_one_line(tmp_path, content):
    path = tmp_path / "sub.ipynb"
    if content is not None:
        path.write_text(content)
    proc = run_m5("grade", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and str(path) in proc.stderr


def test_bad_jobs_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        cli.main(["grade", "x.py", "--jobs", "0"])
    assert info.value.code == 2


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

    results = run_checks(return_to_go, timeout=0.5)
    assert results and all(not r.passed and "did not finish" in r.detail for r in results)
