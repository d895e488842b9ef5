"""Deadlines and the late policy: declared once, read by every command that builds a sheet.

The policy is the ``[policy]`` table of the course's ``m5_course.toml`` (``m5 course init --due``
writes it; ``m5 grade --policy FILE`` links a gradebook to it, and nbgrader's late penalties are
computed from it too, :mod:`autograder.assign.nbgrader_late`)::

    [policy]
    due = "2026-12-20T23:59:00+03:00"  # ISO 8601 with its UTC offset (a time without one is refused)
    timezone = "Europe/Moscow"          # how to read platform times written without an offset (Moodle's)
    grace_minutes = 15                  # late by at most this much counts as on time
    penalty_percent = 10                # of the assignment's points, per started period after the grace
    per = "day"                         # the period: "hour" or "day"
    cap_percent = 50                    # the penalty never exceeds this

A submission ``t`` seconds after the student's due date (their extension's, if any) loses
``min(cap, penalty x ceil((t - grace) / period))`` percent of its points (automatic plus
written); on time (or within the grace period) it loses nothing. Extensions are a CSV
(``student,due,reason``), each a new due date for one student: ``extensions.csv`` in the
gradebook for ``m5 grade``, beside ``m5_course.toml`` for nbgrader.

Submission times come from the platform, in this order: the times file given to ``m5 grade
--times`` (Moodle's grading worksheet, its "Last modified (submission)" column, or any CSV with
``student`` and ``submitted`` columns, such as Canvas's ``submitted_at``), nbgrader's
``timestamp.txt``, and only then the file's modification time, flagged as a fallback.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.grade.student_files import SubmissionError, read_bytes

COURSE_FILE = "m5_course.toml"  # in the course folder (m5 course init)
EXTENSIONS_FILE = "extensions.csv"  # in the gradebook
EXTENSION_COLUMNS = ["student", "due", "reason"]
PERIODS = {"hour": 3600, "day": 86400}
SOURCES = {
    "times": "times file",
    "moodle": "Moodle worksheet",
    "nbgrader": "nbgrader timestamp.txt",
    "mtime": "file time (fallback)",
}
MAX_FILE_BYTES = 16 * 1024 * 1024


class PolicyError(ValueError):
    """A policy, extension or times file that cannot be used: one line naming the file, row and field."""


@dataclass(frozen=True)
class Policy:
    due: dt.datetime  # aware
    timezone: str
    grace_minutes: float
    penalty_percent: float
    per: str
    cap_percent: float

    def to_toml(self) -> str:
        """The ``[policy]`` table that reads back as this policy (the gradebook's copy)."""
        return (
            "[policy]\n"
            f'due = "{self.due.isoformat()}"\n'
            f'timezone = "{self.timezone}"\n'
            f"grace_minutes = {self.grace_minutes:g}\n"
            f"penalty_percent = {self.penalty_percent:g}\n"
            f'per = "{self.per}"\n'
            f"cap_percent = {self.cap_percent:g}\n"
        )


@dataclass(frozen=True)
class Extension:
    due: dt.datetime
    reason: str


# ------------------------------------------------------------------ times
_NBGRADER = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) ?(UTC|Z|[+-]\d{2}:?\d{2})?")
_MONTHS = {
    **{
        m: i
        for i, m in enumerate(
            ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], 1
        )
    },  # fmt: skip
    **{
        m: i
        for i, m in enumerate(
            ["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"], 1
        )
    },  # fmt: skip
}
# Moodle's userdate(): "Monday, 7 December 2026, 9:35 AM" / "понедельник, 7 декабря 2026, 09:35"
_MOODLE = re.compile(r"(?:[^\W\d_]+,\s*)?(\d{1,2})\s+([^\W\d_]+)\s+(\d{4}),?\s+(\d{1,2}):(\d{2})(?:\s*([AaPp][Mm]))?")


