"""`m5`: the course package's command line (a thin layer over the stage packages).

    m5 --version
    m5 grade PATH... [--out DIR] [--update] [--jobs N] [--json] [--lang en|ru] [--csv-format m5|moodle|canvas] [--shard K/N]
    m5 merge SHARD_OUT... --out DIR [--csv-format m5|moodle|canvas]
    m5 review GRADES_DIR [--lang en|ru] [--marks FILLED_CSV] [--csv-format ...] [--force] [--anonymize]
    m5 adjust GRADES_DIR STUDENT POINTS --reason TEXT [--item ITEM]
    m5 feedback GRADES_DIR [--out DIR] [--lang en|ru]
    m5 check NOTEBOOK_OR_PY [--lang en|ru]
    m5 gradescope-bundle [--out autograder.zip] [--visibility after_due_date|after_published|hidden|visible]
    m5 lab [--profile smoke|full] [--section NAME...] [--seeds N] [--out DIR] [--pin] [--lang en|ru]...
    m5 release [--out DIR]
    m5 solutions [--lang en|ru]... --out DIR
    m5 validate [--lang en|ru]... [--out DIR] [--bundle ZIP]
    m5 demo
    m5 course init DIR [--course-id ID] [--exchange DIR] [--lang en|ru]... [--force]

One convention (README, "Command line"): ``--lang en|ru`` everywhere, repeated where a command
can write both languages; exit status 0 done, 1 done but some submission could not be graded
or a check failed, 2 refused (bad arguments or input, nothing written), listed in every
``--help``; no command writes over a file an instructor edits without ``--force``.

Each command imports its stage inside its own function: ``m5 --help``, ``m5 check`` and
the start of ``m5 grade`` (whose first worker starts before the grading modules load,
see :class:`_EarlyStart`) do not pay for the grader, Hypothesis or torch.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import threading
from pathlib import Path

# 0 done; 1 done, but some submission could not be graded or a check failed; 2 refused (bad
# arguments or input, nothing written); 3 the sandbox cannot work under this machine's limits.
EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_ISOLATION = 0, 1, 2, 3
# m5's own sheet, then grade.report.LMS_FORMATS (spelled out: the parser must not import the grader)
CSV_FORMATS = ("m5", "moodle", "canvas")
# Gradescope's test visibilities, the bundle's default first (export.gradescope.VISIBILITIES, spelled out)
GS_VISIBILITIES = ("after_due_date", "after_published", "hidden", "visible")
LANGS = ("en", "ru")
# What each --help says under "Exit status" (the codes above, in words).


def refused(what: str = "bad arguments or input") -> str:
    return f"2 refused ({what}; one line says why, nothing written)"


EXITS_DONE = f"0 done; {refused()}"
LANG_ONE = dict(choices=LANGS)  # --lang en|ru: one language
LANG_EACH = dict(choices=LANGS, action="append")  # --lang en|ru, repeated for both


class UsageError(Exception):
    """Bad input to a command: printed as one line, exit status 2."""


def version() -> str:
    """The installed package's version (the source tree's when not installed)."""
    from importlib.metadata import PackageNotFoundError, version as installed

    try:
        return installed("rl-llm-m5")
    except PackageNotFoundError:
        return "unknown"


class _ShowVersion(argparse.Action):
    """``--version``, looked up only when asked: the lookup reads the installed packages'
    metadata, 30-60 ms that every other command would pay too."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help="show the version and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {version()}")
        parser.exit()


def find_submissions(paths: list[str], skipped: list | None = None, root: Path | None = None):
    """The discovery of ``paths`` (see autograder.grade.discover; ``root``: the class folder the
    relative paths are taken from), skipped notebooks reported on stderr one line each (and
    appended to ``skipped``); a usage error when nothing is left to grade."""
    from autograder.grade import discover, pipeline
    from autograder.grade.report import for_terminal

    try:
        found = discover.discover(paths, set(pipeline.KERNELS), root=root)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    for item in found.skipped:
        print(f"{for_terminal(item.relative)}: {item.skip}", file=sys.stderr)
    if skipped is not None:
        skipped += found.skipped
    if not found.submissions:
        raise UsageError("no submissions (assignment notebooks or .py files) found in " + ", ".join(paths))
    return found.submissions


