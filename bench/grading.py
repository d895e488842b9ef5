"""`m5 grade` vs `nbgrader autograde` on the same notebook submissions, side by side.

Builds a throw-away nbgrader course with one assignment notebook (the ten kernels,
each followed by an autograder test cell with the usual handful of asserts: three
visible and two hidden), fills 20 submissions (correct ones and ones with typical
mistakes), then times, in each of ``--rounds`` rounds (the host's speed drifts, so
every ratio is taken within a round and the median over rounds is reported):

* ``nbgrader autograde`` over all of them (executes every notebook in a kernel);
* ``m5 grade`` over the same notebooks (sandboxed worker, hidden property suite), with
  ``--jobs 1``, ``--jobs 2``, ``--shrink`` and ``--fresh-sandbox``;

and prints per-submission wall time, the ratios, and how many inputs each checked, with
the number of generated inputs of every property. Then it times a class of
``--class-size`` submissions with ``m5 grade --jobs 2``, and grades the hostile corpus
(every attack of ``tests/autograder/adversarial``) one submission per grading process
and then as one class run, printing the grading process's own time and peak RSS
(VmHWM of the grader, never of its sandboxed workers).

Last, it times a class of five with and without one submission that sleeps in every
kernel call (``--no-sleeper`` skips it); ``--only sleeper`` or ``--only hostile`` runs
just that part.

    .venv/bin/python bench/grading.py [--submissions 20] [--rounds 3] [--class-size 200] [--no-hostile]
    .venv/bin/python bench/grading.py --only sleeper [--rounds 3]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CORRECT = ROOT / "autograder" / "assets" / "demo" / "correct.py"
WRONG = ROOT / "autograder" / "assets" / "demo" / "partly_wrong.fragment.py"
KERNELS = [
    "dqn_targets",
    "double_dqn_targets",
    "masked_token_nll",
    "cql_discrete_penalty",
    "expectile_loss",
    "return_to_go",
    "pessimistic_values",
    "behavior_support_mask",
    "fqe_targets",
    "iql_advantage_weights",
]

# The usual handful: worked examples, three visible and two hidden asserts per kernel.
ASSERTS = {
    "dqn_targets": [
        "np.allclose(dqn_targets([0.2, -1.0], [0, 1], [[1.1, 1.6], [10, 20]], gamma=0.95), [1.72, -1.0])",
        "np.allclose(dqn_targets([1, -1, 0], [0, 1, 0], [[4, 0], [100, 0], [3, 0]], gamma=0.9), [4.6, -1, 2.7])",
        "dqn_targets([0.0], [1], [[5.0]]).tolist() == [0.0]",
        "np.allclose(dqn_targets([0.0], [0], [[2.0, 3.0]], gamma=0.5), [1.5])",
        "dqn_targets([1.0, 2.0], [0, 0], [[0.0], [0.0]]).shape == (2,)",
    ],
    "double_dqn_targets": [
        "np.allclose(double_dqn_targets([0, 0], [0, 0], [[0, 1], [1, 0]], [[10, 1], [-1, 7]], gamma=0.9), [0.9, -0.9])",
        "np.allclose(double_dqn_targets([0.0], [1], [[1.0, 2.0]], [[3.0, 4.0]]), [0.0])",
        "np.allclose(double_dqn_targets([0.0], [0], [[5.0, 5.0]], [[1.0, 2.0]], gamma=1.0), [1.0])",
        "np.allclose(double_dqn_targets([1.0], [0], [[1.0, 0.0]], [[2.0, 9.0]], gamma=0.5), [2.0])",
        "double_dqn_targets([1.0, 2.0], [0, 0], [[0.0], [0.0]], [[0.0], [0.0]]).shape == (2,)",
    ],
    "masked_token_nll": [
        "abs(masked_token_nll([-2.3, -1.7, -0.2, -1.0, -0.4, 0.0], [0, 0, 1, 1, 1, 0]) - 0.533333) < 1e-5",
        "abs(masked_token_nll([-1.0], [1]) - 1.0) < 1e-9",
        "abs(masked_token_nll([[-1.0, -3.0]], [[1, 1]]) - 2.0) < 1e-9",
        "abs(masked_token_nll([-1.0, -5.0], [1, 0]) - 1.0) < 1e-9",
        "masked_token_nll([-0.5, -0.5], [1, 1]) > 0",
    ],
    "cql_discrete_penalty": [
        "abs(cql_discrete_penalty([2.0, 0.0, -1.0], 0) - 0.169846) < 1e-5",
        "abs(cql_discrete_penalty([2.0, 0.0, -1.0], 1) - 2.169846) < 1e-5",
        "cql_discrete_penalty([[1.0, 1.0]], [0]) > 0",
        "abs(cql_discrete_penalty([0.0, 0.0], 0) - np.log(2)) < 1e-9",
        "cql_discrete_penalty([5.0, -5.0], 0) >= 0",
    ],
    "expectile_loss": [
        "abs(expectile_loss([-1.0, 1.0, 2.0], 0.8) - 1.4) < 1e-9",
        "abs(expectile_loss([2.0], 0.5) - 2.0) < 1e-9",
        "abs(expectile_loss([-2.0], 0.9) - 0.4) < 1e-9",
        "abs(expectile_loss([1.0], 0.9) - 0.9) < 1e-9",
        "expectile_loss([0.0], 0.3) == 0.0",
    ],
    "return_to_go": [
        "np.allclose(return_to_go([1.0, 0.0, -0.5, 2.0]), [2.5, 1.5, 1.5, 2.0])",
        "np.allclose(return_to_go([1.0, 0.0, -0.5, 2.0], gamma=0.5), [1.125, 0.25, 0.5, 2.0])",
        "np.allclose(return_to_go([3.0]), [3.0])",
        "np.allclose(return_to_go([1, 1], gamma=0.0), [1, 1])",
        "return_to_go([1, 2, 3]).dtype.kind == 'f'",
    ],
    "pessimistic_values": [
        "np.allclose(pessimistic_values([1, 0.5, 2, 0.8], [4, 1, 0, 100]), [0.5, -0.5, -np.inf, 0.7])",
        "np.isneginf(pessimistic_values([5.0], [0])[0])",
        "np.allclose(pessimistic_values([1.0], [4], radius_scale=2.0), [0.0])",
        "np.allclose(pessimistic_values([0.0], [1]), [-1.0])",
        "pessimistic_values([0.0, 0.0], [1, 1]).shape == (2,)",
    ],
    "behavior_support_mask": [
        "behavior_support_mask([0.5, 0.1, 0.2, 0.2], 0.35).tolist() == [True, False, True, True]",
        "behavior_support_mask([1.0, 0.0]).tolist() == [True, False]",
        "behavior_support_mask([[0.2, 0.8]], 0.5).tolist() == [[False, True]]",
        "behavior_support_mask([0.3, 0.3], 1.0).all()",
        "behavior_support_mask([0.1, 0.2, 0.05], 0.35).tolist() == [True, True, False]",
    ],
    "fqe_targets": [
        "np.allclose(fqe_targets([-0.1], [False], [[2, 4]], [[0.25, 0.75]], gamma=0.9), [3.05])",
        "np.allclose(fqe_targets([1.0], [True], [[2, 4]], [[0.5, 0.5]]), [1.0])",
        "np.allclose(fqe_targets([0.0], [0], [[2, 4]], [[1.0, 0.0]], gamma=1.0), [2.0])",
        "np.allclose(fqe_targets([0.0], [0], [[2, 4]], [[0.5, 0.5]], gamma=1.0), [3.0])",
        "fqe_targets([0.0, 1.0], [0, 0], [[1.0], [1.0]], [[1.0], [1.0]]).shape == (2,)",
    ],
    "iql_advantage_weights": [
        "np.allclose(iql_advantage_weights([0.0], 3.0), [1.0])",
        "np.allclose(iql_advantage_weights([10.0], 3.0), [100.0])",
        "np.allclose(iql_advantage_weights([-1.0], 1.0), [np.exp(-1.0)])",
        "np.allclose(iql_advantage_weights([1.0], 0.0), [1.0])",
        "np.allclose(iql_advantage_weights([1e6], 1.0, max_weight=5.0), [5.0])",
    ],
}


def functions(path: Path) -> tuple[str, dict[str, str]]:
    """(module-level helper code, {kernel: source}) of a submission file."""
    text = path.read_text()
    tree = ast.parse(text)
    helpers, kernels = [], {}
    for node in tree.body:
        segment = ast.get_source_segment(text, node)
        if isinstance(node, ast.FunctionDef) and node.name in KERNELS:
            kernels[node.name] = segment
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            helpers.append(segment)
    return "\n\n".join(helpers), kernels


def cell(source, grade_id, *, solution=False, grade=False, points=0, locked=False):
    c = nbformat.v4.new_code_cell(source)
    c.metadata["nbgrader"] = {
        "schema_version": 3,
        "grade_id": grade_id,
        "solution": solution,
        "grade": grade,
        "locked": locked,
        **({"points": points} if grade else {}),
    }
    return c


def assignment_notebook(helpers: str, kernels: dict[str, str]):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(cell(helpers, "setup", solution=True))
    for name in KERNELS:
        nb.cells.append(cell(kernels[name], f"{name}-answer", solution=True))
        visible, hidden = ASSERTS[name][:3], ASSERTS[name][3:]
        test = "\n".join(f"assert {a}" for a in visible)
        test += "\n### BEGIN HIDDEN TESTS\n" + "\n".join(f"assert {a}" for a in hidden) + "\n### END HIDDEN TESTS"
        nb.cells.append(cell(test, f"{name}-test", grade=True, points=10, locked=True))
    return nb


def submissions(count: int) -> list[tuple[str, dict[str, str]]]:
    helpers, good = functions(CORRECT)
    _, wrong = functions(WRONG)
    wrong = {k: v for k, v in wrong.items() if v != good.get(k)}
    wrong_names = sorted(wrong)
    out = []
    for i in range(count):
        chosen = dict(good)
        for j, name in enumerate(wrong_names):  # a deterministic mix of mistakes
            if (i >> j) & 1:
                chosen[name] = wrong[name]
        out.append((helpers, chosen))
    return out


def run(cmd, cwd, env=None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def print_inputs_per_property(corpus) -> None:
    """Generated inputs (corpus cases) of every property; bad-input ones use fixed lists."""
    print("\n| kernel | property | generated inputs |")
    print("|---|---|---:|")
    for kc in corpus.values():
        for prop in kc.properties:
            count = sum(1 for case in kc.cases if case.prop is prop)
            print(f"| {kc.kernel} | {prop.key} | {count} |")


# ---------------------------------------------------------------- the hostile corpus
# One grading process per submission: it loads the corpus, notes its own peak RSS
# (VmHWM), grades, and notes it again. The sandboxed worker is a separate process and
# is not counted: what is measured is what the submission can make the grader hold.
MEASURE_ONE = """
import json, sys, time
from pathlib import Path
from autograder.grade.corpus_cache import load_corpus
from autograder.grade.pipeline import grade_submission


