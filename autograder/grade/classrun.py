"""Grading a class: every found submission graded, each result written as it finishes,
then the grade sheets (``grades.csv`` and an LMS export).

Shared by ``m5 grade``, ``m5 demo`` and Gradescope's ``run_autograder``, so that a
class graded by any of them is graded the same way.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from pathlib import Path

from autograder.grade import cache, class_report, corpus_cache, gradebook, output_digest, pipeline, report, shards, similarity, written
from autograder.grade.extract import SubmissionError, extract
from autograder.grade.score import SubmissionResult


def _refused_or_unreadable(item, lang: str | None):
    """A SubmissionResult with ``error`` for a file refused before grading, else None."""
    if item.error is None:
        return None
    return SubmissionResult(item.path.name, lang or "en", [], 0.0, error=item.error)


def refusal_alone(item) -> str | None:
    """Why one submission graded on its own cannot be graded at all (``m5 grade`` refuses it,
    exit 2; the pytest plugin gives a usage error): refused when found, or unreadable. None
    when it can be graded."""
    if item.error is not None:
        return item.error
    try:
        extract(item.path, set(pipeline.KERNELS))
    except SubmissionError as exc:
        return str(exc)
    return None


def _with_identity(result, item):
    """``result`` with where its submission was found (for grades.csv and output names), and its
    error naming the file as the class does (its path inside the class folder), never by the
    grader's own absolute path, which students and markers have no business reading."""
    error = result.error
    if error:
        shown = item.relative or item.path.name
        for form in {str(item.path), str(Path(item.path).absolute())}:
            error = error.replace(form, shown)
    return replace(result, relative=item.relative, student=item.student, assignment=item.assignment, timestamp=item.timestamp, error=error)


def grade_found(
    found: list, *, jobs: int, lang: str | None, shrink: bool, on_result, progress=None, recycle: bool = True, first=None
) -> list:
    """Grade every found submission (refused ones become error rows without grading);
    ``on_result(index, result)`` is called as each one finishes. Results in input order.

    ``first``: a function giving the worker started ahead for the first submission (or
    None), called once the corpus is loaded if the run grades one at a time; the worker
    is owned from then on. Without it, a one-at-a-time run starts its own."""
    results: list = [None] * len(found)

    def deliver(index: int, result) -> None:
        results[index] = _with_identity(result, found[index])
        on_result(index, results[index])

    todo = []
    for index, item in enumerate(found):
        refused = _refused_or_unreadable(item, lang)
        if refused is not None:
            deliver(index, refused)
        else:
            todo.append(index)
    if not todo:
        return results
    one_at_a_time = jobs <= 1 and recycle
    worker = None
    try:
        if one_at_a_time and first is None:  # started before the corpus loads: its start overlaps the load
            worker = cache.first_worker()
        corpus = corpus_cache.load_corpus()
        # The corpus and the modules live until the command ends: the collections from
        # here on, and the one at exit (0.05-0.13 s with them), skip them.
        gc.freeze()
        if one_at_a_time and first is not None:
            worker = first()
        # exNN_ answers are graded in a .py exactly as in a notebook: one maximum per assignment.
        options = dict(jobs=jobs, progress=progress, lang=lang, shrink=shrink, answers=True, recycle=recycle)
        if worker is not None:
            options["first"], worker = worker, None  # grade_many closes it if it does not fit
        paths = [found[i].path for i in todo]
        pipeline.grade_many(paths, corpus, on_result=lambda i, _path, result: deliver(todo[i], result), **options)
        return results
    finally:
        if worker is not None:
            worker.close()


