"""Attack: expectile_loss asks for ~80 GB at once; import reserves 2 GB of untouched memory.

The address-space limit turns both into MemoryError inside the sandbox; nothing of the
machine's RAM is actually used.
"""

import numpy as np

_hoard = np.zeros(2 << 27)  # 2 GiB of calloc'd pages: address space taken, RAM never touched


def expectile_loss(diff, tau):
    table = [0.0] * (10**10)
    return float(len(table))
