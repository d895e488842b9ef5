"""Points and expected time, shown where students read them, read from the nbgrader metadata.

nbgrader's metadata (``grade``, ``points``) is what the gradebook and the grader count;
this module reads it back from the built notebooks and writes what students see:

* a label after each heading or question that has graded cells under it, e.g.
  "(4 points: 3 checked automatically, 1 by hand)", in the notebook's language
  (:func:`annotate`);
* the table of parts (points, how they are graded, the course's time estimate) in the
  first cell of each notebook and in the kit's README (:func:`parts_table`).

The labels and the table are computed from the metadata, never typed; the tests read
them back from the notebooks and the README and compare (tests/autograder/assign/test_points.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autograder.check.public_text import plural_ru

# Where the table goes in a notebook's first cell (the builders write this marker).
TABLE_MARKER = "{{points_table}}"
# The course's estimate of a student's working time per part, in minutes (not measured):
# the assignment's three parts (cell ids of their headings) and the lab notebook.
EXPECTED_MINUTES = {"part1": 150, "part2": 120, "part3": 240, "lab": 120}

WORDS = {
    "en": {
        "hand": "graded by hand",
        "auto": "checked automatically",
        "mixed": "{auto} checked automatically, {hand} by hand",
        "header": "| Part | Points | How they are graded | Expected time |\n|---|---:|---|---|",
        "lab_part": "Lab notebook: written answers (the torch ports are self-checked, not graded)",
        "total": "**Total**",
        "hours": "about {hours} h",
        "estimate": (
            "Expected times are the course's estimate of working time, not measured. The lab runs its short "
            "smoke profile by default, and that is all it needs: the full profile is optional."
        ),
        "question": "**Question.**",
        "question_points": "**Question {label}.**",
    },
    "ru": {
        "hand": "проверяется вручную",
        "auto": "проверяется автоматически",
        "mixed": "{auto} — автоматически, {hand} — вручную",
        "header": "| Часть | Баллы | Как проверяется | Ожидаемое время |\n|---|---:|---|---|",
        "lab_part": "Лабораторная: письменные ответы (версии на torch проверяются самопроверкой, баллов не дают)",
        "total": "**Итого**",
        "hours": "около {hours} ч",
        "estimate": (
            "Время — оценка курса для работы над частью, а не измерение. Лабораторная по умолчанию идёт в "
            "коротком профиле smoke, и его достаточно: полный профиль — по желанию."
        ),
        "question": "**Вопрос.**",
        "question_points": "**Вопрос {label}.**",
    },
}
# A heading that can carry points: the assignment's part headings (cell ids part1..3),
# every exercise (###) and kernel or discussion (####) heading, and the lab's questions.
HEADING = re.compile(r"^(#{2,4}) ")


@dataclass(frozen=True)
class Graded:
    """One graded cell: its id, its points and whether the grader scores it (else a person)."""

    cell_id: str
    points: float
    automatic: bool


def graded(cell) -> Graded | None:
    """The cell's grading, from its nbgrader metadata; None when it carries no points.

    nbgrader's rule: a graded code cell that is not a solution is an autograded test; a
    graded solution cell (markdown or code) is marked by a person.
    """
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    if not meta.get("grade"):
        return None
    automatic = cell.get("cell_type") == "code" and not meta.get("solution")
    return Graded(str(cell.get("id")), float(meta.get("points") or 0), automatic)


def _points(value: float) -> str:
    return f"{value:g}"


def _hours(minutes: float, lang: str) -> str:
    """``minutes`` as hours in ``lang`` ("about 2.5 h", "около 2,5 ч": Russian writes a decimal comma)."""
    hours = f"{minutes / 60:g}"
    return WORDS[lang]["hours"].format(hours=hours.replace(".", ",") if lang == "ru" else hours)


def _unit(value: float, lang: str) -> str:
    if lang == "ru":
        return f"{_points(value)} " + (plural_ru(int(value), "балл", "балла", "баллов") if value == int(value) else "балла")
    return f"{_points(value)} point" + ("" if value == 1 else "s")


def how_graded(automatic: float, by_hand: float, lang: str) -> str:
    """ "checked automatically", "graded by hand", or "3 checked automatically, 1 by hand"."""
    words = WORDS[lang]
    if not by_hand:
        return words["auto"]
    if not automatic:
        return words["hand"]
    return words["mixed"].format(auto=_points(automatic), hand=_points(by_hand))


def label(cells: list[Graded], lang: str) -> str:
    """What a heading says of the graded cells under it, e.g. "(3 points, graded by hand)"."""
    automatic, by_hand = _split(cells)
    separator = ": " if automatic and by_hand else ", "
    return f"({_unit(automatic + by_hand, lang)}{separator}{how_graded(automatic, by_hand, lang)})"


def _anchor_level(cell, lang: str) -> int | None:
    """2, 3, 4 for a heading that may carry points, 5 for a lab question; None otherwise."""
    if cell.get("cell_type") != "markdown":
        return None
    source = cell.get("source", "")
    match = HEADING.match(source)
    if match:
        level = len(match[1])
        return None if level == 2 and not str(cell.get("id", "")).startswith("part") else level
    return 5 if source.startswith(WORDS[lang]["question"]) else None


def anchored(nb, lang: str) -> dict[str, list[Graded]]:
    """Anchor cell id -> the graded cells under it: each graded cell counts for the latest
    anchor of every level above it that has not been closed by a higher one."""
    open_anchors: dict[int, str] = {}
    out: dict[str, list[Graded]] = {}
    for cell in nb.cells:
        level = _anchor_level(cell, lang)
        if level is not None:
            open_anchors = {lvl: cid for lvl, cid in open_anchors.items() if lvl < level}
            open_anchors[level] = cell.id
            continue
        grading = graded(cell)
        if grading is not None:
            for anchor in open_anchors.values():
                out.setdefault(anchor, []).append(grading)
    return out


def annotate(nb, lang: str):
    """Write each anchor's points label into ``nb`` (in place) and return it."""
    by_anchor = anchored(nb, lang)
    words = WORDS[lang]
    for cell in nb.cells:
        cells = by_anchor.get(cell.id)
        if not cells:
            continue
        text = label(cells, lang)
        if cell.source.startswith(words["question"]):
            cell.source = words["question_points"].format(label=text) + cell.source[len(words["question"]) :]
        else:  # a heading: "### Exercise 9. Title — 4 points: 3 checked automatically, 1 by hand"
            first, _, rest = cell.source.partition("\n")
            cell.source = f"{first} — {text[1:-1]}" + (f"\n{rest}" if rest else "")
    return nb


