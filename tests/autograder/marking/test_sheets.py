"""The spreadsheet route of marking: a sheet per marker, several merged, the same gradebook as the page route."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.export import anonymize, review
from autograder.grade import gradebook, shards, written
from autograder.marking import model, sheets

HOSTILE = "=cmd|' /C calc'!A0 <script>alert(1)</script>\u202eevil\u202c"
ANSWERS = {
    "alice": {"q01_answer": "Alice on BC", "q02_answer": "Alice on DAgger", "ex09_explain": "mean"},
    "bob": {"q01_answer": "Bob on BC", "q02_answer": ""},
    "carol": {},  # nothing answered: no row in a marker's sheet
    HOSTILE: {"q02_answer": HOSTILE},
}


def record(label: str) -> dict:
    """The class-report record ``m5 grade`` keeps in a row (what the anonymized views rebuild)."""
    return {"label": label, "score": 10.0, "maximum": 120.0, "graded": True, "error": "", "seconds": 1.0, "failed": [], "mistakes": [],
            "answers": [], "limits": [], "fingerprints": [], "code": ""}  # fmt: skip


def tiny_gradebook(folder: Path, answers: dict[str, dict[str, str]] = ANSWERS) -> Path:
    """A gradebook as ``m5 grade`` leaves it (rows and written answers), without grading anything."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"label": f"s{i}/m05_assignment_en.py", "student": s, "assignment": "m05_assignment_en.py", "language": "en", "timestamp": "",
         "score": 10.0, "maximum": 120.0, "groups": [["dqn_targets", 10.0]], "error": "", "record": record(f"s{i}/m05_assignment_en.py")}
        for i, s in enumerate(answers)
    ]  # fmt: skip
    (folder / shards.ROWS_FILE).write_text(json.dumps({"format": shards.FORMAT, "shard": None, "class_size": len(rows), "rows": rows}))
    entries = [
        {"label": row["label"], "student": s, "notebook": "assignment", "answers": given_answers}
        for row, (s, given_answers) in zip(rows, answers.items())
    ]
    written.write_class_answers(folder, entries)
    return folder


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def fill(path: Path, decisions: dict[tuple[str, str], model.Decision], out: Path | None = None) -> Path:
    """The sheet at ``path`` filled with ``decisions`` as a marker would: 1 or 0 per item, the comment."""
    rows = read_csv(path)
    header = rows[0]
    students = {model.student_key(s): s for s in ANSWERS} | {s: s for s in ANSWERS}
    for row in rows[4:]:
        student = students[row[0]]
        for k, column in enumerate(header[2:], 2):
            question = column.split("#")[0].removesuffix(sheets.COMMENT_SUFFIX)
            decision = decisions.get((student, question))
            if decision is None:
                continue
            row[k] = decision.comment if column.endswith(sheets.COMMENT_SUFFIX) else "x" if column in decision.items else "0"
    return write_csv(out or path, rows)


@pytest.fixture
def book(tmp_path):
    return tiny_gradebook(tmp_path / "grades")


MARKED = {
    ("alice", "q01_answer"): model.Decision(("q01_answer#1", "q01_answer#3"), "Good; say what the mask is."),
    ("alice", "q02_answer"): model.Decision(("q02_answer#2",), ""),
    ("alice", "ex09_explain"): model.Decision(("ex09_explain#1",), ""),
    ("bob", "q01_answer"): model.Decision((), "Nothing on the state."),
    (HOSTILE, "q02_answer"): model.Decision(("q02_answer#1",), HOSTILE),
}


