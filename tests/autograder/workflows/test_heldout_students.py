"""The likely-mistake figure: measured on held-out student kernels, checked in docs/grading.md.

The kernels of ``heldout/students.py`` run in this process on the corpus calls (they are
trusted test code, so no sandbox is needed) and the judge names a mistake from their
outcomes exactly as ``judge.grade_kernel`` does. The share of wrong kernels named as
their author expected is the figure docs/grading.md ("Likely mistakes") quotes, between the
markers below; ``M5_UPDATE_DOCS=1`` (or the older ``M5_UPDATE_README=1``) rewrites it from this
run, otherwise the test fails when the page disagrees with the run.
"""

from __future__ import annotations

import copy
import os
import re
import warnings

import numpy as np
import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)
from heldout.probes import PROBES
from heldout.students import STUDENTS  # tests/autograder is on sys.path (pytest rootdir-relative import)

from autograder.grade.judge import diagnose
from autograder.grade.worker import child

GOAL_NAMED = 0.80  # share of the wrong kernels named as expected
DOC = REPO / "docs" / "grading.md"
BEGIN, END = (
    "<!-- likely-mistake share: written by tests/autograder/workflows/test_heldout_students.py -->",
    "<!-- /likely-mistake share -->",
)


def outcome_of(fn, call) -> dict:
    """One call as the worker reports it (the arguments copied: the corpus is shared)."""
    args, kwargs = copy.deepcopy((call.args, call.kwargs))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a held-out student's code may raise anything
        return {"s": "raised", "exc": child._exception_names(exc), "msg": child._describe(exc)}
    try:
        return {"s": "ok", "v": child._as_plain_array(value), "mut": False}
    except Exception as exc:  # noqa: BLE001 - any failure to convert is a bad return
        return {"s": "bad_return", "msg": child._describe(exc)}


def verdict(student, corpus) -> tuple[bool, str | None, object]:
    """(whether some property failed, the mistake's name or None, the mistake) for one kernel."""
    namespace: dict = {"__name__": f"heldout_{student.name}"}
    exec(compile(student.source, student.name, "exec"), namespace)
    kc = corpus[student.kernel]
    outcomes = [outcome_of(namespace[student.kernel], call) for call in kc.calls]
    failed, mistake = diagnose(kc, outcomes)
    return bool(failed), (None if mistake is None else mistake.name), mistake


@pytest.fixture(scope="module")
def verdicts(corpus) -> dict:
    """Every held-out kernel's and probe's verdict, by name."""
    return {s.name: verdict(s, corpus) for s in (*STUDENTS, *PROBES)}


def measure(verdicts: dict) -> dict:
    """Counts over the held-out set: wrong kernels named as expected (and those with an
    expected name), wrong names, correct kernels named, and probes named."""
    wrong = [s for s in STUDENTS if not s.correct]
    named = {name: v[1] for name, v in verdicts.items()}
    right = sum(named[s.name] is not None and named[s.name] == s.expect for s in wrong)
    return {
        "wrong": len(wrong),
        "right": right,
        "share": right / len(wrong),
        "expected_named": sum(s.expect is not None for s in wrong),
        "misnamed": [s.name for s in STUDENTS if named[s.name] is not None and named[s.name] != s.expect],
        "correct": len(STUDENTS) - len(wrong),
        "correct_named": sum(named[s.name] is not None for s in STUDENTS if s.correct),
        "probes": len(PROBES),
        "probes_named": sum(named[p.name] is not None for p in PROBES),
    }


def figure(m: dict) -> str:
    """The page's sentence, from a measurement."""
    return (
        f"Likely mistakes: of {m['wrong']} held-out wrong kernels written like students' code "
        f"(`tests/autograder/heldout/students.py`: no or partial input checks, float32, loops, padding "
        f"read, often two slips at once; written before the catalog was widened) the feedback names "
        f"the expected mistake for {m['right']} ({m['share']:.0%}; {m['expected_named']} have one the "
        f"author expected a catalog to know) and a wrong one for {len(m['misnamed'])}; it names "
        f"{m['correct_named']} of the {m['correct']} correct and float32-correct kernels and "
        f"{m['probes_named']} of {m['probes']} later probes with uncatalogued slips."
    )


