"""Self-checks: the public property tests (shipped as ``m5_student.checks``), the students'
``python -m m5_student check`` (:mod:`autograder.check.kit`, shipped as ``m5_student.selfcheck``)
and the course staff's ``m5 check`` (:mod:`autograder.check.selfcheck`)."""
