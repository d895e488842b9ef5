"""The lab's text in each language, read from the data files beside this module (``text/<lang>.toml``).

Every sentence, label and name the lab shows lives in those files, one per language with the
same tables and keys: ``labels`` (figure and notebook text), ``names`` (display names of raw
method, action and outcome names), ``report`` (the ``m5 lab`` report's phrases), ``design``
(what each section's settings were chosen from), ``side_studies`` (the side studies' tables)
and ``claims`` / ``claim_families`` (the claims' text). Python modules look strings up by key;
``{field}`` placeholders are filled where the text is used. The files are package data, so an
installed package (and the student kit, which ships them) reads the same text.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from types import MappingProxyType

__all__ = ["TEXT_DIR", "language_text", "text_languages"]

TEXT_DIR = Path(__file__).resolve().parent / "text"


def text_languages() -> tuple[str, ...]:
    """The languages that have a text file, sorted."""
    return tuple(sorted(path.stem for path in TEXT_DIR.glob("*.toml")))


@functools.cache
def language_text(lang: str) -> MappingProxyType:
    """The tables of ``text/<lang>.toml`` (read once, read-only; arrays become tuples).

    Raises ValueError naming ``lang`` when there is no such file.
    """
    path = TEXT_DIR / f"{lang}.toml"
    if lang not in text_languages():
        raise ValueError(f"language_text: no text file for {lang!r} (have {text_languages()})")
    with path.open("rb") as handle:
        tables = tomllib.load(handle)
    return MappingProxyType({name: MappingProxyType(_tuples(table)) for name, table in tables.items()})


def _tuples(table: dict) -> dict:
    """``table`` with its arrays as tuples (the tables' callers treat them as fixed rows)."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in table.items()}
