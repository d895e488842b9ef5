"""Attack: switch off the no-mutation check by patching the worker from student code.

At import the submission finds the worker's code in its own process (the ``__main__``
module, any module holding the old ``_snapshot``) and replaces every function that
could take part in the check with one that says "unchanged"; it also makes numpy's
comparisons lie. It is put on top of ``attacks/mutate_inputs.py`` (see
tests/autograder/grade/worker/test_worker_attacks.py), whose fqe_targets and behavior_support_mask
write into their inputs. The check runs in the trusted parent, which compares the
shared input buffer with its private copy: each still loses exactly its no-mutation
point.
"""

import sys

import numpy as np


def _unchanged(*args, **kwargs):
    return False


for _module in list(sys.modules.values()):
    for _name in ("_snapshot", "_mutated", "_compare", "snapshot", "_reap_children"):
        if not hasattr(_module, _name):
            continue
        try:
            setattr(_module, _name, _unchanged if _name != "_snapshot" else (lambda arr: ()))
        except (AttributeError, TypeError):
            pass
    _parent = getattr(_module, "Parent", None)
    if isinstance(_parent, type):
        for _name in ("_mutated", "_place", "_run", "batch"):
            if hasattr(_parent, _name):
                setattr(_parent, _name, _unchanged)
np.array_equal = lambda *args, **kwargs: True
np.shares_memory = lambda *args, **kwargs: False
