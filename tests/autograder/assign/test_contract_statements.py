"""What the hidden suite grades is stated where students read it, in both languages.

For every kernel: each clause of ``docs/contracts.md`` stands in the docstring of the
released notebook's kernel cell (English words; the Russian notebook holds the Russian
docstring of the same contract), each hidden property that tests a clause is listed
with its points in the kernel's statement cell, every bad input the suite grades is
named by the docstring, and every corner case (B = 0, A = 0, gamma = 0, pi = 0 beside a
non-finite Q, integral float and bool actions, output types) has one stated answer.
"""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, notebook

import reference_impl
from autograder.assign import points
from autograder.hidden.contracts import DOC
from autograder.hidden.kernels import PROPERTIES
from autograder.i18n import contracts_ru

LANGS = ("en", "ru")


def squash(text: str) -> str:
    return " ".join(text.split())


def documented_clauses() -> dict[str, str]:
    """{clause id: quote} from the generated docs/contracts.md (its table rows)."""
    rows = re.findall(r"^\| `([\w.]+)` \| (.*) \| .* \|$", DOC.read_text(encoding="utf-8"), re.M)
    return {cid: quote.replace("\\|", "|") for cid, quote in rows}


def release_cells(lang: str) -> dict[str, str]:
    return {c.id: c.source for c in nbformat.read(notebook("assignment", lang, RELEASE_ROOT), as_version=4).cells}


def docstring(kernel: str, lang: str) -> str:
    english = reference_impl.__dict__[kernel].__doc__
    return squash(english if lang == "en" else contracts_ru.translate_docstring(english, "ru"))


def test_the_contract_table_lists_every_kernel():
    kernels = {cid.split(".")[0] for cid in documented_clauses()}
    assert kernels == set(reference_impl.KERNEL_NAMES)


@pytest.mark.parametrize("lang", LANGS)
def test_every_graded_clause_is_in_the_notebooks_docstring(lang):
    cells = release_cells(lang)
    for cid, quote in documented_clauses().items():
        kernel = cid.split(".")[0]
        cell = squash(cells[f"kernel_{kernel}"])
        assert docstring(kernel, lang) in cell, (lang, kernel)  # the whole contract, in the notebook's language
        if lang == "en":
            assert squash(quote) in cell, cid


@pytest.mark.parametrize("lang", LANGS)
def test_every_property_that_tests_a_clause_is_listed_with_its_points(lang):
    cells = release_cells(lang)
    tested = {p.kernel + "." + p.key: p for p in PROPERTIES}
    for cid in documented_clauses():
        kernel = cid.split(".")[0]
        statement = cells[f"intro_{kernel}"]
        testing = [p for p in tested.values() if cid in p.clauses]
        assert testing, cid
        for prop in testing:
            assert f"- {prop.title[lang]}" in statement and points.hidden_checks(kernel, lang, PROPERTIES) in statement, (cid, prop.key)
    for kernel in reference_impl.KERNEL_NAMES:
        listed = re.findall(r"^- .*: (\d+) (?:points?|балл\w*)$", cells[f"intro_{kernel}"], re.M)
        assert sum(map(int, listed)) == sum(p.points for p in PROPERTIES if p.kernel == kernel) == 10


