"""One floating-point code path for the lab on every x86 CPU.

A seed decides a run's floats only together with the code that sums them. Two libraries
under torch choose that code by the machine:

* MKL (torch's BLAS on x86) picks a code path by the CPU's vendor and model unless
  ``MKL_CBWR`` ("conditional numerical reproducibility") names one. ``AVX2`` is the
  path of every x86 CPU with AVX2, the same set ATen is pinned to below; the older
  ``COMPATIBLE`` path also covers CPUs without AVX2, at a cost (below).
* torch's vectorised kernels pick AVX-512, AVX2 or plain code by the instructions the
  CPU offers (``ATEN_CPU_CAPABILITY``); AVX2 is offered by every x86 CPU sold since
  about 2015, so asking for it makes AVX2 and AVX-512 machines agree.

Both are read by the libraries the first time they compute, not when torch is imported,
so :func:`pin_numerics` runs when :mod:`reference_impl` is imported (before any of its
training code). A value the user already set wins and is recorded in the run's machine
description (:func:`numerics_description`), so a deliberate choice is visible. Measured on
the 2-core AMD host (`bench/HISTORY.md`): on the Decision Transformer's training step
``AVX2`` is as fast as MKL's own choice (153 and 159 ms), ``COMPATIBLE`` 1.6x slower; ATen's
``avx2`` costs nothing measurable. On an x86 CPU without AVX2 the two libraries take other paths and a run's
floats differ, as they do across architectures. On ARM (Apple silicon) neither library is
used this way and the settings are inert.
"""

from __future__ import annotations

import os

#: Environment settings that fix the code path of a run's floating-point sums.
PINNED: dict[str, str] = {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}


def pin_numerics(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Set every :data:`PINNED` variable not already set; return the values in effect."""
    env = os.environ if environ is None else environ
    for name, value in PINNED.items():
        env.setdefault(name, value)
    return {name: env[name] for name in PINNED}


def numerics_description(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The settings that decided this process's sums (see :data:`PINNED`); ``"unset"`` for
    a variable nobody set (a process that never imported :mod:`reference_impl`)."""
    env = os.environ if environ is None else environ
    return {name: env.get(name, "unset") for name in PINNED}
