"""The Gradescope bundle, run against a simulated /autograder layout."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from autograder.export.gradescope import build_bundle

from autograder.demo import CORRECT


def layout(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "source").mkdir()
    bundle = build_bundle(tmp_path / "autograder.zip")
    with zipfile.ZipFile(bundle) as zf:
        names = zf.namelist()
        zf.extractall(root / "source")
    assert {"setup.sh", "run_autograder", "pyproject.toml", "requirements.lock"} <= set(names)
    assert not any(n.startswith(("tests/", "release/", "solutions/", ".venv/")) for n in names)
    return root


def run_autograder(root):
    env = {**os.environ, "M5_GS_ROOT": str(root), "M5_BIN": str(Path(sys.executable).parent / "m5")}
    env.setdefault("M5_CACHE_DIR", str(Path.home() / ".cache" / "m5"))
    subprocess.run(["bash", str(root / "source" / "run_autograder")], check=True, env=env, timeout=600)
    return json.loads((root / "results" / "results.json").read_text())


def test_bundle_grades_a_submission_in_the_gradescope_layout(tmp_path, corpus):
    root = layout(tmp_path)
    shutil.copy(CORRECT, root / "submission" / "answer.py")
    results = run_autograder(root)
    assert results["score"] == 100 and len(results["tests"]) > 50
    assert subprocess.run(["bash", "-n", str(root / "source" / "setup.sh")]).returncode == 0


def test_bundle_handles_no_submission_and_unreadable_ones(tmp_path):
    root = layout(tmp_path)
    assert run_autograder(root)["score"] == 0
    (root / "submission" / "broken.ipynb").write_text("{not json")
    results = run_autograder(root)
    assert results["score"] == 0 and "could not be read" in results["output"]
