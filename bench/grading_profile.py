"""Where one submission's grading time goes, split by step.

Two measurements of the same submission (the demo's correct solution, as a .py file):

* **end to end**, through the real sandbox: a class of ``--submissions`` copies graded
  one at a time (``pipeline.grade_many``, as ``m5 grade --jobs 1``); the last one's time,
  split by timers wrapped around the grader's own steps: the hand-over of its sandbox
  and the load of its cells (``WorkerSession.start``), the wait for the worker's replies
  (``WorkerSession.call_batch`` minus the decoding inside it), the decoding
  (``wire.decode``) and the judging (``grade_kernel`` minus ``call_batch``);
* **the worker's side, replayed in this process** with the worker's own functions (the
  sandbox hides its processes from timers): per kernel batch, the student's calls alone,
  the child's per-call work around them (``run_call``, the output cap, the outbox), the
  parent's per-call checks (reading the child's messages, ``check_bunch`` /
  ``check_array``, the write check of the watched calls, the CPU clock it reads every
  POLL) and the encoding of the reply; then the decoding and the judging on the grader's
  side. Each step is timed over ``--repeats`` runs (best of them).

    .venv/bin/python bench/grading_profile.py [--submissions 3] [--repeats 5]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from autograder.grade import corpus_cache, judge, pipeline, worker_session
from autograder.grade.call_forms import prepared
from autograder.grade.worker import child, messages, parent, proctree, wire

ROOT = Path(__file__).resolve().parents[1]
CORRECT = ROOT / "autograder" / "assets" / "demo" / "correct.py"


# ---------------------------------------------------------------- end to end, in the sandbox
class Timers:
    """Seconds spent in wrapped functions, by label (a wrapped call inside another
    wrapped one is counted in both: the split subtracts it)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def wrap(self, owner, name: str, label: str):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - start

        setattr(owner, name, timed)
        return original


@contextlib.contextmanager
def wrapped(timers: Timers, targets: list[tuple[object, str, str]]):
    originals = [(owner, name, timers.wrap(owner, name, label)) for owner, name, label in targets]
    try:
        yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


def end_to_end(corpus: dict, submissions: int) -> tuple[float, dict[str, float]]:
    """(the last submission's wall time, seconds by step) of a one-at-a-time class. Its
    sandbox was handed over and its cells loaded while the one before was graded
    (``NextSubmission``): the hand-over step shows only what was left to wait for."""
    folder = Path(tempfile.mkdtemp(prefix="m5-profile-"))
    paths = []
    for i in range(submissions):
        paths.append(folder / f"s{i}.py")
        paths[-1].write_text(CORRECT.read_text())
    timers = Timers()
    targets = [
        (worker_session.WorkerSession, "start", "hand-over + cells"),
        (worker_session.WorkerSession, "call_batch", "call_batch"),
        (wire, "decode", "decode"),
        (pipeline, "grade_kernel", "grade_kernel"),  # the names grade_submission calls
        (pipeline, "grade_answers", "answers"),
    ]
    last = {}

    def on_each(index, path, result):
        last.clear()
        last.update(timers.seconds, total=result.seconds)
        timers.seconds.clear()

    with wrapped(timers, targets):
        pipeline.grade_many(paths, corpus, jobs=1, on_result=on_each, shrink=False, answers=True)
    for path in paths:
        path.unlink()
    folder.rmdir()
    return last.pop("total"), last


# ---------------------------------------------------------------- the worker's side, replayed
def namespace_of(path: Path) -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # the trusted demo solution
    return namespace


