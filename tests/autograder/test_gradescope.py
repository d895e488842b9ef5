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

from autograder.demo import CORRECT
from autograder.export import gradescope
from autograder.export.gradescope import UnsafeZip, build_bundle, unpack_zip
from autograder.grade.score import assignment_total
from uploads import ASSIGNMENT, LAB, filled, release_notebook  # tests/autograder is on sys.path

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
    assert sum(t["max_score"] for t in results["tests"]) == TOTAL
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
        attack = (Path(__file__).parent / "adversarial" / "fallback_exfiltrate.py").read_text(encoding="utf-8")
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
