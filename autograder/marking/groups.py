"""Answer groups: the answers of one question gathered so that one marker action marks many.

For each question the marker sees, in this order:

* one ``blank`` group: every blank answer (worth 0, no decision needed);
* ``identical`` groups: answers whose :func:`normalize`\\ d texts are equal (case, whitespace,
  punctuation, the spacing of formulas, ё/е and Unicode forms do not count);
* ``similar`` groups: near-identical answers, every two of them at :func:`similarity` ≥ ``SIMILAR``
  (complete link: a chain of small edits cannot join two different answers);
* ``single`` groups: every other answer on its own, and every answer a marker detached from its group.

Everything here is pure and deterministic: the same answers, in any order, give the same groups
with the same ids. Texts are compared on their first ``MAX_COMPARED_CHARS`` characters, which
is all the gradebook keeps of an answer (``written.MAX_ANSWER_CHARS``). How the threshold was
chosen and how many marker actions the groups save: ``docs/answer_groups.md``.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass

from autograder.grade import written
from autograder.marking import model

MAX_COMPARED_CHARS = written.MAX_ANSWER_CHARS  # 20,000: the gradebook stores no more of an answer
GRAM = 5  # characters per n-gram of similarity(); chosen on the corpus (docs/answer_groups.md)
SIMILAR = 0.70  # similarity at or above which two answers are near-identical (chosen on the corpus: docs/answer_groups.md)
KINDS = ("blank", "identical", "similar", "single")

# What a marker reads about a group, in both languages.
KIND_TEXT = {
    "blank": {"en": "blank answers (0 points, no decision needed)", "ru": "пустые ответы (0 баллов, решение не нужно)"},
    "identical": {"en": "identical answers (after normalizing case, spaces, punctuation and formulas)",
                  "ru": "одинаковые ответы (без учёта регистра, пробелов, пунктуации и записи формул)"},
    "similar": {"en": "near-identical answers (small edits of one text)", "ru": "почти одинаковые ответы (небольшие правки одного текста)"},
    "single": {"en": "an answer on its own", "ru": "отдельный ответ"},
}  # fmt: skip

# Characters that change nothing a reader sees: format controls (bidi, zero-width, soft hyphen,
# BOM) and lone surrogates, which no text can encode.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ud800-\udfff]")
# LaTeX spellings of what students also type as symbols.
_LATEX = {
    "varepsilon": "ε", "epsilon": "ε", "gamma": "γ", "alpha": "α", "beta": "β", "tau": "τ", "theta": "θ",
    "pi": "π", "mu": "μ", "sigma": "σ", "lambda": "λ", "delta": "δ", "cdot": "·", "times": "×",
    "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "approx": "≈", "sim": "~", "to": "→",
}  # fmt: skip
_LATEX_NAME = re.compile(r"\\(" + "|".join(sorted(_LATEX, key=len, reverse=True)) + r")(?![a-z])")
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d"})
# Markup around formulas and emphasis ($…$, T^2, d_t, {…}, **bold**, `code`): dropped without a trace.
_MARKUP = re.compile(r"[$\\^_{}*`]")
# Formula symbols: operators, brackets, arrows, mathematical operators and Greek letters.
_FORMULA = "+\\-=<>()\\[\\]|/·×÷±~\u0370-\u03ff\u2190-\u21ff\u2200-\u22ff"
_NOT_TEXT = re.compile(f"[^\\w\\s{_FORMULA}]")  # punctuation and other symbols
_SPACES = re.compile(r"\s+")
_AROUND_FORMULA = re.compile(f" ?([{_FORMULA}]) ?")


@dataclass(frozen=True)
class Group:
    id: str
    question: str
    kind: str  # "blank" | "identical" | "similar" | "single"
    members: tuple[str, ...]  # student ids, sorted
    representative: str  # the member whose text is shown


def normalize(text: str) -> str:
    """The text as compared: its first ``MAX_COMPARED_CHARS`` characters, invisible characters
    removed, NFKC, casefolded, ё→е, LaTeX Greek names as letters, dashes as ``-``, markup
    (``$ \\ ^ _ { } * ```) dropped, other punctuation as a space, whitespace collapsed, and no space
    next to a formula symbol (``Q(s, a) = r + γ max Q`` and ``q(s,a)=r+γmax q`` read alike)."""
    text = _INVISIBLE.sub("", text[:MAX_COMPARED_CHARS])
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    text = _LATEX_NAME.sub(lambda m: _LATEX[m.group(1)], text.replace("ё", "е"))
    text = _MARKUP.sub("", text.translate(_DASHES))
    text = _SPACES.sub(" ", _NOT_TEXT.sub(" ", text)).strip()
    return _AROUND_FORMULA.sub(r"\1", text)


def grams(normalized: str) -> frozenset[str]:
    """The set of ``GRAM``-character substrings of a normalized text (the whole text when shorter)."""
    if len(normalized) <= GRAM:
        return frozenset((normalized,))
    return frozenset(normalized[i : i + GRAM] for i in range(len(normalized) - GRAM + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|A ∩ B| / |A ∪ B| (1 for two empty sets)."""
    if not a and not b:
        return 1.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the sets of character ``GRAM``-grams (5) of the two normalized texts,
    |G(a) ∩ G(b)| / |G(a) ∪ G(b)|: 1 for equal texts, 0 for texts with no n-gram in common.
    Character n-grams see through typos and word endings (both languages), no model needed."""
    return jaccard(grams(normalize(a)), grams(normalize(b)))


def group_id(question: str, kind: str, members: tuple[str, ...]) -> str:
    """``<question>:<kind>:<first 10 hex of sha256 of the sorted members, one a line>``."""
    joined = "\n".join(sorted(members)).encode("utf-8", "surrogatepass")
    return f"{question}:{kind}:{hashlib.sha256(joined).hexdigest()[:10]}"


def make_group(question: str, kind: str, members, representative: str) -> Group:
    """A group with sorted members and its stable id."""
    ordered = tuple(sorted(members))
    return Group(group_id(question, kind, ordered), question, kind, ordered, representative)


def check_threshold(threshold) -> float:
    """A similarity threshold: a number in (0, 1]."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise model.MarkingError(f"threshold: must be a number in (0, 1], got {threshold!r}")
    return float(threshold)


def check_answers(answers) -> str:
    """The one question a list of answers is about ('' when empty); each an :class:`model.Answer`
    with a text, each student once."""
    if not isinstance(answers, (list, tuple)):
        raise model.MarkingError(f"answers: must be a list of Answer, got {type(answers).__name__}")
    seen: set[str] = set()
    for answer in answers:
        if not isinstance(answer, model.Answer) or not all(isinstance(v, str) for v in (answer.student, answer.question, answer.text)):
            raise model.MarkingError(f"answers: every item must be an Answer of str fields, got {answer!r:.80}")
        if answer.question != answers[0].question:
            raise model.MarkingError(f"answers: mix {answers[0].question!r} and {answer.question!r}; group one question at a call")
        if answer.student in seen:
            raise model.MarkingError(f"answers: student {answer.student!r:.80} answers {answer.question!r} twice")
        seen.add(answer.student)
    return answers[0].question if answers else ""


def check_detached(detached, width: int) -> frozenset:
    """A set of detached students (``width`` 1) or of (student, question) pairs (``width`` 2)."""
    shape = "str" if width == 1 else "(student, question) tuples of str"
    if not isinstance(detached, (set, frozenset)):
        raise model.MarkingError(f"detached: must be a set of {shape}, got {type(detached).__name__}")
    for item in detached:
        ok = isinstance(item, str) if width == 1 else isinstance(item, tuple) and len(item) == 2 and all(isinstance(v, str) for v in item)
        if not ok:
            raise model.MarkingError(f"detached: must be a set of {shape}, got an item {item!r:.80}")
    return frozenset(detached)


def token_lists(sets: list[frozenset[str]]) -> list[list[int]]:
    """Each set as the sorted list of its grams' ranks, rarest gram first (rank: by the number of
    sets holding the gram, then by the gram), the order prefix filtering needs."""
    frequency: Counter[str] = Counter(g for s in sets for g in s)
    rank = {g: k for k, g in enumerate(sorted(frequency, key=lambda g: (frequency[g], g)))}
    return [sorted(rank[g] for g in s) for s in sets]


def similar_pairs(sets: list[frozenset[str]], threshold: float) -> dict[tuple[int, int], float]:
    """{(i, j): Jaccard} for every pair i < j at Jaccard ≥ t = ``threshold``, exactly, without
    comparing every pair (prefix filtering with a length and a position bound, as in PPJoin):
    sets are taken smallest first; two sets at J ≥ t share a gram among the first
    |A| − ⌊t·|A|⌋ + 1 of each (rarest first), have t·|A| ≤ |B|, and share at least
    t/(1 + t)·(|A| + |B|) grams, which the grams left after a shared one must still allow."""
    tokens = token_lists(sets)
    sizes = [len(t) for t in tokens]
    index: dict[int, list[tuple[int, int]]] = defaultdict(list)  # gram -> (set, position) in the prefixes seen, smallest set first
    start: dict[int, int] = defaultdict(int)  # gram -> first entry of its list not too small for the sets still to come
    found = {}
    for x in sorted(range(len(sets)), key=lambda i: (sizes[i], i)):
        size = sizes[x]
        smallest = threshold * size - 1e-9
        overlap: dict[int, int] = {}  # y -> grams shared so far, -1 once y cannot reach the threshold
        for i, token in enumerate(tokens[x][: size - math.floor(threshold * size) + 1]):
            entries = index[token]
            while start[token] < len(entries) and sizes[entries[start[token]][0]] < smallest:
                start[token] += 1  # sizes only grow from here: that set is too small for every later one
            for y, j in entries[start[token] :]:
                shared = overlap.get(y, 0)
                if shared >= 0:
                    reachable = shared + 1 + min(size - i, sizes[y] - j) - 1
                    overlap[y] = shared + 1 if reachable >= threshold * (size + sizes[y]) / (1 + threshold) - 1e-9 else -1
            entries.append((x, i))
        for y, shared in overlap.items():
            value = jaccard(sets[x], sets[y]) if shared > 0 else 0.0
            if value >= threshold:
                found[(min(x, y), max(x, y))] = value
    return found


def complete_link(count: int, edges: dict[tuple[int, int], float]) -> list[list[int]]:
    """Clusters of 0..count-1 (taken in that order): each joins the existing cluster whose every
    member it is similar to (an edge), the one with the highest least similarity, the earliest on
    a tie; otherwise it starts a cluster. Every two members of a cluster are similar."""
    neighbours: dict[int, set[int]] = defaultdict(set)
    for i, j in edges:
        neighbours[i].add(j)
        neighbours[j].add(i)
    clusters: list[list[int]] = []
    cluster_of: dict[int, int] = {}
    for item in range(count):
        best, best_link = None, -1.0
        for index in sorted({cluster_of[n] for n in neighbours[item] if n in cluster_of}):
            if neighbours[item].issuperset(clusters[index]):
                link = min(edges[(m, item)] for m in clusters[index])  # members precede the item
                if link > best_link:
                    best, best_link = index, link
        if best is None:
            best = len(clusters)
            clusters.append([])
        clusters[best].append(item)
        cluster_of[item] = best
    return clusters


def text_groups(question: str, answers: list[model.Answer], threshold: float) -> list[Group]:
    """Identical, similar and single groups of non-blank answers. Distinct normalized texts are
    clustered most frequent first (then by text), so the commonest version leads its group and
    the order of the input never matters; the representative is the leading text's first student."""
    by_text: dict[str, list[str]] = defaultdict(list)
    for answer in answers:
        by_text[normalize(answer.text)].append(answer.student)
    texts = sorted(by_text, key=lambda t: (-len(by_text[t]), t))
    sets = [grams(t) for t in texts]
    groups = []
    for cluster in complete_link(len(texts), similar_pairs(sets, threshold)):
        members = [s for i in cluster for s in by_text[texts[i]]]
        kind = "similar" if len(cluster) > 1 else "identical" if len(members) > 1 else "single"
        groups.append(make_group(question, kind, members, min(by_text[texts[cluster[0]]])))
    return groups


def order(groups: list[Group]) -> list[Group]:
    """Blank first, then by size (largest first), then by id."""
    return sorted(groups, key=lambda g: (g.kind != "blank", -len(g.members), g.id))


def group_answers(answers: list[model.Answer], detached: frozenset[str] = frozenset(), threshold: float = SIMILAR) -> list[Group]:
    """The groups of the answers of one question (see the module's docstring). A detached
    student is always a ``single`` group of their own, blank or not; detached ids without an
    answer here are ignored (a detachment outlives nothing it refers to)."""
    question = check_answers(answers)
    detached = check_detached(detached, 1)
    threshold = check_threshold(threshold)
    alone = [a for a in answers if a.student in detached]
    blanks = [a.student for a in answers if a.blank and a.student not in detached]
    rest = [a for a in answers if not a.blank and a.student not in detached]
    groups = [make_group(question, "single", [a.student], a.student) for a in alone]
    if blanks:
        groups.append(make_group(question, "blank", blanks, min(blanks)))
    return order(groups + text_groups(question, rest, threshold))


def group_class(answers: list[model.Answer], detached: frozenset[tuple[str, str]] = frozenset()) -> dict[str, list[Group]]:
    """{question: its groups} over a class's answers (questions sorted); ``detached`` holds
    (student, question) pairs."""
    if not isinstance(answers, (list, tuple)):
        raise model.MarkingError(f"answers: must be a list of Answer, got {type(answers).__name__}")
    detached = check_detached(detached, 2)
    by_question: dict[str, list[model.Answer]] = defaultdict(list)
    for answer in answers:
        if not isinstance(answer, model.Answer) or not isinstance(answer.question, str):
            raise model.MarkingError(f"answers: every item must be an Answer of str fields, got {answer!r:.80}")
        by_question[answer.question].append(answer)
    return {
        question: group_answers(by_question[question], frozenset(s for s, q in detached if q == question))
        for question in sorted(by_question)
    }
