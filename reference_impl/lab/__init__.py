"""The Module 5 lab: runs the reference implementation's sections, writes reports, figures, claims and pins.

The reference RL code (kernels, KeyDoorGrid, the offline methods, FQE, DQN, the Decision
Transformer, the statistics) lives in :mod:`reference_impl` and never imports this package;
the lab sits above it. Its modules, from the command line down:

* :mod:`~reference_impl.lab.cli`: ``m5 lab`` / ``python -m reference_impl.lab``;
* :mod:`~reference_impl.lab.report` and :mod:`~reference_impl.lab.runners`: a section's
  markdown and figures, and one seed of one section;
* :mod:`~reference_impl.lab.results`, :mod:`~reference_impl.lab.claims`,
  :mod:`~reference_impl.lab.comparisons`, :mod:`~reference_impl.lab.caveats`: the claims,
  their paired comparisons and the report's sentences about them;
* :mod:`~reference_impl.lab.pins`, :mod:`~reference_impl.lab.design`,
  :mod:`~reference_impl.lab.profiles`: the pinned artifacts, the seed design, the parameters;
* :mod:`~reference_impl.lab.figures`, :mod:`~reference_impl.lab.side_studies`: the plots
  and the side studies' tables;
* :mod:`~reference_impl.lab.labels` and :mod:`~reference_impl.lab.text`: every text in
  English and Russian, read from the data files in ``text/``.

This file re-exports nothing: every name has one import path, its module's.
"""