def grade_into(
    found: list,
    out: Path,
    *,
    jobs: int = 1,
    lang: str | None = None,
    shrink: bool = False,
    isolation_warning: str | None = None,
    csv_format: str = "m5",
    progress=None,
    recycle: bool = True,
    first=None,
    shard: tuple[int, int] | None = None,
    also_answers: list = (),
    root: Path | None = None,
    update: bool = False,
    submitted=None,
):
    """Grade ``found`` into the gradebook ``out`` (:mod:`.gradebook`): ``<out>/<relative path>/results.json``
    per submission, written as each finishes, then ``grades.json`` (the rows, ``root`` the class
    folder they were found in), the class report (``class_report.html`` and ``.json``, in ``lang``
    or English), ``written_answers.json`` (of the graded notebooks and of ``also_answers``, such
    as the lab's, for ``m5 review``) and every sheet rebuilt from the gradebook.
    ``update``: ``out`` already holds a gradebook of this class; the rows of the submissions
    graded now are replaced, every other row, mark and adjustment is kept.
    ``shard`` (K, N): only the class's K-th of N shards (:mod:`.shards`), for ``m5 merge``.
    ``submitted``: (ISO time, its source) of a found submission (:func:`.late.submission_time`), kept
    in its row for the late policy; None keeps no time.
    Returns (results of the submissions graded, in input order, {their index: results.json path},
    the labels graded again whose files had not changed)."""
    out.mkdir(parents=True, exist_ok=True)
    before = gradebook.load(out) if update else None
    kept = [row for row in before.rows] if before else []
    new_labels = [item.relative for item in found]
    order = [row["label"] for row in kept] + [label for label in new_labels if label not in {row["label"] for row in kept}]
    folder_of = dict(zip(order, report.output_dirs(order, reserved=report.CLASS_FILES)))
    indices = list(range(len(found))) if shard is None else shards.select(found, shard)
    results_files: dict[int, Path] = {}
    mine = [found[i] for i in indices]
    # The class outputs of each submission are made as it finishes, from what its grading read.
    given = similarity.released_fingerprints()
    ids = written.question_ids()
    records: list = [None] * len(mine)
    answers: dict[int, dict] = {}

    def write_one(index: int, result) -> None:  # as each submission finishes: a killed run keeps them
        item = mine[index]
        results_files[index] = report.write_results(result, out / folder_of[item.relative], isolation_warning)
        records[index] = class_report.record(result, _code(item, result), given)
        if item.path.suffix == ".ipynb" and item.error is None:
            answers[index] = written.entry(item, *_answers(item, result, ids))

    results = grade_found(mine, jobs=jobs, lang=lang, shrink=shrink, on_result=write_one, progress=progress, recycle=recycle, first=first)
    class_digest, digests = shards.class_identity(found)
    fresh = {
        item.relative: {**report.row_dict(result), "record": record, "digest": digests[item.relative], **_times(item, submitted)}
        for item, result, record in zip(mine, results, records)
    }
    unchanged = [label for label, row in fresh.items() if any(k["label"] == label and k.get("digest") == row["digest"] for k in kept)]
    rows = [fresh.pop(row["label"], row) for row in kept] + list(fresh.values())
    class_report.write([row["record"] for row in rows], out, lang or "en")
    others = [item for item in also_answers if shard is None or shards.shard_of(item.relative, shard[1]) == shard[0]]
    regraded = {item.relative for item in [*mine, *others]}
    previous_answers = [e for e in written.class_answers(out) if e["label"] not in regraded] if update else []
    written.write_class_answers(
        out,
        previous_answers
        + [answers[index] for index in sorted(answers)]
        + [
            written.entry(item, *written.answers_in(item.path, ids))
            for item in others
            if item.path.suffix == ".ipynb" and item.error is None
        ],
    )
    run = {"class": class_digest, "grader": grader_identity()}  # what m5 merge checks
    if before:
        run["class"] = shards.digest_of_rows(rows)  # an updated gradebook: no shard of anything
        class_root = before.document.get("root")
    else:
        class_root = str(root) if root is not None else None
    size = len(rows) if shard is None else len(found)
    positions = list(range(len(rows))) if shard is None else indices
    shards.write_rows_file(out, shard, size, positions, rows, [row["record"] for row in rows], run, root=class_root)
    if shard is None:
        gradebook.rebuild(out, csv_format)
    else:  # a shard's own sheet (m5 merge rebuilds the class's)
        report.write_grades_csv(results, out / "grades.csv")
    return results, results_files, unchanged


def grader_identity() -> str:
    """The grader's identity in ``grades.json`` (``m5 merge`` joins shards of one grader only):
    its corpus key and the scheme of the outputs digests, since digests of two corpora or two
    schemes cannot be compared."""
    return f"{cache.corpus_key(None)}+{output_digest.SCHEME}"


def _times(item, submitted) -> dict:
    if submitted is None:
        return {}
    when, source = submitted(item)
    return {"submitted": when, "time_source": source}


def _code(item, result) -> str:
    """A submission's code for the similarity flags: as its grading read it, else read now
    (a submission whose grading did not get that far; "" when it cannot be read)."""
    if result.code is not None:
        return result.code
    try:
        return similarity.code_of(extract(item.path))
    except (SubmissionError, OSError, ValueError):
        return ""


def _answers(item, result, ids) -> tuple[str, dict[str, str]]:
    """A notebook's written answers: as its grading read them, else read now."""
    return result.written if result.written is not None else written.answers_in(item.path, ids)
