"""Attack (or accident): an answer that depends on Python's per-process string hashing.

return_to_go is right or wrong depending on the parity of hash("m5"); with hash
randomization every fresh worker process would flip a coin, so the grade could change
between two gradings of the same file. The worker runs with a fixed hash seed.
"""

_honest_return_to_go = return_to_go  # noqa: F821 - defined by the correct code above


def return_to_go(rewards, gamma=1.0):
    out = _honest_return_to_go(rewards, gamma)
    return out if hash("m5") % 2 == 1 else out[::-1].copy()