def best(repeats: int, fn) -> tuple[float, object]:
    """(the shortest time of ``repeats`` runs of ``fn``, its last result)."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def bare_calls(fn, calls: list) -> None:
    for args, kwargs in calls:
        with contextlib.suppress(Exception):  # a raise is an outcome: the bare loop only times the calls
            fn(*args, **kwargs)


def child_side(namespace: dict, name: str, calls: list, watched: set, out_fd: int) -> None:
    """The child's batch as ``child._child_batch`` runs it, minus the waits for the
    parent's go orders (watched calls' outcomes go as messages of their own, as there)."""
    fn = namespace[name]
    outbox = child.Outbox(out_fd, bytearray(8))
    me = os.getpid()
    for index, (args, kwargs) in enumerate(calls):
        outbox.starting(index)
        kind, body = child.run_call(fn, args, kwargs, me)
        kind, body = child.within_cap(kind, body, None, (args, kwargs))
        if kind == messages.K_OK and index not in watched:
            outbox.add_array(index, body)
        else:
            outbox.add(child.outcome_message(index, kind, body))
    outbox.flush()


def parent_side(form: dict, stream: bytes, inputs: bytearray) -> wire.OutcomeColumns:
    """The parent's per-call checks on the child's messages, as ``Parent._run`` does them."""
    caps, watched_calls = form["caps"], form["watched"]
    watched = sorted(watched_calls)
    caps_array = np.asarray(caps, dtype=np.float64)
    bounds = messages.bunch_caps(caps)
    fake = parent.Child.__new__(parent.Child)
    fake.buffer = bytearray(stream)

    def cap_for(kind, index):
        if kind == messages.K_BUNCH:
            return bounds[index]
        return messages.payload_cap(kind, caps[index])

    outcomes = wire.OutcomeColumns()
    host = parent.Parent.__new__(parent.Parent)
    host.inputs = inputs
    for kind, index, payload in fake._parse(cap_for):
        if kind == messages.K_BUNCH:
            outcomes.add_bunch(messages.check_bunch(payload, index, caps_array, watched))
            continue
        if kind == messages.K_OK and index not in watched_calls:
            outcomes.add_array(messages.check_array(payload, caps[index]), False)
            continue
        outcome = messages.parse_outcome(kind, payload, caps[index])
        if index in watched_calls:
            args, kwargs = watched_calls[index]
            placed = host._place(args, kwargs, 0, first=True)
            if outcome["s"] == "ok":
                outcome["mut"] = host._mutated(placed[1])
        outcomes.add(outcome)
    return outcomes


class FakeSession:
    """What ``judge.grade_kernel`` asks of a session, answering from replayed outcomes."""

    def __init__(self, outcomes: dict, found: list):
        self.outcomes = outcomes
        self.report = worker_session.LoadReport(found={k: True for k in found})
        self.budget = worker_session.Budget()
        self.worker = None

    def call_batch(self, request, n_calls):
        return self.outcomes[request]


def _input_size(args, kwargs) -> int:
    """Numbers in one call's arguments (array elements; a scalar counts 1)."""
    return sum(int(np.size(x)) for x in (*args, *kwargs.values()) if not isinstance(x, str))


