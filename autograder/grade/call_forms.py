"""The forms a call request travels in to the worker, made once per process.

The corpus' requests are the same for every submission. Each has an inline form (the
request carrying its calls) and, once its calls are preloaded into the worker, a
by-name form (the request naming them). :func:`worker_forms` packs both, with the
preload file, for the on-disk cache beside the corpus; :func:`adopt_forms` takes
them back in another process.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass

from autograder.grade.worker import wire


@dataclass(frozen=True)
class Prepared:
    """An encoded call request in the worker's forms (:func:`wire.prepare_call_request`)."""

    name: str  # names its calls in the preload file
    inline: bytes  # the request carrying its calls
    by_name: bytes  # the same request naming calls preloaded into the worker (kept ones only)
    limits: tuple[int, int]  # (header, blob) bytes a reply may use: wire.limits_for_caps


_PREPARED: dict[bytes, Prepared] = {}
_PRELOADS: dict[tuple[bytes, ...], bytes] = {}


def prepared(request: bytes, *, keep: bool = False) -> Prepared:
    """The worker's forms of an encoded call request and the reply limits for it. With
    ``keep`` (the corpus' requests, which repeat for every submission) the result is
    kept for the life of the process; one-off requests (shrinking's) are not."""
    entry = _PREPARED.get(request)
    if entry is None:
        decoded = wire.decode(request[8:])
        name = hashlib.blake2b(request, digest_size=16).hexdigest()
        inline = wire.prepare_call_request(decoded)
        # Only kept requests (the corpus') are ever preloaded: a one-off one needs no by-name form.
        by_name = wire.encode_request(wire.prepare_call_request(decoded, ref=name)) if keep else b""
        entry = Prepared(name, wire.encode_request(inline), by_name, wire.limits_for_caps(inline["caps"]))
        if keep:
            _PREPARED[request] = entry
    return entry


def preload_file(requests: tuple[bytes, ...]) -> bytes:
    """The worker's preload file for these (kept) call requests: ``{name: calls}``
    pickled once per process (see ``worker/__init__.py``)."""
    if requests not in _PRELOADS:
        calls = {prepared(request, keep=True).name: wire.decode(request[8:])["calls"] for request in requests}
        _PRELOADS[requests] = pickle.dumps(calls, protocol=pickle.HIGHEST_PROTOCOL)
    return _PRELOADS[requests]


def worker_forms(requests: tuple[bytes, ...]) -> dict:
    """The kept forms of these call requests and their preload file, to be cached on
    disk beside the corpus (making them costs most of a one-submission run's start)."""
    return {"prepared": [(request, prepared(request, keep=True)) for request in requests], "preload": (requests, preload_file(requests))}


def adopt_forms(forms: dict | None) -> None:
    """Take forms made by :func:`worker_forms` (from the trusted corpus cache)."""
    if not forms:
        return
    for request, entry in forms["prepared"]:
        _PREPARED.setdefault(request, entry)
    requests, data = forms["preload"]
    _PRELOADS.setdefault(tuple(requests), data)


def reply_limits(request: bytes) -> tuple[int, int]:
    """(header, blob) bytes a reply to this encoded call request may use."""
    return prepared(request).limits
