"""An instructor's own hidden property, run by the pytest plugin (docs/pytest_plugin.md)::

    pytest --m5-submission=SUBMISSION docs/examples/test_return_to_go_property.py -k property

Hypothesis draws the inputs here; ``m5_student`` runs the student's ``return_to_go`` on them in
the grading sandbox and hands back the array it returned; the reference runs here.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import reference_impl

rewards = hnp.arrays(np.float64, st.integers(0, 8), elements=st.floats(-10, 10))


@settings(max_examples=50, deadline=None)  # no deadline: the first call starts the sandbox
@given(rewards=rewards, gamma=st.floats(0, 1))
def test_return_to_go_property_matches_the_reference(m5_student, rewards, gamma):
    got = m5_student.return_to_go(rewards, gamma=gamma)
    np.testing.assert_allclose(got, reference_impl.return_to_go(rewards, gamma=gamma), rtol=1e-5, atol=1e-5)
