"""The glossary lint: one Russian term per concept, one English spelling per word.

The terms live in ``docs/glossary.md`` (the single source of truth); this module
parses its tables (:func:`parse_glossary`) and finds forbidden variants in the texts
the project ships (:func:`shipped_texts`, :func:`message_texts`, :func:`lint_text`).

A variant is written in the glossary as a small pattern: ``*`` is any word ending,
``(a|b|)`` lists alternatives (empty = no ending), a space is any whitespace, ``~`` is
any one Russian word, ``\\(`` is a literal parenthesis. It is
matched case-insensitively as a whole word with «ё» folded to «е», so
``возврат*`` finds «Возвратом» and ``зерен`` finds «зёрен».
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import re
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = [
    "GLOSSARY_PATH",
    "REPO_ROOT",
    "Variant",
    "Glossary",
    "Finding",
    "compile_variant",
    "parse_glossary",
    "load_glossary",
    "lint_text",
    "text_blocks",
    "lint_file",
    "shipped_texts",
    "message_texts",
    "lint_messages",
    "MESSAGE_MODULES",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
GLOSSARY_PATH = REPO_ROOT / "docs" / "glossary.md"
LANGUAGES = ("en", "ru")
MAX_FILE_BYTES = 20_000_000  # the largest notebook is ~1 MB; anything bigger is not a course text

# Headings of docs/glossary.md -> what their tables hold.
_RU_TERMS, _CALQUES, _EN_SPELLINGS, _ALLOWED = "Russian terms", "Calques rewritten", "English spellings", "Allowed uses"
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_BACKTICKED = re.compile(r"`([^`]+)`")
_WORD_START, _WORD_END = r"(?<!\w)", r"(?!\w)"  # a variant matches whole words only, all its alternatives


@dataclass(frozen=True)
class Variant:
    """A forbidden way of writing a term, with what to write instead."""

    pattern: str  # as written in the glossary, e.g. "возврат*"
    regex: re.Pattern
    replacement: str  # e.g. "отдача"
    term: str  # the English term, or "calque"
    lang: str  # the language of the texts it is checked in: "ru" or "en"


@dataclass(frozen=True)
class Glossary:
    variants: tuple[Variant, ...]
    allowed: tuple[tuple[re.Pattern, str], ...]  # (span pattern, reason)
    _prefilters: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)  # lang -> any_variant

    def for_lang(self, lang: str) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.lang == lang)

    def any_variant(self, lang: str) -> re.Pattern | None:
        """One regex matching wherever some ``lang`` variant matches (None: the language has none).

        A text it does not match has no finding, so :func:`lint_text` skips the
        variant-by-variant scan for it; the findings are the same, found several times faster.
        """
        if lang not in self._prefilters:
            # Every variant regex is _WORD_START + (?:body) + _WORD_END: one shared boundary
            # around the alternation keeps the regex engine from re-testing it per variant.
            bodies = [v.regex.pattern[len(_WORD_START) : -len(_WORD_END)] for v in self.for_lang(lang)]
            joined = _WORD_START + "(?:" + "|".join(bodies) + ")" + _WORD_END
            self._prefilters[lang] = re.compile(joined, re.IGNORECASE) if bodies else None
        return self._prefilters[lang]


@dataclass(frozen=True)
class Finding:
    """One forbidden variant at one place."""

    location: str  # "path:line" (notebooks: "path cell N line M")
    found: str  # the text as written
    variant: Variant

    def __str__(self) -> str:
        if self.variant.lang == "ru":
            return f"{self.location}: «{self.found}» -> «{self.variant.replacement}» ({self.variant.term})"
        return f"{self.location}: '{self.found}' -> '{self.variant.replacement}'"


def _fold(text: str) -> str:
    """«ё» -> «е» (same length, so match offsets stay valid in the original)."""
    return text.replace("ё", "е").replace("Ё", "Е")


def compile_variant(pattern: str) -> re.Pattern:
    """The whole-word, case-insensitive regex of a glossary pattern (see module docstring).

    Raises ValueError naming ``pattern`` when it is empty or its parentheses do not balance.
    """
    if not pattern.strip():
        raise ValueError("compile_variant: `pattern` is empty")
    parts, escaped = [], False
    folded = _fold(pattern.strip())
    for i, ch in enumerate(folded):
        if ch == " " and "~" in folded[max(i - 1, 0) : i + 2]:
            parts.append(r"[ \t]+")  # beside a Russian word: on the same line (a comment's last word is not prose before code)
            continue
        if escaped:
            parts.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "*":
            parts.append(r"\w*")
        elif ch == " ":
            parts.append(r"\s+")
        elif ch == "~":
            parts.append("[а-яе]+")  # one Russian word (folded: «ё» is «е»)
        elif ch == "(":
            parts.append("(?:")
        elif ch in ")|":
            parts.append(ch)
        else:
            parts.append(re.escape(ch))
    try:
        return re.compile(_WORD_START + "(?:" + "".join(parts) + ")" + _WORD_END, re.IGNORECASE)
    except re.error as error:
        raise ValueError(f"compile_variant: bad `pattern` {pattern!r}: {error}") from None


def _cells(line: str) -> list[str]:
    inner = line.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(inner)]


def _tables(markdown: str) -> dict[str, list[list[str]]]:
    """Body rows of the table under each ``## heading`` (header and rule rows dropped)."""
    tables: dict[str, list[list[str]]] = {}
    heading, seen_rule = None, False
    for line in markdown.splitlines():
        if line.startswith("## "):
            heading, seen_rule = line[3:].strip(), False
            continue
        if heading is None or not line.lstrip().startswith("|"):
            continue
        cells = _cells(line)
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            seen_rule = True
        elif seen_rule:
            tables.setdefault(heading, []).append(cells)
    return tables


