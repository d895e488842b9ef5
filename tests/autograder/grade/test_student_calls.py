"""autograder/grade/student_calls.py: a submission's kernels called in its sandbox, one call at a time."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import reference_impl
from autograder.demo import CORRECT
from autograder.grade.student_calls import StudentError, StudentKernels, StudentRaised


def test_a_call_returns_the_students_array_and_a_value_error_stays_one():
    with StudentKernels(CORRECT) as kernels:
        args = ([1.0, 2.0], [0, 1], [[1.0, 3.0], [2.0, 0.0]])
        np.testing.assert_allclose(kernels.dqn_targets(*args, gamma=0.5), reference_impl.dqn_targets(*args, gamma=0.5))
        with pytest.raises(ValueError, match="terminated") as raised:
            kernels.dqn_targets([1.0], [0, 1], [[1.0]])
        assert isinstance(raised.value, StudentRaised) and raised.value.names[0] == "ValueError"
        with pytest.raises(AttributeError, match="not a kernel"):
            operator.attrgetter("print")(kernels)


def test_other_errors_a_missing_kernel_and_code_that_never_reaches_this_process(tmp_path):
    marker = tmp_path / "ran-here"
    submission = tmp_path / "partial.py"
    submission.write_text(
        "import numpy as np\n\n"
        "def return_to_go(rewards, gamma=1.0):\n"
        "    raise KeyError('oops')\n\n"
        "def expectile_loss(diff, tau):\n"
        "    try:\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "    except OSError:\n"
        "        pass\n"
        "    return np.zeros(len(diff))\n",
        encoding="utf-8",
    )
    with StudentKernels(submission) as kernels:
        with pytest.raises(StudentRaised, match="KeyError") as raised:
            kernels.return_to_go([1.0])
        assert not isinstance(raised.value, ValueError)
        with pytest.raises(StudentError, match="dqn_targets is not defined"):
            kernels.dqn_targets([1.0], [0], [[1.0]])
        np.testing.assert_array_equal(kernels.expectile_loss([1.0, -1.0], 0.5), [0.0, 0.0])  # the host's tmp_path is not there
    assert not marker.exists()
