"""`pytest --m5-submission PATH` (autograder/pytest_plugin.py): the same items, points and feedback
as `m5 grade`, usage errors in one line, the submission never imported, and nothing changed
without the option. Each run is a pytest of its own in a temporary folder (no project ini)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from uploads import ASSIGNMENT, release_notebook  # tests/autograder is on sys.path

from autograder.demo import CORRECT

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "test_return_to_go_property.py"
# return_to_go ignoring gamma: the kernel's value properties fail, its input checks hold.
WRONG_RETURN_TO_GO = """

def return_to_go(rewards, gamma=1.0):
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1 or not np.isfinite(r).all() or not 0.0 <= gamma <= 1.0:
        raise ValueError("bad input")
    return np.cumsum(r[::-1])[::-1]
"""


def run_pytest(cwd: Path, *args: str, cache: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", *([] if cache else ["-p", "no:cacheprovider"]), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)


def m5_grade(path: Path, out: Path) -> dict:
    """`m5 grade PATH --json --no-shrink`'s results.json document."""
    proc = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", str(path), "--json", "--no-shrink", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def junit_cases(path: Path) -> list[dict]:
    """Each <testcase> of a JUnit XML file: its id, points, title and failure text (None when it passed)."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        failure = case.find("failure")
        cases.append(
            {
                "id": f"{case.get('classname')}.{case.get('name')}",
                "points": float(properties["points"]),
                "max_points": float(properties["max_points"]),
                "title": properties["title"],
                "failure": None if failure is None else failure.text,
            }
        )
    return cases


def assert_agree(document: dict, cases: list[dict]) -> None:
    """One item per test of m5 grade's results.json, with its points, its maximum and, when it
    failed, the feedback m5 grade wrote for it; the same total."""
    by_title = {case["title"]: case for case in cases}
    assert len(by_title) == len(cases) == len(document["tests"])
    for test in document["tests"]:
        case = by_title[test["name"]]
        assert (case["points"], case["max_points"]) == (test["score"], test["max_score"]), test["name"]
        if test["status"] == "passed":
            assert case["failure"] is None, test["name"]
        else:
            assert test["output"] in case["failure"], test["name"]
    assert sum(case["points"] for case in cases) == document["score"]


def graded_by_both(submission: Path, workdir: Path, *options: str, cache: bool = False):
    """(the plugin's run, its JUnit cases, m5 grade's document) for one submission, both without shrinking."""
    proc = run_pytest(workdir, f"--m5-submission={submission}", "--m5-no-shrink", "--junitxml=junit.xml", *options, cache=cache)
    return proc, junit_cases(workdir / "junit.xml"), m5_grade(submission, workdir / "grades")


def test_the_correct_demo_passes_every_item_with_m5_grades_points(tmp_path, corpus):
    proc, cases, document = graded_by_both(CORRECT, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert document["score"] == 120 and all(case["failure"] is None for case in cases)
    assert_agree(document, cases)
    assert f"{len(cases)} passed" in proc.stdout and "Total: 120 / 120" in proc.stdout
    assert "m5.correct.return_to_go.reference" in {case["id"] for case in cases}
    assert all(case["id"].startswith("m5.correct.") for case in cases)


def test_a_wrong_kernel_fails_with_m5_grades_feedback_and_lf_reruns_only_those(tmp_path, corpus):
    submission = tmp_path / "wrong.py"
    submission.write_text(CORRECT.read_text(encoding="utf-8") + WRONG_RETURN_TO_GO, encoding="utf-8")
    proc, cases, document = graded_by_both(submission, tmp_path, cache=True)
    assert proc.returncode == 1
    assert_agree(document, cases)
    failed = [case for case in cases if case["failure"] is not None]
    assert failed and all(case["id"].startswith("m5.wrong.return_to_go.") for case in failed)
    assert document["score"] == 120 - sum(case["max_points"] for case in failed)
    for case in failed:  # the terminal report carries the same text as the JUnit failure
        assert case["failure"].splitlines()[1] in proc.stdout
    again = run_pytest(tmp_path, f"--m5-submission={submission}", "--m5-no-shrink", "--lf", "-q", cache=True)
    assert again.returncode == 1 and f"{len(failed)} failed, {len(cases) - len(failed)} deselected" in again.stdout


def test_an_untouched_russian_notebook_fails_as_in_m5_grade_with_russian_feedback(tmp_path, corpus):
    submission = tmp_path / ASSIGNMENT[1]
    shutil.copy(release_notebook(ASSIGNMENT[1]), submission)
    proc, cases, document = graded_by_both(submission, tmp_path)
    assert proc.returncode == 1
    assert_agree(document, cases)
    assert document["score"] < 120 and "НЕ ПРОЙДЕНО" in proc.stdout


def test_the_items_known_before_grading_are_worth_the_assignment_total():
    """What an item that could not be graded reports as its maximum (m5 grade's rows: 0 of the total)."""
    from autograder.grade.score import assignment_total  # why: the grader, loaded by this test alone
    from autograder.pytest_plugin import expected_items  # why: the same

    items = expected_items()
    assert len({(group, key) for group, key, _ in items}) == len(items)
    assert sum(points for _, _, points in items) == assignment_total()


def test_k_selects_items_by_kernel_and_property_without_grading(tmp_path):
    proc = run_pytest(tmp_path, f"--m5-submission={CORRECT}", "--collect-only", "-q", "-k", "return_to_go and reference")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line for line in proc.stdout.splitlines() if "::" in line] == ["m5/correct.py::return_to_go::reference"]
    assert "m5 grade of" not in proc.stdout