def test_a_markers_sheet_has_a_column_per_item_their_wording_and_only_the_students_to_mark(book):
    path = sheets.write_sheet(book, "Анна Иванова", ["q02_answer", "q01_answer"], lang="ru")
    assert path == book / "marks_Анна_Иванова.csv"
    rows = read_csv(path)
    items = model.rubric_items()
    assert rows[0] == ["key", "student", *(f"q01_answer#{k}" for k in (1, 2, 3)), *(f"q02_answer#{k}" for k in (1, 2, 3)),
                       "q01_answer_comment", "q02_answer_comment"]  # fmt: skip
    assert rows[1] == ["max", "", *["1"] * 6, "", ""]
    assert rows[2][0] == "rubric" and rows[2][2] == items["q01_answer#1"].marker["ru"] and "да" in rows[2][1]
    assert rows[3][:2] == ["marker", "Анна Иванова"]
    by_key = {row[0]: row for row in rows[4:]}
    assert set(by_key) == {model.student_key(s) for s in ("alice", "bob", HOSTILE)}  # carol answered nothing
    bob = by_key[model.student_key("bob")]
    assert bob[2:5] == ["", "", ""] and bob[5:8] == ["пусто"] * 3  # his blank q02 takes no mark
    assert by_key[model.student_key(HOSTILE)][1].startswith("'=")  # a formula shown as text


def test_a_sheet_with_marks_is_not_overwritten_unless_forced(book):
    path = sheets.write_sheet(book, "ann", ["q01_answer"])
    fill(path, MARKED)
    with pytest.raises(model.MarkingError, match="has marks in it"):
        sheets.write_sheet(book, "ann", ["q01_answer"])
    sheets.write_sheet(book, "ann", ["q01_answer"], force=True)
    assert not sheets.has_marks(path)


@pytest.mark.parametrize(
    "marker, questions, says",
    [
        ("", None, "--marker '': give a name"),
        ("a\x1b[2Jb", None, "printable"),
        ("ann", ["q99_answer"], "--questions: unknown question 'q99_answer'"),
        ("ann", [], "at least one question"),
    ],
)
def test_a_bad_marker_or_question_is_refused_and_nothing_written(book, marker, questions, says):
    with pytest.raises(model.MarkingError, match=says):
        sheets.write_sheet(book, marker, questions)
    assert not list(book.glob("marks_*"))


def test_two_markers_files_merge_into_the_same_bytes_as_the_decisions_written_directly(book, tmp_path):
    ann = fill(sheets.write_sheet(book, "ann", ["q01_answer", "ex09_explain"]), MARKED)
    ben = fill(sheets.write_sheet(book, "ben", ["q02_answer"]), MARKED)
    decisions = sheets.read_sheets(book, [ann, ben])
    assert {k: (d.items, d.comment) for k, d in decisions.items()} == {k: (d.items, d.comment) for k, d in MARKED.items()}
    assert {d.marker for k, d in decisions.items() if k[1] == "q02_answer"} == {"ben"}
    assert decisions[("alice", "q01_answer")].marker == "ann"
    page_route = shutil.copytree(book, tmp_path / "page")  # what the marking page's store exports for the same marks
    sheets.merge_sheets(book, [ann, ben], csv_format="moodle")
    answers = model.class_answers(page_route)
    model.write_marks(page_route, model.with_blank_answers(dict(MARKED), answers), model.rubric_items(), "moodle")
    for name in (gradebook.MARKS_FILE, "grades.csv", "grades_moodle.csv", gradebook.FINAL_FILE):
        assert (book / name).read_bytes() == (page_route / name).read_bytes(), name
    marks = gradebook.load(book).marks
    assert marks["alice"]["q01_answer"] == 2 and marks["bob"]["q01_answer"] == 0 and marks["bob"]["q02_answer"] == 0
    assert marks["carol"]["q01_answer"] == 0  # a blank answer is 0 without a marker
    document = json.loads((book / gradebook.MARKS_FILE).read_text(encoding="utf-8"))
    assert document["comments"][HOSTILE]["q02_answer"] == HOSTILE and "manual" not in document


