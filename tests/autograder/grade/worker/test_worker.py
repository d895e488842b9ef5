"""The wire codec shared by the grader and the sandboxed worker, and the child's messages."""

import json
import os

import numpy as np
import pytest
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.grade.worker import cellexec, wire
from autograder.grade.worker.child import Outbox, outcome_message, run_call
from autograder.grade.worker.messages import (
    K_BAD,
    K_BUNCH,
    K_CELL,
    K_LOADED,
    K_OK,
    K_RAISED,
    MESSAGE_HEADER,
    Bunch,
    ProtocolError,
    bunch_caps,
    check_bunch,
    pack_array,
    parse_outcome,
    payload_cap,
    unpack_array,
)
from autograder.grade.worker.parent import CHILD_FORK_RETRIES, Child, ChildGone, Parent

WORKER_MAIN = os.path.join(os.path.dirname(wire.__file__), "main.py")  # the sandbox's entry point


def roundtrip(obj, trusted=True):
    frame = wire.encode(obj)
    n = int.from_bytes(frame[:8], "big")
    assert n == len(frame) - 8
    return wire.decode(frame[8:], trusted=trusted)


@settings(max_examples=50, derandomize=True, database=None)
@given(hnp.arrays(hnp.scalar_dtypes().filter(lambda d: d.kind in "biuf"), hnp.array_shapes(min_dims=0, max_dims=3)))
def test_arrays_roundtrip_exactly(arr):
    back = roundtrip({"v": arr, "nested": [arr, {"x": 1.5}]}, trusted=False)
    for got in (back["v"], back["nested"][0]):
        assert got.dtype == arr.dtype and got.shape == arr.shape
        np.testing.assert_array_equal(got, arr)
    assert back["nested"][1] == {"x": 1.5}


def test_numpy_scalars_travel_as_python_numbers_and_nan_survives():
    back = roundtrip({"g": np.float64(0.5), "i": np.int64(3), "b": np.bool_(True), "n": float("nan")})
    assert back["g"] == 0.5 and type(back["g"]) is float and back["i"] == 3 and back["b"] is True
    assert back["n"] != back["n"]


def test_object_arrays_cannot_be_encoded():
    with pytest.raises(wire.WireError):
        wire.encode({"v": np.array([object()], dtype=object)})


@pytest.mark.parametrize(
    "mutate",
    [
        lambda h: h.replace(b"<f8", b"|O8"),  # object dtype smuggled in
        lambda h: h.replace(b"[3]", b"[99999999999]"),  # huge shape
    ],
)
def test_untrusted_decode_refuses_tampered_arrays(mutate):
    frame = wire.encode({"v": np.zeros(3)})[8:]
    hlen = int.from_bytes(frame[:4], "big")
    header = mutate(frame[4 : 4 + hlen])
    tampered = len(header).to_bytes(4, "big") + header + frame[4 + hlen :]
    with pytest.raises(wire.WireError):
        wire.decode(tampered, trusted=False)


def test_truncated_and_garbage_frames_are_wire_errors():
    with pytest.raises(wire.WireError):
        wire.decode(b"\x00")
    with pytest.raises(wire.WireError):
        wire.decode(b"\x00\x00\x00\x05{bad}")
    with pytest.raises(wire.WireError):
        wire.decode(b"\xff\xff\xff\xff{}")


def test_run_call_reports_values_errors_and_bad_returns():
    me = os.getpid()
    kind, value = run_call(lambda x: x * 2, (np.arange(3.0),), {}, me)
    assert kind == K_OK and value.tolist() == [0, 2, 4]
    kind, body = run_call(lambda x: (_ for _ in ()).throw(ValueError("bad `x`")), (1,), {}, me)
    assert kind == K_RAISED and "ValueError" in body["exc"] and "bad" in body["msg"]
    assert run_call(lambda: object(), (), {}, me)[0] == K_BAD
    assert run_call(lambda: "text", (), {}, me)[0] == K_BAD


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


