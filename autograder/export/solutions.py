"""Worked solutions: Markdown generation from templates and the HTML release bundle.

All rendering logic lives here.

1. **Markdown.** ``solutions/templates/{en,ru}/NN-slug.md`` hold the worked answers
   with placeholders; :func:`render_markdown` fills them from
   :func:`reference_impl.exercises.inputs` / :func:`~reference_impl.exercises.answers`
   and :func:`write_markdown` writes ``solutions/{en,ru}/NN-slug.md`` (run
   ``python solutions/build.py``). A number in a worked answer is therefore computed
   by ``reference_impl``, never typed twice. Citations are placeholders too:
   ``{{ cite_KEY }}`` renders "Author et al., YEAR" from :data:`REFERENCES` and
   ``{{ references }}`` the full entries of the works the template cites.

   Placeholder syntax: ``{{ name }}`` or ``{{ name:spec }}``. ``name`` is an input or
   answer key of the exercise, optionally indexed (``targets[1]``); ``n`` is the
   exercise number. ``spec`` is a Python format spec applied to every element (a list
   renders as ``a, b, c``), or ``frac`` for an exact small fraction (``7/3``).
   ``-inf`` renders as ``-\\infty`` (placeholders with infinities belong in math).

2. **HTML bundle.** :func:`build_solution_bundle` renders the Markdown to standalone
   HTML pages (formulas converted to MathML by ``latex2mathml``, so nothing is
   fetched from the network) and converts executed solution notebooks with nbconvert
   after :func:`strip_hidden_tests` removed every hidden test.
"""

from __future__ import annotations

import copy
import html
import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from autograder.i18n.references import citation_values
from reference_impl import exercises

REPO_ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS_DIR = REPO_ROOT / "solutions"
TEMPLATES_DIR = SOLUTIONS_DIR / "templates"
LANGUAGES = ("en", "ru")

SLUGS: dict[int, str] = {
    1: "sft-as-behavior-cloning",
    2: "compounding-error",
    3: "interactive-feedback",
    4: "off-policy-vs-offline",
    5: "target-network-vs-reference-policy",
    6: "non-identifiability",
    7: "offline-mechanisms",
    8: "fixed-data-objectives",
    9: "masked-token-nll",
    10: "compounding-regret",
    11: "dqn-terminal-mask",
    12: "double-dqn",
    13: "cql-penalty",
    14: "expectile-loss",
    15: "return-to-go",
    16: "code-dqn-targets",
    17: "code-pessimistic-values",
}

# Numbers allowed in the rendered text without a placeholder. Structural constants of
# formulas (0, 1, 2: indices, "1 - gamma", squares) are allowed everywhere; anything
# else must be listed here with its reason, per exercise.
STRUCTURAL_NUMBERS = frozenset({"0", "1", "2"})
ALLOWED_NUMBERS: dict[int, dict[str, str]] = {
    1: {},
    2: {},
    3: {},
    4: {},
    5: {},
    6: {},
    7: {"3": "TD3 is part of a method name", "4": "the options of the matching list are numbered 1-4"},
    8: {},
    9: {},
    10: {"3": "the exponent in eps^2 T^3 (order of the neglected term)"},
    11: {},
    12: {},
    13: {},
    14: {},
    15: {},
    16: {},
    17: {},
}

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?\s*(?::\s*([^}]*?))?\s*\}\}")
# A stated number: digits not glued to a word, a backslash command or a subscript.
NUMBER = re.compile(r"(?<![A-Za-z_\\\d.])\d+(?:\.\d+)?")
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)


def template_path(number: int, lang: str) -> Path:
    return TEMPLATES_DIR / _check_lang(lang) / f"{number:02d}-{SLUGS[_check_number(number)]}.md"


def markdown_path(number: int, lang: str, root: Path = SOLUTIONS_DIR) -> Path:
    return Path(root) / _check_lang(lang) / f"{number:02d}-{SLUGS[_check_number(number)]}.md"


def _check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"`lang` must be one of {LANGUAGES}, got {lang!r}")
    return lang


def _check_number(number: int) -> int:
    if number not in SLUGS:
        raise ValueError(f"`number` must be an exercise number 1-17, got {number!r}")
    return number


