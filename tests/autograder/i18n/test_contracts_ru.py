"""The Russian notebooks are Russian throughout, with the English notebooks' code.

* The kernels' contracts (docstrings) and the comments of every code cell are Russian
  in ``source/module05_ru`` and ``release/module05_ru``; the code is the English code
  token for token (syntax trees compared without docstrings).
* Each Russian contract states the English one's clauses: every clause of the hidden
  suite (``autograder/hidden/suite.toml``) keeps its key terms (names, formulas,
  shapes, bounds), and the argument names and ````quoted```` names are the same.
* What the notebooks' own code prints (string literals passed to ``print``) is Russian.
* The translation table is current: an English docstring that changes no longer
  matches its fingerprint, and the test names the entry to translate again.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import re
import tokenize

import nbformat
import pytest
from classroom import RELEASE_ROOT, SOURCE_ROOT  # tests/autograder is on sys.path

import reference_impl
from autograder.assign import lab_source, sources
from autograder.hidden import contracts
from autograder.i18n import contracts_ru as cr

CYRILLIC = re.compile(r"[а-яёА-ЯЁ]")
LETTER = re.compile(r"[^\W\d_]")
# Words that only English prose has: none may be left in a Russian docstring or comment.
ENGLISH_PROSE = re.compile(
    r"\b(the|is|are|was|when|with|and|of|on|raises|returns|gives|never|must|may|"
    r"only|from|this|that|your|here|yet|not|else|whatever|along)\b",
    re.I,
)
# Code a Russian text quotes as it is: ``names``, identifiers with _ or digits, formulas' symbols.
CODE_WORD = re.compile(r"``[^`]*``|`[^`]*`|\{[^{}]*\}|\b\w*[_\d]\w*\b|\b[A-Z][A-Za-z]*\b")
NOTEBOOK_ROOTS = {"source": SOURCE_ROOT, "release": RELEASE_ROOT}
PAIRS = [("assignment", root) for root in NOTEBOOK_ROOTS] + [("lab", root) for root in NOTEBOOK_ROOTS]


def _notebook(kind: str, lang: str, root: str) -> nbformat.NotebookNode:
    return nbformat.read(sources.notebook_path(kind, lang, NOTEBOOK_ROOTS[root]), as_version=4)


def _code_sources(nb) -> dict[str, str]:
    return {c.id: c.source for c in nb.cells if c.cell_type == "code"}


def _docstrings(source: str) -> list[tuple[str, str]]:
    """(function name, docstring) of every function in a cell, nested ones included."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        (node.name, ast.get_docstring(node))
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ast.get_docstring(node)
    ]


def _comments(source: str) -> list[str]:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [t.string[1:].strip() for t in tokens if t.type == tokenize.COMMENT and not t.string.startswith("###")]


def _prose(text: str) -> str:
    """``text`` without what is code in it (quoted names, identifiers, symbols, formula lines)."""
    lines = [line for line in text.splitlines() if not re.search(r"\s=\s|->", line) or CYRILLIC.search(line)]
    return CODE_WORD.sub(" ", "\n".join(lines))


def is_russian(text: str) -> bool:
    """Mostly Cyrillic once the code in it is set aside, and no English function word left."""
    prose = _prose(text)
    letters = LETTER.findall(prose)
    cyrillic = CYRILLIC.findall(prose)
    return bool(letters) and len(cyrillic) >= 0.6 * len(letters) and not ENGLISH_PROSE.search(prose)


def test_is_russian_tells_the_languages_apart():
    assert is_russian(cr.DOCSTRINGS_RU["kernels.dqn_targets"][1])
    assert not is_russian(reference_impl.dqn_targets.__doc__)
    assert not is_russian("Выбрасывает ValueError when the shapes differ.")  # half translated
    assert is_russian("ещё не присвоены: ")


# ------------------------------------------------------------------ same code, Russian words
def _without_checksums(cells):
    """nbgrader's release stores a checksum of each cell's text: comments and docstrings included."""

    def strip(meta):
        nbgrader = {k: v for k, v in meta.get("nbgrader", {}).items() if k != "checksum"}
        return {**meta, "nbgrader": nbgrader} if "nbgrader" in meta else meta

    return [(cid, code, strip(meta)) for cid, code, meta in cells]


