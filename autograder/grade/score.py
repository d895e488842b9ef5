"""Turn judged properties into points: per property, per kernel, per submission."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from autograder.grade.properties import Call, Failure
from reference_impl import exercises


@dataclass
class TestResult:
    """One graded item: a kernel property or a numerical answer."""

    group: str  # kernel name or exercise ("ex09")
    key: str
    name: dict[str, str]  # display name per language, starts with the group
    max_score: float
    passed: bool
    failure: Failure | None = None
    counterexample: Call | None = None
    hint: dict[str, str] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0


@dataclass
class SubmissionResult:
    """What grading one submission found, and where the submission came from.

    ``relative`` (the path relative to the common root of a class run), ``student``,
    ``assignment`` and ``timestamp`` are filled by the front door (``m5 grade``,
    Gradescope) from where the file was found; the pipeline knows only the file.
    """

    submission: str
    language: str
    tests: list[TestResult]
    seconds: float = 0.0
    notes: list[dict[str, str]] = field(default_factory=list)  # e.g. cells that failed to load
    error: str | None = None
    relative: str = ""  # e.g. "alice/module05/m05_assignment_en.ipynb"; "" = the file name
    student: str = ""  # nbgrader student id, or the file's stem for a plain folder
    assignment: str = ""  # nbgrader assignment folder name, "" when there is none
    timestamp: str = ""  # from nbgrader's timestamp.txt, "" when there is none
    # Per graded kernel, the digest of its outputs on the hidden inputs (grade/output_digest.py),
    # None when it was not run to the end; for the similarity flags, never for the grade.
    outputs: dict[str, str | None] = field(default_factory=dict)
    # What the grading pass read of the submission for the class outputs, so that they do
    # not read it again: its own code (similarity.code_of) and a notebook's written answers
    # ((notebook kind, {question id: answer}): written.answers_of); None when not read.
    code: str | None = None
    written: tuple[str, dict[str, str]] | None = None

    @property
    def label(self) -> str:
        """The row's identity in a class run: the relative path, else the file name."""
        return self.relative or self.submission

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    def by_group(self) -> dict[str, tuple[float, float]]:
        groups: dict[str, list[float]] = {}
        for t in self.tests:
            got, total = groups.setdefault(t.group, [0.0, 0.0])
            groups[t.group] = [got + t.score, total + t.max_score]
        return {g: (v[0], v[1]) for g, v in groups.items()}


def assignment_total() -> float:
    """The documented maximum of one assignment, whatever the submission format:
    the hidden properties' points plus one point per graded numerical answer (exNN_)."""
    from autograder.hidden.kernels import PROPERTIES  # Hypothesis (0.2 s): m5 grade starts its first worker before it loads

    answers = sum(len(exercises.graded_answers(number)) for number in exercises.ANSWER_NAMES)
    return float(sum(p.points for p in PROPERTIES) + answers)


def class_summary(results: list[SubmissionResult], lang: str = "en") -> list[dict]:
    """Per group: mean score, max score, and the most commonly failed test."""
    rows: dict[str, dict] = {}
    for result in results:
        for group, (got, total) in result.by_group().items():
            row = rows.setdefault(group, {"group": group, "scores": [], "max": total, "failed": Counter()})
            row["scores"].append(got)
        for t in result.tests:
            if not t.passed:
                rows[t.group]["failed"][t.name[lang]] += 1
    summary = []
    for row in rows.values():
        common = row["failed"].most_common(1)
        summary.append(
            {
                "group": row["group"],
                "mean": sum(row["scores"]) / len(row["scores"]),
                "max": row["max"],
                "most_failed": f"{common[0][0]} ({common[0][1]}x)" if common else "",
            }
        )
    return summary
