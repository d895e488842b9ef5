"""``m5 course init``: an nbgrader course folder, ready for ``nbgrader generate_assignment``.

One command instead of copying folders and writing ``nbgrader_config.py`` by hand (the
convention of ``nbgrader quickstart``)::

    m5 course init ~/m5-course [--course-id m5] [--exchange /srv/nbgrader/exchange] [--lang en|ru]...
                   [--due 2026-12-20T23:59+03:00 [--timezone Europe/Moscow] [--grace-minutes 15]
                    [--penalty-percent 10] [--per day] [--cap-percent 50]] [--force]

It builds the instructor sources with their kit (notebooks, ``m5_student/``,
``requirements.txt``) into ``<course>/source/module05_<lang>/`` from this checkout (both
languages unless ``--lang`` names one), writes ``<course>/nbgrader_config.py``
(:func:`autograder.assign.release.course_config`) and creates the gradebook with the
assignments in it, through nbgrader's own API. With ``--due``, it declares the late policy once,
in ``<course>/m5_course.toml`` (:mod:`autograder.grade.late`): nbgrader's gradebook gets the due
date and ``nbgrader_config.py`` computes late penalties from that file
(:mod:`autograder.assign.nbgrader_late`), and ``m5 grade --policy <course>/m5_course.toml`` reads
the same file. An existing ``m5_course.toml`` is kept unless ``--due`` and ``--force`` are given.
It refuses the repository itself (nbgrader writes its own ``release/`` into the course
root) and an existing ``nbgrader_config.py`` unless ``force``.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

from autograder.assign import sources
from autograder.assign.release import REPO, build_sources, course_config
from autograder.grade import late, outputs

__all__ = ["CourseError", "CONFIG_FILE", "GRADEBOOK", "init_course", "next_steps"]

CONFIG_FILE = "nbgrader_config.py"
GRADEBOOK = "gradebook.db"


class CourseError(ValueError):
    """A course folder that cannot be set up (the message says why and what to do)."""


def _check_target(course: Path, force: bool) -> None:
    if course.exists() and not course.is_dir():
        raise CourseError(f"{course} exists and is not a folder; give a folder for the course")
    if course == REPO or REPO in course.parents:
        raise CourseError(
            f"{course} is inside this checkout ({REPO}); nbgrader writes its own release/ and "
            "submitted/ into the course folder: choose a folder outside it, e.g. ~/m5-course"
        )
    config = course / CONFIG_FILE
    if config.exists() and not force:
        raise CourseError(f"{config} already exists; pass --force to rewrite it and rebuild source/")


def init_course(
    course_dir: str | Path,
    *,
    course_id: str | None = None,
    exchange: str | Path | None = None,
    force: bool = False,
    langs: tuple[str, ...] = sources.LANGS,
    policy: dict | None = None,
) -> list[Path]:
    """Set up ``course_dir`` as an nbgrader course for Module 5; returns the files it wrote
    (the two assignment folders under ``source/`` and the config file).

    ``course_id`` and ``exchange`` go into the config for nbgrader's exchange
    (release_assignment, collect, release_feedback); leave them out without one. ``langs``:
    the assignments' languages. ``policy``: the ``[policy]`` table to declare (``due`` and the
    rest, :func:`autograder.grade.late.policy_from_table`), checked before anything is written.
    Raises :class:`CourseError` for a folder inside this checkout, a file in the way, an existing
    config without ``force``, no language, or a malformed policy.
    """
    course = Path(course_dir).expanduser().resolve()
    _check_target(course, force)
    if course_id is not None and (not course_id or any(c.isspace() or c in "/\\" for c in course_id)):
        raise CourseError(f"--course-id must be a non-empty name without spaces or slashes, got {course_id!r}")
    langs = tuple(dict.fromkeys(langs))
    if not langs or any(lang not in sources.LANGS for lang in langs):
        raise CourseError(f"--lang must name one or more of {', '.join(sources.LANGS)}, got {' '.join(langs) or 'none'}")
    policy_file = course / late.COURSE_FILE
    if policy is not None and policy_file.exists() and not force:
        raise CourseError(f"{policy_file} already declares the late policy; edit it, or pass --force to write it again from --due")
    declared = None
    try:
        if policy is not None:
            declared = late.policy_from_table(policy, "--due and the policy options")
        elif policy_file.exists():
            declared = late.read_policy(policy_file)
    except late.PolicyError as exc:
        raise CourseError(str(exc)) from None
    course.mkdir(parents=True, exist_ok=True)
    written = []
    if policy is not None:
        written.append(outputs.write_text(policy_file, COURSE_HEADER + declared.to_toml()))
    folders = build_sources(course / "source", langs)
    config = course / CONFIG_FILE
    exchange_root = None if exchange is None else Path(exchange).expanduser().resolve()
    text = course_config(course, course / GRADEBOOK, course_id=course_id, exchange=exchange_root)
    if declared is not None:
        text += nbgrader_late_config(policy_file)
    config.write_text(text, encoding="utf-8")
    due = declared.due.astimezone(dt.timezone.utc).replace(tzinfo=None) if declared else None
    gradebook = create_gradebook(course / GRADEBOOK, [sources.ASSIGNMENTS[lang] for lang in langs], duedate=due)
    return [*folders, *written, config, gradebook]


COURSE_HEADER = (
    "# The course's late policy, declared once: m5 grade --policy reads this file, and so does nbgrader\n"
    "# (nbgrader_config.py). Extensions: extensions.csv (student,due,reason) beside this file for nbgrader,\n"
    "# in the gradebook folder for m5 grade. Times need their UTC offset.\n"
)


def nbgrader_late_config(policy_file: Path) -> str:
    """The lines of ``nbgrader_config.py`` that make nbgrader's late penalties follow ``policy_file``."""
    return (
        "# Late penalties from the course's policy (m5_course.toml; autograder/assign/nbgrader_late.py)\n"
        "c.AssignLatePenalties.plugin_class = 'autograder.assign.nbgrader_late.PolicyLatePenalty'\n"
        f"c.PolicyLatePenalty.policy_file = {str(policy_file)!r}\n"
    )


def create_gradebook(path: Path, assignments: list[str], duedate=None) -> Path:
    """nbgrader's gradebook at ``path`` with ``assignments`` in it (kept if they are there), each
    due at ``duedate`` (naive UTC, as nbgrader keeps it) when given.

    nbgrader stamps a new gradebook by running ``alembic`` from ``PATH``: the interpreter's
    own folder (the project's .venv) goes first on it while the gradebook is made."""
    from nbgrader.api import Gradebook  # nbgrader (0.5 s) only for the course command

    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), saved])
    try:
        with Gradebook(f"sqlite:///{path}") as gradebook:
            for name in assignments:
                gradebook.update_or_create_assignment(name, **({"duedate": duedate} if duedate else {}))
    finally:
        os.environ["PATH"] = saved
    return path


def next_steps(course: Path, langs: tuple[str, ...] = sources.LANGS) -> str:
    """What the instructor runs next: nbgrader from the environment running this (the
    project's .venv, activated: the config imports ``autograder``, and nbgrader calls
    ``alembic`` from ``PATH``)."""
    lines = [f"source {Path(sys.executable).parent / 'activate'}", f"cd {course}"]
    lines += [f"nbgrader generate_assignment {sources.ASSIGNMENTS[lang]}" for lang in langs]
    return "\n".join(lines)
