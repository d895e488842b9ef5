"""Finding submissions: nbgrader layouts, plain folders, links, FIFOs, non-assignment notebooks."""

import os
import shutil

import nbformat
import pytest
from uploads import ASSIGNMENT, LAB, nbgrader_course, release_notebook  # tests/autograder is on sys.path

from autograder.grade import discover
from autograder.grade.pipeline import KERNELS

KERNEL_SET = set(KERNELS)


def find(*paths):
    return discover.discover([str(p) for p in paths], KERNEL_SET)


def test_nbgrader_layout_gives_student_assignment_timestamp_and_relative_path(tmp_path):
    found = find(nbgrader_course(tmp_path / "course", dict.fromkeys(("alice", "bob", "carol"))))
    assert [f.relative for f in found.submissions] == [f"{s}/module05/{name}" for s in ("alice", "bob", "carol") for name in ASSIGNMENT]
    alice = found.submissions[0]
    assert (alice.student, alice.assignment, alice.timestamp) == ("alice", "module05", "2026-12-01 10:00:00.000000 UTC")
    assert not found.skipped  # the support library's .py files are not submissions


def test_a_glob_of_notebooks_keeps_the_student_folders(tmp_path):
    submitted = nbgrader_course(tmp_path / "course", dict.fromkeys(("alice", "bob", "carol")))
    files = sorted(submitted.glob("*/module05/m05_assignment_en.ipynb"))
    relatives = [f.relative for f in find(*files).submissions]
    assert relatives == [f"{s}/module05/m05_assignment_en.ipynb" for s in ("alice", "bob", "carol")]
    assert len(set(relatives)) == 3


def test_autograded_layout_and_plain_folders(tmp_path):
    auto = tmp_path / "autograded" / "dan" / "hw5"
    auto.mkdir(parents=True)
    (auto / "answer.py").write_text("x = 1\n")
    found = find(tmp_path / "autograded").submissions[0]
    assert (found.student, found.assignment, found.relative) == ("dan", "hw5", "dan/hw5/answer.py")
    plain = tmp_path / "plain"
    (plain / "eve").mkdir(parents=True)
    (plain / "frank.py").write_text("x = 1\n")
    (plain / "eve" / "module05.py").write_text("x = 1\n")
    (plain / "readme.txt").write_text("ignored")
    got = {f.relative: (f.student, f.assignment) for f in find(plain).submissions}
    assert got == {"eve/module05.py": ("eve", ""), "frank.py": ("frank", "")}


def test_lab_and_unrelated_notebooks_are_skipped_with_a_reason(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in (*LAB, ASSIGNMENT[0]):
        shutil.copy(release_notebook(name), folder / name)
    unrelated = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('hello')")])
    nbformat.write(unrelated, folder / "holiday.ipynb")
    no_metadata = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def return_to_go(r, gamma=1.0):\n    pass")])
    nbformat.write(no_metadata, folder / "kernels_only.ipynb")
    found = find(folder)
    assert sorted(f.relative for f in found.submissions) == sorted([ASSIGNMENT[0], "kernels_only.ipynb"])
    reasons = {f.relative: (f.skip, f.skip_ru) for f in found.skipped}
    assert set(reasons) == {*LAB, "holiday.ipynb"}
    assert "'lab' notebook" in reasons[LAB[0]][0] and "ноутбук" in reasons[LAB[0]][1]
    assert "not a Module 5 assignment" in reasons["holiday.ipynb"][0] and "не задание" in reasons["holiday.ipynb"][1]


def test_links_fifos_and_devices_are_refused_in_their_own_row_and_never_followed(tmp_path):
    folder = tmp_path / "class"
    other = tmp_path / "elsewhere"
    (folder / "alice").mkdir(parents=True)
    other.mkdir()
    (other / "secret.py").write_text("x = 1\n")
    (folder / "alice" / "real.py").write_text("x = 1\n")
    (folder / "link.py").symlink_to(other / "secret.py")
    (folder / "linked_folder").symlink_to(other, target_is_directory=True)
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    os.mkfifo(folder / "pipe.py")
    (folder / "dev.py").symlink_to("/dev/zero")
    found = find(folder)
    rows = {f.relative: f.error for f in found.submissions}
    assert set(rows) == {"alice/real.py", "dev.py", "link.py", "pipe.py"}  # nothing under the linked folders
    assert rows["alice/real.py"] is None
    assert "symbolic link" in rows["link.py"] and "symbolic link" in rows["dev.py"]
    assert "not a regular file" in rows["pipe.py"]
    assert all("\n" not in (e or "") for e in rows.values())


def test_a_forged_timestamp_is_not_shown_and_a_huge_one_is_not_read(tmp_path):
    folder = tmp_path / "submitted" / "mallory" / "module05"
    folder.mkdir(parents=True)
    (folder / "a.py").write_text("x = 1\n")
    (folder / "timestamp.txt").write_text('=HYPERLINK("http://x")')
    assert find(folder / "a.py").submissions[0].timestamp == ""
    (folder / "timestamp.txt").write_text("2026-12-01 10:00:00 UTC" + " " * 10_000)
    assert find(folder / "a.py").submissions[0].timestamp == ""
    (folder / "timestamp.txt").unlink()
    os.mkfifo(folder / "timestamp.txt")
    assert find(folder / "a.py").submissions[0].timestamp == ""  # a FIFO does not hang discovery


def test_odd_file_names_are_found_and_a_missing_path_is_an_error(tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    names = ["grades.csv.py", "a\nTotal: 120.py", os.fsdecode(b"\xff.py"), "-rm.py"]
    for name in names:
        (folder / name).write_text("x = 1\n")
    assert sorted(f.relative for f in find(folder).submissions) == sorted(names)
    with pytest.raises(FileNotFoundError, match="nope"):
        find(tmp_path / "nope")


def test_common_root_of_files_and_folders(tmp_path):
    assert discover.common_root([tmp_path / "a" / "x.py", tmp_path / "b" / "y.py"], []) == tmp_path
    assert discover.common_root([], [tmp_path / "a"]) == tmp_path / "a"
