"""The late policy (grade/late.py) and nbgrader's plugin built on it (assign/nbgrader_late.py)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.assign.nbgrader_late import penalty_points
from autograder.grade import late

MOSCOW = ZoneInfo("Europe/Moscow")
TABLE = {
    "due": "2026-12-20T23:59:00+03:00",
    "timezone": "Europe/Moscow",
    "grace_minutes": 15,
    "penalty_percent": 10,
    "per": "day",
    "cap_percent": 50,
}
POLICY = late.policy_from_table(TABLE, "course.toml")


def test_a_policy_reads_back_from_its_own_toml(tmp_path):
    path = tmp_path / "m5_course.toml"
    path.write_text(POLICY.to_toml(), encoding="utf-8")
    assert late.read_policy(path) == POLICY


@pytest.mark.parametrize(
    "change, field",
    [
        ({"penalty_percent": 120}, "penalty_percent"),
        ({"cap_percent": -1}, "cap_percent"),
        ({"due": "2026-12-20T23:59:00"}, "due"),  # no time zone
        ({"due": "next friday"}, "due"),
        ({"due": None}, "due"),
        ({"per": "week"}, "per"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"grace": 5}, "grace"),  # not a field
        ({"penalty_percent": float("nan")}, "penalty_percent"),
        ({"penalty_percent": "10"}, "penalty_percent"),
    ],
)
def test_a_malformed_policy_is_refused_naming_the_field(change, field):
    table = {k: v for k, v in {**TABLE, **change}.items() if v is not None}
    with pytest.raises(late.PolicyError, match=rf"course\.toml: \[policy\] {field}"):
        late.policy_from_table(table, "course.toml")


def test_a_policy_file_that_is_not_toml_is_refused_naming_it(tmp_path):
    path = tmp_path / "m5_course.toml"
    path.write_text("[policy\ndue = 1", encoding="utf-8")
    with pytest.raises(late.PolicyError, match="m5_course.toml: not TOML"):
        late.read_policy(path)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-12-21 10:00:00.123456 UTC", dt.datetime(2026, 12, 21, 10, 0, 0, 123456, tzinfo=dt.timezone.utc)),  # nbgrader
        ("2026-12-21T13:00:00+03:00", dt.datetime(2026, 12, 21, 10, tzinfo=dt.timezone.utc)),
        ("2026-12-21T13:00", dt.datetime(2026, 12, 21, 13, tzinfo=MOSCOW)),  # no offset: the policy's zone
        ("Monday, 21 December 2026, 1:00 PM", dt.datetime(2026, 12, 21, 13, tzinfo=MOSCOW)),  # Moodle, English
        ("Monday, 21 December 2026, 12:30 AM", dt.datetime(2026, 12, 21, 0, 30, tzinfo=MOSCOW)),
        ("понедельник, 21 декабря 2026, 13:00", dt.datetime(2026, 12, 21, 13, tzinfo=MOSCOW)),  # Moodle, Russian
    ],
)
def test_platform_times_are_read_in_every_form(text, expected):
    assert late.parse_time(text, MOSCOW, "here") == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01 10:00", "31 February 2026, 10:00", "Monday, 21 December 2026, 13:00 PM", ""])
def test_a_time_that_cannot_be_read_is_refused_naming_where(text):
    with pytest.raises(late.PolicyError, match="^sheet.csv: row 3"):
        late.parse_time(text, MOSCOW, "sheet.csv: row 3")


def test_penalties_at_the_edges():
    due = POLICY.due
    on = [due, due + dt.timedelta(minutes=15)]  # on time, and within the grace period
    assert [late.penalty_percent(POLICY, late.late_seconds(POLICY, t)) for t in on] == [0, 0]
    just = due + dt.timedelta(minutes=15, seconds=1)  # one started day
    assert late.penalty_percent(POLICY, late.late_seconds(POLICY, just)) == 10
    assert late.penalty_percent(POLICY, late.late_seconds(POLICY, due + dt.timedelta(days=1, minutes=15))) == 10
    assert late.penalty_percent(POLICY, late.late_seconds(POLICY, due + dt.timedelta(days=1, minutes=16))) == 20
    assert late.penalty_percent(POLICY, late.late_seconds(POLICY, due + dt.timedelta(days=30))) == 50  # the cap


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e7), st.floats(0, 1e7))
def test_the_penalty_grows_with_lateness_and_never_passes_the_cap(a, b):
    low, high = sorted([a, b])
    assert 0 <= late.penalty_percent(POLICY, low) <= late.penalty_percent(POLICY, high) <= POLICY.cap_percent


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 3e6), st.floats(0, 120), st.booleans())
def test_nbgrader_plugin_applies_the_same_rule(seconds_late, score, extended):
    extension = late.Extension(POLICY.due + dt.timedelta(days=2), "illness") if extended else None
    submitted = POLICY.due + dt.timedelta(seconds=seconds_late)
    percent = late.penalty_percent(POLICY, late.late_seconds(POLICY, submitted, extension.due if extension else None))
    assert penalty_points(POLICY, extension, score, seconds_late) == pytest.approx(score * percent / 100)


def test_extensions_are_checked_row_by_row(tmp_path):
    path = tmp_path / "extensions.csv"
    path.write_text("student,due,reason\nalice,2026-12-22T23:59+03:00,illness\n", encoding="utf-8")
    assert late.read_extensions(path, {"alice"}, MOSCOW)["alice"].reason == "illness"
    for body, needle in [
        ("student,due,reason\nmallory,2026-12-22T23:59+03:00,x\n", "row 2, column 'student': 'mallory' is no student"),
        ("student,due,reason\nalice,soon,x\n", "row 2, column 'due'"),
        ("student,due,reason\nalice,2026-12-22T23:59+03:00,x\nalice,2026-12-23T23:59+03:00,y\n", "row 3, column 'student'"),
        ("name,due\nalice,2026-12-22T23:59+03:00\n", "row 1: no column 'student'"),
    ]:
        path.write_text(body, encoding="utf-8")
        with pytest.raises(late.PolicyError, match=needle):
            late.read_extensions(path, {"alice"}, MOSCOW)


def test_moodle_worksheet_and_a_generic_times_file(tmp_path):
    worksheet = tmp_path / "Grades-M5.csv"
    worksheet.write_text(
        '\ufeffIdentifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed",'
        '"Last modified (submission)","Last modified (grade)","Feedback comments"\n'
        '"Participant 101","Анна Иванова",a@x.ru,Submitted,,120,Yes,"Monday, 21 December 2026, 1:00 PM",-,\n'
        '"Participant 102","Bob Smith",b@x.ru,"No submission",,120,Yes,-,-,\n',
        encoding="utf-8",
    )
    times = late.read_times(worksheet, MOSCOW)
    assert times == {"participant:101": (dt.datetime(2026, 12, 21, 13, tzinfo=MOSCOW), late.SOURCES["moodle"])}
    generic = tmp_path / "times.csv"
    generic.write_text("student;submitted_at\nalice;2026-12-21T10:00:00Z\n", encoding="utf-8")
    assert late.read_times(generic, MOSCOW)["alice"][0] == dt.datetime(2026, 12, 21, 10, tzinfo=dt.timezone.utc)
    generic.write_text("who,when\nalice,2026-12-21\n", encoding="utf-8")
    with pytest.raises(late.PolicyError, match="row 1: neither Moodle"):
        late.read_times(generic, MOSCOW)
    generic.write_text("student,submitted\nalice,whenever\n", encoding="utf-8")
    with pytest.raises(late.PolicyError, match="times.csv: row 2, column 'submitted'"):
        late.read_times(generic, MOSCOW)


def test_a_submission_time_comes_from_the_platform_first(tmp_path):
    file = tmp_path / "Анна Иванова_101_assignsubmission_file_" / "m05_assignment_ru.ipynb"
    file.parent.mkdir()
    file.write_text("{}", encoding="utf-8")
    label = f"{file.parent.name}/{file.name}"
    worksheet = {"participant:101": (dt.datetime(2026, 12, 21, 13, tzinfo=MOSCOW), late.SOURCES["moodle"])}
    assert late.submission_time(label, "x", file, "", worksheet, MOSCOW) == ("2026-12-21T13:00:00+03:00", "Moodle worksheet")
    stamp = "2026-12-21 10:00:00.5 UTC"
    assert late.submission_time("a/b.ipynb", "a", file, stamp, {}, MOSCOW) == ("2026-12-21T10:00:00+00:00", "nbgrader timestamp.txt")
    when, source = late.submission_time("a/b.ipynb", "a", file, "2026-02-31 10:00", {}, MOSCOW)  # the student's file: passed over
    assert source == "file time (fallback)" and when
