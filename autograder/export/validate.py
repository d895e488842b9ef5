"""`m5 validate`: a dry run before release (like ``nbgrader validate`` or ``otter assign``'s test run).

For each language (``--lang``, both by default) it grades, with the grader students meet:

1. ``source``: the instructor notebook ``source/module05_<lang>/m05_assignment_<lang>.ipynb``:
   every automatic point (120), graded without error, every cell loading;
2. ``release``: the blank student notebook ``release/module05_<lang>/m05_assignment_<lang>.ipynb``:
   0 points, yet read and graded (every test runs and fails), every cell loading;
3. ``solutions``: the worked-solution notebook that ``m5 solutions`` renders
   (``solutions/notebooks/``, built by :mod:`.solution_notebooks`): every automatic point;
4. ``gradescope``: the Gradescope zip (:mod:`.gradescope`, built from this checkout unless one
   is given) unpacked into a temporary ``autograder/{source,submission,results}`` layout and its
   ``run_autograder`` run on the source notebook: results.json's score and every test's score
   equal to step 1's.

The notebooks are graded in one class run (:func:`autograder.grade.classrun.grade_found`:
the sandbox; student code never runs in this process); ``run_autograder`` runs in a process
of its own, as on Gradescope. The steps: :func:`plan` the checks, :func:`grade_notebooks`
and :func:`run_gradescope`, :func:`compare` with what is expected, :func:`table` and
:func:`difference_lines` to report. The folders checked are parameters (:class:`Roots`), so
a copy with a broken notebook can be validated without touching the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from autograder.export.gradescope import build_bundle as build
from autograder.grade import discover, outputs, pipeline, report, sandbox
from autograder.grade.cache import cache_dir
from autograder.grade.classrun import grade_found
from autograder.grade.report import for_terminal
from autograder.grade.score import assignment_total

PROJECT = Path(__file__).resolve().parents[2]
LANGS = ("en", "ru")
KINDS = ("source", "release", "solutions", "gradescope")
NOTEBOOK = "m05_assignment_{lang}.ipynb"  # autograder.grade.written.NOTEBOOKS["assignment"]
FOLDER = "module05_{lang}"  # one nbgrader assignment per language (autograder.assign.release)
GRADESCOPE_TIMEOUT = 900  # seconds per run_autograder: a guard against hangs
SHOWN_TESTS = 3  # failing test names per difference line


class ValidateError(Exception):
    """Bad input to ``m5 validate`` (a missing bundle, an --out that is a file): one line, exit 2."""


@dataclass(frozen=True)
class Roots:
    """The folders validated: ``source/`` and ``release/`` (``module05_<lang>/`` in each), the
    solution notebooks' folder, and the Gradescope zip (None: built from this checkout)."""

    source: Path
    release: Path
    solutions: Path
    bundle: Path | None = None

    @classmethod
    def default(cls, bundle: Path | None = None) -> Roots:
        from autograder.export.solution_notebooks import NOTEBOOKS_DIR  # where `m5 solutions` reads them

        return cls(PROJECT / "source", PROJECT / "release", NOTEBOOKS_DIR, bundle)


@dataclass(frozen=True)
class Check:
    """One notebook to grade (``kind`` one of KINDS); a ``gradescope`` check grades the source
    notebook through the bundle and is compared with the ``source`` check's outcome."""

    kind: str
    lang: str
    notebook: Path


@dataclass(frozen=True)
class Outcome:
    """What grading one check gave: score, maximum, every test (name, score, maximum) in
    results.json's order, the grading error (None: graded), the grader's notes on the
    notebook (cells that failed to load, magics not run), and results.json itself."""

    score: float
    max_score: float
    tests: tuple[tuple[str, float, float], ...] = ()
    error: str | None = None
    notes: tuple[str, ...] = ()
    document: dict = field(default_factory=dict, compare=False)

    @classmethod
    def failed(cls, error: str) -> Outcome:
        return cls(0.0, 0.0, error=error)

    @classmethod
    def from_document(cls, document: dict, error: str | None = None, notes: tuple[str, ...] = ()) -> Outcome:
        """From a results.json (what ``m5 grade`` writes and what Gradescope reads); entries
        worth no points (a summary line for the student) are not tests."""
        entries = [t for t in document.get("tests") or [] if isinstance(t, dict) and "max_score" in t]
        tests = tuple((str(t.get("name", "")), float(t.get("score", 0.0)), float(t["max_score"])) for t in entries)
        return cls(float(document.get("score", 0.0)), sum(t[2] for t in tests), tests, error, notes, document)