def zone(name: str, where: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise PolicyError(f"{where}: {name!r} is not a time zone (an IANA name such as Europe/Moscow or UTC)") from None


def parse_time(text: str, tz: ZoneInfo, where: str) -> dt.datetime:
    """An aware time from ISO 8601 (with or without its offset), nbgrader's ``2026-12-01 13:00:00.123456 UTC``
    or Moodle's English or Russian date; a time without an offset is read in ``tz``."""
    value = text.strip()
    match = _NBGRADER.fullmatch(value)
    if match:
        day, clock, offset = match.groups()
        try:
            stamp = dt.datetime.fromisoformat(f"{day}T{clock[:15]}")
        except ValueError:
            raise PolicyError(f"{where}: {value!r} is not a date and time") from None
        if offset in ("UTC", "Z"):
            return stamp.replace(tzinfo=dt.timezone.utc)
        if offset:
            sign = 1 if offset[0] == "+" else -1
            digits = offset[1:].replace(":", "")
            return stamp.replace(tzinfo=dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))))
        return stamp.replace(tzinfo=tz)
    match = _MOODLE.fullmatch(value)
    if match:
        day, month, year, hour, minute, half = match.groups()
        number = _MONTHS.get(month.lower())
        if number is not None:
            h = int(hour)
            if half:
                if not 1 <= h <= 12:
                    raise PolicyError(f"{where}: {value!r} has hour {h} with {half}")
                h = h % 12 + (12 if half.lower() == "pm" else 0)
            try:
                return dt.datetime(int(year), number, int(day), h, int(minute), tzinfo=tz)
            except ValueError:
                pass
    raise PolicyError(f"{where}: {value[:60]!r} is not a date and time (ISO 8601, nbgrader's or Moodle's)")


def iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


# ------------------------------------------------------------------ the policy
def _number(table: dict, key: str, where: str, low: float, high: float, default=None) -> float:
    value = table.get(key, default)
    if value is None:
        raise PolicyError(f"{where}: [policy] {key}: missing")
    if type(value) not in (int, float) or not math.isfinite(value) or not low <= value <= high:
        raise PolicyError(f"{where}: [policy] {key}: {value!r} must be a number from {low:g} to {high:g}")
    return float(value)


def policy_from_table(table: object, where: str) -> Policy:
    """A checked Policy from a ``[policy]`` table; PolicyError naming the field."""
    if not isinstance(table, dict):
        raise PolicyError(f"{where}: no [policy] table")
    unknown = sorted(set(table) - {"due", "timezone", "grace_minutes", "penalty_percent", "per", "cap_percent"})
    if unknown:
        raise PolicyError(
            f"{where}: [policy] {unknown[0]}: not a policy field (due, timezone, grace_minutes, penalty_percent, per, cap_percent)"
        )
    tz_name = table.get("timezone", "UTC")
    if not isinstance(tz_name, str):
        raise PolicyError(f"{where}: [policy] timezone: {tz_name!r} is not a time zone name")
    zone(tz_name, f"{where}: [policy] timezone")
    due = table.get("due")
    if isinstance(due, dt.datetime):  # TOML's own date-time
        moment = due
    elif isinstance(due, str) and due.strip():
        try:
            moment = dt.datetime.fromisoformat(due.strip())
        except ValueError:
            raise PolicyError(f"{where}: [policy] due: {due!r} is not an ISO 8601 date and time") from None
    else:
        raise PolicyError(f'{where}: [policy] due: missing (the deadline, e.g. "2026-12-20T23:59:00+03:00")')
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise PolicyError(f"{where}: [policy] due: {str(due)!r} has no time zone: add its UTC offset, e.g. +03:00")
    per = table.get("per", "day")
    if per not in PERIODS:
        raise PolicyError(f'{where}: [policy] per: {per!r} must be "hour" or "day"')
    return Policy(
        due=moment,
        timezone=tz_name,
        grace_minutes=_number(table, "grace_minutes", where, 0, 60 * 24 * 366, 0),
        penalty_percent=_number(table, "penalty_percent", where, 0, 100),
        per=per,
        cap_percent=_number(table, "cap_percent", where, 0, 100, 100),
    )


