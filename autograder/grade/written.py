"""The written answers: the markdown answer cells graded by hand (47 of the 167 points).

Their questions, points and model answers come from the instructor sources
(``source/``, identified by nbgrader ``grade_id``); a class run
keeps every submission's answers in ``written_answers.json`` (:func:`write_class_answers`)
for ``m5 review`` (``export/review.py``). A submission is read as text through
:func:`student_files.read_bytes` (no link followed, size capped) and its JSON only; an
answer left as the release's stub counts as blank.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from autograder.grade import outputs
from autograder.grade.student_files import MAX_NOTEBOOK_BYTES, SubmissionError, as_mapping, read_bytes, source_text

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = {"assignment": "m05_assignment_{lang}.ipynb", "lab": "m05_lab_{lang}.ipynb"}
LANGS = ("en", "ru")
ANSWERS_FILE = "written_answers.json"
MAX_ANSWER_CHARS = 20_000
MAX_QUESTIONS = 40  # answer cells read from one notebook when their ids are not known
TEXT_STUBS = {"en": "YOUR ANSWER HERE", "ru": "ВАШ ОТВЕТ"}  # what nbgrader leaves in an answer cell


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _answer_cells(cells: list[dict]):
    """(index, grade_id, points) of each markdown cell graded by hand."""
    for i, cell in enumerate(cells):
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") == "markdown" and meta.get("grade") and meta.get("solution"):
            yield i, meta.get("grade_id"), float(meta.get("points") or 0)


@lru_cache(maxsize=None)
def questions(lang: str = "en") -> tuple[dict, ...]:
    """Every hand-graded question, in notebook order (the assignment's, then the lab's):
    ``id``, ``notebook``, ``points``, ``question`` (the markdown cell before the answer),
    ``model`` (the instructor source's answer)."""
    out = []
    for notebook, name in NOTEBOOKS.items():
        file = name.format(lang=lang)
        source = _cells(REPO / "source" / f"module05_{lang}" / file)
        for i, gid, points in _answer_cells(source):
            out.append(
                {
                    "id": gid,
                    "notebook": notebook,
                    "points": points,
                    "question": source_text(source[i - 1].get("source", "")) if i else "",
                    "model": source_text(source[i].get("source", "")),
                }
            )
    return tuple(out)


def maximum() -> float:
    """The points of every hand-graded question (the same in both languages)."""
    return sum(q["points"] for q in questions("en"))


def answers_in(path: Path, ids: set[str] | None = None) -> tuple[str, dict[str, str]]:
    """(notebook kind, {question id: answer}) of a submitted notebook; a blank or stub
    answer is "". ``ids``: the questions to read (default: every hand-graded markdown
    cell the notebook marks, at most MAX_QUESTIONS, for a grader without the sources).
    An unreadable file gives ("", {})."""
    try:
        notebook = json.loads(read_bytes(path, MAX_NOTEBOOK_BYTES).decode("utf-8"))
    except (SubmissionError, OSError, UnicodeDecodeError, ValueError):
        return "", {}
    return answers_of(notebook, ids)


def answers_of(notebook, ids: set[str] | None = None) -> tuple[str, dict[str, str]]:
    """:func:`answers_in` of a notebook's JSON already read (the grading pass reads each
    submission once: ``extract.Submission.notebook``)."""
    try:
        cells = notebook["cells"]
        meta = (notebook.get("metadata") or {}).get("m5") or {}
    except (KeyError, TypeError, AttributeError):
        return "", {}
    if not isinstance(cells, list) or not isinstance(meta, dict):
        return "", {}
    kind = meta.get("kind") if meta.get("kind") in NOTEBOOKS else ""
    stubs = set(TEXT_STUBS.values())
    found: dict[str, str] = {}
    for cell in cells:
        nbgrader = as_mapping(as_mapping(cell.get("metadata")).get("nbgrader")) if isinstance(cell, dict) else {}
        gid = nbgrader.get("grade_id")
        if not isinstance(gid, str) or cell.get("cell_type") != "markdown":
            continue
        wanted = gid in ids if ids is not None else (nbgrader.get("grade") and nbgrader.get("solution"))
        if wanted and (ids is not None or len(found) < MAX_QUESTIONS):
            text = source_text(cell.get("source", "")).strip()[:MAX_ANSWER_CHARS]
            found[gid[:80]] = "" if text in stubs else text
    return kind, found


def question_ids() -> set[str] | None:
    """The ids of the hand-graded questions (from the checkout's notebooks); None where the
    sources are not there (an installed copy): then the cells a notebook marks are read."""
    try:
        return {q["id"] for q in questions("en")}
    except (OSError, ValueError, KeyError):
        return None


def class_answers(out: Path) -> list[dict]:
    """The entries a class run kept in ``out/written_answers.json`` (none when there is no such file)."""
    path = Path(out) / ANSWERS_FILE
    if not path.exists():
        return []
    try:
        entries = json.loads(read_bytes(path, 512 * MAX_NOTEBOOK_BYTES).decode("utf-8"))["submissions"]
    except (SubmissionError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("label"), str)] if isinstance(entries, list) else []


def write_class_answers(out: Path, entries: list[dict]) -> Path:
    """``out/written_answers.json``: for each notebook (``label``, ``student``, ``notebook``,
    ``answers``), in class order."""
    path = out / ANSWERS_FILE
    return outputs.write_json(path, {"format": 1, "submissions": entries})


def entry(item, kind: str, answers: dict[str, str]) -> dict:
    """One notebook's line of ``written_answers.json`` (``item``: a discovery ``Found``)."""
    label = item.relative or item.path.name
    return {"label": label, "student": item.student or label, "notebook": kind, "answers": answers}  # as the sheets name one