def test_an_exception_that_cannot_be_printed_still_reports_its_type():
    kind, body = run_call(lambda: (_ for _ in ()).throw(Unprintable()), (), {}, os.getpid())
    assert kind == K_RAISED and body["msg"] == "Unprintable"


@settings(max_examples=50, derandomize=True, database=None)
@given(hnp.arrays(hnp.scalar_dtypes().filter(lambda d: d.kind in "biuf"), hnp.array_shapes(min_dims=0, max_dims=3)))
def test_child_arrays_reach_the_parent_exactly(arr):
    back = unpack_array(pack_array(arr), cap=arr.size)
    assert back.shape == arr.shape and back.dtype == arr.dtype.newbyteorder("=")
    np.testing.assert_array_equal(back, arr)


def test_child_arrays_of_any_layout_reach_the_parent_in_c_order():
    base = np.arange(12.0).reshape(3, 4)
    for arr in (base.T, base[:, ::2], np.asfortranarray(base), base.astype(">f8").T):
        back = unpack_array(pack_array(arr), cap=arr.size)
        np.testing.assert_array_equal(back, arr)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda p: p.replace(b"<f8", b"|O8"),  # object dtype
        lambda p: p.replace(b"<f8", b"<c8"),  # complex: not a plain number
        lambda p: p[:-8],  # fewer bytes than the shape says
        lambda p: p + b"\0" * 8,  # more bytes than the shape says
        lambda p: p[:2] + b"\xff" * 8,  # a garbage head
    ],
)
def test_parent_refuses_tampered_child_arrays(tamper):
    payload = pack_array(np.zeros(3))
    with pytest.raises(ProtocolError):
        unpack_array(tamper(payload), cap=100)


def test_parent_refuses_arrays_beyond_the_call_cap():
    payload = pack_array(np.zeros(5))
    assert unpack_array(payload, cap=5).shape == (5,)
    with pytest.raises(ProtocolError):
        unpack_array(payload, cap=4)


def test_parsed_outcomes_are_bounded_whatever_the_child_sends():
    body = json.dumps({"exc": ["X" * 10_000] * 1000, "msg": "m" * 10_000}).encode()
    outcome = parse_outcome(K_RAISED, body, cap=1)
    assert len(outcome["exc"]) == wire.MAX_EXC_NAMES and all(len(n) <= wire.MAX_NAME_CHARS for n in outcome["exc"])
    assert len(outcome["msg"]) <= wire.MAX_MESSAGE_CHARS
    assert parse_outcome(K_RAISED, b'{"exc": 5, "msg": [1]}', cap=1) == {"s": "raised", "exc": [], "msg": ""}
    for garbage in (b"[1, 2]", b"not json", b"\xff"):
        with pytest.raises(ProtocolError):
            parse_outcome(K_BAD, garbage, cap=1)
    with pytest.raises(ProtocolError):
        parse_outcome(K_CELL, b"{}", cap=1)


def test_output_caps_hold_every_reference_outcome_of_the_corpus(corpus):
    """No correct kernel meets the cap: every reference output of every corpus call fits."""
    for kc in corpus.values():
        for call, outcome in zip(kc.calls, kc.expected):
            if outcome["s"] == "ok":
                assert np.size(outcome["v"]) <= wire.output_cap(call.args, call.kwargs) / wire.OUTPUT_FACTOR


def test_reply_limits_grow_with_the_request_not_with_the_reply():
    small = wire.reply_limits([[[np.zeros(3)], {}]])
    large = wire.reply_limits([[[np.zeros(300)], {"gamma": 0.5}]] * 10)
    assert small[0] < large[0] and small[1] < large[1]
    # each call: its values at the widest dtype, plus its share of the outcome columns
    assert large[1] == 10 * (wire.output_cap([np.zeros(300)], {"gamma": 0.5}) * wire.MAX_ITEMSIZE + wire.COLUMN_BYTES)


