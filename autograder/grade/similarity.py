"""Similarity flags for the class report: pairs of submissions whose code is near-identical.

The method is winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003; the method of
MOSS) over a normalized token stream, written here on the standard library's
``tokenize`` rather than taken from a package: the grader never parses student code
into a syntax tree (``docs/sandbox.md``), and the lexer reads it as text, so nothing a
student wrote is compiled or run in the grading process. A maintained implementation
such as ``copydetect`` does the same on top of Pygments; one more dependency in the
grader's process buys nothing here.

* **Normalized tokens**: comments, blank lines and indentation are dropped; every
  identifier becomes ``N``, every number ``0``, every string ``S`` (docstrings too), so
  renaming variables, rewording comments or reformatting changes nothing; keywords and
  operators stay.
* **Fingerprints**: a hash per run of :data:`K_GRAM` tokens; of every :data:`WINDOW`
  consecutive hashes the smallest is kept. Fingerprints of the released notebooks'
  code (the stubs and the given cells) are removed first, so shared starter code is
  never evidence.
* **A flag**: two submissions sharing at least :data:`THRESHOLD` of their fingerprints
  (Jaccard index), each with at least :data:`MIN_FINGERPRINTS` of its own. A fingerprint
  that more than :func:`common_limit` submissions hold is an idiom of the task, not
  evidence, and is not counted (MOSS's ``-m``, default 10, does the same); a ring of
  more copies of one solution than that limit is therefore not flagged.

Flags never change a grade; they point the instructor at code to read side by side.
"""

from __future__ import annotations

import hashlib
import io
import keyword
import tokenize
from pathlib import Path

from autograder.grade.extract import from_notebook

K_GRAM = 12
WINDOW = 8
THRESHOLD = 0.8
MIN_FINGERPRINTS = 20
MAX_CODE_CHARS = 20_000  # code kept per submission for the side-by-side view
REPO = Path(__file__).resolve().parents[2]
RELEASED = tuple(REPO / "release" / f"module05_{lang}" / f"m05_assignment_{lang}.ipynb" for lang in ("en", "ru"))
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}


def normalized_tokens(source: str) -> list[str]:
    """The token stream that :func:`fingerprints` reads (see the module docstring); code
    that stops lexing (an unfinished cell) keeps the tokens before the error."""
    out: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in _SKIP:
                continue
            if token.type == tokenize.NAME:
                out.append(token.string if keyword.iskeyword(token.string) else "N")
            elif token.type == tokenize.NUMBER:
                out.append("0")
            elif token.type == tokenize.STRING or token.type >= tokenize.N_TOKENS:  # f-string parts too
                out.append("S")
            else:
                out.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def fingerprints(source: str) -> set[int]:
    """The winnowed k-gram hashes of ``source``."""
    tokens = normalized_tokens(source)
    hashes = [
        int.from_bytes(hashlib.blake2b(" ".join(tokens[i : i + K_GRAM]).encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
        for i in range(len(tokens) - K_GRAM + 1)
    ]
    if len(hashes) <= WINDOW:
        return set(hashes)
    return {min(hashes[i : i + WINDOW]) for i in range(len(hashes) - WINDOW + 1)}


def common_limit(n: int) -> int:
    """Most submissions a fingerprint may be shared by and still count, in a class of ``n``:
    a fifth of the class, at least 10 and at most 50 (the pairs a fingerprint makes grow
    with the square of its holders: 50 keeps a class of thousands to seconds)."""
    return max(10, min(n // 5, 50))


def released_fingerprints() -> set[int]:
    """Fingerprints of the code the students were given (both languages' notebooks)."""
    found: set[int] = set()
    for path in RELEASED:
        if path.is_file():
            found |= fingerprints("\n".join(cell.source for cell in from_notebook(path).cells))
    return found


def code_of(submission) -> str:
    """A submission's code (an ``extract.Submission``): its cells, in order."""
    return "\n".join(cell.source for cell in submission.cells)


def flag_pairs(records: list[dict], threshold: float = THRESHOLD) -> list[dict]:
    """Pairs of records (each with ``label``, ``score`` and ``fingerprints``, a list of ints)
    at or above ``threshold``, most similar first."""
    sets = [set(r.get("fingerprints") or ()) for r in records]
    limit = common_limit(len(records))
    owned: dict[int, int] = {}
    for prints in sets:
        for p in prints:
            owned[p] = owned.get(p, 0) + 1
    sets = [{p for p in prints if owned[p] <= limit} for prints in sets]
    owners: dict[int, list[int]] = {}
    for i, prints in enumerate(sets):
        if len(prints) >= MIN_FINGERPRINTS:
            for p in prints:
                owners.setdefault(p, []).append(i)
    shared: dict[tuple[int, int], int] = {}
    for members in owners.values():
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                pair = (members[a], members[b])
                shared[pair] = shared.get(pair, 0) + 1
    flags = []
    for (a, b), common in shared.items():
        similarity = common / len(sets[a] | sets[b])
        if similarity >= threshold:
            flags.append(
                {
                    "a": records[a]["label"],
                    "b": records[b]["label"],
                    "similarity": round(similarity, 4),
                    "scores": [records[a]["score"], records[b]["score"]],
                    "code": [records[a].get("code", ""), records[b].get("code", "")],
                }
            )
    return sorted(flags, key=lambda f: (-f["similarity"], f["a"], f["b"]))