def test_the_set_is_large_labelled_and_spread_over_every_kernel():
    import reference_impl

    assert len({s.name for s in STUDENTS}) == len(STUDENTS)
    wrong = [s for s in STUDENTS if not s.correct]
    assert len(wrong) >= 48 and len(STUDENTS) - len(wrong) >= 5
    for kernel in reference_impl.KERNEL_NAMES:
        assert sum(s.kernel == kernel for s in wrong) >= 4, kernel
    for s in STUDENTS:
        assert s.intent.strip() and (s.expect is None or s.expect.startswith(f"{s.kernel}."))
        assert not s.correct or s.expect is None


def test_every_wrong_kernel_loses_points_and_no_correct_kernel_is_named(verdicts):
    for s in STUDENTS:
        failed, named, _ = verdicts[s.name]
        if s.correct:
            assert named is None, f"{s.name} is correct but was named {named}"
        else:
            assert failed, f"{s.name} keeps full marks"


def test_no_wrong_names_and_the_docs_quote_the_held_out_share(verdicts):
    m = measure(verdicts)
    rows = [f"{s.name}: expected {s.expect}, named {verdicts[s.name][1]}" for s in STUDENTS]
    print(f"\n{figure(m)}\n" + "\n".join(rows))
    text = DOC.read_text(encoding="utf-8")
    block = f"{BEGIN}\n{figure(m)}\n{END}"
    if "1" in (os.environ.get("M5_UPDATE_DOCS"), os.environ.get("M5_UPDATE_README")):
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
        DOC.write_text(text, encoding="utf-8")
    assert block in text, "docs/grading.md's likely-mistake figure differs from this run (M5_UPDATE_DOCS=1 rewrites it)"
    assert not m["misnamed"], f"wrong names: {m['misnamed']}"


def test_held_out_share_reaches_the_goal(verdicts):
    """Before the catalog was widened (6214b3a) it named 34 of 55 (62%)."""
    assert measure(verdicts)["share"] >= GOAL_NAMED


def test_no_probe_is_named(verdicts):
    """Slips no entry describes, written after the widening: no name may be given."""
    assert len(PROBES) >= 15
    assert {p.name: verdicts[p.name][1] for p in PROBES if verdicts[p.name][1] is not None} == {}


# Graded in the sandbox too: float32 values, NaN from padding and from (1 - done) * inf,
# missing input checks, a stray ZeroDivisionError, and a correct float32 kernel.
THROUGH_THE_SANDBOX = ("dqn_gamma_all_one_minus", "nll_no_sign_mask_mult", "nll_loop_sum", "pv_f32_plus", "iql_softmax", "cql_correct_f32")


def test_the_sandbox_names_what_the_in_process_measurement_names(verdicts, corpus, tmp_path, correct_source):
    """The measurement runs the kernels in this process; grading them for real (worker,
    sandbox, pipeline) names the same mistake with the same count, in both languages."""
    from autograder.grade import pipeline, report

    by_name = {s.name: s for s in STUDENTS}
    for name in THROUGH_THE_SANDBOX:
        student, (_, expected, diagnosis) = by_name[name], verdicts[name]
        path = tmp_path / f"{name}.py"
        path.write_text(f"{correct_source.rstrip()}\n\n\n{student.source}", encoding="utf-8")
        result = pipeline.grade_submission(path, corpus, shrink=False, kernels=[student.kernel])
        named = [t for t in result.tests if t.failure and t.failure.likely_mistake]
        assert {t.failure.likely_mistake["id"] for t in named} == ({expected} if expected else set()), name
        for test in named:
            assert test.failure.likely_mistake["explained"] == diagnosis.explained
            assert test.failure.likely_mistake["failing"] == diagnosis.failing
            assert f"(explains {diagnosis.explained} of {diagnosis.failing} failing inputs)" in report.feedback(test, "en")
            assert f"(объясняет {diagnosis.explained} из {diagnosis.failing} " in report.feedback(test, "ru")
