"""Judge one kernel's outcomes (or the numerical answers) into TestResults.

Runs only on the grader's side: it compares what the worker returned with the
reference outcomes of the corpus, gates points, and picks the failure to show.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from autograder.grade import output_digest
from autograder.grade.properties import MESSAGES, Failure, FlatExpected, flatten_expected, passing_calls
from autograder.grade.score import TestResult
from autograder.grade.shrink import search_counterexample, shown_order
from autograder.grade.worker.wire import BATCH_IDLE
from autograder.grade.worker_handle import WorkerLost
from autograder.grade.worker_session import WorkerSession
from autograder.hidden.mistakes import EDGE_PROPERTIES, LEAD, diagnose_mistake
from reference_impl import exercises

LOST = {
    "timeout": {
        "en": "{k} ran past the time limit (an infinite loop or far too slow); the worker was stopped",
        "ru": "{k} превысила лимит времени (бесконечный цикл или слишком медленно); процесс остановлен",
    },
    "call_timeout": {
        "en": "a call of {k} did not finish within its time limit (an infinite loop or far too slow)",
        "ru": "вызов {k} не завершился за отведённое время (бесконечный цикл или слишком медленно)",
    },
    "call_idle": {
        "en": (
            "a call of {k} slept or waited instead of running for more than {limit:g} s, or its calls "
            "for {total:g} s in all (sleep, a lock, input or a subprocess of its own); the rest of its "
            "calls were not run"
        ),
        "ru": (
            "вызов {k} спал или ждал вместо вычислений дольше {limit:g} с, или все её вызовы вместе "
            "дольше {total:g} с (sleep, блокировка, ввод или собственный подпроцесс); остальные её "
            "вызовы не выполнялись"
        ),
    },
    "crashed": {
        "en": "the grading process stopped while running {k} (os._exit, a crash or the memory limit)",
        "ru": "процесс проверки остановился во время работы {k} (os._exit, сбой или предел памяти)",
    },
    "protocol": {"en": "{k} disturbed the grading process's communication", "ru": "{k} нарушила обмен данными с процессом проверки"},
    "missing": {"en": "{k} is not defined in the submission", "ru": "{k} не определена в решении"},
    "not_implemented": {
        "en": "{k} is not implemented yet (it raises NotImplementedError)",
        "ru": "{k} ещё не реализована (выбрасывает NotImplementedError)",
    },
}
ANSWER_WRONG = {"en": "the value of {name} is missing or wrong", "ru": "значение {name} отсутствует или неверно"}
ANSWER_TITLE = {"en": "numerical answer {name}", "ru": "численный ответ {name}"}
MISTAKE_THEN = {
    "en": "{lead}: {mistake} (explains {explained} of {failing} failing {inputs}). Here: {message}",
    "ru": "{lead}: {mistake} (объясняет {explained} из {failing} {inputs} с неверным ответом). Здесь: {message}",
}
# "inputs" after "of N": one form in English per number, the genitive after «из N» in Russian.
INPUTS = {"en": ("input", "inputs"), "ru": ("входа", "входов")}
ANSWER_HINT = {
    "en": "Assign the number (or list) to this exact variable name; compute it with the exercise's inputs.",
    "ru": "Присвойте число (или список) переменной с точно таким именем; считайте по входам упражнения.",
}


def all_fail(kc, reason: dict, call=None, **fields) -> list[TestResult]:
    """Every property of the kernel fails for one kernel-level reason (no per-property hint)."""
    failure = Failure({lang: text.format(**fields) for lang, text in reason.items()}, call=call)
    return [TestResult(kc.kernel, p.key, {lang: p.name(lang) for lang in ("en", "ru")}, p.points, False, failure) for p in kc.properties]


def _differential(prop) -> bool:
    """Judged call by call against the reference (not a law, not the write check)."""
    return prop.relation is None and not prop.check_mutation


def _flat_expected(kc) -> FlatExpected:
    """The kernel's differential reference values, flattened once per process."""
    return _case_index(kc).flat


def agreeing_calls(kc, outcomes: list[dict]) -> set[int]:
    """The calls whose outcome agrees with the reference, found in one vectorised pass."""
    return passing_calls(_flat_expected(kc), outcomes)


