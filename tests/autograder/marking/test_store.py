"""The marking store (autograder/marking/store.py): several markers on one gradebook, no mark lost.

Each gradebook here is written directly (:mod:`marking_fixtures`), so a test costs milliseconds;
the kill test runs real processes that mark in a loop and are SIGKILLed at random moments.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import string
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

# tests/autograder is on sys.path
from marking_fixtures import CLASS, make_gradebook

from autograder.grade import gradebook, written
from autograder.marking import model
from autograder.marking import store as store_module
from autograder.marking.store import STORE_FILE, ConflictError, MarkingStore

Q1, Q2 = "q01_answer", "q02_answer"
HOSTILE = "<script>alert('x')</script>\u202eevil\u202c\x00\ud800 \udfff «ответ» </textarea>\r\n\t" + "😀"


@pytest.fixture()
def book(tmp_path) -> Path:
    return make_gradebook(tmp_path / "grades")


def state(store: MarkingStore) -> tuple:
    """Everything a refused action must leave as it was."""
    return store.decisions(), store.item_versions(), store.items(), store.history(), store.detached(), store.progress()


def nonzero(marks: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The marks other than 0 (a blank answer's 0 is in every export)."""
    return {s: {q: m for q, m in row.items() if m} for s, row in marks.items() if any(row.values())}


def one_line(error: model.MarkingError, *words: str) -> None:
    """A refusal: one line in English (naming ``words``) and one in Russian."""
    message = str(error)
    assert "\n" not in message and all(w in message for w in words), message
    assert set(error.text) == {"en", "ru"} and "\n" not in error.text["ru"] and error.text["ru"] != message


# ------------------------------------------------------------------ several markers
def test_two_markers_conflict_on_one_answer_and_not_on_different_ones(book):
    with MarkingStore(book, "ann") as ann, MarkingStore(book, "Борис") as boris:
        seen = ann.decision("alice", Q1)[1]
        assert seen == boris.decision("alice", Q1)[1] == 0
        assert ann.apply({("alice", Q1): seen}, add={f"{Q1}#1"}, comment="good") == {("alice", Q1): 1}
        with pytest.raises(ConflictError) as caught:
            boris.apply({("alice", Q1): seen}, add={f"{Q1}#3"})
        one_line(caught.value, "alice", Q1, "ann", "version 1, you saw 0")
        assert caught.value.conflicts[0][:3] == ("alice", Q1, "ann")
        decision, version = boris.decision("alice", Q1)
        assert (decision.items, decision.comment, decision.marker, version) == ((f"{Q1}#1",), "good", "ann", 1)
        # each on another answer: no conflict, both kept
        assert boris.apply({("carol", Q1): 0}, add={f"{Q1}#2"}) == {("carol", Q1): 1}
        assert ann.apply({("alice", Q2): 0}, add={f"{Q2}#1"}) == {("alice", Q2): 1}
        assert boris.apply({("alice", Q1): 1}, add={f"{Q1}#3"}) == {("alice", Q1): 2}  # after a reload
        assert {k: d.items for k, d in ann.decisions().items()} == {
            ("alice", Q1): (f"{Q1}#1", f"{Q1}#3"),
            ("alice", Q2): (f"{Q2}#1",),
            ("carol", Q1): (f"{Q1}#2",),
        }
        assert ann.decisions()[("alice", Q1)].marker == "Борис"


def test_a_group_action_is_all_or_nothing(book):
    with MarkingStore(book, "ann") as ann, MarkingStore(book, "bob") as bob:
        bob.apply({("bob", Q1): 0}, add={f"{Q1}#2"})
        before = state(ann)
        group = {("alice", Q1): 0, ("bob", Q1): 0, ("carol", Q1): 0}  # bob's answer changed meanwhile
        with pytest.raises(ConflictError) as caught:
            ann.apply(group, add={f"{Q1}#1"}, comment="same")
        one_line(caught.value, "bob", Q1)
        assert "alice" not in str(caught.value) and state(ann) == before
        assert ann.apply({**group, ("bob", Q1): 1}, add={f"{Q1}#1"}, comment="same") == {k: 1 + (k[0] == "bob") for k in group}
        assert {k: (d.items, d.comment) for k, d in bob.decisions().items()} == {
            ("alice", Q1): ((f"{Q1}#1",), "same"),
            ("bob", Q1): ((f"{Q1}#1", f"{Q1}#2"), "same"),
            ("carol", Q1): ((f"{Q1}#1",), "same"),
        }
        assert len({h["seq"] for h in ann.history() if h["kind"] == "apply"}) == 2  # the group is one action


