"""Regenerate the instructor sources: source/module05_en and source/module05_ru (notebooks and student kit).

    .venv/bin/python source/build.py      (`m5 release` does this too, then builds release/)

The builders are :mod:`autograder.assign.sources` (notebooks) and
:mod:`autograder.assign.release` (the kit); edit texts there (or the worked answers in
solutions/templates, the kernels in reference_impl), never the generated files.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.assign.release import build_sources, release_files  # noqa: E402

if __name__ == "__main__":
    for folder in build_sources():
        print(f"wrote {len(release_files(folder))} files to {folder}")
