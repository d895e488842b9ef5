"""Answer groups (autograder/marking/groups.py): normalizing, similarity, the grouping's
invariants (Hypothesis), hostile text, speed, and examples from the written-answer corpus."""

from __future__ import annotations

import random
import time
import tomllib

import pytest
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.marking import groups, model
from autograder.marking.groups import Group, group_answers, group_class, normalize, similarity

CORPUS = FIXTURES / "marking_corpus"
HOSTILE = ["\ud800", "\udfff", "\x00", "\u202e", "\u2066", "\u200b", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
           "\ufeff", "ё", "Ё", "$\\varepsilon$", "**", "—", "−"]  # fmt: skip
SETTINGS = settings(max_examples=60, deadline=None, database=None)

WORDS = ["policy", "Policy", "DQN", "shift", "сдвиг", "ошибка", "Ёлка", "Q(s, a)", "q(s,a)", "=", "+", "γ", "", " ", ".", ","]
words = st.sampled_from(WORDS)
texts = st.one_of(st.lists(words, max_size=8).map(" ".join), st.text(max_size=40), st.sampled_from(HOSTILE))


@st.composite
def answer_lists(draw, question="q02_answer"):
    students = draw(st.lists(st.text(min_size=1, max_size=6), unique=True, max_size=14))
    return [model.Answer(s, question, draw(texts)) for s in students]


def corpus(lang: str) -> dict[str, list[dict]]:
    return tomllib.loads((CORPUS / f"answers_{lang}.toml").read_text(encoding="utf-8"))


def answers_of(question: str, rows: list[dict]) -> list[model.Answer]:
    return [model.Answer(row["student"], question, row["text"]) for row in rows]


def group_of(found: list[Group]) -> dict[str, Group]:
    return {m: g for g in found for m in g.members}


# ------------------------------------------------------------------ normalize and similarity


def test_formulas_case_punctuation_and_yo_normalize_alike():
    assert normalize("Q(s, a) = r + γ max Q") == normalize("q(s,a)=r+γmax q")
    assert normalize("O(εT²)") == normalize("O(ε T^2)") == normalize("$O(\\varepsilon T^2)$")
    assert normalize("Ёжик,  ЁЛКА!") == normalize("ежик елка")
    assert normalize("a \u202eb\u200b c") == normalize("a b c")
    assert normalize("r = -1") != normalize("r = +1")  # a sign is not punctuation


@SETTINGS
@given(texts)
def test_normalize_is_idempotent_and_never_crashes(text):
    once = normalize(text)
    assert normalize(once) == once
    assert "\x00" not in once and not any("\ud800" <= c <= "\udfff" for c in once)


@SETTINGS
@given(texts, texts)
def test_similarity_is_symmetric_in_unit_interval_and_one_on_equal(a, b):
    value = similarity(a, b)
    assert 0.0 <= value <= 1.0
    assert value == similarity(b, a)
    assert similarity(a, a) == 1.0


def test_a_typo_is_similar_and_a_different_answer_is_not():
    text = "The learner visits its own states after a mistake, so the errors compound over the horizon."
    assert similarity(text, text.replace("visits", "vistis").replace("compound", "compund")) >= groups.SIMILAR
    assert similarity(text, "DAgger asks the expert to label the states that the learner itself reaches.") < groups.SIMILAR


@SETTINGS
@given(st.lists(st.frozensets(st.sampled_from("abcdefghij"), max_size=8), max_size=12), st.sampled_from([0.2, 0.5, 0.7, 1.0]))
def test_similar_pairs_is_exactly_the_brute_force(sets, threshold):
    brute = {
        (i, j): groups.jaccard(a, b)
        for i, a in enumerate(sets)
        for j, b in enumerate(sets)
        if i < j and a and b and groups.jaccard(a, b) >= threshold
    }
    found = groups.similar_pairs([s for s in sets], threshold)
    assert {k: v for k, v in found.items() if sets[k[0]] and sets[k[1]]} == brute


# ------------------------------------------------------------------ the grouping's invariants


@SETTINGS
@given(answer_lists(), st.randoms(use_true_random=False))
def test_grouping_invariants(answers, rnd):
    found = group_answers(answers)
    members = [m for g in found for m in g.members]
    assert sorted(members) == sorted(a.student for a in answers)  # every answer in exactly one group
    blank = [g for g in found if g.kind == "blank"]
    assert [sorted(g.members) for g in blank] == ([sorted(a.student for a in answers if a.blank)] if any(a.blank for a in answers) else [])
    where = group_of(found)
    for a in answers:
        for b in answers:
            if not a.blank and not b.blank and normalize(a.text) == normalize(b.text):
                assert where[a.student] is where[b.student]
    for g in found:
        assert g.members == tuple(sorted(g.members)) and g.representative in g.members and g.kind in groups.KINDS
        assert (g.kind == "single") == (len(g.members) == 1) or g.kind == "blank"
    shuffled = list(answers)
    rnd.shuffle(shuffled)
    assert group_answers(shuffled) == found  # ids, membership, representatives and order: independent of input order


@SETTINGS
@given(answer_lists(), st.data())
def test_detached_answers_are_alone(answers, data):
    detached = frozenset(data.draw(st.sets(st.sampled_from([a.student for a in answers]))) if answers else set())
    found = group_answers(answers, detached)
    for g in found:
        if set(g.members) & detached:
            assert g.kind == "single" and len(g.members) == 1
    assert sorted(m for g in found for m in g.members) == sorted(a.student for a in answers)


