"""Answer groups on the written-answer corpus: groups formed, marker actions saved, purity, the threshold.

    .venv/bin/python bench/answer_groups.py [--write-docs]

Reads the labeled corpus (tests/autograder/marking_corpus/answers_{en,ru}.toml: three questions,
each answer with the rubric items it deserves), groups every question's answers with
:func:`autograder.marking.groups.group_answers` and counts what a marker does with and without the
groups. Prints the page; with ``--write-docs`` writes it to docs/answer_groups.md (checked by
tests/autograder/workflows/test_answer_groups_doc.py, so its numbers are never typed by hand). Prints the
grouping time of a class of 300 and of 1,000 too, which stays out of the page (it is this host's).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import tomllib
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere in the checkout

from autograder.marking import groups, model  # noqa: E402

CORPUS = ROOT / "tests" / "autograder" / "marking_corpus"
DOC = ROOT / "docs" / "answer_groups.md"
LANGS = ("en", "ru")
THRESHOLDS = tuple(round(0.40 + 0.05 * k, 2) for k in range(12))  # 0.40 … 0.95
GRAM_SIZES = (3, 4, 5)
COMMAND = ".venv/bin/python bench/answer_groups.py --write-docs"
MARGIN = 0.05  # how far below the least similar same-item copy the threshold must stay
COPIES = "copies deserving the same items (least similar)"
INDEPENDENT = "independently written (most similar)"
DIFFERENT = "deserving different items (most similar)"


def load_corpus(folder: Path = CORPUS) -> dict[str, dict[str, list[dict]]]:
    """{lang: {question: [answer, ...]}} with every label checked against the rubric and every
    ``of`` naming an answer of the same question."""
    known = model.rubric_items()
    corpus = {}
    for lang in LANGS:
        corpus[lang] = tomllib.loads((folder / f"answers_{lang}.toml").read_text(encoding="utf-8"))
        for question, rows in corpus[lang].items():
            students = {row["student"] for row in rows}
            for row in rows:
                wrong = [i for i in row["items"] if i not in known or known[i].question != question]
                if wrong or row.get("of", row["student"]) not in students or len(students) != len(rows):
                    raise model.MarkingError(f"corpus {lang} {question} {row['student']}: unknown item {wrong}, `of` or a repeated student")
    return corpus


def answers_of(question: str, rows: list[dict]) -> list[model.Answer]:
    return [model.Answer(row["student"], question, row["text"]) for row in rows]


def misplaced(group: groups.Group, deserved: dict[str, tuple[str, ...]]) -> int:
    """Members that must leave the group to be marked differently: all but the largest set of
    members deserving the same items."""
    return len(group.members) - max(Counter(deserved[m] for m in group.members).values())


def measure(question: str, rows: list[dict], threshold: float) -> dict:
    """One question in one language: counts of answers, groups by kind, marker actions without
    groups (one per non-blank answer) and with them (one per non-blank group plus one per
    misplaced member), impure groups, and copies that share a group with the answer they copy."""
    deserved = {row["student"]: tuple(row["items"]) for row in rows}
    found = groups.group_answers(answers_of(question, rows), threshold=threshold)
    marked = [g for g in found if g.kind != "blank"]
    group_of = {m: g.id for g in found for m in g.members}
    copies = [row for row in rows if row["how"] == "copy"]
    kinds = Counter(g.kind for g in found)
    return {
        "answers": len(rows),
        "blank": sum(1 for row in rows if not row["text"].strip()),
        **{kind: kinds.get(kind, 0) for kind in groups.KINDS if kind != "blank"},
        "groups": len(marked),
        "without": sum(len(g.members) for g in marked),
        "with": sum(1 + misplaced(g, deserved) for g in marked),
        "impure": sum(1 for g in marked if misplaced(g, deserved)),
        "misplaced": sum(misplaced(g, deserved) for g in marked),
        "copies": len(copies),
        "joined": sum(1 for row in copies if group_of[row["student"]] == group_of[row["of"]]),
    }


def total(rows: list[dict]) -> dict:
    return {key: sum(row[key] for row in rows) for key in rows[0]}


def measure_all(corpus: dict, threshold: float) -> dict[tuple[str, str], dict]:
    return {(question, lang): measure(question, rows, threshold) for lang in LANGS for question, rows in corpus[lang].items()}


def cost(figures: dict) -> int:
    """What the threshold minimizes: marker actions plus misplaced answers (a misplaced answer is
    also a chance of a wrong mark, so it counts twice)."""
    return figures["with"] + figures["misplaced"]


def search(corpus: dict, thresholds=THRESHOLDS) -> list[tuple[float, dict]]:
    return [(t, total(list(measure_all(corpus, t).values()))) for t in thresholds]


@contextmanager
def gram_size(n: int):
    """``groups.GRAM`` set to n for the block (the bench's comparison of n-gram sizes only)."""
    saved, groups.GRAM = groups.GRAM, n
    try:
        yield
    finally:
        groups.GRAM = saved


def pair_similarities(corpus: dict) -> dict[str, tuple[float, str]]:
    """The extremes that bound the threshold, over pairs of non-blank answers of one question with
    different normalized texts: the least similar copy pair deserving the same items, the most
    similar independently written pair (neither copies the other), and the most similar pair
    deserving different items."""
    extremes = {COPIES: (1.0, ""), INDEPENDENT: (0.0, ""), DIFFERENT: (0.0, "")}
    for lang in LANGS:
        for question, rows in corpus[lang].items():
            written = [(row, groups.normalize(row["text"])) for row in rows if row["text"].strip()]
            grams = {row["student"]: groups.grams(text) for row, text in written}
            for (a, text_a), (b, text_b) in itertools.combinations(written, 2):
                if text_a == text_b:
                    continue
                value = groups.jaccard(grams[a["student"]], grams[b["student"]])
                where = f"{lang} {question} {a['student']}/{b['student']}"
                same_root = a.get("of", a["student"]) == b.get("of", b["student"])
                if same_root and a["items"] == b["items"] and value < extremes[COPIES][0]:
                    extremes[COPIES] = (value, where)
                for key, applies in ((INDEPENDENT, not same_root), (DIFFERENT, a["items"] != b["items"])):
                    if applies and value > extremes[key][0]:
                        extremes[key] = (value, where)
    return extremes


def choose(corpus: dict) -> dict:
    """The n-gram size and the threshold, by the rule the page states: for each size, among the
    thresholds at least ``MARGIN`` below its least similar copy pair deserving the same items, the
    least :func:`cost`, the lowest on a tie; then the size of least cost, on a tie the one whose
    threshold is farthest above its most similar independently written pair."""
    options = []
    for n in GRAM_SIZES:
        with gram_size(n):
            extremes, searched = pair_similarities(corpus), search(corpus)
        allowed = [(t, f) for t, f in searched if t <= extremes[COPIES][0] - MARGIN]
        threshold, figures = min(allowed, key=lambda entry: (cost(entry[1]), entry[0]))
        options.append({"gram": n, "threshold": threshold, "figures": figures, "extremes": extremes, "searched": searched})
    best_option = min(options, key=lambda o: (cost(o["figures"]), -(o["threshold"] - o["extremes"][INDEPENDENT][0]), o["gram"]))
    return {"options": options, "best": best_option}


def table(lines: list[list[str]]) -> str:
    """A markdown table: the first line is the header."""
    rows = [f"| {' | '.join(cells)} |" for cells in lines]
    return "\n".join([rows[0], "|" + "---|" * len(lines[0]), *rows[1:]])


def ratio(without: int, with_groups: int) -> str:
    return f"{without / with_groups:.2f}×" if with_groups else "n/a"


def results_table(figures: dict[tuple[str, str], dict]) -> str:
    header = ["question", "lang", "answers", "blank", "identical", "similar", "single", "groups to mark",
              "actions without groups", "actions with groups", "saving", "impure groups", "misplaced", "copies joined"]  # fmt: skip
    rows = [header]
    for (question, lang), f in [*figures.items(), (("all", ""), total(list(figures.values())))]:
        counts = [str(f[k]) for k in ("answers", "blank", "identical", "similar", "single", "groups", "without", "with")]
        rows.append([question, lang, *counts,
                     ratio(f["without"], f["with"]), str(f["impure"]), str(f["misplaced"]), f"{f['joined']}/{f['copies']}"])  # fmt: skip
    return table(rows)


def search_table(searched: list[tuple[float, dict]], chosen: float) -> str:
    rows = [["threshold", "groups to mark", "actions", "misplaced", "actions + misplaced", "copies joined", "saving"]]
    for t, f in searched:
        mark = " ← SIMILAR" if t == chosen else ""
        rows.append([f"{t:.2f}{mark}", str(f["groups"]), str(f["with"]), str(f["misplaced"]), str(cost(f)),
                     f"{f['joined']}/{f['copies']}", ratio(f["without"], f["with"])])  # fmt: skip
    return table(rows)


def gram_table(choice: dict) -> str:
    rows = [["characters per n-gram", "least similar same-item copies", "most similar independent answers", "threshold",
             "actions", "misplaced", "actions + misplaced"]]  # fmt: skip
    for o in choice["options"]:
        f, chosen = o["figures"], " ← chosen" if o is choice["best"] else ""
        rows.append([f"{o['gram']}{chosen}", f"{o['extremes'][COPIES][0]:.3f}", f"{o['extremes'][INDEPENDENT][0]:.3f}",
                     f"{o['threshold']:.2f}", str(f["with"]), str(f["misplaced"]), str(cost(f))])  # fmt: skip
    return table(rows)


def composition(corpus: dict) -> str:
    """How many answers of each kind the corpus holds."""
    kinds = Counter(row["how"] for lang in LANGS for rows in corpus[lang].values() for row in rows)
    return ", ".join(f"{kinds[k]} {k}" for k in ("original", "copy", "short", "blank"))


def document(corpus: dict | None = None) -> str:
    """The page docs/answer_groups.md, computed."""
    corpus = load_corpus() if corpus is None else corpus
    choice = choose(corpus)
    mine = next(o for o in choice["options"] if o["gram"] == groups.GRAM)
    figures = measure_all(corpus, groups.SIMILAR)
    all_ = total(list(figures.values()))
    bounds = "\n".join(f"- {name}: {value:.3f} ({where})" for name, (value, where) in mine["extremes"].items())
    return f"""# Answer groups: how many marker actions they save

*Generated by `{COMMAND}`; tests/autograder/workflows/test_answer_groups_doc.py fails when this page and the code disagree.*

The marking page shows each question's answers in groups (`autograder/marking/groups.py`): all blank
answers together (0 points, no decision); answers that are **identical** once case, whitespace,
punctuation, the spacing of formulas, ё/е and Unicode forms are normalized; **similar** answers, every
two of them at a similarity of at least `SIMILAR` = {groups.SIMILAR:.2f}; and the rest one by one.
Applying rubric items to a group marks every answer in it; a marker can detach any answer from its group.

## How it was measured

- **Corpus.** `tests/autograder/marking_corpus/answers_{{en,ru}}.toml`: plausible answers to three
  written questions (`q02_answer`, `q04_answer`, `answer_dqn`) in English and in Russian, written for
  this purpose (no student's text): {composition(corpus)}. Copies carry small edits (typos, case,
  punctuation, line breaks, formulas spaced differently, a word changed) and some drop or add a
  sentence, which changes the items they deserve. Each answer is labeled with the rubric items
  (`rubrics.toml`) it deserves.
- **Similarity.** Jaccard similarity of the sets of character {groups.GRAM}-grams of the two
  normalized texts (no model, no network). Texts are compared on their first {groups.MAX_COMPARED_CHARS:,}
  characters, all the gradebook keeps of an answer.
- **Clustering.** Complete link: an answer joins a group only if it is similar to every distinct
  text already in it, so a chain of small edits cannot join two different answers.
- **Marker actions.** Without groups, one per non-blank answer. With groups, one per non-blank group
  plus one per *misplaced* answer: a member of a group that deserves other items than the group's
  largest set of members deserving the same items, which must leave the group to be marked differently.
  A group is *impure* when it has a misplaced member. *Copies joined*: copies that share a group with
  the answer they copy.

## Results at SIMILAR = {groups.SIMILAR:.2f}

{results_table(figures)}

Over the corpus the groups turn {all_["without"]} marking actions into {all_["with"]}
({ratio(all_["without"], all_["with"])}), with {all_["misplaced"]} answers that must leave an impure group.

## The threshold and the n-gram size

Every threshold from {THRESHOLDS[0]:.2f} to {THRESHOLDS[-1]:.2f} was tried on the whole corpus, for
{", ".join(map(str, GRAM_SIZES))}-character n-grams. The rule: a threshold must stay at least {MARGIN:.2f} below
the least similar pair of copies that deserve the same items (so that a copy edited a little more than the corpus's still joins); among
those, the fewest actions plus misplaced answers (a misplaced answer is also a chance of a wrong mark
if the marker does not notice it, so it counts twice), the lowest threshold on a tie. Between n-gram
sizes, the least actions plus misplaced answers, on a tie the size whose threshold sits farthest above
the most similar independently written answers. The rule picks {choice["best"]["gram"]}-grams at
{choice["best"]["threshold"]:.2f}; the code uses `GRAM` = {groups.GRAM} and `SIMILAR` = {groups.SIMILAR:.2f} (the test
checks they agree).

{gram_table(choice)}

The search at {groups.GRAM}-grams:

{search_table(mine["searched"], groups.SIMILAR)}

What bounds it at {groups.GRAM}-grams, over pairs of non-blank answers to one question with different normalized texts:

{bounds}

Copies that deserve the same items sit well above independently written answers, so a threshold
between the two groups them; copies that drop or add a sentence (and so deserve other items) are as
similar as copies with typos, and no threshold on text similarity separates them. They are the
misplaced answers above: the marker must see a group's differences to detach them.

## What this does not show

The saving depends on how much a class copies, and the corpus's share of copies is the author's
choice, not an observation; the Russian answers follow the same plan as the English ones. On real
answers the saving will differ; a term's own table can be produced the same way from its answers once
they are marked. Paraphrases (the same content in other words) are not grouped: their character
n-grams differ as much as those of different answers.
"""


def timing(size: int, corpus: dict) -> float:
    """Seconds to group ``size`` answers to one question, built from the corpus's texts with a
    student-specific word added to each (every text distinct)."""
    texts = [row["text"] for rows in corpus["en"].values() for row in rows]
    answers = [model.Answer(f"s{i:05d}", "q", f"{texts[i % len(texts)]} {i}") for i in range(size)]
    started = time.perf_counter()
    groups.group_answers(answers)
    return time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-docs", action="store_true", help=f"write {DOC.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    page = document(corpus)
    print(page)
    for size in (300, 1000):
        print(f"grouping {size} answers to one question: {timing(size, corpus):.3f} s (this host)")
    if args.write_docs:
        DOC.write_text(page, encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