def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


corpus = load_corpus()
baseline = peak_mb()
start = time.perf_counter()
result = grade_submission(Path(sys.argv[1]), corpus, shrink=False)
print(json.dumps({"seconds": time.perf_counter() - start, "baseline_mb": baseline, "peak_mb": peak_mb(),
                  "score": result.score}))
"""


def hostile_files(folder: Path) -> list[Path]:
    """Every attack of the adversarial corpus (``attacks/``, ``sandbox_*``, ``worker_*``),
    composed on the correct submission."""
    sys.path.insert(0, str(ROOT / "tests" / "autograder"))
    from adversarial import build

    folder.mkdir(parents=True)
    paths = [build.write_attack(name, folder) for name in build.attack_names()]
    adversarial = ROOT / "tests" / "autograder" / "adversarial"
    for fragment in sorted([*adversarial.glob("sandbox_*.py"), *adversarial.glob("worker_*.py")]):
        if "sleeper_cell" in fragment.name:  # a notebook cell, not a .py attack
            continue
        path = folder / fragment.name
        path.write_text(build.compose(fragment.read_text(encoding="utf-8")), encoding="utf-8")
        paths.append(path)
    return paths


def grader_peak_mb(root: psutil.Process, seen: dict[int, float]) -> None:
    """Record the VmHWM of ``root`` and of its children that are grading processes
    (forks of the CLI, same command line), not of the sandboxes they start."""
    try:
        processes = [root] + [c for c in root.children() if c.cmdline() == root.cmdline()]
    except psutil.Error:
        return
    for proc in processes:
        try:
            with open(f"/proc/{proc.pid}/status") as status:
                hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
            seen[proc.pid] = max(seen.get(proc.pid, 0.0), hwm / 1024)
        except (OSError, StopIteration):
            pass


def class_run_peak(cmd: list, cwd: Path, env: dict) -> tuple[float, float]:
    """(seconds, peak RSS in MB of any grading process) of one `m5 grade` class run."""
    seen: dict[int, float] = {}
    start = time.perf_counter()
    proc = psutil.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        grader_peak_mb(proc, seen)
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed with exit code {proc.returncode}")
    return elapsed, max(seen.values(), default=0.0)


def hostile_corpus(folder: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "M5_PROGRESS": "0"}
    paths = hostile_files(folder / "in")
    print(f"\nhostile corpus: {len(paths)} attacks, one grading process each (peak RSS = VmHWM of the grader)\n")
    print("| attack | score | seconds | grader baseline (MB) | grader peak (MB) | growth (MB) |")
    print("|---|---:|---:|---:|---:|---:|")
    growth = []
    for path in paths:
        done = subprocess.run(
            [sys.executable, "-c", MEASURE_ONE, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
        )
        if done.returncode != 0:
            raise SystemExit(f"grading {path.name} failed:\n{done.stderr[-2000:]}")
        m = json.loads(done.stdout.strip().splitlines()[-1])
        growth.append(m["peak_mb"] - m["baseline_mb"])
        print(f"| {path.stem} | {m['score']:g} | {m['seconds']:.1f} | {m['baseline_mb']:.0f} | {m['peak_mb']:.0f} | {growth[-1]:.0f} |")
    print(f"\nlargest growth of the grader over its baseline for one submission: {max(growth):.0f} MB (limit 500 MB)")
    seconds, peak = class_run_peak([BIN / "m5", "grade", str(folder / "in"), "--jobs", "2", "--out", str(folder / "out")], ROOT, env)
    print(
        f"hostile class run, m5 grade --jobs 2: {seconds:.1f} s for {len(paths)} submissions; peak RSS of a grading process {peak:.0f} MB"
    )


# ---------------------------------------------------------------- one sleeper in a class
# Blocks SIGALRM and sleeps in every call of every kernel (the finding: a class of five,
# --jobs 2, took 209 s with it instead of about 20).
SLEEPER = """

