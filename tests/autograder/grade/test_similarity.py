"""Similarity flags (``autograder/grade/similarity.py``, ``copy_clusters.py``): copies found however
they are disguised, rings of any size below half the class, independent code never, each cluster
shown once with bounded code, and a pair graded differently, or whose outputs on the hidden inputs
differ, read as what it is."""

from __future__ import annotations

import json
import random

import evasions  # tests/autograder is on sys.path
import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.grade import class_report, copy_clusters, corpus_cache, pipeline, similarity

ROOT = REPO
DOC = ROOT / "docs" / "similarity.md"


def _record(label: str, code: str, given=frozenset(), score: float = 120.0, failed=(), outputs=None) -> dict:
    return {
        "label": label,
        "score": score,
        "failed": [list(f) for f in failed],
        "answers": [],
        "code": similarity.shown(code),
        "fingerprints": sorted(similarity.fingerprints(code) - given),
        "outputs": outputs if outputs is not None else {},
    }


def test_normalized_tokens_ignore_names_comments_layout_and_statements_that_do_nothing():
    a = "def f(x, y):\n    # add them\n    return x + y  # done\n"
    b = "def   add(first,second):\n    pass\n    ...\n    'note'\n    return first+second\n"
    assert similarity.normalized_tokens(a) == similarity.normalized_tokens(b)
    assert similarity.normalized_tokens("return x - y") != similarity.normalized_tokens("return x + y")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_the_lexer_never_fails_and_never_loses_the_code_after_a_bad_spot(text):
    tail = "\ndef tail(a):\n    return a * 2\n"
    tokens = similarity.normalized_tokens(text + similarity.CELL_BREAK + tail)
    assert tokens[-9:] == ["def", "N", "(", "N", ")", ":", "return", "N", "*", "0"][-9:]


def test_an_unclosed_quote_costs_one_token_not_the_rest():
    assert similarity.normalized_tokens("x = '''\ny = 1\n")[-3:] == ["N", "=", "0"]
    assert similarity.normalized_tokens("def f(:\n  '''unfinished") == ["def", "N", "(", ":", "S", "N"]  # lexing goes on


def test_the_released_notebook_is_no_evidence():
    from autograder.grade.extract import from_notebook

    given = similarity.released_fingerprints()
    untouched = similarity.code_of(from_notebook(similarity.RELEASED[0]))
    assert untouched == "" and given  # the release's own cells are not the student's code
    full = similarity.CELL_BREAK.join(c.source for c in from_notebook(similarity.RELEASED[0]).cells)
    assert not (similarity.fingerprints(full) - given)
    assert copy_clusters.flagged_pairs([_record("a.ipynb", full, given), _record("b.ipynb", full, given)]) == []


def test_a_disguised_copy_is_flagged_and_independent_code_is_not(correct_source):
    given = similarity.released_fingerprints()
    disguised = evasions.all_at_once(correct_source, random.Random(1))
    records = [
        _record("alice.py", correct_source, given),
        _record("mallory.py", disguised, given),
        _record("loops.py", evasions.ORIGINALS["loops"].read_text(), given),
        _record("torch.py", evasions.ORIGINALS["torch"].read_text(), given),
    ]
    pairs = copy_clusters.flagged_pairs(records)
    assert [(p["a"], p["b"]) for p in pairs] == [("alice.py", "mallory.py")]
    assert pairs[0]["graded_alike"] and pairs[0]["score_difference"] == 0


def test_the_evasion_table_in_the_docs_is_the_one_measured_now():
    measured = evasions.table(evasions.measure())
    assert measured in DOC.read_text(encoding="utf-8"), "stale: run `python bench/similarity.py --write-docs`"
    counts = evasions.measure()
    assert counts["independent originals (false alarms)"][0] == 0
    for kind in ("verbatim", "renamed", "pass after each statement", "a lone ''' cell first", "3.5 kB of unrelated code pasted"):
        flagged, total = counts[kind]
        assert flagged == total, kind


def test_the_output_table_in_the_docs_is_the_one_measured_now(corpus):
    """Every wrong-logic copy of every original a sandbox grades reads as outputs that differ."""
    measured = evasions.measure_outputs(corpus)
    assert evasions.outputs_table(measured) in DOC.read_text(encoding="utf-8"), "stale: run `python bench/similarity.py --write-docs`"
    for name, (differ, total, kernels) in measured.items():
        assert differ == total == len(evasions.SEEDS) and kernels, name


def test_same_shape_different_logic_is_flagged_and_read_as_graded_differently(correct_source):
    given = similarity.released_fingerprints()
    wrong = evasions.wrong_logic(correct_source, random.Random(0))
    records = [
        _record("right.py", correct_source, given),
        _record("wrong.py", wrong, given, score=78.0, failed=[("dqn_targets", "reference", "matches", "совпадает")]),
    ]
    (pair,) = copy_clusters.flagged_pairs(records)
    assert not pair["graded_alike"] and pair["score_difference"] == 42
    (cluster,) = copy_clusters.clusters(records, [pair])
    assert [m["graded_alike"] for m in cluster["members"]] == [True, False]


