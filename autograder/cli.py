"""`m5`: the course package's command line (a thin layer over the stage packages).

    m5 grade PATH... [--out DIR] [--jobs N] [--json] [--lang en|ru]
    m5 check NOTEBOOK_OR_PY [--lang en|ru]
    m5 gradescope-bundle --out autograder.zip
    m5 lab [--profile smoke|full] [--section NAME...] [--seeds N] [--out DIR] [--pin]
    m5 release [--out DIR]
    m5 solutions [--lang en|ru|both] --out DIR
    m5 demo
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_USAGE = 0, 2


class UsageError(Exception):
    """Bad input to a command: printed as one line, exit status 2."""


def _submissions(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.suffix in (".ipynb", ".py") and not p.name.startswith("."))
        elif path.exists():
            found.append(path)
        else:
            raise UsageError(f"{raw}: no such file or directory")
    if not found:
        raise UsageError("no submissions (.ipynb or .py) found in " + ", ".join(paths))
    return found


def cmd_grade(args) -> int:
    from autograder.grade import pipeline, report, sandbox
    from autograder.grade.extract import SubmissionError, extract

    paths = _submissions(args.paths)
    if len(paths) == 1:  # a single unreadable submission is a usage error (exit 2)
        try:
            extract(paths[0], set(pipeline.KERNELS))
        except SubmissionError as exc:
            raise UsageError(str(exc)) from None
    iso = sandbox.isolation()
    if iso.warning and not args.json:
        print(iso.warning, file=sys.stderr)
    corpus = pipeline.load_corpus()
    bar = None
    if len(paths) > 1 and not args.json:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(paths), desc="grading", unit="submission", file=sys.stderr)
    # Shrinking gives the nicest counterexample but costs up to 2 s per failing submission:
    # on by default for one submission (a student's feedback), off for a class run.
    shrink = args.shrink if args.shrink is not None else len(paths) == 1
    results = pipeline.grade_many(paths, corpus, jobs=args.jobs, progress=bar.update if bar else None,
                                  lang=args.lang, shrink=shrink)
    if bar:
        bar.close()
    out = Path(args.out)
    for path, result in zip(paths, results):
        if result.error is None:
            report.write_results(result, out / path.stem, iso.warning)
    report.write_grades_csv(results, out / "grades.csv")
    if args.json and len(results) == 1:
        print(json.dumps(report.results_json(results[0], iso.warning), ensure_ascii=False, indent=2))
        return EXIT_OK
    lang = args.lang or "en"
    print(report.grade_table(results, lang))
    if len(results) > 1:
        print()
        print(report.summary_table([r for r in results if r.error is None], lang))
    print(f"\nresults: {out}/<submission>/results.json, {out}/grades.csv")
    return EXIT_OK


def cmd_check(args) -> int:
    from autograder.check import selfcheck

    return selfcheck.main(Path(args.path), lang=args.lang)


def cmd_gradescope_bundle(args) -> int:
    from autograder.export import gradescope

    path = gradescope.build_bundle(Path(args.out))
    print(f"wrote {path}")
    return EXIT_OK


def cmd_lab(args) -> int:
    from reference_impl import lab

    return lab.main(args.lab_args)


def cmd_release(args) -> int:
    from autograder.assign import release

    return release.main(Path(args.out))


def cmd_solutions(args) -> int:
    from autograder.export.solution_notebooks import solution_notebooks
    from autograder.export.solutions import build_solution_bundle

    written = build_solution_bundle(Path(args.out), lang=args.lang, notebooks=solution_notebooks(args.lang))
    print(f"wrote {len(written)} files to {args.out}")
    return EXIT_OK


def cmd_demo(args) -> int:
    from autograder import demo

    return demo.main()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="m5", description="Module 5 course package: grade, check, release, lab.")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade submissions with the hidden property tests (sandboxed)")
    g.add_argument("paths", nargs="+", help="notebooks (.ipynb), .py files, or folders of them")
    g.add_argument("--out", default="grades", help="output folder (default: grades)")
    g.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel")
    g.add_argument("--json", action="store_true", help="print results.json only (one submission)")
    g.add_argument("--lang", choices=["en", "ru"], help="feedback language (default: detected)")
    g.add_argument("--shrink", action=argparse.BooleanOptionalAction, default=None,
                   help="search for the smallest counterexample of each failed test (default: on for one "
                        "submission, off for several; off uses the smallest failing generated input)")
    g.set_defaults(func=cmd_grade)

    c = sub.add_parser("check", help="run the public self-check tests on your notebook or .py")
    c.add_argument("path")
    c.add_argument("--lang", choices=["en", "ru"])
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("gradescope-bundle", help="write the Gradescope autograder zip")
    b.add_argument("--out", default="autograder.zip")
    b.set_defaults(func=cmd_gradescope_bundle)

    lab = sub.add_parser("lab", help="run the capstone lab (figures, report, pinned artifacts)", add_help=False)
    lab.add_argument("lab_args", nargs=argparse.REMAINDER)
    lab.set_defaults(func=cmd_lab)

    r = sub.add_parser("release", help="build the student release from the instructor sources")
    r.add_argument("--out", default="release")
    r.set_defaults(func=cmd_release)

    s = sub.add_parser("solutions", help="build the solution bundle (HTML) for students")
    s.add_argument("--lang", choices=["en", "ru", "both"], default="both")
    s.add_argument("--out", required=True)
    s.set_defaults(func=cmd_solutions)

    d = sub.add_parser("demo", help="grade the bundled example submissions and show the results")
    d.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lab"]:
        # argparse.REMAINDER loses a sub-command's arguments when the first of them is
        # an option (`m5 lab --profile full`), so the lab parses its own command line.
        return cmd_lab(argparse.Namespace(lab_args=argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "jobs", 1) is not None and getattr(args, "jobs", 1) < 1:
        parser.error("--jobs must be at least 1")
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"m5 {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
