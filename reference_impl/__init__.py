"""Reference implementation of Module 5 (learning from fixed data).

Importing the package loads only the numpy kernels; the environment, the training
loops and the lab (which need torch) live in submodules imported on demand.
"""

from reference_impl.numerics import pin_numerics

pin_numerics()  # before any training code computes: one floating-point code path on every x86 CPU

from reference_impl.kernels import (  # noqa: E402  (after the pin, which must come first)
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
from reference_impl.validation import KernelInputError  # noqa: E402

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

# Spelled out (the same names as KERNEL_NAMES, same order) so linters see the re-exports.
__all__ = [
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
    "KERNEL_NAMES",
    "KernelInputError",
]
