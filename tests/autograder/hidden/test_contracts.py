"""Contract <-> tests, one-to-one: each docstring clause is tested, each test cites a clause."""

from __future__ import annotations

import dataclasses

from autograder.grade import pipeline
from autograder.hidden import contracts
from autograder.hidden.kernels import PROPERTIES


def test_every_clause_has_a_property_and_every_property_a_clause():
    assert contracts.problems() == []


def test_docs_contracts_md_is_generated_and_fresh():
    assert contracts.DOC.read_text(encoding="utf-8") == contracts.render(), (
        "docs/contracts.md is stale: run `python -m autograder.hidden.contracts`"
    )


def test_a_clause_left_untested_or_a_property_without_clause_is_reported():
    rest = [p for p in PROPERTIES if p.clauses != ("return_to_go.float_output",)]
    assert any("return_to_go.float_output: no property" in line for line in contracts.problems(rest))
    bare = dataclasses.replace(PROPERTIES[0], clauses=())
    assert any(f"{bare.kernel}.{bare.key}: tests no clause" in line for line in contracts.problems([bare]))
    unknown = dataclasses.replace(PROPERTIES[0], clauses=("dqn_targets.no_such_promise",))
    assert any("no_such_promise: cited" in line for line in contracts.problems([unknown]))


def test_quotes_must_stay_in_the_docstring(monkeypatch):
    monkeypatch.setitem(contracts.SUITE["return_to_go"]["clauses"], "float_output", "returns a list of ints")
    assert any("not in the contract any more" in line for line in contracts.problems())


def _grade_one(tmp_path, corpus, source, kernel, name):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    result = pipeline.grade_submission(path, corpus, shrink=False, kernels=[kernel])
    return {t.key: t.passed for t in result.tests}


def test_a_wrong_default_loses_the_plain_call_point(tmp_path, corpus, correct_source):
    text = correct_source.replace("def return_to_go(rewards, gamma=1.0)", "def return_to_go(rewards, gamma=0.99)")
    assert text != correct_source
    passed = _grade_one(tmp_path, corpus, text, "return_to_go", "default_099")
    assert passed["plain_call"] is False
    assert all(ok for key, ok in passed.items() if key != "plain_call")


def test_terminal_rows_must_not_read_next_q(tmp_path, corpus, correct_source):
    """The usual r + gamma * (1 - d) * max Q turns a NaN in a terminal row into a NaN target."""
    text = correct_source + (
        "\ndef dqn_targets(rewards, terminated, next_q_target, gamma=0.99):\n"
        "    g = _gamma(gamma)\n"
        "    r, d, q = _batch(rewards, terminated, next_q_target)\n"
        "    return r + g * (1 - d) * q.max(axis=1)\n"
    )
    passed = _grade_one(tmp_path, corpus, text, "dqn_targets", "multiplies_by_not_done")
    assert passed["terminal_rows"] is False
    assert passed["reference"] and passed["truncation_bootstraps"]