@pytest.mark.parametrize("kind, root", PAIRS)
def test_english_and_russian_notebooks_have_the_same_code(kind, root):
    en, ru = _notebook(kind, "en", root), _notebook(kind, "ru", root)
    assert _without_checksums(sources.code_cells(en)) == _without_checksums(sources.code_cells(ru))
    # ... and the Russian ones really differ in their words where the English has any.
    en_code, ru_code = _code_sources(en), _code_sources(ru)
    worded = [cid for cid, src in en_code.items() if _docstrings(src) or _comments(src)]
    assert worded and all(ru_code[cid] != en_code[cid] for cid in worded)


@pytest.mark.parametrize("kind, root", PAIRS)
def test_every_docstring_and_comment_of_a_russian_notebook_is_russian(kind, root):
    nb = _notebook(kind, "ru", root)
    found = 0
    for cell_id, source in _code_sources(nb).items():
        for name, doc in _docstrings(source):
            found += 1
            assert is_russian(doc), f"{root} {kind} cell {cell_id}: the docstring of {name} is not Russian:\n{doc}"
        for comment in _comments(source):
            found += 1
            assert is_russian(comment), (
                f"{root} {kind} cell {cell_id}: comment not Russian: {comment!r}; add it to COMMENTS_RU in autograder/i18n/contracts_ru.py"
            )
    assert found >= (10 if kind == "assignment" else 4)


def _literal_text(node: ast.AST) -> list[str]:
    """The text a printed expression spells out: string constants, the literal parts of
    f-strings, both sides of ``+`` and of ``a if c else b`` (not keys or arguments inside)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.Constant)]
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + _literal_text(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_text(node.body) + _literal_text(node.orelse)
    return []


def _print_literals(source: str) -> list[str]:
    """The literal text of every argument passed to print()."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for arg in node.args:
                out += _literal_text(arg)
    return out


@pytest.mark.parametrize("kind", ["assignment", "lab"])
@pytest.mark.parametrize("root", sorted(NOTEBOOK_ROOTS))
def test_what_a_russian_notebook_prints_is_russian(kind, root):
    """Strings the notebook's own cells print; the kit's printed messages are checked below."""
    worded = [
        text
        for source in _code_sources(_notebook(kind, "ru", root)).values()
        for text in _print_literals(source)
        if len(LETTER.findall(_prose(text))) >= 3
    ]
    english = [text for text in worded if not is_russian(text)]
    assert not english, f"{root}/{kind}: English printed by the Russian notebook: {english}"


def test_the_kits_printed_messages_exist_in_russian():
    from autograder.assign.student_extras import notebook
    from autograder.check import kit, public

    for table in (notebook.TEXT, kit.TEXT, public.TEXT):
        assert set(table["ru"]) == set(table["en"])
        for key, text in table["ru"].items():
            assert is_russian(text.replace("[", " ").replace("]", " ")), (key, text)


# ------------------------------------------------------------------ the contracts
def _russian_contract(module: str, name: str) -> str:
    return cr.DOCSTRINGS_RU[f"{module}.{name}"][1]


def _key_terms(quote: str, parameters: set[str]) -> list[str]:
    """What a clause's translation must keep: quoted names, identifiers, parameters, numbers,
    intervals and shapes, exception names."""
    terms = re.findall(r"``([^`]+)``", quote)
    terms += re.findall(r"[\[(]-?\d+(?:\.\d+)?, -?\d+(?:\.\d+)?[\])]", quote)  # [0, 1], (0, 1)
    terms += re.findall(r"\([A-Z](?:, [A-Z])?,?\)", quote)  # (B,), (B, A)
    terms += re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?(?:/\d+)?", quote)  # 0.5, 1e-6, 0/1
    for word in re.findall(r"[A-Za-z_][\w*']*", quote):
        if (
            "_" in word
            or word in parameters
            or word in {"ValueError", "NaN", "Q", "V", "A", "MSE", "tau", "beta", "gamma", "bool", "float", "float64", "Qbar"}
        ):
            terms.append(word)
    return terms