def test_a_group_with_a_blank_answer_is_refused_whole(book):
    with MarkingStore(book, "ann") as ann:
        before = state(ann)
        with pytest.raises(model.MarkingError) as caught:
            ann.apply({("alice", Q2): 0, ("bob", Q2): 0}, add={f"{Q2}#1"})
        one_line(caught.value, "bob", Q2, "blank")
        assert state(ann) == before


def test_editing_an_item_remarks_every_answer_carrying_it_and_the_gradebook(book):
    with MarkingStore(book, "ann") as ann, MarkingStore(book, "bob") as bob:
        ann.apply({("alice", Q1): 0, ("carol", Q1): 0}, add={f"{Q1}#1", f"{Q1}#2"})
        ann.apply({("bob", Q1): 0}, add={f"{Q1}#2"})
        ann.export()
        marks = json.loads((book / gradebook.MARKS_FILE).read_text(encoding="utf-8"))["marks"]
        assert nonzero(marks) == {"alice": {Q1: 2.0}, "bob": {Q1: 1.0}, "carol": {Q1: 2.0}}
        assert marks["bob"][Q2] == 0.0 and set(marks["bob"]) == set(model.questions()) - {"ex09_explain"}  # blanks count 0; unmarked: none
        edited = bob.edit_item(f"{Q1}#1", version=1, points=0.5, student_text={"en": "part (a)", "ru": "часть (a)"})
        assert (edited.points, edited.student, ann.item_versions()[f"{Q1}#1"]) == (0.5, {"en": "part (a)", "ru": "часть (a)"}, 2)
        assert ann.marks(Q1) == {("alice", Q1): 1.5, ("bob", Q1): 1.0, ("carol", Q1): 1.5}
        with pytest.raises(ConflictError) as caught:
            ann.edit_item(f"{Q1}#1", version=1, points=2)
        one_line(caught.value, f"{Q1}#1", "bob")
        assert ann.items()[f"{Q1}#1"].points == 0.5
        path = ann.export()
    document = json.loads(path.read_text(encoding="utf-8"))
    assert nonzero(document["marks"]) == {"alice": {Q1: 1.5}, "bob": {Q1: 1.0}, "carol": {Q1: 1.5}}
    assert document["rubric"][f"{Q1}#1"]["points"] == 0.5
    sheet = (book / "grades.csv").read_text(encoding="utf-8")
    assert ",101.5,167," in sheet and ",101,167," in sheet  # automatic 100 + the written marks
    assert nonzero(gradebook.load(book).marks)["alice"] == {Q1: 1.5}


def test_added_items_number_on_and_are_applied_like_the_rubrics(book):
    with MarkingStore(book, "ann") as ann, MarkingStore(book, "bob") as bob:
        first = ann.add_item(Q1, -1, {"en": "no units", "ru": "без единиц"}, {"en": "units", "ru": "единицы"})
        second = bob.add_item(Q1, 0.5, {"en": "extra", "ru": "сверх"}, {"en": "extra", "ru": "сверх"})
        assert (first.id, second.id) == (f"{Q1}#n1", f"{Q1}#n2")
        assert list(ann.items(Q1))[-2:] == [first.id, second.id] and ann.item_versions()[first.id] == 1
        ann.apply({("alice", Q1): 0}, add={f"{Q1}#1", first.id})
        assert ann.marks()[("alice", Q1)] == 0.0  # 1 - 1, floored at 0
        assert json.loads(ann.export().read_text(encoding="utf-8"))["rubric"][first.id]["points"] == -1


