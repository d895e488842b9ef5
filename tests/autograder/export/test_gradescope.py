"""The Gradescope bundle, run against a simulated /autograder layout."""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)
from uploads import ASSIGNMENT, LAB, filled, release_notebook  # tests/autograder is on sys.path

from autograder.demo import CORRECT
from autograder.export import gradescope
from autograder.export.gradescope import UnsafeZip, build_bundle, unpack_zip
from autograder.grade.score import assignment_total

TOTAL = assignment_total()


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "source").mkdir()
    bundle = build_bundle(tmp_path / "autograder.zip")
    with zipfile.ZipFile(bundle) as zf:
        names = zf.namelist()
        zf.extractall(root / "source")
    assert {"setup.sh", "run_autograder", "pyproject.toml", "requirements.lock"} <= set(names)
    assert not any(n.startswith(("tests/", "solutions/", ".venv/")) for n in names)
    # of the release, only the public student library (the grader imports it for notebooks)
    assert all(n.startswith("release/module05_en/m5_student/") for n in names if n.startswith("release/"))
    assert "release/module05_en/m5_student/__init__.py" in names
    return root


def run_autograder(root):
    env = {**os.environ, "M5_GS_ROOT": str(root), "M5_PYTHON": sys.executable}
    env.setdefault("M5_CACHE_DIR", str(Path.home() / ".cache" / "m5"))
    proc = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, timeout=900, capture_output=True, text=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def upload(root, name: str, nb_or_path):
    target = root / "submission" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb_or_path, Path):
        shutil.copy(nb_or_path, target)
    else:
        nbformat.write(nb_or_path, target)
    return target


def test_a_py_upload_is_graded_out_of_the_documented_total(root, corpus):
    upload(root, "answer.py", CORRECT)
    results = run_autograder(root)
    assert results["score"] == TOTAL == 120 and len(results["tests"]) > 50
    assert sum(t.get("max_score", 0) for t in results["tests"]) == TOTAL  # the summary entry is worth nothing
    assert "120 points" in gradescope.__doc__  # the total the instructor enters in Gradescope
    assert subprocess.run(["bash", "-n", str(root / "source" / "setup.sh")]).returncode == 0


def test_untouched_english_and_filled_russian_grades_the_russian(root, corpus):
    upload(root, ASSIGNMENT[0], release_notebook(ASSIGNMENT[0]))
    upload(root, ASSIGNMENT[1], filled(ASSIGNMENT[1]))
    results = run_autograder(root)
    assert results["score"] == TOTAL
    assert f"Проверен файл: {ASSIGNMENT[1]}" in results["output"]  # the Russian notebook speaks Russian
    assert ASSIGNMENT[0] in results["output"]  # the untouched one is named as without content
    # the written answers, for the person who marks them in Gradescope, beside the score
    assert "Письменные ответы (оцениваются вручную" in results["output"]
    assert "\nq01_answer: " in results["output"] and "\nanswer_dagger" not in results["output"]  # the lab is not here


def test_all_four_release_notebooks_in_a_folder_grade_the_filled_assignment(root, corpus):
    for name in (*LAB, ASSIGNMENT[1]):
        upload(root, f"module05/{name}", release_notebook(name))
    upload(root, f"module05/{ASSIGNMENT[0]}", filled(ASSIGNMENT[0]))
    results = run_autograder(root)
    assert results["score"] == TOTAL
    assert f"Graded: module05/{ASSIGNMENT[0]}" in results["output"]
    assert results["output"].count("a 'lab' notebook") == 2


def test_two_filled_notebooks_keep_the_higher_with_a_line(root, corpus, correct_source):
    upload(root, "good.py", CORRECT)
    (root / "submission" / "half.py").write_text(correct_source + "\ndef return_to_go(rewards, gamma=1.0):\n    return [0.0]\n")
    results = run_autograder(root)
    assert results["score"] == TOTAL
    assert "2 uploaded files have implemented content" in results["output"] and "good.py 120/120" in results["output"]


def test_a_zip_upload_is_unpacked_and_graded(root, corpus):
    with zipfile.ZipFile(root / "submission" / "upload.zip", "w") as zf:
        zf.write(CORRECT, "homework/answer.py")
        zf.writestr("homework/notes.txt", "not graded")
    assert run_autograder(root)["score"] == TOTAL


