"""Feedback and judging figures: cases per property, judging cost, likely-mistake cost.

Runs on the grader's side only (no sandbox): the outcomes of the demo's correct
submission and of a catalog mistake are computed here, then judged as the grader
judges a worker's reply. Prints

* the number of cases per property (goal: >= 200 for each value property);
* CPU time to judge one whole submission, call by call and vectorised;
* CPU time to name a likely mistake (first time in a process, then cached).

    .venv/bin/python bench/feedback.py [--repeats K]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from autograder.demo import CORRECT
from autograder.grade.corpus import counts_per_property
from autograder.grade.corpus_cache import load_corpus
from autograder.grade.judge import failing_cases
from autograder.hidden.mistakes import CATALOG, likely_mistake


def outcomes_of(fn, calls) -> list[dict]:
    """What a worker would report for ``fn`` (trusted code here) on each call."""
    out = []
    for call in calls:
        try:
            with np.errstate(all="ignore"):
                out.append({"s": "ok", "v": np.asarray(fn(*call.args, **call.kwargs))})
        except Exception as exc:  # noqa: BLE001 - a mistake's code may raise anything
            out.append({"s": "raised", "exc": [c.__name__ for c in type(exc).__mro__], "msg": str(exc)})
    return out


def judge_call_by_call(kc, outcomes) -> dict:
    """The judging before vectorisation: every case through Property.judge."""
    failed = {}
    for case in kc.cases:
        span = slice(case.first_call, case.first_call + case.n_calls)
        failure = case.prop.judge(case.value, outcomes[span], kc.expected[span])
        if failure is not None:
            failed.setdefault(case.prop.key, failure)
    return failed


def cpu_ms(fn, repeats: int) -> float:
    start = time.process_time()
    for _ in range(repeats):
        fn()
    return (time.process_time() - start) / repeats * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    corpus = load_corpus()
    counts = counts_per_property(corpus)
    print(f"cases per property ({len(counts)} properties, {sum(len(kc.calls) for kc in corpus.values())} calls):")
    for name, n in counts.items():
        print(f"  {name:50s} {n:5d}")
    namespace: dict = {}
    exec(compile(CORRECT.read_text(encoding="utf-8"), str(CORRECT), "exec"), namespace)
    outcomes = {k: outcomes_of(namespace[k], kc.calls) for k, kc in corpus.items()}
    for kernel, kc in corpus.items():  # warm the per-process caches of both ways
        failing_cases(kc, outcomes[kernel])
    for label, judge in (("call by call", judge_call_by_call), ("vectorised", failing_cases)):
        ms = cpu_ms(lambda judge=judge: [judge(kc, outcomes[k]) for k, kc in corpus.items()], args.repeats)
        print(f"judging a correct submission, {label:12s}: {ms:6.1f} ms CPU")
    kc = corpus["dqn_targets"]
    mistake = CATALOG["dqn_targets"][0]
    wrong = [mistake.outcome(call) for call in kc.calls]
    first = cpu_ms(lambda: likely_mistake(kc, wrong), 1)
    again = cpu_ms(lambda: likely_mistake(kc, wrong), args.repeats)
    print(
        f"naming a likely mistake (dqn_targets, {len(CATALOG['dqn_targets'])} candidates): "
        f"{first:.0f} ms CPU the first time in a process, {again:.0f} ms after"
    )


if __name__ == "__main__":
    main()
