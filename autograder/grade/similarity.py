"""Fingerprints of a submission's code, for the class report's similarity flags (:mod:`.copy_clusters`).

The method is winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003; the method of
MOSS) over a normalized token stream. The lexer here is a small regular expression over
the text, written for this purpose: the grader never parses student code into a syntax
tree (``docs/sandbox.md``), and a lexer that cannot fail is the point: the standard
``tokenize`` stops at the first unterminated string, so one ``'''`` line used to hide a
whole submission.

* **Tokens**: comments, blank lines, indentation and layout are dropped; every identifier
  becomes ``N``, every number ``0``, every string ``S`` (an opening quote that never closes
  is one ``S`` and lexing goes on); keywords and operators stay. Statements that do nothing
  (``pass``, ``...``, a lone constant, string or name) are dropped, so padding a copy with
  them changes nothing.
* **Fingerprints**: a hash per run of :data:`K_GRAM` tokens; of every :data:`WINDOW`
  consecutive hashes the smallest is kept. The released notebooks' cells are left out of
  the code a record keeps, and their fingerprints removed, so starter code is never evidence.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from functools import lru_cache
from pathlib import Path

from autograder.grade.extract import from_notebook

K_GRAM = 12
WINDOW = 8
CELL_BREAK = "\n\x1e\n"  # between cells in a record's code: a string never runs on into the next cell
MAX_CODE_CHARS = 20_000  # the student's own code kept per submission (released cells left out)
REPO = Path(__file__).resolve().parents[2]
RELEASED = tuple(REPO / "release" / f"module05_{lang}" / f"m05_assignment_{lang}.ipynb" for lang in ("en", "ru"))

_TOKEN = re.compile(
    r"""
    (?P<comment>\#[^\r\n]*)
  | (?P<newline>\r?\n|\r)
  | (?P<continuation>\\\r?\n)
  | (?P<space>[ \t\f]+)
  | (?P<string>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\r\n])*'|"(?:\\.|[^"\\\r\n])*"))
  | (?P<unclosed>[rRbBuUfF]{0,2}(?:'''|\"\"\"|'|"))
  | (?P<number>0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)
  | (?P<name>[^\W\d]\w*)
  | (?P<op>\.\.\.|\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%&|^@<>=!]=|[-+*/%&|^~@<>=()\[\]{},:;.])
  | (?P<other>[\s\S])
    """,
    re.VERBOSE,
)
_OPEN, _CLOSE = set("([{"), set(")]}")
# A statement made of one of these does nothing: padding, never evidence.
_NO_OPS = {("pass",), ("...",), ("S",), ("0",), ("N",), ("None",), ("True",), ("False",)}


def _normal_form(kind: str, text: str) -> str:
    """A token as the fingerprints see it: a name ``N`` (a keyword stays), a number ``0``,
    a string ``S``; any other token as written."""
    if kind == "name":
        return text if keyword.iskeyword(text) else "N"
    if kind == "number":
        return "0"
    if kind in ("string", "unclosed"):
        return "S"
    return text


def _statements(source: str):
    """The source's statements as lists of normalized tokens (a statement ends at a newline
    outside brackets, or at ``;``)."""
    depth, current = 0, []
    for match in _TOKEN.finditer(source):
        kind, text = match.lastgroup, match.group()
        if kind in ("comment", "space", "continuation") or (kind == "other" and text.isspace()):
            continue
        if depth == 0 and (kind == "newline" or (kind == "op" and text == ";")):
            if current:
                yield current
            current = []
            continue
        if kind == "newline":
            continue  # inside brackets: the statement goes on
        token = _normal_form(kind, text)
        if token == "S" and current and current[-1] == "S":
            continue  # adjacent literals are one string
        depth = max(0, depth + (text in _OPEN) - (text in _CLOSE))
        current.append(token)
    if current:
        yield current


def normalized_tokens(source: str) -> list[str]:
    """The token stream that :func:`fingerprints` reads (see the module docstring); never fails.
    Each cell (the parts between :data:`CELL_BREAK`) is lexed on its own."""
    out: list[str] = []
    for cell in str(source).split(CELL_BREAK):
        for statement in _statements(cell):
            if tuple(statement) not in _NO_OPS:
                out.extend(statement)
    return out


def _hash(tokens: list[str]) -> int:
    data = " ".join(tokens).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def fingerprints(source: str) -> set[int]:
    """The winnowed k-gram hashes of ``source``."""
    tokens = normalized_tokens(source)
    hashes = [_hash(tokens[i : i + K_GRAM]) for i in range(len(tokens) - K_GRAM + 1)]
    if len(hashes) <= WINDOW:
        return set(hashes)
    return {min(hashes[i : i + WINDOW]) for i in range(len(hashes) - WINDOW + 1)}


@lru_cache(maxsize=1)
def released_cells() -> frozenset[str]:
    """The sources of every code cell the students were given (both languages' notebooks)."""
    return frozenset(cell.source.strip() for path in RELEASED if path.is_file() for cell in from_notebook(path).cells)


def released_fingerprints() -> set[int]:
    """Fingerprints of the code the students were given (each notebook's cells in order): no evidence of copying."""
    found: set[int] = set()
    for path in RELEASED:
        if path.is_file():
            found |= fingerprints(CELL_BREAK.join(cell.source for cell in from_notebook(path).cells))
    return found


def code_of(submission) -> str:
    """A submission's own code (an ``extract.Submission``): its cells in order, separated by
    :data:`CELL_BREAK`, those that are the release's unchanged left out."""
    given = released_cells()
    return CELL_BREAK.join(cell.source for cell in submission.cells if cell.source.strip() not in given)


def shown(code: str) -> str:
    """A record's code as a reader sees it: cells one blank line apart, at most :data:`MAX_CODE_CHARS`."""
    return code.replace(CELL_BREAK, "\n\n")[:MAX_CODE_CHARS]
