"""m5 review --anonymize: the review pages, marks sheet, class report and similarity pairs under
pseudonyms, for markers and projectors; the key back to the names kept apart, written once.

The gradebooks are built synthetically (grades.json's rows with their class-report records and
written_answers.json, as m5 grade writes them; grading is slow here), plus one real `m5 grade` of
a class whose submissions are refused before grading (seconds), for the error texts a class run
really writes.
"""

from __future__ import annotations

import csv
import html
import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from autograder import cli
from autograder.export import anonymize, review
from autograder.grade import class_report, gradebook, report, shards, written
from tests.autograder.workflows.test_browser import _open, browser  # noqa: F401 - the module's Chromium fixture (tests/autograder is on sys.path)

# A student id with Cyrillic, spaces, quotes, markup, an ampersand and a bidi override; no "/"
# (it is a folder name too).
HOSTILE = "Иван \"Петров\" <img src=x onerror=alert('id')> & O'Brien \u202e 2024"
OTHERS = ("bob", "Zoë Ångström")
NOTEBOOK = "module05/m05_assignment_{}.ipynb"
TOTAL = 120.0


def _forms(text: str) -> set[str]:
    """Every form an output could hold ``text`` in."""
    return {
        text,
        report.for_terminal(text),
        report.for_csv(text),
        html.escape(text, quote=True),
        html.escape(text, quote=False),
        html.escape(report.for_terminal(text), quote=True),
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        urllib.parse.quote(text),
        review.student_key(text),  # marks.csv's key of the named sheet: a roster hashed would find it
        "Иван",
        "Петров",
    }


def _record(label: str, score: float, code: str, **extra) -> dict:
    return {
        "label": label,
        "score": score,
        "maximum": TOTAL,
        "graded": True,
        "error": "",
        "seconds": 1.0,
        "failed": [],
        "mistakes": [],
        "answers": [],
        "limits": [],
        "fingerprints": list(range(40)),
        "code": code,
        **extra,
    }


def _row(label: str, student: str, language: str, record: dict) -> dict:
    row = report.GradeRow(
        label, student, "module05", language, "", record["score"], TOTAL, [["return_to_go", record["score"]]], record["error"]
    )
    return {**report.row_dict(row), "digest": "d" + label}


def _gradebook(folder: Path, extra_student: str | None = None) -> Path:
    """A gradebook of four students as m5 grade leaves it: the hostile one handed in both languages
    and was the slowest, hit a limit and named himself in his code and answers; bob copied his code
    (with the comment naming him); Zoë's notebook could not be graded."""
    folder.mkdir(parents=True, exist_ok=True)
    mine = [f"{HOSTILE}/{NOTEBOOK.format(lang)}" for lang in ("en", "ru")]
    code = f"# by {HOSTILE}\ndef return_to_go(rewards, gamma=1.0):\n    return rewards\n"
    records = [
        _record(
            mine[0],
            40.0,
            code,
            seconds=30.0,
            limits=[["dqn_targets", f"{mine[0]}: stopped at the time limit"]],
            mistakes=[["return_to_go.no_discount", "return_to_go", "no discount", "без дисконта"]],
        ),
        _record(mine[1], 50.0, "", fingerprints=[]),
        _record(f"bob/{NOTEBOOK.format('en')}", 40.0, code),
        _record(
            f"{OTHERS[1]}/{NOTEBOOK.format('en')}",
            0.0,
            "",
            graded=False,
            error=f"{OTHERS[1]}/{NOTEBOOK.format('en')}: not valid JSON",
            fingerprints=[],
        ),
    ]
    students = [HOSTILE, HOSTILE, OTHERS[0], OTHERS[1]]
    languages = ["en", "ru", "en", "en"]
    if extra_student:
        records.append(_record(f"{extra_student}/{NOTEBOOK.format('en')}", 10.0, "", fingerprints=[]))
        students.append(extra_student)
        languages.append("en")
    rows = [_row(r["label"], s, lang, r) for r, s, lang in zip(records, students, languages)]
    shards.write_rows_file(folder, None, len(rows), list(range(len(rows))), rows, records, {"class": "c", "grader": "g"}, root="/class")
    entries = [
        {"label": mine[0], "student": HOSTILE, "notebook": "assignment", "answers": {"q01_answer": f"I am {HOSTILE}.", "q02_answer": ""}},
        {"label": mine[1], "student": HOSTILE, "notebook": "assignment", "answers": {"q01_answer": "", "q02_answer": "Ответ"}},
        {"label": f"bob/{NOTEBOOK.format('en')}", "student": "bob", "notebook": "assignment", "answers": {"q01_answer": "bob's"}},
        {"label": f"{HOSTILE}/module05/lab_en.ipynb", "student": HOSTILE, "notebook": "lab", "answers": {"answer_dagger": "DAgger"}},
    ]
    if extra_student:
        entries.append({"label": records[-1]["label"], "student": extra_student, "notebook": "assignment", "answers": {"q01_answer": "x"}})
    written.write_class_answers(folder, entries)
    gradebook.rebuild(folder)
    return folder