def test_no_submission_and_unreadable_ones_still_give_valid_json(root):
    results = run_autograder(root)
    assert results["score"] == 0 and "No assignment notebook" in results["output"]
    (root / "submission" / "broken.ipynb").write_text("{not json")
    results = run_autograder(root)
    assert results["score"] == 0 and "could not be graded" in results["output"]


def test_a_control_character_in_the_file_name_keeps_results_json_valid(root):
    bad = root / "submission" / 'a\x1b[2J"\n\\b.ipynb'
    bad.write_text("{not json")
    (root / "submission" / os.fsdecode(b"\xff\xfe.ipynb")).write_text("{not json")
    results = run_autograder(root)  # json.loads inside: valid JSON
    assert results["score"] == 0 and "\x1b" not in json.dumps(results, ensure_ascii=False)
    raw = (root / "results" / "results.json").read_bytes()
    raw.decode("utf-8")  # strict UTF-8: no lone surrogates


# ---------------------------------------------------------------- visibility and the lab's answers
LAB_ANSWER = "DAgger queries the expert on the states the learner visits"


def lab_with_answer(name: str, text: str) -> nbformat.NotebookNode:
    """The release lab notebook ``name`` with its first written answer (answer_dagger) filled in."""
    nb = nbformat.read(release_notebook(name), as_version=4)
    cell = next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "answer_dagger")
    cell.source = text
    return nb


@pytest.fixture(scope="module")
def graded_as(tmp_path_factory, corpus, correct_source):
    """run(visibility): results.json of one upload (a .py with return_to_go broken, the English lab
    with one answer written, the Russian lab untouched), through a bundle built with that
    visibility, unpacked and run as Gradescope does; each visibility graded once per module."""
    done: dict[str, dict] = {}

    def run(visibility: str) -> dict:
        if visibility not in done:
            tmp = tmp_path_factory.mktemp(f"gs-{visibility}")
            root = tmp / "autograder"
            (root / "submission").mkdir(parents=True)
            with zipfile.ZipFile(build_bundle(tmp / "autograder.zip", visibility=visibility)) as zf:
                zf.extractall(root / "source")
            broken = correct_source + "\ndef return_to_go(rewards, gamma=1.0):\n    return [0.0]\n"
            (root / "submission" / "answer.py").write_text(broken, encoding="utf-8")
            upload(root, f"module05/{LAB[0]}", lab_with_answer(LAB[0], LAB_ANSWER))
            upload(root, f"module05/{LAB[1]}", release_notebook(LAB[1]))
            done[visibility] = run_autograder(root)
        return done[visibility]

    return run


@pytest.mark.parametrize("visibility", gradescope.VISIBILITIES)
def test_each_visibility_reaches_results_json_with_a_visible_summary(graded_as, visibility):
    results = graded_as(visibility)
    summary, *graded = results["tests"]
    assert results["visibility"] == visibility  # the default of the whole result (Gradescope's top-level field)
    assert len(graded) > 50 and {t["visibility"] for t in graded} == {visibility}
    failed = [t for t in graded if t["status"] == "failed"]
    assert any("Failing input: return_to_go(" in t["output"] for t in failed)  # the details carry the visibility
    assert sum(t["score"] for t in graded) == results["score"] < TOTAL
    # the one line a student always sees: the total and how many failed, never the failing input
    assert summary["visibility"] == "visible" and "score" not in summary and "max_score" not in summary
    line = f"Total: {results['score']:g} / {TOTAL:g}; {len(failed)} of {len(graded)} tests failed"
    assert summary["name"] == f"Summary: {line}" and summary["output"].startswith(line)
    assert "Graded: answer.py." in summary["output"]  # a student can see a wrong upload before the due date
    assert summary["status"] == "failed"
    for text in (summary["name"], summary["output"], results["output"]):
        assert "Failing input" not in text and "return_to_go(" not in text and "expected:" not in text
    if visibility != "visible":
        assert "shown" in summary["output"].splitlines()[0]  # and when the details come
    assert [t for t in results["tests"] if t["visibility"] == "visible"] == ([summary] if visibility != "visible" else results["tests"])


