"""autograder.assign.course: `m5 course init` sets up an nbgrader course folder."""

from __future__ import annotations

import re

import pytest
from traitlets.config import Config

from autograder import cli
from autograder.assign import sources
from autograder.assign.course import CONFIG_FILE, GRADEBOOK, CourseError, init_course, next_steps
from autograder.assign.release import REPO


def _config(course):
    """The values nbgrader would read from the course's nbgrader_config.py."""
    c = Config()
    exec(compile((course / CONFIG_FILE).read_text(encoding="utf-8"), CONFIG_FILE, "exec"), {"get_config": lambda: c})
    return c


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course") / "m5 course"  # a space in the path, as in a home folder
    written = init_course(root, course_id="m5", exchange=root.parent / "exchange")
    assert written[-2:] == [root / CONFIG_FILE, root / GRADEBOOK]
    return root


def test_init_builds_both_assignments_with_their_kit(course):
    for name in sources.ASSIGNMENTS.values():
        folder = course / "source" / name
        assert sorted(p.suffix for p in folder.glob("*.ipynb")) == [".ipynb", ".ipynb"], name
        assert (folder / "m5_student" / "kernels.py").is_file() and (folder / "requirements.txt").is_file()


def test_config_points_nbgrader_at_the_course(course):
    c = _config(course)
    assert c.CourseDirectory.root == str(course)
    assert c.CourseDirectory.db_url == "sqlite:///" + str(course / "gradebook.db")
    assert c.CourseDirectory.course_id == "m5"
    assert c.Exchange.root == str(course.parent / "exchange")


def test_an_existing_config_is_kept_unless_forced(course):
    before = (course / CONFIG_FILE).read_text(encoding="utf-8")
    with pytest.raises(CourseError, match="already exists; pass --force"):
        init_course(course)
    assert (course / CONFIG_FILE).read_text(encoding="utf-8") == before
    assert cli.main(["course", "init", str(course)]) == 2  # one line, exit status 2


def test_a_folder_inside_the_checkout_is_refused(tmp_path):
    with pytest.raises(CourseError, match="inside this checkout"):
        init_course(REPO / "course-here")
    assert not (REPO / "course-here").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(CourseError, match="not a folder"):
        init_course(tmp_path / "file")
    with pytest.raises(CourseError, match="course-id"):
        init_course(tmp_path / "c", course_id="my course")


def test_next_steps_name_the_assignments_and_activate_the_environment(course):
    steps = next_steps(course)
    assert steps.splitlines()[0].startswith("source ") and steps.splitlines()[0].endswith("activate")
    for name in sources.ASSIGNMENTS.values():
        assert f"nbgrader generate_assignment {name}" in steps


def test_the_gradebook_holds_the_assignments(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / GRADEBOOK}") as gradebook:
        assert sorted(a.name for a in gradebook.assignments) == sorted(sources.ASSIGNMENTS.values())


def test_one_language_gives_one_assignment_and_no_language_is_refused(tmp_path):
    written = init_course(tmp_path / "ru only", langs=("ru",))
    assert [p.name for p in written] == ["module05_ru", CONFIG_FILE, GRADEBOOK]
    assert not (tmp_path / "ru only" / "source" / "module05_en").exists()
    assert "generate_assignment module05_en" not in next_steps(tmp_path / "ru only", ("ru",))
    with pytest.raises(CourseError, match="--lang"):
        init_course(tmp_path / "none", langs=())


@pytest.mark.slow
def test_the_documented_set_up_runs_as_written(tmp_path):
    """docs/instructor/setup.md: the shell block it starts with, verbatim, from the checkout."""
    import os
    import subprocess

    text = (REPO / "docs" / "instructor" / "setup.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert block.startswith(".venv/bin/m5 course init ~/m5-course")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(["bash", "-e", "-c", block], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for lang in sources.LANGS:
        folder = tmp_path / "m5-course" / "release" / sources.ASSIGNMENTS[lang]
        assert (folder / sources.NOTEBOOK_NAMES["assignment", lang]).is_file()
        assert (folder / "m5_student" / "__init__.py").is_file()


POLICY = {"due": "2026-12-20T23:59:00+03:00", "timezone": "Europe/Moscow", "penalty_percent": 10, "per": "day", "cap_percent": 50}


def test_a_declared_policy_reaches_nbgrader(tmp_path):
    from nbgrader.api import Gradebook

    from autograder.assign.nbgrader_late import PolicyLatePenalty
    from autograder.grade import late

    course = tmp_path / "курс"
    written = init_course(course, langs=("ru",), policy=POLICY)
    assert course / late.COURSE_FILE in written
    assert late.read_policy(course / late.COURSE_FILE) == late.policy_from_table(POLICY, "x")
    c = _config(course)
    assert c.AssignLatePenalties.plugin_class == "autograder.assign.nbgrader_late.PolicyLatePenalty"
    with Gradebook(f"sqlite:///{course / GRADEBOOK}") as gradebook:  # nbgrader keeps the due date as naive UTC
        assert str(gradebook.find_assignment(sources.ASSIGNMENTS["ru"]).duedate) == "2026-12-20 20:59:00"
    plugin = PolicyLatePenalty(config=c)
    assert plugin.late_submission_penalty("alice", 100.0, 2 * 86400) == 20.0  # two started days
    (course / late.EXTENSIONS_FILE).write_text("student,due,reason\nalice,2026-12-23T23:59+03:00,illness\n", encoding="utf-8")
    assert plugin.late_submission_penalty("alice", 100.0, 2 * 86400) == 0.0  # within her extension
    with pytest.raises(CourseError, match="already"):  # the instructor's files are kept without --force
        init_course(course, langs=("ru",), policy={**POLICY, "penalty_percent": 20}, force=False)


@pytest.mark.parametrize(
    "args, says",
    [
        (["--due", "2026-12-20T23:59", "--penalty-percent", "10"], r"\[policy\] due: .* has no time zone"),
        (["--due", "2026-12-20T23:59+03:00", "--penalty-percent", "150"], r"\[policy\] penalty_percent"),
        (["--due", "2026-12-20T23:59+03:00"], r"\[policy\] penalty_percent: missing"),
        (["--penalty-percent", "10"], "give --due too"),
    ],
)
def test_a_malformed_policy_is_refused_before_anything_is_written(tmp_path, capsys, args, says):
    course = tmp_path / "c"
    assert cli.main(["course", "init", str(course), "--lang", "en", *args]) == cli.EXIT_USAGE
    assert not course.exists()
    assert re.search(says, capsys.readouterr().err)