def _section(tables: dict[str, list[list[str]]], prefix: str) -> list[list[str]]:
    rows = [rows for heading, rows in tables.items() if heading.startswith(prefix)]
    if len(rows) != 1:
        raise ValueError(f"parse_glossary: expected one table under a heading starting with {prefix!r}, found {len(rows)}")
    return rows[0]


def _variants(cell: str, replacement: str, term: str, lang: str) -> list[Variant]:
    return [Variant(p, compile_variant(p), replacement, term, lang) for p in _BACKTICKED.findall(cell)]


def _unquote(text: str) -> str:
    """The term of a cell: its first «quoted» part when there is one, else the whole cell."""
    quoted = re.search(r"«([^«»]+)»", text)
    return quoted.group(1).strip() if quoted else text.strip()


def parse_glossary(markdown: str) -> Glossary:
    """The variants and allowed spans of a glossary in the format of ``docs/glossary.md``.

    Raises ValueError when a table is missing or a row has too few cells.
    """
    tables = _tables(markdown)
    variants: list[Variant] = []
    for row in _section(tables, _RU_TERMS):
        if len(row) < 3:
            raise ValueError(f"parse_glossary: a Russian-terms row needs 3+ cells, got {row}")
        variants += _variants(row[2], _unquote(row[1]), row[0], "ru")
    for row in _section(tables, _CALQUES):
        variants += _variants(row[0], _unquote(row[1]), "calque", "ru")
    for row in _section(tables, _EN_SPELLINGS):
        variants += _variants(row[1], row[0], row[0], "en")
    allowed = tuple(
        (compile_variant(p), row[1] if len(row) > 1 else "") for row in _section(tables, _ALLOWED) for p in _BACKTICKED.findall(row[0])
    )
    return Glossary(tuple(variants), allowed)