# What the reference's message says of a bad input -> its kind.
KINDS = [
    (r"must have shape|rows but|must have the shape of", "shape"),
    (r"`gamma` must lie", "gamma"),
    (r"must hold only 0/1", "flags"),
    (r"empty action axis", "axis"),
    (r"no active entry", "no_active"),
    (r"`actions` holds action .* outside", "range"),
    (r"non-integer", "non_integer"),
    (r"`tau` must lie", "tau"),
    (r"is empty", "empty"),
    (r"`counts` must be non-negative", "counts"),
    (r"`radius_scale`", "radius"),
    (r"must be non-negative$", "negative"),
    (r"all-zero row", "zero_row"),
    (r"`threshold_ratio`", "ratio"),
    (r"rows must sum to 1", "sum"),
    (r"`beta`", "beta"),
    (r"`max_weight`", "max_weight"),
]
# (kernel, kind) -> the words naming it in the English and the Russian docstring. A kernel
# whose docstring raises "as dqn_targets" names dqn_targets' cases through it.
NAMED = {
    ("dqn_targets", "shape"): ("wrong shapes", "неверных формах"),
    ("dqn_targets", "gamma"): ("gamma outside [0, 1]", "gamma вне [0, 1]"),
    ("dqn_targets", "flags"): ("non-0/1 flags", "флагах не из 0/1"),
    ("dqn_targets", "axis"): ("an empty action axis", "пустой оси действий"),
    ("double_dqn_targets", "shape"): ("the two tables differ in shape", "формы двух таблиц различаются"),
    ("masked_token_nll", "shape"): ("a shape mismatch", "несовпадении форм"),
    ("masked_token_nll", "flags"): ("non-0/1 mask values", "значениях маски не из 0/1"),
    ("masked_token_nll", "no_active"): ("a mask with no active entry", "маске без единой активной позиции"),
    ("cql_discrete_penalty", "shape"): ("wrong shapes", "неверных формах"),
    ("cql_discrete_penalty", "range"): ("out of range", "выходят за пределы диапазона"),
    ("cql_discrete_penalty", "non_integer"): ("non-integer", "не целые"),
    ("expectile_loss", "tau"): ("tau is not in the open interval (0, 1)", "tau не лежит в открытом интервале (0, 1)"),
    ("expectile_loss", "empty"): ("``diff`` is empty", "``diff`` пуст"),
    ("return_to_go", "shape"): ("a non 1-D", "не одномерный"),
    ("return_to_go", "gamma"): ("gamma outside [0, 1]", "gamma вне [0, 1]"),
    ("pessimistic_values", "shape"): ("a shape mismatch", "несовпадении форм"),
    ("pessimistic_values", "counts"): ("negative or non-finite counts", "отрицательных значениях"),
    ("pessimistic_values", "radius"): ("a negative or non-finite ``radius_scale``", "``radius_scale`` отрицателен"),
    ("behavior_support_mask", "shape"): ("other ranks", "другом числе осей"),
    ("behavior_support_mask", "negative"): ("negative or non-finite entries", "отрицательных элементах"),
    ("behavior_support_mask", "zero_row"): ("an all-zero row", "строке из одних нулей"),
    ("behavior_support_mask", "ratio"): ("``threshold_ratio`` outside [0, 1]", "``threshold_ratio`` вне [0, 1]"),
    ("fqe_targets", "shape"): ("another shape", "другой формы"),
    ("fqe_targets", "negative"): ("negative or non-finite entries", "отрицательные элементы"),
    ("fqe_targets", "zero_row"): ("an all-zero row", "строку из одних нулей"),
    ("fqe_targets", "sum"): (
        "a row whose sum differs from 1 by more than 1e-6",
        "строку, сумма которой отличается от 1 больше чем на 1e-6",
    ),
    ("iql_advantage_weights", "beta"): ("beta is negative or non-finite", "beta отрицательна или равна"),
    ("iql_advantage_weights", "max_weight"): (
        "max_weight is not a finite positive number",
        "max_weight не является конечным положительным числом",
    ),
}
DEFERS = {"en": "as :func:`dqn_targets`", "ru": "в тех же случаях, что и :func:`dqn_targets`"}


def graded_bad_inputs() -> list[tuple[str, str]]:
    """(kernel, kind) of every bad call the hidden suite grades, from the reference's own message."""
    found = []
    for prop in PROPERTIES:
        if prop.key != "bad_input":
            continue
        for call in prop.strategy.elements:
            with pytest.raises(ValueError) as raised:
                getattr(reference_impl, prop.kernel)(*call.args, **call.kwargs)
            text = str(raised.value).split(": ", 1)[1]
            kinds = [kind for pattern, kind in KINDS if re.search(pattern, text)]
            assert kinds, (prop.kernel, text)
            found.append((prop.kernel, kinds[0]))
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_every_graded_bad_input_is_named_by_the_docstring(lang):
    for kernel, kind in graded_bad_inputs():
        own = docstring(kernel, lang)
        key = (kernel, kind) if (kernel, kind) in NAMED else ("dqn_targets", kind)
        assert key in NAMED, (kernel, kind)
        where = own if key[0] == kernel else docstring("dqn_targets", lang)
        if key[0] != kernel:
            assert DEFERS[lang] in own, (kernel, kind)  # it names dqn_targets' cases by reference
        assert NAMED[key][LANGS.index(lang)] in where, (kernel, kind, lang)


