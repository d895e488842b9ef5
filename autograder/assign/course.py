"""``m5 course init``: an nbgrader course folder, ready for ``nbgrader generate_assignment``.

One command instead of copying folders and writing ``nbgrader_config.py`` by hand (the
convention of ``nbgrader quickstart``)::

    m5 course init ~/m5-course [--course-id m5] [--exchange /srv/nbgrader/exchange] [--lang en|ru]... [--force]

It builds the instructor sources with their kit (notebooks, ``m5_student/``,
``requirements.txt``) into ``<course>/source/module05_<lang>/`` from this checkout (both
languages unless ``--lang`` names one), writes ``<course>/nbgrader_config.py``
(:func:`autograder.assign.release.course_config`) and creates the gradebook with the
assignments in it, through nbgrader's own API.
It refuses the repository itself (nbgrader writes its own ``release/`` into the course
root) and an existing ``nbgrader_config.py`` unless ``force``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.assign import sources
from autograder.assign.release import REPO, build_sources, course_config

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
) -> list[Path]:
    """Set up ``course_dir`` as an nbgrader course for Module 5; returns the files it wrote
    (the two assignment folders under ``source/`` and the config file).

    ``course_id`` and ``exchange`` go into the config for nbgrader's exchange
    (release_assignment, collect, release_feedback); leave them out without one. ``langs``:
    the assignments' languages. Raises :class:`CourseError` for a folder inside this
    checkout, a file in the way, an existing config without ``force``, or no language.
    """
    course = Path(course_dir).expanduser().resolve()
    _check_target(course, force)
    if course_id is not None and (not course_id or any(c.isspace() or c in "/\\" for c in course_id)):
        raise CourseError(f"--course-id must be a non-empty name without spaces or slashes, got {course_id!r}")
    langs = tuple(dict.fromkeys(langs))
    if not langs or any(lang not in sources.LANGS for lang in langs):
        raise CourseError(f"--lang must name one or more of {', '.join(sources.LANGS)}, got {' '.join(langs) or 'none'}")
    course.mkdir(parents=True, exist_ok=True)
    folders = build_sources(course / "source", langs)
    config = course / CONFIG_FILE
    exchange_root = None if exchange is None else Path(exchange).expanduser().resolve()
    config.write_text(course_config(course, course / GRADEBOOK, course_id=course_id, exchange=exchange_root), encoding="utf-8")
    gradebook = create_gradebook(course / GRADEBOOK, [sources.ASSIGNMENTS[lang] for lang in langs])
    return [*folders, config, gradebook]


def create_gradebook(path: Path, assignments: list[str]) -> Path:
    """nbgrader's gradebook at ``path`` with ``assignments`` in it (kept if they are there).

    nbgrader stamps a new gradebook by running ``alembic`` from ``PATH``: the interpreter's
    own folder (the project's .venv) goes first on it while the gradebook is made."""
    from nbgrader.api import Gradebook  # nbgrader (0.5 s) only for the course command

    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), saved])
    try:
        with Gradebook(f"sqlite:///{path}") as gradebook:
            for name in assignments:
                gradebook.update_or_create_assignment(name)
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
