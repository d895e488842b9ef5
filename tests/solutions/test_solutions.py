"""Worked solutions: presence, no drift from reference_impl, verified numbers, working code."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import reference_impl as ri
from autograder.export import solutions as sol
from autograder.i18n import references
from reference_impl import exercises as ex

settings.register_profile("solutions", max_examples=40, deadline=None, derandomize=True, database=None)
settings.load_profile("solutions")

HEADINGS = {"en": ("Exercise", "## Question", "## Answer"), "ru": ("Упражнение", "## Условие", "## Решение")}
ALL = [(n, lang) for lang in sol.LANGUAGES for n in sol.SLUGS]


# ------------------------------------------------------------ presence and drift
def test_seventeen_exercises_in_both_languages():
    for lang in sol.LANGUAGES:
        found = sorted(p.name for p in (sol.SOLUTIONS_DIR / lang).glob("*.md"))
        expected = sorted(f"{n:02d}-{slug}.md" for n, slug in sol.SLUGS.items())
        assert found == expected, lang


@pytest.mark.parametrize("number,lang", ALL)
def test_each_file_has_title_question_and_answer(number, lang):
    text = sol.markdown_path(number, lang).read_text(encoding="utf-8")
    word, question, answer = HEADINGS[lang]
    assert sol.title(text).startswith(f"{word} {number}.")
    assert text.index(question) < text.index(answer)
    assert len(text.split(answer, 1)[1].split()) > 40  # a worked answer, not a stub


@pytest.mark.parametrize("number,lang", ALL)
def test_committed_markdown_equals_regenerated(number, lang):
    committed = sol.markdown_path(number, lang).read_text(encoding="utf-8")
    assert committed == sol.render_markdown(number, lang), "run `python solutions/build.py` and commit"


def test_readme_closing_note_is_regenerated_and_complete():
    assert (sol.SOLUTIONS_DIR / "README.md").read_text(encoding="utf-8") == sol.render_readme()
    assert set(sol.CHOSEN_NOTES) == set(ex.CHOSEN_INPUTS)
    for number, keys in ex.CHOSEN_INPUTS.items():
        assert set(keys) <= set(ex.inputs(number)), number


# ------------------------------------------------------------ every number verified
@pytest.mark.parametrize("number,lang", ALL)
def test_templates_type_no_unverified_number(number, lang):
    assert sol.unverified_numbers(number, lang) == []


@pytest.mark.parametrize("number,lang", ALL)
def test_every_number_in_committed_text_comes_from_reference_impl(number, lang):
    """Read the committed file itself: each number must be a rendered value or allowed."""
    template = sol.template_path(number, lang).read_text(encoding="utf-8")
    _, substituted = sol.render_template(template, sol.template_values(number, lang, template))
    produced = {x for s in substituted for x in sol.stated_numbers(s)}
    allowed = produced | sol.STRUCTURAL_NUMBERS | set(sol.ALLOWED_NUMBERS[number])
    committed = sol.markdown_path(number, lang).read_text(encoding="utf-8")
    assert [x for x in sol.stated_numbers(committed) if x not in allowed] == []


def test_a_typed_number_is_caught():
    template = sol.template_path(9, "en").read_text(encoding="utf-8")
    assert sol.unverified_numbers_in(template, 9) == []
    assert sol.unverified_numbers_in(template + "\nThe mean is 0.533333.\n", 9) == ["0.533333"]
    assert sol.unverified_numbers_in(template + "\n$y = 4.6$\n", 9) == ["4.6"]
    # Digits inside words, code and placeholders are not stated numbers.
    assert sol.unverified_numbers_in("TD3 `x = 17` {{ ex09_active_mean_nll:.6f }}", 9) == []


def test_format_value():
    assert sol.format_value([4.6, -1.0, 2.7], ".1f") == "4.6, -1.0, 2.7"
    assert sol.format_value(7 / 3, "frac") == "7/3"
    assert sol.format_value(-math.inf) == "-\\infty"
    assert sol.format_value(6) == "6" and sol.format_value(0.1 + 0.2) == "0.3"
    with pytest.raises(ValueError, match="not a small fraction"):
        sol.format_value(math.pi, "frac")


def test_unknown_placeholder_is_an_error():
    with pytest.raises(ValueError, match="unknown placeholder `nope`"):
        sol.render_template("{{ nope }}", {"n": 1})
    with pytest.raises(ValueError, match="out of range"):
        sol.render_template("{{ xs[5] }}", {"xs": [1.0]})


@pytest.mark.parametrize("number", sol.SLUGS)
def test_both_languages_state_the_same_numbers_and_display_formulas(number):
    rendered = {}
    for lang in sol.LANGUAGES:
        template = sol.template_path(number, lang).read_text(encoding="utf-8")
        values = sol.exercise_values(number)  # citations differ by language ("and" / "и"); numbers must not
        rendered[lang] = sol.render_template(template, {**values, **references.citation_values(template, "en")})
    assert sorted(rendered["en"][1]) == sorted(rendered["ru"][1])
    display = {lang: re.findall(r"\$\$(.+?)\$\$", text, re.S) for lang, (text, _) in rendered.items()}
    assert display["en"] == display["ru"]


# The figures the answer key pins (exercises.md); reference_impl must reproduce them.
PINNED = {
    "ex09_active_mean_nll": 0.533333,
    "ex09_all_positions_mean": 0.266667,
    "ex10_exact_regret": 3.712791,
    "ex10_first_order_regret": 4.2,
    "ex10_normalized_regret": 0.185640,
    "ex11_targets": (4.6, -1.0, 2.7),
    "ex11_unmasked_second_target": 89.0,
    "ex12_dqn_targets": (9.0, 6.3),
    "ex12_double_dqn_targets": (0.9, -0.9),
    "ex13_logsumexp": 2.169846,
    "ex13_penalty": 0.169846,
    "ex13_penalties_all_actions": (0.169846, 2.169846, 3.169846),
    "ex14_loss": 1.4,
    "ex14_minimizer": 7 / 3,
    "ex15_return_to_go": (2.5, 1.5, 1.5, 2.0),
    "ex15_dt_requests": (5.0, 4.0, 4.0, 4.5),
    "ex15_discounted_return_to_go": (1.125, 0.25, 0.5, 2.0),
}


def test_reference_impl_reproduces_the_pinned_figures():
    graded = ex.all_graded_answers()
    for name, figure in PINNED.items():
        assert np.allclose(graded[name].value, figure, atol=1e-6), name
    assert ex.answers(16)["dqn"] == pytest.approx([1.72, -1.0])
    assert ex.answers(17)["values"] == pytest.approx([0.5, -0.5, -math.inf, 0.7])
    inputs = ex.inputs(10)
    assert (1 - inputs["no_error_prob"]) * inputs["horizon"] == pytest.approx(0.4)
    assert ex.answers(11)["next_max"] == [4.0, 100.0, 3.0]
    assert ex.answers(12)["target_max"] == [10.0, 7.0] and ex.answers(12)["target_at_online_argmax"] == [1.0, -1.0]


@pytest.mark.parametrize("lang", sol.LANGUAGES)
def test_pinned_figures_appear_in_the_text(lang):
    text = {n: sol.markdown_path(n, lang).read_text(encoding="utf-8") for n in sol.SLUGS}
    for number, snippet in [
        (9, "0.533333"),
        (9, "0.266667"),
        (10, "3.712791"),
        (10, "4.2"),
        (10, "0.185640"),
        (11, "4.6, -1.0, 2.7"),
        (11, "89"),
        (12, "9.0, 6.3"),
        (12, "0.9, -0.9"),
        (13, "0.169846"),
        (13, "3.169846"),
        (14, "7/3"),
        (14, "1.4"),
        (15, "2.5, 1.5, 1.5, 2"),
        (15, "5, 4, 4, 4.5"),
        (15, "1.125, 0.25, 0.5, 2"),
        (16, "1.72, -1"),
        (17, "0.5, -0.5, -\\infty, 0.7"),
    ]:
        assert snippet in text[number], (number, snippet)


@pytest.mark.parametrize("lang", sol.LANGUAGES)
def test_numerical_questions_name_their_graded_answers(lang):
    for number, names in ex.ANSWER_NAMES.items():
        text = sol.markdown_path(number, lang).read_text(encoding="utf-8")
        for name in names:
            assert f"`{name}`" in text, (number, name)


# ------------------------------------------------------------ exercises module
def test_graded_answers_and_check_answer():
    for number, names in ex.ANSWER_NAMES.items():
        graded = ex.graded_answers(number)
        assert tuple(graded) == names
        for answer in graded.values():
            assert ex.check_answer(answer, answer.value)
            shifted = np.asarray(answer.value) + 10 * answer.tolerance
            assert not ex.check_answer(answer, shifted)
    ans = ex.graded_answers(11)["ex11_targets"]
    assert not ex.check_answer(ans, [4.6, -1.0])  # wrong length
    assert not ex.check_answer(ans, "four")  # not a number
    inf_answer = ex.Answer("v", (0.5, -math.inf))
    assert ex.check_answer(inf_answer, [0.5, -math.inf]) and not ex.check_answer(inf_answer, [0.5, -1e9])
    with pytest.raises(ValueError, match="`number`"):
        ex.graded_answers(3)
    with pytest.raises(ValueError, match="`number`"):
        ex.answers(8)


@given(st.floats(0.0, 0.999999), st.integers(1, 200))
def test_compounding_regret_closed_form_and_linear_bound(q, horizon):
    exact = ex.compounding_regret(q, horizon)
    assert exact == pytest.approx(horizon - q * (1 - q**horizon) / (1 - q), rel=1e-9, abs=1e-9)
    assert 0.0 <= exact <= ex.first_order_regret(1 - q, horizon) + 1e-9
    assert exact <= horizon


def test_compounding_regret_rejects_bad_input():
    with pytest.raises(ValueError, match="`no_error_prob`"):
        ex.compounding_regret(1.5, 10)
    with pytest.raises(ValueError, match="`horizon`"):
        ex.compounding_regret(0.9, 0)
    assert ex.compounding_regret(1.0, 10) == 0.0


@given(hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(-50, 50)), st.floats(0.05, 0.95))
def test_expectile_minimizes_the_expectile_loss(values, tau):
    v = ex.expectile(values, tau)
    base = ri.expectile_loss(values - v, tau)
    for step in (1e-3, -1e-3):
        assert base <= ri.expectile_loss(values - (v + step), tau) + 1e-12
    assert values.min() - 1e-9 <= v <= values.max() + 1e-9


# ------------------------------------------------------------ code answers (16, 17)
def _exec_solution(number, lang):
    namespace: dict = {}
    for block in sol.code_blocks(sol.markdown_path(number, lang).read_text(encoding="utf-8")):
        exec(compile(block, f"<solution {number} {lang}>", "exec"), namespace)
    return namespace


@st.composite
def transition_batches(draw):
    b, a = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    vals = st.floats(-100, 100)
    # Small integers make ties in the online table common.
    online = draw(hnp.arrays(np.float64, (b, a), elements=st.integers(-2, 2).map(float)))
    return (
        draw(hnp.arrays(np.float64, b, elements=vals)),
        draw(hnp.arrays(np.bool_, b)),
        online,
        draw(hnp.arrays(np.float64, (b, a), elements=vals)),
        draw(st.floats(0.0, 1.0)),
    )


@pytest.mark.parametrize("lang", sol.LANGUAGES)
def test_code_answer_16_matches_reference(lang):
    ns = _exec_solution(16, lang)

    @given(transition_batches())
    def check(batch):
        r, done, online, target, gamma = batch
        np.testing.assert_allclose(ns["dqn_targets"](r, done, target, gamma), ri.dqn_targets(r, done, target, gamma))
        np.testing.assert_allclose(
            ns["double_dqn_targets"](r, done, online, target, gamma),
            ri.double_dqn_targets(r, done, online, target, gamma),
        )

    check()
    # Terminal rows are never read, even when they hold NaN.
    q = np.array([[1.0, 2.0], [np.nan, np.inf]])
    np.testing.assert_allclose(ns["dqn_targets"]([0.0, 1.0], [0, 1], q, 0.5), [1.0, 1.0])
    example = ex.inputs(16)
    np.testing.assert_allclose(
        ns["double_dqn_targets"](
            example["rewards"], example["terminated"], example["next_q_online"], example["next_q_target"], example["gamma"]
        ),
        ex.answers(16)["double"],
    )
    for bad in [dict(gamma=1.5), dict(terminated=[0, 2]), dict(rewards=[[0.0, 1.0]]), dict(next_q_target=[[1.0], [2.0], [3.0]])]:
        kwargs = dict(rewards=[0.0, 1.0], terminated=[0, 1], next_q_target=[[1.0, 2.0], [3.0, 4.0]], gamma=0.9) | bad
        with pytest.raises(ValueError):
            ns["dqn_targets"](**kwargs)
    with pytest.raises(ValueError):
        ns["double_dqn_targets"]([0.0], [0], [[1.0, 2.0]], [[1.0, 2.0, 3.0]], 0.9)
    with pytest.raises(ValueError):  # a used value that is not finite
        ns["dqn_targets"]([0.0, 1.0], [0, 1], [[np.nan, 2.0], [0.0, 0.0]], 0.9)
    with pytest.raises(ValueError):
        ns["double_dqn_targets"]([0.0], [0], [[1.0, 2.0]], [[1.0, np.inf]], 0.9)


@pytest.mark.parametrize("lang", sol.LANGUAGES)
def test_code_answer_17_matches_reference(lang):
    ns = _exec_solution(17, lang)

    @given(
        st.integers(1, 6).flatmap(
            lambda n: st.tuples(
                hnp.arrays(np.float64, n, elements=st.floats(-10, 10)),
                hnp.arrays(np.int64, n, elements=st.integers(0, 50)),
            )
        ),
        st.floats(0.0, 5.0),
    )
    def check(data, scale):
        means, counts = data
        np.testing.assert_array_equal(
            ns["pessimistic_values"](means, counts, radius_scale=scale),
            ri.pessimistic_values(means, counts, radius_scale=scale),
        )

    check()
    example = ex.inputs(17)
    assert ns["pessimistic_values"](example["empirical_means"], example["counts"]).tolist() == pytest.approx(ex.answers(17)["values"])
    for args, kwargs in [
        (([1.0, 2.0], [1]), {}),
        (([1.0], [-1]), {}),
        (([1.0], [1]), {"radius_scale": -1.0}),
        (([1.0], [1]), {"radius_scale": math.inf}),
    ]:
        with pytest.raises(ValueError):
            ns["pessimistic_values"](*args, **kwargs)


# ------------------------------------------------------------ depth: references and key ideas
# Works each answer must cite (issue #15): the conceptual points rest on them.
REQUIRED_CITATIONS = {
    2: {"ross2010", "ross2011"},
    3: {"ross2011"},
    4: {"fujimoto2019"},
    7: {"fujimoto2019", "fujimoto2021", "kumar2020", "kostrikov2021"},
    8: {"chen2021", "snell2022", "brandfonbrener2022", "paster2022"},
    10: {"ross2010", "ross2011"},
    12: {"vanhasselt2010", "vanhasselt2016"},
    13: {"kumar2020"},
    14: {"kostrikov2021"},
    15: {"chen2021", "brandfonbrener2022", "paster2022"},
    16: {"vanhasselt2016"},
}


@pytest.mark.parametrize("number", sol.SLUGS)
def test_both_languages_cite_the_required_works_and_list_them(number):
    cited = {lang: set(references.cited_references(sol.template_path(number, lang).read_text(encoding="utf-8"))) for lang in sol.LANGUAGES}
    assert cited["en"] == cited["ru"]
    assert REQUIRED_CITATIONS.get(number, set()) <= cited["en"]
    for lang in sol.LANGUAGES:
        answer = sol.markdown_path(number, lang).read_text(encoding="utf-8").split(HEADINGS[lang][2], 1)[1]
        for key in cited[lang]:
            authors, year, entry = references.REFERENCES[key]
            assert references.citation(key, lang) in answer and entry in answer, (number, lang, key)
            assert str(year) in references.citation(key, lang) and authors[0] in entry


def test_citation_forms_and_errors():
    assert references.citation("fujimoto2021", "en") == "Fujimoto and Gu, 2021"
    assert references.citation("fujimoto2021", "ru") == "Fujimoto и Gu, 2021"
    assert references.citation("ross2011", "en") == "Ross et al., 2011"
    assert references.citation("ross2011", "ru") == "Ross и др., 2011"
    with pytest.raises(ValueError, match="unknown reference `nobody1999`"):
        references.citation("nobody1999", "en")
    with pytest.raises(ValueError, match="no \\{\\{ references \\}\\} list"):
        references.citation_values("as shown by {{ cite_ross2011 }}.", "en")
    with pytest.raises(ValueError, match="cites nothing"):
        references.citation_values("text\n\n{{ references }}", "en")


# Phrases that carry the key ideas of the deeper answers, per language.
KEY_IDEAS = {
    2: {
        "en": ["distribution shift", "O(\\varepsilon T^2)", "O(u\\,\\varepsilon T)"],
        "ru": ["сдвиг распределения", "O(\\varepsilon T^2)", "O(u\\,\\varepsilon T)"],
    },
    4: {"en": ["identifiability constraint"], "ru": ["ограничение идентифицируемости"]},
    6: {"en": ["identifiability constraint"], "ru": ["ограничение идентифицируемости"]},
    7: {
        "en": ["most frequent action", "lower bound", "*inverse* temperature", "SARSA", "plain behavior cloning"],
        "ru": ["самое частое действие", "нижняя граница", "*обратная* температура", "SARSA", "обычное клонирование поведения"],
    },
    8: {
        "en": ["stitch", "stochastic dynamics", "expectile", "CQL-style", "\\beta\\,(Q(s, a) - V(s))"],
        "ru": ["сшивать", "стохастической динамике", "экспектиль", "в духе CQL", "\\beta\\,(Q(s, a) - V(s))"],
    },
    10: {"en": ["O(\\varepsilon T^2)", "O(\\varepsilon T)"], "ru": ["O(\\varepsilon T^2)", "O(\\varepsilon T)"]},
    12: {"en": ["underestimation", "reduces the overestimation"], "ru": ["недооценку", "уменьшает переоценку"]},
    15: {"en": ["cannot stitch", "luck"], "ru": ["не умеет сшивать", "везение"]},
    17: {"en": ["$c$ = `radius_scale`", "identifiability constraint"], "ru": ["$c$ = `radius_scale`", "ограничение идентифицируемости"]},
}
# Phrases the review found wrong; they must not come back.
WRONG = {
    7: {
        "en": ["including well-supported ones", "the temperature $\\beta$"],
        "ru": ["в том числе хорошо представленные", "температуры $\\beta$"],
    },
    12: {"en": ["removes most of"], "ru": ["основная часть этого смещения"]},
}


@pytest.mark.parametrize("number,lang", [(n, lang) for n in KEY_IDEAS for lang in sol.LANGUAGES])
def test_answers_carry_the_key_ideas(number, lang):
    text = sol.markdown_path(number, lang).read_text(encoding="utf-8")
    missing = [p for p in KEY_IDEAS[number][lang] if p not in text]
    assert not missing, (number, lang, missing)
    wrong = [p for p in WRONG.get(number, {}).get(lang, []) if p in text]
    assert not wrong, (number, lang, wrong)


@pytest.mark.parametrize("number", ex.CODE_NUMBERS)
def test_code_exercises_pose_and_answer_discussion_questions(number):
    from autograder.assign import sources

    for lang in sol.LANGUAGES:
        parts = sources.exercise_text(number, lang)
        assert parts["discussion"].count("(i") >= 2, (number, lang)  # at least (i) and (ii)
        word = "**Discussion.**" if lang == "en" else "**Обсуждение.**"
        assert word in parts["answer"], (number, lang)