def test_progress_clear_detach_and_the_per_marker_marks(book):
    with MarkingStore(book, "ann") as ann, MarkingStore(book, "bob") as bob:
        assert ann.progress() == (0, 7) and ann.progress(Q2) == (0, 2)  # bob's Q2 is blank: not to mark
        assert ann.apply({("alice", Q1): 0}) == {("alice", Q1): 1}  # no item: marked 0
        assert ann.marks() == {("alice", Q1): 0.0} and ann.progress(Q1) == (1, 3)
        bob.apply({("alice", Q1): 1}, add={f"{Q1}#1", f"{Q1}#2"})
        bob.apply({("bob", Q1): 0}, add={f"{Q1}#3"})
        assert ann.marks_by_marker(Q1) == {"ann": [0.0], "bob": [2.0, 1.0]}
        assert ann.clear({("bob", Q1): 1}) == {("bob", Q1): 2}
        assert ann.decision("bob", Q1) == (None, 2) and ann.progress(Q1) == (1, 3)
        assert ann.detach("carol", Q1) == 1 and ann.detach("carol", Q1) == 1 and ann.detached() == {("carol", Q1)}
        with pytest.raises(ConflictError):
            bob.apply({("carol", Q1): 0}, add={f"{Q1}#1"})  # the group bob saw no longer holds carol
        assert bob.attach("carol", Q1) == 2 and ann.detached() == frozenset()
        kinds = [(h["kind"], h["marker"], h["student"]) for h in ann.history(question=Q1)]
        assert kinds == [
            ("apply", "ann", "alice"),
            ("apply", "bob", "alice"),
            ("apply", "bob", "bob"),
            ("clear", "ann", "bob"),
            ("detach", "ann", "carol"),
            ("attach", "bob", "carol"),
        ]
        assert [h["detail"]["items"] for h in ann.history("alice", Q1)] == [[], [f"{Q1}#1", f"{Q1}#2"]]


def test_the_answers_come_from_the_gradebook_and_follow_it(book):
    with MarkingStore(book, "ann") as ann:
        assert [a.student for a in ann.answers(Q1)] == ["alice", "bob", "carol"]
        assert ann.answers(Q1)[2].text == CLASS["carol"][Q1]
        ann.apply({("alice", Q1): 0}, add={f"{Q1}#1"})
    changed = {**CLASS, "alice": {**CLASS["alice"], Q1: ""}, "dave": {Q1: "late answer"}}
    entries = [{"label": s, "student": s, "notebook": "assignment", "answers": a} for s, a in changed.items()]
    written.write_class_answers(book, entries)
    with MarkingStore(book, "ann") as ann:
        assert ann.decision("alice", Q1) == (None, 1) and ann.decisions() == {}  # blank now: no decision
        assert ann.progress(Q1) == (0, 3)  # bob, carol, dave
        assert ann.apply({("dave", Q1): 0}, add={f"{Q1}#2"}) == {("dave", Q1): 1}
    entries = [{"label": s, "student": s, "notebook": "assignment", "answers": a} for s, a in CLASS.items()]
    written.write_class_answers(book, entries)
    with MarkingStore(book, "ann") as ann:  # alice's answer back, her mark with it; dave gone
        assert set(ann.decisions()) == {("alice", Q1)} and ann.progress(Q1) == (1, 3)


# ------------------------------------------------------------------ refusals
def test_spaces_around_a_markers_name_are_dropped_so_one_marker_is_one_name(book):
    with MarkingStore(book, " ann ") as ann:
        assert ann.marker == "ann"


@pytest.mark.parametrize("marker", ["", "   ", "a" * 41, "a\nb", "\u202eevil", "\ud800", "nul\x00", None, 5, b"ann"], ids=repr)
def test_a_marker_names_themself_in_printable_text(book, marker):
    with pytest.raises(model.MarkingError) as caught:
        MarkingStore(book, marker)
    one_line(caught.value, "marker")
    assert not (book / STORE_FILE).exists()


