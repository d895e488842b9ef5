"""m5 feedback: one self-contained page per student, and the Moodle and Canvas bulk-upload archives."""

from __future__ import annotations

import csv
import html
import json
import re
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from autograder import cli
from autograder.export import feedback, feedback_lms, review
from autograder.grade import gradebook, outputs, report, shards, written

# tests/autograder is on sys.path
from tests.autograder.grade.test_atomic_writes import killed_everywhere
from tests.autograder.workflows.test_browser import _open, browser  # noqa: F401 - the fixture, shared

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert("img")></style>\u202eevil\u202c'
REASON = "regrade: <img src=y onerror=alert('reason')> accepted"
COMMENT = "good, but see </style><script>alert('comment')</script>"


# ---------------------------------------------------------------- the LMS's own naming, as their code reads it
def moodle_folder(full_name: str, participant: int, before_41: bool) -> str:
    """A participant's folder in Moodle's "Download all submissions" (mod/assign: the name's
    underscores become spaces; Moodle 4.1 dropped the trailing underscore)."""
    return f"{full_name.replace('_', ' ')}_{participant}_assignsubmission_file" + ("_" if before_41 else "")


def moodle_import(path: str, participants: set[int]) -> tuple[int, str] | None:
    """What Moodle's feedback-zip importer makes of one file of the zip (assignfeedback_file's
    importziplib: each path part split at "_" into at most five fields, the first naming a known
    participant and a plugin wins; the rest of the path is the feedback file's name)."""
    if PurePosixPath(path).name.startswith((".", "~")):
        return None  # hidden files are skipped
    parts = path.split("/")
    while parts:
        info = parts.pop(0).split("_", 4)
        if len(info) < 4 or not info[1].isdigit() or int(info[1]) not in participants:
            continue
        if (info[2], info[3]) != ("assignsubmission", "file"):
            continue
        parts.insert(0, info[4] if len(info) == 5 else "")
        return int(info[1]), "/".join(parts)
    return None


def canvas_download(sortable_name: str, user: int, attachment: int, file: str, late: bool = False) -> str:
    """A file's name in Canvas's "Download Submissions" (ContentZipper: the sortable name without
    non-word characters, LATE when late, the user id, lower case; then the attachment id and name)."""
    prefix = re.sub(r"[^\w]", "", "_".join([sortable_name, *(["LATE"] if late else []), str(user)])).lower()
    return f"{prefix}_{attachment}_{file}"


def canvas_upload(name: str) -> tuple[str, str] | None:
    """(user id, attachment id) Canvas's submissions upload reads from a file's base name."""
    fields = [f for f in PurePosixPath(name).name.split("_") if f != "LATE"]
    if fields[0] == "anon":
        return ("anon:" + fields[1], fields[2])
    ids = [f for f in fields if f.isdigit()][:2]
    return (ids[0], ids[1]) if len(ids) == 2 else None


