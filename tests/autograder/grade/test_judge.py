"""Judging a kernel into points: gating, fair no-mutation points, crash charging."""

from __future__ import annotations

import reference_impl
from autograder.grade import pipeline

ALWAYS_RAISES = "\n".join(f"def {name}(*args, **kwargs):\n    raise ValueError('not like this')\n" for name in reference_impl.KERNEL_NAMES)


def _grade(tmp_path, name, text, corpus, **kw):
    path = tmp_path / name
    path.write_text(text)
    kw.setdefault("shrink", False)
    return pipeline.grade_submission(path, corpus, **kw)


def test_a_kernel_that_always_raises_value_error_gets_nothing(tmp_path, corpus):
    result = _grade(tmp_path, "raises.py", "import numpy as np\n" + ALWAYS_RAISES, corpus)
    assert result.score == 0
    bad_input = [t for t in result.tests if t.key == "bad_input"]
    assert len(bad_input) == len(reference_impl.KERNEL_NAMES)
    assert all("correct values" in t.failure.message["en"] for t in bad_input)  # gated, not "rejected"


def test_a_kernel_that_raises_is_not_charged_as_mutating(tmp_path, corpus, correct_source):
    # Right values except on int flags that mix 0 and 1 (only the random-batch property
    # draws those), where it raises: that property fails, no-mutation holds.
    text = correct_source + (
        "\n_dqn = dqn_targets\n"
        "def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):\n"
        "    flags = np.asarray(terminated)\n"
        "    if flags.dtype.kind == 'i' and 0 < flags.sum() < flags.size:\n"
        "        raise RuntimeError('mixed int flags')\n"
        "    return _dqn(rewards, terminated, next_q_target, gamma)\n"
    )
    result = _grade(tmp_path, "raises_big.py", text, corpus, kernels=["dqn_targets"])
    by_key = {t.key: t for t in result.tests}
    assert not by_key["reference"].passed
    assert by_key["no_mutation"].passed


def test_a_crash_while_shrinking_is_charged_to_nothing(tmp_path, corpus, correct_source):
    """The counterexample search crashes the worker; the next kernel still gets 10/10."""
    n_corpus_calls = len(corpus["dqn_targets"].calls)
    text = correct_source + (
        "\n_calls = [0]\n"
        "def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):\n"
        "    _calls[0] += 1\n"
        f"    if _calls[0] > {n_corpus_calls}:  # past the corpus batch: only the search gets here\n"
        "        import os\n"
        "        os._exit(3)\n"
        "    r = np.asarray(rewards, dtype=float)\n"
        "    return r + gamma * np.asarray(next_q_target, dtype=float).max(axis=1)  # ignores terminated\n"
    )
    result = _grade(
        tmp_path,
        "crash_in_search.py",
        text,
        corpus,
        shrink=True,
        shrink_budget=5.0,
        shrink_total=20.0,
        kernels=["dqn_targets", "double_dqn_targets"],
    )
    scores = result.by_group()
    assert scores["double_dqn_targets"] == (10.0, 10.0)
    dqn = {t.key: t for t in result.tests if t.group == "dqn_targets"}
    assert not dqn["terminal_rows"].passed and dqn["terminal_rows"].failure.call is not None  # the corpus failure stays
    assert dqn["truncation_bootstraps"].passed


def _shown_by_judging_every_case(kc, outcomes, passed):
    """The selection rule stated directly (the oracle): judge every case, show the failing
    one with the smallest shown_order, the earliest among equals."""
    from autograder.grade.shrink import shown_order

    best: dict = {}
    for position, case in enumerate(kc.cases):
        span = slice(case.first_call, case.first_call + case.n_calls)
        failure = case.prop.judge(case.value, outcomes[span], kc.expected[span])
        if failure is not None:
            rank = (shown_order(case.prop.calls(case.value)), position)
            if case.prop.key not in best or rank < best[case.prop.key][0]:
                best[case.prop.key] = (rank, case, failure)
    return {key: (case, failure) for key, (_, case, failure) in best.items()}


def test_the_case_shown_is_the_best_failing_one_though_most_are_never_judged(corpus, monkeypatch):
    """failing_cases judges a property's cases best-first and stops at the first failure:
    for every catalog mistake of every kernel (outcomes computed here, as the worker would
    report them, some with a write flag), it shows the same case and failure as judging
    every case would, and a failing value property costs one judged case."""
    import random

    from autograder.grade import judge
    from autograder.grade.properties import Property
    from autograder.hidden.mistakes import CATALOG

    judged = []
    real = Property.judge

    def counting(self, *args):
        judged.append(self.key)
        return real(self, *args)

    compared = differential_judged = 0
    for kernel, kc in corpus.items():
        for mistake in CATALOG[kernel]:
            flags = random.Random(mistake.name)
            outcomes = [{**mistake.outcome(call), "mut": flags.random() < 0.01} for call in kc.calls]
            passed = judge.agreeing_calls(kc, outcomes)
            want = _shown_by_judging_every_case(kc, outcomes, passed)
            monkeypatch.setattr(Property, "judge", counting)
            got = judge.failing_cases(kc, outcomes, passed)
            monkeypatch.setattr(Property, "judge", real)
            assert {key: (case, failure) for key, (case, failure, _) in got.items()} == want, mistake.name
            differential = {p.key for p in kc.properties if p.relation is None and not p.check_mutation}
            compared += len(want.keys() & differential)
            differential_judged += sum(key in differential for key in judged)
            judged.clear()
    # A failing value property costs one judged case (the vectorised check is exact).
    assert compared > 100 and differential_judged == compared
