"""The grader's side of the worker: budgets, pipelined batches, losses that cost one kernel."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from autograder.demo import CORRECT
from autograder.grade.call_forms import prepared, reply_limits
from autograder.grade.extract import Cell
from autograder.grade.worker import wire
from autograder.grade.worker_handle import WorkerLost
from autograder.grade.worker_session import Budget, InFlight, WorkerSession

KERNELS = ["return_to_go", "expectile_loss"]
SOURCE = (
    CORRECT.read_text()
    + """

_honest_expectile_loss = expectile_loss


def expectile_loss(diff, tau):
    import os
    if tau == 0.123:
        os._exit(3)  # this one call kills the process running student code
    return _honest_expectile_loss(diff, tau)
"""
)


def request(kernel: str, calls) -> bytes:
    return wire.encode_request(
        {"op": "call", "kernel": kernel, "call_timeout": 2.0, "calls": [[list(args), kwargs] for args, kwargs in calls]}
    )


RTG = [((np.array([1.0, 0.0, 2.0]),), {"gamma": 0.5}), ((np.array([3.0]),), {})] * 20
LOSS = [((np.array([-1.0, 1.0, 2.0]), 0.8), {})] * 10


@pytest.mark.parametrize("field", ["call_timeout", "kernel_cpu_per_call", "submission_timeout"])
def test_budget_refuses_non_positive_values_naming_the_field(field):
    with pytest.raises(ValueError, match=f"Budget.{field} must be a positive number"):
        Budget(**{field: 0})


def test_reply_limits_of_a_request_match_the_worker_rule_and_corpus_requests_are_kept():
    encoded = request("return_to_go", RTG)
    assert reply_limits(encoded) == wire.reply_limits([[list(a), k] for a, k in RTG])
    assert prepared(encoded, keep=True) is prepared(encoded)  # kept: the corpus requests repeat


def test_pipelined_batches_and_an_unplanned_batch_in_between_get_their_own_replies():
    rtg, loss = request("return_to_go", RTG), request("expectile_loss", LOSS)
    with WorkerSession([Cell("a", SOURCE)], KERNELS) as session:
        assert session.start().found == {k: True for k in KERNELS}
        session.plan([(rtg, len(RTG)), (loss, len(LOSS))])
        first = session.call_batch(rtg, len(RTG))  # sends the loss batch ahead
        extra = session.call_batch(request("return_to_go", RTG[:1]), 1)  # read after it
        second = session.call_batch(loss, len(LOSS))
    assert [o["v"].tolist() for o in first[:2]] == [[1.5, 1.0, 2.0], [3.0]]
    assert extra[0]["v"].tolist() == [1.5, 1.0, 2.0]
    assert [o["v"] for o in second] == [pytest.approx(1.4)] * len(LOSS)
    assert all(o["mut"] is False for o in first + second)


def test_planned_batches_are_sent_two_ahead_and_a_queued_one_starts_its_clock_at_the_head():
    rtg, loss = request("return_to_go", RTG), request("expectile_loss", LOSS)
    tail = request("return_to_go", RTG[:3])
    with WorkerSession([Cell("a", SOURCE)], KERNELS) as session:
        session.start()
        session.plan([(rtg, len(RTG)), (loss, len(LOSS)), (tail, 3)])
        # Two in flight at once: the worker never waits for the grader to judge.
        assert [entry.request for entry in session._inflight] == [rtg, loss]
        queued_deadline = session._inflight[1].deadline
        time.sleep(0.05)
        first = session.call_batch(rtg, len(RTG))
        # loss reached the head when rtg's reply was read: its deadline was set then.
        assert session._inflight[0].request is loss and session._inflight[0].deadline > queued_deadline
        assert [entry.request for entry in session._inflight] == [loss, tail]
        second, third = session.call_batch(loss, len(LOSS)), session.call_batch(tail, 3)
    assert first[1]["v"].tolist() == [3.0] and third[1]["v"].tolist() == [3.0]
    assert [o["v"] for o in second] == [pytest.approx(1.4)] * len(LOSS)


def test_a_hung_call_is_blamed_exactly_though_the_child_sends_outcomes_in_bunches():
    # The child writes its outcomes in bunches; the call it was running when the
    # parent stopped it comes from its progress word, not from what arrived.
    spinner = (
        CORRECT.read_text()
        + """

_honest_return_to_go = return_to_go


def return_to_go(rewards, gamma=1.0):
    if len(rewards) == 7:
        while True:
            pass
    return _honest_return_to_go(rewards, gamma)