class _EarlyStart:
    """The sandbox probe and, for a one-at-a-time run, the first submission's worker,
    started in a thread as `m5 grade` begins. Both mostly wait on child processes (about
    0.1 s and 0.2-0.3 s), so they overlap the import of the grading modules, the
    discovery of the submissions and the corpus load instead of following them.
    Whatever fails here is met again, and reported, when the main thread asks for it;
    what failed is also said on stderr (one line), so a fault in the early start itself
    shows instead of only making the run slower."""

    def __init__(self, want_worker: bool):
        from autograder.grade import sandbox

        self._worker = self._cache = self.error = None
        self._probed, self._imported = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._start, args=(sandbox, want_worker), name="m5-early-start", daemon=True)
        self._thread.start()
        try:
            if want_worker:  # while the probe runs (imported here, never in the thread)
                from autograder.grade import cache

                self._cache = cache
        finally:
            self._imported.set()

    def _start(self, sandbox, want_worker: bool) -> None:
        try:
            try:
                fatal = sandbox.isolation().fatal
            finally:
                self._probed.set()
            self._imported.wait()
            if want_worker and not fatal and self._cache is not None:
                self._worker = self._cache.first_worker()
        except BaseException as error:  # noqa: BLE001 - kept and reported by worker()
            self.error = error

    def wait_for_probe(self) -> None:
        """After this, sandbox.isolation() answers from its cache (never probes twice at once)."""
        self._probed.wait()

    def worker(self):
        """Wait for the start; the worker (None if none), handed over to the caller."""
        self._thread.join()
        if self.error is not None:
            from autograder.grade.report import for_terminal

            what = f"{type(self.error).__name__}: {self.error}"
            print(f"m5 grade: the early start failed ({for_terminal(what)}); its work is done again in order", file=sys.stderr)
            self.error = None  # said once
        worker, self._worker = self._worker, None
        return worker

    def close(self) -> None:
        """Wait for the start and close a worker nobody took."""
        worker = self.worker()
        if worker is not None:
            worker.close()


def cmd_grade(args) -> int:
    early = _EarlyStart(want_worker=args.jobs <= 1 and not args.fresh_sandbox)
    try:
        return _grade(args, early)
    finally:
        early.close()


def _gradebook_root(args) -> Path | None:
    """The class folder of the gradebook ``--update`` regrades into (None for a new gradebook);
    a usage error for a gradebook given without --update, or --update without one."""
    from autograder.grade import gradebook

    out = Path(args.out)
    if args.update:
        if args.shard is not None:
            raise UsageError("--update regrades into a whole gradebook, not a shard: drop --shard")
        try:
            book = gradebook.load(out)
        except gradebook.GradebookError as exc:
            raise UsageError(f"--update: {exc}") from None
        root = book.document.get("root")
        if not root:
            raise UsageError(f"--update: {out}/grades.json does not say which class folder it was graded from: grade the class again")
        return Path(root)
    if gradebook.exists(out):
        raise UsageError(
            f"{out} already holds a gradebook: add --update to regrade these submissions into it (every other row, "
            "mark and adjustment is kept), or choose another --out"
        )
    return None


def _submission_times(args):
    """What finds each submission's time (:func:`late.submission_time`), the policy and --times checked
    first (a usage error naming the file, row and field)."""
    from autograder.grade import gradebook, late

    try:
        if args.policy:
            policy = late.read_policy(Path(args.policy))
        elif args.update:
            policy = gradebook.load(Path(args.out)).policy
        else:
            policy = None
        tz = late.zone(policy.timezone if policy else "UTC", "timezone")
        times = late.read_times(Path(args.times), tz) if args.times else {}
    except (late.PolicyError, gradebook.GradebookError) as exc:
        raise UsageError(str(exc)) from None
    return lambda item: late.submission_time(item.relative, item.student, item.path, item.timestamp, times, tz)


def _refuse_two_of_one_student(found) -> None:
    """Two files of one student in one assignment and language (nbgrader's layout names both; the
    English and the Russian notebook of one assignment may both be there, the final mark takes the
    better): which one counts is the instructor's call, not the grader's."""
    from autograder.grade.report import for_terminal, module_of

    seen: dict = {}
    for item in found:
        if item.error is None and item.assignment:
            stem = Path(item.relative).stem
            language = stem[len(module_of(stem)) :]  # "_en", "_ru" or ""
            first = seen.setdefault((item.student, item.assignment, language), item.relative)
            if first != item.relative:
                raise UsageError(
                    f"{for_terminal(first)} and {for_terminal(item.relative)}: two submissions of {for_terminal(item.student)!r} "
                    f"in {for_terminal(item.assignment)!r}: keep one (or grade them apart)"
                )