# ------------------------------------------------------------------ Markdown
def exercise_values(number: int) -> dict[str, Any]:
    """The placeholder namespace of an exercise: its number, inputs and answers."""
    values: dict[str, Any] = {"n": _check_number(number)}
    if number in exercises.NUMERICAL or number in exercises.CODE_EXAMPLES:
        given, computed = exercises.inputs(number), exercises.answers(number)
        clash = set(given) & set(computed)
        if clash:  # a placeholder must name one thing
            raise ValueError(f"exercise_values: exercise {number} uses {sorted(clash)} both as input and answer")
        values.update(given)
        values.update(computed)
    return values


def format_value(value: Any, spec: str = "") -> str:
    """Format a number or a sequence of numbers (joined by ", ") for a template."""
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(item, spec) for item in value)
    if isinstance(value, str):
        return value
    x = float(value)
    if math.isinf(x):
        return "-\\infty" if x < 0 else "\\infty"
    if spec == "frac":
        fraction = Fraction(x).limit_denominator(1000)
        if abs(float(fraction) - x) > 1e-9:
            raise ValueError(f"format_value: {x!r} is not a small fraction")
        return str(fraction)
    if isinstance(value, int) and not spec:
        return str(value)
    return format(x, spec or "g")


def render_template(text: str, values: dict[str, Any]) -> tuple[str, list[str]]:
    """Fill the placeholders of ``text``; return the text and the substituted strings.

    Raises ValueError naming an unknown placeholder or an index out of range.
    """
    substituted: list[str] = []

    def fill(match: re.Match) -> str:
        name, index, spec = match.group(1), match.group(2), match.group(3) or ""
        if name not in values:
            raise ValueError(f"render_template: unknown placeholder `{name}` (known: {sorted(values)})")
        value = values[name]
        if index is not None:
            if not isinstance(value, (list, tuple)) or int(index) >= len(value):
                raise ValueError(f"render_template: `{name}[{index}]` is out of range")
            value = value[int(index)]
        out = format_value(value, spec.strip())
        substituted.append(out)
        return out

    return PLACEHOLDER.sub(fill, text), substituted


def template_values(number: int, lang: str, template_text: str | None = None) -> dict[str, Any]:
    """Every placeholder value of exercise ``number``'s template in ``lang``."""
    text = template_path(number, lang).read_text(encoding="utf-8") if template_text is None else template_text
    return {**exercise_values(number), **citation_values(text, lang)}


def render_markdown(number: int, lang: str) -> str:
    """The worked solution of exercise ``number`` in ``lang`` (Markdown text)."""
    text = template_path(number, lang).read_text(encoding="utf-8")
    rendered, _ = render_template(text, template_values(number, lang, text))
    return rendered


# Why each choice in exercises.CHOSEN_INPUTS was needed (the closing note).
CHOSEN_NOTES: dict[int, dict[str, str]] = {
    9: {
        "en": (
            "the key pins six positions and the three active log-probs; the prompt log-probs, the padding value and the layout are chosen"
        ),
        "ru": (
            "ключ фиксирует шесть позиций и три активных логарифма вероятностей; "
            "логарифмы для запроса, значение дополнения (padding) и порядок позиций выбраны"
        ),
    },
    10: {
        "en": "the cost model is chosen: every step from the first error on costs 1 and errors are never undone (q and T are pinned)",
        "ru": "выбрана модель стоимости: каждый шаг начиная с первой ошибки стоит 1, ошибки не исправляются (q и T зафиксированы)",
    },
    11: {
        "en": (
            "the key pins the next-state maxima and the terminal second transition; "
            "rewards, gamma, the full table and the truncated third transition are chosen"
        ),
        "ru": (
            "ключ фиксирует максимумы в следующих состояниях и терминальность второго перехода; "
            "награды, gamma, таблица целиком и усечённый третий переход выбраны"
        ),
    },
    12: {
        "en": (
            "the key pins the maxima, the online argmax and the evaluated values; "
            "zero rewards, gamma and both tables are chosen to produce them"
        ),
        "ru": (
            "ключ фиксирует максимумы, argmax онлайн-сети и оценённые значения; "
            "нулевые награды, gamma и обе таблицы выбраны так, чтобы их получить"
        ),
    },
    14: {
        "en": "the key pins tau and the sign pattern of the residuals (one negative, two positive); Q and V are chosen",
        "ru": "ключ фиксирует tau и знаки остатков (один отрицательный, два положительных); Q и V выбраны",
    },
    16: {
        "en": "the lab's dqn_targets call is pinned; the online table of the Double DQN example (with a tie) is chosen",
        "ru": "вызов dqn_targets из лабораторной зафиксирован; таблица онлайн-сети для примера Double DQN (с равенством) выбрана",
    },
}

