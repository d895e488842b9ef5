"""``m5 lab``: rerun the Module 5 lab, draw its figures, write a report, re-pin artifacts.

    m5 lab [--profile smoke|full] [--section NAME...] [--seeds N] [--jobs N] [--out DIR] [--pin] [--lang en|ru]...

Sections (in lab order): environment, dagger, dqn, log, offline, fqe, dt, language.
Each section calls the reference implementation with the parameters of the lab
notebook's profile (:data:`PROFILE_PARAMS`), writes ``<section>.png`` and adds its
tables to ``report.md`` in ``--out`` (default ``lab-out``), next to ``claims.json``:
every claim of :mod:`reference_impl.lab.results` with its per-seed values, mean and sd
(the README's results table is generated from it).

* ``--profile`` defaults to ``$RL_LLM_M5_PROFILE`` (smoke | full), else smoke; any
  other value of the variable is an error (exit 2).
* ``--seeds N`` repeats every seeded section with seed offsets 0..N-1 (every seed of
  the section is shifted by the offset) and reports mean, spread (sample standard
  deviation) and the per-seed values; with N >= 2 every comparison of
  :mod:`reference_impl.lab.comparisons` gets its paired 95 % interval, which alone
  chooses the report's words (:mod:`reference_impl.lab.caveats`), and the Decision
  Transformer's rise/saturation check runs per seed.
* ``--jobs N`` (default 1) runs the tasks (a section at a seed offset) in N worker
  processes (:mod:`~reference_impl.lab.tasks`); every result is the same as with one
  process, and a section's time in the report is the sum of its tasks' times.
* ``--pin`` runs every section on the full profile (``--profile smoke`` or
  ``--section`` together with ``--pin`` is an error) and rewrites the pinned artifacts
  in ``reference_impl/data/``: each section's seed-offset-0 run (:data:`~reference_impl.lab.pins.PINNED_KEYS`),
  every seed stacked (:data:`~reference_impl.lab.pins.SEEDS_PIN`), the numbers the lab notebook prints
  (:data:`~reference_impl.lab.pins.CLAIMS_PIN`) and the protocol. The ``.npz`` files hold no object arrays (names
  are fixed-width unicode) and are written byte-for-byte deterministically, so
  re-pinning identical results changes nothing. The committed pins come from
  ``make pin`` (10 seeds); a pin from fewer seeds changes what the notebook shows, and
  the tests that compare the pins with ``docs/lab-results/claims.json`` say so.

``--lang en|ru`` (default en; ``--lang en --lang ru`` writes both from one run: ``report.md``
with ``<section>.png`` and ``report.ru.md`` with ``<section>.ru.png``) sets the
language of the report (headers included), the figure titles, legends and tick labels
and the printed lines (those follow the first language); it comes only from this
argument, never from the environment. Texts are in :mod:`reference_impl.lab.labels`.

Exit status: 0 on success, 2 on a usage error (unknown section or profile, bad flag).
Notebooks read the pinned files with :func:`reference_impl.lab.pins.load_pinned`.

This module is the command line; the work is in :mod:`~reference_impl.lab.profiles`
(parameters), :mod:`~reference_impl.lab.runners` (one seed of one section),
:mod:`~reference_impl.lab.report` (figures and markdown) and
:mod:`~reference_impl.lab.pins` (pinned artifacts); import their names from there.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reference_impl.console import make_console_safe
from reference_impl.lab import pins
from reference_impl.lab.caveats import caveats
from reference_impl.lab.comparisons import comparisons_table, evaluate_comparisons
from reference_impl.lab.design import REPORT_FIRST_OFFSET, overlapping_offsets, search_lines, seed_record
from reference_impl.lab.labels import LANGUAGES, labels_for
from reference_impl.lab.pins import machine_description, package_versions, write_pinned
from reference_impl.lab.profiles import PROFILE_ENV, PROFILE_PARAMS, PROFILES, SECTIONS, LabUsageError, resolve_profile
from reference_impl.lab.report import REPORTERS, Render, claims_lines, fmt, header, report_text, table
from reference_impl.lab.results import claims_document, claims_table, evaluate_claims, id_index
from reference_impl.lab.tasks import WorkerSetup, run_tasks

__all__ = [
    "LabOptions",
    "add_arguments",
    "parse_options",
    "options_from_args",
    "run_lab",
    "write_outputs",
    "main",
    "main_parsed",
    "REPORT_FILES",
    "CLAIMS_FILE",
    "RESULTS_FILE",
    "CLAIMS_INDEX",
]


# --------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The lab's options, added to ``parser`` (this module's own, or ``m5``'s ``lab`` sub-command)."""
    parser.add_argument(
        "--profile", default=None, help=f"smoke (reduced, ~1 min) or full (the lab notebook's numbers); default ${PROFILE_ENV}, else smoke"
    )
    parser.add_argument("--section", nargs="+", metavar="NAME", default=None, help=f"sections to run (default all): {', '.join(SECTIONS)}")
    parser.add_argument("--seeds", default="1", help="run every seeded section with N seed offsets (default 1)")
    parser.add_argument(
        "--seed-offset",
        default=None,
        metavar="K",
        help=f"the first seed offset (default 0; with --pin {REPORT_FIRST_OFFSET}, the report block: "
        f"offsets below {REPORT_FIRST_OFFSET} chose the settings and --pin refuses them)",
    )
    parser.add_argument(
        "--jobs",
        default="1",
        metavar="N",
        help="run the sections' seeds in N worker processes (default 1: all in this one); the results do not change",
    )
    parser.add_argument("--out", default="lab-out", help="directory for the PNG figures and report.md (default lab-out)")
    parser.add_argument("--pin", action="store_true", help="full profile, all sections; rewrite reference_impl/data/")
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help=f"train nothing: rewrite the reports, figures and claims (and the pins, with --pin) from the {RESULTS_FILE} "
        "an earlier run with the same options left in --out",
    )
    parser.add_argument(
        "--lang",
        action="append",
        choices=LANGUAGES,
        help="language of figures and report, en or ru (default en); repeat it for both from one run: "
        "--lang en --lang ru writes report.md and report.ru.md",
    )
    return parser


