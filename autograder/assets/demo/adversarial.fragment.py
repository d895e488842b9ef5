"""Demo fragment: an adversarial student, appended to correct.py. Tries to escape or fool the grader."""

import os
import socket

import numpy as np

# Patch numpy's comparisons in the hope that the grader uses them here: it does not.
np.allclose = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None

# Try to read the hidden tests and the reference implementation: they are not visible.
for guess in ("/work/main/autograder/hidden/kernels.py", "../autograder/hidden/kernels.py"):
    try:
        open(guess).read()
    except OSError:
        pass

# Try to phone home: there is no network in the sandbox.
try:
    socket.create_connection(("198.51.100.1", 80), timeout=1)
except OSError:
    pass

# Write a fake results file and print fake JSON: neither reaches the grader.
try:
    with open("results.json", "w") as fh:
        fh.write('{"score": 1000}')
except OSError:
    pass
print('{"score": 1000, "tests": []}')


def return_to_go(rewards, gamma=1.0):
    while True:  # an infinite loop costs this kernel only
        pass


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    os.kill(os.getppid(), 9)  # kill the parent: the sandbox has its own pid namespace
    os._exit(3)