def test_a_folder_that_is_no_gradebook_is_refused(tmp_path):
    for folder, says in [(tmp_path / "missing", "not a gradebook"), (tmp_path, "not a gradebook"), (None, "None: not a gradebook")]:
        with pytest.raises(model.MarkingError) as caught:
            MarkingStore(folder, "ann")
        one_line(caught.value, says)
    (tmp_path / written.ANSWERS_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(model.MarkingError) as caught:
        MarkingStore(tmp_path, "ann")
    one_line(caught.value, "holds no answers")
    assert not (tmp_path / STORE_FILE).exists()


def _other_version(path: Path) -> None:
    MarkingStore(path.parent, "ann").close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda p: p.write_bytes(b"not a database at all, " * 100), "not a marking store"),
        (lambda p: p.write_bytes(b""), None),  # an empty file is a new store
        (_other_version, "another version of m5 (store version 99"),
        (_foreign, "of something else"),
        (lambda p: p.mkdir(), "not a file"),
        (lambda p: p.symlink_to(p.parent / "elsewhere.sqlite"), "symbolic link"),
    ],
    ids=["garbage", "empty", "version", "foreign", "directory", "symlink"],
)
def test_a_store_file_that_is_no_marking_store_is_refused_and_kept(book, make, says):
    path = book / STORE_FILE
    make(path)
    before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    if says is None:
        with MarkingStore(book, "ann") as ann:
            assert ann.progress() == (0, 7)
        return
    with pytest.raises(model.MarkingError) as caught:
        MarkingStore(book, "ann")
    one_line(caught.value, says)
    assert before is None or path.read_bytes() == before
    assert not (book / "elsewhere.sqlite").exists()


ITEM_TEXT = {"en": "x", "ru": "х"}
BAD_ACTIONS = {
    "blank answer": (lambda s: s.apply({("bob", Q2): 0}, add={f"{Q2}#1"}), "blank"),
    "unknown student": (lambda s: s.apply({("zed", Q1): 0}), "no such answer"),
    "unknown question": (lambda s: s.apply({("alice", "q99"): 0}), "unknown question"),
    "unknown item": (lambda s: s.apply({("alice", Q1): 0}, add={f"{Q1}#9"}), "unknown rubric item"),
    "another question's item": (lambda s: s.apply({("alice", Q1): 0}, add={f"{Q2}#1"}), "belongs to q02_answer, not to q01_answer"),
    "item removed unknown": (lambda s: s.apply({("alice", Q1): 0}, remove={"nope"}), "remove: unknown"),
    "comment too long": (lambda s: s.apply({("alice", Q1): 0}, comment="x" * (model.MAX_COMMENT_CHARS + 1)), "4001 characters"),
    "comment not text": (lambda s: s.apply({("alice", Q1): 0}, comment=5), "comment"),
    "negative version": (lambda s: s.apply({("alice", Q1): -1}), "whole number"),
    "bool version": (lambda s: s.apply({("alice", Q1): True}), "whole number"),
    "text version": (lambda s: s.apply({("alice", Q1): "0"}), "whole number"),
    "no targets": (lambda s: s.apply({}), "targets"),
    "targets a list": (lambda s: s.apply([("alice", Q1)]), "targets"),
    "target not a pair": (lambda s: s.apply({("alice",): 0}), "targets"),
    "add a bare string": (lambda s: s.apply({("alice", Q1): 0}, add=f"{Q1}#1"), "add: give a set"),
    "add and remove": (lambda s: s.apply({("alice", Q1): 0}, add={f"{Q1}#1"}, remove={f"{Q1}#1"}), "in both"),
    "stale version": (lambda s: s.apply({("alice", Q1): 3}), "you saw 3"),
    "clear a blank": (lambda s: s.clear({("bob", Q2): 0}), "blank"),
    "detach unknown": (lambda s: s.detach("zed", Q1), "no such answer"),
    "edit unknown item": (lambda s: s.edit_item("q01#1", version=1, points=1), "unknown rubric item"),
    "edit zero points": (lambda s: s.edit_item(f"{Q1}#1", version=1, points=0), "finite non-zero number within ±3"),
    "edit nan points": (lambda s: s.edit_item(f"{Q1}#1", version=1, points=float("nan")), "finite non-zero number within ±3"),
    "edit bool points": (lambda s: s.edit_item(f"{Q1}#1", version=1, points=True), "finite non-zero number within ±3"),
    "edit points over": (lambda s: s.edit_item(f"{Q1}#1", version=1, points=4), "got 4"),
    "edit one language": (lambda s: s.edit_item(f"{Q1}#1", version=1, marker_text={"en": "x"}), "marker_text"),
    "edit blank text": (lambda s: s.edit_item(f"{Q1}#1", version=1, student_text={"en": " ", "ru": "х"}), "student_text"),
    "edit long text": (lambda s: s.edit_item(f"{Q1}#1", version=1, student_text={"en": "x" * 501, "ru": "х"}), "1–500"),
    "edit nothing": (lambda s: s.edit_item(f"{Q1}#1", version=1), "nothing to change"),
    "edit stale": (lambda s: s.edit_item(f"{Q1}#1", version=0, points=1), "you saw 0"),
    "add to unknown question": (lambda s: s.add_item("q99", 1, ITEM_TEXT, ITEM_TEXT), "unknown question"),
    "add infinite points": (lambda s: s.add_item(Q1, float("inf"), ITEM_TEXT, ITEM_TEXT), "got inf"),
    "add without russian": (lambda s: s.add_item(Q1, 1, ITEM_TEXT, {"en": "x"}), "student_text"),
    "export to xls": (lambda s: s.export("xls"), "csv_format"),
    "history of a number": (lambda s: s.history(5), "student: give"),
    "progress of no question": (lambda s: s.progress("q99"), "unknown question"),
    "marks by marker of no question": (lambda s: s.marks_by_marker(None), "unknown question"),
}