def test_files_that_overlap_with_equal_decisions_are_accepted_and_different_ones_refused(book, tmp_path):
    ann = fill(sheets.write_sheet(book, "ann", ["q01_answer", "q02_answer", "ex09_explain"]), MARKED)
    ben = fill(sheets.write_sheet(book, "ben", ["q02_answer"]), MARKED)
    assert sheets.read_sheets(book, [ann, ben]) == sheets.read_sheets(book, [ann])
    other = dict(MARKED) | {("alice", "q02_answer"): model.Decision(("q02_answer#2", "q02_answer#3"))}
    fill(ben, other)
    row = next(n for n, r in enumerate(read_csv(ben), 1) if r[0] == model.student_key("alice"))
    with pytest.raises(model.MarkingError) as refused:
        sheets.merge_sheets(book, [ann, ben])
    assert str(refused.value) == (
        f"{ben}: row {row}, column 'q02_answer#3': marked differently in {ann}, row {row} (the same student's q02_answer); "
        "agree on one decision, or leave it to one file"
    )
    assert not (book / gradebook.MARKS_FILE).exists() and not (book / "grades.csv").exists()


def _edit(path: Path, row: int, column: str, value: str) -> Path:
    rows = read_csv(path)
    rows[row - 1][rows[0].index(column)] = value
    return write_csv(path, rows)


def _row_of(path: Path, student: str) -> int:
    return next(n for n, r in enumerate(read_csv(path), 1) if r[0] == model.student_key(student))


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda p: _edit(p, _row_of(p, "bob"), "key", "kmallory"), "{p}: row {bob}, column 'key': unknown key 'kmallory'"),
        (lambda p: _edit(p, 1, "q01_answer#1", "q99_answer#1"),
         "{p}: row 1, column 'q99_answer#1': unknown question 'q99_answer'; keep the header m5 review wrote"),
        (lambda p: _edit(p, 1, "q01_answer#1", "q01_answer#7"),
         "{p}: row 1, column 'q01_answer#7': unknown rubric item of q01_answer; write a new sheet (m5 review --marker)"),
        (lambda p: _edit(p, _row_of(p, "bob"), "q02_answer#1", "1"),
         "{p}: row {bob}, column 'q02_answer#1': a mark on a blank answer (it is 0 and takes no mark or comment)"),
        (lambda p: _edit(p, _row_of(p, "bob"), "q02_answer_comment", "see me"),
         "{p}: row {bob}, column 'q02_answer_comment': a mark on a blank answer (it is 0 and takes no mark or comment)"),
        (lambda p: _edit(p, _row_of(p, "alice"), "q01_answer#2", "maybe"),
         "{p}: row {alice}, column 'q01_answer#2': 'maybe' is not a mark (1, x, yes or да: the answer earns the item; 0: not)"),
        (lambda p: [_edit(p, _row_of(p, "bob"), f"q01_answer#{k}", "") for k in (1, 2, 3)][-1],
         "{p}: row {bob}, column 'q01_answer_comment': a comment, but no item marked (write 0 in an item cell to give 0)"),
        (lambda p: [_edit(p, _row_of(p, "alice"), f"q01_answer#{k}", "") for k in (1, 2, 3)]
         and _edit(p, _row_of(p, "alice"), "q01_answer_comment", ""),
         "{p}: row {alice}, column 'q01_answer#1': an answered question is not marked"),
        (lambda p: _edit(p, 2, "q02_answer#1", "2"),
         "{p}: row 2, column 'q02_answer#1': the item is worth 1, the sheet says '2'; write a new sheet (m5 review --marker)"),
        (lambda p: _edit(p, 1, "q01_answer#2", "q01_answer#1"), "{p}: row 1, column 'q01_answer#1': repeated; keep one column of each"),
        (lambda p: write_csv(p, [r for r in read_csv(p) if r[0] != model.student_key("alice")]),
         "{p}: no row for student 'alice', who answered q01_answer"),
        (lambda p: write_csv(p, [[*r, "q01_answer" if n == 0 else ""] for n, r in enumerate(read_csv(p))]),
         "{p}: row 1, column 'q01_answer': a mark and rubric items for one question; keep one or the other"),
        (lambda p: write_csv(p, [r if n < 4 else [*r, "stray"] for n, r in enumerate(read_csv(p))]),
         "{p}: row {first}: 13 cells, the header has 12"),
    ],
)  # fmt: skip
def test_each_bad_sheet_is_refused_in_one_line_naming_the_file_row_and_column_and_nothing_is_written(book, change, says):
    path = fill(sheets.write_sheet(book, "ann", ["q01_answer", "q02_answer", "ex09_explain"]), MARKED)
    expected = says.format(p=path, bob=_row_of(path, "bob"), alice=_row_of(path, "alice"), first=5)
    change(path)
    with pytest.raises(model.MarkingError) as refused:
        sheets.merge_sheets(book, [path])
    assert str(refused.value) == expected and "\n" not in expected
    assert not (book / gradebook.MARKS_FILE).exists() and not (book / "grades.csv").exists()


