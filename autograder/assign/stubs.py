"""nbgrader's answer stubs in the language of each notebook.

``nbgrader generate_assignment`` replaces every solution region by a stub: by default
``# YOUR CODE HERE`` / ``raise NotImplementedError()`` in code cells and
``YOUR ANSWER HERE`` in text cells. One nbgrader configuration serves a whole course
(both language assignments), so the stub cannot be a course setting: here
:class:`LocalisedClearSolutions` reads the notebook's own metadata (``m5.lang``, which
the builder writes) and uses :data:`STUBS` of that language. A notebook without it
gets the English stubs, which are nbgrader's.

The code stub still ends with ``raise NotImplementedError()``: the grader, the
self-check and the lab recognise an untouched answer cell by what it does, whatever
its comment says. :func:`generate_assignment_preprocessors` is nbgrader's own list
with this class in place of ``ClearSolutions``; ``release.course_config`` sets it.
"""
from __future__ import annotations

from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearSolutions

STUBS = {
    "en": {"code": "# YOUR CODE HERE\nraise NotImplementedError()", "text": "YOUR ANSWER HERE"},
    "ru": {"code": "# ВАШ КОД\nraise NotImplementedError()", "text": "ВАШ ОТВЕТ"},
}
DEFAULT_LANGUAGE = "en"


def notebook_stubs(metadata) -> dict[str, str]:
    """The stubs for a notebook with ``metadata``: by its ``m5.lang``, else English."""
    m5 = metadata.get("m5") if isinstance(metadata, dict) else None
    lang = m5.get("lang") if isinstance(m5, dict) else None
    return STUBS[lang if lang in STUBS else DEFAULT_LANGUAGE]


class LocalisedClearSolutions(ClearSolutions):
    """nbgrader's ClearSolutions with the stubs of the notebook's language (``m5.lang``)."""

    def preprocess(self, nb, resources):
        stubs = notebook_stubs(nb.metadata)
        self.code_stub = {**self.code_stub, "python": stubs["code"]}
        self.text_stub = stubs["text"]
        return super().preprocess(nb, resources)


def generate_assignment_preprocessors() -> list[type]:
    """nbgrader's preprocessors of ``generate_assignment``, ClearSolutions localised."""
    default = GenerateAssignment.class_traits()["preprocessors"].make_dynamic_default()
    if ClearSolutions not in default:
        raise RuntimeError("nbgrader's generate_assignment no longer uses ClearSolutions; update autograder/assign/stubs.py")
    return [LocalisedClearSolutions if p is ClearSolutions else p for p in default]
