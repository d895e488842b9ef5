"""Every instructor notebook: the assignment (``sources.py``) and the lab (``lab_source.py``),
in both languages, built and written to ``source/``."""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograder.assign import lab_source, sources


def build_notebooks() -> dict[str, nbformat.NotebookNode]:
    """Every source notebook by file name."""
    out = {}
    for lang in sources.LANGS:
        out[sources.NOTEBOOK_NAMES["assignment", lang]] = sources.assignment_notebook(lang)
        out[sources.NOTEBOOK_NAMES["lab", lang]] = lab_source.lab_notebook(lang)
    return out


def write_sources(out_root: Path = sources.SOURCE_ROOT, langs: tuple[str, ...] = sources.LANGS) -> list[Path]:
    """Write the source notebooks of ``langs`` into ``out_root/module05_<lang>/``; returns the paths written."""
    written = []
    for nb in build_notebooks().values():
        if nb.metadata["m5"]["lang"] not in langs:
            continue
        path = sources.notebook_path(nb.metadata["m5"]["kind"], nb.metadata["m5"]["lang"], out_root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sources.notebook_text(nb), encoding="utf-8")
        written.append(path)
    return written
