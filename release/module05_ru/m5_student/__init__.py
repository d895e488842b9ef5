# Generated from reference_impl/__init__.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Reference implementation of Module 5 (learning from fixed data).

Importing the package loads only the numpy kernels; the environment, the training
loops and the lab (which need torch) live in submodules imported on demand.
"""
from m5_student.kernels import (
    behavior_support_mask,
    cql_discrete_penalty,
    double_dqn_targets,
    dqn_targets,
    expectile_loss,
    fqe_targets,
    iql_advantage_weights,
    masked_token_nll,
    pessimistic_values,
    return_to_go,
)
from m5_student.validation import KernelInputError

KERNEL_NAMES = (
    "dqn_targets",
    "double_dqn_targets",
    "masked_token_nll",
    "cql_discrete_penalty",
    "expectile_loss",
    "return_to_go",
    "pessimistic_values",
    "behavior_support_mask",
    "fqe_targets",
    "iql_advantage_weights",
)

__all__ = [*KERNEL_NAMES, "KERNEL_NAMES", "KernelInputError"]


# The language of the notebooks this kit was built for (their metadata m5.lang), written by
# the course's release build: one kit per language folder.
KIT_LANGUAGE = "ru"


def notebook_language() -> str:
    """Language of the notebooks next to this kit ("en" or "ru"), as the release build wrote it.

    It never depends on how the notebook is run (Jupyter, VS Code, nbconvert, nbgrader).
    While the course's grader runs a submission (``M5_GRADING``), the one kit it uses for
    every submission says the submission's own language, which the grader passes in ``M5_LANG``.
    """
    import os

    if os.environ.get("M5_GRADING") and os.environ.get("M5_LANG") in ("en", "ru"):
        return os.environ["M5_LANG"]
    return KIT_LANGUAGE