def _parser() -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(prog="m5 lab", description="Rerun the Module 5 lab: figures, report, pinned artifacts."))


@dataclass(frozen=True)
class LabOptions:
    """A parsed ``m5 lab`` command line (see :func:`parse_options`)."""

    profile: str
    sections: tuple[str, ...]
    seeds: int
    out: Path
    pin: bool
    langs: tuple[str, ...]
    first_offset: int = 0
    rewrite: bool = False
    jobs: int = 1

    @property
    def offsets(self) -> range:
        """The seed offsets every seeded section runs."""
        return range(self.first_offset, self.first_offset + self.seeds)

    @property
    def lang(self) -> str:
        """The first language asked for: the one printed messages use."""
        return self.langs[0]


def parse_options(argv: Sequence[str], environ: Mapping[str, str]) -> LabOptions:
    """Parse ``m5 lab`` arguments; raises LabUsageError with a message on any bad input."""
    parser = _parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as stop:  # argparse already printed its message
        if stop.code in (0, None):
            raise
        raise LabUsageError("invalid arguments (see the usage above)") from None
    return options_from_args(args, environ)


def options_from_args(args: argparse.Namespace, environ: Mapping[str, str]) -> LabOptions:
    """The options of parsed arguments (:func:`add_arguments`), checked; LabUsageError on bad input."""
    if args.profile is not None and args.profile not in PROFILES:
        raise LabUsageError(f"--profile must be 'smoke' or 'full', got {args.profile!r}")
    profile = resolve_profile(args.profile, environ)
    sections = tuple(args.section) if args.section else SECTIONS
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise LabUsageError(f"unknown section(s) {', '.join(map(repr, unknown))}; choose from {', '.join(SECTIONS)}")
    seeds = _positive_int(args.seeds, "--seeds")
    asked = args.lang or ["en"]
    bad = [lang for lang in asked if lang not in LANGUAGES]
    if bad:
        raise LabUsageError(f"--lang must be {' or '.join(LANGUAGES)} (repeat it for both), got {bad[0]!r}")
    langs = tuple(dict.fromkeys(asked))  # in the order typed, without repeats
    jobs = _positive_int(getattr(args, "jobs", "1"), "--jobs")
    first_offset = _first_offset(getattr(args, "seed_offset", None), bool(args.pin))
    if args.pin:
        if args.profile == "smoke":
            raise LabUsageError("--pin regenerates the full-profile artifacts; drop --profile smoke")
        if args.section:
            raise LabUsageError("--pin runs every section; drop --section")
        used = overlapping_offsets(first_offset, seeds)
        if used:
            raise LabUsageError(
                f"--pin reports fresh seeds only: offsets {used[0]}..{used[-1]} chose the settings "
                f"(design offsets 0..{REPORT_FIRST_OFFSET - 1}); use --seed-offset {REPORT_FIRST_OFFSET} or more"
            )
        profile = "full"
    # Keep lab order and drop duplicates whatever order the user typed.
    ordered = tuple(s for s in SECTIONS if s in sections)
    rewrite = bool(getattr(args, "rewrite", False))
    if rewrite and not (Path(args.out) / RESULTS_FILE).is_file():
        raise LabUsageError(f"--rewrite needs the {RESULTS_FILE} of an earlier run in --out ({Path(args.out) / RESULTS_FILE} is missing)")
    return LabOptions(profile, ordered, seeds, Path(args.out), bool(args.pin), langs, first_offset, rewrite, jobs)


