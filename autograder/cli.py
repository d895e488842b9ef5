"""`m5`: the course package's command line (a thin layer over the stage packages).

``m5 --help`` lists the commands and ``m5 COMMAND --help`` explains one; the parser lives in
:mod:`autograder.cli_parser`, and :data:`COMMANDS` maps each command to the function here that runs it.

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
import threading
from pathlib import Path

from autograder.cli_parser import (
    EXIT_INCOMPLETE,
    EXIT_ISOLATION,
    EXIT_OK,
    EXIT_USAGE,
    FEEDBACK_OUT,
    LANGS,
)
from autograder.cli_parser import (
    build_parser as _parser,
)


class UsageError(Exception):
    """Bad input to a command: printed as one line, exit status 2."""


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


def _shard_of(args):
    from autograder.grade import shards

    try:
        return None if args.shard is None else shards.parse_shard(args.shard)
    except shards.ShardError as exc:
        raise UsageError(str(exc)) from None


def _refuse_a_lone_unreadable_submission(found) -> None:
    """A single unreadable submission is a usage error (exit 2), not a row of the class
    (the rule pytest --m5-submission applies too: classrun.refusal_alone)."""
    from autograder.grade import classrun, report

    refused = classrun.refusal_alone(found[0])
    if refused is not None:
        raise UsageError(report.for_terminal(refused))


def _progress_bar(found, args):
    if len(found) <= 1 or args.json or not sys.stderr.isatty():
        return None
    from tqdm.auto import tqdm  # only on a terminal: tqdm's import costs a class run nothing otherwise

    return tqdm(total=len(found), desc="grading", unit="submission", file=sys.stderr)


def _print_json(results, written, iso_warning) -> int:
    from autograder.grade import report

    documents = [report.results_json(r, iso_warning) for r in results]
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


def _print_tables(results, unchanged, out: Path, lang: str) -> int:
    from autograder.grade import report

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


def _grade(args, early: _EarlyStart) -> int:
    from autograder.grade import classrun, discover, gradebook, sandbox

    shard = _shard_of(args)
    root = _gradebook_root(args)
    submitted = _submission_times(args)
    skipped: list = []
    found = find_submissions(args.paths, skipped, root=root)
    _refuse_two_of_one_student(found)
    if root is None:
        named = [Path(p) for p in args.paths]
        root = discover.common_root([p for p in named if not p.is_dir()], [p for p in named if p.is_dir()])
    if len(found) == 1 and shard is None:
        _refuse_a_lone_unreadable_submission(found)
    early.wait_for_probe()
    iso = sandbox.isolation()
    if iso.fatal:  # limits the grader cannot work with: grading would silently score 0
        print(f"m5 grade: {iso.fatal}", file=sys.stderr)
        return EXIT_ISOLATION
    if iso.warning and not args.json:
        print(iso.warning, file=sys.stderr)
    bar = _progress_bar(found, args)
    # Shrinking gives the nicest counterexample but costs up to 2 s per failing submission:
    # on by default for one submission (a student's feedback), off for a class run.
    shrink = args.shrink if args.shrink is not None else len(found) == 1
    out = Path(args.out)
    if args.policy:
        gradebook.set_policy(out, Path(args.policy))  # checked above; read again by every later command
    try:
        results, written, unchanged = classrun.grade_into(
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
    if bar:
        bar.close()
    if args.json:
        return _print_json(results, written, iso.warning)
    return _print_tables(results, unchanged, out, args.lang or "en")


def cmd_merge(args) -> int:
    from autograder.grade import gradebook, merge, shards

    try:
        rows = merge.merge_shards([Path(f) for f in args.folders], Path(args.out), args.csv_format, args.lang or "en")
    except (shards.ShardError, gradebook.GradebookError) as exc:
        raise UsageError(str(exc)) from None
    print(f"merged {len(args.folders)} shards, {len(rows)} submissions, into {args.out}/grades.csv")
    return EXIT_OK


def cmd_review(args) -> int:
    from autograder.export import review  # the stage, loaded only when the command runs (as every command does)
    from autograder.marking.model import MarkingError  # the same

    folder = Path(args.grades_dir)
    _refuse_review_mixes(args)
    try:
        if args.serve:
            return _serve_marking_page(args, folder)
        if args.page_marks:
            return _export_page_marks(args, folder)
        if args.consistency:
            return _write_consistency(args, folder)
        if args.to_nbgrader:
            return _push_to_nbgrader(args, folder)
        if args.marks:
            path = review.merge_marks(folder, [Path(p) for p in args.marks], args.csv_format, partial=args.partial)
            print(f"marks merged into {path}")
            return EXIT_OK
        return _write_review_pages(args, folder)
    except (review.ReviewError, MarkingError) as exc:
        raise UsageError(str(exc)) from None


REVIEW_MODES = ("serve", "page_marks", "consistency", "to_nbgrader")  # one at a time; each also excludes writing the sheets


def _refuse_review_mixes(args) -> None:
    chosen = [m for m in REVIEW_MODES if getattr(args, m)]
    if len(chosen) > 1:
        raise UsageError(f"--{chosen[0].replace('_', '-')} and --{chosen[1].replace('_', '-')} are separate steps: run one at a time")
    if (args.marker or args.questions) and (chosen or args.marks):
        raise UsageError("--marker and --questions write a marks sheet: run them without --marks, --serve, --page-marks or --consistency")
    if args.questions and not args.marker:
        raise UsageError("--questions chooses the questions of one marker's sheet: give --marker NAME too")
    if (args.port or args.names) and not args.serve:
        raise UsageError("--port and --names belong to the marking page: give --serve too")
    if args.partial and not args.marks:
        raise UsageError("--partial belongs to merging sheets: give --marks FILE... too")


def _write_review_pages(args, folder: Path) -> int:
    from autograder.export import anonymize, review  # as in cmd_review

    questions = [q.strip() for q in args.questions.split(",") if q.strip()] if args.questions else None
    lang = args.lang or "en"
    files = review.write_review(folder, lang, force=args.force, anonymize=args.anonymize, marker=args.marker, questions=questions)
    if args.anonymize:
        print(
            f"wrote {files[0].parent} under pseudonyms (review pages, class report, similarity pairs) and {files[-1]}; "
            f"the pseudonyms are in {folder / anonymize.KEY_FILE}: keep it to yourself"
        )
    else:
        print(f"wrote {files[0]} and {files[-1]}: fill the marks, then --marks")
    return EXIT_OK


def _serve_marking_page(args, folder: Path) -> int:
    from autograder.export import anonymize  # as in cmd_review
    from autograder.marking import model, server  # the same

    pseudonyms = None
    if not args.names:  # the same pseudonyms as every anonymized view, kept in the gradebook's key
        pseudonyms = anonymize.pseudonyms(folder, {a.student for a in model.class_answers(folder)})
    return server.serve(folder, port=args.port, names=args.names, lang=args.lang or "en", pseudonyms=pseudonyms)


def _export_page_marks(args, folder: Path) -> int:
    from autograder.marking import store  # as in cmd_review

    if not (folder / store.STORE_FILE).exists():
        raise UsageError(f"{folder / store.STORE_FILE}: nothing marked on the marking page yet (m5 review {folder} --serve)")
    with store.MarkingStore(folder, CLI_MARKER) as marked:
        path = marked.export(None if args.csv_format == "m5" else args.csv_format)
    print(f"the marking page's marks written into {path}; the gradebook's sheets rebuilt")
    return EXIT_OK


CLI_MARKER = "m5 review"  # who opens the store from the command line (recorded with what it does)


def _write_consistency(args, folder: Path) -> int:
    from autograder.export import anonymize, review  # as in cmd_review
    from autograder.marking import consistency, groups, model, store  # the same

    answers = model.class_answers(folder)
    if args.marks:
        aliases = anonymize.aliases(folder, {a.student for a in answers})
        found = consistency.from_sheets(folder, [Path(p) for p in args.marks], _all_groups(groups, answers, frozenset()), aliases)
    elif (folder / store.STORE_FILE).exists():
        with store.MarkingStore(folder, CLI_MARKER) as marked:
            kept = {k: d for k, d in marked.decisions().items() if d.marker}  # blanks have no marker
            found = consistency.build(kept, marked.items(), model.questions(), _all_groups(groups, answers, marked.detached()))
    else:
        raise UsageError(f"nothing to compare: give the filled sheets with --marks, or mark on the page first (m5 review {folder} --serve)")
    files = consistency.write_report(folder / review.REVIEW_DIR, found, args.lang or "en")
    print(f"wrote {', '.join(str(f) for f in files)}")
    return EXIT_OK


def _push_to_nbgrader(args, folder: Path) -> int:
    from autograder.marking import nbgrader_marks  # as in cmd_review

    try:
        report = nbgrader_marks.push_marks(folder, args.to_nbgrader)
    except nbgrader_marks.PushError as exc:
        raise UsageError(str(exc)) from None
    print(report.text(args.lang or "en"))
    return EXIT_OK


def _all_groups(groups, answers, detached) -> list:
    return [group for found in groups.group_class(answers, detached).values() for group in found]


def cmd_adjust(args) -> int:
    from autograder.grade import gradebook

    try:
        entry = gradebook.add_adjustment(Path(args.grades_dir), args.student, args.points, args.reason, args.item)
    except gradebook.GradebookError as exc:
        raise UsageError(str(exc)) from None
    print(f"{entry['student']}: {entry['points']} points ({entry['reason']}); sheets rebuilt in {args.grades_dir}")
    return EXIT_OK


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
    from reference_impl.lab.cli import main_parsed  # why: the lab loads numpy and torch; only this command needs them

    return main_parsed(args)


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


COMMANDS = {
    "grade": cmd_grade,
    "merge": cmd_merge,
    "review": cmd_review,
    "adjust": cmd_adjust,
    "feedback": cmd_feedback,
    "sheets": cmd_sheets,
    "check": cmd_check,
    "gradescope-bundle": cmd_gradescope_bundle,
    "lab": cmd_lab,
    "release": cmd_release,
    "course": cmd_course,
    "solutions": cmd_solutions,
    "validate": cmd_validate,
    "demo": cmd_demo,
}


def _quiet_stdout() -> None:
    """After the reader of our stdout went away (`m5 grade ... | head -1`): point stdout
    at /dev/null so the interpreter's final flush cannot raise a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def run(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Parse ``argv`` and run the sub-command; a UsageError is one line and exit status 2."""
    args = parser.parse_args(argv)
    jobs = getattr(args, "jobs", None)
    if isinstance(jobs, int) and jobs < 1:  # m5 grade's; the lab checks its own --jobs
        parser.error("--jobs must be at least 1")
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"m5 {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


def build_parser(lab_options: bool = True) -> argparse.ArgumentParser:
    """m5's parser (see :func:`autograder.cli_parser.build_parser`)."""
    return _parser(lab_options=lab_options)


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