def test_an_answer_no_file_covers_is_refused_unless_partial(book):
    ann = fill(sheets.write_sheet(book, "ann", ["q01_answer", "ex09_explain"]), MARKED)
    with pytest.raises(model.MarkingError) as refused:
        sheets.read_sheets(book, [ann])
    said = str(refused.value)  # the first student (in id order) who answered it, their id shown as text
    assert said.startswith("no marks file has a column for q02_answer, and student ") and said.endswith(" answered it")
    assert "\u202e" not in said and "u202e" in said  # the bidi override shown as an escape, not obeyed
    assert set(sheets.read_sheets(book, [ann], partial=True)) == {k for k in MARKED if k[1] != "q02_answer"}


def test_cells_as_spreadsheets_save_them_are_read(book, tmp_path):
    path = fill(sheets.write_sheet(book, "ann", ["q01_answer", "q02_answer", "ex09_explain"]), MARKED)
    rows = read_csv(path)
    rows = [[{"x": "Да", "0": "нет"}.get(cell, cell) for cell in row] for row in rows]
    saved = tmp_path / "saved.csv"  # Excel's "CSV UTF-8" where the list separator is ";"
    with saved.open("w", newline="", encoding="utf-8-sig") as fh:
        csv.writer(fh, delimiter=";").writerows(rows)
    assert sheets.read_sheets(book, [saved]) == sheets.read_sheets(book, [path])


def test_the_older_per_question_sheet_still_merges_as_manual_marks(book):
    files = review.write_review(book)
    rows = read_csv(files[-1])
    ids = rows[0][2:]
    for row in rows[2:]:
        row[2:] = [("1,5" if q == "q01_answer" else "1") if cell == "" else cell for q, cell in zip(ids, row[2:])]  # a decimal comma
    rows[0].append("q01_answer_comment")
    rows[1].append("")
    for row in rows[2:]:
        row.append("Well argued" if row[1] == "alice" else "")
    write_csv(files[-1], rows)
    review.merge_marks(book, files[-1])
    document = json.loads((book / gradebook.MARKS_FILE).read_text(encoding="utf-8"))
    assert document["marks"]["alice"]["q01_answer"] == 1.5 and document["manual"]["alice"]["q01_answer"] == 1.5
    assert document["marks"]["carol"] == {q: 0.0 for q in ids} and document["comments"] == {"alice": {"q01_answer": "Well argued"}}
    assert document["items"]["alice"]["q01_answer"] == []
    decisions = sheets.read_sheets(book, [files[-1]])
    assert decisions[("alice", "q01_answer")] == model.Decision((), "Well argued", "marks", 1.5)


def test_the_older_sheet_gives_the_sheets_the_older_merge_gave(book, tmp_path):
    """Byte for byte the grades.csv of the marks saved the way m5 review --marks saved them before."""
    rows = read_csv(review.write_review(book)[-1])
    for row in rows[2:]:
        row[2:] = ["1" if cell == "" else cell for cell in row[2:]]
    filled = write_csv(tmp_path / "filled.csv", rows)
    before = shutil.copytree(book, tmp_path / "before")
    marks = {model.student_key(s): s for s in ANSWERS}
    gradebook.save_marks(before, {marks[row[0]]: {q: float(c) for q, c in zip(rows[0][2:], row[2:])} for row in rows[2:]})
    gradebook.rebuild(before, "canvas")
    review.merge_marks(book, filled, "canvas")
    for name in ("grades.csv", "grades_canvas.csv", gradebook.FINAL_FILE):
        assert (book / name).read_bytes() == (before / name).read_bytes(), name


