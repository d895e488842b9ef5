"""The glossary (docs/glossary.md) and its lint over every text the project ships."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.i18n import glossary as g

GLOSSARY = g.load_glossary()

# Files whose findings are reported as a warning instead of failing, while the file's
# owner fixes them in a later change (file -> who and why). Empty: every shipped text
# passes. test_pending_list_is_not_stale keeps any entry honest.
PENDING_OTHER_OWNERS: dict[str, str] = {}


def _file_of(finding: g.Finding) -> str:
    return finding.location.split(":")[0].split(" cell ")[0]


@pytest.fixture(scope="module")
def shipped_findings() -> list[g.Finding]:
    findings = []
    for path, lang in g.shipped_texts():
        findings += g.lint_file(path, lang)
    return findings + g.lint_messages()


# ------------------------------------------------------------------ the pattern language
@pytest.mark.parametrize(
    "pattern, text, hits",
    [
        ("возврат*", "Средний возврат и возвратом", ["возврат", "возвратом"]),
        ("возврат*", "функция возвращает массив", []),  # the verb is fine
        ("доход(|а|у|ом)", "доход, дохода; агент доходит до цели", ["доход", "дохода"]),
        ("зерен", "пять зёрен", ["зёрен"]),  # ё and е are one letter
        ("оставш* наград*", "Оставшаяся\nнаграда", ["Оставшаяся\nнаграда"]),  # a phrase across a line break
        ("behaviour*", "Behaviour, behaviours, p_behaviour", ["Behaviour", "behaviours"]),
        ("labelled", "relabelled labelled", ["labelled"]),
    ],
)
def test_variant_patterns_match_whole_words_case_insensitively(pattern, text, hits):
    regex = g.compile_variant(pattern)
    assert [m.group(0) for m in regex.finditer(g._fold(text))] == [g._fold(h) for h in hits]


@pytest.mark.parametrize("bad", ["", "   ", "доход(а|у"])
def test_bad_patterns_are_rejected_with_the_pattern_named(bad):
    with pytest.raises(ValueError, match="pattern"):
        g.compile_variant(bad)


# ------------------------------------------------------------------ the glossary itself
@pytest.mark.parametrize(
    "text, found",
    [
        ("по всем seed", ["всем seed"]),
        ("парных seed: 10", ["парных seed"]),
        ("seed этого прогона", ["seed этого"]),
        ("10 запусков (seed 0–9)", []),
        ("параметр `seed` функции", []),
        ("# ваши ядра\nSEEDS = load()", []),  # a comment's last word, then a line of code
        ("for every seed of the run", []),  # English prose
    ],
)
def test_an_undeclined_seed_in_russian_prose_is_found(text, found):
    assert [f.found for f in g.lint_text(text, "ru", "t") if "seed" in f.variant.pattern] == found


def test_glossary_fixes_the_terms_the_course_agreed_on():
    ru = {v.term: v.replacement for v in GLOSSARY.for_lang("ru") if v.term != "calque"}
    assert ru["return"] == "отдача"
    assert ru["return-to-go"] == "оставшаяся отдача (return-to-go)"
    assert ru["padding"] == "дополнение (padding)"
    assert ru["unseen (action)"] == "ненаблюдавшийся"
    assert ru["seed (one independent run of an experiment)"] == "запуск"
    assert ru["bootstrap"] == "бутстрэп" and ru["notebook"] == "ноутбук"
    assert ru["lab"] == "лабораторная работа" and ru["truncated"] == "усечённый"
    forbidden = {v.pattern for v in GLOSSARY.for_lang("ru")}
    assert {"возврат*", "выравнива*", "невидан*", "бутстрап*", "блокнот*", "практикум*", "бэкап*"} <= forbidden
    assert {v.replacement for v in GLOSSARY.for_lang("en")} >= {"behavior", "regularizer"}


def test_each_english_term_has_one_russian_term():
    seen: dict[str, str] = {}
    for v in GLOSSARY.for_lang("ru"):
        if v.term != "calque":
            assert seen.setdefault(v.term, v.replacement) == v.replacement, v.term


def test_no_replacement_is_itself_forbidden():
    for lang in ("ru", "en"):
        for v in GLOSSARY.for_lang(lang):
            assert not g.lint_text(v.replacement, lang, "glossary"), (v.pattern, v.replacement)


def test_glossary_without_a_table_is_rejected():
    with pytest.raises(ValueError, match="Russian terms"):
        g.parse_glossary("# Glossary\n\n## Calques rewritten\n\n| a | b |\n|---|---|\n| `x` | y |\n")


def test_allowed_spans_are_not_reported():
    assert g.lint_text("выравнивание (alignment) модели", "ru", "t") == []
    assert g.lint_text("выравнивание (padding)", "ru", "t")


def _lint_variant_by_variant(text: str, lang: str) -> list[tuple[int, str, str]]:
    """What lint_text must find, without its one-regex prefilter: every variant scanned alone."""
    folded = g._fold(text)
    for pattern, _ in GLOSSARY.allowed:
        folded = pattern.sub(lambda m: " " * len(m.group(0)), folded)
    found = [(m.start(), text[m.start() : m.end()], v.pattern) for v in GLOSSARY.for_lang(lang) for m in v.regex.finditer(folded)]
    return sorted(found)


# Words near the glossary's variants (their literal parts, endings, ё, case, glue), so
# that generated texts hit variants, miss them narrowly, and touch allowed spans.
_PIECES = sorted(
    {piece for v in GLOSSARY.variants for piece in re.split(r"[*()| \\]", v.pattern) if piece}
    | {"ом", "а", "ы", "ё", "Ё", "ing", "s", "_", "-", " ", "\n", "(", ")", "alignment", "padding", "Возврат"}
)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.sampled_from(g.LANGUAGES), st.booleans())
def test_the_prefilter_never_changes_what_the_lint_finds(pieces, lang, upper):
    text = "".join(pieces)
    text = text.upper() if upper else text
    findings = g.lint_text(text, lang, "t", GLOSSARY)
    assert sorted((text.find(f.found), f.found, f.variant.pattern) for f in findings) == sorted(
        (text.find(found), found, pattern) for _, found, pattern in _lint_variant_by_variant(text, lang)
    )


def test_a_pattern_with_alternatives_matches_each_as_a_whole_word():
    regex = g.compile_variant("foo|bar")
    assert [m.group(0) for m in regex.finditer("foo bar foobar barfoo")] == ["foo", "bar"]


# ------------------------------------------------------------------ reporting
def test_a_finding_names_the_file_line_variant_and_replacement():
    [finding] = g.lint_text("первая строка\nсредний Возврат за эпизод", "ru", "docs/x.md")
    assert str(finding) == "docs/x.md:2: «Возврат» -> «отдача» (return)"
    [english] = g.lint_text("a\nb\nthe behaviour policy", "en", "docs/y.md", first_line=10)
    assert str(english) == "docs/y.md:12: 'behaviour' -> 'behavior'"


def test_notebook_cells_and_python_strings_are_located(tmp_path):
    nb = {
        "cells": [{"cell_type": "markdown", "source": ["Ноутбук\n", "и блокнот"]}, {"cell_type": "code", "source": "x = 1  # behaviour\n"}],
        "metadata": {},
    }
    path = tmp_path / "m_ru.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    assert [str(f) for f in g.lint_file(path, "ru", root=tmp_path)] == ["m_ru.ipynb cell 1:2: «блокнот» -> «ноутбук» (notebook)"]
    assert [f.location for f in g.lint_file(path, "en", root=tmp_path)] == ["m_ru.ipynb cell 2:1"]
    module = tmp_path / "m.py"
    module.write_text('behaviour_net = 1\nMSG = "the behaviour policy"  # regulariser\n', encoding="utf-8")
    # identifiers are code, not text: only the string and the comment are English text
    assert [f.found for f in g.lint_file(module, "en", root=tmp_path)] == ["behaviour", "regulariser"]


def test_the_lint_refuses_symlinks_and_huge_files(tmp_path):
    real = tmp_path / "a.md"
    real.write_text("отдача", encoding="utf-8")
    link = tmp_path / "b.md"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="regular file"):
        g.lint_file(link, "ru", root=tmp_path)


# ------------------------------------------------------------------ what is scanned
def test_every_kind_of_shipped_text_is_scanned():
    scanned = {(str(p.relative_to(g.REPO_ROOT)), lang) for p, lang in g.shipped_texts()}
    for expected in [
        ("source/module05_ru/m05_assignment_ru.ipynb", "ru"),
        ("source/module05_ru/m05_lab_ru.ipynb", "ru"),
        ("solutions/notebooks/m05_assignment_ru.ipynb", "ru"),
        ("solutions/templates/ru/15-return-to-go.md", "ru"),
        ("solutions/ru/15-return-to-go.md", "ru"),
        ("reference_impl/lab/labels.py", "ru"),
        ("reference_impl/lab/cli.py", "ru"),
        ("autograder/grade/judge.py", "ru"),
        ("autograder/grade/report.py", "ru"),
        ("autograder/hidden/kernels.py", "ru"),
        ("source/module05_en/m05_assignment_en.ipynb", "en"),
        ("solutions/templates/en/15-return-to-go.md", "en"),
        ("README.md", "en"),
        ("reference_impl/lab/labels.py", "en"),
        ("release/module05_en/m5_student/kernels.py", "en"),
    ]:
        assert expected in scanned, expected
    assert ("docs/glossary.md", "en") not in scanned  # it lists the forbidden variants on purpose


def test_feedback_message_tables_are_collected_by_import():
    texts = g.message_texts()
    for module in g.MESSAGE_MODULES:
        langs = {lang for where, lang, _, _ in texts if where.startswith(module + ".")}
        assert langs == {"en", "ru"}, module  # every table holds both languages
    assert any(where.startswith("autograder.grade.judge.LOST") and lang == "ru" for where, lang, _, _ in texts)
    assert any(where.startswith("autograder.hidden.kernels.PROPERTIES") and ".hint" in where for where, _, _, _ in texts)


def test_the_lab_report_text_is_linted_in_both_languages():
    from reference_impl.lab.labels import LABELS

    for lang in ("en", "ru"):
        report_texts = [v for k, v in LABELS[lang].items() if k.startswith("report.")]
        assert report_texts and not [str(f) for t in report_texts for f in g.lint_text(t, lang, "labels")]


# ------------------------------------------------------------------ the lint itself
def test_no_forbidden_variant_in_any_shipped_text(shipped_findings):
    pending = [f for f in shipped_findings if _file_of(f) in PENDING_OTHER_OWNERS]
    failing = [f for f in shipped_findings if _file_of(f) not in PENDING_OTHER_OWNERS]
    if pending:
        warnings.warn("glossary lint, files pending their owners' fixes:\n" + "\n".join(sorted(map(str, pending))), stacklevel=1)
    assert not failing, "forbidden variants (see docs/glossary.md):\n" + "\n".join(map(str, failing))


def test_pending_list_is_not_stale(shipped_findings):
    files_with_findings = {_file_of(f) for f in shipped_findings}
    clean = sorted(set(PENDING_OTHER_OWNERS) - files_with_findings)
    assert not clean, f"now clean, remove from PENDING_OTHER_OWNERS: {clean}"


# ------------------------------------------------------------------ the student kit's messages
KIT_MESSAGE_MODULES = ("autograder.check.public", "autograder.check.kit", "reference_impl.validation")


def test_the_kits_messages_are_linted_and_pass():
    """The self-check's reports (public checks, the notebook check) and the input errors of
    ``m5_student.validation`` are student-facing texts too."""
    assert set(KIT_MESSAGE_MODULES) <= set(g.MESSAGE_MODULES)
    texts = [t for t in g.message_texts(KIT_MESSAGE_MODULES) if t[1] == "ru"]
    assert {t[3].name for t in texts} == {"public.py", "kit.py", "validation.py"}
    assert [str(f) for f in g.lint_messages(KIT_MESSAGE_MODULES, GLOSSARY)] == []


def test_the_online_table_has_one_russian_name_in_the_kit():
    """The notebook and the contracts say «онлайн-таблица»; the self-check said «основная»."""
    assert "| online network / table (Double DQN) | онлайн-сеть, онлайн-таблица |" in g.GLOSSARY_PATH.read_text(encoding="utf-8")
    texts = " ".join(t[2] for t in g.message_texts(KIT_MESSAGE_MODULES) if t[1] == "ru")
    assert "онлайн-таблиц" in texts and "основн" not in texts