def test_count_values_walks_nested_lists_and_counts_scalars():
    assert wire.count_values([[1, 2], [3]]) == 3 and wire.count_values(np.zeros((2, 3))) == 6
    assert wire.count_values(0.5) == 1 and wire.count_values("text") == 1


def test_requests_travel_as_pickle_but_the_grader_refuses_pickle_frames():
    request = {"op": "call", "calls": [[[np.arange(3.0), True], {"gamma": 0.5}]]}
    frame = wire.encode_request(request)[8:]
    back = wire.decode(frame)  # the worker side
    np.testing.assert_array_equal(back["calls"][0][0][0], np.arange(3.0))
    with pytest.raises(wire.WireError, match="pickle"):
        wire.decode(frame, trusted=False)  # a worker sending pickle to the grader


def _header_and_blob(frame: bytes):
    size = int.from_bytes(frame[8:12], "big")
    return json.loads(frame[12 : 12 + size]), frame[12 + size :]


def _sample_outcomes():
    outcomes = [
        parse_outcome(K_OK, pack_array(np.arange(n, dtype=dt)), 64)
        for n, dt in [(3, np.float64), (0, np.float32), (1, np.bool_), (2, np.int64)]
    ]
    outcomes[1]["mut"] = True
    outcomes += [{"s": "raised", "exc": ["ValueError"], "msg": 'a "quoted" \\ message'}, {"s": "timeout"}, {"s": "bad_return", "msg": "x"}]
    outcomes.append(parse_outcome(K_OK, pack_array(np.ones((2, 2))), 64))
    return outcomes


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    return all(np.array_equal(a[k], b[k]) and np.asarray(a[k]).dtype == np.asarray(b[k]).dtype if k == "v" else a[k] == b[k] for k in a)


def test_outcome_columns_decode_to_what_the_generic_encoder_carries():
    outcomes = _sample_outcomes()
    columns = wire.encode({"op": "outcomes", "outcomes": outcomes})
    generic = wire.encode({"op": "outcomes", "outcomes": outcomes, "generic": True})  # the plain JSON form
    head, _ = _header_and_blob(columns)
    assert "cols" in head and [i for i, _ in head["others"]] == [4, 5, 6]  # only the non-arrays as JSON
    decoded = wire.decode(columns[8:], trusted=False)["outcomes"]
    plain = wire.decode(generic[8:], trusted=False)["outcomes"]
    assert len(decoded) == len(plain) == len(outcomes) and all(map(_same, decoded, plain))
    assert decoded[0]["v"].tolist() == [0.0, 1.0, 2.0] and decoded[1]["mut"] is True
    assert decoded[-1]["v"].shape == (2, 2) and decoded[4]["msg"] == 'a "quoted" \\ message'


def _tampered(field: str, change) -> bytes:
    frame = wire.encode({"op": "outcomes", "outcomes": _sample_outcomes()})
    head, blob = _header_and_blob(frame)
    blob = bytearray(blob)
    change(head, blob, field)
    header = json.dumps(head).encode()
    return wire._HDR.pack(len(header)) + header + bytes(blob)


