"""Attack: print a perfect-score JSON report on every output channel, at import and per call."""

import json
import os
import sys

FAKE = json.dumps({"score": 100.0, "tests": [{"name": "all", "score": 100, "max_score": 100}]})


def _shout():
    print(FAKE)
    print(FAKE, file=sys.stderr)
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.write(FAKE + "\n")
            stream.flush()
        except BaseException:
            pass
    for fd in (1, 2):
        try:
            os.write(fd, (FAKE + "\n").encode())
        except OSError:
            pass


_shout()
_honest_dqn_targets = dqn_targets  # noqa: F821 - defined by the correct code above


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    _shout()
    return _honest_dqn_targets(rewards, terminated, next_q_target, gamma)