def test_the_lab_notebooks_written_answers_are_listed_for_the_marker(graded_as):
    output = graded_as(gradescope.DEFAULT_VISIBILITY)["output"]
    assert f"Written answers of the lab notebook module05/{LAB[0]} (marked by hand" in output
    assert f"\nanswer_dagger: {LAB_ANSWER}" in output and "\nanswer_dqn: (blank)" in output
    assert LAB[1] not in output.split("Written answers of the lab notebook")[-1]  # the untouched copy is not listed
    assert output.count("a 'lab' notebook") == 2  # both still skipped, not graded
    summary = graded_as(gradescope.DEFAULT_VISIBILITY)["tests"][0]
    assert LAB_ANSWER not in summary["output"]  # the answers are for the marker, in the top-level output


def test_a_lab_notebook_uploaded_alone_has_its_answers_listed(root):
    """The lab handed in as its own Gradescope assignment (this autograder, no assignment notebook):
    0 automatic points, the answers still listed for the marker, nothing graded."""
    upload(root, LAB[1], lab_with_answer(LAB[1], "Ответ про DAgger"))
    results = run_autograder(root)
    assert results["score"] == 0 and "No assignment notebook" in results["output"]
    assert f"Written answers of the lab notebook {LAB[1]}" in results["output"] and "\nanswer_dagger: Ответ про DAgger" in results["output"]
    summary, *graded = results["tests"]
    assert not graded and summary["visibility"] == "visible" and "No assignment notebook" in summary["output"]


def test_the_visibility_is_chosen_on_the_command_line_and_m5_grade_keeps_everything_visible(tmp_path, capsys):
    from autograder import cli, cli_parser
    from autograder.grade import report
    from autograder.grade.score import SubmissionResult

    assert set(cli_parser.GS_VISIBILITIES) == set(gradescope.VISIBILITIES) == set(report.VISIBILITIES)
    assert cli_parser.GS_VISIBILITIES[0] == gradescope.DEFAULT_VISIBILITY == "after_due_date"
    assert cli.main(["gradescope-bundle", "--out", str(tmp_path / "a.zip"), "--visibility", "after_published"]) == 0
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert json.loads(zf.read(gradescope.CONFIG_NAME)) == {"visibility": "after_published"}
    with pytest.raises(SystemExit) as info:
        cli.main(["gradescope-bundle", "--out", str(tmp_path / "b.zip"), "--visibility", "later"])
    assert info.value.code == 2 and "invalid choice: 'later'" in capsys.readouterr().err
    assert not (tmp_path / "b.zip").exists()
    # the local document (m5 grade) is unchanged: everything visible, no summary entry
    local = report.results_json(SubmissionResult("a.py", "en", [], error="x"))
    assert local["visibility"] == "visible" and local["tests"] == []
    # a missing or damaged setting falls back to the default
    (tmp_path / "source").mkdir()
    assert gradescope.read_visibility(tmp_path) == "after_due_date"
    (tmp_path / "source" / gradescope.CONFIG_NAME).write_text('{"visibility": "sometimes"}')
    assert gradescope.read_visibility(tmp_path) == "after_due_date"


# ---------------------------------------------------------------- setup.sh, with stand-ins for the image
FAKE_PYTHON = """#!/bin/bash
echo "$(/usr/bin/basename "$0") $*" >> "$FAKE_LOG"
if [ "$1" = -c ]; then echo {version}; exit 0; fi
if [ "$1" = -m ] && [ "$2" = venv ]; then
  /bin/mkdir -p "$3/bin"
  for tool in python pip; do
    printf '#!/bin/bash\necho "venv-%s $*" >> "$FAKE_LOG"\n' "$tool" > "$3/bin/$tool"
    /bin/chmod +x "$3/bin/$tool"
  done
fi
"""
FAKE_APT_GET = """#!/bin/bash
echo "apt-get $*" >> "$FAKE_LOG"
if [ "$1" = install ] && [[ " $* " == *" python3.11 "* ]]; then
  [ -n "${FAKE_PPA_FAILS:-}" ] && exit 100
  /bin/cat > "$FAKE_BIN/python3.11" <<'PY'
%s
PY
  /bin/chmod +x "$FAKE_BIN/python3.11"
fi
exit 0
"""
OS_RELEASE = {
    "ubuntu-22.04": 'ID=ubuntu\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.5 LTS"\n',
    "ubuntu-20.04": 'ID=ubuntu\nVERSION_ID="20.04"\nPRETTY_NAME="Ubuntu 20.04.6 LTS"\n',
    "ubuntu-24.04": 'ID=ubuntu\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.2 LTS"\n',
}


