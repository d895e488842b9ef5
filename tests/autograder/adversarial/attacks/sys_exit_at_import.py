"""Attack: the module calls sys.exit() before defining anything.

This fragment goes *before* the correct code (see the marker line): no kernel is
ever defined, so every kernel is missing, and the grader must say so and survive.
"""

import sys

sys.exit(0)
# <correct submission here>