def _grade(args, early: _EarlyStart) -> int:
    from autograder.grade import classrun, discover, gradebook, pipeline, report, sandbox, shards
    from autograder.grade.extract import SubmissionError, extract

    try:
        shard = None if args.shard is None else shards.parse_shard(args.shard)
    except shards.ShardError as exc:
        raise UsageError(str(exc)) from None
    root = _gradebook_root(args)
    submitted = _submission_times(args)
    skipped: list = []
    found = find_submissions(args.paths, skipped, root=root)
    _refuse_two_of_one_student(found)
    if root is None:
        named = [Path(p) for p in args.paths]
        root = discover.common_root([p for p in named if not p.is_dir()], [p for p in named if p.is_dir()])
    if len(found) == 1 and shard is None:  # a single unreadable submission is a usage error (exit 2)
        if found[0].error:
            raise UsageError(report.for_terminal(found[0].error))
        try:
            extract(found[0].path, set(pipeline.KERNELS))
        except SubmissionError as exc:
            raise UsageError(report.for_terminal(str(exc))) from None
    early.wait_for_probe()
    iso = sandbox.isolation()
    fatal = iso.fatal
    if fatal:  # limits the grader cannot work with: grading would silently score 0
        print(f"m5 grade: {fatal}", file=sys.stderr)
        return EXIT_ISOLATION
    if iso.warning and not args.json:
        print(iso.warning, file=sys.stderr)
    bar = None
    if len(found) > 1 and not args.json and sys.stderr.isatty():
        from tqdm.auto import tqdm

        bar = tqdm(total=len(found), desc="grading", unit="submission", file=sys.stderr)
    # Shrinking gives the nicest counterexample but costs up to 2 s per failing submission:
    # on by default for one submission (a student's feedback), off for a class run.
    shrink = args.shrink if args.shrink is not None else len(found) == 1
    out = Path(args.out)
    if args.policy:
        gradebook.set_policy(out, Path(args.policy))  # checked above; read again by every later command
    try:
        graded_run = classrun.grade_into(
            found,
            out,
            jobs=args.jobs,
            lang=args.lang,
            shrink=shrink,
            isolation_warning=iso.warning,
            csv_format=args.csv_format,
            progress=bar.update if bar else None,
            recycle=not args.fresh_sandbox,
            first=early.worker,
            shard=shard,
            also_answers=skipped,
            root=Path(os.path.abspath(root)),
            update=args.update,
            submitted=submitted,
        )
    except gradebook.GradebookError as exc:  # an extensions.csv or adjustments.csv naming no student of the class
        raise UsageError(f"{exc} (the results.json files are kept: fix it, then run m5 sheets {args.out})") from None
    results, written, unchanged = graded_run
    if bar:
        bar.close()
    if args.json:
        documents = [report.results_json(r, iso.warning) for r in results]
        if len(documents) > 1:
            documents = [
                {
                    "submission": r.label,
                    "student": r.student,
                    "assignment": r.assignment,
                    "language": r.language,
                    "timestamp": r.timestamp,
                    "results_file": str(written[i]),
                    **doc,
                }
                for i, (r, doc) in enumerate(zip(results, documents))
            ]
        print(report.dump_json(documents if len(documents) > 1 else documents[0]))
        return EXIT_OK if all(r.error is None for r in results) else EXIT_INCOMPLETE
    lang = args.lang or "en"
    print(report.grade_table(results, lang))
    graded = [r for r in results if r.error is None]
    if len(graded) > 1:
        print()
        print(report.summary_table(graded, lang))
    for label in unchanged:
        print(f"{report.for_terminal(label)}: unchanged since it was last graded (same file): the same score")
    print(f"\nresults: {report.for_terminal(out)}/<submission>/results.json, {report.for_terminal(out / 'grades.csv')}")
    not_graded = len(results) - len(graded)
    if not_graded:
        print(f"m5 grade: {not_graded} of {len(results)} submissions could not be graded (their rows say why)", file=sys.stderr)
    return EXIT_OK if not not_graded else EXIT_INCOMPLETE


def cmd_merge(args) -> int:
    from autograder.grade import gradebook, merge, shards

    try:
        rows = merge.merge_shards([Path(f) for f in args.folders], Path(args.out), args.csv_format, args.lang or "en")
    except (shards.ShardError, gradebook.GradebookError) as exc:
        raise UsageError(str(exc)) from None
    print(f"merged {len(args.folders)} shards, {len(rows)} submissions, into {args.out}/grades.csv")
    return EXIT_OK