# ---------------------------------------------------------------- a graded class
JANE = moodle_folder("Jane Doe", 12345, before_41=False)
IVAN = moodle_folder("Иван Петров", 67890, before_41=True)
CANVAS = canvas_download("Doe, John", 777, 8888, "m05_assignment_en.py", late=True)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, corpus):
    """A class from two LMS downloads and a plain folder, graded, with written answers marked
    (a comment column), an adjustment, and the feedback written into ``grades/feedback``."""
    from autograder.demo import CORRECT, DEMO

    root = tmp_path_factory.mktemp("feedback")
    correct = CORRECT.read_text(encoding="utf-8")
    partly = correct + "\n\n" + (DEMO / "partly_wrong.fragment.py").read_text(encoding="utf-8")
    russian = "# Решение студента: ядра модуля пять, написанные по контрактам задания, с проверкой входов.\n" * 6
    russian += "\n".join(line for line in correct.splitlines() if not line.lstrip().startswith("#"))
    files = {
        f"{JANE}/m05_assignment_en.py": correct,
        f"{IVAN}/m05_assignment_ru.py": russian,
        CANVAS: partly,
        "bob/homework.py": partly,
    }
    for name, text in files.items():
        (root / "class" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "class" / name).write_text(text, encoding="utf-8")
    out = root / "grades"
    assert cli.main(["grade", str(root / "class"), "--no-shrink", "--out", str(out)]) == 0
    book = gradebook.load(out)
    bob = next(r["student"] for r in book.rows if r["label"] == "bob/homework.py")
    entries = [
        {"label": "bob/homework.py", "student": bob, "notebook": "assignment", "answers": {"q01_answer": HOSTILE, "ex09_explain": "mean"}}
    ]
    written.write_class_answers(out, entries)
    assert cli.main(["review", str(out)]) == 0
    sheet = list(csv.reader((out / review.MARKS_FILE).open(encoding="utf-8")))
    sheet[0].append("q01_answer_comment")
    sheet[1].append("")
    for row in sheet[2:]:
        row[2:] = [("2" if question == "q01_answer" else "1") if cell == "" else cell for question, cell in zip(sheet[0][2:], row[2:])]
        row.append(COMMENT)
    with (root / "filled.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(sheet)
    assert cli.main(["review", str(out), "--marks", str(root / "filled.csv")]) == 0
    assert cli.main(["adjust", str(out), bob, "1.5", "--reason", REASON, "--item", "ex13"]) == 0
    assert cli.main(["feedback", str(out)]) == 0
    return out


def _page(folder: Path, student: str) -> str:
    return (folder / feedback.FEEDBACK_DIR / feedback.page_name(student)).read_text(encoding="utf-8")


def _text(page: str) -> str:
    """A page's text as a reader sees it (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page.split("</style>", 1)[1]))


def test_one_page_per_student_an_index_and_both_archives(graded):
    book = gradebook.load(graded)
    students = {r["student"] or r["label"] for r in book.rows}
    pages = sorted(p.name for p in (graded / feedback.FEEDBACK_DIR).glob("*.html") if p.name != feedback.INDEX_NAME)
    assert pages == sorted(feedback.page_name(s) for s in students) and len(pages) == 4
    index = (graded / feedback.FEEDBACK_DIR / feedback.INDEX_NAME).read_text(encoding="utf-8")
    assert all(f'href="{name}"' in index for name in pages)
    assert {p.name for p in (graded / feedback.FEEDBACK_DIR).glob("*.zip")} == {feedback_lms.MOODLE_ZIP, feedback_lms.CANVAS_ZIP}


def test_a_page_shows_the_totals_the_tests_and_the_written_marks(graded):
    book = gradebook.load(graded)
    row = next(r for r in book.rows if r["label"] == "bob/homework.py")
    total = next(line for line in gradebook.sheet_rows(book) if line.label == row["label"])
    page = _page(graded, row["student"])
    text = " ".join(_text(page).split())
    assert f"{total.score:g} of {total.maximum:g}" in text  # the sheets' total, out of 167
    assert "Failing input: dqn_targets(" in text and "expected:" in text  # results.json's counterexample
    assert re.search(r"dqn_targets \d+ of 10", text) and re.search(r"ex09 \d+ of 3", text)  # per kernel and exercise
    assert report.for_terminal(HOSTILE) in text and COMMENT in text and REASON in text  # answer, comment, reason: as text
    assert "\\u202eevil" in text  # the bidi override shown, not obeyed
    assert written.questions("en")[0]["id"] in text and "2 of 3" in text  # q01's mark out of its points
    rubric = review_rubric_item("q01_answer", "en")
    assert rubric in text  # what a full answer covers, in the student's words
    assert "<script" not in page and "<img" not in page and page.count("</style>") == 1
    assert 'name="viewport"' in page and "default-src 'none'" in page


def review_rubric_item(qid: str, lang: str) -> str:
    from autograder.assign import rubrics

    return rubrics.load()[qid].items[0].student[lang]


def test_pages_speak_each_submissions_language_or_the_one_asked(graded, tmp_path):
    book = gradebook.load(graded)
    ivan = next(r for r in book.rows if r["label"].startswith(IVAN))
    assert ivan["language"] == "ru"
    assert 'lang="ru"' in _page(graded, ivan["student"]) and "Итоговая оценка" in _page(graded, ivan["student"])
    jane = next(r for r in book.rows if r["label"].startswith(JANE))
    assert 'lang="en"' in _page(graded, jane["student"])
    assert cli.main(["feedback", str(graded), "--out", str(tmp_path / "ru"), "--lang", "ru"]) == 0
    page = (tmp_path / "ru" / feedback.page_name(jane["student"])).read_text(encoding="utf-8")
    assert 'lang="ru"' in page and "Баллы по ядрам и упражнениям" in page and "Final mark" not in page


def test_the_moodle_archive_is_what_moodles_importer_maps_to_each_participant(graded):
    with zipfile.ZipFile(graded / feedback.FEEDBACK_DIR / feedback_lms.MOODLE_ZIP) as archive:
        names = archive.namelist()
        mapped = {moodle_import(name, {12345, 67890}) for name in names}
        assert {(pid, PurePosixPath(file).name) for pid, file in mapped} == {(12345, "feedback.html"), (67890, "feedback.html")}
        assert set(names) == {f"{JANE}/feedback.html", f"{IVAN}/feedback.html"}  # each in its download folder
        book = gradebook.load(graded)
        jane = next(r["student"] for r in book.rows if r["label"].startswith(JANE))
        assert archive.read(f"{JANE}/feedback.html") == _page(graded, jane).encode("utf-8")
    with zipfile.ZipFile(graded / feedback.FEEDBACK_DIR / feedback_lms.CANVAS_ZIP) as archive:
        assert [canvas_upload(name) for name in archive.namelist()] == [("777", "8888")]
        assert archive.namelist() == ["doejohn_late_777_8888_feedback.html"]


@pytest.mark.parametrize(
    "label, entry",
    [
        (f"{moodle_folder('Ann_Lee', 5, True)}/sub/x.ipynb", "Ann Lee_5_assignsubmission_file_/feedback.html"),
        (f"{moodle_folder('Ann Lee', 5, False)}/x.ipynb", "Ann Lee_5_assignsubmission_file/feedback.html"),
        ("Ann Lee_5_assignsubmission_file_x.ipynb", "Ann Lee_5_assignsubmission_file_feedback.html"),  # Moodle 3.0's flat zip
        ("Participant_88_assignsubmission_file/x.ipynb", "Participant_88_assignsubmission_file/feedback.html"),  # blind marking
        ("course/Ann Lee_5_assignsubmission_file/x.py", "Ann Lee_5_assignsubmission_file/feedback.html"),
        ("alice/module05/m05_assignment_en.ipynb", None),
        ("Ann Lee_x5_assignsubmission_file/x.py", None),
        ("Ann Lee_5_assignfeedback_file/x.py", None),
    ],
)
def test_moodle_names(label, entry):
    assert feedback_lms.moodle_entry(label) == entry
    if entry is not None:
        assert moodle_import(entry, {5, 88}) is not None


@pytest.mark.parametrize(
    "label, ids",
    [
        (canvas_download("Doe, John", 12, 345, "m05_assignment_en.ipynb"), ("12", "345")),
        (canvas_download("Петров, Иван", 12, 345, "m05_assignment_ru.ipynb", late=True), ("12", "345")),
        (canvas_download("Lee, Ann 2", 12, 345, "hw_2_1.ipynb"), ("12", "345")),
        ("anon_Xa7Qz_345_m05.ipynb", ("anon:Xa7Qz", "345")),
        ("alice/module05/m05_assignment_en.ipynb", None),
        ("12_345_m05.ipynb", None),  # no name before the ids: not a download's
        ("Doe John_12_345_x.py", None),  # a space: Canvas keeps word characters only
        ("doejohn_12_x_345_a.py", None),  # the ids not side by side
    ],
)
def test_canvas_names(label, ids):
    entry = feedback_lms.canvas_entry(label)
    assert (canvas_upload(entry) if entry else None) == ids
    if ids is not None:
        assert canvas_upload(label) == ids and entry.endswith("_feedback.html") and "/" not in entry


def test_the_same_gradebook_gives_the_same_bytes(graded, tmp_path):
    assert cli.main(["feedback", str(graded), "--out", str(tmp_path / "a")]) == 0
    assert cli.main(["feedback", str(graded), "--out", str(tmp_path / "b")]) == 0
    first = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()}
    assert first == {p.name: p.read_bytes() for p in (tmp_path / "b").iterdir()}
    assert first == {p.name: p.read_bytes() for p in (graded / feedback.FEEDBACK_DIR).iterdir()}


def test_a_missing_or_broken_results_file_is_said_on_the_page(graded, tmp_path):
    import shutil

    copy = tmp_path / "grades"
    shutil.copytree(graded, copy)
    book = gradebook.load(copy)
    folders = report.output_dirs([r["label"] for r in book.rows], reserved=report.CLASS_FILES)
    (copy / folders[0] / report.RESULTS_NAME).unlink()
    (copy / folders[1] / report.RESULTS_NAME).write_text('{"tests": [{"name": 1}]}')
    (copy / folders[2] / report.RESULTS_NAME).write_bytes(b"\xff not json")
    assert cli.main(["feedback", str(copy)]) == 0
    for k, why in enumerate(("missing", "not in the grader's format", "unreadable")):
        row = book.rows[k]
        page = _page(copy, row["student"] or row["label"])
        assert f"(results.json) are {why}" in " ".join(_text(page).split()), row["label"]


def test_the_command_names_the_submissions_no_archive_takes(graded, tmp_path, capsys):
    capsys.readouterr()
    assert cli.main(["feedback", str(graded), "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("wrote 4 feedback pages and index.html")
    moodle = next(line for line in said if line.startswith(feedback_lms.MOODLE_ZIP))
    assert moodle.startswith(f"{feedback_lms.MOODLE_ZIP}: 2 feedback files; not packaged (not from a Moodle download): ")
    assert CANVAS in moodle and "bob/homework.py" in moodle and JANE not in moodle
    canvas = next(line for line in said if line.startswith(feedback_lms.CANVAS_ZIP))
    assert canvas.startswith(f"{feedback_lms.CANVAS_ZIP}: 1 feedback file; not packaged") and CANVAS not in canvas
    (tmp_path / "a file").write_text("x")
    assert cli.main(["feedback", str(graded), "--out", str(tmp_path / "a file")]) == cli.EXIT_USAGE


def test_an_unreadable_gradebook_is_refused_and_nothing_is_written(tmp_path, capsys):
    (tmp_path / shards.ROWS_FILE).write_text("{not json")
    assert cli.main(["feedback", str(tmp_path)]) == cli.EXIT_USAGE
    assert not (tmp_path / feedback.FEEDBACK_DIR).exists()
    assert "unreadable" in capsys.readouterr().err
    assert cli.main(["feedback", str(tmp_path / "nothing")]) == cli.EXIT_USAGE


# ---------------------------------------------------------------- a hostile gradebook (no grading)
NAMES = [
    HOSTILE,
    "../../etc/passwd",
    "a/b\\c d:e*f?",
    "Иван Петров " * 20,
    "lone\udcffsurrogate",
    "Bob",
    "bob",
    ".hidden",
    "",
]


def hostile_gradebook(folder: Path) -> Path:
    """A gradebook whose students, files, answers, results, comments and reasons are hostile text."""
    folder.mkdir(parents=True)
    rows = []
    for i, name in enumerate(NAMES):
        folder_name = name if len(name.encode("utf-8", "surrogateescape")) < 200 else f"long{i}"  # a folder's name has at most 255 bytes
        label = f"{folder_name}/m05_assignment_{'ru' if i % 2 else 'en'}.py" if name else "nameless.py"
        record = {"answers": [["ex09", "ex09_active_mean_nll", HOSTILE], ["ex09", "ex09_all_positions_mean", None]]}
        groups = [["dqn_targets", 3.0], ["ex09", 1.0]]
        rows.append(
            {"label": label, "student": name, "assignment": "", "language": "ru" if i % 2 else "en", "timestamp": "", "score": 4.0,
             "maximum": 120.0, "groups": groups, "error": HOSTILE if i == 2 else "", "record": record}
        )  # fmt: skip
    document = {"format": 2, "shard": None, "class_size": len(rows), "rows": rows}
    (folder / shards.ROWS_FILE).write_text(json.dumps(document), encoding="ascii")  # "\udcff" escaped: valid JSON
    tests = [
        {"name": "dqn_targets: matches the reference on random batches", "score": 0, "max_score": 2, "status": "failed",
         "output": "FAILED\nproblem: " + report.for_feedback(HOSTILE) + "\n" + HOSTILE},
        {"name": "ex09: numerical answer ex09_active_mean_nll", "score": 0, "max_score": 1, "status": "failed", "output": HOSTILE},
        {"name": HOSTILE, "score": 1, "max_score": 1, "status": "passed", "output": "passed"},
    ]  # fmt: skip
    for _row, where in zip(rows, report.output_dirs([r["label"] for r in rows], reserved=report.CLASS_FILES)):
        (folder / where).mkdir(parents=True)
        (folder / where / report.RESULTS_NAME).write_text(json.dumps({"output": HOSTILE, "tests": tests}), encoding="ascii")
    students = [r["student"] or r["label"] for r in rows]
    entries = [
        {"label": r["label"], "student": s, "notebook": "assignment", "answers": {"q01_answer": HOSTILE * 3}}
        for r, s in zip(rows, students)
    ]
    (folder / written.ANSWERS_FILE).write_text(json.dumps({"format": 1, "submissions": entries}), encoding="ascii")
    marks = {s: {"q01_answer": 1.0} for s in students}
    comments = {s: {"q01_answer": COMMENT + HOSTILE} for s in students}
    (folder / gradebook.MARKS_FILE).write_text(json.dumps({"format": 1, "marks": marks, "comments": comments}), encoding="ascii")
    with (folder / gradebook.ADJUSTMENTS_FILE).open("w", newline="", encoding="utf-8") as fh:
        sheet = csv.writer(fh)
        sheet.writerow(gradebook.ADJUSTMENT_COLUMNS)
        for s in students:
            if "\udcff" not in s:  # a lone surrogate cannot be UTF-8 text
                sheet.writerow([s, "-1", HOSTILE, REASON + HOSTILE, "teacher", "2026-12-24 10:00:00 UTC"])
    return folder


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = hostile_gradebook(tmp_path_factory.mktemp("hostile") / "grades")
    feedback.write_feedback(folder, folder / "feedback")
    return folder


def test_hostile_names_give_safe_distinct_file_names():
    names = [feedback.page_name(n) for n in NAMES]
    assert len(set(names)) == len(NAMES) and len({n.lower() for n in names}) == len(NAMES)  # Bob and bob too
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,60}-[0-9a-f]{10}\.html|student-[0-9a-f]{10}\.html", name), name
        assert ".." not in name and len(name) <= 64
    assert feedback.page_name("Иван Петров").startswith("Ivan_Petrov-")


def test_hostile_text_is_shown_as_text(hostile):
    pages = sorted((hostile / "feedback").glob("*.html"))
    assert len(pages) == len(NAMES) + 1 and all(p.parent == hostile / "feedback" for p in pages)
    for path in pages:
        page = path.read_text(encoding="utf-8")
        assert "<script" not in page and "<img" not in page and page.count("</style>") == 1, path.name
        assert "\u202e" not in page and "\udcff" not in page, path.name  # bidi and lone surrogates as visible escapes
    hostile_page = (hostile / "feedback" / feedback.page_name(HOSTILE)).read_text(encoding="utf-8")
    text = _text(hostile_page)
    assert '<script>alert("x")</script><img src=x onerror=alert("img")></style>\\u202eevil\\u202c' in text
    assert REASON in text and COMMENT in text
    assert "\\udcff" in (hostile / "feedback" / feedback.page_name("lone\udcffsurrogate")).read_text(encoding="utf-8")


def test_the_late_policy_and_an_extension_are_shown(hostile, tmp_path, monkeypatch):
    late = gradebook.Lateness(
        submitted="2026-12-21T10:00:00+03:00",
        source="Moodle worksheet",
        due="2026-12-20T23:59:00+03:00",
        extension="2026-12-22T23:59:00+03:00: " + HOSTILE,
        late_hours=10.02,
        penalty_percent=10.0,
        penalty_points=0.4,
    )
    monkeypatch.setattr(gradebook, "lateness", lambda book: {row["label"]: late for row in book.rows})
    monkeypatch.setattr(gradebook, "policy_lines", lambda book, lang: [f"due 2026-12-20 ({lang})", "10 % a day, at most 50 %"])
    feedback.write_feedback(hostile, tmp_path)
    for name, lang in ((HOSTILE, "en"), ("../../etc/passwd", "ru")):
        text = " ".join(_text((tmp_path / feedback.page_name(name)).read_text(encoding="utf-8")).split())
        assert f"due 2026-12-20 ({lang})" in text and "10 % a day, at most 50 %" in text
        assert "−0.4 (10 %)" in text and "Moodle worksheet" in text and "2026-12-22T23:59:00+03:00" in text
        assert "<script>alert(" in text


def test_a_failed_write_leaves_no_half_page(tmp_path, monkeypatch):
    hostile = hostile_gradebook(tmp_path / "grades")
    out = tmp_path / "out"
    feedback.write_feedback(hostile, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = []

    def failing(tmp, path):
        calls.append(path)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(tmp, path)

    real = outputs._replace
    monkeypatch.setattr(outputs, "_replace", failing)
    adjustments = hostile / gradebook.ADJUSTMENTS_FILE
    adjustments.write_text(adjustments.read_text(encoding="utf-8").replace(",-1,", ",-2,"), encoding="utf-8")  # new pages
    with pytest.raises(OSError, match="disk full"):
        feedback.write_feedback(hostile, out)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(after) == set(before)  # no temporary file left
    changed = [name for name in after if after[name] != before[name]]
    assert len(changed) == 2 and all(after[name].endswith(b"</html>\n") for name in after)  # two new pages, whole


def test_a_killed_feedback_run_leaves_every_file_whole(tmp_path):
    previous = hostile_gradebook(tmp_path / "previous")
    renames = killed_everywhere(tmp_path, lambda out: ["feedback", str(out)], previous, points=lambda n: sorted({1, n // 2, n}))
    assert renames == len(NAMES) + 1  # the pages and the index (no download: no archive)


# ---------------------------------------------------------------- in a browser
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_pages_render_in_chromium_and_no_student_text_runs(browser, hostile, graded, tmp_path, lang):
    feedback.write_feedback(hostile, tmp_path / "hostile", lang)
    pages = sorted((tmp_path / "hostile").glob("*.html"))
    if lang == "en":  # the graded class's pages in their own languages
        pages += sorted((graded / feedback.FEEDBACK_DIR).glob("*.html"))
    page = browser.new_page()  # one tab, each page loaded in turn
    errors, dialogs = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path in pages:
        page.goto(path.resolve().as_uri())
        page.wait_for_load_state("load")
        assert errors == [] and dialogs == [], path.name
        assert page.locator("script").count() == 0 and page.locator("img").count() == 0, path.name
        if path.name != feedback.INDEX_NAME and path.parent.name == "hostile":
            assert page.inner_text("h1").startswith(feedback.WORDS[lang]["title"] + ":")
    page.close()
    page, errors, dialogs = _open(browser, tmp_path / "hostile" / feedback.page_name(HOSTILE))
    assert '<script>alert("x")</script>' in page.inner_text("h1") and errors == [] and dialogs == []
    page.set_viewport_size({"width": 360, "height": 740})  # a phone: the page fits its width
    assert page.evaluate("document.documentElement.scrollWidth") <= 360 + 1


# ---------------------------------------------------------------- the rubric items a marker applied
def applied_gradebook(folder: Path) -> Path:
    """A small gradebook marked by rubric items (written_marks.json of format 2): a positive item,
    a deduction a marker added while marking (hostile wording), a comment; and an answer given a number."""
    from autograder.marking import model
    from tests.autograder.marking.test_sheets import tiny_gradebook  # tests/autograder is on sys.path

    tiny_gradebook(folder, {"alice": {"q01_answer": "BC", "q02_answer": "DAgger"}, "bob": {"q01_answer": "x"}})
    items = model.rubric_items()
    deduction = model.RubricItem("q01_answer#n1", "q01_answer", -1.0, {"en": "m", "ru": "м"}, {"en": HOSTILE, "ru": "Путаница " + HOSTILE})
    items[deduction.id] = deduction
    decisions = {
        ("alice", "q01_answer"): model.Decision(("q01_answer#1", "q01_answer#2", "q01_answer#n1"), COMMENT, "ann"),
        ("alice", "q02_answer"): model.Decision((), "", "ann", manual=2.0),
        ("bob", "q01_answer"): model.Decision((), "Nothing yet", "ann"),
    }
    model.write_marks(folder, model.with_blank_answers(decisions, model.class_answers(folder)), items)
    return folder


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_items_a_marker_applied_reach_the_students_page_in_their_language(tmp_path, lang):
    from autograder.assign import rubrics

    folder = applied_gradebook(tmp_path / "grades")
    feedback.write_feedback(folder, folder / "feedback", lang)
    w = feedback.WORDS[lang]
    page = (folder / "feedback" / feedback.page_name("alice")).read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and page.count("</style>") == 1 and "\u202e" not in page
    text = " ".join(_text(page).split())
    first, second = (rubrics.load()["q01_answer"].items[k].student[lang] for k in (0, 1))
    assert f"q01_answer: 1 {w['of']} 3" in text  # two items, one deduction
    assert f"{w['applied']}: {first} (+1) {second} (+1) {w['deduction']} : " in text  # the span's tag read as a space
    assert ("Путаница " if lang == "ru" else "") + report.for_terminal(HOSTILE) + " (−1)" in text
    assert COMMENT in text and w["rubric"] in text
    q02 = text.split("q02_answer:", 1)[1].split("q03_answer", 1)[0]
    assert f"2 {w['of']} 3" in q02 and w["applied"] not in q02  # a number, not items: the rubric alone, as before
    bob = " ".join(_text((folder / "feedback" / feedback.page_name("bob")).read_text(encoding="utf-8")).split())
    assert f"{w['applied']}: {w['none']}" in bob and "Nothing yet" in bob


def test_marks_of_the_older_format_show_as_before(hostile):
    page = (hostile / "feedback" / feedback.page_name("bob")).read_text(encoding="utf-8")
    assert 'class="applied"' not in page and feedback.WORDS["en"]["rubric"] in _text(page)
