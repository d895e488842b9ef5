"""Limits and the keeper's rlimits (autograder/grade/sandbox/limits.py)."""

from __future__ import annotations

import resource

from autograder.grade.sandbox import limits as sandbox_limits
from autograder.grade.sandbox.limits import Limits


def test_rlimits_include_nproc_only_when_asked():
    wanted = Limits(cpu_seconds=5, memory_bytes=1 << 30, max_file_bytes=1 << 20, max_processes=7)
    names = {name: (soft, hard) for name, soft, hard in sandbox_limits.rlimits(wanted, nproc=False)}
    assert names == {"RLIMIT_CPU": (5, 6), "RLIMIT_AS": (1 << 30, 1 << 30), "RLIMIT_FSIZE": (1 << 20, 1 << 20), "RLIMIT_CORE": (0, 0)}
    with_nproc = sandbox_limits.rlimits(wanted, nproc=True)
    assert ("RLIMIT_NPROC", 7, 7) in with_nproc


def test_unraisable_limits_name_what_ulimit_took_away(monkeypatch):
    real = resource.getrlimit

    def capped(which):
        if which == resource.RLIMIT_AS:
            return (1 << 30, 1 << 30)  # as after `ulimit -v 1048576`
        return real(which)

    monkeypatch.setattr(resource, "getrlimit", capped)
    monkeypatch.setattr(sandbox_limits.os, "geteuid", lambda: 1000)
    problems = sandbox_limits.unraisable_limits(Limits(memory_bytes=4 << 30))
    assert problems == [f"RLIMIT_AS is capped at {1 << 30} for this process (ulimit), the worker needs {4 << 30}"]
    assert sandbox_limits.unraisable_limits(Limits(memory_bytes=1 << 30)) == []
    monkeypatch.setattr(sandbox_limits.os, "geteuid", lambda: 0)  # root may raise them
    assert sandbox_limits.unraisable_limits(Limits(memory_bytes=4 << 30)) == []
