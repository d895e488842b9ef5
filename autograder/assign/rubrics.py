"""The rubrics of the written answers (``rubrics.toml``): loaded, checked, and shown where students answer.

Every hand-graded answer cell (its nbgrader ``grade_id``) has a rubric: its expected length and
items, each with points, the marker's wording and what the student reads. The notebook builder
writes the student's part (expected length, what a full answer covers, points per item) into
the cell just above the answer, and the whole rubric into the instructor source's answer-cell
metadata (``m5.rubric``), which the release removes (:func:`strip_rubric`).

A rubric is sound when its positive items add up to exactly the cell's points; negative items
are deductions; a score is floored at 0 and capped at the points (:func:`score`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from autograder.check.public_text import plural_ru

RUBRICS_PATH = Path(__file__).resolve().parent / "rubrics.toml"
LANGS = ("en", "ru")
METADATA_KEY = "rubric"  # under the cell's metadata "m5"

WORDS = {
    "en": {"length": "Expected length", "covers": "A full answer covers", "point": "point", "points": "points"},
    "ru": {"length": "Ожидаемый объём", "covers": "Полный ответ содержит", "point": "балл", "points": "балла"},
}


class RubricError(ValueError):
    """A rubric that is missing, malformed or does not add up to its cell's points."""


@dataclass(frozen=True)
class Item:
    points: float
    student: dict[str, str]
    marker: dict[str, str]


@dataclass(frozen=True)
class Rubric:
    grade_id: str
    length: dict[str, str]
    items: tuple[Item, ...]

    @property
    def best(self) -> float:
        """The score of an answer that earns every positive item and no deduction."""
        return sum(item.points for item in self.items if item.points > 0)

    def as_metadata(self) -> dict:
        return {"length": dict(self.length), "items": [{"points": i.points, "student": i.student, "marker": i.marker} for i in self.items]}


def _texts(value, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or set(value) != set(LANGS) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        raise RubricError(f"{where}: needs a non-empty text in each of {LANGS}, got {value!r}")
    return {lang: value[lang].strip() for lang in LANGS}


def parse(data: dict) -> dict[str, Rubric]:
    """{grade_id: Rubric} from the TOML's tables; RubricError names the first problem."""
    out = {}
    for grade_id, table in data.items():
        if not isinstance(table, dict) or not isinstance(table.get("items"), list) or not table["items"]:
            raise RubricError(f"rubric {grade_id}: needs `length` and a non-empty `items` list")
        items = []
        for k, raw in enumerate(table["items"], start=1):
            where = f"rubric {grade_id}, item {k}"
            points = raw.get("points") if isinstance(raw, dict) else None
            if isinstance(points, bool) or not isinstance(points, (int, float)) or points == 0:
                raise RubricError(f"{where}: `points` must be a non-zero number, got {points!r}")
            items.append(
                Item(float(points), _texts(raw.get("student"), f"{where}: `student`"), _texts(raw.get("marker"), f"{where}: `marker`"))
            )
        out[grade_id] = Rubric(grade_id, _texts(table.get("length"), f"rubric {grade_id}: `length`"), tuple(items))
    return out


@lru_cache(maxsize=2)
def load(path: Path = RUBRICS_PATH) -> dict[str, Rubric]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RubricError(f"{path}: cannot be read as TOML ({exc})") from None
    return parse(data)


def check(rubric: Rubric, points: float) -> None:
    """RubricError unless the rubric's best case is exactly ``points``."""
    if abs(rubric.best - points) > 1e-9:
        raise RubricError(f"rubric {rubric.grade_id}: its positive items add up to {rubric.best:g}, the cell is worth {points:g}")


def score(rubric: Rubric, earned: list[bool], points: float) -> float:
    """The points of an answer that earns the items flagged in ``earned``: floored at 0, capped at ``points``."""
    if len(earned) != len(rubric.items):
        raise RubricError(f"rubric {rubric.grade_id}: `earned` needs {len(rubric.items)} flags, got {len(earned)}")
    total = sum(item.points for item, got in zip(rubric.items, earned) if got)
    return min(max(total, 0.0), points)


def _points(value: float, lang: str) -> str:
    if lang == "ru":
        return f"{value:g} " + plural_ru(int(value), "балл", "балла", "баллов")
    return f"{value:g} " + WORDS[lang]["point" if value == 1 else "points"]


def student_text(rubric: Rubric, lang: str) -> str:
    """What the notebook shows above the answer: the expected length and what a full answer covers."""
    words = WORDS[lang]
    covers = "; ".join(f"{item.student[lang]} ({_points(item.points, lang)})" for item in rubric.items if item.points > 0)
    return f"*{words['length']}:* {rubric.length[lang]}. *{words['covers']}:* {covers}."


def attach(nb, lang: str, *, instructor: bool = True, rubrics: dict[str, Rubric] | None = None):
    """Write each hand-graded answer's rubric into ``nb`` (in place): the student's part at the end
    of the markdown cell above the answer, the whole rubric into the answer cell's ``m5.rubric``
    metadata when ``instructor``. RubricError when a hand-graded cell has no rubric or it does
    not add up to the cell's points."""
    rubrics = load() if rubrics is None else rubrics
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if not (meta.get("grade") and meta.get("solution")):
            continue
        grade_id = meta.get("grade_id")
        if grade_id not in rubrics:
            raise RubricError(f"the hand-graded cell {grade_id} has no rubric in {RUBRICS_PATH.name}")
        rubric = rubrics[grade_id]
        check(rubric, float(meta.get("points") or 0))
        above = nb.cells[i - 1]
        if i == 0 or above.cell_type != "markdown":
            raise RubricError(f"the hand-graded cell {grade_id} has no markdown cell above it for its rubric")
        above.source = above.source.rstrip() + "\n\n" + student_text(rubric, lang)
        if instructor:
            cell.metadata.setdefault("m5", {})[METADATA_KEY] = rubric.as_metadata()
    return nb


def strip_rubric(nb) -> bool:
    """Remove the instructor's rubric metadata from every cell (the student release); True if any was there."""
    found = False
    for cell in nb.cells:
        m5 = cell.metadata.get("m5")
        if isinstance(m5, dict) and METADATA_KEY in m5:
            del m5[METADATA_KEY]
            if not m5:
                del cell.metadata["m5"]
            found = True
    return found
