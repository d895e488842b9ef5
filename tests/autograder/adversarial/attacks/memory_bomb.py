"""Attack: expectile_loss asks for ~80 GB at once; import reserves 2 GB of untouched memory.

The address-space limit turns both into MemoryError inside the sandbox; nothing of the
machine's RAM is actually used.
"""
_hoard = bytearray(2 << 30)  # calloc'd pages: reserved, never touched


def expectile_loss(diff, tau):
    table = [0.0] * (10**10)
    return float(len(table))
