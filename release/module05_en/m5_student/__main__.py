"""``python -m m5_student check NOTEBOOK``: the self-check of the student kit (see ``m5_student.selfcheck``)."""

import sys

from m5_student.selfcheck import main

sys.exit(main())