def _text(path: Path, what: str) -> str:

    try:
        return read_bytes(path, MAX_FILE_BYTES).decode("utf-8-sig")
    except SubmissionError as exc:
        raise PolicyError(f"{exc} ({what})") from None
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: not UTF-8 text ({what})") from None


def read_policy(path: Path) -> Policy:
    """The ``[policy]`` table of a TOML file (the course's ``m5_course.toml`` or a gradebook's ``policy.toml``)."""
    try:
        document = tomllib.loads(_text(Path(path), "the late policy"))
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{path}: not TOML ({exc})") from None
    return policy_from_table(document.get("policy"), str(path))


# ------------------------------------------------------------------ penalties
def late_seconds(policy: Policy, submitted: dt.datetime, due: dt.datetime | None = None) -> float:
    """Seconds after the due date (``due``, an extension's, else the policy's) beyond the grace period; 0 on time."""
    after = (submitted - (due or policy.due)).total_seconds() - policy.grace_minutes * 60
    return max(0.0, after)


def penalty_percent(policy: Policy, seconds_late: float) -> float:
    """``min(cap, penalty x started periods late)`` percent; 0 when not late."""
    if seconds_late <= 0:
        return 0.0
    periods = math.ceil(seconds_late / PERIODS[policy.per] - 1e-9)
    return min(policy.cap_percent, policy.penalty_percent * periods)


def describe(policy: Policy, lang: str) -> list[str]:
    """The policy in words for a feedback page or a sheet."""
    due = policy.due.isoformat(timespec="minutes").replace("T", " ")
    if lang == "ru":
        per = {"hour": "начатый час", "day": "начатые сутки"}[policy.per]
        return [
            f"Срок сдачи: {due}.",
            f"Льготный период: {policy.grace_minutes:g} мин.",
            f"Штраф: {policy.penalty_percent:g} % баллов за каждый {per} опоздания, не более {policy.cap_percent:g} %."
            if policy.per == "hour"
            else f"Штраф: {policy.penalty_percent:g} % баллов за каждые {per} опоздания, не более {policy.cap_percent:g} %.",
        ]
    return [
        f"Due: {due}.",
        f"Grace period: {policy.grace_minutes:g} min.",
        f"Penalty: {policy.penalty_percent:g} % of the points per started {policy.per} late, at most {policy.cap_percent:g} %.",
    ]


def submission_time(
    label: str, student: str, path: Path, nbgrader_stamp: str, times: dict[str, tuple[dt.datetime, str]], tz: ZoneInfo
) -> tuple[str, str]:
    """(ISO time, its source) of one submission: the times file, then nbgrader's timestamp.txt (written by
    the student's ``nbgrader submit``: one that does not parse is passed over), then the file's
    modification time, flagged as a fallback; ("", "") when none can be read."""
    participant = moodle_participant(label)
    hit = (times.get(f"participant:{participant}") if participant else None) or times.get(student)
    if hit:
        return iso(hit[0]), hit[1]
    if nbgrader_stamp:
        try:
            return iso(parse_time(nbgrader_stamp, tz, "timestamp.txt")), SOURCES["nbgrader"]
        except PolicyError:
            pass
    try:
        return iso(dt.datetime.fromtimestamp(os.lstat(path).st_mtime, tz=dt.timezone.utc)), SOURCES["mtime"]
    except OSError:
        return "", ""