@dataclass(frozen=True)
class Difference:
    """One failed check: what was checked, expected and got, and the tests concerned."""

    check: Check
    what: str
    expected: str
    got: str
    tests: tuple[str, ...] = ()


@dataclass
class Validation:
    checks: list[Check]
    outcomes: dict[Check, Outcome]
    differences: list[Difference]
    bundle: str  # the Gradescope zip checked ("" when none was)

    @property
    def ok(self) -> bool:
        return not self.differences


# ---------------------------------------------------------------- plan
def plan(langs: tuple[str, ...], roots: Roots, kinds: tuple[str, ...] = KINDS) -> list[Check]:
    """The checks, language by language, in KINDS' order."""
    where = {
        "source": lambda lang: roots.source / FOLDER.format(lang=lang),
        "release": lambda lang: roots.release / FOLDER.format(lang=lang),
    }
    where["gradescope"] = where["source"]
    where["solutions"] = lambda lang: roots.solutions
    return [Check(kind, lang, where[kind](lang) / NOTEBOOK.format(lang=lang)) for lang in langs for kind in KINDS if kind in kinds]


# ---------------------------------------------------------------- grade
def grade_notebooks(checks: list[Check], tick=lambda: None) -> dict[Check, Outcome]:
    """Grade the notebooks of ``checks`` in one class run; a missing notebook, or one the
    grader skips or refuses, is an outcome with an error."""

    outcomes: dict[Check, Outcome] = {}
    present = []
    for check in checks:
        if check.notebook.is_file():
            present.append(check)
        else:
            outcomes[check] = Outcome.failed("missing: no such file")
            tick()
    if not present:
        return outcomes
    found = discover.discover([c.notebook for c in present], set(pipeline.KERNELS))
    skipped = {os.path.abspath(f.path): f.skip for f in found.skipped}
    results = {}
    graded = grade_found(found.submissions, jobs=1, lang=None, shrink=False, on_result=lambda index, result: tick())
    for item, result in zip(found.submissions, graded):
        results[os.path.abspath(item.path)] = result
    for check in present:
        key = os.path.abspath(check.notebook)
        if key in skipped:
            outcomes[check] = Outcome.failed(f"not graded: {skipped[key]}")
            tick()
            continue
        result = results[key]
        notes = tuple(note.get("en", "") for note in result.notes)
        outcomes[check] = Outcome.from_document(report.results_json(result), result.error, notes)
    return outcomes