def _column(head, blob, field):
    offset, nbytes, dtype, shape = head["cols"][field]["__nd__"]
    return np.frombuffer(blob, dtype=dtype, count=nbytes // np.dtype(dtype).itemsize, offset=offset)


def _set(field, index, value):
    def change(head, blob, _):
        view = _column(head, blob, field)
        raw = bytearray(view.tobytes())
        arr = np.frombuffer(raw, dtype=view.dtype)
        arr[index] = value
        offset = head["cols"][field]["__nd__"][0]
        blob[offset : offset + len(raw)] = raw

    return change


@pytest.mark.parametrize(
    "field,change",
    [
        ("index", _set("index", 0, 9)),  # an index past n
        ("index", _set("index", 1, 0)),  # indices out of order (a duplicate)
        ("code", _set("code", 0, 250)),  # no such dtype
        ("ndim", _set("ndim", 0, 40)),  # rank beyond MAX_NDIM
        ("dims", _set("dims", 0, 1 << 40)),  # a dimension far too large
        ("dims", _set("dims", 0, 4)),  # values no longer fill their part of the blob
        ("mut", _set("mut", 0, 7)),  # a write flag that is not 0/1
        ("n", lambda head, blob, _: head.update(n=3)),
        ("n", lambda head, blob, _: head.update(n=1 << 23)),  # a huge claim: refused before any list of that size
        ("others", lambda head, blob, _: head["others"].append([0, {"s": "timeout"}])),  # filled twice
        ("others", lambda head, blob, _: head["others"].pop()),  # one missing
        ("cols", lambda head, blob, _: head["cols"].pop("dims")),
        ("cols", lambda head, blob, _: head["cols"]["values"]["__nd__"].__setitem__(2, "<f8")),
    ],
)
def test_untrusted_outcome_columns_refuse_every_inconsistency(field, change):
    with pytest.raises(wire.WireError):
        wire.decode(_tampered(field, change), trusted=False)


def test_a_forged_array_outside_an_outcomes_value_stays_plain_json():
    ref = {"__nd__": [0, 8, "<f8", [1]]}
    header = json.dumps({"op": "outcomes", "outcomes": [{"s": "raised", "exc": ["ValueError"], "msg": ref}]}).encode()
    payload = wire._HDR.pack(len(header)) + header + np.zeros(1).tobytes()
    decoded = wire.decode(payload, trusted=False)
    assert decoded["outcomes"][0]["msg"] == ref
    with pytest.raises(wire.WireError):  # a value's reference is still checked against the blob
        bad = json.dumps({"op": "outcomes", "outcomes": [{"s": "ok", "v": {"__nd__": [0, 80, "<f8", [10]]}}]}).encode()
        wire.decode(wire._HDR.pack(len(bad)) + bad + np.zeros(1).tobytes(), trusted=False)


# ---------------------------------------------------------------- bunches of outcomes
# The child sends consecutive plain array outcomes as one K_BUNCH message of columns; the
# parent checks it in a few vectorised steps. What reaches the grader must be what one
# message per outcome carried, and every inconsistency must be refused.
def _child_stream(outcomes, watched=frozenset()) -> bytes:
    """The bytes a child's Outbox writes for ``outcomes`` (arrays, or (kind, body) for
    the others), calls in ``watched`` sent as messages of their own."""
    read_end, write_end = os.pipe()
    wire.widen_pipe(write_end)  # the whole stream fits: read only once the outbox is done
    outbox = Outbox(write_end, bytearray(8))
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, np.ndarray) and index not in watched:
            outbox.add_array(index, outcome)
        elif isinstance(outcome, np.ndarray):
            outbox.add(outcome_message(index, K_OK, outcome))
        else:
            outbox.add(outcome_message(index, *outcome))
    outbox.flush()
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 1 << 20):
        chunks.append(chunk)
    os.close(read_end)
    return b"".join(chunks)


def _parent_reads(stream: bytes, caps: list[int], watched=()) -> list:
    """The outcomes the parent makes of a child's stream (as Parent._run reads it),
    through the reply encoding and the grader's untrusted decode."""
    child = Child.__new__(Child)
    child.buffer = bytearray(stream)
    bounds = bunch_caps(caps)
    columns = wire.OutcomeColumns()
    for kind, index, payload in child._parse(lambda kind, index: bounds[index] if kind == K_BUNCH else payload_cap(kind, caps[index])):
        assert index == columns.n
        if kind == K_BUNCH:
            columns.add_bunch(check_bunch(payload, index, np.asarray(caps, dtype=float), sorted(watched)))
        else:
            columns.add(parse_outcome(kind, payload, caps[index]))
    assert not child.buffer
    return roundtrip({"op": "outcomes", "outcomes": columns}, trusted=False)["outcomes"]


