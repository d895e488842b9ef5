"""nbgrader's late penalties from the course's own policy (``m5_course.toml``, :mod:`autograder.grade.late`).

``m5 course init --due ...`` points ``nbgrader_config.py`` here::

    c.AssignLatePenalties.plugin_class = "autograder.assign.nbgrader_late.PolicyLatePenalty"
    c.PolicyLatePenalty.policy_file = "<course>/m5_course.toml"

and gives each assignment in nbgrader's gradebook the policy's due date. nbgrader measures how
late a submission is against that date (``timestamp.txt``) and asks this plugin for the penalty:
the same rule as ``m5 grade --policy``, with the student's extension from ``extensions.csv``
beside the policy file.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Unicode

from autograder.grade import late


class PolicyLatePenalty(LateSubmissionPlugin):
    """``min(cap, penalty x started periods late)`` percent of the notebook's score (see :mod:`autograder.grade.late`)."""

    policy_file = Unicode("", help="the course's m5_course.toml with its [policy] table").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        policy = late.read_policy(Path(self.policy_file))
        extensions = late.read_extensions(
            Path(self.policy_file).with_name(late.EXTENSIONS_FILE), None, late.zone(policy.timezone, "timezone")
        )
        return penalty_points(policy, extensions.get(student_id), score, total_seconds_late)


def penalty_points(policy: late.Policy, extension: late.Extension | None, score: float, total_seconds_late: float) -> float:
    """The points a notebook ``total_seconds_late`` after the policy's due date loses."""
    submitted = policy.due + dt.timedelta(seconds=total_seconds_late)
    seconds = late.late_seconds(policy, submitted, extension.due if extension else None)
    return score * late.penalty_percent(policy, seconds) / 100