def _positive_int(raw: str, flag: str) -> int:
    """A flag's value checked: a positive integer, else LabUsageError naming the flag."""
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise LabUsageError(f"{flag} must be a positive integer, got {raw!r}")
    return value


def _first_offset(raw: str | None, pin: bool) -> int:
    """``--seed-offset`` checked: a non-negative integer; absent, 0 (or the report block with --pin)."""
    if raw is None:
        return REPORT_FIRST_OFFSET if pin else 0
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise LabUsageError(f"--seed-offset must be a non-negative integer, got {raw!r}")
    return value


#: Report file of each language; both can share one ``--out`` folder.
REPORT_FILES = {"en": "report.md", "ru": "report.ru.md"}
CLAIMS_FILE = "claims.json"
#: Every section's per-seed results of a run (pickled: arrays and nested dicts), so that a
#: wording change can rewrite a long run's outputs without training (``--rewrite``).
RESULTS_FILE = "results.pickle"
CLAIMS_INDEX = "README.md"


def _command(options: LabOptions) -> str:
    """The ``m5 lab`` command line that reproduces ``options`` (written into claims.json)."""
    parts = ["m5 lab", "--profile", options.profile]
    if options.sections != SECTIONS:
        parts += ["--section", *options.sections]
    parts += ["--seeds", str(options.seeds)]
    if options.first_offset != (REPORT_FIRST_OFFSET if options.pin else 0):
        parts += ["--seed-offset", str(options.first_offset)]
    parts += ["--out", options.out.as_posix()]
    parts += [word for lang in options.langs for word in ("--lang", lang)]
    return " ".join(parts + (["--pin"] if options.pin else []))


def _write_report(results: dict, options: LabOptions, seconds: dict, total: float, claims: dict, lang: str) -> tuple[Path, dict]:
    """Figures and the report of one language; returns the report's path and the per-seed verdicts."""
    labels = labels_for(lang)
    render = Render(
        options.out, labels, labels["run.lab"].format(profile=options.profile, seeds=options.seeds), "" if lang == "en" else f".{lang}"
    )
    section_title = {s: report_text(labels, f"section.{s}") for s in options.sections}
    lines = [
        f"# {report_text(labels, 'title')}",
        "",
        report_text(
            labels,
            "intro",
            profile=options.profile,
            first_offset=options.offsets[0],
            last_offset=options.offsets[-1],
            sections=", ".join(section_title.values()),
        ),
        "",
        f"## {report_text(labels, 'design')}",
        "",
        report_text(labels, "design_intro", first=REPORT_FIRST_OFFSET, last=REPORT_FIRST_OFFSET - 1),
        "",
        *search_lines(section_title, lang),
        "",
    ]
    lines += table(
        header(labels, "section", "wall_time"),
        [(section_title[s], fmt(seconds[s], 1)) for s in options.sections] + [(report_text(labels, "total"), fmt(total, 1))],
    )
    for section in options.sections:
        lines += ["", f"## {section_title[section]}", ""] + REPORTERS[section](results[section], render)
    claim_lines, verdicts = claims_lines(results, labels)
    if claim_lines or claims:
        lines += ["", f"## {report_text(labels, 'claims')}", *claim_lines]
    if claims:
        lines += ["", report_text(labels, "all_claims"), "", *claims_table(claims, lang)]
        compared = evaluate_comparisons(claims)
        if compared:
            lines += ["", report_text(labels, "comparisons"), "", *comparisons_table(compared, lang)]
        notes = caveats(claims, lang)
        if notes:
            lines += ["", f"## {report_text(labels, 'caveats')}", "", *(f"- {n}" for n in notes)]
    lines += ["", f"## {labels['summary_heading']}", ""]
    lines += [f"- {labels[k]}" for k in ("summary_bc", "summary_dqn", "summary_offline", "summary_dt", "summary_llm")]
    report = options.out / REPORT_FILES[lang]
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report, verdicts


