"""Attack: try to reach the network (to fetch answers or send the hidden tests out).

Any connection that succeeds makes every kernel answer garbage, so full marks mean
that no address, local or remote, was reachable.
"""

import socket

import numpy as np

REACHED = []
for host, port in [
    ("127.0.0.1", 22),
    ("127.0.0.1", 80),
    ("127.0.0.1", 8000),
    ("127.0.0.1", 8888),
    ("1.1.1.1", 53),
    ("8.8.8.8", 53),
    ("10.0.0.1", 80),
    ("192.168.0.1", 80),
]:
    try:
        with socket.create_connection((host, port), timeout=0.3):
            REACHED.append((host, port))
    except OSError:
        pass
try:
    socket.getaddrinfo("example.com", 80)
    REACHED.append("dns")
except OSError:
    pass

_honest = {
    name: globals()[name]
    for name in (
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
}


def _guarded(name):
    def kernel(*args, **kwargs):
        if REACHED:
            return np.full(np.shape(args[0]), -1.0)
        return _honest[name](*args, **kwargs)

    return kernel


for _name in _honest:
    globals()[_name] = _guarded(_name)