@pytest.mark.parametrize("case", ["missing", "folder", "garbage notebook", "symbolic link", "not a submission"])
def test_bad_input_is_a_one_line_usage_error(tmp_path, case):
    if case == "missing":
        target, problem = tmp_path / "nope.py", "no such file"
    elif case == "folder":
        target, problem = tmp_path, "is a folder"
    elif case == "garbage notebook":
        target, problem = tmp_path / "a.ipynb", "notebook"
        target.write_bytes(b"\x00\xffgarbage{")
    elif case == "symbolic link":
        target, problem = tmp_path / "a.py", "symbolic link"
        target.symlink_to(CORRECT)
    else:
        target, problem = tmp_path / "notes.txt", "expected a .ipynb notebook or a .py file"
        target.write_text("hello", encoding="utf-8")
    proc = run_pytest(tmp_path, f"--m5-submission={target}")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR: --m5-submission: ") and problem in lines[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_configuration_file_beside_the_submission_is_refused(tmp_path):
    """With a space, pytest searches for its ini file from the submission's folder before the plugin loads."""
    student = tmp_path / "student"
    student.mkdir()
    (student / "pytest.ini").write_text("[pytest]\naddopts = --junitxml=planted.xml\n", encoding="utf-8")
    (student / "a.py").write_text(CORRECT.read_text(encoding="utf-8"), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    proc = run_pytest(work, "--m5-submission", str(student / "a.py"))
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR and "write --m5-submission=" in proc.stderr
    assert not (work / "planted.xml").exists() and not (student / "planted.xml").exists()


def test_the_submission_is_never_imported_by_pytest(tmp_path):
    marker = tmp_path / "imported"
    submission = tmp_path / "test_student.py"
    submission.write_text(f"{CORRECT.read_text(encoding='utf-8')}\nopen({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    named = run_pytest(tmp_path, f"--m5-submission={submission}", str(submission), "--collect-only", "-q")
    assert named.returncode == pytest.ExitCode.USAGE_ERROR and "never here" in named.stderr
    walked = run_pytest(tmp_path, f"--m5-submission={submission}", ".", "--collect-only", "-q")
    assert walked.returncode == 0 and "m5/test_student.py::return_to_go::reference" in walked.stdout
    assert not marker.exists()


def untimed(output: str) -> list[str]:
    """pytest's output without the summary line, which says how long the run took."""
    return [line for line in output.splitlines() if " in " not in line]


def test_without_the_option_the_plugin_changes_nothing(tmp_path):
    (tmp_path / "test_a.py").write_text("def test_one():\n    pass\n\n\ndef test_two(m5_student):\n    pass\n", encoding="utf-8")
    with_plugin = run_pytest(tmp_path, "-q", "-rA")
    without = run_pytest(tmp_path, "-q", "-rA", "-p", "no:m5")
    assert untimed(with_plugin.stdout) == untimed(without.stdout) and "fixture 'm5_student' not found" in with_plugin.stdout
    assert "--m5-submission=PATH" in run_pytest(tmp_path, "--help").stdout
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, autograder.pytest_plugin; print(sorted(m for m in sys.modules if m.startswith(('autograder.', "
            "'reference_impl', 'numpy', 'hypothesis'))))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.stdout.strip() == "['autograder.pytest_plugin']", imported.stdout + imported.stderr


def test_the_worked_example_passes_on_the_demo_and_fails_on_a_wrong_kernel(tmp_path):
    right = run_pytest(tmp_path, f"--m5-submission={CORRECT}", str(EXAMPLE), "-k", "property", "-q")
    assert right.returncode == 0 and "1 passed, 98 deselected" in right.stdout, right.stdout[-3000:]
    wrong = tmp_path / "wrong.py"
    wrong.write_text(CORRECT.read_text(encoding="utf-8") + WRONG_RETURN_TO_GO, encoding="utf-8")
    failed = run_pytest(tmp_path, f"--m5-submission={wrong}", str(EXAMPLE), "-k", "property", "-q")
    assert failed.returncode == 1 and "Falsifying example" in failed.stdout and "m5 grade of" not in failed.stdout


@pytest.mark.slow
def test_the_plugin_and_m5_grade_agree_on_every_held_out_student(tmp_path, correct_source):
    """Every kernel of tests/autograder/heldout/ (students.py and probes.py) on the correct base, as
    the held-out tests grade them: m5 grade grades them as one class, the plugin one run each."""
    from heldout.probes import PROBES  # why: tests/autograder is on sys.path; loaded only by this slow test
    from heldout.students import STUDENTS  # why: the same

    kernels = (*STUDENTS, *PROBES)
    folder = tmp_path / "class"
    folder.mkdir()
    for student in kernels:
        (folder / f"{student.name}.py").write_text(f"{correct_source.rstrip()}\n\n\n{student.source}", encoding="utf-8")
    documents = {document["submission"]: document for document in m5_grade(folder, tmp_path / "grades")}
    assert len(documents) == len(kernels)
    for student in kernels:
        workdir = tmp_path / student.name
        workdir.mkdir()
        proc = run_pytest(workdir, f"--m5-submission={folder / f'{student.name}.py'}", "--m5-no-shrink", "--junitxml=junit.xml")
        document = documents[f"{student.name}.py"]
        assert proc.returncode == (0 if document["score"] == 120 else 1), student.name
        assert_agree(document, junit_cases(workdir / "junit.xml"))