_README_TEXT = {
    "en": (
        "Worked solutions",
        "Exercise",
        "One Markdown file per exercise and language: `en/NN-slug.md`, `ru/NN-slug.md` (1-8 conceptual, "
        "9-15 numerical, 16-17 code). They are generated from `templates/` by `python solutions/build.py`; "
        "every number comes from `reference_impl.exercises` and every citation from `REFERENCES` in "
        "`autograder/i18n/references.py`, so edit the templates, never the output.",
        "Notes for instructors: inputs the answer key leaves open, and where the answers depart from it",
        "The module's answer key gives answers without questions. Where it does not fix an input, the question "
        "here chooses one; every figure the key pins is kept. Exercise 7 departs from the key on purpose: the key "
        "says a too-strong CQL penalty undervalues good actions, while the worked answer shows (from the gradient "
        "of the penalty) that a large weight ranks actions by how often the log took them, so the greedy policy "
        "copies the log's most frequent action, good or bad; it also states CQL's guarantee as the paper proves "
        "it (a lower bound in expectation over the data's states). Grade an answer that follows the key's "
        "wording by its reasoning.",
    ),
    "ru": (
        "Разобранные решения",
        "Упражнение",
        "По одному файлу Markdown на упражнение и язык: `en/NN-slug.md`, `ru/NN-slug.md` (1-8 — концептуальные, "
        "9-15 — вычислительные, 16-17 — на код). Они порождаются из `templates/` командой `python solutions/build.py`; "
        "все числа берутся из `reference_impl.exercises`, а ссылки на литературу — из `REFERENCES` в "
        "`autograder/i18n/references.py`, поэтому правьте шаблоны, а не результат.",
        "Замечания для преподавателей: входные данные, которые ключ оставляет открытыми, и где ответы расходятся с ним",
        "Ключ ответов модуля содержит ответы без условий. Где он не фиксирует входные данные, условие здесь их "
        "выбирает; все числа, зафиксированные ключом, сохранены. Упражнение 7 расходится с ключом намеренно: по "
        "ключу слишком сильный штраф CQL недооценивает хорошие действия, а разобранный ответ показывает (по "
        "градиенту штрафа), что большой вес ранжирует действия по частоте в журнале, и жадная политика копирует "
        "самое частое действие журнала, хорошее или плохое; гарантия CQL там же сформулирована так, как её "
        "доказывает статья (нижняя граница в среднем по состояниям данных). Ответ, следующий формулировке "
        "ключа, оценивайте по рассуждению.",
    ),
}


def _literal(value: Any) -> str:
    """A nested sequence as a readable literal: ((0.7, 0.7), (5, 1))."""
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_literal(v) for v in value) + ")"
    return format_value(value)


def render_readme() -> str:
    """``solutions/README.md``: layout, how to rebuild, and the closing note in both languages."""
    parts = []
    for lang in LANGUAGES:
        heading, word, layout, note_heading, note_intro = _README_TEXT[lang]
        parts += [f"# {heading}", "", layout, "", f"## {note_heading}", "", note_intro, ""]
        for number, keys in exercises.CHOSEN_INPUTS.items():
            values = "; ".join(f"`{key}` = {_literal(exercises.inputs(number)[key])}" for key in keys)
            parts.append(f"- {word} {number}: {CHOSEN_NOTES[number][lang]}" + (f" ({values})." if values else "."))
        parts.append("")
    return "\n".join(parts)


def write_markdown(root: Path = SOLUTIONS_DIR, langs: tuple[str, ...] = LANGUAGES) -> list[Path]:
    """Regenerate ``root/{lang}/NN-slug.md`` for every exercise and ``root/README.md``."""
    readme = Path(root) / "README.md"
    readme.parent.mkdir(parents=True, exist_ok=True)
    readme.write_text(render_readme(), encoding="utf-8")
    written = [readme]
    for lang in langs:
        for number in SLUGS:
            path = markdown_path(number, lang, root)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_markdown(number, lang), encoding="utf-8")
            written.append(path)
    return written


def unverified_numbers(number: int, lang: str) -> list[str]:
    """Numbers typed in a template outside placeholders and code, not on the allowlist."""
    return unverified_numbers_in(template_path(number, lang).read_text(encoding="utf-8"), number)


