"""Regenerate the instructor notebooks in source/module05 (EN and RU) from one builder.

    .venv/bin/python source/build.py

The builder is :mod:`autograder.assign.sources`; edit texts there (or the worked
answers in solutions/templates, the kernels in reference_impl), never the notebooks.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.assign.sources import write_sources  # noqa: E402

if __name__ == "__main__":
    for path in write_sources():
        print(f"wrote {path}")