class _CaseIndex:
    """What the judge derives from a kernel's corpus, once per process: where each
    property's cases are, the flattened reference values, and the order in which
    failing cases are best shown."""

    def __init__(self, kc):
        self.kc = kc  # held: keeps id(kc) unique while memoised
        self.first = np.fromiter((c.first_call for c in kc.cases), dtype=np.intp, count=len(kc.cases))
        self.end = self.first + np.fromiter((c.n_calls for c in kc.cases), dtype=np.intp, count=len(kc.cases))
        positions: dict[str, list[int]] = {}
        for position, case in enumerate(kc.cases):
            positions.setdefault(case.prop.key, []).append(position)
        self.positions = {key: np.asarray(found, dtype=np.intp) for key, found in positions.items()}
        self._orders: dict[str, dict[int, tuple]] = {}
        self._flat: FlatExpected | None = None
        self._rest: FlatExpected | None = None

    @property
    def flat(self) -> FlatExpected:
        """The differential calls' reference values, flattened when first needed."""
        if self._flat is None:
            calls = [
                i for case in self.kc.cases if _differential(case.prop) for i in range(case.first_call, case.first_call + case.n_calls)
            ]
            self._flat = flatten_expected(self.kc.expected, calls)
        return self._flat

    @property
    def rest(self) -> FlatExpected:
        """The reference values of the other calls (laws, the write check), flattened when
        first needed: only the outputs digest compares them with the reference."""
        if self._rest is None:
            calls = [
                i for case in self.kc.cases if not _differential(case.prop) for i in range(case.first_call, case.first_call + case.n_calls)
            ]
            self._rest = flatten_expected(self.kc.expected, calls)
        return self._rest

    def agreeing(self, passed: set[int]) -> np.ndarray:
        """Per case: every one of its calls agrees with the reference."""
        disagree = np.ones(len(self.kc.calls), dtype=np.intp)
        if passed:
            disagree[np.fromiter(passed, dtype=np.intp, count=len(passed))] = 0
        total = np.concatenate(([0], np.cumsum(disagree)))
        return total[self.end] == total[self.first]

    def ranked(self, key: str, positions: list[int]) -> list[tuple[int, object, tuple]]:
        """(position, case, shown order) of these cases of a property, best to show first:
        readable (small, round numbers), then fewest values, then corpus order. Each
        case's shown order is computed once per process, when first needed."""
        orders = self._orders.setdefault(key, {})
        for j in positions:
            if j not in orders:
                case = self.kc.cases[j]
                orders[j] = shown_order(case.prop.calls(case.value))
        return sorted(((j, self.kc.cases[j], orders[j]) for j in positions), key=lambda item: (item[2], item[0]))


_INDEX: dict[int, _CaseIndex] = {}


def _case_index(kc) -> _CaseIndex:
    index = _INDEX.get(id(kc))
    if index is None or index.kc is not kc:
        index = _INDEX[id(kc)] = _CaseIndex(kc)
    return index


def reference_agreement(kc, outcomes: list[dict], passed: set[int] | None = None) -> set[int]:
    """Every call whose outcome agrees with the reference, the laws' and the write check's
    calls too. ``passed``: :func:`agreeing_calls` (the differential ones), computed if not given."""
    passed = agreeing_calls(kc, outcomes) if passed is None else passed
    return passed | passing_calls(_case_index(kc).rest, outcomes)


def outputs_digest(kc, outcomes: list[dict], passed: set[int] | None = None) -> str | None:
    """The digest of what the kernel returned on every corpus call (:mod:`.output_digest`):
    a call that agrees with the reference counts as "agrees", whatever its float noise.
    ``passed``: :func:`agreeing_calls`, computed here if not given."""
    return output_digest.digest(kc.kernel, outcomes, reference_agreement(kc, outcomes, passed))


def failing_cases(kc, outcomes: list[dict], passed: set[int] | None = None) -> dict[str, tuple]:
    """The failing corpus case to show for each property: {key: (case, failure, order)}.

    A readable case (small, round numbers) is preferred, then the one with fewest values,
    then the earliest. A value property's failing cases are known from ``passed``
    (:func:`agreeing_calls`, computed here if not given) without judging them; only the
    best is judged, for its message. A law or the write check is judged on every case,
    and the shown order is computed only for the cases that fail.
    """
    failed: dict[str, tuple] = {}
    passed = agreeing_calls(kc, outcomes) if passed is None else passed
    index = _case_index(kc)
    agree = index.agreeing(passed)
    for prop in kc.properties:
        positions = index.positions.get(prop.key, np.zeros(0, dtype=np.intp))
        differential = _differential(prop)
        if differential:
            if agree[positions].all():
                continue  # every call agrees with the reference: nothing to judge one by one
            candidates = [j for j in positions.tolist() if not agree[j]]  # judged below, best first
        else:  # a law or the write check: judged case by case, nearly always all of them hold
            judged = {j: _judge(prop, kc, outcomes, j) for j in positions.tolist()}
            candidates = [j for j, failure in judged.items() if failure is not None]
        for position, case, order in index.ranked(prop.key, candidates):
            failure = _judge(prop, kc, outcomes, position) if differential else judged[position]
            if failure is not None:
                failed[prop.key] = (case, failure, order)
                break
    return failed