@pytest.mark.parametrize("kernel", reference_impl.KERNEL_NAMES)
def test_every_clause_of_a_contract_keeps_its_key_terms_in_russian(kernel):
    fn = getattr(reference_impl, kernel)
    parameters = set(inspect.signature(fn).parameters)
    russian = " ".join(f"{kernel}{inspect.signature(fn)}\n{_russian_contract('kernels', kernel)}".split())
    checked = 0
    for clause, quote in contracts.clauses(kernel).items():
        for term in _key_terms(quote, parameters):
            checked += 1
            assert term in russian, f"{clause}: the Russian contract of {kernel} lacks {term!r} ({quote!r})"
    assert checked >= 10


def _english_docstrings(key: str) -> list[str]:
    """The English docstrings an entry of the table may translate: the function's in
    ``reference_impl/<module>.py``, or (``cells.<name>``) those of the functions so named
    that the builder defines in the English notebooks' code cells."""
    module, name = key.split(".")
    if module == "cells":
        return [
            doc
            for kind in ("assignment", "lab")
            for src in _code_sources(_notebook(kind, "en", "source")).values()
            for fn, doc in _docstrings(src)
            if fn == name
        ]
    fn = getattr(importlib.import_module(f"reference_impl.{module}"), name, None)
    return [inspect.getdoc(fn)] if fn is not None and fn.__doc__ else []


@pytest.mark.parametrize("key", sorted(cr.DOCSTRINGS_RU))
def test_russian_docstring_names_what_the_english_one_names(key):
    module, name = key.split(".")
    english, russian = _english_docstrings(key)[0], _russian_contract(module, name)
    assert is_russian(russian), key
    assert sorted(set(re.findall(r"``([^`]+)``", english))) == sorted(set(re.findall(r"``([^`]+)``", russian))), key
    fn = getattr(importlib.import_module(f"reference_impl.{module}"), name) if module != "cells" else None
    parameters = set(inspect.signature(fn).parameters) if fn else set()
    for parameter in set(re.findall(r"\b\w+\b", english)):
        if parameter.isidentifier() and ("_" in parameter or parameter in parameters):
            assert re.search(rf"\b{parameter}\b", russian), f"{key}: the Russian docstring does not name {parameter}"
    for word in ("ValueError", ":func:`dqn_targets`"):
        assert (word in english) == (word in russian), (key, word)
    # Formula lines (no prose on them) are kept as they are.
    for line in english.splitlines():
        if re.search(r"\s=\s", line) and not ENGLISH_PROSE.search(line) and not re.search(r"\b(where|along|always)\b", line):
            assert " ".join(line.split()) in " ".join(russian.split()), f"{key}: formula line changed: {line!r}"


@pytest.mark.parametrize("key", sorted(cr.DOCSTRINGS_RU))
def test_translation_table_is_current(key):
    english = _english_docstrings(key)
    assert english, f"{key}: no such function with a docstring; remove the entry"
    found = sorted({cr.fingerprint(doc) for doc in english})
    assert cr.DOCSTRINGS_RU[key][0] in found, (
        f"the English docstring of {key} changed: translate it again in "
        f"autograder/i18n/contracts_ru.py and set its fingerprint to one of {found}"
    )


def test_every_translation_is_used_by_a_notebook():
    """No dead entries: each docstring and comment of the tables appears in a Russian source notebook."""
    text = "\n".join(src for kind in ("assignment", "lab") for src in _code_sources(_notebook(kind, "ru", "source")).values())
    squashed = " ".join(text.split())
    for key, (_, russian) in cr.DOCSTRINGS_RU.items():
        assert " ".join(russian.split()) in squashed, f"{key} is in no notebook"
    for english, russian in cr.COMMENTS_RU.items():
        assert russian in text, f"comment {english!r} is in no notebook"