def test_a_markers_sheet_beside_the_review_pages(book):
    files = review.write_review(book, lang="ru", marker="Ann", questions=["ex09_explain"])
    assert files[-1] == book / "marks_Ann.csv" and (book / review.REVIEW_DIR / "q01_answer.html").is_file()
    assert read_csv(files[-1])[0] == ["key", "student", "ex09_explain#1", "ex09_explain_comment"]
    fill(files[-1], MARKED)
    with pytest.raises(review.ReviewError, match="marks_Ann.csv has marks in it"):
        review.write_review(book, marker="Ann", questions=["ex09_explain"])
    with pytest.raises(review.ReviewError, match="--questions: unknown question 'q1'"):
        review.write_review(book, marker="Bob", questions=["q1"])
    assert not (book / "marks_Bob.csv").exists()


def test_an_anonymized_markers_sheet_names_no_student_and_merges_back(book):
    files = review.write_review(book, anonymize=True, marker="ann", questions=["q01_answer", "q02_answer", "ex09_explain"])
    path = files[-1]
    assert path == book / review.REVIEW_DIR / anonymize.FOLDER / "marks_ann.csv"
    text = path.read_text(encoding="utf-8")
    assert "alice" not in text and "bob" not in text and model.student_key("alice") not in text
    names = anonymize.pseudonyms(book, list(ANSWERS))
    rows = read_csv(path)
    assert [r[0] for r in rows[4:]] == sorted((names[s] for s in ("alice", "bob", HOSTILE)), key=anonymize.number)
    by_name = {v: k for k, v in names.items()}
    for row in rows[4:]:
        row[2:] = ["0" if cell == "" and "#" in column else cell for column, cell in zip(rows[0][2:], row[2:])]
        if by_name[row[0]] == "alice":
            row[2] = "1"
    write_csv(path, rows)
    review.merge_marks(book, [path])
    marks = gradebook.load(book).marks
    assert marks["alice"]["q01_answer"] == 1 and marks[HOSTILE]["q02_answer"] == 0 and set(marks) == set(ANSWERS)


CHOSEN = ["q01_answer", "q02_answer", "ex09_explain"]
ANSWERED = [k for k in [(s, q) for s in ANSWERS for q in CHOSEN] if ANSWERS[k[0]].get(k[1], "").strip()]
ITEMS = {q: [i for i in model.rubric_items() if i.startswith(q + "#")] for q in CHOSEN}
COMMENTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40).map(str.strip)


@st.composite
def some_decisions(draw):
    out = {}
    for student, question in ANSWERED:
        items = draw(st.lists(st.sampled_from(ITEMS[question]), unique=True))
        out[(student, question)] = model.Decision(tuple(items), draw(COMMENTS), draw(st.sampled_from(["ann", "ben"])))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(decisions=some_decisions())
def test_any_decisions_written_into_sheets_and_filled_read_back_equal(book, decisions):
    paths = []
    for marker in ("ann", "ben"):
        mine = {k: d for k, d in decisions.items() if d.marker == marker}
        questions = sorted({q for _, q in mine}) or ["q01_answer"]
        paths.append(fill(sheets.write_sheet(book, marker, questions, force=True), mine))
    assert sheets.read_sheets(book, paths) == decisions


def test_the_marking_pages_store_and_the_sheets_write_the_same_gradebook(book, tmp_path):
    """Done when the spreadsheet route and the page route give byte-identical gradebook exports for the same marks."""
    from autograder.marking.store import MarkingStore  # the page route's store: only this test needs it

    page_route = shutil.copytree(book, tmp_path / "page")
    for marker in ("ann", "ben"):
        store = MarkingStore(page_route, marker)
        try:
            for (student, question), decision in MARKED.items():
                if (question == "q02_answer") == (marker == "ben"):
                    store.apply({(student, question): 0}, add=decision.items, comment=decision.comment)
            if marker == "ben":
                store.export("moodle")
        finally:
            store.close()
    ann = fill(sheets.write_sheet(book, "ann", ["q01_answer", "ex09_explain"]), MARKED)
    ben = fill(sheets.write_sheet(book, "ben", ["q02_answer"]), MARKED)
    sheets.merge_sheets(book, [ann, ben], csv_format="moodle")
    for name in (gradebook.MARKS_FILE, "grades.csv", "grades_moodle.csv", gradebook.FINAL_FILE):
        assert (book / name).read_bytes() == (page_route / name).read_bytes(), name