ANY_ARRAY = hnp.arrays(
    hnp.scalar_dtypes().filter(lambda d: d.kind in "biuf" and d.itemsize <= wire.MAX_ITEMSIZE),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0),
)


@settings(max_examples=60, derandomize=True, database=None)
@given(
    st.lists(
        st.one_of(
            ANY_ARRAY,
            ANY_ARRAY.map(lambda a: a.T),
            ANY_ARRAY.map(lambda a: a.astype(a.dtype.newbyteorder())),
            st.just((K_RAISED, {"exc": ["E"], "msg": "m"})),
        ),
        max_size=12,
    ),
    st.sets(st.integers(0, 11)),
)
def test_bunched_outcomes_reach_the_grader_as_single_messages_carried_them(outcomes, watched):
    """Any dtype (other byte orders included), rank, layout, empty arrays, raised calls
    and watched calls in between: the same outcomes, in order, as one message each."""
    watched = {i for i in watched if i < len(outcomes)}
    caps = [max(1, o.size) if isinstance(o, np.ndarray) else 1 for o in outcomes]
    got = _parent_reads(_child_stream(outcomes, watched), caps, watched)
    single = b"".join(outcome_message(i, *((K_OK, o) if isinstance(o, np.ndarray) else o)) for i, o in enumerate(outcomes))
    assert len(got) == len(outcomes)
    for back, by_one in zip(got, _parent_reads(single, caps)):
        assert _same(back, by_one)
    for back, sent in zip(got, outcomes):
        if isinstance(sent, np.ndarray):
            assert back["s"] == "ok" and back["v"].shape == sent.shape and back["mut"] is False
            np.testing.assert_array_equal(back["v"], sent)


def test_a_bunch_closes_at_every_message_of_its_own_and_flush():
    arrays = [np.arange(3.0), np.arange(2, dtype=np.int64), np.zeros((2, 2), dtype=np.float32)]
    outcomes = [arrays[0], arrays[1], (K_BAD, {"msg": "x"}), arrays[2], arrays[0]]
    stream = _child_stream(outcomes, watched={3})
    kinds = []
    child = Child.__new__(Child)
    child.buffer = bytearray(stream)
    for kind, index, _ in child._parse(lambda kind, index: 1 << 20):
        kinds.append((kind, index))
    assert kinds == [(K_BUNCH, 0), (K_BAD, 2), (K_OK, 3), (K_BUNCH, 4)]


def _bunch(arrays, first=0) -> bytes:
    bunch = Bunch(first)
    assert all(bunch.add(a) for a in arrays)
    return bunch.message()[MESSAGE_HEADER.size :]


def _edit(payload: bytes, at: int, data: bytes) -> bytes:
    return payload[:at] + data + payload[at + len(data) :]


# Two outcomes: float64 of shape (2, 3), then int64 of shape (4,). Layout: count (4 bytes),
# codes (2), ranks (2), dims (3 x 8), values (48 + 32).
F8, I8 = wire.WIRE_DTYPES.index("<f8"), wire.WIRE_DTYPES.index("<i8")
BAD_BUNCHES = {
    "empty payload": lambda p: b"",
    "truncated count": lambda p: p[:3],
    "zero outcomes": lambda p: _edit(p, 0, (0).to_bytes(4, "big")),
    "more outcomes than calls left": lambda p: _edit(p, 0, (3).to_bytes(4, "big")),
    "huge count": lambda p: _edit(p, 0, (2**32 - 1).to_bytes(4, "big")),
    "unknown dtype code": lambda p: _edit(p, 4, bytes([len(wire.WIRE_DTYPES)])),
    "code 255": lambda p: _edit(p, 5, b"\xff"),
    "rank over MAX_NDIM": lambda p: _edit(p, 6, bytes([wire.MAX_NDIM + 1])),
    "rank says more dims than sent": lambda p: _edit(p, 6, bytes([20])),
    "dim over MAX_ARRAY_ELEMENTS": lambda p: _edit(p, 8, (wire.MAX_ARRAY_ELEMENTS + 1).to_bytes(8, "big")),
    "shape over the call's cap": lambda p: _edit(p, 8, (3).to_bytes(8, "big")),
    "values cut short": lambda p: p[:-8],
    "values too long": lambda p: p + b"\0" * 8,
    "dtype swapped for a narrower one": lambda p: _edit(p, 5, bytes([wire.WIRE_DTYPES.index("|u1")])),
}


