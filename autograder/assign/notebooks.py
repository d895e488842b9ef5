"""Every instructor notebook: the assignment (``sources.py``) and the lab (``lab_source.py``),
in both languages, built and written to ``source/``."""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograder.assign import lab_source, points, rubrics, sources


def notebooks_of(lang: str) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """The assignment and lab notebooks of ``lang``, finished: every heading and question
    that carries points says how many (:func:`points.annotate`), each first cell holds the
    table of parts, both read from the notebooks' nbgrader metadata, and every written
    answer has its rubric (:func:`rubrics.attach`)."""
    assignment, lab = sources.assignment_notebook(lang), lab_source.lab_notebook(lang)
    for nb in (assignment, lab):
        points.annotate(nb, lang)
        rubrics.attach(nb, lang)  # expected length and what a full answer covers; the whole rubric in the metadata
    table = points.parts_table(assignment, lab, lang)
    for nb in (assignment, lab):
        intro = nb.cells[0]
        if intro.source.count(points.TABLE_MARKER) != 1:
            raise ValueError(f"{nb.metadata['m5']['kind']} notebook ({lang}): its first cell must hold {points.TABLE_MARKER} once")
        intro.source = intro.source.replace(points.TABLE_MARKER, table)
    return assignment, lab


def build_notebooks() -> dict[str, nbformat.NotebookNode]:
    """Every source notebook by file name."""
    out = {}
    for lang in sources.LANGS:
        out[sources.NOTEBOOK_NAMES["assignment", lang]], out[sources.NOTEBOOK_NAMES["lab", lang]] = notebooks_of(lang)
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