@pytest.mark.parametrize("action, says", BAD_ACTIONS.values(), ids=BAD_ACTIONS.keys())
def test_a_bad_action_is_refused_in_one_line_and_changes_nothing(book, action, says):
    with MarkingStore(book, "ann") as ann:
        ann.apply({("carol", Q1): 0}, add={f"{Q1}#2"}, comment="kept")
        before = state(ann)
        with pytest.raises(model.MarkingError) as caught:
            action(ann)
        one_line(caught.value, says)
        assert state(ann) == before
    assert not (book / gradebook.MARKS_FILE).exists()


def test_a_closed_store_says_so(book):
    ann = MarkingStore(book, "ann")
    ann.close()
    ann.close()
    with pytest.raises(model.MarkingError) as caught:
        ann.decisions()
    one_line(caught.value, "closed")


# ------------------------------------------------------------------ hostile text
def test_hostile_comments_and_marker_names_round_trip_exactly(book):
    marker = "<img src=x onerror=alert(1)>'\"&Ж"
    with MarkingStore(book, marker) as store:
        store.apply({("carol", Q1): 0}, add={f"{Q1}#1"}, comment=HOSTILE)
        item = store.add_item(Q1, 1, {"en": HOSTILE, "ru": "\ud800"}, {"en": "<b>", "ru": "\u202e"})
        store.export()
    with MarkingStore(book, "ann") as ann:  # another connection, read from disk
        decision = ann.decision("carol", Q1)[0]
        assert (decision.comment, decision.marker) == (HOSTILE, marker)
        assert ann.items()[item.id].marker == {"en": HOSTILE, "ru": "\ud800"}
        assert ann.history("carol")[0]["marker"] == marker and ann.history("carol")[0]["detail"]["comment"] == HOSTILE
        assert ann.answers(Q1)[2].student == "carol"
    document = json.loads((book / gradebook.MARKS_FILE).read_text(encoding="utf-8"))
    assert document["comments"]["carol"][Q1].startswith("<script>") and marker not in json.dumps(document, ensure_ascii=False)


def test_hostile_student_names_round_trip(tmp_path):
    names = ["<script>x</script>", "\ud800lone", "nul\x00name", "bidi\u202eeman", "a\nb"]
    folder = make_gradebook(tmp_path / "g", {name: {Q1: "an answer"} for name in names})
    with MarkingStore(folder, "ann") as ann:
        names = [a.student for a in ann.answers(Q1)]  # as the gradebook keeps them (a lone surrogate escaped)
        assert len(names) == 5 and "nul\x00name" in names and "a\nb" in names
        ann.apply({(name, Q1): 0 for name in names}, add={f"{Q1}#1"})
        with pytest.raises(ConflictError) as caught:
            ann.apply({(name, Q1): 0 for name in names})
        one_line(caught.value, "\\u0000", "\\u000a")  # shown escaped, so the message stays one line
        assert {s for s, _ in ann.decisions()} == set(names)
        assert {h["student"] for h in ann.history()} == set(names)


