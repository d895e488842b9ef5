"""`m5 validate`: the dry run before release, on the checkout as shipped and on broken copies.

The copies live in tmp_path (source/ and release/ are never touched): validate takes the
folders it checks as parameters (:class:`validate.Roots`) and which checks to run.
"""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import nbformat
import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)

from autograder import cli
from autograder.export import validate
from autograder.export.validate import Check, Outcome, Roots

SOURCE_EN = REPO / "source" / "module05_en" / "m05_assignment_en.ipynb"
RELEASE_EN = REPO / "release" / "module05_en" / "m05_assignment_en.ipynb"


def roots(tmp_path: Path, **changed) -> Roots:
    """This checkout's folders, with ``changed`` ones (copies in tmp_path) instead."""
    return Roots(**{**vars(Roots.default()), **changed})


def fail_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("FAIL ")]


# ---------------------------------------------------------------- (a) the checkout as shipped
def test_the_checkout_as_shipped_validates_in_both_languages(tmp_path, capsys, corpus):
    """Every check of both languages (8 notebooks graded, the Gradescope zip built and run
    twice): about 5 s here with the corpus cached, so it stays in the default suite."""
    out = tmp_path / "validation"
    assert cli.main(["validate", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = [line.split() for line in printed.splitlines()[1:9]]
    assert [(row[0], row[1], row[4]) for row in rows] == [
        (kind, lang, "ok") for lang in ("en", "ru") for kind in ("source", "release", "solutions", "gradescope")
    ]
    assert {row[0]: row[2] for row in rows} == {"source": "120/120", "release": "0/120", "solutions": "120/120", "gradescope": "120/120"}
    assert "all 8 checks as expected" in printed and not fail_lines(printed)
    summary = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    assert summary["ok"] and summary["differences"] == [] and len(summary["checks"]) == 8
    gradescope = json.loads((out / "gradescope_ru" / "results.json").read_text(encoding="utf-8"))
    assert gradescope["score"] == 120 and "Проверен файл" in gradescope["output"]  # what run_autograder wrote


# ---------------------------------------------------------------- (b) a broken kernel in the source
def test_a_broken_kernel_in_a_copy_of_the_source_fails_naming_its_tests(tmp_path, capsys, corpus):
    nb = nbformat.read(SOURCE_EN, as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "kernel_return_to_go"]
    cell.source += "\n\n\n_right = return_to_go\n\n\ndef return_to_go(rewards, gamma=1.0):\n    return 2 * _right(rewards, gamma)\n"
    copy = tmp_path / "source" / "module05_en" / SOURCE_EN.name
    copy.parent.mkdir(parents=True)
    nbformat.write(nb, copy)
    code = validate.main(("en",), tmp_path / "out", roots(tmp_path, source=tmp_path / "source"), kinds=("source",))
    printed = capsys.readouterr().out
    assert code == 1
    [score] = [line for line in fail_lines(printed) if "] score:" in line]
    assert score.startswith(f"FAIL {copy} [source en] score: expected 120/120, got ")
    assert "; tests: return_to_go" in score and "dqn_targets" not in score
    assert SOURCE_EN.read_bytes() != copy.read_bytes()  # the checkout's source is as it was


# ---------------------------------------------------------------- (c) a release that errors instead of scoring 0
def _unreadable(path: Path) -> None:
    path.write_text("{not json", encoding="utf-8")


def _a_cell_raises(path: Path) -> None:
    nb = nbformat.read(RELEASE_EN, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell('raise RuntimeError("a broken release")'))
    nbformat.write(nb, path)


@pytest.mark.parametrize(
    "damage, what",
    [
        (_unreadable, "graded: expected no grading error, got "),
        (_a_cell_raises, "cells load: "),
        (None, "graded: expected no grading error, got missing"),
    ],
)
def test_a_blank_release_that_errors_instead_of_scoring_0_is_reported(tmp_path, capsys, corpus, damage, what):
    copy = tmp_path / "release" / "module05_en" / RELEASE_EN.name
    copy.parent.mkdir(parents=True)
    if damage is not None:
        damage(copy)
    code = validate.main(("en",), None, roots(tmp_path, release=tmp_path / "release"), kinds=("release",))
    printed = capsys.readouterr().out
    assert code == 1
    [line] = fail_lines(printed)
    assert line.startswith(f"FAIL {copy} [release en] {what}"), line


# ---------------------------------------------------------------- (d) a Gradescope zip that scores differently
@pytest.fixture(scope="module")
def source_results(corpus) -> dict:
    """results.json of the English source notebook, graded once for this module."""
    check = Check("source", "en", SOURCE_EN)
    return validate.grade_notebooks([check])[check].document


def _fake_bundle(path: Path, results: dict | None) -> Path:
    """A zip whose run_autograder writes ``results`` as results.json without grading (None: writes nothing)."""
    script = '#!/usr/bin/env bash\ncp "$M5_GS_ROOT/source/results.json" "$M5_GS_ROOT/results/results.json"\n'
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo("run_autograder")
        info.external_attr = (stat.S_IFREG | 0o755) << 16
        zf.writestr(info, script if results is not None else "#!/usr/bin/env bash\nexit 1\n")
        if results is not None:
            zf.writestr("results.json", json.dumps(results))
    return path


def _one_test_lost(results: dict) -> tuple[dict, str]:
    test = results["tests"][5]
    results["score"] -= test["max_score"]
    test["score"], test["status"] = 0, "failed"
    return results, f"score: expected 120/120 (as graded here), got {120 - test['max_score']:g}/120; tests: {test['name']}"


def _same_total_another_test(results: dict) -> tuple[dict, str]:
    name = results["tests"][0]["name"]
    results["tests"][0]["name"] = name + " (renamed)"
    return results, f"per-test scores: expected 98 tests as graded here, got 2 of 98 differ; tests: {name}, {name} (renamed)"


@pytest.mark.parametrize("tamper", [_one_test_lost, _same_total_another_test, None])
def test_a_gradescope_zip_that_scores_differently_is_caught(tmp_path, capsys, source_results, tamper):
    results, expected = tamper(json.loads(json.dumps(source_results))) if tamper else (None, "graded: expected no grading error, got ")
    assert len(source_results["tests"]) == 98 or tamper is not _same_total_another_test
    bundle = _fake_bundle(tmp_path / "autograder.zip", results)
    code = validate.main(("en",), tmp_path / "out", roots(tmp_path, bundle=bundle), kinds=("source", "gradescope"))
    printed = capsys.readouterr().out
    assert code == 1
    [line] = fail_lines(printed)
    assert line.startswith("FAIL ") and f"{SOURCE_EN.name} [gradescope en] {expected}" in line, line
    assert printed.splitlines()[1].split()[:2] == ["source", "en"] and printed.splitlines()[1].split()[4] == "ok"  # the source passed


# ---------------------------------------------------------------- the compare and report steps alone
def test_compare_names_what_differs_on_synthetic_outcomes():
    here = Path("nb.ipynb")
    full = Outcome(20.0, 20.0, (("a: holds", 10.0, 10.0), ("b: holds", 10.0, 10.0)))
    half = Outcome(10.0, 20.0, (("a: holds", 10.0, 10.0), ("b: holds", 0.0, 10.0)))
    checks = [Check(kind, "en", here) for kind in validate.KINDS]
    outcomes = dict(zip(checks, [half, half, Outcome(20.0, 30.0, full.tests), full]))
    lines = validate.difference_lines(validate.compare(checks, outcomes, total=20.0))
    assert lines == [
        "FAIL nb.ipynb [source en] score: expected 20/20, got 10/20; tests: b: holds",
        "FAIL nb.ipynb [release en] score: expected 0/20, got 10/20; tests: a: holds",
        "FAIL nb.ipynb [solutions en] maximum: expected 20, got 30",
        "FAIL nb.ipynb [gradescope en] score: expected 10/20 (as graded here), got 20/20; tests: b: holds",
    ]
    reordered = Outcome(10.0, 20.0, tuple(reversed(half.tests)))
    outcomes.update({checks[0]: half, checks[3]: reordered})
    [line] = [x for x in validate.difference_lines(validate.compare(checks, outcomes, 20.0)) if "gradescope" in x]
    assert line.endswith("per-test scores: expected 2 tests as graded here, got the same scores in another order")
    outcomes[checks[0]] = Outcome.failed("missing: nb.ipynb")
    assert "[gradescope en] compared: expected the source notebook graded" in "\n".join(
        validate.difference_lines(validate.compare(checks, outcomes, 20.0))
    )


def test_bad_arguments_are_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["validate", "--bundle", str(tmp_path / "none.zip"), "--out", str(out)]) == 2
    assert "m5 validate: --bundle" in capsys.readouterr().err and not out.exists()
    (tmp_path / "file").write_text("")
    assert cli.main(["validate", "--out", str(tmp_path / "file")]) == 2
    with pytest.raises(SystemExit) as info:
        cli.main(["validate", "--lang", "de"])
    assert info.value.code == 2
