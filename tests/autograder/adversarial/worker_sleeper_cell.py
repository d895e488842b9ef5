"""Attack: a setup cell that blocks SIGALRM and then sleeps (a notebook cell, repeated).

The cell's own timer (SIGALRM) never fires; only a deadline enforced from outside the
student's process can end it. Used as many cells by tests/autograder/grade/worker/test_worker_attacks.py.
"""

import signal
import time

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
time.sleep(10**6)
