"""The lab's text files (reference_impl/lab/text/<lang>.toml) and their reader, reference_impl.lab.text."""

from __future__ import annotations

import string
import tomllib
from pathlib import Path

import pytest

from autograder.assign import release
from reference_impl.cql_sweep import TEXT_FILE as CQL_TEXT_FILE
from reference_impl.lab.labels import LANGUAGES
from reference_impl.lab.text import TEXT_DIR, language_text, text_languages
from reference_impl.maxbias import TEXT_FILE as MAXBIAS_TEXT_FILE

REPO = Path(__file__).resolve().parents[3]


def _fields(template: str | tuple) -> set[str]:
    """The ``{field}`` names a template (or each entry of a row) fills in."""
    parts = template if isinstance(template, tuple) else (template,)
    return {name for part in parts for _, name, _, _ in string.Formatter().parse(part) if name is not None}


def test_every_language_of_the_lab_has_a_text_file():
    assert text_languages() == tuple(sorted(LANGUAGES))


def test_both_languages_hold_the_same_tables_keys_and_fields():
    en, ru = language_text("en"), language_text("ru")
    assert list(en) == list(ru)
    for table in en:
        assert list(en[table]) == list(ru[table]), table  # the same keys, in the same order
        _translated(en[table], ru[table], table)


def test_an_unknown_language_is_refused_by_name():
    with pytest.raises(ValueError, match="'de'"):
        language_text("de")


def test_the_text_is_read_only_and_read_once():
    table = language_text("en")
    assert table is language_text("en")
    with pytest.raises(TypeError):
        table["labels"]["grid_x"] = "changed"  # type: ignore[index]


def test_the_text_files_are_package_data():
    """An installed package reads its text from the files setuptools copies: every text file
    must match a package-data pattern of pyproject.toml."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["reference_impl"]
    package = REPO / "reference_impl"
    text_files = [*TEXT_DIR.glob("*.toml"), CQL_TEXT_FILE, MAXBIAS_TEXT_FILE]
    for path in text_files:
        relative = path.relative_to(package)
        assert any(relative.match(pattern) for pattern in patterns), relative


def test_the_kit_ships_the_lab_text_and_not_the_side_study_text():
    shipped = {path.as_posix() for path in release.shipped_text_files()}
    assert shipped == {f"lab/text/{lang}.toml" for lang in LANGUAGES}
    assert not {"cql_sweep.py", "maxbias.py"} & {path.name for path in release.shipped_modules()}


def _as_row(text: str | list) -> str | tuple:
    """A TOML array of text as the tuple :func:`_fields` reads (a string as is)."""
    return tuple(text) if isinstance(text, list) else text


def _translated(en, ru, where: str) -> None:
    """Every key of ``en`` (a table of text, nested or not) is in ``ru``, and every translation fills
    in the fields its English does."""
    for key, text in en.items():
        assert key in ru, f"{where}.{key}"
        if isinstance(text, dict):
            _translated(text, ru[key], f"{where}.{key}")
        else:
            assert _fields(_as_row(text)) == _fields(_as_row(ru[key])), f"{where}.{key}"


@pytest.mark.parametrize("path", [CQL_TEXT_FILE, MAXBIAS_TEXT_FILE], ids=lambda p: p.name)
def test_every_english_text_of_the_side_studies_has_its_russian(path):
    """(A Russian-only key is allowed: the English maximization-bias report takes its criterion
    sentence from the run's JSON, the Russian one from ``text.crit``.)"""
    tables = tomllib.loads(path.read_text(encoding="utf-8"))
    assert list(tables) == ["en", "ru"]
    _translated(tables["en"], tables["ru"], path.name)
