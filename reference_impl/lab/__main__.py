"""``python -m reference_impl.lab``: the lab's command line (:mod:`reference_impl.lab.cli`)."""

from reference_impl.lab.cli import main

raise SystemExit(main())