def test_an_answer_of_one_megabyte(tmp_path):
    huge = ("<p onclick=alert(1)>ответ " * 50_000)[:1_000_000]
    folder = make_gradebook(tmp_path / "g", {"alice": {Q1: huge}, "bob": {Q1: "short"}})
    started = time.monotonic()
    with MarkingStore(folder, "ann") as ann:
        assert ann.answers(Q1)[0].text == huge
        ann.apply({("alice", Q1): 0}, add={f"{Q1}#1"}, comment=huge[: model.MAX_COMMENT_CHARS])
        ann.export()
    assert time.monotonic() - started < 10
    assert (folder / STORE_FILE).stat().st_size < 500_000  # the answer's text is read from the gradebook, not copied


# ------------------------------------------------------------------ kills and threads
MARKER_LOOP = """
import itertools, sys
from pathlib import Path
from autograder.marking.store import MarkingStore

store = MarkingStore(Path(sys.argv[1]), sys.argv[2])
targets = [(a.student, a.question) for a in store.answers() if not a.blank]
items = store.items()
print("ready", flush=True)
for n in itertools.count():
    key = targets[n % len(targets)]
    mine = [i for i in items if items[i].question == key[1]]
    change = {"add": {mine[n % len(mine)]}} if n % 3 else {"remove": {mine[n % len(mine)]}}
    try:
        version = store.apply({key: store.decision(*key)[1]}, comment=f"{sys.argv[2]} {n}", **change)[key]
    except Exception as exc:  # a conflict with the other process: told, nothing changed
        sys.stdout.write(f"refused {type(exc).__name__} {exc}\\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(f"{key[0]}\\t{key[1]}\\t{version}\\t{n}\\n")  # one write: a kill cuts no line (PYTHONUNBUFFERED writes piece by piece)
    sys.stdout.flush()
"""


