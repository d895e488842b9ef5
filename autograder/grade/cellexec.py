"""Run a submission's cells inside the worker (the sandbox side of extraction).

Copied into the sandbox next to ``worker.py`` and loaded by it; imports only the
standard library. The worker passes in its timer so one cell cannot run forever.
"""
from __future__ import annotations


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_cells(cells, kernels, cell_timeout, send, *, timed, untimed, timeout_exc, request=None) -> dict:
    """Execute ``cells`` ({"id", "source"}) in one namespace, in order.

    Returns {"op": "loaded", "cells": [{"id", "ok", "error"}], "found": {kernel: bool},
    "namespace": dict}; ``send({"op": "cell", "id"})`` announces each cell first, so
    the grader knows which cell killed the worker if it dies.
    """
    namespace = {"__name__": "__submission__", "__builtins__": __builtins__}
    report = []
    for cell in cells:
        send({"op": "cell", "id": cell["id"]})
        try:
            code = compile(cell["source"], f"<cell {cell['id']}>", "exec")
        except SyntaxError as exc:
            report.append({"id": cell["id"], "ok": False, "error": _short(f"SyntaxError: {exc.msg} (line {exc.lineno})")})
            continue
        try:
            timed(cell_timeout)
            try:
                exec(code, namespace)
            finally:
                untimed()
        except timeout_exc:
            report.append({"id": cell["id"], "ok": False, "error": f"the cell ran longer than {cell_timeout:g} s"})
        except BaseException as exc:
            report.append({"id": cell["id"], "ok": False, "error": _short(f"{type(exc).__name__}: {exc}")})
        else:
            report.append({"id": cell["id"], "ok": True, "error": None})
    found = {name: callable(namespace.get(name)) for name in kernels}
    return {"op": "loaded", "cells": report, "found": found, "namespace": namespace}