# ------------------------------------------------------------------ extensions and times files
def _csv_rows(text: str) -> list[list[str]]:
    sample = text.splitlines()[0] if text.strip() else ""
    delimiter = max((",", ";", "\t"), key=sample.count) if sample else ","
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def read_extensions(path: Path, students: set[str] | None, tz: ZoneInfo) -> dict[str, Extension]:
    """``extensions.csv`` (student, due, reason); PolicyError naming the row and field; empty when absent.
    ``students``: the gradebook's (a row naming anyone else is refused); None for nbgrader's course, whose
    roster is not known here."""
    path = Path(path)
    if not path.exists():
        return {}
    rows = _csv_rows(_text(path, "the extensions"))
    if not rows:
        return {}
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in EXTENSION_COLUMNS if c not in header]
    if missing:
        raise PolicyError(f"{path}: row 1: no column {missing[0]!r} (the header is {','.join(EXTENSION_COLUMNS)})")
    out: dict[str, Extension] = {}
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        cells = dict(zip(header, row))
        student = cells.get("student", "")
        where = f"{path}: row {number}"
        if students is not None and student not in students:
            raise PolicyError(f"{where}, column 'student': {student[:60]!r} is no student of this gradebook")
        if student in out:
            raise PolicyError(f"{where}, column 'student': {student[:60]!r} has a second extension (keep one row per student)")
        moment = parse_time(cells.get("due", ""), tz, f"{where}, column 'due'")
        out[student] = Extension(moment, (cells.get("reason") or "").strip())
    return out


MOODLE_ID_HEADERS = ("identifier", "идентификатор")
MOODLE_TIME_HEADERS = ("last modified (submission)", "последнее изменение (ответ)", "последнее изменение (представленный ответ)")
_PARTICIPANT = re.compile(r"\D*?(\d+)\s*")


def read_times(path: Path, tz: ZoneInfo) -> dict[str, tuple[dt.datetime, str]]:
    """Submission times by key: ``participant:<id>`` for Moodle's grading worksheet, else the ``student``
    column of a CSV with ``student`` and ``submitted`` (ISO 8601; Canvas's ``submitted_at``)."""
    path = Path(path)
    rows = _csv_rows(_text(path, "the submission times"))
    if not rows:
        raise PolicyError(f"{path}: empty (the submission times)")
    header = [h.strip().lower() for h in rows[0]]
    moodle_id = next((header.index(h) for h in MOODLE_ID_HEADERS if h in header), None)
    moodle_time = next((header.index(h) for h in MOODLE_TIME_HEADERS if h in header), None)
    if moodle_id is not None and moodle_time is not None:
        key_column, time_column, source = moodle_id, moodle_time, SOURCES["moodle"]
    elif "student" in header and ("submitted" in header or "submitted_at" in header):
        key_column = header.index("student")
        time_column = header.index("submitted") if "submitted" in header else header.index("submitted_at")
        source = SOURCES["times"]
    else:
        raise PolicyError(
            f"{path}: row 1: neither Moodle's grading worksheet (Identifier, Last modified (submission)) nor columns student and submitted"
        )
    out: dict[str, tuple[dt.datetime, str]] = {}
    for number, row in enumerate(rows[1:], 2):
        if len(row) <= max(key_column, time_column):
            continue
        key, when = row[key_column].strip(), row[time_column].strip()
        if not key or when in ("", "-"):  # Moodle writes "-" for no submission
            continue
        if source == SOURCES["moodle"]:
            match = _PARTICIPANT.fullmatch(key)
            if not match:
                raise PolicyError(f"{path}: row {number}, column {rows[0][key_column]!r}: {key[:60]!r} names no participant")
            key = f"participant:{match.group(1)}"
        if key in out:
            raise PolicyError(f"{path}: row {number}: {key[:60]!r} appears twice")
        out[key] = (parse_time(when, tz, f"{path}: row {number}, column {rows[0][time_column]!r}"), source)
    return out


# Moodle names each participant's folder in "Download all submissions" "<Full name>_<id>_assignsubmission_<plugin>_".
MOODLE_FOLDER = re.compile(r"(?P<name>.*)_(?P<id>\d+)_assignsubmission_[a-z]+_?")


def moodle_participant(label: str) -> str | None:
    """The participant id of a submission in a Moodle download (from its first folder), else None."""
    match = MOODLE_FOLDER.fullmatch(label.split("/", 1)[0])
    return match.group("id") if match else None