import signal as _signal
import time as _time


def _sleeping(_fn):
    def _asleep(*args, **kwargs):
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGALRM})
        _time.sleep(10**6)
        return _fn(*args, **kwargs)
    return _asleep


for _name in KERNELS:
    globals()[_name] = _sleeping(globals()[_name])
"""


def sleeper_class(folder: Path, size: int = 5, rounds: int = 3) -> None:
    """A class of ``size`` correct .py submissions, and the same class with one of them
    replaced by the sleeper, graded with ``m5 grade --jobs 2`` in turn, ``rounds`` times:
    what one sleeper adds to a class run (difference and ratio, per round)."""
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "M5_PROGRESS": "0"}
    clean, slept = folder / "clean", folder / "with_sleeper"
    for klass in (clean, slept):
        klass.mkdir(parents=True)
        for i in range(size):
            (klass / f"student{i}.py").write_text(CORRECT.read_text())
    (slept / "student0.py").write_text(CORRECT.read_text() + SLEEPER.replace("KERNELS", repr(KERNELS)))
    print(f"\none sleeper in a class of {size} (.py, m5 grade --jobs 2; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f})\n")
    print(
        "| round | clean class (s) | with one sleeper (s) | difference (s) | ratio | sleeper's own grading (s), score "
        "| a correct one's, median (s) | load average |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    diffs = []
    for r in range(rounds):
        a = run([BIN / "m5", "grade", str(clean), "--jobs", "2", "--out", str(folder / f"out-clean-{r}")], ROOT, env)
        b = run([BIN / "m5", "grade", str(slept), "--jobs", "2", "--out", str(folder / f"out-slept-{r}")], ROOT, env)
        diffs.append(b - a)
        own = {path.parent.name: json.loads(path.read_text()) for path in (folder / f"out-slept-{r}").glob("**/results.json")}
        sleeper = own.pop("student0.py", {})
        others = statistics.median(o.get("execution_time", 0.0) for o in own.values()) if own else float("nan")
        print(
            f"| {r + 1} | {a:.1f} | {b:.1f} | {b - a:+.1f} | {b / a:.2f} | {sleeper.get('execution_time', 0.0):.1f}, "
            f"{sleeper.get('score', '?')} | {others:.1f} | {os.getloadavg()[0]:.1f} |"
        )
    print(f"\nmedian difference: {statistics.median(diffs):+.1f} s (goal <= 30 s; before the idle watch, on 94739fe: +200 s)")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--class-size", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of nbgrader and every m5 variant")
    parser.add_argument("--keep", action="store_true", help="keep the temporary course folder")
    parser.add_argument(
        "--hostile",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="grade the hostile corpus and print the grader's time and peak RSS",
    )
    parser.add_argument(
        "--sleeper",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time a class with and without one submission that sleeps in every call",
    )
    parser.add_argument("--only", choices=["sleeper", "hostile"], help="run only that part (no nbgrader comparison, no large class)")
    return parser.parse_args(argv)


def run_only(args) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="m5-bench-"))
    try:
        if args.only == "sleeper":
            sleeper_class(scratch / "sleeper", rounds=args.rounds)
        else:
            hostile_corpus(scratch / "hostile")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def build_course(count: int) -> tuple[Path, dict, list[Path]]:
    """A throw-away nbgrader course with ``count`` filled submissions: (folder, env, notebooks)."""
    course = Path(tempfile.mkdtemp(prefix="m5-bench-"))
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "M5_PROGRESS": "0"}
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course}/gradebook.db'\n"
        "c.ExecutePreprocessor.timeout = 120\n"
    )
    helpers, kernels = functions(CORRECT)
    source = course / "source" / "ps1"
    source.mkdir(parents=True)
    nbformat.write(assignment_notebook(helpers, kernels), source / "kernels.ipynb")
    run([BIN / "nbgrader", "generate_assignment", "ps1", "--force"], course, env)
    released = nbformat.read(course / "release" / "ps1" / "kernels.ipynb", as_version=4)
    for i, (helper_code, chosen) in enumerate(submissions(count)):
        nb = nbformat.from_dict(json.loads(nbformat.writes(released)))
        for c in nb.cells:
            gid = c.metadata.get("nbgrader", {}).get("grade_id", "")
            if gid == "setup":
                c.source = helper_code
            elif gid.endswith("-answer"):
                c.source = chosen[gid[: -len("-answer")]]
        folder = course / "submitted" / f"s{i:03d}" / "ps1"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "kernels.ipynb")
    return course, env, sorted(course.glob("submitted/*/ps1/kernels.ipynb"))


VARIANTS = [
    ("m5 grade --jobs 1", ["--jobs", "1"]),
    ("m5 grade --jobs 2", ["--jobs", "2"]),
    ("m5 grade --jobs 1 --shrink", ["--jobs", "1", "--shrink"]),
    ("m5 grade --jobs 1 --fresh-sandbox", ["--jobs", "1", "--fresh-sandbox"]),
]


def time_rounds(course: Path, env: dict, notebooks: list[Path], rounds: int) -> list[dict[str, float]]:
    """Per round {label: seconds}. The host's speed drifts by 10-20 % within minutes: each
    round times the baseline and then every m5 variant, and the ratios are taken per round."""
    m5 = [BIN / "m5", "grade", *map(str, notebooks)]
    timed = []
    for r in range(rounds):
        times = {"nbgrader autograde": run([BIN / "nbgrader", "autograde", "ps1", "--create", "--force"], course, env)}
        for label, flags in VARIANTS:
            times[label] = run([*m5, *flags, "--out", str(course / f"m5-{r}-{len(times)}")], course, env)
        timed.append(times)
    return timed


def print_comparison(rounds: list[dict[str, float]], n: int, load_before: float) -> None:
    from autograder.grade.corpus_cache import load_corpus  # after the timed runs: its own load is not timed

    corpus = load_corpus()
    per_property = [sum(1 for case in kc.cases if case.prop is p) for kc in corpus.values() for p in kc.properties]
    calls = sum(len(kc.calls) for kc in corpus.values())
    main_props = [k for k in per_property if k >= 150]
    print(
        f"{n} notebook submissions, same files for both graders ({os.cpu_count()} cores; "
        f"load average {load_before:.2f} before the timed runs, {os.getloadavg()[0]:.2f} after; "
        f"{len(rounds)} rounds, each timing nbgrader then every m5 variant)\n"
    )
    print("| grader | per submission (s), median | per round | speed-up over nbgrader, median (per round) |")
    print("|---|---:|---:|---:|")
    base = [t["nbgrader autograde"] for t in rounds]
    print(
        f"| nbgrader autograde | {statistics.median(base) / n:.2f} | "
        f"{', '.join(f'{t / n:.2f}' for t in base)} | ({sum(len(v) for v in ASSERTS.values())} asserts) |"
    )
    for label, _ in VARIANTS:
        mine = [t[label] for t in rounds]
        ratios = [b / m for b, m in zip(base, mine)]
        print(
            f"| {label} | {statistics.median(mine) / n:.2f} | {', '.join(f'{t / n:.2f}' for t in mine)} | "
            f"**{statistics.median(ratios):.1f}x** ({', '.join(f'{x:.1f}' for x in ratios)}) |"
        )
    print(f"\ninputs checked per submission: nbgrader {sum(len(v) for v in ASSERTS.values())} asserts, m5 {calls} kernel calls")
    print(
        f"generated inputs per property: min {min(per_property)}, "
        f"{len(main_props)} of {len(per_property)} properties have >= 150 (bad-input properties use fixed lists)"
    )
    print_inputs_per_property(corpus)


def time_class(course: Path, env: dict, notebooks: list[Path], size: int) -> None:
    klass = course / "class"
    klass.mkdir()
    for i in range(size):
        shutil.copy(notebooks[i % len(notebooks)], klass / f"student{i:03d}.ipynb")
    t_class = run([BIN / "m5", "grade", str(klass), "--jobs", "2", "--out", str(course / "class-out")], course, env)
    print(f"\nclass of {size} notebooks, m5 grade --jobs 2: {t_class:.1f} s ({t_class / size:.2f} s per submission; goal <= 25 s)")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.only:
        return run_only(args)
    course, env, notebooks = build_course(args.submissions)
    # Warm the corpus cache so neither side pays a one-off build inside the timing.
    run([BIN / "m5", "grade", str(notebooks[0]), "--json", "--out", str(course / "warm")], course, env)
    load_before = os.getloadavg()[0]
    rounds = time_rounds(course, env, notebooks, args.rounds)
    print_comparison(rounds, len(notebooks), load_before)
    if args.class_size:
        time_class(course, env, notebooks, args.class_size)
    if args.hostile:
        hostile_corpus(course / "hostile")
    if args.sleeper:
        sleeper_class(course / "sleeper", rounds=args.rounds)
    if not args.keep:
        shutil.rmtree(course, ignore_errors=True)
    else:
        print(f"course folder: {course}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