# Each corner case and its one answer, in the kernel's docstring (English, Russian).
CORNERS = [
    ("dqn_targets", "gamma = 0", "at any gamma (0 included)", "при любом gamma (и при 0 тоже)"),
    ("dqn_targets", "A = 0 with B = 0", "shape (0, 0) raises", "форма (0, 0) вызывает ValueError"),
    ("behavior_support_mask", "A = 0 with B = 0", "shape (0, 0) raises", "форма (0, 0) вызывает ValueError"),
    ("fqe_targets", "pi = 0 beside a non-finite Q", "also where pi(a | s') = 0", "и там, где pi(a | s') = 0"),
    ("cql_discrete_penalty", "integral float actions", "1.0 is action 1", "1.0 — это действие 1"),
    ("cql_discrete_penalty", "bool actions", "a bool or a fractional float is non-integer", "bool и дробный float — не целые"),
    ("cql_discrete_penalty", "B = 0", "it raises ValueError (not graded", "он вызывает ValueError (не оценивается"),
    ("masked_token_nll", "B = 0", "a mask with no active entry", "маске без единой активной позиции"),
    ("expectile_loss", "B = 0", "``diff`` is empty", "``diff`` пуст"),
    ("dqn_targets", "output type", "-> (B,) float64", "-> (B,) float64"),
    ("double_dqn_targets", "output type", "-> (B,) float64", "-> (B,) float64"),
    ("fqe_targets", "output type", "-> (B,) float64", "-> (B,) float64"),
    ("return_to_go", "output type", "(T,) float64", "(T,) float64"),
    ("pessimistic_values", "output type", "the output (float64)", "у результата (float64)"),
    ("iql_advantage_weights", "output type", "the output (float64)", "у результата (float64)"),
    ("behavior_support_mask", "output type", "-> bool", "-> bool"),
    ("masked_token_nll", "output type", "Returns a float.", "Возвращает float."),
    ("cql_discrete_penalty", "output type", "Returns a float.", "Возвращает float."),
    ("expectile_loss", "output type", "Returns a float.", "Возвращает float."),
]


@pytest.mark.parametrize("kernel, corner, en, ru", CORNERS)
def test_every_corner_has_its_answer_in_both_docstrings(kernel, corner, en, ru):
    assert en in docstring(kernel, "en") and ru in docstring(kernel, "ru")


def test_every_kernel_states_its_output_type():
    assert {kernel for kernel, corner, *_ in CORNERS if corner == "output type"} == set(reference_impl.KERNEL_NAMES)


@pytest.mark.parametrize(
    "lang, rules",
    [
        (
            "en",
            ["float32 or 0-d array result gets full marks", "a bool is not an action", "shape (0, 0) raises", "at any gamma (0 included)"],
        ),
        (
            "ru",
            ["во float32 или массив размерности 0", "bool — не действие", "форма (0, 0) вызывает ValueError", "при любом gamma (и при 0)"],
        ),
    ],
)
def test_part_three_states_the_rules_every_kernel_follows(lang, rules):
    text = squash(release_cells(lang)["part3"])
    for rule in rules:
        assert rule in text, rule


def test_the_corner_answers_are_the_references():
    """What the docstrings promise for the corners is what the reference does."""
    k = reference_impl
    with pytest.raises(ValueError):
        k.dqn_targets([1.0], [0], [[np.inf, 1.0]], gamma=0.0)  # used at gamma = 0
    with pytest.raises(ValueError):
        k.dqn_targets(np.zeros(0), np.zeros(0, bool), np.zeros((0, 0)))  # (0, 0)
    with pytest.raises(ValueError):
        k.behavior_support_mask(np.zeros((0, 0)))
    with pytest.raises(ValueError):
        k.fqe_targets([1.0], [0], [[np.inf, 1.0]], [[0.0, 1.0]])  # pi = 0 beside inf
    assert k.cql_discrete_penalty([1.0, 2.0], 1.0) == k.cql_discrete_penalty([1.0, 2.0], 1)
    with pytest.raises(ValueError):
        k.cql_discrete_penalty([1.0, 2.0], True)
    with pytest.raises(ValueError):
        k.cql_discrete_penalty(np.zeros((0, 2)), np.zeros(0, int))
    assert k.dqn_targets([1.0], [1], [[np.nan]], gamma=0.5).tolist() == [1.0]  # terminal rows are not read
