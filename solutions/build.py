"""Regenerate solutions/{en,ru}/NN-slug.md from solutions/templates/ and reference_impl.

Usage: .venv/bin/python solutions/build.py
The rendering logic lives in autograder.export.solutions; this is only its entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.export.solutions import write_markdown

if __name__ == "__main__":
    for path in write_markdown():
        print(path.relative_to(Path(__file__).resolve().parents[1]))
