"""Points and time as students read them (``autograder/assign/points.py``) agree with what is graded.

Read back from the committed notebooks (source and release, both languages) and the
kit's README, and compared with the nbgrader metadata and the grader's own maximum;
the grouping here is written independently of the builder's.
"""

from __future__ import annotations

import re

import nbformat
import pytest

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, SOURCE_ROOT, notebook

from autograder.assign import points, sources
from autograder.grade import score, written

NOTEBOOKS = [(kind, lang, root) for kind in ("assignment", "lab") for lang in sources.LANGS for root in (SOURCE_ROOT, RELEASE_ROOT)]
# "— 4 points: 3 checked automatically, 1 by hand" / "(2 балла, проверяется вручную)"
TOTAL = re.compile(r"(?:— |\()(\d+) (?:points?|балл\w*)")
SPLIT = re.compile(r"(\d+) (?:checked automatically|— автоматически), (\d+) (?:by hand|— вручную)")


def read(kind, lang, root=RELEASE_ROOT):
    return nbformat.read(notebook(kind, lang, root), as_version=4)


def grading(cell):
    meta = cell.metadata.get("nbgrader", {})
    if not meta.get("grade"):
        return None
    return float(meta["points"]), cell.cell_type == "code" and not meta.get("solution")


def heading_level(cell) -> int | None:
    match = re.match(r"^(#+) ", cell.source) if cell.cell_type == "markdown" else None
    return len(match[1]) if match else None


def stated(text: str) -> tuple[float, float, float]:
    """(total, automatic, by hand) that a label says."""
    total = float(TOTAL.search(text)[1])
    split = SPLIT.search(text)
    if split:
        return total, float(split[1]), float(split[2])
    automatic = "automatically" in text or "автоматически" in text
    return total, total if automatic else 0.0, 0.0 if automatic else total


def expected_under(cells, start: int, level: int) -> tuple[float, float, float]:
    """Points of the graded cells after ``cells[start]`` up to the next heading of ``level`` or higher."""
    auto = hand = 0.0
    for cell in cells[start + 1 :]:
        found = heading_level(cell)
        if found is not None and found <= level:
            break
        g = grading(cell)
        if g:
            auto, hand = (auto + g[0], hand) if g[1] else (auto, hand + g[0])
    return auto + hand, auto, hand


@pytest.mark.parametrize("kind, lang, root", NOTEBOOKS)
def test_every_heading_and_question_states_the_points_graded_under_it(kind, lang, root):
    cells = read(kind, lang, root).cells
    labelled = 0.0
    for i, cell in enumerate(cells):
        level = heading_level(cell)
        first = cell.source.partition("\n")[0]
        if level in (2, 3, 4) and (level != 2 or cell.id.startswith("part")):
            want = expected_under(cells, i, level)
            if want[0]:
                assert stated(first) == want, (cell.id, first)
                labelled += want[0] if level == 3 else 0
            else:
                assert not TOTAL.search(first), (cell.id, first)
        elif cell.cell_type == "markdown" and cell.source.startswith(("**Question", "**Вопрос")):
            g = grading(cells[i + 1])
            assert g is not None, cell.id  # a question is followed by its answer cell
            assert stated(first) == (g[0], g[0] if g[1] else 0.0, 0.0 if g[1] else g[0]), (cell.id, first)
            labelled += g[0]
    # Every graded cell is under an exercise heading (assignment) or a question (lab).
    assert labelled == sum(g[0] for g in map(grading, cells) if g)


def table_rows(text: str, lang: str = "en") -> list[list[str]]:
    start = text.index("| Part |" if lang == "en" else "| Часть |")
    lines = text[start:].split("\n\n")[0].splitlines()
    return [[field.strip() for field in line.strip("|").split("|")] for line in lines[2:]]


@pytest.mark.parametrize("lang", sources.LANGS)
def test_the_parts_table_is_the_gradebooks_and_everywhere_the_same(lang):
    assignment, lab = read("assignment", lang), read("lab", lang)
    rows = table_rows(assignment.cells[0].source, lang)
    assert rows == table_rows(lab.cells[0].source, lang)
    readme = (RELEASE_ROOT / sources.ASSIGNMENTS[lang] / "README.md").read_text(encoding="utf-8")
    half = readme.split("\n## English" if lang == "en" else "\n## Русский")[1]
    assert rows == table_rows(half, lang)
    # The rows' points are the metadata's: the assignment's parts, then the lab.
    parts = [i for i, c in enumerate(assignment.cells) if c.id.startswith("part")]
    wanted = [expected_under(assignment.cells, i, 2)[0] for i in parts]
    wanted.append(sum(g[0] for g in map(grading, lab.cells) if g))
    assert [float(row[1]) for row in rows[:-1]] == wanted
    assert float(rows[-1][1].strip("*")) == sum(wanted)


def test_the_totals_are_the_graders():
    assignment, lab = read("assignment", "en"), read("lab", "en")
    every = [g for nb in (assignment, lab) for g in map(grading, nb.cells) if g]
    automatic = sum(p for p, auto in every if auto)
    by_hand = sum(p for p, auto in every if not auto)
    assert automatic == score.assignment_total()  # what m5 grade scores out of
    assert by_hand == written.maximum()  # what m5 review marks out of
    total_row = table_rows(assignment.cells[0].source)[-1]
    assert total_row[1] == f"**{automatic + by_hand:g}**"
    assert SPLIT.search(total_row[2]).groups() == (f"{automatic:g}", f"{by_hand:g}")


def test_the_parts_expected_times_add_up():
    rows = table_rows(read("assignment", "en").cells[0].source)
    hours = [float(re.search(r"about ([\d.]+) h", row[3])[1]) for row in rows]
    assert hours[-1] == pytest.approx(sum(hours[:-1])) and all(h > 0 for h in hours)
    assert len(rows) - 1 == len(points.EXPECTED_MINUTES)


@pytest.mark.parametrize(
    "cells, lang, text",
    [
        ([points.Graded("a", 3, False)], "en", "(3 points, graded by hand)"),
        ([points.Graded("a", 1, True)], "en", "(1 point, checked automatically)"),
        ([points.Graded("a", 3, True), points.Graded("b", 1, False)], "en", "(4 points: 3 checked automatically, 1 by hand)"),
        ([points.Graded("a", 1, False)], "ru", "(1 балл, проверяется вручную)"),
        ([points.Graded("a", 2, False)], "ru", "(2 балла, проверяется вручную)"),
        ([points.Graded("a", 100, True), points.Graded("b", 4, False)], "ru", "(104 балла: 100 — автоматически, 4 — вручную)"),
        ([points.Graded("a", 155, True)], "ru", "(155 баллов, проверяется автоматически)"),
        ([points.Graded("a", 11, True)], "ru", "(11 баллов, проверяется автоматически)"),
    ],
)
def test_labels(cells, lang, text):
    assert points.label(cells, lang) == text


def test_a_first_cell_without_the_table_marker_is_refused(monkeypatch):
    from autograder.assign import notebooks

    monkeypatch.setitem(sources.ASSIGNMENT_TEXT["en"], "title", "# Module 5 assignment")
    with pytest.raises(ValueError, match="first cell must hold"):
        notebooks.notebooks_of("en")
