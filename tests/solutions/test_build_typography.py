"""Typography of the worked solutions where the rendering tests of the exercise pages do not look.

``tests/autograder/export/test_export_solutions.py`` checks the exercise pages of the bundle;
here: the Markdown the builder writes (``python solutions/build.py``) spells operators as
LaTeX commands in every formula, and the solution notebooks' pages of the bundle (their
markdown cells go through the same renderer) typeset them as the exercise pages do.
"""

from __future__ import annotations

import re

import pytest

from autograder.export import solutions as sol
from autograder.export.solution_notebooks import solution_notebooks

# An operator name written as letters in a formula (not \exp, not inside \text{...}).
BARE_OPERATOR = re.compile(r"(?<![\\A-Za-z])(exp|log|ln|max|min|argmax|sum)(?![A-Za-z])")
WORDS_IN_FORMULA = re.compile(r"\\(?:text|operatorname|mathrm)\{[^}]*\}")
MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.S)


def _formulas(markdown_text: str) -> list[str]:
    text = sol.FENCE.sub(" ", markdown_text)
    text = re.sub(r"`[^`\n]*`", " ", text)
    return [m.group(1) or m.group(2) for m in sol._MATH.finditer(text)]


@pytest.mark.parametrize("lang", sol.LANGUAGES)
def test_generated_markdown_writes_operators_as_latex_commands(lang):
    checked = 0
    for number in sol.SLUGS:
        for formula in _formulas(sol.render_markdown(number, lang)):
            checked += 1
            bare = BARE_OPERATOR.findall(WORDS_IN_FORMULA.sub(" ", formula))
            assert not bare, f"exercise {number} ({lang}): write \\{bare[0]} in ${formula}$"
    assert checked > 50


def test_the_bare_operator_check_finds_a_bare_exp():
    """The checker above is not vacuous: a bare `exp` is what the renderer would glue to Q."""
    assert BARE_OPERATOR.findall("\\log \\sum_b exp Q(s, b)") == ["exp"]


@pytest.fixture(scope="module")
def notebook_pages(tmp_path_factory):
    notebooks = solution_notebooks("both")
    if not notebooks:
        pytest.skip("no executed solution notebooks: run `make solution-notebooks`")
    out = tmp_path_factory.mktemp("bundle")
    sol.build_solution_bundle(out, "both", notebooks)
    return {p.name: p.read_text(encoding="utf-8") for p in (out / "notebooks").glob("*.html")}


def test_solution_notebook_pages_typeset_formulas_like_the_exercise_pages(notebook_pages):
    formulas = [f for page in notebook_pages.values() for f in MATH_ELEMENT.findall(page)]
    assert len(formulas) > 20
    text = "".join(formulas)
    assert "<mi>exp</mi>" not in text and "<mi>log</mi>" not in text
    assert '<mi mathvariant="normal">log</mi><mo>&#x02061;</mo>' in text
    for formula in formulas:
        if 'display="block"' in formula:
            assert 'displaystyle="true"' in formula and "<mo>&#x02211;</mo>" not in formula
    # No spaced unary minus after an opening bracket, a comma or a relation.
    assert not re.search(r"<mo[^>]*>(?:&#x00028;|&#x0005B;|&#x0002C;|&#x0003D;)</mo><mo>&#x02212;</mo>", text)
    assert "<mn>&#x02212;1</mn>" in text or '<mo lspace="0" rspace="0">&#x02212;</mo>' in text
