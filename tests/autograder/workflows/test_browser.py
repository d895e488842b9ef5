"""The generated pages in a real browser: the distribution's Chromium, headless, driven by
Playwright. They render, log no console error, and no script from student text runs.

`make test` installs Chromium as root with apt (like bubblewrap); elsewhere these tests
are skipped and say why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.grade import class_report

HOSTILE = '<script>alert("report")</script><img src=x onerror=alert("img")>'


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("no Chromium here: install the distribution's chromium package (make test does, as root with apt)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (it is in requirements.lock)")
    with sync_playwright() as playwright:
        # --no-sandbox: the tests run as root in a container, where Chromium's own sandbox cannot start
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"], headless=True)
        yield launched
        launched.close()


def _open(browser, path: Path):
    """The page at ``path``, with the console errors and dialogs it produced."""
    page = browser.new_page()
    errors, dialogs = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    return page, errors, dialogs


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_class_report_renders_and_no_student_text_runs(browser, tmp_path, lang):
    records = [
        {
            "label": HOSTILE + ".py",
            "score": 10.0,
            "maximum": 120.0,
            "graded": True,
            "error": "",
            "seconds": 1.0,
            "failed": [["dqn_targets", "terminal_rows", "dqn_targets: terminal rows", "dqn_targets: терминальные"]],
            "mistakes": [["dqn_targets.x", "dqn_targets", HOSTILE, HOSTILE]],
            "answers": [["ex09", "ex09_active_mean_nll", HOSTILE]],
            "limits": [["", HOSTILE]],
            "code": HOSTILE * 30,
            "fingerprints": list(range(40)),
        },
        {
            "label": "twin.py",
            "score": 20.0,
            "maximum": 120.0,
            "graded": True,
            "error": "",
            "seconds": 2.0,
            "failed": [],
            "mistakes": [],
            "answers": [],
            "limits": [],
            "code": "x = 1",
            "fingerprints": list(range(40)),
        },
        {
            "label": "broken.ipynb",
            "score": 0.0,
            "maximum": 120.0,
            "graded": False,
            "error": HOSTILE,
            "seconds": 0.0,
            "failed": [],
            "mistakes": [],
            "answers": [],
            "limits": [],
        },
    ]
    class_report.write(records, tmp_path, lang)
    page, errors, dialogs = _open(browser, tmp_path / class_report.HTML_NAME)
    assert errors == [] and dialogs == []
    assert page.inner_text("h1") == class_report.WORDS[lang]["title"]
    assert page.inner_text("#n-submissions") == "3" and page.inner_text("#n-graded") == "2"
    assert page.locator("svg").count() == 1 and page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert HOSTILE in page.inner_text("#mistakes")  # shown as text
    assert page.locator("#similar .pair").count() == 1


def test_the_worked_solution_pages_render_their_formulas(browser, tmp_path):
    from autograder.export.solutions import build_solution_bundle

    written = build_solution_bundle(tmp_path, lang="en", notebooks=[])
    with_math = [p for p in written if p.suffix == ".html" and "<math" in p.read_text(encoding="utf-8")]
    assert with_math
    for path in with_math[:3]:
        page, errors, dialogs = _open(browser, path)
        assert errors == [] and dialogs == [], path.name
        assert page.locator("math").count() > 0
        # the browser lays MathML out (a box with a size), not as unknown inline text
        assert page.locator("math").first.bounding_box()["height"] > 0


def test_the_review_pages_render_and_no_answer_runs(browser, tmp_path):
    import json

    from autograder.export import review
    from autograder.grade import shards, written

    entry = {"label": "a.ipynb", "student": HOSTILE, "notebook": "assignment", "answers": {"q01_answer": HOSTILE * 3}}
    (tmp_path / written.ANSWERS_FILE).write_text(json.dumps({"format": 1, "submissions": [entry]}), encoding="utf-8")
    (tmp_path / shards.ROWS_FILE).write_text(json.dumps({"format": 1, "shard": None, "class_size": 0, "rows": []}))
    for lang in ("en", "ru"):
        review.write_review(tmp_path, lang)
        for name in ("index.html", "q01_answer.html", "answer_dagger.html"):
            page, errors, dialogs = _open(browser, tmp_path / review.REVIEW_DIR / name)
            assert errors == [] and dialogs == [], name
            assert page.locator("script").count() == 0 and page.locator("img").count() == 0
        assert HOSTILE in page.inner_text("body") or review.WORDS[lang]["blank"] in page.inner_text("body")