def run_setup(tmp_path, image: str, python3: str | None, apt: bool = True, ppa_fails: bool = False):
    """setup.sh of the bundle run by bash with nothing on PATH but stand-ins: apt-get (installs a
    fake python3.11 3.11.13 when asked for it), add-apt-repository and the image's python3;
    returns (exit status, stderr, the commands logged)."""
    bin_dir, root = tmp_path / "bin", tmp_path / "autograder"
    bin_dir.mkdir(parents=True)
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(build_bundle(tmp_path / "autograder.zip")) as zf:
        (root / "source" / "setup.sh").write_bytes(zf.read("setup.sh"))
    tools = {"add-apt-repository": '#!/bin/bash\necho "add-apt-repository $*" >> "$FAKE_LOG"\n'}
    if apt:
        tools["apt-get"] = FAKE_APT_GET % FAKE_PYTHON.format(version="3.11.13")
    if python3:
        tools["python3"] = FAKE_PYTHON.format(version=python3)
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "os-release").write_text(OS_RELEASE[image])
    log = tmp_path / "log"
    log.touch()
    env = {
        "PATH": str(bin_dir),
        "M5_GS_ROOT": str(root),
        "M5_OS_RELEASE": str(tmp_path / "os-release"),
        "FAKE_LOG": str(log),
        "FAKE_BIN": str(bin_dir),
        **({"FAKE_PPA_FAILS": "1"} if ppa_fails else {}),
    }
    proc = subprocess.run(["/bin/bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stderr, log.read_text().splitlines()


def test_setup_sh_installs_python_3_11_from_deadsnakes_on_ubuntu_22_04(tmp_path):
    code, err, log = run_setup(tmp_path, "ubuntu-22.04", python3="3.10.12")
    assert code == 0, err
    assert "add-apt-repository -y ppa:deadsnakes/ppa" in log
    assert any(line.startswith("apt-get install") and "python3.11 python3.11-venv" in line for line in log)
    assert f"python3.11 -m venv {tmp_path}/autograder/venv" in log  # the venv is 3.11's, not the image's 3.10
    assert not any(line.startswith("python3 -m venv") for line in log)
    assert f"venv-pip install -q -r {tmp_path}/autograder/source/requirements.lock" in log
    assert any(line.startswith("venv-python -c from autograder.grade.pipeline import load_corpus") for line in log)


def test_setup_sh_uses_a_new_enough_python3_and_refuses_an_image_it_cannot_serve(tmp_path):
    code, err, log = run_setup(tmp_path / "noble", "ubuntu-24.04", python3="3.12.3")
    assert code == 0, err
    assert f"python3 -m venv {tmp_path}/noble/autograder/venv" in log and not any("deadsnakes" in line for line in log)
    for case, kwargs, says in (
        ("focal", dict(image="ubuntu-20.04", python3="3.8.10"), "no Python >= 3.11.5 on Ubuntu 20.04.6 LTS (python3 is 3.8.10)"),
        ("no-ppa", dict(image="ubuntu-22.04", python3="3.10.12", ppa_fails=True), "could not install python3.11 from the deadsnakes PPA"),
        ("no-apt", dict(image="ubuntu-22.04", python3="3.10.12", apt=False), "no apt-get on this image"),
        ("floor", dict(image="ubuntu-20.04", python3="3.11.4"), "no Python >= 3.11.5"),
    ):
        code, err, log = run_setup(tmp_path / case, **kwargs)
        assert code == 1 and err.count("\n") == 1 and err.startswith("setup.sh: ") and says in err, (case, err)
        assert "Ubuntu 22.04" in err or "deadsnakes" in err  # names the image the bundle targets
        assert not (tmp_path / case / "autograder" / "venv").exists(), case


# ---------------------------------------------------------------- zip safety (no grading needed)
def make_zip(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


@pytest.mark.parametrize("name", ["../escape.py", "/abs/escape.py", "a/../../escape.py"])
def test_zip_members_outside_the_folder_are_refused(tmp_path, name):
    archive = make_zip(tmp_path / "up.zip", [(name, "x = 1\n", stat.S_IFREG | 0o644)])
    with pytest.raises(UnsafeZip, match="unsafe member path"):
        unpack_zip(archive, tmp_path / "out")
    assert not (tmp_path / "escape.py").exists() and not Path("/abs/escape.py").exists()


def test_zip_links_big_members_and_too_many_members_are_refused(tmp_path, monkeypatch):
    link = make_zip(tmp_path / "link.zip", [("a.py", "/etc/shadow", stat.S_IFLNK | 0o777)])
    with pytest.raises(UnsafeZip, match="symbolic link"):
        unpack_zip(link, tmp_path / "out1")
    monkeypatch.setattr(gradescope, "MAX_ZIP_MEMBERS", 3)
    many = make_zip(tmp_path / "many.zip", [(f"{i}.py", "", stat.S_IFREG | 0o644) for i in range(4)])
    with pytest.raises(UnsafeZip, match="4 members"):
        unpack_zip(many, tmp_path / "out2")
    monkeypatch.setattr(gradescope, "MAX_UNPACKED_BYTES", 1000)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.py", "#" * 600)
        zf.writestr("b.py", "#" * 600)
    with pytest.raises(UnsafeZip, match="more than 1000 bytes"):
        unpack_zip(bomb, tmp_path / "out3")


def test_zip_keeps_only_notebooks_and_py_files(tmp_path):
    archive = make_zip(
        tmp_path / "up.zip",
        [
            ("hw/a.py", "x = 1\n", stat.S_IFREG | 0o644),
            ("hw/data.bin", "\0" * 10, stat.S_IFREG | 0o644),
            ("hw/.hidden.py", "", stat.S_IFREG | 0o644),
        ],
    )
    written = unpack_zip(archive, tmp_path / "out")
    assert [p.relative_to(tmp_path / "out").as_posix() for p in written] == ["hw/a.py"]


# ---------------------------------------------------------------- without bubblewrap
def test_in_a_docker_like_container_the_upload_reads_nothing_and_keeps_full_marks():
    """Gradescope's layout under Docker's default profile (``docker_like``): bubblewrap
    cannot start, so the upload runs in the fallback. run_autograder hides the source,
    the cache and the installed copy from uid 65534: an upload that hunts for them and
    would report them in its feedback keeps 120/120, and no canary of reference_impl or
    the hidden suite is anywhere in what Gradescope shows."""
    import secrets as random_secrets
    import tempfile

    import docker_like
    from adversarial import build

    if docker_like.can_simulate() is not None:
        pytest.skip(docker_like.can_simulate())
    canary = "M5CANARY" + random_secrets.token_hex(8)
    tmp = Path(tempfile.mkdtemp(prefix="m5 gs-", dir="/var/tmp"))  # the container has its own /tmp
    try:
        os.chmod(tmp, 0o755)
        root = tmp / "autograder"
        (root / "submission").mkdir(parents=True)
        with zipfile.ZipFile(build_bundle(tmp / "autograder.zip")) as zf:
            zf.extractall(root / "source")
        docker_like.add_canaries(root / "source", canary)
        site = docker_like.make_venv(root / "venv", [])
        for package in ("autograder", "reference_impl"):  # setup.sh's non-editable install
            shutil.copytree(root / "source" / package, site / package)
        python = root / "venv" / "bin" / "python"
        docker_like.copy_cache(python, root / "source", root / "cache")
        attack = (FIXTURES / "adversarial" / "fallback_exfiltrate.py").read_text(encoding="utf-8")
        (root / "submission" / "answer.py").write_text(build.compose(attack), encoding="utf-8")
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/root",
            "LANG": "C.UTF-8",
            "M5_GS_ROOT": str(root),
            "M5_PYTHON": str(python),
        }
        proc = docker_like.run(["bash", str(root / "source" / "run_autograder")], env=env, timeout=900, capture_output=True, text=True)
        text = (root / "results" / "results.json").read_text(encoding="utf-8")
        results = json.loads(text)
        assert "bubblewrap is unavailable" in results["output"]
        assert "hidden from uid 65534 by file permissions" in results["output"], results["output"]
        for where, content in (("results.json", text), ("stdout", proc.stdout), ("stderr", proc.stderr)):
            assert canary not in content, f"a secret leaked into {where}"
        assert results["score"] == TOTAL, text[:3000]
        for secret in (root / "source", root / "cache", site / "autograder", site / "reference_impl"):
            assert not os.stat(secret).st_mode & stat.S_IROTH, secret
        info = os.stat(root / "results")
        assert info.st_uid == 0 and stat.S_IMODE(info.st_mode) == 0o755
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", str(tmp)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