def cmd_review(args) -> int:
    from autograder.export import anonymize, review

    try:
        if args.marks:
            path = review.merge_marks(Path(args.grades_dir), Path(args.marks), args.csv_format)
            print(f"marks merged into {path}")
        elif args.anonymize:
            files = review.write_review(Path(args.grades_dir), args.lang or "en", force=args.force, anonymize=True)
            print(
                f"wrote {files[0].parent} under pseudonyms (review pages, class report, similarity pairs) and {files[-1]}; "
                f"the pseudonyms are in {Path(args.grades_dir) / anonymize.KEY_FILE}: keep it to yourself"
            )
        else:
            files = review.write_review(Path(args.grades_dir), args.lang or "en", force=args.force)
            print(f"wrote {files[0]} ({len(files) - 2} questions) and {files[-1]}: fill the marks, then --marks")
    except review.ReviewError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK


def cmd_adjust(args) -> int:
    from autograder.grade import gradebook

    try:
        entry = gradebook.add_adjustment(Path(args.grades_dir), args.student, args.points, args.reason, args.item)
    except gradebook.GradebookError as exc:
        raise UsageError(str(exc)) from None
    print(f"{entry['student']}: {entry['points']} points ({entry['reason']}); sheets rebuilt in {args.grades_dir}")
    return EXIT_OK


FEEDBACK_OUT = "GRADES_DIR/feedback"  # --out's default: the folder feedback/ inside the gradebook


def cmd_feedback(args) -> int:
    from autograder.export import feedback, feedback_lms

    out = None if args.out == FEEDBACK_OUT else Path(args.out)
    try:
        done = feedback.build_feedback(Path(args.grades_dir), out, args.lang)
    except feedback.FeedbackError as exc:
        raise UsageError(str(exc)) from None
    folder = out if out is not None else Path(args.grades_dir) / feedback.FEEDBACK_DIR
    print(f"wrote {done.pages} feedback pages and {feedback.INDEX_NAME} (for you, not for students) to {folder}")
    for name, package in done.packages.items():
        print(feedback_lms.summary(name, package))
    return EXIT_OK


def cmd_sheets(args) -> int:
    from autograder.grade import gradebook

    try:
        files = gradebook.rebuild(Path(args.grades_dir), args.csv_format)
    except gradebook.GradebookError as exc:
        raise UsageError(str(exc)) from None
    print("rebuilt " + ", ".join(str(f) for f in files))
    return EXIT_OK


def cmd_check(args) -> int:
    from autograder.check import selfcheck

    return selfcheck.main(Path(args.path), lang=args.lang)


def cmd_gradescope_bundle(args) -> int:
    from autograder.export import gradescope

    path = gradescope.build_bundle(Path(args.out), visibility=args.visibility)
    print(f"wrote {path} (test visibility: {args.visibility})")
    return EXIT_OK


def cmd_lab(args) -> int:
    from reference_impl import lab

    return lab.main_parsed(args)


def cmd_release(args) -> int:
    from autograder.assign import release

    return release.main(Path(args.out))


def cmd_course(args) -> int:
    from autograder.assign.course import CourseError, init_course, next_steps

    try:
        written = init_course(
            args.folder, course_id=args.course_id, exchange=args.exchange, force=args.force, langs=_langs(args), policy=_policy_table(args)
        )
    except CourseError as exc:
        raise UsageError(str(exc)) from None
    course = written[-1].parent
    print(f"course ready in {course}: {', '.join(str(p.relative_to(course)) for p in written)}")
    print("next:\n" + next_steps(course, _langs(args)))
    return EXIT_OK


POLICY_OPTIONS = {"timezone": "timezone", "grace_minutes": "grace-minutes", "penalty_percent": "penalty-percent", "per": "per",
                  "cap_percent": "cap-percent"}  # fmt: skip


def _policy_table(args) -> dict | None:
    """The [policy] table of ``m5 course init --due ...`` (None without --due)."""
    given = {key: getattr(args, key) for key in POLICY_OPTIONS if getattr(args, key) is not None}
    if args.due is None:
        if given:
            raise UsageError(f"--{POLICY_OPTIONS[next(iter(given))]} is part of the late policy: give --due too")
        return None
    return {"due": args.due, **given}


def cmd_solutions(args) -> int:
    from autograder.export.solution_notebooks import solution_notebooks
    from autograder.export.solutions import build_solution_bundle

    langs = _langs(args)
    lang = langs[0] if len(langs) == 1 else "both"
    written = build_solution_bundle(Path(args.out), lang=lang, notebooks=solution_notebooks(lang))
    print(f"wrote {len(written)} files to {args.out}")
    return EXIT_OK


