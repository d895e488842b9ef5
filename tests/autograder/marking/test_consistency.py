"""Marking consistency: a harsh marker stands out, and answers that left their group's mark are listed."""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.marking import consistency, model, sheets
from tests.autograder.marking.test_sheets import HOSTILE, MARKED, fill, tiny_gradebook  # tests/autograder is on sys.path

ITEMS = model.rubric_items()
KNOWN = model.questions()
BY_POINTS = {0: (), 1: ("q01_answer#1",), 2: ("q01_answer#1", "q01_answer#2"), 3: ("q01_answer#1", "q01_answer#2", "q01_answer#3")}


@dataclass(frozen=True)
class Group:  # what marking.groups.Group offers (id, question, kind, members, representative)
    id: str
    question: str
    kind: str
    members: tuple[str, ...]
    representative: str


def synthetic_class(marks: dict[str, list[int]], question: str = "q01_answer") -> dict[tuple[str, str], model.Decision]:
    """Decisions on ``question``: each marker's answers earn the points listed (its first items)."""
    return {
        (f"{marker}{k:02d}", question): model.Decision(BY_POINTS[points], "", marker)
        for marker, given_marks in marks.items()
        for k, points in enumerate(given_marks)
    }


FAIR = [3, 2, 3, 2, 3, 2]
CLASS = {"ann": FAIR, "ben": [1, 0, 1, 1, 0, 1], "cat": FAIR, "dan": FAIR, "eve": [0, 0]}


def test_a_marker_much_harsher_than_the_others_is_flagged_and_the_rest_are_not():
    found = consistency.build(synthetic_class(CLASS), ITEMS, KNOWN)
    stats = found.markers["q01_answer"]
    assert stats["ben"].flag == consistency.HARSHER and stats["ben"].count == 6 and stats["ben"].median == 1
    assert stats["ann"].flag == "" and stats["ann"].mean == 2.5 and stats["ann"].median == 2.5
    assert stats["eve"].flag == ""  # two answers say little about a marker
    kind = consistency.build(synthetic_class({"ann": [3] * 5, "ben": [1] * 5}), ITEMS, KNOWN).markers["q01_answer"]
    assert kind["ann"].flag == consistency.KINDER and kind["ben"].flag == consistency.HARSHER
    near = consistency.build(synthetic_class({"ann": [3] * 5, "ben": [2] * 5}), ITEMS, KNOWN).markers["q01_answer"]
    assert {s.flag for s in near.values()} == {""}  # a third of 3 points is 1: not more than it


def test_the_answers_off_their_groups_mark_are_listed():
    decisions = synthetic_class({"ann": [2, 2, 0], "ben": [1, 1]})
    groups = [
        Group("g1", "q01_answer", "exact", ("ann00", "ann01", "ann02"), "ann00"),
        Group("g2", "q01_answer", "near", ("ben00", "ben01", "nobody"), "ben00"),
        Group("g3", "q01_answer", "exact", ("ann00", "ben00"), "ben00"),  # a tie: the representative's mark
    ]
    found = consistency.build(decisions, ITEMS, KNOWN, groups)
    assert found.off_group == [
        consistency.OffGroup("q01_answer", "g1", "ann02", 0.0, 2.0, "ann"),
        consistency.OffGroup("q01_answer", "g3", "ann00", 2.0, 1.0, "ann"),
    ]


@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=1, max_size=12), st.sampled_from([None, 0.0, 1.0, 3.0]))
def test_a_groups_mark_is_one_of_the_most_common_marks(marks, representative):
    mark = consistency.group_mark(marks, representative)
    counts = Counter(marks)
    assert counts[mark] == max(counts.values())
    if representative in counts and counts[representative] == max(counts.values()):
        assert mark == representative


MARKS = st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=0, max_size=9)


@given(MARKS, MARKS)
def test_harsher_one_way_is_kinder_the_other(mine, others):
    flag, back = consistency.flag(mine, others, 3.0), consistency.flag(others, mine, 3.0)
    assert {flag, back} in ({""}, {consistency.HARSHER, consistency.KINDER})
    if min(len(mine), len(others)) < consistency.MIN_ANSWERS:
        assert flag == ""


@pytest.mark.parametrize("lang, words", [("en", ("harsher", "Marking consistency")), ("ru", ("строже", "Согласованность проверки"))])
def test_the_page_and_the_csv_files_in_both_languages_with_hostile_names_as_text(tmp_path, lang, words):
    decisions = synthetic_class({HOSTILE: [1, 0, 1, 1, 0], "ann": [3] * 5, "bob": [3] * 5})
    decisions[("x", "q02_answer")] = model.Decision((), "", "<b>bold</b>")
    groups = [Group(HOSTILE, "q01_answer", "exact", (f"{HOSTILE}00", "ann00", "ann01"), "ann00")]
    found = consistency.build(decisions, ITEMS, KNOWN, groups)
    files = consistency.write_report(tmp_path / "out", found, lang)
    page = files[0].read_text(encoding="utf-8")
    assert words[0] in page and words[1] in page and "default-src 'none'" in page
    assert "<script" not in page and "<b>bold" not in page and "&lt;b&gt;bold" in page and "\u202e" not in page
    rows = list(csv.reader(files[1].open(encoding="utf-8")))
    flagged = next(r for r in rows if r[0] == "q01_answer" and r[-1])
    assert flagged[1].startswith("'=") and flagged[-1] == words[0]  # the hostile marker's name, a formula no more
    off = list(csv.reader(files[2].open(encoding="utf-8")))
    assert len(off) == 2 and off[1][1].startswith("'=") and off[1][2].startswith("'=")
    again = consistency.write_report(tmp_path / "again", found, lang)
    assert [p.read_bytes() for p in files] == [p.read_bytes() for p in again]


def test_the_report_of_filled_sheets_knows_each_answers_marker(tmp_path):
    book = tiny_gradebook(tmp_path / "grades")
    ann = fill(sheets.write_sheet(book, "ann", ["q01_answer"]), MARKED)
    ben = fill(sheets.write_sheet(book, "ben", ["q02_answer"]), MARKED)
    found = consistency.from_sheets(book, [ann, ben])
    assert {q: sorted(s) for q, s in found.markers.items()} == {"q01_answer": ["ann"], "q02_answer": ["ben"]}
    assert found.markers["q01_answer"]["ann"].count == 2 and found.markers["q01_answer"]["ann"].mean == 1.0