@dataclass(frozen=True)
class Part:
    key: str  # the heading's cell id (part1..3) or "lab"
    title: str
    automatic: float
    by_hand: float


def parts(assignment, lab, lang: str) -> list[Part]:
    """The assignment's parts (their headings, without the points label) and the lab, with their points."""
    current: str | None = None
    sums: dict[str, list[Graded]] = {}
    titles: dict[str, str] = {}
    for cell in assignment.cells:
        if cell.cell_type == "markdown" and str(cell.id).startswith("part"):
            current = cell.id
            titles[current] = _without_label(cell.source.partition("\n")[0].lstrip("# "))
            continue
        grading = graded(cell)
        if grading is not None:
            if current is None:
                raise ValueError(f"assignment notebook: graded cell {grading.cell_id} comes before the first part heading")
            sums.setdefault(current, []).append(grading)
    out = [Part(key, titles[key], *_split(cells)) for key, cells in sums.items()]
    lab_cells = [g for g in map(graded, lab.cells) if g is not None]
    return [*out, Part("lab", WORDS[lang]["lab_part"], *_split(lab_cells))]


def _without_label(heading: str) -> str:
    """A heading without the points label :func:`annotate` appended (if any)."""
    return re.sub(r" — \d.*$", "", heading)


def _split(cells: list[Graded]) -> tuple[float, float]:
    return sum(c.points for c in cells if c.automatic), sum(c.points for c in cells if not c.automatic)


def parts_table(assignment, lab, lang: str) -> str:
    """The markdown table of parts: points, how they are graded, expected time; then a total row and a note."""
    words = WORDS[lang]
    rows = [words["header"]]
    every = parts(assignment, lab, lang)
    for part in every:
        hours = _hours(EXPECTED_MINUTES[part.key], lang)
        how = how_graded(part.automatic, part.by_hand, lang)
        rows.append(f"| {part.title} | {_points(part.automatic + part.by_hand)} | {how} | {hours} |")
    auto, hand = sum(p.automatic for p in every), sum(p.by_hand for p in every)
    hours = _hours(sum(EXPECTED_MINUTES[p.key] for p in every), lang)
    rows.append(f"| {words['total']} | **{_points(auto + hand)}** | {how_graded(auto, hand, lang)} | {hours} |")
    return "\n".join(rows) + "\n\n" + words["estimate"]


# ------------------------------------------------------------------ what the hidden tests of a kernel check
CHECKED = {
    "en": {
        "heading": "**What the hidden tests check** (each property holds on every generated input, or earns nothing):",
        "bad_input": "every bad input that the docstring's «Raises ValueError» sentence names; the message's wording is not graded",
    },
    "ru": {
        "heading": "**Что проверяют скрытые тесты** (свойство даёт баллы, только если выполняется на всех сгенерированных входах):",
        "bad_input": "каждый неверный вход, названный в предложении docstring «Выбрасывает ValueError»; текст сообщения не оценивается",
    },
}


def hidden_checks(kernel: str, lang: str, properties) -> str:
    """The kernel's hidden properties as a list (title, points), in their order; ``properties``:
    the hidden suite's (:data:`autograder.hidden.kernels.PROPERTIES`)."""
    mine = [p for p in properties if p.kernel == kernel]
    if not mine:
        raise ValueError(f"hidden_checks: `kernel` {kernel!r} has no hidden property")
    lines = [CHECKED[lang]["heading"], ""]
    for prop in mine:
        extra = f" ({CHECKED[lang]['bad_input']})" if prop.key == "bad_input" else ""
        lines.append(f"- {prop.title[lang]}{extra}: {_unit(prop.points, lang)}")
    return "\n".join(lines)