def test_a_well_formed_bunch_is_read_back():
    payload = _bunch([np.arange(6.0).reshape(2, 3), np.arange(4)])
    k, codes, ranks, dims, values = check_bunch(payload, 0, np.array([6.0, 4.0]), [])
    assert (k, list(codes), ranks.tolist(), dims.tolist(), len(values)) == (2, [F8, I8], [2, 1], [2, 3, 4], 80)


@pytest.mark.parametrize("name", sorted(BAD_BUNCHES))
def test_the_parent_refuses_every_inconsistent_bunch(name):
    payload = BAD_BUNCHES[name](_bunch([np.arange(6.0).reshape(2, 3), np.arange(4)]))
    with pytest.raises(ProtocolError):
        check_bunch(payload, 0, np.array([6.0, 4.0]), [])


def test_dims_whose_product_wraps_around_are_refused():
    """2**16 four times is 2**64 values: 0 in int64 arithmetic, which would let an empty
    values part pass."""
    bunch = Bunch(0)
    bunch.codes.append(F8)
    bunch.ranks.append(4)
    bunch.dims += [2**16] * 4
    with pytest.raises(ProtocolError):
        check_bunch(bunch.message()[MESSAGE_HEADER.size :], 0, np.array([float(wire.MAX_ARRAY_ELEMENTS)]), [])


def test_a_bunch_may_not_hold_a_watched_call_nor_start_past_the_batch():
    payload = _bunch([np.zeros(1), np.zeros(1)], first=3)
    caps = np.ones(6)
    assert check_bunch(payload, 3, caps, [0, 2, 5])[0] == 2
    for watched in ([3], [4], [1, 4, 5]):  # its outcome must come alone, after the inputs are compared
        with pytest.raises(ProtocolError):
            check_bunch(payload, 3, caps, watched)
    with pytest.raises(ProtocolError):
        check_bunch(payload, 5, caps, [])  # two outcomes, one call left


def test_a_bunch_head_is_bounded_by_the_calls_left():
    caps = [1, 10, 3]
    bounds = bunch_caps(caps)
    assert bounds[0] > bounds[1] > bounds[2] > 0
    widest = [np.zeros(c, dtype=np.float64) for c in caps]  # every later call at its cap
    assert len(_bunch(widest)) <= bounds[0] and len(_bunch(widest[2:], first=2)) <= bounds[2]


# ---------------------------------------------------------------- imports before the fork
# A fresh child per submission pays for every module numpy imports on first use (and
# for copying the zygote's pages the import touches): np.isin of an empty array pulled
# in numpy.ma for about 20 ms of CPU in every submission. The worker imports such
# modules before forking (worker.import_lazy_numpy); this runs student-style kernels over the
# whole corpus in a clean interpreter set up as the zygote is, and lists what numpy
# still imports lazily.
LAZY_IMPORTS_SCRIPT = """
import importlib.util, json, pickle, sys, warnings
spec = importlib.util.spec_from_file_location("m5_worker", sys.argv[1])  # main.py: the package m5worker
worker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(worker)
if sys.argv[3] == "preimport":
    worker.import_lazy_numpy()
with open(sys.argv[2], "rb") as fh:
    calls, submissions = pickle.load(fh)
before = {m for m in sys.modules if m.split(".")[0] == "numpy"}
warnings.simplefilter("ignore")
for source, kernels in submissions:
    namespace = {}
    exec(compile(source, "<submission>", "exec"), namespace)
    for kernel in kernels:
        for args, kwargs in calls[kernel]:
            try:
                namespace[kernel](*args, **kwargs)
            except Exception:
                pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "numpy" and m not in before)))
"""


