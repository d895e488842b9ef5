"""Similarity flags: the evasion corpus (flagged / copies per kind), whether the wrong-logic copies'
outputs on the hidden inputs differ from their originals' (graded in the sandbox), and a class of
2,000 in 40 copy rings.

    .venv/bin/python bench/similarity.py [--write-docs]

Prints all three; with ``--write-docs`` rewrites the evasion and output tables in docs/similarity.md
(checked by tests/autograder/grade/test_similarity.py) and the scale figures, this host's, in docs/performance.md.
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "autograder"))

import evasions  # noqa: E402  (the corpus lives with the tests that check it)

from autograder.grade import class_report, corpus_cache  # noqa: E402
from reference_impl.lab.pins import cpu_identity  # noqa: E402

DOC = ROOT / "docs" / "similarity.md"
PERFORMANCE = ROOT / "docs" / "performance.md"


def scale() -> str:
    records = evasions.ring_class()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        document = class_report.write(records, Path(tmp))
        seconds = time.perf_counter() - started
        sizes = {p.name: p.stat().st_size / 1e6 for p in Path(tmp).iterdir()}
    clusters = document["similar"]["clusters"]
    return "\n".join(
        [
            "| measurement | value |",
            "|---|---:|",
            f"| submissions | {len(records)} |",
            f"| clusters shown (each ring once) | {len(clusters)} of {clusters[0]['size']} |",
            f"| flagged pairs (in `similarity_pairs.json`) | {document['similar']['pairs']} |",
            f"| `class_report.html` | {sizes['class_report.html']:.1f} MB |",
            f"| `class_report.json` | {sizes['class_report.json']:.1f} MB |",
            f"| `similarity_pairs.json` | {sizes['similarity_pairs.json']:.1f} MB |",
            f"| time to build and write the class report | {seconds:.1f} s |",
            "",
            f"Measured by `python bench/similarity.py` on {cpu_identity()} ({platform.machine()}), one process.",
        ]
    )


def _rewrite(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    return re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _: f"{begin}\n{body}\n{end}", text, flags=re.S)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write-docs", action="store_true", help="rewrite docs/similarity.md (evasions, outputs), docs/performance.md (scale)"
    )
    args = parser.parse_args()
    table = evasions.table(evasions.measure())
    print(table, end="\n\n")
    outputs = evasions.outputs_table(evasions.measure_outputs(corpus_cache.load_corpus()))
    print(outputs, end="\n\n")
    figures = scale()
    print(figures)
    if args.write_docs:
        text = _rewrite(DOC.read_text(encoding="utf-8"), "evasions", table)
        DOC.write_text(_rewrite(text, "evasion-outputs", outputs), encoding="utf-8")
        PERFORMANCE.write_text(_rewrite(PERFORMANCE.read_text(encoding="utf-8"), "scale", figures), encoding="utf-8")
        print(f"\nwrote {DOC} and {PERFORMANCE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
