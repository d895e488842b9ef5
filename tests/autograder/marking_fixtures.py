"""A small graded class for the marking tests, written directly (no sandbox, milliseconds).

:func:`make_gradebook` writes what ``m5 grade`` leaves in its ``--out`` folder and the marking
reads: ``grades.json`` (one row per student, accepted by ``gradebook.load``), the sheets
(``grades.csv`` ...) and ``written_answers.json`` with the given answers.
"""

from __future__ import annotations

from pathlib import Path

from autograder.grade import gradebook, shards, written

AUTOMATIC = 100.0  # every student's automatic points, so a sheet's total is 100 + their written marks
CLASS = {
    "alice": {"q01_answer": "behaviour cloning at the token level", "q02_answer": "errors compound", "ex09_explain": "mean"},
    "bob": {"q01_answer": "the state is the prompt", "q02_answer": "", "ex09_explain": "median"},
    "carol": {"q01_answer": "<script>alert('x')</script>\u202eevil", "q02_answer": "DAgger fixes it"},
}


def row(student: str, score: float = AUTOMATIC) -> dict:
    """One graded submission's row of grades.json (the fields gradebook.load checks, plus a record)."""
    label = f"{student}/m05_assignment_en.ipynb"
    record = {"label": label, "score": score, "maximum": 120.0, "graded": True, "error": "", "seconds": 1.0}
    record.update(failed=[], mistakes=[], answers=[], limits=[])
    return {
        "label": label,
        "student": student,
        "assignment": "module05_en",
        "language": "en",
        "timestamp": "",
        "score": score,
        "maximum": 120.0,
        "groups": [["dqn_targets", 10.0]],
        "error": "",
        "digest": "d" * 64,
        "submitted": "",
        "time_source": "",
        "record": record,
    }


def make_gradebook(folder: Path, answers: dict[str, dict[str, str]] | None = None) -> Path:
    """A gradebook in ``folder``: a row per student of ``answers`` ({student: {question id: text}},
    default :data:`CLASS`) and their written answers; returns the folder."""
    answers = CLASS if answers is None else answers
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [row(student) for student in answers]
    shards.write_rows_file(folder, None, len(rows), list(range(len(rows))), rows, [r["record"] for r in rows], {"class": "c"}, root="/x")
    entries = [
        {"label": r["label"], "student": student, "notebook": "assignment", "answers": dict(texts)}
        for r, (student, texts) in zip(rows, answers.items())
    ]
    written.write_class_answers(folder, entries)
    gradebook.rebuild(folder)
    return folder