def stated_numbers(text: str) -> list[str]:
    """The numbers a reader sees in ``text`` outside code (see :data:`NUMBER`)."""
    text = FENCE.sub(" ", text)
    text = re.sub(r"`[^`\n]*`", " ", text)
    return NUMBER.findall(text)


def unverified_numbers_in(template_text: str, number: int) -> list[str]:
    """Numbers in ``template_text`` that neither a placeholder nor the allowlist covers.

    Code blocks and code spans are skipped: exercises 16-17 are checked by executing
    their code instead.
    """
    text = template_text
    text = FENCE.sub(" ", text)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = PLACEHOLDER.sub(" ", text)
    allowed = STRUCTURAL_NUMBERS | set(ALLOWED_NUMBERS[number])
    return [m.group(0) for m in NUMBER.finditer(text) if m.group(0) not in allowed]


def code_blocks(markdown_text: str, language: str = "python") -> list[str]:
    """The fenced code blocks of ``markdown_text`` in ``language``, in order."""
    pattern = re.compile(rf"^```{language}[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
    return [m.group(1) for m in pattern.finditer(markdown_text)]


def title(markdown_text: str) -> str:
    """The first level-1 heading of a Markdown document, without the '# '."""
    for line in markdown_text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError("title: the document has no level-1 heading")


# ------------------------------------------------------------------ HTML
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 46rem;
       margin: 2rem auto; padding: 0 1rem; line-height: 1.55; color: #1f2328; }
h1 { font-size: 1.6rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
h2 { font-size: 1.25rem; margin-top: 1.8rem; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .9em; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; border-radius: 6px; }
math[display="block"] { margin: .8rem 0; }
nav { font-size: .9rem; margin-bottom: 1rem; }
ol.exercises li { margin: .2rem 0; }
"""

_UI = {
    "en": {
        "index": "Module 5: worked solutions",
        "back": "All exercises",
        "notebooks": "Solution notebooks",
        "bundle": "Module 5: solution release",
    },
    "ru": {
        "index": "Модуль 5: разобранные решения",
        "back": "Все упражнения",
        "notebooks": "Ноутбуки с решениями",
        "bundle": "Модуль 5: решения для студентов",
    },
}


# ---- typography of the converted formulas (latex2mathml output, MathML Core renderers)
_MINUS = "<mo>&#x02212;</mo>"
# A minus is unary when nothing precedes it in its row, or an opening bracket, a comma,
# a relation or another operator does: "(−1, 1, 2)", "= −∑", "[−1, 1]".
_UNARY_AFTER = re.compile(
    r"(<mrow>|<math[^>]*>|<mo[^>]*>(?:&#x00028;|&#x0005B;|&#x0007B;|&#x0002C;|&#x0003D;|&#x0003C;|&#x0003E;|&#x02264;"
    r"|&#x02265;|&#x02248;|&#x0002B;|&#x02212;|&#x000B7;|&#x000D7;|&#x02208;)</mo>)" + re.escape(_MINUS)
)
_NEGATIVE_NUMBER = re.compile(r"<mo lspace=\"0\" rspace=\"0\">&#x02212;</mo><mn>([^<]*)</mn>")
# Function names latex2mathml leaves as plain identifiers, glued to what follows.
_FUNCTION = re.compile(r"<mi>(exp|log|ln|sin|cos|tanh|det)</mi>")
_OPENING = re.compile(r"<mo[^>]*>&#x00028;</mo>")
_BIG_OPERATOR = re.compile(r"<mo>(&#x02211;|&#x0220F;|&#x0222B;)</mo>")


def polish_mathml(mathml: str, display: bool) -> str:
    """Typeset a latex2mathml formula the way LaTeX would.

    * ``\\exp``, ``\\log`` ... become upright function names followed by the invisible
      function-application operator and, unless a parenthesis follows, a thin space
      (``exp Q`` instead of ``expQ``);
    * a unary minus gets no space around it, and joins a following number: ``(−1, 1, 2)``
      instead of ``( − 1, 1, 2)``;
    * in a display formula, sums, products and integrals are display-size operators
      (``largeop``, ``displaystyle``).
    """
    mathml = _UNARY_AFTER.sub(lambda m: m.group(1) + '<mo lspace="0" rspace="0">&#x02212;</mo>', mathml)
    mathml = _UNARY_AFTER.sub(lambda m: m.group(1) + '<mo lspace="0" rspace="0">&#x02212;</mo>', mathml)  # "−−1"
    mathml = _NEGATIVE_NUMBER.sub(lambda m: f"<mn>&#x02212;{m.group(1)}</mn>", mathml)

    def function(match: re.Match) -> str:
        spaced = not _OPENING.match(match.string, match.end())  # TeX: "log(x)" unspaced, "exp Q" thin space
        return f'<mi mathvariant="normal">{match.group(1)}</mi><mo>&#x02061;</mo>' + (
            '<mspace width="0.1667em"></mspace>' if spaced else ""
        )

    mathml = _FUNCTION.sub(function, mathml)
    if display:
        mathml = _BIG_OPERATOR.sub(r'<mo largeop="true" movablelimits="false">\1</mo>', mathml)
        mathml = mathml.replace('display="block">', 'display="block" displaystyle="true">', 1)
    return mathml


def _protect_math(markdown_text: str, protected: dict[str, str]) -> str:
    """Replace each $...$ / $$...$$ formula by a token; store its MathML in ``protected``.

    Code spans and fenced blocks are skipped (a ``$`` there is not math). Tokens are
    plain words, so Markdown leaves them alone; :func:`_restore_math` puts MathML back.
    """
    from latex2mathml.converter import convert  # formulas only (the Markdown pages need none)

    code_tokens: dict[str, str] = {}

    def hide_code(match: re.Match) -> str:
        token = f"M5CODE{len(code_tokens)}X"
        code_tokens[token] = match.group(0)
        return token

    def to_mathml(match: re.Match) -> str:
        display = match.group(1) is not None
        latex = (match.group(1) if display else match.group(2)).strip()
        token = f"M5TOKEN{len(protected)}X"
        protected[token] = polish_mathml(convert(latex, display="block" if display else "inline"), display)
        return token

    text = _MATH.sub(to_mathml, _INLINE_CODE.sub(hide_code, FENCE.sub(hide_code, markdown_text)))
    for token, code in reversed(code_tokens.items()):  # inner tokens were made last
        text = text.replace(token, code)
    return text


def _restore_math(html_text: str, protected: dict[str, str]) -> str:
    for token, mathml in reversed(protected.items()):  # M5TOKEN12X before M5TOKEN1X
        html_text = html_text.replace(f"<p>{token}</p>", mathml).replace(token, mathml)
    return html_text


def markdown_to_html(markdown_text: str) -> str:
    """Markdown with $...$ / $$...$$ formulas -> an HTML fragment with MathML.

    Formulas are cut out before Markdown runs (so ``_`` and ``*`` inside them are not
    read as emphasis) and put back as MathML. Code spans and blocks are left alone.
    """
    import markdown  # HTML pages only

    protected: dict[str, str] = {}
    text = _protect_math(markdown_text, protected)
    body = markdown.markdown(text, extensions=["fenced_code", "tables", "sane_lists"])
    return _restore_math(body, protected)


def _page(title_text: str, body: str, lang: str, nav: str = "") -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title_text)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{nav}{body}\n</body>\n</html>\n"
    )


HIDDEN_TAGS = frozenset({"hidden", "hidden-tests", "hidden_tests", "hidden-test", "remove-cell"})
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
_HIDDEN_BLOCK = re.compile(r"[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S)
_HIDDEN_SOURCE = ("autograder.hidden", "autograder/hidden")


def _is_hidden_cell(cell) -> bool:
    meta = cell.get("metadata", {})
    if HIDDEN_TAGS & set(meta.get("tags", [])):
        return True
    nbg = meta.get("nbgrader", {})
    source = cell.get("source", "")
    if nbg.get("hidden"):
        return True
    is_test_cell = bool(nbg.get("grade")) and not nbg.get("solution")
    if is_test_cell and HIDDEN_BEGIN in source and not _HIDDEN_BLOCK.sub("", source).strip():
        return True  # a test cell made only of hidden tests
    return any(marker in source for marker in _HIDDEN_SOURCE)


def strip_hidden_tests(notebook):
    """A copy of ``notebook`` (nbformat node) with no hidden test left in it.

    Drops cells tagged hidden (:data:`HIDDEN_TAGS`), cells marked ``hidden`` in their
    nbgrader metadata, nbgrader test cells made only of hidden tests, and cells that
    import the hidden test package; in other cells removes the
    ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` blocks and clears the
    outputs (they could echo hidden values).
    """
    nb = copy.deepcopy(notebook)
    kept = []
    for cell in nb.cells:
        if _is_hidden_cell(cell):
            continue
        if HIDDEN_BEGIN in cell.source:
            cell.source = _HIDDEN_BLOCK.sub("", cell.source)
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        kept.append(cell)
    nb.cells = kept
    return nb


_EXTERNAL_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>\s*", re.I)


def notebook_to_html(path: Path) -> str:
    """An executed notebook as standalone HTML, hidden tests removed, formulas as MathML."""
    import nbformat  # HTML notebooks only (nbconvert: 0.5 s)
    from nbconvert import HTMLExporter  # (the same)

    nb = strip_hidden_tests(nbformat.read(str(path), as_version=4))
    protected: dict[str, str] = {}  # formulas of markdown cells become MathML, as in the answers
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _protect_math(cell.source, protected)
    body, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    body = _restore_math(body, protected)
    # The template pulls jQuery, require.js and MathJax from a CDN; a static page with
    # MathML needs none of them, and the bundle must open offline.
    body = _EXTERNAL_SCRIPT.sub("", body)
    leaked = [m for m in (HIDDEN_BEGIN, *_HIDDEN_SOURCE) if m in body]
    if leaked:
        raise ValueError(f"notebook_to_html: `{path}` still shows hidden test source ({leaked})")
    return body


def build_solution_bundle(out_dir: Path, lang: str = "both", notebooks: list[Path] | None = None) -> list[Path]:
    """Write the students' solution release into ``out_dir``; return the written files.

    Layout: ``index.html``; ``{en,ru}/index.html`` plus one page per exercise
    ``{en,ru}/NN-slug.html`` rendered from the committed ``solutions/{en,ru}/*.md``;
    ``notebooks/<name>.html`` for each executed solution notebook (may be none).
    ``lang`` is ``"en"``, ``"ru"`` or ``"both"``. Raises ValueError on another
    ``lang``, a missing solution file or a missing notebook.
    """
    if lang not in ("en", "ru", "both"):
        raise ValueError(f"build_solution_bundle: `lang` must be 'en', 'ru' or 'both', got {lang!r}")
    langs = LANGUAGES if lang == "both" else (lang,)
    notebooks = [Path(p) for p in (notebooks or [])]
    for nb_path in notebooks:
        if not nb_path.is_file():
            raise ValueError(f"build_solution_bundle: `notebooks` entry {nb_path} does not exist")
    out_dir = Path(out_dir)
    written: list[Path] = []

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)

    for code in langs:
        ui = _UI[code]
        items = []
        for number in SLUGS:
            source = markdown_path(number, code)
            if not source.is_file():
                raise ValueError(f"build_solution_bundle: missing solution {source}; run `python solutions/build.py`")
            md = source.read_text(encoding="utf-8")
            name = f"{number:02d}-{SLUGS[number]}.html"
            nav = f'<nav><a href="index.html">{ui["back"]}</a></nav>\n'
            write(out_dir / code / name, _page(title(md), markdown_to_html(md), code, nav))
            items.append(f'<li><a href="{name}">{html.escape(title(md))}</a></li>')
        body = f'<h1>{ui["index"]}</h1>\n<ol class="exercises">\n' + "\n".join(items) + "\n</ol>\n"
        write(out_dir / code / "index.html", _page(ui["index"], body, code, '<nav><a href="../index.html">&uarr;</a></nav>\n'))

    notebook_links = []
    for nb_path in notebooks:
        target = out_dir / "notebooks" / f"{nb_path.stem}.html"
        write(target, notebook_to_html(nb_path))
        notebook_links.append(f'<li><a href="notebooks/{target.name}">{html.escape(nb_path.stem)}</a></li>')

    heading = " · ".join(_UI[code]["bundle"] for code in langs)
    sections = [f"<h1>{heading}</h1>\n<ul>"]
    sections += [f'<li><a href="{code}/index.html">{_UI[code]["index"]}</a></li>' for code in langs]
    sections.append("</ul>")
    if notebook_links:
        notebooks_heading = " · ".join(_UI[code]["notebooks"] for code in langs)
        sections.append(f"<h2>{notebooks_heading}</h2>\n<ul>\n" + "\n".join(notebook_links) + "\n</ul>")
    write(out_dir / "index.html", _page(heading, "\n".join(sections), langs[0]))
    return written
