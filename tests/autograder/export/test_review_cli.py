"""`m5 review` through the command line: the sheet route, the marking page's route, consistency, and the refusals."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from marking_fixtures import make_gradebook  # tests/autograder is on sys.path

from autograder import cli
from autograder.export import anonymize
from autograder.grade import gradebook
from autograder.marking import model, store
from tests.autograder.marking.test_sheets import read_csv, write_csv


def m5(*argv: str) -> int:
    return cli.main(list(argv))


def test_a_markers_sheet_filled_and_merged_then_the_consistency_report(tmp_path, capsys):
    book = make_gradebook(tmp_path / "grades")
    assert m5("review", str(book), "--marker", "ann", "--questions", "q01_answer, q02_answer") == cli.EXIT_OK
    sheet = book / "marks_ann.csv"
    rows = read_csv(sheet)
    assert rows[0][:2] == ["key", "student"] and "q01_answer#1" in rows[0] and "q02_answer_comment" in rows[0]
    for row in rows[4:]:  # every item of every row earned: the best mark each
        for k, column in enumerate(rows[0]):
            if "#" in column and row[k] != "blank":
                row[k] = "x"
    write_csv(sheet, rows)
    assert m5("review", str(book), "--marks", str(sheet)) == cli.EXIT_USAGE  # ex09_explain is answered and unmarked
    assert "ex09_explain" in capsys.readouterr().err
    assert m5("review", str(book), "--marks", str(sheet), "--partial", "--csv-format", "moodle") == cli.EXIT_OK
    marks = gradebook.load(book).marks
    assert marks["alice"]["q01_answer"] == 3 and marks["bob"]["q02_answer"] == 0 and "ex09_explain" not in marks["alice"]
    assert (book / "grades_moodle.csv").exists()
    assert m5("review", str(book), "--consistency", "--marks", str(sheet)) == cli.EXIT_OK
    page = (book / "review" / "consistency.html").read_text(encoding="utf-8")
    assert "ann" in page and "<script" not in page.lower()


def test_the_marking_pages_marks_reach_the_gradebook_with_page_marks(tmp_path, capsys):
    book = make_gradebook(tmp_path / "grades")
    assert m5("review", str(book), "--page-marks") == cli.EXIT_USAGE
    assert "nothing marked on the marking page yet" in capsys.readouterr().err
    with store.MarkingStore(book, "Анна") as marked:
        marked.apply({("alice", "q01_answer"): 0}, add={"q01_answer#1", "q01_answer#2"}, comment="хорошо")
    assert m5("review", str(book), "--page-marks") == cli.EXIT_OK
    assert gradebook.load(book).marks["alice"]["q01_answer"] == 2
    decisions, _ = model.read_decisions(book)
    assert decisions[("alice", "q01_answer")].comment == "хорошо"
    assert m5("review", str(book), "--consistency", "--lang", "ru") == cli.EXIT_OK  # from the page's store
    assert "Анна" in (book / "review" / "consistency.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--serve", "--consistency"], "--serve and --consistency are separate steps"),
        (["--marker", "ann", "--marks", "x.csv"], "--marker and --questions write a marks sheet"),
        (["--questions", "q01_answer"], "give --marker NAME too"),
        (["--port", "8080"], "give --serve too"),
        (["--names"], "give --serve too"),
        (["--partial"], "give --marks FILE... too"),
        (["--marker", "ann", "--questions", "q99_answer"], "q99_answer"),
    ],
)
def test_review_options_that_do_not_go_together_are_refused_in_one_line(tmp_path, capsys, argv, says):
    book = make_gradebook(tmp_path / "grades")
    assert m5("review", str(book), *argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and err.startswith("m5 review: ")
    assert not list(book.glob("marks_*.csv"))


def test_serve_prints_its_url_shows_pseudonyms_from_the_key_and_stops_on_ctrl_c(tmp_path):
    book = make_gradebook(tmp_path / "grades")
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder.cli", "review", str(book), "--serve", "--lang", "ru"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = proc.stdout.readline()
        assert re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{40,}", line), line
        key = anonymize.aliases(book, ["alice", "bob", "carol"])  # the page's pseudonyms are the key's
        assert sorted(key.values()) == ["alice", "bob", "carol"]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err


def test_the_command_line_lists_the_review_routes_in_its_help(capsys):
    with pytest.raises(SystemExit):
        m5("review", "--help")
    text = capsys.readouterr().out
    for option in ("--serve", "--marker", "--questions", "--marks", "--partial", "--page-marks", "--consistency", "--names", "--port"):
        assert option in text
    assert Path(store.STORE_FILE).name in text.replace("\n", " ").replace("GRADES_DIR/", "")