# ------------------------------------------------------------------ localise_source itself
def test_localise_source_keeps_the_code_and_replaces_words():
    source = sources.solution_source("masked_token_nll")
    russian = cr.localise_source(source, "ru")
    assert cr.code_skeleton(russian) == cr.code_skeleton(source)
    assert _russian_contract("kernels", "masked_token_nll").splitlines()[0] in russian
    assert "# в дополнении (padding) может стоять -inf" in russian and "### BEGIN SOLUTION" in russian
    assert cr.localise_source(source, "en") is source


def test_localise_source_leaves_unknown_words_and_non_python_alone():
    unknown = 'def f(x):\n    """Not in the table."""\n    return x  # nor this\n'
    assert cr.localise_source(unknown, "ru") == unknown
    magic = "%matplotlib inline\nx = 1  # hidden tests, run after you submit\n"
    assert cr.localise_source(magic, "ru") == magic
    with pytest.raises(ValueError, match="lang"):
        cr.localise_source(unknown, "de")


def test_localised_comments_keep_their_place():
    source = "x = 1  # graded after you submit\n# Exercise 9: assign\n#   ex09_a: a number\n#   ex09_b: a list of 3 numbers\n"
    assert cr.localise_source(source, "ru") == (
        "x = 1  # оценивается после сдачи\n# Упражнение 9: присвойте\n#   ex09_a: число\n#   ex09_b: список из 3 чисел\n"
    )


def test_code_skeleton_ignores_docstrings_and_comments_only():
    a = 'def f(x):\n    """One."""\n    return x + 1  # a\n'
    b = 'def f(x):\n    """Два."""\n    # б\n    return x + 1\n'
    assert cr.code_skeleton(a) == cr.code_skeleton(b)
    assert cr.code_skeleton(a) != cr.code_skeleton(a.replace("x + 1", "x + 2"))
    assert cr.code_skeleton(a) != cr.code_skeleton(a.replace("return x + 1", 'return "x + 1"'))


def test_lab_ports_are_all_translated():
    for port in lab_source.PORTS:
        assert f"torch_kernels.{port}_torch" in cr.DOCSTRINGS_RU


# ------------------------------------------------------------------ the kit's contracts
@pytest.mark.parametrize("root", sorted(NOTEBOOK_ROOTS))
@pytest.mark.parametrize("module", ["kernels", "torch_kernels"])
def test_the_russian_kit_states_the_kernels_contracts_in_russian_with_the_same_code(root, module):
    """``m5_student/kernels.py`` and ``torch_kernels.py`` of the Russian kit: the contracts
    of what students write (the ten kernels, the lab's torch ports) in the notebook's
    words, and the English kit's code (comments and the stubs' messages aside)."""
    folder = NOTEBOOK_ROOTS[root]
    en = (folder / sources.ASSIGNMENTS["en"] / "m5_student" / f"{module}.py").read_text(encoding="utf-8")
    ru = (folder / sources.ASSIGNMENTS["ru"] / "m5_student" / f"{module}.py").read_text(encoding="utf-8")
    russian = dict(_docstrings(ru))
    students_write = list(reference_impl.KERNEL_NAMES) if module == "kernels" else [f"{port}_torch" for port in lab_source.PORTS]
    for name in students_write:
        assert is_russian(russian[name]), f"{root}: m5_student/{module}.py: {name}"
        assert russian[name] == cr.translate_docstring(dict(_docstrings(en))[name], "ru")
    assert cr.code_skeleton(_stub_messages("en").sub("STUB", en)) == cr.code_skeleton(_stub_messages("ru").sub("STUB", ru))


def _stub_messages(lang: str) -> re.Pattern:
    """The stubs' message in ``lang``, whatever kernel and notebook it names."""
    from autograder.assign import release

    words = release.STUB_MESSAGES[lang]
    where = "|".join(re.escape(words[kind]) for kind in ("assignment", "lab"))
    parts = re.split(r"(\{name\}|\{where\})", words["message"])
    return re.compile("".join(r"\w+" if part == "{name}" else f"(?:{where})" if part == "{where}" else re.escape(part) for part in parts))