def _judge(prop, kc, outcomes: list[dict], position: int):
    case = kc.cases[position]
    span = slice(case.first_call, case.first_call + case.n_calls)
    return prop.judge(case.value, outcomes[span], kc.expected[span])


def values_checked(properties, failed) -> bool:
    """True when some value-checking property held: gated points may then be earned.

    Gated properties (invariances, no-mutation, bad input) say nothing on their own:
    a constant function is invariant, and one that always raises rejects bad input.
    """
    return any(p.key not in failed for p in properties if not p.needs_correct_values)


def inputs_word(lang: str, n: int) -> str:
    """ "input(s)" after "of n" (English), «входа/входов» after «из n» (Russian)."""
    one, many = INPUTS[lang]
    if lang == "ru":
        return one if n % 10 == 1 and n % 100 != 11 else many
    return one if n == 1 else many


def with_mistake(failure: Failure, diagnosis) -> Failure:
    """The failure, its message led by the likely mistake's explanation and how many of
    the failing inputs it explains (a :class:`~autograder.hidden.mistakes.Diagnosis`)."""
    message = {
        lang: MISTAKE_THEN[lang].format(
            lead=LEAD[lang],
            mistake=diagnosis.explanation[lang],
            explained=diagnosis.explained,
            failing=diagnosis.failing,
            inputs=inputs_word(lang, diagnosis.failing),
            message=text,
        )
        for lang, text in failure.message.items()
    }
    named = {"id": diagnosis.name, **diagnosis.explanation, "explained": diagnosis.explained, "failing": diagnosis.failing}
    return dataclasses.replace(failure, message=message, likely_mistake=named)


# Properties about edge inputs (invalid ones, empty batches) and writes: a mistake in the
# values does not explain them.
CHECKS_BEYOND_VALUES = (*EDGE_PROPERTIES, "no_mutation")


def _value_failed(failed: dict) -> bool:
    """Some property about the kernel's values failed (not only input checks or writes)."""
    return any(key not in CHECKS_BEYOND_VALUES for key in failed)


def _not_implemented(outcomes: list[dict]) -> bool:
    return all(o.get("s") == "raised" and "NotImplementedError" in o.get("exc", []) for o in outcomes)


def diagnose(kc, outcomes: list[dict], passed: set[int] | None = None) -> tuple[dict[str, tuple], object]:
    """The failing case to show per property (:func:`failing_cases`) and the likely
    mistake's diagnosis (None unless a property about the kernel's values failed).
    ``passed``: :func:`agreeing_calls`, computed here if not given."""
    passed = agreeing_calls(kc, outcomes) if passed is None else passed
    failed = failing_cases(kc, outcomes, passed)
    return failed, (diagnose_mistake(kc, outcomes, passed) if _value_failed(failed) else None)


def _batch_outcomes(kc, session: WorkerSession) -> tuple[list[dict] | None, list[TestResult]]:
    """(the outcomes of the kernel's corpus batch, []), or (None, every property failed for one
    kernel-level reason): missing, the worker lost, not implemented, or a call that hung."""
    kernel = kc.kernel
    if not session.report.found.get(kernel):
        return None, all_fail(kc, LOST["missing"], k=kernel)
    try:
        outcomes = session.call_batch(kc.request, len(kc.calls))
    except WorkerLost as lost:
        session.restart()
        return None, all_fail(kc, LOST[lost.reason], k=kernel)
    if _not_implemented(outcomes):
        return None, all_fail(kc, LOST["not_implemented"], k=kernel)
    hung = next((i for i, o in enumerate(outcomes) if o.get("s") in ("timeout", "idle")), None)
    if hung is not None:  # the worker skipped the rest of the batch after this call
        why = "call_idle" if outcomes[hung].get("s") == "idle" else "call_timeout"
        idle = session.budget.idle_wall
        return None, all_fail(kc, LOST[why], call=kc.calls[hung], k=kernel, limit=idle, total=idle * BATCH_IDLE)
    return outcomes, []