def _numpy_imported_lazily(corpus, tmp_path, preimport: bool) -> list[str]:
    import pickle
    import subprocess
    import sys

    from heldout.heldout import HELD_OUT  # tests/autograder is on sys.path (pytest rootdir-relative import)
    from mutants.mutants import MUTANTS, compose

    from autograder.demo import write_demo_submissions

    every_kernel = list(corpus)
    demo = [(p.read_text(), every_kernel) for p in write_demo_submissions(tmp_path / "demo") if p.name != "adversarial.py"]
    loops = [((FIXTURES / "submissions" / "correct_loops.py").read_text(), every_kernel)]
    one_kernel = [(compose(m), [m.kernel]) for m in MUTANTS] + [(h.submission(), [h.kernel]) for h in HELD_OUT]
    calls = {k: [(c.args, c.kwargs) for c in kc.calls] for k, kc in corpus.items()}
    data = tmp_path / "calls.pkl"
    data.write_bytes(pickle.dumps((calls, demo + loops + one_kernel)))
    out = subprocess.run(
        [sys.executable, "-c", LAZY_IMPORTS_SCRIPT, WORKER_MAIN, str(data), "preimport" if preimport else "plain"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_student_style_kernels_import_no_numpy_module_in_a_fresh_child(corpus, tmp_path):
    assert _numpy_imported_lazily(corpus, tmp_path, preimport=True) == []


def test_without_the_preimport_numpy_ma_is_imported_lazily(corpus, tmp_path):
    # The check above can fail: without the worker's preimport, these kernels do import.
    assert "numpy.ma" in _numpy_imported_lazily(corpus, tmp_path, preimport=False)


# ---------------------------------------------------------------- a blank child's page copies
TOUCH_SCRIPT = """
import gc, importlib.util, json, os, resource, sys
import numpy as np
spec = importlib.util.spec_from_file_location("m5_worker", sys.argv[1])  # main.py: the package m5worker
spec.loader.exec_module(importlib.util.module_from_spec(spec))
from m5worker.child import touch_preloaded
rng = np.random.default_rng(0)
preloaded = {"k": [[[rng.random(4), rng.integers(0, 3, 4)], {"gamma": float(g)}] for g in rng.random(5000)]}
gc.freeze()
faults = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt
call = lambda *args, **kwargs: None
read, write = os.pipe()
if os.fork() == 0:
    before = faults()
    if sys.argv[2] == "touch":
        touch_preloaded(preloaded)
    touched = faults()
    for args, kwargs in preloaded["k"]:
        call(*args, **kwargs)
    os.write(write, json.dumps([touched - before, faults() - touched]).encode())
    os._exit(0)
os.wait()
print(os.read(read, 100).decode())
"""


@pytest.mark.parametrize("touch", [True, False])
def test_a_blank_child_copies_the_pages_its_calls_write_before_its_submission(tmp_path, touch):
    """After touch_preloaded, passing the preloaded arguments to a kernel copies almost no
    page; without it, the calls themselves copy them (so the check can fail)."""
    import subprocess
    import sys

    script = tmp_path / "touch.py"
    script.write_text(TOUCH_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script), WORKER_MAIN, "touch" if touch else "none"], capture_output=True, text=True, check=True
    ).stdout
    while_waiting, while_calling = json.loads(out)
    if touch:
        assert while_waiting > 100 and while_calling < while_waiting / 10
    else:
        assert while_calling > 100