def cmd_validate(args) -> int:
    from autograder.export import validate

    try:
        roots = validate.Roots.default(Path(args.bundle) if args.bundle else None)
        return validate.main(_langs(args), Path(args.out), roots)
    except validate.ValidateError as exc:
        raise UsageError(str(exc)) from None


def _langs(args) -> tuple[str, ...]:
    """The languages of a command that can write both (``--lang`` repeated; both when not given)."""
    return tuple(dict.fromkeys(args.lang or LANGS))


def cmd_demo(args) -> int:
    from autograder import demo

    return demo.main()


def _subcommand(
    sub, name: str, summary: str, details: str, example: str, func, arguments=(), exits: str = EXITS_DONE, **kwargs
) -> argparse.ArgumentParser:
    """A sub-command whose --help gives its purpose, arguments with defaults, its exit
    statuses and an example; ``arguments`` are (flags, add_argument options) pairs."""
    parser = sub.add_parser(
        name,
        help=summary,
        description="\n\n".join(textwrap.fill(text, 100) for text in (f"{summary}. {details}", f"Exit status: {exits}.")),
        epilog=f"example:\n  {example}",
        formatter_class=HelpFormatter,
        **kwargs,
    )
    for flags, options in arguments:
        parser.add_argument(*flags, **options)
    parser.set_defaults(func=func)
    return parser


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Each option's default after its help (unless the help already says it); the
    example keeps its line breaks."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def build_parser(lab_options: bool = True) -> argparse.ArgumentParser:
    """m5's parser; ``lab_options=False`` leaves out the lab's options (their import costs ~0.1 s),
    for every command line that does not run the lab."""
    parser = argparse.ArgumentParser(
        prog="m5",
        formatter_class=HelpFormatter,
        description=(
            "Module 5 course package: grade, check, release, lab. "
            "Run from the project's .venv (`.venv/bin/m5 ...`, or `source .venv/bin/activate` first)."
        ),
        epilog="example:\n  m5 grade course/submitted --jobs 2 --out grades\n  m5 grade --help",
    )
    parser.add_argument("--version", action=_ShowVersion)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = _subcommand(
        sub,
        "grade",
        "grade submissions with the hidden property tests (student code runs sandboxed)",
        "Folders are searched recursively and understand nbgrader's submitted/<student>/<assignment>/ layout; "
        "lab and unrelated notebooks are skipped with one line. Writes <out>/<relative path>/results.json "
        "per submission (as each finishes) and <out>/grades.csv. Every assignment is out of "
        "120 points (10 kernels x 10, 20 numerical answers), notebook or .py.",
        "m5 grade course/submitted --jobs 2 --csv-format moodle",
        cmd_grade,
        exits="0 every submission graded; 1 done, but some submission could not be graded (its row says why); "
        f"{refused('bad arguments or input, or a single unreadable submission')}; 3 the sandbox cannot work under this machine's limits",
    )
    g.add_argument("paths", nargs="+", metavar="PATH", help="notebooks (.ipynb), .py files, or folders of them")
    g.add_argument("--out", default="grades", help="output folder")
    g.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (at most one per core)")
    g.add_argument("--json", action="store_true", help="print results.json instead of the table (a JSON list for several submissions)")
    g.add_argument("--lang", **LANG_ONE, help="feedback language (default: each submission's own)")
    g.add_argument(
        "--csv-format",
        choices=CSV_FORMATS,
        default="m5",
        help="also write grades_moodle.csv or grades_canvas.csv, ready to import (one row per student)",
    )
    g.add_argument(
        "--shrink",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "search for the smallest counterexample of each failed test (default: on for one "
            "submission, off for several; off uses the smallest failing generated input)"
        ),
    )
    g.add_argument(
        "--fresh-sandbox",
        action="store_true",
        help="start a new sandbox for every submission instead of handing on a cleaned one (slower; docs/sandbox.md, 'Recycling')",
    )
    g.add_argument(
        "--update",
        action="store_true",
        help="regrade these submissions into the gradebook already in --out: their rows are replaced, every other row, "
        "mark and adjustment is kept (without it an existing gradebook is refused)",
    )
    g.add_argument(
        "--policy",
        metavar="M5_COURSE_TOML",
        help="the late policy: a TOML file with a [policy] table (the course's m5_course.toml, written by m5 course init); "
        "checked first, then read again by every command on this gradebook (docs/instructor_workflow.md, 'Deadlines')",
    )
    g.add_argument(
        "--times",
        metavar="CSV",
        help="submission times from the platform: Moodle's grading worksheet, or a CSV with columns student and submitted "
        "(ISO 8601, e.g. Canvas's submitted_at); without it nbgrader's timestamp.txt, else the file's time (flagged)",
    )
    g.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only the K-th of N fixed parts of the class (by submission path), for m5 merge (docs/sharding.md)",
    )

    _subcommand(
        sub,
        "merge",
        "join the outputs of m5 grade --shard 1/N ... N/N into one class output",
        "Checks that the folders hold shards 1..N of one class, each submission once, before writing anything; "
        "then copies their results.json folders into --out and writes grades.csv (and the LMS export) exactly "
        "as one unsharded run would.",
        "m5 merge grades-1 grades-2 grades-3 --out grades --csv-format moodle",
        cmd_merge,
        [
            (("folders",), dict(nargs="+", metavar="SHARD_OUT", help="the --out folder of each shard")),
            (("--out",), dict(default="grades", help="the merged gradebook (not one of the shard folders)")),
            (("--csv-format",), dict(choices=CSV_FORMATS, default="m5", help="also write grades_moodle.csv or grades_canvas.csv")),
            (("--lang",), dict(**LANG_ONE, help="language of the class report (default: en)")),
        ],
    )
    _subcommand(
        sub,
        "review",
        "mark the written answers of a graded class, then merge the marks",
        "Without --marks: writes GRADES_DIR/review/ (one page per question: question, model answer, points, every "
        "student's answer) and GRADES_DIR/marks.csv to fill. With --marks: checks the filled file (refused in one "
        "line naming the row, nothing written) and rewrites grades.csv and the LMS export out of 167.",
        "m5 review grades --lang ru; m5 review grades --marks grades/marks.csv --csv-format moodle",
        cmd_review,
        [
            (("grades_dir",), dict(metavar="GRADES_DIR", help="the --out folder of m5 grade or m5 merge")),
            (("--lang",), dict(**LANG_ONE, help="language of the pages (default: en)")),
            (
                ("--marks",),
                dict(
                    metavar="FILLED_CSV",
                    help="the filled marks.csv to merge: a regular file of at most 5 MB, UTF-8 (a BOM is fine), "
                    "separated by commas, semicolons or tabs",
                ),
            ),
            (("--csv-format",), dict(choices=CSV_FORMATS, default="m5", help="also rewrite grades_moodle.csv or grades_canvas.csv")),
            (("--force",), dict(action="store_true", help="write a blank marks.csv over one that has marks in it")),
            (
                ("--anonymize",),
                dict(
                    action="store_true",
                    help="write GRADES_DIR/review/anonymized/ instead, for markers and projectors: the pages, marks.csv, "
                    "class_report.html/.json and similarity_pairs.json with every student under a pseudonym (Student 017), "
                    "the same on every run; the pseudonyms are kept in GRADES_DIR/anonymization_key.csv, which nothing "
                    "there names; --marks reads that marks.csv back",
                ),
            ),
        ],
    )
    _subcommand(
        sub,
        "adjust",
        "add points to (or take them from) one student's grade, with the reason",
        "Appends a row to GRADES_DIR/adjustments.csv (student, points, item, reason, who, when; edit it by hand if you "
        "like: every command re-reads it and refuses a bad row by name) and rebuilds every sheet. An adjustment "
        "survives regrades (m5 grade --update) and m5 review --marks.",
        "m5 adjust grades alice 2 --reason 'regrade request: ex13 (b) accepted' --item ex13",
        cmd_adjust,
        [
            (("grades_dir",), dict(metavar="GRADES_DIR", help="the gradebook (the --out folder of m5 grade or m5 merge)")),
            (("student",), dict(help="the student id as the sheets name it")),
            (("points",), dict(type=float, help="points to add (negative to take away)")),
            (("--reason",), dict(required=True, help="why (the student reads it)")),
            (("--item",), dict(default="", help="what it is about (a kernel, an exercise, a question id)")),
        ],
    )
    _subcommand(
        sub,
        "feedback",
        "write one feedback page per student, and the LMS bulk-upload archives",
        "One self-contained HTML page per student (final mark and how it is made: automatic, written, late penalty, "
        "adjustments with their reasons; points per kernel, property and answer; every failing test's input and "
        "hint; each written answer's mark, rubric and comment), an index.html for you, and feedback_moodle.zip / "
        "feedback_canvas.zip named as Moodle's and Canvas's feedback uploads expect, for the submissions graded from "
        "their downloads. The same gradebook gives the same files.",
        "m5 feedback grades --lang ru",
        cmd_feedback,
        [
            (("grades_dir",), dict(metavar="GRADES_DIR", help="the gradebook (the --out folder of m5 grade or m5 merge)")),
            (("--out",), dict(default=FEEDBACK_OUT, help="where to write the pages and the archives")),
            (("--lang",), dict(**LANG_ONE, help="language of every page (default: each student's submission's own)")),
        ],
        exits=f"0 done; {refused('a gradebook that cannot be read')}",
    )
    _subcommand(
        sub,
        "sheets",
        "rebuild every sheet of a gradebook from it",
        "grades.csv, grades_final.csv (one mark per student and module, with raw points, lateness, penalty, "
        "adjustment and final) and the LMS exports, after editing adjustments.csv, extensions.csv or the course's "
        "late policy by hand (every other command rebuilds them too).",
        "m5 sheets grades --csv-format moodle",
        cmd_sheets,
        [
            (("grades_dir",), dict(metavar="GRADES_DIR", help="the gradebook (the --out folder of m5 grade or m5 merge)")),
            (("--csv-format",), dict(choices=CSV_FORMATS, default="m5", help="also write grades_moodle.csv or grades_canvas.csv")),
        ],
    )
    _subcommand(
        sub,
        "check",
        "run the public self-check tests on a notebook or .py",
        "Runs in your own Python (not sandboxed; only your own code). Passing them does not guarantee full marks.",
        "m5 check release/module05_en/m05_assignment_en.ipynb --lang en",
        cmd_check,
        [
            (("path",), dict(metavar="NOTEBOOK_OR_PY", help="the notebook (.ipynb) or .py file to check")),
            (("--lang",), dict(**LANG_ONE, help="language of the messages (default: the file's own)")),
        ],
        exits=f"0 every public check passed; 1 some failed; {refused('bad arguments, or a file that cannot be read')}",
    )
    _subcommand(
        sub,
        "gradescope-bundle",
        "write the Gradescope autograder zip",
        "Upload the zip as a Gradescope programming assignment's autograder; enter 120 as the assignment "
        "total. run_autograder picks the assignment notebook with content among everything uploaded "
        "(nested folders, .py, .zip) and lists the written answers (the assignment's and the lab's) for the marker. "
        "Built for Gradescope's default base image, Ubuntu 22.04: setup.sh installs Python 3.11 there (deadsnakes PPA).",
        "m5 gradescope-bundle --out autograder.zip --visibility after_due_date",
        cmd_gradescope_bundle,
        [
            (("--out",), dict(default="autograder.zip", help="where to write the zip")),
            (
                ("--visibility",),
                dict(
                    choices=GS_VISIBILITIES,
                    default=GS_VISIBILITIES[0],
                    help="when students see each test's result and failing input (Gradescope's test visibility, also "
                    "the results' top-level one): after_due_date (default: the safe choice for hidden tests, whose "
                    "inputs cannot then be mined by resubmitting before the deadline), after_published (when you "
                    "publish the grades), hidden (never), visible (at once, as m5 grade). Whatever the choice, a first "
                    "entry is always visible: the total, how many tests failed (no input) and which file was graded",
                ),
            ),
        ],
        exits=f"0 the zip was written; {refused('an unknown --visibility or another bad argument, from argparse')}",
    )
    lab = _subcommand(
        sub,
        "lab",
        "run the capstone lab (figures, Markdown report, pinned artifacts)",
        "Runs every section (or --section's) on the smoke or full profile and writes <section>.png, report.md "
        "(report.ru.md with --lang ru) and claims.json into --out; --pin also rewrites the pinned artifacts in "
        "reference_impl/data/.",
        "m5 lab --profile smoke --out lab-out --lang en --lang ru",
        cmd_lab,
        exits=f"0 done; {refused('an unknown section or profile, a bad flag')}",
    )
    if lab_options:  # the lab's own options (the import loads numpy: only when the lab runs)
        from reference_impl.lab import add_arguments

        add_arguments(lab)
    _subcommand(
        sub,
        "release",
        "build the student release from the instructor sources",
        "Reads the instructor sources in source/ and writes the student folders under <out>/ (notebooks with stubs, support library).",
        "m5 release --out release",
        cmd_release,
        [(("--out",), dict(default="release", help="output folder"))],
        exits=f"0 done; {refused('bad arguments, or a source that cannot be built, such as a missing lab report')}",
    )
    _subcommand(
        sub,
        "course",
        "set up an nbgrader course folder (sources with their kit, nbgrader_config.py)",
        "`m5 course init FOLDER` builds source/module05_en and source/module05_ru with the student kit from this "
        "checkout and writes FOLDER/nbgrader_config.py; then run nbgrader generate_assignment there. The folder "
        "must lie outside this checkout.",
        "m5 course init ~/m5-course --course-id m5 --exchange /srv/nbgrader/exchange",
        cmd_course,
        [
            (("action",), dict(choices=["init"], metavar="init", help="what to do (init: create or rebuild the course folder)")),
            (("folder",), dict(metavar="FOLDER", help="the course folder (created if missing)")),
            (("--course-id",), dict(help="nbgrader course id, for the exchange")),
            (("--exchange",), dict(help="nbgrader exchange folder shared with the students")),
            (("--lang",), dict(**LANG_EACH, help="an assignment language, en or ru; repeat for both (default: both)")),
            (
                ("--force",),
                dict(
                    action="store_true", help="rewrite an existing nbgrader_config.py (and m5_course.toml with --due) and rebuild source/"
                ),
            ),
            (
                ("--due",),
                dict(
                    metavar="ISO_TIME",
                    help="declare the late policy in m5_course.toml: the deadline with its UTC offset, e.g. 2026-12-20T23:59+03:00",
                ),
            ),
            (("--timezone",), dict(help="IANA zone for platform times written without an offset, e.g. Moodle's (default: UTC)")),
            (("--grace-minutes",), dict(type=float, help="lateness up to this counts as on time (default: 0)")),
            (("--penalty-percent",), dict(type=float, help="percent of the points lost per started period late (required with --due)")),
            (("--per",), dict(choices=["hour", "day"], help="the period of the penalty (default: day)")),
            (("--cap-percent",), dict(type=float, help="the penalty never exceeds this percent (default: 100)")),
        ],
    )
    _subcommand(
        sub,
        "solutions",
        "build the worked-solution bundle (HTML) for students",
        "Worked answers to all exercises, in one or both languages.",
        "m5 solutions --lang en --lang ru --out solutions-html",
        cmd_solutions,
        [
            (("--lang",), dict(**LANG_EACH, help="a language of the bundle, en or ru; repeat for both (default: both)")),
            (("--out",), dict(default="solutions-html", help="output folder")),
        ],
    )
    _subcommand(
        sub,
        "validate",
        "dry run before release: grade the source, the blank release, the solutions and the Gradescope zip",
        "Grades in the sandbox, per language: the instructor notebook in source/ (120 points expected, no grading "
        "error, every cell loading), the blank student notebook in release/ (0 points, read and graded), the worked "
        "solution notebook in solutions/notebooks/ (120); then unpacks the Gradescope zip into a temporary "
        "autograder/ layout and runs its run_autograder on the source notebook (the same score and per-test scores). "
        "Prints a table of the checks and one line per difference; writes <out>/<check>_<lang>/results.json and "
        "<out>/validation.json.",
        "m5 validate --lang en --lang ru --out validation",
        cmd_validate,
        [
            (("--lang",), dict(**LANG_EACH, help="a language to validate, en or ru; repeat for both (default: both)")),
            (("--out",), dict(default="validation", help="output folder")),
            (("--bundle",), dict(metavar="ZIP", help="a Gradescope zip to check (default: one built from this checkout)")),
        ],
        exits="0 every check as expected; 1 some check failed (one line each says which); "
        f"{refused('bad arguments, or a --bundle that is not a file')}; 3 the sandbox cannot work under this machine's limits",
    )
    _subcommand(
        sub,
        "demo",
        "grade the bundled example submissions and show the results",
        "What `make demo` runs: worked examples, the sandbox level, a class table and one feedback report.",
        "m5 demo",
        cmd_demo,
        exits=f"0 done; {refused('bad arguments')}; 3 the sandbox cannot work under this machine's limits",
    )
    return parser


def _quiet_stdout() -> None:
    """After the reader of our stdout went away (`m5 grade ... | head -1`): point stdout
    at /dev/null so the interpreter's final flush cannot raise a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def run(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Parse ``argv`` and run the sub-command; a UsageError is one line and exit status 2."""
    args = parser.parse_args(argv)
    if getattr(args, "jobs", 1) is not None and getattr(args, "jobs", 1) < 1:
        parser.error("--jobs must be at least 1")
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"m5 {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return run(build_parser(lab_options="lab" in argv), argv)
    except BrokenPipeError:
        # The reader has what it wanted; the work (grades, results files) is on disk.
        _quiet_stdout()
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
