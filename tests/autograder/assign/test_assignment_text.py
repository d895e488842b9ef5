"""The assignment notebook tells students the rules they are graded by, truthfully."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.assign import sources
from reference_impl import exercises

LANGS = ("en", "ru")


def _markdown(lang: str) -> dict[str, str]:
    return {c.id: c.source for c in sources.assignment_notebook(lang).cells if c.cell_type == "markdown"}


def test_stated_tolerance_is_the_graders_and_its_example_behaves_as_stated():
    assert float(sources.TOLERANCE_TEXT) == exercises.DEFAULT_TOLERANCE
    answer = exercises.Answer("example", 1 / 3)
    assert exercises.check_answer(answer, 1 / 3) and exercises.check_answer(answer, 0.3333)  # four decimals pass
    assert not exercises.check_answer(answer, 0.333)  # three do not
    graded = [np.atleast_1d(a.value) for a in exercises.all_graded_answers().values()]
    assert not any(np.isclose(v, 1 / 3).any() or np.isclose(v, 0.333).any() for v in graded)  # the example leaks nothing


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_states_the_tolerance_and_the_no_mutation_rule(lang):
    cells = _markdown(lang)
    rules = {
        "en": ("within " + sources.TOLERANCE_TEXT, "must not modify its input arrays", "`1/3`"),
        "ru": ("не больше чем на " + sources.TOLERANCE_TEXT, "не должно изменять переданные ему массивы", "`1/3`"),
    }
    for phrase in rules[lang]:
        assert phrase in cells["intro"], (lang, phrase)
    assert sources.TOLERANCE_TEXT in cells["part2"] and "`0.333`" in cells["part2"]


@pytest.mark.parametrize("lang", LANGS)
def test_discussion_cells_ask_explicit_questions(lang):
    cells = _markdown(lang)
    for number in exercises.CODE_NUMBERS:
        note = cells[f"ex{number:02d}_discussion_note"]
        assert note.count("?") >= 2, (lang, number)
        assert sources.exercise_text(number, lang)["discussion"] in note
    assert "$c$ = `radius_scale`" in cells["ex17"]  # the symbol of the formula is defined