# ------------------------------------------------------------------ loading: what is left out
def test_an_announcement_names_a_statement_only_in_a_python_file():
    ids, files = {"c1", "python-file"}, {"python-file"}
    assert Parent._announced({"id": "python-file", "line": 12}, ids, files) == ("python-file", 12)
    assert Parent._announced({"id": "c1", "line": 12}, ids, files) == ("c1", None)  # a cell runs whole
    for line in (None, 0, -3, True, 1.5, "12", 1 << 40):  # what a forged announcement may carry
        assert Parent._announced({"id": "python-file", "line": line}, ids, files) == ("python-file", None)
    with pytest.raises(ProtocolError):
        Parent._announced({"id": "c9", "line": 1}, ids, files)


def test_cells_left_out_are_dropped_and_statements_left_out_are_skipped():
    parent = Parent.__new__(Parent)
    parent.fatal = {
        ("c1", None): ("stopped", wire.FATAL_CELL),
        ("python-file", 7): ("stopped", wire.FATAL_STATEMENT),
        ("python-file", 3): ("timed_out", "the statement ran longer than 20 s"),
    }
    cells = [{"id": "c0", "source": "a = 1"}, {"id": "c1", "source": "import os; os._exit(1)"}, {"id": "python-file", "source": "..."}]
    assert parent._cells_to_run(cells) == [cells[0], {**cells[2], "skip_lines": [3, 7]}]
    entries = {(e["id"], e["line"]): e for e in parent._left_out()}
    assert entries["c1", None]["reason"] == "stopped" and not entries["c1", None]["timed_out"]
    assert entries["python-file", 3]["timed_out"] and entries["python-file", 3]["error"].startswith("the statement")


# ------------------------------------------------------------------ loading: a child lost before any cell
class _ChildLostBeforeItsCells:
    """A stand-in child: dies (ChildGone) before announcing a cell ``dies`` times, then
    loads every kernel."""

    def __init__(self, attempts: list, dies: int):
        attempts.append(self)
        self.pid, self.replies, self.lost = 0, -1, len(attempts) <= dies

    def messages(self, timeout, cap_for):
        if self.lost:
            raise ChildGone()
        return [(K_LOADED, 0, json.dumps({"cells": [], "found": {"k": True}}).encode())]

    def cpu(self) -> float:
        return 0.0

    def kill(self) -> None:
        pass


def _parent_whose_children_die(monkeypatch, dies: int) -> tuple[Parent, list]:
    attempts: list = []
    parent = Parent.__new__(Parent)
    parent.cellexec = cellexec
    parent.child = None
    monkeypatch.setattr(parent, "fork_child", lambda cells: _ChildLostBeforeItsCells(attempts, dies), raising=False)
    return parent, attempts


@pytest.mark.parametrize("dies", [1, CHILD_FORK_RETRIES])
def test_a_child_lost_before_its_first_cell_is_forked_again_and_nothing_is_left_out(monkeypatch, dies):
    parent, attempts = _parent_whose_children_die(monkeypatch, dies)
    loaded = parent.load({"cells": [{"id": "c0", "source": "x = 1"}], "kernels": ["k"], "cell_timeout": 5.0})
    assert len(attempts) == dies + 1
    assert loaded["found"] == {"k": True} and loaded["cells"] == [] and "unstarted" not in loaded


def test_children_that_keep_dying_before_any_cell_are_reported_unstarted_not_as_a_submission_without_kernels(monkeypatch):
    parent, attempts = _parent_whose_children_die(monkeypatch, CHILD_FORK_RETRIES + 1)
    loaded = parent.load({"cells": [{"id": "c0", "source": "x = 1"}], "kernels": ["k"], "cell_timeout": 5.0})
    assert len(attempts) == CHILD_FORK_RETRIES + 1
    assert loaded["unstarted"] is True and loaded["cells"] == []  # no cell is blamed
