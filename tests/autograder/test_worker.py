"""The wire codec shared by the grader and the sandboxed worker."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

from autograder.grade import worker as wire


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


@pytest.mark.parametrize("mutate", [
    lambda h: h.replace(b"<f8", b"|O8"),            # object dtype smuggled in
    lambda h: h.replace(b"[3]", b"[99999999999]"),   # huge shape
])
def test_untrusted_decode_refuses_tampered_arrays(mutate):
    frame = wire.encode({"v": np.zeros(3)})[8:]
    hlen = int.from_bytes(frame[:4], "big")
    header = mutate(frame[4:4 + hlen])
    tampered = len(header).to_bytes(4, "big") + header + frame[4 + hlen:]
    with pytest.raises(wire.WireError):
        wire.decode(tampered, trusted=False)


def test_truncated_and_garbage_frames_are_wire_errors():
    with pytest.raises(wire.WireError):
        wire.decode(b"\x00")
    with pytest.raises(wire.WireError):
        wire.decode(b"\x00\x00\x00\x05{bad}")
    with pytest.raises(wire.WireError):
        wire.decode(b"\xff\xff\xff\xff{}")


def test_run_call_reports_values_errors_and_mutation():
    ok = wire.run_call(lambda x: x * 2, (np.arange(3.0),), {}, timeout=2)
    assert ok["s"] == "ok" and not ok["mut"] and ok["v"].tolist() == [0, 2, 4]

    def mutate(x):
        x[0] = 99
        return x

    assert wire.run_call(mutate, (np.zeros(2),), {}, timeout=2)["mut"] is True
    raised = wire.run_call(lambda x: (_ for _ in ()).throw(ValueError("bad `x`")), (1,), {}, timeout=2)
    assert raised["s"] == "raised" and "ValueError" in raised["exc"] and "bad" in raised["msg"]
    assert wire.run_call(lambda: object(), (), {}, timeout=2)["s"] == "bad_return"
    assert wire.run_call(lambda: "text", (), {}, timeout=2)["s"] == "bad_return"


def test_requests_travel_as_pickle_but_the_grader_refuses_pickle_frames():
    request = {"op": "call", "calls": [[[np.arange(3.0), True], {"gamma": 0.5}]]}
    frame = wire.encode_request(request)[8:]
    back = wire.decode(frame)  # the worker side
    np.testing.assert_array_equal(back["calls"][0][0][0], np.arange(3.0))
    with pytest.raises(wire.WireError, match="pickle"):
        wire.decode(frame, trusted=False)  # a worker sending pickle to the grader