def _views(folder: Path) -> Path:
    return folder / review.REVIEW_DIR / anonymize.FOLDER


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(_views(folder).iterdir())}


@pytest.fixture
def book(tmp_path):
    return _gradebook(tmp_path / "grades")


def test_every_view_names_students_by_pseudonym_only(book):
    assert cli.main(["review", str(book), "--anonymize"]) == cli.EXIT_OK
    names = anonymize.pseudonyms(book, [HOSTILE, *OTHERS])
    assert sorted(names.values()) == ["Student 001", "Student 002", "Student 003"]
    files = sorted(_views(book).iterdir())
    expected = {"index.html", "q01_answer.html", review.MARKS_FILE, class_report.HTML_NAME, class_report.JSON_NAME, class_report.PAIRS_NAME}
    assert expected <= {p.name for p in files}
    forms = {f.encode("utf-8") for f in _forms(HOSTILE)}
    for path in files:
        data = path.read_bytes()
        leaked = [f for f in forms if f in data]
        assert not leaked, (path.name, leaked)
        assert "Zoë".encode() not in data and "Ångström".encode() not in data and b"bob" not in data, path.name
        assert anonymize.KEY_FILE.encode() not in data  # the pages never point at the key
    me = names[HOSTILE]
    document = json.loads((_views(book) / class_report.JSON_NAME).read_text(encoding="utf-8"))
    assert [s["submission"] for s in document["slowest"]][0] == f"{me} (en)"
    assert document["limits"] == [{"submission": f"{me} (en)", "kernel": "dqn_targets", "what": f"{me} (en): stopped at the time limit"}]
    assert document["mistakes"][0]["submissions"] == [f"{me} (en)"]
    assert document["not_graded"] == [{"submission": names[OTHERS[1]], "why": f"{names[OTHERS[1]]}: not valid JSON"}]
    (cluster,) = document["similar"]["clusters"]
    assert sorted(m["label"] for m in cluster["members"]) == sorted([f"{me} (en)", names["bob"]])
    assert all(m["code"].startswith(f"# by {me}\n") for m in cluster["members"])  # bob's copied comment too
    pairs = json.loads((_views(book) / class_report.PAIRS_NAME).read_text(encoding="utf-8"))["pairs"]
    assert {pairs[0]["a"], pairs[0]["b"]} == {f"{me} (en)", names["bob"]}
    page = (_views(book) / "q01_answer.html").read_text(encoding="utf-8")
    assert f"I am {me}." in page and page.index(names[OTHERS[0]]) > 0
    sheet = list(csv.reader((_views(book) / review.MARKS_FILE).open(encoding="utf-8")))
    assert [row[0] for row in sheet[2:]] == sorted([names[HOSTILE], names["bob"]], key=anonymize.number)  # pseudonym order
    assert all(row[0] == row[1] for row in sheet[2:])
    # the named views are untouched and still name the students (the instructor's own)
    assert not (book / review.MARKS_FILE).exists()