"""
    )
    calls = [((np.array([1.0, 2.0]),), {})] * 500 + [((np.zeros(7),), {})] + [((np.array([3.0]),), {})] * 20
    encoded = wire.encode_request({"op": "call", "kernel": "return_to_go", "call_timeout": 0.3, "calls": [[list(a), k] for a, k in calls]})
    with WorkerSession([Cell("a", spinner)], KERNELS) as session:
        session.start()
        outcomes = session.call_batch(encoded, len(calls))
    statuses = [o["s"] for o in outcomes]
    assert statuses.index("timeout") == 500 and set(statuses[501:]) == {"timeout"}
    assert set(statuses[:500]) <= {"ok", "unsent"} and statuses[0] == "ok"


def test_a_batch_that_kills_the_whole_worker_costs_only_its_kernel_not_the_one_queued_behind():
    parent_killer = (
        CORRECT.read_text()
        + """

_honest_expectile_loss = expectile_loss


def expectile_loss(diff, tau):
    import os
    import signal
    if tau == 0.321:
        os.kill(os.getppid(), signal.SIGKILL)  # the worker's trusted parent
        os._exit(0)
    return _honest_expectile_loss(diff, tau)
"""
    )
    killer = request("expectile_loss", [((np.array([1.0]), 0.321), {})])
    rtg = request("return_to_go", RTG)
    with WorkerSession([Cell("a", parent_killer)], KERNELS) as session:
        session.start()
        first_worker = session.worker.pid
        session.plan([(killer, 1), (rtg, len(RTG))])  # both in flight at once
        with pytest.raises(WorkerLost):
            session.call_batch(killer, 1)
        session.restart()
        assert session.worker is not None and session.worker.pid != first_worker
        again = session.call_batch(rtg, len(RTG))  # sent again, to the fresh worker
    assert again[1]["v"].tolist() == [3.0]


def test_a_call_that_kills_the_student_process_costs_only_its_batch():
    killer = request("expectile_loss", [((np.array([1.0]), 0.123), {})])
    with WorkerSession([Cell("a", SOURCE)], KERNELS) as session:
        session.start()
        worker_pid = session.worker.pid
        with pytest.raises(WorkerLost) as lost:
            session.call_batch(killer, 1)
        assert lost.value.reason == "crashed"
        session.restart()  # the worker already forked a fresh child: nothing to restart
        assert session.worker.pid == worker_pid
        again = session.call_batch(request("return_to_go", RTG), len(RTG))
    assert again[1]["v"].tolist() == [3.0]


def test_mutation_is_seen_by_the_parent_on_watched_calls_only():
    source = SOURCE + "\n\ndef return_to_go(rewards, gamma=1.0):\n    rewards[...] = 0\n    return rewards\n"
    encoded = wire.encode_request(
        {
            "op": "call",
            "kernel": "return_to_go",
            "call_timeout": 2.0,
            "watch": [1],
            "calls": [[[np.ones(2)], {}], [[np.ones(2)], {}], [[np.zeros(2)], {}]],
        }
    )
    with WorkerSession([Cell("a", source)], KERNELS) as session:
        session.start()
        outcomes = session.call_batch(encoded, 3)
    assert [o["mut"] for o in outcomes] == [False, True, False]  # the last one wrote zeros over zeros


def test_watched_calls_placed_together_each_report_only_their_own_writes():
    # The parent places every watched call's inputs at once, each in its own region; the
    # child runs them without waiting, and each is compared when its outcome is read.
    source = SOURCE + (
        "\n\ndef return_to_go(rewards, gamma=1.0):\n    if rewards[0] > 0:\n        rewards[-1] = -1.0\n    return rewards.copy()\n"
    )
    firsts = [1.0, -1.0, 2.0, 3.0, -2.0, 5.0]
    calls = [[[np.array([first, 0.5, 0.25])], {}] for first in firsts]
    encoded = wire.encode_request({"op": "call", "kernel": "return_to_go", "call_timeout": 2.0, "watch": [0, 1, 2, 3, 4], "calls": calls})
    with WorkerSession([Cell("a", source)], KERNELS) as session:
        session.start()
        outcomes = session.call_batch(encoded, len(calls))
    assert [o["mut"] for o in outcomes] == [True, False, True, True, False, False]  # the last is not watched
    assert [o["v"].tolist()[-1] for o in outcomes] == [-1.0, 0.25, -1.0, -1.0, 0.25, -1.0]


def test_the_load_request_carries_every_cell_field_and_the_import_dirs(tmp_path):
    session = WorkerSession([Cell("a", "x = 1")], KERNELS, import_dirs=[tmp_path])
    load = session._load_request()
    assert load["cells"] == [dataclasses.asdict(Cell("a", "x = 1"))]  # every field, as extract made it
    assert load["import_dirs"] == ["/m5/lib0"]
    assert load["budget"] == Budget().for_worker()


def test_import_dirs_are_readable_inside_at_their_mapped_paths(tmp_path):
    (tmp_path / "helper_mod.py").write_text("def return_to_go(rewards, gamma=1.0):\n    return [42.0]\n")
    for path in (tmp_path, tmp_path / "helper_mod.py"):  # the sandbox reads as uid 65534
        path.chmod(0o755)
    cell = Cell("a", "import sys\nsys.path.insert(0, '/m5/lib0')\nfrom helper_mod import return_to_go\n")
    with WorkerSession([cell], KERNELS, import_dirs=[tmp_path]) as session:
        assert session.start().found["return_to_go"]
        outcomes = session.call_batch(request("return_to_go", RTG[:1]), 1)
    assert outcomes[0]["v"].tolist() == [42.0]


def test_preloaded_batches_travel_by_name_and_every_fresh_child_gets_untouched_calls():
    """A session with ``preload`` names those batches instead of sending their calls; a
    kernel that writes into its inputs leaves the next child (after a loss) intact ones."""
    rtg = request("return_to_go", RTG)
    killer = request("expectile_loss", [((np.array([1.0]), 0.123), {})])
    source = (
        SOURCE
        + """