def grade_kernel(
    kc,
    session: WorkerSession,
    *,
    shrink: bool,
    shrink_budget: float,
    shrink_until: float = float("inf"),
    outputs: dict[str, str | None] | None = None,
) -> list[TestResult]:
    """The kernel's TestResults. ``outputs``, when given, gets the kernel's outputs digest
    (:func:`outputs_digest`; None when the kernel was not run to the end)."""
    kernel = kc.kernel
    if outputs is not None:
        outputs[kernel] = None  # until its calls have all come back
    outcomes, lost = _batch_outcomes(kc, session)
    if outcomes is None:
        return lost
    passed = agreeing_calls(kc, outcomes)
    if outputs is not None:
        outputs[kernel] = outputs_digest(kc, outcomes, passed)
    failed, mistake = diagnose(kc, outcomes, passed)
    values_ok = values_checked(kc.properties, failed)
    results = []
    for prop in kc.properties:
        name = {lang: prop.name(lang) for lang in ("en", "ru")}
        if prop.key not in failed and (values_ok or not prop.needs_correct_values):
            results.append(TestResult(kernel, prop.key, name, prop.points, True, hint=prop.hint))
            continue
        if prop.key not in failed:  # held, but the kernel computes nothing right
            results.append(TestResult(kernel, prop.key, name, prop.points, False, Failure(MESSAGES["gated"])))
            continue
        case, failure, order = failed[prop.key]
        budget = min(shrink_budget, shrink_until - time.monotonic())
        readable = not order[0]  # already small and round: nothing to gain from a search
        if shrink and not readable and budget > 0 and session.worker is not None:
            failure, shrink = _searched_failure(prop, session, failure, order, budget)
        if mistake is not None and prop.key not in CHECKS_BEYOND_VALUES:
            # The named mistake explains the failure; a fixed hint could contradict it.
            results.append(TestResult(kernel, prop.key, name, prop.points, False, with_mistake(failure, mistake)))
            continue
        results.append(TestResult(kernel, prop.key, name, prop.points, False, failure, hint=prop.hint))
    return results


def _searched_failure(prop, session: WorkerSession, failure: Failure, order: tuple, budget: float) -> tuple[Failure, bool]:
    """The failure to show after a counterexample search of ``budget`` seconds: the one
    found when it reads better than the corpus case (``order``: its shown order), else
    ``failure``; and whether the kernel's other properties may still search."""
    found = search_counterexample(prop, session, budget_seconds=budget)
    if session.worker is None:
        # The search lost the worker (a crash on a probe): the corpus failure
        # stands, nothing more is charged, and the next kernel gets a fresh worker.
        session.restart()
        return failure, False
    if found is not None and found[1].call is not None and shown_order([found[1].call]) < order:
        return found[1], True
    return failure, True


def graded_answers() -> list[tuple[str, str, object]]:
    """(exercise, variable name, expected answer) of every graded numerical answer, in grading order."""
    return [
        (f"ex{number:02d}", name, answer) for number in exercises.ANSWER_NAMES for name, answer in exercises.graded_answers(number).items()
    ]


def answer_title(exercise: str, name: str) -> dict[str, str]:
    """A numerical answer's test name per language, e.g. "ex09: numerical answer ex09_gap"."""
    return {lang: f"{exercise}: {t.format(name=name)}" for lang, t in ANSWER_TITLE.items()}


def grade_answers(session: WorkerSession) -> list[TestResult]:
    names = [n for number in exercises.ANSWER_NAMES for n in exercises.ANSWER_NAMES[number]]
    try:
        values = session.values(names) if session.worker is not None else {}
    except WorkerLost:
        values = {}
    results = []
    for exercise, name, answer in graded_answers():
        got = values.get(name)
        ok = got is not None and exercises.check_answer(answer, got)
        failure = None if ok else Failure({lang: t.format(name=name) for lang, t in ANSWER_WRONG.items()}, got=got)
        results.append(TestResult(exercise, name, answer_title(exercise, name), 1.0, ok, failure, hint=ANSWER_HINT))
    return results