def test_pseudonyms_are_stable_and_the_key_is_written_once(book):
    assert cli.main(["review", str(book), "--anonymize"]) == cli.EXIT_OK
    key = book / anonymize.KEY_FILE
    before, first_views, stat = key.read_bytes(), _snapshot(book), key.stat()
    rows = list(csv.reader(key.open(encoding="utf-8")))
    assert rows[0] == anonymize.KEY_COLUMNS and {r[2] for r in rows[1:]} == {report.for_csv(HOSTILE), *OTHERS}
    assert cli.main(["review", str(book), "--anonymize", "--lang", "en"]) == cli.EXIT_OK
    assert key.read_bytes() == before and (key.stat().st_ino, key.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert _snapshot(book) == first_views  # the same pages, byte for byte
    # a student added later (m5 grade --update) gets the next number; the key's lines stay as they were
    _gradebook(book, extra_student="dave")
    assert cli.main(["review", str(book), "--anonymize", "--force"]) == cli.EXIT_OK
    after = key.read_bytes()
    assert after.startswith(before) and after[len(before) :].decode().startswith("Student 004,")
    names = {r[2]: r[0] for r in csv.reader(key.open(encoding="utf-8"))}
    assert names["dave"] == "Student 004"
    assert {v: k for k, v in anonymize.aliases(book, [HOSTILE, *OTHERS, "dave"]).items()} == {
        s: names[report.for_csv(s)] for s in (HOSTILE, *OTHERS, "dave")
    }


def test_a_new_key_draws_new_numbers_but_never_in_name_order(tmp_path):
    """The numbers are drawn at random: over a class of 30, the pseudonyms do not follow the names."""
    students = [f"student{n:02d}" for n in range(30)]
    orders = set()
    for k in range(3):
        (tmp_path / f"g{k}").mkdir()
        names = anonymize.pseudonyms(tmp_path / f"g{k}", students)
        orders.add(tuple(names[s] for s in students))
    assert len(orders) > 1 and tuple(f"Student {n:03d}" for n in range(1, 31)) not in orders


def test_marks_filled_under_pseudonyms_go_to_the_right_students(book, tmp_path):
    assert cli.main(["review", str(book), "--anonymize"]) == cli.EXIT_OK
    names = anonymize.aliases(book, [HOSTILE, *OTHERS])
    sheet = list(csv.reader((_views(book) / review.MARKS_FILE).open(encoding="utf-8")))
    ids = sheet[0][2:]
    given = {}
    for row in sheet[2:]:
        student = names[row[0]]
        given[student] = 3.0 if student == HOSTILE else 1.0
        row[2 + ids.index("q01_answer")] = f"{given[student]:g}"
        row[2 + ids.index("q02_answer")] = "1" if student == HOSTILE else row[2 + ids.index("q02_answer")]
        row[2 + ids.index("answer_dagger")] = "2" if student == HOSTILE else row[2 + ids.index("answer_dagger")]
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(sheet)
    assert cli.main(["review", str(book), "--marks", str(filled)]) == cli.EXIT_OK
    marks = gradebook.load(book).marks
    assert set(marks) == {HOSTILE, "bob"}  # the real ids, never a pseudonym
    assert marks[HOSTILE]["q01_answer"] == 3 and marks[HOSTILE]["q02_answer"] == 1 and marks[HOSTILE]["answer_dagger"] == 2
    assert sum(marks["bob"].values()) == 1
    rows = {r["submission"]: r for r in csv.DictReader((book / "grades.csv").open(encoding="utf-8"))}
    mine = report.for_csv(f"{HOSTILE}/{NOTEBOOK.format('en')}")
    assert float(rows[mine]["score"]) == 40 + 6 and float(rows[report.for_csv(f"bob/{NOTEBOOK.format('en')}")]["score"]) == 41
    # the filled sheet is not overwritten by a blank one
    with filled.open(newline="", encoding="utf-8") as fh:
        (_views(book) / review.MARKS_FILE).write_text(fh.read(), encoding="utf-8")
    assert cli.main(["review", str(book), "--anonymize"]) == cli.EXIT_USAGE
    assert cli.main(["review", str(book), "--anonymize", "--force"]) == cli.EXIT_OK
    # a row keyed by a pseudonym nobody has is refused by name
    sheet[2][0] = "Student 999"
    with filled.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(sheet)
    with pytest.raises(review.ReviewError, match="unknown key 'Student 999'"):
        review.merge_marks(book, filled)


@pytest.mark.parametrize("content", [b"student,pseudonym\nbob,Student 001\n", b"pseudonym,key,student\nStudent 1,k1,bob\n", "link"])
def test_a_key_that_is_not_ours_is_refused_and_nothing_is_written(book, content, capsys):
    key = book / anonymize.KEY_FILE
    if content == "link":
        os.symlink(book / "grades.csv", key)
    else:
        key.write_bytes(content)
    capsys.readouterr()
    assert cli.main(["review", str(book), "--anonymize"]) == cli.EXIT_USAGE
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and anonymize.KEY_FILE in said[0]
    assert not (book / review.REVIEW_DIR).exists()
    if content != "link":
        assert key.read_bytes() == content


def test_a_real_class_run_with_a_hostile_folder_leaks_nothing(tmp_path):
    """`m5 grade` of a class refused before grading (a link, a FIFO: no sandbox run), then the views."""
    submitted = tmp_path / "course" / "submitted"
    for student in (HOSTILE, "bob"):
        (submitted / student / "module05").mkdir(parents=True)
    (tmp_path / "elsewhere.ipynb").write_text("{}", encoding="utf-8")
    os.symlink(tmp_path / "elsewhere.ipynb", submitted / HOSTILE / NOTEBOOK.format("en"))
    os.mkfifo(submitted / "bob" / NOTEBOOK.format("en"))
    out = tmp_path / "grades"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", str(submitted), "--out", str(out)], capture_output=True, timeout=300
    )
    assert proc.returncode == cli.EXIT_INCOMPLETE, proc.stderr
    assert (
        json.dumps(HOSTILE, ensure_ascii=False)[1:-1].encode() in (out / class_report.JSON_NAME).read_bytes()
    )  # the named report names him
    assert cli.main(["review", str(out), "--anonymize", "--lang", "ru"]) == cli.EXIT_OK
    names = anonymize.pseudonyms(out, [HOSTILE, "bob"])
    document = json.loads((_views(out) / class_report.JSON_NAME).read_text(encoding="utf-8"))
    assert {r["submission"] for r in document["not_graded"]} == set(names.values())
    assert all(r["why"].startswith(f"{r['submission']}: refused") for r in document["not_graded"])
    forms = {f.encode("utf-8") for f in _forms(HOSTILE)} | {b"bob"}
    for path in _views(out).iterdir():
        assert not [f for f in forms if f in path.read_bytes()], path.name


