"""docs/answer_groups.md is what bench/answer_groups.py computes now, and the code's GRAM and
SIMILAR are what its stated rule picks: no number on the page is typed by hand."""

from __future__ import annotations

import importlib.util

from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)

from autograder.marking import groups

ROOT = REPO


def bench():
    spec = importlib.util.spec_from_file_location("bench_answer_groups", ROOT / "bench" / "answer_groups.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_what_the_bench_computes_and_the_code_uses_the_chosen_threshold():
    module = bench()
    corpus = module.load_corpus()
    choice = module.choose(corpus)["best"]
    assert (choice["gram"], choice["threshold"]) == (groups.GRAM, groups.SIMILAR), "the rule picks other constants than groups.py's"
    committed = (ROOT / "docs" / "answer_groups.md").read_text(encoding="utf-8")
    assert module.document(corpus) == committed, f"stale: run `{module.COMMAND}`"


def test_the_corpus_has_forty_answers_per_question_and_language_with_real_rubric_items():
    corpus = bench().load_corpus()  # checks every label against rubrics.toml and every `of`
    for lang in ("en", "ru"):
        assert set(corpus[lang]) == {"q02_answer", "q04_answer", "answer_dqn"}
        for rows in corpus[lang].values():
            kinds = {row["how"] for row in rows}
            assert len(rows) >= 40 and kinds == {"original", "copy", "short", "blank"}