def test_every_refusal_is_said_in_english_and_russian(book):
    import string  # the fields of each message: only this test reads them

    fields = {
        lang: {k: {f for _, f, _, _ in string.Formatter().parse(t) if f} for k, t in sheets.MESSAGES[lang].items()} for lang in ("en", "ru")
    }
    assert fields["en"] == fields["ru"]
    path = fill(sheets.write_sheet(book, "ann", ["q01_answer", "q02_answer", "ex09_explain"]), MARKED)
    _edit(path, _row_of(path, "bob"), "q02_answer#1", "да")
    with pytest.raises(model.MarkingError) as refused:
        sheets.read_sheets(book, [path])
    row = _row_of(path, "bob")
    assert (
        refused.value.text["ru"]
        == f"{path}: строка {row}, столбец 'q02_answer#1': отметка у пустого ответа (он равен 0, без отметок и комментария)"
    )
    assert refused.value.text["en"] == str(refused.value)


def test_markers_files_merged_one_at_a_time_keep_each_others_marks_and_a_corrected_file_replaces_its_own(book, tmp_path):
    ann = fill(sheets.write_sheet(book, "ann", ["q01_answer", "ex09_explain"]), MARKED)
    ben = fill(sheets.write_sheet(book, "ben", ["q02_answer"]), MARKED)
    together = shutil.copytree(book, tmp_path / "together")
    sheets.merge_sheets(together, [ann, ben])
    sheets.merge_sheets(book, [ann], partial=True)  # ann first; ben's questions are not marked yet
    sheets.merge_sheets(book, [ben])  # then ben: ann's marks stay, and every answer is now covered
    for name in (gradebook.MARKS_FILE, "grades.csv", gradebook.FINAL_FILE):
        assert (book / name).read_bytes() == (together / name).read_bytes(), name
    sheets.merge_sheets(book, [ben])  # a re-run changes nothing
    assert (book / gradebook.MARKS_FILE).read_bytes() == (together / gradebook.MARKS_FILE).read_bytes()
    corrected = {k: model.Decision((), "regraded") if k == ("alice", "q01_answer") else d for k, d in MARKED.items()}
    ann2 = fill(sheets.write_sheet(book, "ann", ["q01_answer", "ex09_explain"], force=True), corrected, tmp_path / "ann2.csv")
    sheets.merge_sheets(book, [ann2])
    marks = gradebook.load(book).marks
    assert marks["alice"]["q01_answer"] == 0 and marks["alice"]["q02_answer"] == gradebook.load(together).marks["alice"]["q02_answer"]
    decisions, _ = model.read_decisions(book)
    assert decisions[("alice", "q01_answer")].comment == "regraded"


def test_an_item_edited_on_the_marking_page_keeps_its_points_through_a_later_sheet_merge(book):
    items = model.rubric_items()
    edited = {
        **items,
        "q01_answer#1": model.RubricItem("q01_answer#1", "q01_answer", 0.5, items["q01_answer#1"].marker, items["q01_answer#1"].student),
    }
    page = {("alice", "q01_answer"): model.Decision(("q01_answer#1",))}
    model.write_marks(book, model.with_blank_answers(page, model.class_answers(book)), edited)
    assert gradebook.load(book).marks["alice"]["q01_answer"] == 0.5
    ben = fill(sheets.write_sheet(book, "ben", ["q02_answer"]), MARKED)
    sheets.merge_sheets(book, [ben], partial=True)
    assert gradebook.load(book).marks["alice"]["q01_answer"] == 0.5  # not re-scored with the rubric file's 1 point