def test_the_anonymized_pages_render_and_nothing_runs(browser, book):
    assert cli.main(["review", str(book), "--anonymize"]) == cli.EXIT_OK
    names = anonymize.pseudonyms(book, [HOSTILE, *OTHERS])
    page, errors, dialogs = _open(browser, _views(book) / class_report.HTML_NAME)
    assert errors == [] and dialogs == []
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert page.inner_text("#n-submissions") == "4" and names[HOSTILE] in page.inner_text("#slowest")
    assert page.locator("#similar .pair").count() == 1
    text = page.inner_text("body")
    assert "Иван" not in text and "O'Brien" not in text
    for name in ("index.html", "q01_answer.html"):
        page, errors, dialogs = _open(browser, _views(book) / name)
        assert errors == [] and dialogs == [], name
        assert page.locator("script").count() == 0 and page.locator("img").count() == 0
        assert "Иван" not in page.inner_text("body")
    assert f"I am {names[HOSTILE]}." in page.inner_text("body")


def test_without_the_flag_the_named_views_are_as_before(book, tmp_path):
    """The instructor's own pages and sheet still name the students (the round trip by key)."""
    assert cli.main(["review", str(book)]) == cli.EXIT_OK
    assert not (book / anonymize.KEY_FILE).exists() and not _views(book).exists()
    sheet = list(csv.reader((book / review.MARKS_FILE).open(encoding="utf-8")))
    assert {row[0]: row[1] for row in sheet[2:]} == {review.student_key(s): report.for_csv(s) for s in (HOSTILE, "bob")}
    assert html.escape(report.for_terminal(HOSTILE)) in (book / review.REVIEW_DIR / "q01_answer.html").read_text(encoding="utf-8")
    ids = sheet[0][2:]
    for row in sheet[2:]:
        row[2:] = ["1" if cell == "" else cell for cell in row[2:]]
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(sheet)
    assert cli.main(["review", str(book), "--marks", str(filled)]) == cli.EXIT_OK
    assert gradebook.load(book).marks[HOSTILE]["q01_answer"] == 1 and len(ids) == len(written.questions("en"))
