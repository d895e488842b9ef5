"""m5's argument parser: every command, its options with their defaults, its exit statuses and an example.

The parser names the command (``args.command``); :mod:`autograder.cli` maps each name to the
function that runs it. This module imports nothing of the package at import time (``m5
--help`` stays fast); the lab's options are added only for a command line that runs it.
"""

from __future__ import annotations

import argparse
import textwrap

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


FEEDBACK_OUT = "GRADES_DIR/feedback"  # --out's default: the folder feedback/ inside the gradebook


def version() -> str:
    """The installed package's version (the source tree's when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

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


def _subcommand(
    sub, name: str, summary: str, details: str, example: str, arguments=(), exits: str = EXITS_DONE, **kwargs
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
        "Two routes to one gradebook. The marking page: --serve opens a local page (127.0.0.1, a token in the "
        "URL) where several markers mark by question and by group of similar answers with the rubric's items and "
        "comments, stored in GRADES_DIR/marking.sqlite; its Export button (or --page-marks) writes the marks. "
        "Spreadsheets: without --marks, writes GRADES_DIR/review/ (one page per question) and a marks sheet to fill "
        "(marks.csv, one number per question; with --marker, marks_<marker>.csv with a column per rubric item and a "
        "comment column, for the questions of --questions); --marks merges filled sheets (each refused in one line "
        "naming the file, row and column, nothing written) and rewrites grades.csv and the LMS export out of 167. "
        "--consistency compares the markers and the answer groups after marking.",
        "m5 review grades --serve; m5 review grades --marker ann --questions q01_answer,q02_answer; "
        "m5 review grades --marks grades/marks_ann.csv grades/marks_ben.csv --csv-format moodle",
        [
            (("grades_dir",), dict(metavar="GRADES_DIR", help="the --out folder of m5 grade or m5 merge")),
            (("--lang",), dict(**LANG_ONE, help="language of the pages (default: en)")),
            (
                ("--marks",),
                dict(
                    nargs="+",
                    metavar="FILLED_CSV",
                    help="filled marks sheets to merge, one or several (each a regular file of at most 5 MB, UTF-8, a BOM "
                    "is fine, separated by commas, semicolons or tabs); two files that mark one answer differently are "
                    "refused; the marks the gradebook already holds for other answers stay",
                ),
            ),
            (("--partial",), dict(action="store_true", help="with --marks: leave answers no file marks yet unmarked instead of refusing")),
            (("--csv-format",), dict(choices=CSV_FORMATS, default="m5", help="also rewrite grades_moodle.csv or grades_canvas.csv")),
            (("--force",), dict(action="store_true", help="write a blank marks sheet over one that has marks in it")),
            (("--marker",), dict(metavar="NAME", help="write marks_<NAME>.csv: a column per rubric item and a comment column")),
            (("--questions",), dict(metavar="LIST", help="with --marker: the question ids of that sheet, comma-separated (default: all)")),
            (
                ("--anonymize",),
                dict(
                    action="store_true",
                    help="write GRADES_DIR/review/anonymized/ instead, for markers and projectors: the pages, the marks sheet, "
                    "class_report.html/.json and similarity_pairs.json with every student under a pseudonym (Student 017), "
                    "the same on every run; the pseudonyms are kept in GRADES_DIR/anonymization_key.csv, which nothing "
                    "there names; --marks reads that sheet back",
                ),
            ),
            (("--serve",), dict(action="store_true", help="open the marking page on 127.0.0.1 until Ctrl-C (prints its URL with a token)")),
            (("--port",), dict(type=int, default=0, help="with --serve: the port (default: 0, any free one)")),
            (("--names",), dict(action="store_true", help="with --serve: show students' ids (default: pseudonyms)")),
            (
                ("--to-nbgrader",),
                dict(
                    metavar="GRADEBOOK_DB",
                    help="copy the written marks and comments (the rubric items applied, the marker's comment) into nbgrader's "
                    "gradebook.db (a path or a database URL) for nbgrader generate_feedback; every submission autograded first",
                ),
            ),
            (("--page-marks",), dict(action="store_true", help="write the marking page's marks into the gradebook (its Export button)")),
            (
                ("--consistency",),
                dict(
                    action="store_true",
                    help="write GRADES_DIR/review/consistency.html and two CSVs: per question the marks of each marker (a "
                    "harsher or kinder one flagged) and the answers whose mark differs from their group's; from the --marks "
                    "sheets when given, else from the marking page's store",
                ),
            ),
        ],
        exits=f"0 done (with --serve: stopped with Ctrl-C); {refused()}",
    )
    _subcommand(
        sub,
        "adjust",
        "add points to (or take them from) one student's grade, with the reason",
        "Appends a row to GRADES_DIR/adjustments.csv (student, points, item, reason, who, when; edit it by hand if you "
        "like: every command re-reads it and refuses a bad row by name) and rebuilds every sheet. An adjustment "
        "survives regrades (m5 grade --update) and m5 review --marks.",
        "m5 adjust grades alice 2 --reason 'regrade request: ex13 (b) accepted' --item ex13",
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
        exits=f"0 done; {refused('an unknown section or profile, a bad flag')}",
    )
    if lab_options:  # the lab's own options (the import loads numpy: only when the lab runs)
        from reference_impl.lab.cli import add_arguments

        add_arguments(lab)
    _subcommand(
        sub,
        "release",
        "build the student release from the instructor sources",
        "Reads the instructor sources in source/ and writes the student folders under <out>/ (notebooks with stubs, support library).",
        "m5 release --out release",
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
        exits=f"0 done; {refused('bad arguments')}; 3 the sandbox cannot work under this machine's limits",
    )
    return parser
