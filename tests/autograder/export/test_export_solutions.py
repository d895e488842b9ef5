"""The students' solution bundle: 17 exercises per language, MathML, no hidden tests."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.export import solutions as sol

SECRET = "HIDDEN_SECRET_VALUE_4242"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    return out, sol.build_solution_bundle(out)


def test_bundle_has_all_seventeen_exercises_in_both_languages(bundle):
    out, written = bundle
    for lang in sol.LANGUAGES:
        pages = sorted(p.name for p in (out / lang).glob("[0-9][0-9]-*.html"))
        assert pages == sorted(f"{n:02d}-{slug}.html" for n, slug in sol.SLUGS.items())
        index = (out / lang / "index.html").read_text(encoding="utf-8")
        assert len(re.findall(r'<li><a href="\d\d-[a-z-]+\.html">', index)) == 17
        for number in sol.SLUGS:
            page_title = sol.title(sol.markdown_path(number, lang).read_text(encoding="utf-8"))
            assert page_title.split(".")[0] in index
    assert (out / "index.html").is_file()
    assert set(written) == {p for p in out.rglob("*") if p.is_file()}
    for path in written:  # no hidden test source, by content or by file
        text = path.read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in text and "autograder.hidden" not in text and path.suffix == ".html"


def test_formulas_are_mathml_and_nothing_is_left_raw(bundle):
    out, _ = bundle
    for page in (out / "en").glob("[0-9][0-9]-*.html"):
        text = page.read_text(encoding="utf-8")
        assert "$" not in re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", text, flags=re.S), page.name
        assert "M5TOKEN" not in text and "M5CODE" not in text
        assert not re.search(r"<m[io]>\\[A-Za-z]+</m[io]>", text), f"unknown LaTeX command in {page.name}"
        assert "http://" not in text.replace("http://www.w3.org/1998/Math/MathML", "")  # no network assets
    regret = (out / "ru" / "10-compounding-regret.html").read_text(encoding="utf-8")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block" displaystyle="true">' in regret
    assert "<mn>3.712791</mn>" in regret
    code = (out / "en" / "16-code-dqn-targets.html").read_text(encoding="utf-8")
    assert "def double_dqn_targets" in code  # code blocks survive, with their $-free text untouched


# ------------------------------------------------------------------ typography of the rendered formulas
_MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.S)


def _formulas(page_text: str) -> list[str]:
    return _MATH_ELEMENT.findall(page_text)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_rendered_formulas_use_proper_operators_sums_and_minus(bundle, lang):
    out, _ = bundle
    pages = {p.name: p.read_text(encoding="utf-8") for p in (out / lang).glob("[0-9][0-9]-*.html")}
    everything = "".join(pages.values())
    # \exp and \log are upright operators with function application, never italic letters glued to Q.
    assert "<mi>exp</mi>" not in everything and "<mi>log</mi>" not in everything
    cql = pages["13-cql-penalty.html"]
    assert re.search(r'<mi mathvariant="normal">exp</mi><mo>&#x02061;</mo><mspace width="0.1667em"></mspace><mi>Q</mi>', cql)
    assert re.search(r'<mi mathvariant="normal">log</mi><mo>&#x02061;</mo><mo stretchy="false">&#x00028;</mo>', cql)  # log(...)
    # Every sum of a display formula is display-size; inline ones stay text-size.
    for page in pages.values():
        for formula in _formulas(page):
            if 'display="block"' in formula:
                assert 'displaystyle="true"' in formula
                assert "<mo>&#x02211;</mo>" not in formula
    assert '<mo largeop="true" movablelimits="false">&#x02211;</mo>' in pages["10-compounding-regret.html"]
    # A unary minus is unspaced: "(−1, 1, 2)", never "( − 1, 1, 2)".
    expectile = pages["14-expectile-loss.html"]
    assert '<mo stretchy="false">&#x00028;</mo><mn>&#x02212;1</mn><mo>&#x0002C;</mo><mn>1</mn>' in expectile
    for page in pages.values():
        assert not re.search(r"<mo[^>]*>(?:&#x00028;|&#x0002C;|&#x0003D;)</mo><mo>&#x02212;</mo>", page)
    # A binary minus keeps its spacing.
    assert "<mn>1</mn><mo>&#x02212;</mo><mi>&#x003C4;</mi>" in expectile


@pytest.mark.parametrize(
    "latex, display, wanted, unwanted",
    [
        (r"-\infty", False, '<mo lspace="0" rspace="0">&#x02212;</mo><mo>&#x0221E;</mo>', "<mo>&#x02212;</mo>"),
        (r"x = -2.5", False, "<mn>&#x02212;2.5</mn>", "<mo>&#x02212;</mo>"),
        (r"a - b", False, "<mi>a</mi><mo>&#x02212;</mo><mi>b</mi>", 'lspace="0"'),
        (r"\sum_t x_t", False, "<mo>&#x02211;</mo>", "largeop"),
        (r"\log x", True, '<mi mathvariant="normal">log</mi><mo>&#x02061;</mo><mspace', "<mi>log</mi>"),
    ],
)
def test_polish_mathml_cases(latex, display, wanted, unwanted):
    from latex2mathml.converter import convert

    out = sol.polish_mathml(convert(latex, display="block" if display else "inline"), display)
    assert wanted in out and unwanted not in out


def test_markdown_to_html_keeps_code_and_math_apart():
    body = sol.markdown_to_html("Cost is `a_b * c` and $x_1 * y_2$.\n\n$$\\frac{a}{b}$$\n\n```python\nx = '$not math$'\n```\n")
    assert "<code>a_b * c</code>" in body
    assert body.count("<math") == 2 and 'display="block"' in body
    assert "$not math$" in body
    assert "<em>" not in body  # the * inside math and code are not emphasis


def test_single_language_and_bad_arguments(tmp_path):
    written = sol.build_solution_bundle(tmp_path / "ru", lang="ru")
    assert not (tmp_path / "ru" / "en").exists() and len(written) == 17 + 2
    with pytest.raises(ValueError, match="`lang`"):
        sol.build_solution_bundle(tmp_path / "x", lang="de")
    with pytest.raises(ValueError, match="`notebooks`"):
        sol.build_solution_bundle(tmp_path / "y", notebooks=[tmp_path / "missing.ipynb"])


def _synthetic_notebook():
    solution = new_code_cell("x = 1  # student answer", metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "sol"}})
    visible_test = new_code_cell("assert x == 1", metadata={"nbgrader": {"solution": False, "grade": True, "grade_id": "vis", "points": 1}})
    hidden_only = new_code_cell(
        f"### BEGIN HIDDEN TESTS\nassert x == 1, '{SECRET}'\n### END HIDDEN TESTS\n",
        metadata={"nbgrader": {"solution": False, "grade": True, "grade_id": "hid", "points": 1}},
    )
    mixed = new_code_cell(
        f"assert x > 0\n### BEGIN HIDDEN TESTS\nassert x < 2, '{SECRET}'\n### END HIDDEN TESTS\n",
        metadata={"nbgrader": {"solution": False, "grade": True, "grade_id": "mix", "points": 1}},
        outputs=[new_output("stream", name="stdout", text=f"{SECRET}\n")],
        execution_count=3,
    )
    tagged = new_code_cell(f"print('{SECRET}')", metadata={"tags": ["hidden"]})
    importer = new_code_cell("from autograder.hidden import test_ex09\n")
    return new_notebook(
        cells=[
            new_markdown_cell("# Lab\n\nThe target is $y = r + \\gamma V(s')$:\n\n$$L = \\frac{1}{n}$$\n"),
            solution,
            visible_test,
            hidden_only,
            mixed,
            tagged,
            importer,
        ]
    )


def test_strip_hidden_tests_on_a_synthetic_notebook():
    nb = _synthetic_notebook()
    stripped = sol.strip_hidden_tests(nb)
    sources = [c.source for c in stripped.cells]
    assert sources[0].startswith("# Lab") and sources[1:3] == ["x = 1  # student answer", "assert x == 1"]
    assert len(stripped.cells) == 4  # hidden-only, tagged and importing cells dropped
    assert stripped.cells[3].source == "assert x > 0\n" and stripped.cells[3].outputs == []
    assert SECRET not in nbformat.writes(stripped) and "autograder.hidden" not in nbformat.writes(stripped)
    assert SECRET in nbformat.writes(nb)  # the input is not modified


def _cell(kind: str, i: int):
    """A visible cell (kinds 'md', 'code', 'test') or one hiding SECRET (the other kinds)."""
    grader = {"solution": False, "grade": True, "grade_id": f"t{i}", "points": 1}
    hidden_block = f"### BEGIN HIDDEN TESTS\nassert '{SECRET}'\n### END HIDDEN TESTS\n"
    return {
        "md": lambda: new_markdown_cell(f"text {i}"),
        "code": lambda: new_code_cell(f"v{i} = {i}"),
        "test": lambda: new_code_cell(f"assert v{i} == {i}", metadata={"nbgrader": grader}),
        "hidden_only": lambda: new_code_cell(hidden_block, metadata={"nbgrader": grader}),
        "mixed": lambda: new_code_cell(
            f"assert v{i} == {i}\n" + hidden_block,
            metadata={"nbgrader": grader},
            outputs=[new_output("stream", name="stdout", text=SECRET)],
        ),
        "tagged": lambda: new_code_cell(f"print('{SECRET}')", metadata={"tags": ["hidden-tests"]}),
        "flagged": lambda: new_code_cell(f"print('{SECRET}')", metadata={"nbgrader": {**grader, "hidden": True}}),
    }[kind]()


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(["md", "code", "test", "hidden_only", "mixed", "tagged", "flagged"]), max_size=12))
def test_strip_hidden_tests_never_leaks_and_keeps_visible_cells(kinds):
    nb = new_notebook(cells=[_cell(kind, i) for i, kind in enumerate(kinds)])
    stripped = sol.strip_hidden_tests(nb)
    assert SECRET not in nbformat.writes(stripped)
    visible = [k for k in kinds if k in ("md", "code", "test", "mixed")]  # mixed keeps its visible part
    assert len(stripped.cells) == len(visible)


def test_bundle_converts_notebooks_without_hidden_source(tmp_path):
    path = tmp_path / "module5-solutions.ipynb"
    nbformat.write(_synthetic_notebook(), str(path))
    written = sol.build_solution_bundle(tmp_path / "out", lang="en", notebooks=[path])
    page = tmp_path / "out" / "notebooks" / "module5-solutions.html"
    assert page in written
    text = page.read_text(encoding="utf-8")
    assert "student answer" in text and SECRET not in text and "HIDDEN TESTS" not in text
    assert text.count("<math") == 2 and "M5TOKEN" not in text and "\\gamma" not in text
    assert not re.search(r'src="https?://', text)  # opens offline
    assert 'href="notebooks/module5-solutions.html"' in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def test_bundle_builds_from_a_fresh_clone(tmp_path):
    if shutil.which("git") is None or not (sol.REPO_ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(sol.REPO_ROOT), str(clone)], check=True)
    script = (
        "import sys; from pathlib import Path; "
        "from autograder.export.solutions import build_solution_bundle as b; "
        f"print(len(b(Path({str(tmp_path / 'out')!r}))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=clone, capture_output=True, text=True, env={"PYTHONPATH": str(clone), "PATH": "/usr/bin:/bin"}
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) == 2 * 17 + 3
