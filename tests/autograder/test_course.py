"""autograder.assign.course: `m5 course init` sets up an nbgrader course folder."""
from __future__ import annotations

import pytest
from traitlets.config import Config

from autograder import cli
from autograder.assign import sources
from autograder.assign.course import CONFIG_FILE, CourseError, init_course, next_steps
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
    assert written[-1] == root / CONFIG_FILE
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