@lru_cache(maxsize=4)
def load_glossary(path: Path = GLOSSARY_PATH) -> Glossary:
    return parse_glossary(Path(path).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ linting text
def lint_text(text: str, lang: str, where: str, glossary: Glossary | None = None, *, first_line: int = 1) -> list[Finding]:
    """Forbidden ``lang`` variants in ``text``; locations are ``where:line``.

    ``first_line`` is the line number of the text's first line in its file. Spans
    matching an allowed pattern of the glossary are skipped.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lint_text: `lang` must be one of {LANGUAGES}, got {lang!r}")
    glossary = load_glossary() if glossary is None else glossary
    folded = _fold(text)
    prefilter = glossary.any_variant(lang)
    if prefilter is None or not prefilter.search(folded):  # blanking allowed spans only removes matches
        return []
    for pattern, _ in glossary.allowed:  # blank allowed spans, keeping offsets
        folded = pattern.sub(lambda m: " " * len(m.group(0)), folded)
    findings = []
    for variant in glossary.for_lang(lang):
        for match in variant.regex.finditer(folded):
            line = first_line + text.count("\n", 0, match.start())
            findings.append(Finding(f"{where}:{line}", text[match.start() : match.end()], variant))
    return sorted(findings, key=lambda f: _line_key(f.location))


def _line_key(location: str) -> tuple:
    head, _, line = location.rpartition(":")
    return (head, int(line) if line.isdigit() else 0)


def _read_text(path: Path) -> str:
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"glossary lint: {path} is not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"glossary lint: {path} is larger than {MAX_FILE_BYTES} bytes")
    return path.read_text(encoding="utf-8")


def _python_strings_and_comments(source: str) -> Iterator[tuple[int, str]]:
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT) or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            yield token.start[0], token.string


def text_blocks(path: Path, lang: str, root: Path = REPO_ROOT) -> Iterator[tuple[str, int, str]]:
    """``(where, first_line, text)`` blocks of a shipped file to lint in ``lang``.

    Markdown: the whole file. Notebooks: each cell (``where`` names the cell; lines
    count inside the cell). Python: the whole file for Russian (a Russian variant can
    only occur in a string or a comment), only string literals and comments for
    English (identifiers are code, not text).
    """
    path = Path(path)
    rel = path.relative_to(root) if path.is_relative_to(root) else path
    text = _read_text(path)
    if path.suffix == ".ipynb":
        for number, cell in enumerate(json.loads(text).get("cells", []), start=1):
            source = cell.get("source", "")
            yield f"{rel} cell {number}", 1, "".join(source) if isinstance(source, list) else str(source)
    elif path.suffix == ".py" and lang == "en":
        for line, string in _python_strings_and_comments(text):
            yield str(rel), line, string
    else:
        yield str(rel), 1, text


def lint_file(path: Path, lang: str, glossary: Glossary | None = None, root: Path = REPO_ROOT) -> list[Finding]:
    """Every forbidden ``lang`` variant in the file at ``path`` (see :func:`text_blocks`)."""
    findings = []
    for where, first, text in text_blocks(path, lang, root):
        findings += lint_text(text, lang, where, glossary, first_line=first)
    return findings


def _files(root: Path, patterns: Iterable[str]) -> list[Path]:
    found = {p for pattern in patterns for p in root.glob(pattern) if p.is_file() and not p.is_symlink()}
    return sorted(found)


# Every text the project ships, by the language it is checked in. Russian variants are
# Cyrillic, so whole Python files can be scanned for them; English spellings are
# checked in documents, notebooks, and the strings and comments of the Python the
# students receive (reference_impl is copied into release/.../m5_student), and the text files
# (TOML) that hold the lab's text and the side studies' report text, whole.
_RU_GLOBS = (
    "source/**/*_ru.ipynb",
    "release/**/*_ru.ipynb",
    "solutions/notebooks/*_ru.ipynb",
    "solutions/templates/ru/*.md",
    "solutions/ru/*.md",
    "solutions/README.md",
    "release/**/README.md",
    "autograder/**/*.py",
    "autograder/**/*.toml",
    "reference_impl/**/*.py",
    "reference_impl/**/*.toml",
    "release/**/*.py",
    "release/**/*.toml",
)
_EN_GLOBS = (
    "source/**/*.ipynb",
    "release/**/*.ipynb",
    "solutions/notebooks/*.ipynb",
    "solutions/templates/en/*.md",
    "solutions/en/*.md",
    "solutions/README.md",
    "release/**/README.md",
    "README.md",
    "docs/*.md",
    "autograder/**/*.py",
    "reference_impl/**/*.py",
    "reference_impl/**/*.toml",
    "release/**/*.py",
    "release/**/*.toml",
)
# The glossary lists the forbidden variants and the lint module quotes a few as examples.
_NOT_LINTED = ("docs/glossary.md", "autograder/i18n/glossary.py")


def shipped_texts(root: Path = REPO_ROOT) -> list[tuple[Path, str]]:
    """``(path, lang)`` for every shipped file and each language it is checked in."""
    skip = {root / p for p in _NOT_LINTED}
    return [(p, lang) for lang, globs in (("ru", _RU_GLOBS), ("en", _EN_GLOBS)) for p in _files(root, globs) if p not in skip]


# ------------------------------------------------------------------ feedback messages
#: Modules whose module-level tables hold student-facing messages keyed by language.
MESSAGE_MODULES = (
    "autograder.grade.judge",
    "autograder.grade.report",
    "autograder.grade.properties",
    "autograder.hidden.kernels",
    "autograder.check.public",
    "autograder.check.kit",
    "reference_impl.validation",
    "reference_impl.lab.labels",
)


def _language_strings(obj, where: str, lang: str | None, depth: int = 0) -> Iterator[tuple[str, str, str]]:
    """``(where, lang, text)`` for each string below a ``{"en": ..., "ru": ...}`` key."""
    if depth > 8:
        return
    if isinstance(obj, str):
        if lang is not None:
            yield where, lang, obj
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from _language_strings(value, f"{where}[{key!r}]", key if key in LANGUAGES else lang, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            yield from _language_strings(value, f"{where}[{index}]", lang, depth + 1)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for field in dataclasses.fields(obj):
            yield from _language_strings(getattr(obj, field.name), f"{where}.{field.name}", lang, depth + 1)


def message_texts(modules: Iterable[str] = MESSAGE_MODULES) -> list[tuple[str, str, str, Path]]:
    """``(where, lang, text, source_file)`` of every message in the modules' UPPERCASE tables.

    Importing the tables (not grepping the files) also sees texts that the source
    splits over several lines or builds from pieces.
    """
    out = []
    for name in modules:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.isupper():
                out += [(w, lang, text, Path(module.__file__)) for w, lang, text in _language_strings(value, f"{name}.{attr}", None)]
    return out


def _locate(source_file: Path, text: str, fallback: str) -> str:
    """``file:line`` of the first line of ``text`` in ``source_file``, else ``fallback``."""
    probe = text.strip().splitlines()[0][:40] if text.strip() else ""
    try:
        lines = source_file.read_text(encoding="utf-8").splitlines()
    except OSError:
        return fallback
    rel = source_file.relative_to(REPO_ROOT) if source_file.is_relative_to(REPO_ROOT) else source_file
    for number, line in enumerate(lines, start=1):
        if probe and probe in line:
            return f"{rel}:{number}"
    return fallback


def lint_messages(modules: Iterable[str] = MESSAGE_MODULES, glossary: Glossary | None = None) -> list[Finding]:
    """Forbidden variants in the imported message tables, located in their source files."""
    findings: dict[tuple[str, str, str], Finding] = {}  # a table may be reachable under two names
    for where, lang, text, source_file in message_texts(modules):
        for f in lint_text(text, lang, where, glossary):
            location = _locate(source_file, text, where)
            f = dataclasses.replace(f, location=location if location != where else f.location)
            findings.setdefault((f.location, f.found, f.variant.pattern), f)
    return list(findings.values())
