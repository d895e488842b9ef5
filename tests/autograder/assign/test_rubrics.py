"""The written answers' rubrics (``autograder/assign/rubrics.py``, ``rubrics.toml``): every
hand-graded cell has one that adds up to its points; students read its length and what a full
answer covers, in their language; the marker's wording stays with the instructor."""

from __future__ import annotations

import json

import nbformat
import pytest

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, SOURCE_ROOT, notebook

from autograder.assign import rubrics, sources
from autograder.grade import written

KINDS = ("assignment", "lab")


def hand_graded(nb) -> dict[str, tuple[int, float]]:
    """grade_id -> (cell index, points) of every cell a person grades."""
    out = {}
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta.get("solution"):
            out[meta["grade_id"]] = (i, float(meta["points"]))
    return out


def test_every_written_question_has_a_rubric_whose_best_case_is_its_points():
    loaded = rubrics.load()
    every = {}
    for kind in KINDS:
        every.update(hand_graded(nbformat.read(notebook(kind, "en", SOURCE_ROOT), as_version=4)))
    assert set(every) == set(loaded)  # no question without a rubric, no rubric without a question
    for grade_id, (_, points) in every.items():
        assert loaded[grade_id].best == points, grade_id
    assert sum(points for _, points in every.values()) == written.maximum() == 47


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lang", sources.LANGS)
def test_students_read_the_length_and_what_a_full_answer_covers_above_each_answer(kind, lang):
    nb = nbformat.read(notebook(kind, lang, RELEASE_ROOT), as_version=4)
    loaded = rubrics.load()
    for grade_id, (i, _) in hand_graded(nb).items():
        above = nb.cells[i - 1].source
        assert above.endswith(rubrics.student_text(loaded[grade_id], lang)), (lang, grade_id)
        for item in loaded[grade_id].items:
            assert item.student[lang] in above


@pytest.mark.parametrize("lang", sources.LANGS)
def test_the_markers_wording_is_in_the_source_and_never_in_the_release(lang):
    loaded = rubrics.load()
    for kind in KINDS:
        source = nbformat.read(notebook(kind, lang, SOURCE_ROOT), as_version=4)
        for grade_id, (i, _) in hand_graded(source).items():
            assert source.cells[i].metadata["m5"]["rubric"] == json.loads(json.dumps(loaded[grade_id].as_metadata()))
        released = (RELEASE_ROOT / sources.ASSIGNMENTS[lang] / sources.NOTEBOOK_NAMES[kind, lang]).read_text(encoding="utf-8")
        assert '"rubric"' not in released
        for rubric in loaded.values():
            for item in rubric.items:
                assert item.marker["en"] not in released and item.marker["ru"] not in released


def test_a_score_is_floored_at_zero_and_capped_at_the_points():
    rubric = rubrics.parse(
        {
            "x": {
                "length": {"en": "a", "ru": "б"},
                "items": [
                    {"points": 2, "student": {"en": "s", "ru": "с"}, "marker": {"en": "m", "ru": "м"}},
                    {"points": 1, "student": {"en": "s", "ru": "с"}, "marker": {"en": "m", "ru": "м"}},
                    {"points": -2, "student": {"en": "s", "ru": "с"}, "marker": {"en": "m", "ru": "м"}},
                ],
            }
        }
    )["x"]
    assert rubric.best == 3
    assert rubrics.score(rubric, [True, True, False], 3) == 3
    assert rubrics.score(rubric, [False, False, True], 3) == 0  # floored
    assert rubrics.score(rubric, [True, False, True], 3) == 0
    with pytest.raises(rubrics.RubricError, match="`earned` needs 3 flags"):
        rubrics.score(rubric, [True], 3)
    with pytest.raises(rubrics.RubricError, match="add up to 3, the cell is worth 2"):
        rubrics.check(rubric, 2)


@pytest.mark.parametrize(
    "table, message",
    [
        ({"x": {"length": {"en": "a", "ru": "б"}, "items": []}}, "non-empty `items`"),
        (
            {"x": {"length": {"en": "a"}, "items": [{"points": 1, "student": {"en": "s", "ru": "с"}, "marker": {"en": "m", "ru": "м"}}]}},
            "`length`",
        ),
        (
            {
                "x": {
                    "length": {"en": "a", "ru": "б"},
                    "items": [{"points": 0, "student": {"en": "s", "ru": "с"}, "marker": {"en": "m", "ru": "м"}}],
                }
            },
            "non-zero",
        ),
        (
            {
                "x": {
                    "length": {"en": "a", "ru": "б"},
                    "items": [{"points": True, "student": {"en": "s", "ru": "с"}, "marker": {"en": "m", "ru": "м"}}],
                }
            },
            "non-zero",
        ),
        (
            {
                "x": {
                    "length": {"en": "a", "ru": "б"},
                    "items": [{"points": 1, "student": {"en": "s", "ru": " "}, "marker": {"en": "m", "ru": "м"}}],
                }
            },
            "`student`",
        ),
    ],
)
def test_a_malformed_rubric_is_refused_naming_its_place(table, message):
    with pytest.raises(rubrics.RubricError, match=message):
        rubrics.parse(table)


def test_a_written_cell_without_a_rubric_stops_the_build():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("question"),
        nbformat.v4.new_markdown_cell("answer", metadata={"nbgrader": {"grade": True, "solution": True, "grade_id": "nope", "points": 1}}),
    ]
    with pytest.raises(rubrics.RubricError, match="nope has no rubric"):
        rubrics.attach(nb, "en")
