"""The capstone lab notebook (placeholder, filled in below)."""
from __future__ import annotations

from autograder.assign import sources as s


def lab_notebook(lang: str):
    return s._notebook([s.markdown("intro", "# Lab")], "lab", lang)
