"""Attack: sys.exit() at the end of the module, after every kernel is defined.

The kernels exist and are correct: they keep full marks; the exit is only a note.
"""

import sys

sys.exit("done")