def run_gradescope(bundle: Path, notebook: Path, work: Path, timeout: float = GRADESCOPE_TIMEOUT) -> Outcome:
    """Unpack ``bundle`` into ``work/autograder/source`` (Gradescope's /autograder relocated),
    upload ``notebook`` to ``submission/``, run ``run_autograder`` in its own process and
    read ``results/results.json``."""

    root = work / "autograder"
    for name in ("source", "submission", "results"):
        (root / name).mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(bundle) as zf:
            zf.extractall(root / "source")
    except (zipfile.BadZipFile, OSError) as exc:
        return Outcome.failed(f"the bundle {bundle} cannot be unpacked: {exc}")
    shutil.copy(notebook, root / "submission" / notebook.name)
    # The corpus this checkout built (setup.sh builds the image's own): no 30-60 s rebuild per run.
    env = {**os.environ, "M5_GS_ROOT": str(root), "M5_PYTHON": sys.executable, "M5_CACHE_DIR": str(cache_dir())}
    try:
        proc = subprocess.run(
            ["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True, timeout=timeout, cwd=work
        )
    except subprocess.TimeoutExpired:
        return Outcome.failed(f"run_autograder ran past {timeout:g} s")
    results = root / "results" / "results.json"
    try:
        document = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Outcome.failed(f"no readable results.json ({exc}); run_autograder said: {_last_line(proc.stderr)}")
    error = None
    if "Traceback" in proc.stderr:
        error = f"run_autograder failed: {_last_line(proc.stderr)}"
    elif not Outcome.from_document(document).tests:
        error = f"results.json has no tests: {_last_line(str(document.get('output', '')))}"
    return Outcome.from_document(document, error)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(nothing)"


def build_bundle(into: Path) -> Path:
    """The Gradescope zip of this checkout, as ``m5 gradescope-bundle`` writes it."""

    return build(into / "autograder.zip")


# ---------------------------------------------------------------- compare
def _names(tests, shown: int = SHOWN_TESTS) -> tuple[str, ...]:
    names = list(dict.fromkeys(tests))
    return tuple(names[:shown]) + ((f"and {len(names) - shown} more",) if len(names) > shown else ())


def _points(outcome: Outcome) -> str:
    return f"{outcome.score:g}/{outcome.max_score:g}"


def compare(checks: list[Check], outcomes: dict[Check, Outcome], total: float) -> list[Difference]:
    """Every way the outcomes differ from what is expected: ``source`` and ``solutions`` score
    ``total``, ``release`` 0, all out of ``total``, graded without error with every cell
    loading; ``gradescope`` gives the ``source`` check's score and per-test scores."""
    full = {"source": total, "solutions": total, "release": 0.0}
    differences = []
    for check in checks:
        got = outcomes[check]
        if got.error:
            differences.append(Difference(check, "graded", "no grading error", got.error))
            continue
        if check.kind == "gradescope":
            differences += _compare_gradescope(check, got, outcomes.get(Check("source", check.lang, check.notebook)))
            continue
        if got.max_score != total:
            differences.append(Difference(check, "maximum", f"{total:g}", f"{got.max_score:g}"))
        if got.score != full[check.kind]:
            # full marks expected: the tests that failed; 0 expected: those that passed
            concerned = [name for name, score, most in got.tests if (score < most if full[check.kind] else score > 0)]
            differences.append(Difference(check, "score", f"{full[check.kind]:g}/{total:g}", _points(got), _names(concerned)))
        if got.notes:
            differences.append(Difference(check, "cells load", "no note from the grader", got.notes[0]))
    return differences


def _compare_gradescope(check: Check, got: Outcome, source: Outcome | None) -> list[Difference]:
    if source is None or source.error:
        return [Difference(check, "compared", "the source notebook graded", "it was not: nothing to compare with")]
    differences = []
    expected = {name: score for name, score, _ in source.tests}
    seen = {name: score for name, score, _ in got.tests}
    changed = [name for name in [*expected, *seen] if expected.get(name) != seen.get(name)]
    if got.score != source.score:
        differences.append(Difference(check, "score", f"{_points(source)} (as graded here)", _points(got), _names(changed)))
    elif changed or [t[0] for t in got.tests] != [t[0] for t in source.tests]:
        what = f"{len(dict.fromkeys(changed))} of {len(source.tests)} differ" if changed else "the same scores in another order"
        differences.append(Difference(check, "per-test scores", f"{len(source.tests)} tests as graded here", what, _names(changed)))
    return differences


# ---------------------------------------------------------------- report
def _shown(path: Path) -> str:

    try:
        text = os.path.relpath(path)
    except ValueError:
        text = str(path)
    return for_terminal(str(path) if text.startswith("..") else text)


def difference_lines(differences: list[Difference]) -> list[str]:
    """One line per difference: the notebook, the check, expected vs got, the first tests concerned."""

    lines = []
    for d in differences:
        line = f"FAIL {_shown(d.check.notebook)} [{d.check.kind} {d.check.lang}] {d.what}: expected {d.expected}, got {d.got}"
        if d.tests:
            line += "; tests: " + ", ".join(d.tests)
        lines.append(for_terminal(line))
    return lines


def table(validation: Validation) -> str:
    """What was checked: one row per check (kind, language, score, expected, result, notebook)."""
    failed = {d.check for d in validation.differences}
    rows = [("check", "lang", "score", "expected", "result", "notebook")]
    for check in validation.checks:
        got = validation.outcomes[check]
        expected = {"release": "0", "gradescope": "=source"}.get(check.kind, "full")
        rows.append(
            (
                check.kind,
                check.lang,
                "error" if got.error else _points(got),
                expected,
                "FAIL" if check in failed else "ok",
                _shown(check.notebook),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in rows]
    if validation.bundle:
        lines.append(f"gradescope: {validation.bundle}, run on the source notebook")
    return "\n".join(lines)


def write(validation: Validation, out: Path) -> Path:
    """``out/<kind>_<lang>/results.json`` per check and ``out/validation.json`` (the rows and the differences)."""

    for check in validation.checks:
        document = validation.outcomes[check].document
        if document:
            folder = out / f"{check.kind}_{check.lang}"
            folder.mkdir(parents=True, exist_ok=True)
            outputs.write_json(folder / "results.json", document, indent=2)
    failed = {d.check for d in validation.differences}
    rows = [
        {
            "check": c.kind,
            "lang": c.lang,
            "notebook": str(c.notebook),
            "score": validation.outcomes[c].score,
            "max_score": validation.outcomes[c].max_score,
            "error": validation.outcomes[c].error,
            "ok": c not in failed,
        }
        for c in validation.checks
    ]
    summary = {"ok": validation.ok, "bundle": validation.bundle, "checks": rows, "differences": difference_lines(validation.differences)}
    out.mkdir(parents=True, exist_ok=True)
    return outputs.write_json(out / "validation.json", summary, indent=2)


# ---------------------------------------------------------------- the command
def validate(langs: tuple[str, ...], roots: Roots, kinds: tuple[str, ...] = KINDS, tick=lambda: None) -> Validation:
    """Plan, grade and compare (nothing printed, nothing written)."""

    checks = plan(langs, roots, kinds)
    outcomes = grade_notebooks([c for c in checks if c.kind != "gradescope"], tick)
    gradescope = [c for c in checks if c.kind == "gradescope"]
    bundle = ""
    if gradescope:
        with tempfile.TemporaryDirectory(prefix="m5-validate-") as tmp:
            zip_path = roots.bundle or build_bundle(Path(tmp))
            bundle = str(roots.bundle) if roots.bundle else "the bundle m5 gradescope-bundle builds from this checkout"
            for check in gradescope:
                if check.notebook.is_file():
                    work = Path(tempfile.mkdtemp(prefix=f"gradescope-{check.lang}-", dir=tmp))
                    outcomes[check] = run_gradescope(zip_path, check.notebook, work)
                else:
                    outcomes[check] = Outcome.failed("missing: no such file")
                tick()
    return Validation(checks, outcomes, compare(checks, outcomes, assignment_total()), bundle)


def refuse_bad_input(roots: Roots, out: Path | None) -> None:
    """ValidateError (exit 2, nothing written) for a bundle that is not a file or an --out that is not a folder."""
    if roots.bundle is not None and not roots.bundle.is_file():
        raise ValidateError(f"--bundle {roots.bundle}: no such file (write one with m5 gradescope-bundle)")
    if out is not None and out.exists() and not out.is_dir():
        raise ValidateError(f"--out {out} is a file, not a folder")


def main(langs: tuple[str, ...] = LANGS, out: Path | None = None, roots: Roots | None = None, kinds: tuple[str, ...] = KINDS) -> int:
    """``m5 validate``: 0 everything as expected; 1 some check failed (one line each on stdout);
    3 the sandbox cannot work here. Raises ValidateError on bad input, before anything is written."""

    roots = roots or Roots.default()
    refuse_bad_input(roots, out)
    iso = sandbox.isolation()
    if iso.fatal:  # every notebook would score 0
        print(f"m5 validate: {iso.fatal}", file=sys.stderr)
        return 3
    if iso.warning:
        print(iso.warning, file=sys.stderr)
    bar = None
    if sys.stderr.isatty():
        bar = tqdm(total=len(plan(langs, roots, kinds)), desc="validating", unit="notebook", file=sys.stderr)
    try:
        validation = validate(langs, roots, kinds, tick=(lambda: bar.update(1)) if bar else (lambda: None))
    finally:
        if bar:
            bar.close()
    print(table(validation))
    if out is not None:
        print(f"\nresults: {_shown(write(validation, out))} and {_shown(out)}/<check>_<lang>/results.json")
    if validation.ok:
        print(f"\nm5 validate: all {len(validation.checks)} checks as expected")
        return 0
    print()
    print("\n".join(difference_lines(validation.differences)))
    failed = len({d.check for d in validation.differences})
    print(f"m5 validate: {failed} of {len(validation.checks)} checks failed", file=sys.stderr)
    return 1