def test_group_ids_are_stable_and_named_by_question_kind_and_members():
    answers = [model.Answer(s, "q04_answer", "Both are off-policy.") for s in ("b", "a")]
    (group,) = group_answers(answers)
    assert group.kind == "identical" and group.members == ("a", "b") and group.representative == "a"
    assert group.id == groups.group_id("q04_answer", "identical", ("b", "a"))
    assert group.id.startswith("q04_answer:identical:") and len(group.id.split(":")[-1]) == 10


def test_complete_link_does_not_chain():
    # a ~ b and b ~ c, a not ~ c: b joins one of them, never both
    edges = {(0, 1): 0.8, (1, 2): 0.8}
    clusters = groups.complete_link(3, edges)
    assert sorted(map(sorted, clusters)) == [[0, 1], [2]]


def test_order_blank_then_size_then_id():
    answers = [model.Answer(f"s{i}", "q", t) for i, t in enumerate(["", " ", "alpha", "alpha", "alpha", "beta", "beta", "gamma"])]
    kinds = [(g.kind, len(g.members)) for g in group_answers(answers)]
    assert kinds == [("blank", 2), ("identical", 3), ("identical", 2), ("single", 1)]


def test_group_class_splits_by_question_and_detaches_per_question():
    answers = [model.Answer(s, q, "same text") for q in ("q02_answer", "q04_answer") for s in ("a", "b")]
    found = group_class(answers, frozenset({("a", "q02_answer")}))
    assert list(found) == ["q02_answer", "q04_answer"]
    assert sorted(g.members for g in found["q02_answer"]) == [("a",), ("b",)]
    assert [g.members for g in found["q04_answer"]] == [("a", "b")]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: group_answers([model.Answer("a", "q1", "x"), model.Answer("b", "q2", "x")]), "mix"),
        (lambda: group_answers([model.Answer("a", "q1", "x"), model.Answer("a", "q1", "y")]), "twice"),
        (lambda: group_answers("not a list"), "answers"),
        (lambda: group_answers([("a", "q", "x")]), "answers"),
        (lambda: group_answers([model.Answer("a", "q", None)]), "answers"),
        (lambda: group_answers([], threshold=0), "threshold"),
        (lambda: group_answers([], threshold=1.5), "threshold"),
        (lambda: group_answers([], threshold=float("nan")), "threshold"),
        (lambda: group_answers([], threshold=True), "threshold"),
        (lambda: group_answers([], detached=["a"]), "detached"),
        (lambda: group_answers([], detached=frozenset({1})), "detached"),
        (lambda: group_class([], detached=frozenset({"a"})), "detached"),
        (lambda: group_class([object()]), "answers"),
    ],
)
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(model.MarkingError, match=message) as caught:
        call()
    assert "\n" not in str(caught.value)


# ------------------------------------------------------------------ hostile text and speed


def test_hostile_answers_group_without_crashing():
    answers = [model.Answer(f"s{i}", "q", text * 3) for i, text in enumerate(HOSTILE)] + [model.Answer("\ud800", "q", "x")]
    found = group_answers(answers)
    assert sorted(m for g in found for m in g.members) == sorted(a.student for a in answers)


def test_a_megabyte_answer_is_grouped_quickly():
    rng = random.Random(0)
    big = "".join(rng.choice(["policy ", "сдвиг ", "(=)+γ", "\u202e", "\x00", "<b>", "\ud800"]) for _ in range(20_000)) * 12
    answers = [model.Answer("big", "q", big), model.Answer("big2", "q", big + "!"), model.Answer("small", "q", "a short answer")]
    started = time.perf_counter()
    found = group_answers(answers)
    assert time.perf_counter() - started < 2.0
    assert group_of(found)["big"] is group_of(found)["big2"]  # compared on their first MAX_COMPARED_CHARS characters


def test_a_class_of_300_groups_well_under_a_second_and_1000_in_a_few():
    texts = [row["text"] for rows in corpus("en").values() for row in rows]
    for size, limit in ((300, 1.0), (1000, 6.0)):
        answers = [model.Answer(f"s{i:04d}", "q", f"{texts[i % len(texts)]} {i}") for i in range(size)]
        started = time.perf_counter()
        group_answers(answers)
        assert time.perf_counter() - started < limit, size


# ------------------------------------------------------------------ examples from the corpus


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_corpus_copies_with_small_edits_join_their_original(lang):
    rows = corpus(lang)["q02_answer"]
    where = group_of(group_answers(answers_of("q02_answer", rows)))
    prefix = lang[0]
    assert where[f"{prefix}001"] is where[f"{prefix}002"] is where[f"{prefix}003"]  # case and line breaks; typos
    assert where[f"{prefix}013"] is where[f"{prefix}014"] is where[f"{prefix}015"]  # line breaks; a few words changed
    assert where[f"{prefix}024"] is where[f"{prefix}025"]  # formulas spaced differently
    assert where[f"{prefix}001"] is not where[f"{prefix}013"]  # two full answers written independently stay apart
    assert where[f"{prefix}034"] is not where[f"{prefix}035"]  # a paraphrase is not a copy
    assert where[f"{prefix}010"].kind == "blank"


def test_corpus_identical_short_answers_form_one_group():
    rows = corpus("en")["q02_answer"]
    where = group_of(group_answers(answers_of("q02_answer", rows)))
    assert where["e007"] is where["e008"] is where["e044"]  # "distribution shift", "Distribution shift.", "Distribution Shift"
    assert where["e007"].kind == "identical"
