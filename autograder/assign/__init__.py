"""Assignment stage: bilingual nbgrader source notebooks and the student release.

* :mod:`autograder.assign.sources` builds the instructor notebooks in ``source/module05_{en,ru}``
  (one builder, English and Russian text, identical code: docstrings and comments
  translated by :mod:`autograder.i18n.contracts_ru`);
* :mod:`autograder.assign.release` (``m5 release``) turns them into the student release
  with nbgrader and builds the student support library ``m5_student``.
"""