def run_lab(options: LabOptions, *, data_dir: Path | None = None, worker_setup: WorkerSetup | None = None) -> dict:
    """Run the requested sections, write figures, reports and claims.json, pin if asked.

    Writes, in ``options.out``: one report per language (:data:`REPORT_FILES`) with
    its figures (``<section>.png``, Russian ones ``<section>.ru.png``), ``claims.json``
    (every claim of :mod:`reference_impl.lab.results` whose section ran; numbers only,
    no timings, so equal runs give equal files) and ``README.md`` (the claim id index).
    Returns ``{"results": {section: [per-seed dict]}, "seconds": {section: s},
    "verdicts": {...}, "claims": {...}, "report": Path (first language),
    "reports": {lang: Path}, "pinned": [Path]}``. ``worker_setup``: see
    :func:`~reference_impl.lab.tasks.run_tasks`.
    """

    if options.rewrite:
        return _rewrite(options, data_dir)
    profile = PROFILE_PARAMS[options.profile]
    started = time.perf_counter()
    # Nothing is written until every task has finished: an interrupted run leaves no half outputs.
    results, seconds = run_tasks(profile, options.sections, options.offsets, options.jobs, worker_setup=worker_setup)
    total = time.perf_counter() - started
    options.out.mkdir(parents=True, exist_ok=True)
    saved = {"options": _reproducible(options), "results": results, "seconds": seconds, "total": total}
    (options.out / RESULTS_FILE).write_bytes(pickle.dumps(saved, protocol=pickle.HIGHEST_PROTOCOL))
    return write_outputs(options, results, seconds, total, data_dir=data_dir)


def _reproducible(options: LabOptions) -> dict:
    """What decides a run's results: a rewrite must be asked with the same."""
    return {"profile": options.profile, "sections": list(options.sections), "offsets": [options.offsets[0], options.offsets[-1]]}


def _rewrite(options: LabOptions, data_dir: Path | None) -> dict:
    """:func:`write_outputs` from the saved results of an earlier run (``--rewrite``); the file is
    this command's own output in ``--out``, and the run must have had the same options."""
    saved = pickle.loads((options.out / RESULTS_FILE).read_bytes())
    if saved["options"] != _reproducible(options):
        raise LabUsageError(f"--rewrite: {RESULTS_FILE} holds a run of {saved['options']}, not of {_reproducible(options)}")
    return write_outputs(options, saved["results"], saved["seconds"], saved["total"], data_dir=data_dir)


def write_outputs(
    options: LabOptions, results: dict[str, list[dict]], seconds: Mapping[str, float], total: float, *, data_dir: Path | None = None
) -> dict:
    """Everything :func:`run_lab` writes, from the sections' per-seed results.

    Apart from running so that the figures and texts of a long run (the committed
    10-seed report) can be rewritten from its saved results after a wording change,
    without training again. Returns what :func:`run_lab` returns.
    """
    options.out.mkdir(parents=True, exist_ok=True)
    claims = evaluate_claims(results)
    document = claims_document(
        _command(options),
        options.profile,
        options.seeds,
        package_versions(),
        claims,
        machine_description(),
        wall_seconds=total,
        seed_offsets=seed_record(options.first_offset, options.seeds),
    )
    (options.out / CLAIMS_FILE).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (options.out / CLAIMS_INDEX).write_text(id_index(document), encoding="utf-8")
    reports, verdicts = {}, {}
    for lang in options.langs:
        reports[lang], verdicts = _write_report(results, options, dict(seconds), total, claims, lang)

    pinned = []
    if options.pin:
        pinned = write_pinned(
            results,
            PROFILE_PARAMS[options.profile],
            options.offsets,
            verdicts,
            pins.DATA_DIR if data_dir is None else data_dir,
            document,
        )
    return {
        "results": results,
        "seconds": dict(seconds),
        "total_seconds": total,
        "verdicts": verdicts,
        "claims": claims,
        "report": reports[options.langs[0]],
        "reports": reports,
        "pinned": pinned,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m reference_impl.lab`` (the package's ``__main__``); returns the exit status (0 ok, 2 usage error)."""
    argv = sys.argv[1:] if argv is None else argv
    make_console_safe()  # a Russian report on a console whose locale cannot show it
    try:
        options = parse_options(argv, os.environ)
    except LabUsageError as error:
        print(f"m5 lab: error: {error}", file=sys.stderr)
        return 2
    return run_and_report(options)


def main_parsed(args: argparse.Namespace) -> int:
    """Entry point of ``m5 lab`` (the arguments parsed by ``m5``'s parser, :func:`add_arguments`)."""
    make_console_safe()
    try:
        options = options_from_args(args, os.environ)
    except LabUsageError as error:
        print(f"m5 lab: error: {error}", file=sys.stderr)
        return 2
    return run_and_report(options)


def run_and_report(options: LabOptions) -> int:
    """Run the lab and print where its report went (and what it pinned); exit status 0 (2: a
    ``--rewrite`` whose saved run does not match the options)."""
    try:
        run = run_lab(options)
    except LabUsageError as error:
        print(f"m5 lab: error: {error}", file=sys.stderr)
        return 2
    labels = labels_for(options.lang)
    print(
        report_text(
            labels,
            "done",
            profile=options.profile,
            count=len(options.sections),
            seconds=f"{run['total_seconds']:.1f}",
            report=", ".join(str(path) for path in run["reports"].values()),
        )
    )
    for path in run["pinned"]:
        print(report_text(labels, "pinned", path=path))
    return 0
