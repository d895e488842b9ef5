"""nbgrader's answer stubs, in the language of each notebook and fitted to each cell.

``nbgrader generate_assignment`` replaces every solution region by a stub: by default
``# YOUR CODE HERE`` / ``raise NotImplementedError()`` in code cells and
``YOUR ANSWER HERE`` in text cells. One nbgrader configuration serves a whole course
(both language assignments), so the stub cannot be a course setting: here
:class:`LocalisedClearSolutions` reads the notebook's own metadata (``m5.lang``, which
the builder writes) and writes the stub of that language (English without it), fitted
to the region it replaces (:func:`code_stub`):

* a region inside a function (a kernel, a torch port) raises NotImplementedError
  naming the function and saying to write it in place of that line, so an untouched
  kernel's traceback says what to do;
* a region at module level (the numerical answers) assigns ``None`` to every name the
  solution assigns, so an untouched answer cell runs: *Restart & Run All* goes on to the
  kernels, and the answer checks say "not assigned yet".

The grader, the self-check and the lab recognise an untouched kernel by what it does
(it raises NotImplementedError) and an untouched answer by its value (None), whatever
the comments say. :func:`generate_assignment_preprocessors` is nbgrader's own list with
this class in place of ``ClearSolutions``; ``release.course_config`` sets it.
"""

from __future__ import annotations

import ast
import json
import re

from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearSolutions

from autograder.assign.student_extras.notebook import TEXT as KIT_TEXT  # the kit recognises what the stub says
from autograder.grade.written import TEXT_STUBS  # the text stub m5 grade and m5 review recognise

STUBS = {
    "en": {
        "code": "# YOUR CODE HERE\nraise NotImplementedError()",
        "text": TEXT_STUBS["en"],
        "header": "# YOUR CODE HERE",
        "answers": "# YOUR CODE HERE: replace each None by your answer",
        "function": KIT_TEXT["en"]["stub"],
    },
    "ru": {
        "code": "# ВАШ КОД\nraise NotImplementedError()",
        "text": TEXT_STUBS["ru"],
        "header": "# ВАШ КОД",
        "answers": "# ВАШ КОД: замените каждое None своим ответом",
        "function": KIT_TEXT["ru"]["stub"],
    },
}
DEFAULT_LANGUAGE = "en"
BEGIN_RE = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*$")
END_RE = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")


def notebook_stubs(metadata) -> dict[str, str]:
    """The stubs for a notebook with ``metadata``: by its ``m5.lang``, else English."""
    m5 = metadata.get("m5") if isinstance(metadata, dict) else None
    lang = m5.get("lang") if isinstance(m5, dict) else None
    return STUBS[lang if lang in STUBS else DEFAULT_LANGUAGE]


def enclosing_function(tree: ast.Module, line: int) -> str | None:
    """Name of the innermost function whose body holds 1-based ``line`` (None: module level)."""
    best = None
    for node in ast.walk(tree):
        holds = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0) + 1
        if holds and (best is None or node.lineno > best.lineno):
            best = node
    return None if best is None else best.name


def assigned_names(region: str) -> list[str]:
    """The names a module-level solution region assigns, in order of first assignment."""
    names: list[str] = []
    for node in ast.parse(region).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        )
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store) and leaf.id not in names:
                    names.append(leaf.id)
    return names


def code_stub(source: str, stubs: dict[str, str]) -> str:
    """The stub for the (first) solution region of code cell ``source``, before indentation.

    In a function: ``raise NotImplementedError("implement `f` here: ...")``. At module
    level: ``name = None`` for each name the region assigns. Anything else (no region,
    a region that assigns nothing, source that does not parse): nbgrader's stub.
    """
    lines = source.split("\n")
    begin = next((i for i, line in enumerate(lines) if BEGIN_RE.match(line)), None)
    if begin is None:
        return stubs["code"]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return stubs["code"]
    function = enclosing_function(tree, begin + 1)
    if function is not None:
        message = stubs["function"].format(name=function)
        return f"{stubs['header']}\nraise NotImplementedError({json.dumps(message, ensure_ascii=False)})"
    end = next((i for i in range(begin + 1, len(lines)) if END_RE.match(lines[i])), len(lines))
    try:
        names = assigned_names("\n".join(lines[begin + 1 : end]))
    except SyntaxError:
        names = []
    if not names:
        return stubs["code"]
    return "\n".join([stubs["answers"]] + [f"{name} = None" for name in names])


class LocalisedClearSolutions(ClearSolutions):
    """nbgrader's ClearSolutions with the stubs of the notebook's language (``m5.lang``),
    each code stub fitted to its cell (:func:`code_stub`)."""

    def preprocess(self, nb, resources):
        self._stubs = notebook_stubs(nb.metadata)
        self.code_stub = {**self.code_stub, "python": self._stubs["code"]}
        self.text_stub = self._stubs["text"]
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code":
            self.code_stub = {**self.code_stub, "python": code_stub(cell.source, self._stubs)}
        return super().preprocess_cell(cell, resources, cell_index)


def generate_assignment_preprocessors() -> list[type]:
    """nbgrader's preprocessors of ``generate_assignment``, ClearSolutions localised."""
    default = GenerateAssignment.class_traits()["preprocessors"].make_dynamic_default()
    if ClearSolutions not in default:
        raise RuntimeError("nbgrader's generate_assignment no longer uses ClearSolutions; update autograder/assign/stubs.py")
    return [LocalisedClearSolutions if p is ClearSolutions else p for p in default]