def test_processes_killed_mid_write_lose_no_committed_mark(book):
    rng = random.Random(46)
    committed: list[tuple[str, ...]] = []
    for _round in range(4):
        writers = {
            marker: subprocess.Popen(
                [sys.executable, "-c", MARKER_LOOP, str(book), marker], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for marker in ("ann", "bob")
        }
        ready = {marker: "" for marker in writers}
        if _round:  # the first round is killed wherever it is, perhaps while opening; the others mid-stream
            ready = {marker: process.stdout.readline() for marker, process in writers.items()}
            assert set(ready.values()) == {"ready\n"}, ready
        time.sleep(rng.uniform(0.05, 0.6))
        for process in writers.values():
            os.kill(process.pid, signal.SIGKILL)
        for marker, process in writers.items():
            out, err = process.stdout.read(), process.stderr.read()  # not communicate(): it would skip what readline read ahead
            process.wait(timeout=60)
            assert process.returncode == -signal.SIGKILL and "Traceback" not in err, err
            lines = [line for line in (ready[marker] + out).splitlines() if line != "ready"]
            assert all(line.startswith("refused ConflictError") for line in lines if line.startswith("refused")), lines
            committed += [(marker, *line.split("\t")) for line in lines if not line.startswith("refused")]
    assert len(committed) > 20
    with sqlite3.connect(book / STORE_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with MarkingStore(book, "checker") as store:
        kept = {(h["marker"], h["student"], h["question"], str(h["detail"]["version"]), h["detail"]["comment"]) for h in store.history()}
        for marker, student, question, version, n in committed:
            assert (marker, student, question, version, f"{marker} {n}") in kept
            assert store.decision(student, question)[1] >= int(version)
        applied = [h for h in store.history() if h["kind"] == "apply"]
        for (student, question), decision in store.decisions().items():  # the standing decision is the last action's
            last = [h for h in applied if (h["student"], h["question"]) == (student, question)][-1]
            assert (list(decision.items), decision.comment) == (last["detail"]["items"], last["detail"]["comment"])


def test_threads_of_two_stores_lose_no_update(book):
    key = ("alice", Q1)
    stores = [MarkingStore(book, "ann"), MarkingStore(book, "bob")]
    done: list[str] = []
    failures: list[BaseException] = []

    def mark(store: MarkingStore, name: str) -> None:
        for n in range(15):
            while True:
                try:
                    store.apply({key: store.decision(*key)[1]}, comment=f"{name} {n}")
                    done.append(f"{name} {n}")
                    break
                except ConflictError:
                    continue
                except BaseException as exc:  # noqa: BLE001 - any other escape is the failure this test looks for
                    failures.append(exc)
                    return

    threads = [threading.Thread(target=mark, args=(stores[i % 2], f"t{i}")) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for store in stores:
        store.close()
    assert not failures and len(done) == 60
    with MarkingStore(book, "checker") as store:
        assert store.decision(*key)[1] == 60
        assert sorted(h["detail"]["comment"] for h in store.history(*key)) == sorted(done)


# ------------------------------------------------------------------ determinism
def _mark_a_class(stores: list[MarkingStore]) -> None:
    """The same actions, spread over the given stores in turn."""
    turn = iter(stores * 10)
    next(turn).apply({("alice", Q1): 0, ("carol", Q1): 0}, add={f"{Q1}#1", f"{Q1}#3"}, comment="see (c)")
    item = next(turn).add_item(Q1, -0.5, {"en": "vague", "ru": "расплывчато"}, {"en": "be precise", "ru": "точнее"})
    next(turn).apply({("carol", Q1): 1}, add={item.id}, remove={f"{Q1}#3"})
    next(turn).apply({("alice", Q2): 0}, add={f"{Q2}#2"})
    next(turn).edit_item(f"{Q1}#3", version=1, points=1.5)
    next(turn).apply({("bob", Q1): 0})
    next(turn).clear({("bob", Q1): 1})
    next(turn).apply({("bob", "ex09_explain"): 0}, add={"ex09_explain#1"}, comment="Ж\ud800")


def test_the_same_actions_give_the_same_gradebook_byte_for_byte(tmp_path):
    files = ("written_marks.json", "grades.csv", "grades_final.csv")
    one = make_gradebook(tmp_path / "one")
    two = make_gradebook(tmp_path / "two")
    with MarkingStore(one, "ann", now=lambda: 1.0) as ann:
        _mark_a_class([ann])
        ann.export()
    with MarkingStore(two, "Борис") as boris, MarkingStore(two, "<i>c</i>", now=lambda: 9e9) as other:
        _mark_a_class([boris, other])
        other.export()
        boris.export()
    assert [(one / f).read_bytes() for f in files] == [(two / f).read_bytes() for f in files]


# ------------------------------------------------------------------ against a model
STUDENTS = ("alice", "bob", "carol")
POINTS = st.sampled_from([-1.0, 0.5, 1.0, 2.0, 3.0])


class StoreAgainstAModel(RuleBasedStateMachine):
    """Two markers act at random; the store's decisions and marks always equal a plain dict's."""

    @initialize()
    def open_stores(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.folder = make_gradebook(self.tmp / "g")
        self.stores = [MarkingStore(self.folder, "ann"), MarkingStore(self.folder, "bob")]
        self.decided: dict[tuple[str, str], tuple[frozenset, str]] = {}
        self.versions: dict[tuple[str, str], int] = {}
        self.points = {i: item.points for i, item in model.rubric_items().items()}
        self.item_versions = dict.fromkeys(self.points, 1)

    def teardown(self):
        for store in getattr(self, "stores", []):
            store.close()
        shutil.rmtree(getattr(self, "tmp", "/nonexistent"), ignore_errors=True)

    def _expect_refusal(self, action, error=model.MarkingError):
        before = state(self.stores[0])
        try:
            action()
        except error:
            assert state(self.stores[0]) == before
        else:
            raise AssertionError("not refused")

    @rule(
        who=st.integers(0, 1),
        question=st.sampled_from([Q1, Q2]),
        students=st.sets(st.sampled_from(STUDENTS), min_size=1),
        add=st.sets(st.integers(1, 3)),
        remove=st.sets(st.integers(1, 3)),
        comment=st.none() | st.text(max_size=8),
        stale=st.booleans(),
    )
    def apply(self, who, question, students, add, remove, comment, stale):
        keys = sorted((s, question) for s in students)
        seen = {k: self.versions.get(k, 0) for k in keys}
        if stale:
            seen[keys[0]] += 1
        add_ids, remove_ids = {f"{question}#{k}" for k in add}, {f"{question}#{k}" for k in remove - add}
        act = lambda: self.stores[who].apply(seen, add=add_ids, remove=remove_ids, comment=comment)  # noqa: E731
        if any(not CLASS[s].get(q) for s, q in keys):
            return self._expect_refusal(act)
        if stale:
            return self._expect_refusal(act, ConflictError)
        assert act() == {k: v + 1 for k, v in seen.items()}
        for key in keys:
            items, old = self.decided.get(key, (frozenset(), ""))
            self.decided[key] = ((items | add_ids) - remove_ids, old if comment is None else comment)
            self.versions[key] = seen[key] + 1

    @rule(who=st.integers(0, 1), student=st.sampled_from(STUDENTS))
    def clear(self, who, student):
        key = (student, Q1)
        assert self.stores[who].clear({key: self.versions.get(key, 0)}) == {key: self.versions.get(key, 0) + 1}
        self.decided.pop(key, None)
        self.versions[key] = self.versions.get(key, 0) + 1

    @rule(who=st.integers(0, 1), k=st.integers(1, 3), question=st.sampled_from([Q1, Q2]), points=POINTS, stale=st.booleans())
    def edit(self, who, k, question, points, stale):
        item = f"{question}#{k}"
        act = lambda: self.stores[who].edit_item(item, version=self.item_versions[item] + stale, points=points)  # noqa: E731
        if stale:
            return self._expect_refusal(act, ConflictError)
        assert act().points == points
        self.points[item] = points
        self.item_versions[item] += 1

    @rule(who=st.integers(0, 1))
    def reopen(self, who):
        self.stores[who].close()
        self.stores[who] = MarkingStore(self.folder, ["ann", "bob"][who])

    @invariant()
    def the_store_is_the_model(self):
        if not hasattr(self, "stores"):
            return
        store = self.stores[0]
        decisions = store.decisions()
        assert {k: (frozenset(d.items), d.comment) for k, d in decisions.items()} == self.decided
        questions = model.questions()
        expected = {k: min(max(sum(self.points[i] for i in items), 0.0), questions[k[1]].points) for k, (items, _) in self.decided.items()}
        assert store.marks() == pytest.approx(expected)
        assert store.progress() == (len(self.decided), 7)


StoreAgainstAModel.TestCase.settings = settings(
    max_examples=20, stateful_step_count=12, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
test_the_store_behaves_like_a_dict_of_decisions = StoreAgainstAModel.TestCase


# ------------------------------------------------------------------ more faults
def test_a_store_held_busy_past_the_timeout_says_so_and_keeps_nothing_half_done(book, monkeypatch):
    monkeypatch.setattr(store_module, "BUSY_SECONDS", 0.2)
    with MarkingStore(book, "ann") as ann:
        holder = sqlite3.connect(book / STORE_FILE, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another writer that does not let go
        try:
            before = ann.decision("alice", Q1)
            started = time.monotonic()
            with pytest.raises(model.MarkingError) as caught:
                ann.apply({("alice", Q1): 0}, add={f"{Q1}#1"})
            one_line(caught.value, "busy", "nothing changed")
            assert time.monotonic() - started < 5 and ann.decision("alice", Q1) == before  # reading is never blocked
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert ann.apply({("alice", Q1): 0}, add={f"{Q1}#1"}) == {("alice", Q1): 1}


def test_every_message_exists_in_both_languages_with_the_same_fields():
    assert set(store_module.EN) == set(store_module.RU)
    for key, english in store_module.EN.items():
        fields = {name for _, name, _, _ in string.Formatter().parse(english) if name}
        assert fields == {name for _, name, _, _ in string.Formatter().parse(store_module.RU[key]) if name}, key


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One store for every Hypothesis example (a fresh gradebook per example would be slow)."""
    with MarkingStore(make_gradebook(tmp_path_factory.mktemp("shared") / "g"), "ann") as store:
        yield store


@settings(max_examples=60, deadline=None, database=None)
@given(comment=st.text(max_size=60), wording=st.text(min_size=1, max_size=30).filter(str.strip))
def test_any_text_round_trips_exactly(shared, comment, wording):
    store = shared
    _, version = store.decision("alice", Q1)
    store.apply({("alice", Q1): version}, comment=comment)
    assert store.decision("alice", Q1)[0].comment == comment
    assert store.history("alice", Q1)[-1]["detail"]["comment"] == comment
    item = store.add_item(Q1, 1, {"en": wording, "ru": wording}, {"en": wording, "ru": "x"})
    assert store.items()[item.id].marker == {"en": wording, "ru": wording}
