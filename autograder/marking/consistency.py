"""After marking: is a marker much harsher (or kinder) than the others, and which answers left their group's mark.

Both questions are asked of the decisions with their markers (from the sheets, :func:`from_sheets`,
or from the marking page's store), the rubric items and, for the second, the answer groups:

* per question and marker: how many answers they marked, the mean and the median mark. A marker is
  flagged when they marked at least :data:`MIN_ANSWERS` answers of the question, the other markers
  together marked at least :data:`MIN_ANSWERS` too, and the marker's mean differs from the others'
  pooled mean by more than :data:`SPREAD` of the question's points: ``harsher`` below it,
  ``kinder`` above. A flag asks for a look, not for a change: one marker may have had the weaker answers.
* per answer group (any object with ``id``, ``question``, ``members``: the students whose answers
  are in it, and ``representative``): the group's mark is the most common mark among its marked
  members (a tie goes to the representative's mark when it is one of the tied, else to the lowest);
  every marked member whose mark differs from it is listed.

Blank answers are 0 without a marker and take no part. :func:`write_report` writes a page (no
script, everything escaped) and two CSV files, in English or Russian; the same decisions give the
same bytes.
"""

from __future__ import annotations

import csv
import html
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grade import outputs, report
from autograder.marking import model, sheets

MIN_ANSWERS = 5  # fewer answers say little about a marker's habits
SPREAD = 1 / 3  # of the question's points: a mean this far from the others' is worth a look
HARSHER, KINDER = "harsher", "kinder"
PAGE_NAME = "consistency.html"
MARKERS_CSV = "consistency_markers.csv"
GROUPS_CSV = "consistency_groups.csv"
MARKER_COLUMNS = ["question", "marker", "count", "mean", "median", "others_mean", "flag"]
GROUP_COLUMNS = ["question", "group", "student", "mark", "group_mark", "marker"]
WORDS = {
    "en": {
        "title": "Marking consistency",
        "rule": (
            f"A marker is flagged when they marked at least {MIN_ANSWERS} answers of a question, the others at least "
            f"{MIN_ANSWERS} together, and their mean mark is more than a third of the question's points from the others' mean. "
            "A flag asks for a look: one marker may have had the weaker answers."
        ),
        "markers": "Marks per marker",
        "groups": "Answers whose mark differs from their group's",
        "group_rule": "A group's mark is the most common mark of its marked answers.",
        "none": "None.",
        HARSHER: "harsher",
        KINDER: "kinder",
        **{c: c.replace("_", " ") for c in MARKER_COLUMNS + GROUP_COLUMNS},
        "others_mean": "the others' mean",
        "group_mark": "the group's mark",
        "unknown": "(unknown)",
    },
    "ru": {
        "title": "Согласованность проверки",
        "rule": (
            f"Проверяющий отмечен, если он проверил не меньше {MIN_ANSWERS} ответов на вопрос, остальные вместе — тоже не меньше "
            f"{MIN_ANSWERS}, и его средний балл отличается от среднего остальных больше чем на треть баллов вопроса. "
            "Отметка — повод посмотреть: одному проверяющему могли достаться более слабые ответы."
        ),
        "markers": "Баллы по проверяющим",
        "groups": "Ответы, чей балл отличается от балла их группы",
        "group_rule": "Балл группы — самый частый балл её проверенных ответов.",
        "none": "Нет.",
        HARSHER: "строже",
        KINDER: "мягче",
        "question": "вопрос",
        "marker": "проверяющий",
        "count": "ответов",
        "mean": "среднее",
        "median": "медиана",
        "others_mean": "среднее остальных",
        "flag": "отметка",
        "group": "группа",
        "student": "студент",
        "mark": "балл",
        "group_mark": "балл группы",
        "unknown": "(неизвестен)",
    },
}
CSP = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}th{background:#eee}.flag{color:#a00;font-weight:bold}"
)


@dataclass(frozen=True)
class MarkerStats:
    marker: str
    count: int
    mean: float
    median: float
    others_mean: float | None  # the pooled mean of the other markers' answers (None: no other marker)
    flag: str  # "", HARSHER or KINDER


@dataclass(frozen=True)
class OffGroup:
    question: str
    group: str
    student: str
    mark: float
    group_mark: float
    marker: str


@dataclass
class Report:
    markers: dict[str, dict[str, MarkerStats]] = field(default_factory=dict)  # question: {marker: stats}
    off_group: list[OffGroup] = field(default_factory=list)


# ---------------------------------------------------------------- the numbers
def marks_by_marker(
    decisions: dict[tuple[str, str], model.Decision], items: dict[str, model.RubricItem], known: dict[str, model.Question]
) -> dict[str, dict[str, list[float]]]:
    """{question: {marker: [mark, ...]}} of the decisions (in question order, then marker)."""
    out: dict[str, dict[str, list[float]]] = {}
    for (_student, question), decision in sorted(decisions.items()):
        mark = model.mark_of(decision, items, known[question].points)
        out.setdefault(question, {}).setdefault(decision.marker, []).append(mark)
    order = list(known)
    return {q: dict(sorted(out[q].items())) for q in sorted(out, key=order.index)}


def flag(mine: list[float], others: list[float], points: float) -> str:
    """HARSHER or KINDER when both sides have :data:`MIN_ANSWERS` marks and the means differ by
    more than :data:`SPREAD` of ``points``; else ""."""
    if len(mine) < MIN_ANSWERS or len(others) < MIN_ANSWERS:
        return ""
    gap = statistics.fmean(mine) - statistics.fmean(others)
    return "" if abs(gap) <= SPREAD * points else HARSHER if gap < 0 else KINDER


