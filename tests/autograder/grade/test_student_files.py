"""Safe reading of student files: no links, regular files only, size checked first."""

import os
import threading

import pytest

from autograder.grade.student_files import SubmissionError, read_bytes


def test_reads_a_regular_file(tmp_path):
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    assert read_bytes(tmp_path / "a.py", 100) == b"x = 1\n"


def test_a_symlink_is_refused_even_to_a_readable_file(tmp_path):
    (tmp_path / "secret").write_text("top secret")
    (tmp_path / "a.py").symlink_to(tmp_path / "secret")
    with pytest.raises(SubmissionError, match="symbolic link") as info:
        read_bytes(tmp_path / "a.py", 100)
    assert "top secret" not in str(info.value)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    done = []
    worker = threading.Thread(
        target=lambda: done.append(pytest.raises(SubmissionError, read_bytes, tmp_path / "pipe.py", 100)), daemon=True
    )
    worker.start()
    worker.join(60)  # generous: a blocking open would never return
    assert done and "FIFO" in str(done[0].value)


def test_a_device_is_refused(tmp_path):
    with pytest.raises(SubmissionError, match="a device"):
        read_bytes("/dev/zero", 100)


def test_an_oversize_file_is_refused_before_reading(tmp_path):
    (tmp_path / "big.py").write_bytes(b"#" * 101)
    with pytest.raises(SubmissionError, match="101 bytes, more than the 100 allowed"):
        read_bytes(tmp_path / "big.py", 100)


def test_a_missing_file_and_a_directory(tmp_path):
    with pytest.raises(SubmissionError, match="no such file"):
        read_bytes(tmp_path / "nope.py", 100)
    (tmp_path / "dir.py").mkdir()
    with pytest.raises(SubmissionError, match="directory"):
        read_bytes(tmp_path / "dir.py", 100)
