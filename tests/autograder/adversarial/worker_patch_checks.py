"""Attack: switch off the no-mutation check by patching the worker from student code.

At import the submission finds the worker's code in its own process (the ``__main__``
module, any module holding the old ``_snapshot``) and replaces every function that
could take part in the check with one that says "unchanged"; it also makes numpy's
comparisons lie. Then behavior_support_mask normalises the caller's table in place
(the mask itself stays right). The check runs in the trusted parent, which compares
the shared input buffer with its private copy: the kernel still loses exactly its
no-mutation point.
"""
import sys

import numpy as np

_honest_support = behavior_support_mask  # noqa: F821 - defined by the correct code above


def _unchanged(*args, **kwargs):
    return False


for _module in list(sys.modules.values()):
    for _name in ("_snapshot", "_mutated", "_compare", "snapshot", "run_call", "_reap_children"):
        if _name == "run_call" or not hasattr(_module, _name):
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


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    if isinstance(probabilities, np.ndarray) and probabilities.dtype.kind == "f" and probabilities.ndim in (1, 2):
        top = probabilities.max(axis=-1, keepdims=True)
        if (top > 0).all():
            probabilities /= top
    return _honest_support(probabilities, threshold_ratio)