_honest_return_to_go = return_to_go


def return_to_go(rewards, gamma=1.0):
    out = _honest_return_to_go(rewards, gamma)
    rewards[...] = -7.0
    return out
"""
    )
    sent = []
    with WorkerSession([Cell("a", source)], KERNELS, preload=(rtg,)) as session:
        write = session._write
        session._write = lambda data, *a, **k: (sent.append(data), write(data, *a, **k))[1]
        session.start()
        first = session.call_batch(rtg, len(RTG))
        with pytest.raises(WorkerLost):
            session.call_batch(killer, 1)  # the child dies; the worker forks a fresh one
        again = session.call_batch(rtg, len(RTG))
    forms = prepared(rtg, keep=True)
    assert sent.count(forms.by_name) == 2 and forms.inline not in sent
    assert b"calls_blob" in forms.inline and b"calls_blob" not in forms.by_name
    # Each child got the parent's calls, which no child wrote into.
    assert first[0]["v"].tolist() == again[0]["v"].tolist() == [1.5, 1.0, 2.0]


def test_a_batch_naming_calls_the_worker_was_not_given_is_lost_not_run():
    rtg = request("return_to_go", RTG)
    with WorkerSession([Cell("a", SOURCE)], KERNELS) as session:
        session.start()
        session._write(prepared(rtg, keep=True).by_name)
        session._inflight.append(InFlight(rtg, float("inf"), prepared(rtg).limits, len(RTG), False))
        with pytest.raises(WorkerLost) as lost:
            session.call_batch(rtg, len(RTG))
    assert lost.value.reason == "protocol"


def _lose_workers_before_their_first_cell(monkeypatch, lost: int) -> list:
    """The first ``lost`` load attempts lose their worker before it announces a cell."""
    from autograder.grade import worker_session

    attempts = []
    real_send, real_receive = worker_session.WorkerSession._send_load, worker_session.WorkerSession._receive

    def send_load(self):
        attempts.append(self.worker.pid)
        real_send(self)

    def receive(self, *args, **kwargs):
        if self._loading and len(attempts) <= lost:
            raise WorkerLost("crashed")
        return real_receive(self, *args, **kwargs)

    monkeypatch.setattr(worker_session.WorkerSession, "_send_load", send_load)
    monkeypatch.setattr(worker_session.WorkerSession, "_receive", receive)
    return attempts


def test_a_worker_lost_before_its_first_cell_is_started_again_and_the_cells_are_all_loaded(monkeypatch):
    from autograder.grade.worker_session import WORKER_START_RETRIES

    attempts = _lose_workers_before_their_first_cell(monkeypatch, WORKER_START_RETRIES)
    with WorkerSession([Cell("a", SOURCE)], KERNELS) as session:
        report = session.start()
    assert len(attempts) == WORKER_START_RETRIES + 1 and len(set(attempts)) == len(attempts)  # a new sandbox each time
    assert report.found == {k: True for k in KERNELS} and report.fatal_cells == []


def test_workers_that_keep_failing_before_any_cell_raise_instead_of_grading_zero(monkeypatch):
    from autograder.grade.worker_session import WORKER_START_RETRIES, GradingUnavailable

    attempts = _lose_workers_before_their_first_cell(monkeypatch, 99)
    with (
        WorkerSession([Cell("a", SOURCE)], KERNELS) as session,
        pytest.raises(GradingUnavailable, match=f"lost {WORKER_START_RETRIES + 1} times"),
    ):
        session.start()
    assert len(attempts) == WORKER_START_RETRIES + 1
