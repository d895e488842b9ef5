"""`m5 demo` (`make demo`): the package's main job on bundled example data.

Prints the kernels' worked examples, then grades three bundled submissions (correct,
partly wrong, adversarial) in the sandbox, shows the class table and summary, and
one student's feedback report.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import reference_impl as ref
from autograder.grade import pipeline, report, sandbox
from autograder.grade.classrun import grade_into
from autograder.grade.discover import discover

DEMO = Path(__file__).parent / "assets" / "demo"
CORRECT = DEMO / "correct.py"  # the one correct example submission (tests and benchmarks use it too)


def write_demo_submissions(folder: Path) -> list[Path]:
    """correct.py, and correct.py + each fragment (later definitions win), into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    base = CORRECT.read_text(encoding="utf-8")
    paths = [folder / "correct.py"]
    paths[0].write_text(base, encoding="utf-8")
    for fragment in sorted(DEMO.glob("*.fragment.py")):
        path = folder / fragment.name.replace(".fragment", "")
        path.write_text(base + "\n\n" + fragment.read_text(encoding="utf-8"), encoding="utf-8")
        paths.append(path)
    return sorted(paths)


def worked_examples() -> None:
    rows = [
        (
            "dqn_targets([0.2, -1], [0, 1], [[1.1, 1.6], [10, 20]], gamma=0.95)",
            ref.dqn_targets([0.2, -1.0], [0, 1], [[1.1, 1.6], [10.0, 20.0]], gamma=0.95),
        ),
        (
            "double_dqn_targets([0, 0], [0, 0], [[0, 1], [1, 0]], [[10, 1], [-1, 7]], gamma=0.9)",
            ref.double_dqn_targets([0, 0], [0, 0], [[0, 1], [1, 0]], [[10, 1], [-1, 7]], gamma=0.9),
        ),
        (
            "masked_token_nll([-2.3, -1.7, -0.2, -1.0, -0.4, 0.0], [0, 0, 1, 1, 1, 0])",
            ref.masked_token_nll([-2.3, -1.7, -0.2, -1.0, -0.4, 0.0], [0, 0, 1, 1, 1, 0]),
        ),
        ("cql_discrete_penalty([2, 0, -1], 0)", ref.cql_discrete_penalty([2.0, 0.0, -1.0], 0)),
        ("expectile_loss([-1, 1, 2], tau=0.8)", ref.expectile_loss([-1.0, 1.0, 2.0], 0.8)),
        ("return_to_go([1, 0, -0.5, 2])", ref.return_to_go([1.0, 0.0, -0.5, 2.0])),
        ("return_to_go([1, 0, -0.5, 2], gamma=0.5)", ref.return_to_go([1.0, 0.0, -0.5, 2.0], 0.5)),
        ("pessimistic_values([1, 0.5, 2, 0.8], [4, 1, 0, 100])", ref.pessimistic_values([1, 0.5, 2, 0.8], [4, 1, 0, 100])),
        ("behavior_support_mask([0.5, 0.1, 0.2, 0.2], 0.35)", ref.behavior_support_mask([0.5, 0.1, 0.2, 0.2], 0.35)),
        (
            "fqe_targets([-0.1], [False], [[2, 4]], [[0.25, 0.75]], gamma=0.9)",
            ref.fqe_targets([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]], gamma=0.9),
        ),
        ("iql_advantage_weights([-1, 0, 1, 10], beta=3)", ref.iql_advantage_weights([-1.0, 0.0, 1.0, 10.0], 3.0)),
    ]
    print("== Reference kernels: worked examples of the module ==")
    with np.printoptions(precision=6, suppress=True):
        for call, value in rows:
            print(f"  {call}\n      -> {value}")
    print()


def main() -> int:
    worked_examples()
    iso = sandbox.isolation()
    print(f"== Sandbox: {iso.level} (process cap: {iso.process_cap}) ==")
    if iso.fatal:  # grading would score every example 0
        print(f"m5 demo: {iso.fatal}", file=sys.stderr)
        return 3
    if iso.warning:
        print(iso.warning)
    print("== Building or loading the grading corpus (first run: ~30-60 s) ==")
    out = Path(tempfile.mkdtemp(prefix="m5-demo-"))
    subs = write_demo_submissions(out / "submissions")
    print(f"== Grading {len(subs)} example submissions: {', '.join(p.name for p in subs)} ==")
    found = discover(subs, set(pipeline.KERNELS)).submissions
    results, _, _ = grade_into(found, out / "grades", jobs=2, isolation_warning=iso.warning)
    print(report.grade_table(results))
    print()
    print(report.summary_table(results))
    partly = next(r for r in results if r.submission == "partly_wrong.py")
    print("\n== Feedback for partly_wrong.py (failed tests only) ==")
    for t in partly.tests:
        if not t.passed:
            print(f"* {t.name['en']}")
            print("    " + report.feedback(t, "en").replace("\n", "\n    "))
    adversarial = next(r for r in results if r.submission == "adversarial.py")
    lost = {g: f"{got:g}/{total:g}" for g, (got, total) in adversarial.by_group().items() if got < total}
    print(f"\n== adversarial.py: {adversarial.score:g}/{adversarial.max_score:g}; it lost only {lost} ==")
    print(f"\nresults.json files and grades.csv: {out / 'grades'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