def marker_stats(by_marker: dict[str, list[float]], points: float) -> dict[str, MarkerStats]:
    """Each marker's count, mean, median, the others' pooled mean and :func:`flag`."""
    out = {}
    for marker, mine in by_marker.items():
        others = [m for other, marks in by_marker.items() if other != marker for m in marks]
        out[marker] = MarkerStats(
            marker,
            len(mine),
            statistics.fmean(mine),
            float(statistics.median(mine)),
            statistics.fmean(others) if others else None,
            flag(mine, others, points),
        )
    return out


def group_mark(marks: list[float], representative: float | None = None) -> float:
    """The most common of ``marks``; a tie goes to ``representative`` when it is one of the tied, else to the lowest."""
    counts = Counter(marks)
    top = max(counts.values())
    tied = sorted(m for m, n in counts.items() if n == top)
    return representative if representative in tied else tied[0]


def off_group(
    decisions: dict[tuple[str, str], model.Decision], items: dict[str, model.RubricItem], known: dict[str, model.Question], groups
) -> list[OffGroup]:
    """The marked answers whose mark differs from their group's mark (:func:`group_mark`), in group order."""
    out = []
    for group in groups:
        question = group.question
        marked = {s: decisions[(s, question)] for s in group.members if (s, question) in decisions}
        if len(marked) < 2 or question not in known:
            continue
        marks = {s: model.mark_of(d, items, known[question].points) for s, d in marked.items()}
        common = group_mark(list(marks.values()), marks.get(group.representative))
        out += [OffGroup(question, str(group.id), s, m, common, marked[s].marker) for s, m in sorted(marks.items()) if m != common]
    return out


def build(
    decisions: dict[tuple[str, str], model.Decision],
    items: dict[str, model.RubricItem] | None = None,
    known: dict[str, model.Question] | None = None,
    groups=(),
) -> Report:
    """Both views of ``decisions`` (blank answers left out by the caller: they have no marker)."""
    items = model.rubric_items() if items is None else items
    known = model.questions() if known is None else known
    by_question = marks_by_marker(decisions, items, known)
    markers = {q: marker_stats(by_marker, known[q].points) for q, by_marker in by_question.items()}
    return Report(markers, off_group(decisions, items, known, groups))


def from_sheets(folder: Path, paths: list[Path], groups=(), aliases: dict[str, str] | None = None) -> Report:
    """The report of the filled sheets ``paths`` (read as :func:`sheets.read_sheets` reads them, in part)."""
    items = model.rubric_items()
    return build(sheets.read_sheets(folder, paths, aliases, items, partial=True), items, model.questions(), groups)


# ---------------------------------------------------------------- the page and the CSV files
def _n(value: float | None) -> str:
    return "" if value is None else f"{round(value, 2):g}"


def marker_rows(found: Report, lang: str = "en") -> list[list[str]]:
    """The marks per marker as plain text, header first (the flag in ``lang``)."""
    w = WORDS[lang]
    rows = [[w[c] for c in MARKER_COLUMNS]]
    for question, stats in found.markers.items():
        for s in stats.values():
            rows.append(
                [question, s.marker or w["unknown"], str(s.count), _n(s.mean), _n(s.median), _n(s.others_mean), w[s.flag] if s.flag else ""]
            )
    return rows


def group_rows(found: Report, lang: str = "en") -> list[list[str]]:
    """The answers off their group's mark as plain text, header first."""
    w = WORDS[lang]
    rows = [[w[c] for c in GROUP_COLUMNS]]
    for o in found.off_group:
        rows.append([o.question, o.group, o.student, _n(o.mark), _n(o.group_mark), o.marker or w["unknown"]])
    return rows


def _table(rows: list[list[str]], flagged_column: int | None = None) -> str:
    """An HTML table of plain-text rows: every cell one escaped line."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = ""
    for row in rows[1:]:
        cells = [html.escape(report.for_terminal(c), quote=True) for c in row]
        if flagged_column is not None and cells[flagged_column]:
            cells[flagged_column] = f'<span class="flag">{cells[flagged_column]}</span>'
        body += "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def to_html(found: Report, lang: str = "en") -> str:
    """The page: the rule, the marks per marker (flags marked), the answers off their group's mark."""
    w = WORDS[lang]
    markers, groups = marker_rows(found, lang), group_rows(found, lang)
    body = (
        f"<h1>{w['title']}</h1><h2>{w['markers']}</h2><p>{w['rule']}</p>"
        + (_table(markers, MARKER_COLUMNS.index("flag")) if len(markers) > 1 else f"<p>{w['none']}</p>")
        + f"<h2>{w['groups']}</h2><p>{w['group_rule']}</p>"
        + (_table(groups) if len(groups) > 1 else f"<p>{w['none']}</p>")
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">{CSP}<title>{w["title"]}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def write_report(folder: Path, found: Report, lang: str = "en") -> list[Path]:
    """:data:`PAGE_NAME`, :data:`MARKERS_CSV` and :data:`GROUPS_CSV` in ``folder``; returns them."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = [outputs.write_text(folder / PAGE_NAME, to_html(found, lang))]
    for name, rows in ((MARKERS_CSV, marker_rows(found, lang)), (GROUPS_CSV, group_rows(found, lang))):
        with outputs.open_text(folder / name) as fh:
            csv.writer(fh).writerows([[report.for_csv(cell) for cell in row] for row in rows])  # a formula shown as text
        written.append(folder / name)
    return written