def replay(corpus: dict, repeats: int) -> dict:
    """Seconds by step of the worker's side and the grader's, summed over the kernels."""
    namespace = namespace_of(CORRECT)
    steps = dict.fromkeys(("request", "calls", "child", "parent", "encode", "decode", "judge"), 0.0)
    steps["by_kernel"] = {}
    inputs = bytearray(parent.INPUT_BYTES)
    decoded = {}
    with tempfile.TemporaryFile(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as sink:
        for kernel, kc in corpus.items():
            request = wire.decode(kc.request[8:])
            form = wire.prepare_call_request(request)
            calls, watched = request["calls"], set(form["watched"])
            fn = namespace[kernel]
            by_name = prepared(kc.request, keep=True).by_name
            steps["request"] += best(repeats, lambda: wire.decode(by_name[8:]))[0]  # noqa: B023
            bare, _ = best(repeats, lambda: bare_calls(fn, calls))  # noqa: B023 - run at once

            def run_child():
                sink.seek(0)
                sink.truncate()
                child_side(namespace, kernel, calls, watched, sink.fileno())  # noqa: B023

            child_total, _ = best(repeats, run_child)
            sink.seek(0)
            stream = sink.read()
            checked, columns = best(repeats, lambda: parent_side(form, stream, inputs))  # noqa: B023
            encoded, frame = best(repeats, lambda: wire.encode({"op": "outcomes", "outcomes": columns}))  # noqa: B023
            decoding, reply = best(repeats, lambda: wire.decode(frame[8:], trusted=False))  # noqa: B023
            decoded[kc.request] = reply["outcomes"]
            steps["calls"] += bare
            steps["by_kernel"][kernel] = (len(calls), bare, max(_input_size(args, kwargs) for args, kwargs in calls))
            steps["child"] += child_total - bare
            steps["parent"] += checked
            steps["encode"] += encoded
            steps["decode"] += decoding
    session = FakeSession(decoded, list(corpus))

    def judge_all():
        for kc in corpus.values():
            judge.grade_kernel(kc, session, shrink=False, shrink_budget=0.0)

    steps["judge"], _ = best(repeats, judge_all)
    return steps


def clock_reads(seconds: float) -> float:
    """What the parent's CPU-clock reads cost in ``seconds`` of batches (one every POLL)."""
    pid = os.getpid()
    reads = 2000
    start = time.perf_counter()
    for _ in range(reads):
        proctree.cpu_seconds(pid)
    return (time.perf_counter() - start) / reads * (seconds / parent.POLL + len(pipeline.KERNELS))


def table(rows: list[tuple[str, float]], total: float) -> None:
    print("| step | seconds | share |")
    print("|---|---:|---:|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.3f} | {seconds / total:.0%} |")
    print(f"| total | {total:.3f} | |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=3, help="graded one at a time; the last one is profiled")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each replayed step (the best counts)")
    args = parser.parse_args(argv)
    corpus = corpus_cache.load_corpus()
    n_calls = sum(len(kc.calls) for kc in corpus.values())
    load = os.getloadavg()[0]
    wall, seen = end_to_end(corpus, args.submissions)
    steps = replay(corpus, args.repeats)
    steps["clock"] = clock_reads(seen.get("call_batch", 0.0))
    receive_wait = seen.get("call_batch", 0.0) - seen.get("decode", 0.0)
    judging = seen.get("grade_kernel", 0.0) - seen.get("call_batch", 0.0)
    print(f"one submission ({CORRECT.name}, {n_calls} kernel calls), load average {load:.2f}\n")
    print("End to end, in the sandbox (the last of a one-at-a-time class):\n")
    table(
        [
            ("sandbox hand-over + loading the cells", seen.get("hand-over + cells", 0.0)),
            ("waiting for the worker's replies", receive_wait),
            ("decoding the replies", seen.get("decode", 0.0)),
            ("judging", judging),
            ("numerical answers", seen.get("answers", 0.0)),
            (
                "the rest (extract, results)",
                wall - seen.get("hand-over + cells", 0.0) - seen.get("grade_kernel", 0.0) - seen.get("answers", 0.0),
            ),
        ],
        wall,
    )
    worker = steps["request"] + steps["calls"] + steps["child"] + steps["parent"] + steps["clock"] + steps["encode"]
    print("\nThe worker's side replayed in one process (best of", args.repeats, "runs), and the grader's:\n")
    table(
        [
            ("parent: decoding the batch requests", steps["request"]),
            ("the student's calls alone", steps["calls"]),
            ("child: per-call work around them (outcome, cap, outbox)", steps["child"]),
            ("parent: per-call checks (read, validate, write check)", steps["parent"]),
            ("parent: CPU clock reads (one per POLL)", steps["clock"]),
            ("parent: encoding the replies", steps["encode"]),
            ("grader: decoding the replies", steps["decode"]),
            ("grader: judging", steps["judge"]),
        ],
        worker + steps["decode"] + steps["judge"],
    )
    print(f"\nper call: worker side {worker / n_calls * 1e6:.1f} us, of which the calls {steps['calls'] / n_calls * 1e6:.1f} us")
    print(f"\nThe student's calls by kernel ({CORRECT.name}):\n")
    print("| kernel | calls | seconds | per call (us) | largest input (numbers) |")
    print("|---|---:|---:|---:|---:|")
    for kernel, (calls, seconds, largest) in steps["by_kernel"].items():
        print(f"| {kernel} | {calls} | {seconds:.4f} | {seconds / calls * 1e6:.1f} | {largest} |")
    print(
        f"\nA floor: this submission's own calls take {steps['calls']:.3f} s, whatever the grader does around them; "
        f"with nbgrader at N s a notebook, m5 --jobs 1 cannot be faster than N / {steps['calls']:.3f} times it."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