def test_outputs_agree_kernel_by_kernel_and_a_missing_digest_is_unknown():
    a = {"outputs": {"dqn_targets": "a" * 16, "fqe_targets": "b" * 16, "return_to_go": None, "expectile_loss": "c" * 16}}
    b = {"outputs": {"dqn_targets": "a" * 16, "fqe_targets": "d" * 16, "return_to_go": "e" * 16}}
    assert copy_clusters.outputs_agree(a, b) == {
        "same": ["dqn_targets"],
        "different": ["fqe_targets"],
        "unknown": ["return_to_go", "expectile_loss"],
    }
    older = {"outputs": {"dqn_targets": "a" * 16}}
    assert copy_clusters.outputs_agree({}, older) == {"same": [], "different": [], "unknown": ["dqn_targets"]}  # no digests: unknown


def test_a_one_token_logic_change_is_a_flagged_pair_whose_outputs_differ_in_that_kernel(tmp_path, corpus, correct_source, recycled):
    """max written min in one kernel: the same fingerprints, so flagged as a copy, and the pair
    and the cluster say the outputs differ in that kernel alone; a regrade, from the corpus as
    its cache gives it again, gives the same digests."""
    given = similarity.released_fingerprints()
    wrong = correct_source.replace("q).max(axis=1))", "q).min(axis=1))", 1)
    assert wrong != correct_source and similarity.normalized_tokens(wrong) == similarity.normalized_tokens(correct_source)
    results = {}
    for name, text in (("right.py", correct_source), ("wrong.py", wrong)):
        (tmp_path / name).write_text(text)
        results[name] = pipeline.grade_submission(tmp_path / name, corpus, shrink=False, spare=recycled)
    records = [class_report.record(results[name], (tmp_path / name).read_text(), given) for name in results]
    kernels = list(corpus)
    assert [list(r["outputs"]) for r in records] == [kernels, kernels] and all(records[0]["outputs"].values())
    (pair,) = copy_clusters.flagged_pairs(records)
    assert pair["similarity"] == 1.0 and not pair["graded_alike"]
    assert pair["outputs_agree"] == {"same": [k for k in kernels if k != "dqn_targets"], "different": ["dqn_targets"], "unknown": []}
    (cluster,) = copy_clusters.clusters(records, [pair])
    assert [m["outputs_agree"]["different"] for m in cluster["members"]] == [[], ["dqn_targets"]]
    document = class_report.build(records, "en")
    assert "same for 9 of 10 kernels; <b>differ in: dqn_targets</b>" in class_report.to_html(document, "en")
    assert "совпадают у 9 из 10 ядер; <b>различаются: dqn_targets</b>" in class_report.to_html(class_report.build(records, "ru"), "ru")
    again = pipeline.grade_submission(tmp_path / "right.py", corpus_cache.load_corpus(), shrink=False, spare=recycled)
    assert again.outputs == results["right.py"].outputs


@pytest.mark.parametrize("ring", [9, 11, 21, 51, 74])
def test_a_ring_of_any_size_below_half_the_class_is_one_cluster(ring):
    """No cliff: rings larger than the old 10..50 sharing limit are found, each shown once."""
    rng = random.Random(ring)
    size = 150
    shared = [rng.getrandbits(63) for _ in range(120)]
    records = [
        {
            "label": f"s{i:03d}",
            "score": 100.0,
            "failed": [],
            "answers": [],
            "code": "",
            "fingerprints": [rng.getrandbits(63) for _ in range(120)],
        }
        for i in range(size)
    ]
    for i in range(ring):
        records[i]["fingerprints"] = shared + ([rng.getrandbits(63)] if i % 2 else [])
    pairs = copy_clusters.flagged_pairs(records)
    found = copy_clusters.clusters(records, pairs)
    assert [c["size"] for c in found] == [ring] and len(pairs) == ring * (ring - 1) // 2


def test_code_every_submission_shares_with_more_than_half_the_class_is_an_idiom():
    rng = random.Random(3)
    common = [rng.getrandbits(63) for _ in range(80)]
    records = [{"label": f"s{i}", "score": 1.0, "fingerprints": common + [rng.getrandbits(63) for _ in range(40)]} for i in range(30)]
    assert copy_clusters.flagged_pairs(records) == []


def test_forty_rings_of_fifty_in_a_class_of_two_thousand_make_a_bounded_report(tmp_path):
    document = class_report.write(evasions.ring_class(), tmp_path)
    clusters = document["similar"]["clusters"]
    assert len(clusters) == 40 and {c["size"] for c in clusters} == {50}  # each ring once
    sizes = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    assert sizes["class_report.html"] + sizes["class_report.json"] < 20e6, sizes
    pairs = json.loads((tmp_path / class_report.PAIRS_NAME).read_text())["pairs"]
    assert len(pairs) == 40 * 50 * 49 // 2 == document["similar"]["pairs"]
    assert "All 49000 flagged pairs are in similarity_pairs.json" in (tmp_path / "class_report.html").read_text()
