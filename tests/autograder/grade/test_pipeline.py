"""End-to-end grading of small submissions: scores, isolation per kernel, reports."""

import csv
import json

import nbformat
import pytest

from autograder.grade import cache, corpus_cache, pipeline, report

STUB = """
def {name}(*args, **kwargs):
    raise NotImplementedError("write {name}")
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def grade(path, corpus, **kw):
    return pipeline.grade_submission(path, corpus, shrink=False, **kw)


def test_correct_submission_gets_full_marks_and_identical_regrades(tmp_path, corpus, correct_source):
    path = write(tmp_path, "correct.py", correct_source)
    first, second = grade(path, corpus), grade(path, corpus)
    assert first.score == first.max_score == 100
    assert [(t.key, t.score) for t in first.tests] == [(t.key, t.score) for t in second.tests]
    names = [t.name["en"] for t in first.tests]
    assert all(any(n.startswith(k + ": ") for k in pipeline.KERNELS) for n in names)
    assert len(names) == len(set(names))


def test_stub_missing_and_broken_kernels_cost_only_themselves(tmp_path, corpus, correct_source):
    text = correct_source.replace("def return_to_go(", "def _unused_return_to_go(")  # missing
    text += STUB.format(name="expectile_loss")  # stub
    text += "\ndef fqe_targets(*a, **k):\n    import os\n    os._exit(7)\n"  # kills its worker
    result = grade(write(tmp_path, "mixed.py", text), corpus)
    per = result.by_group()
    assert per["return_to_go"][0] == 0 and per["expectile_loss"][0] == 0 and per["fqe_targets"][0] == 0
    assert all(per[k] == (10.0, 10.0) for k in per if k not in {"return_to_go", "expectile_loss", "fqe_targets"})
    messages = {t.group: t.failure.message["en"] for t in result.tests if not t.passed}
    assert "not defined" in messages["return_to_go"]
    assert "not implemented" in messages["expectile_loss"]
    assert "stopped" in messages["fqe_targets"]


def test_a_python_file_loses_only_the_module_level_statement_that_kills_its_process(tmp_path, corpus, correct_source):
    """A .py runs statement by statement: one that ends the process (os._exit, a crash, an
    out-of-memory kill) is left out when the file is loaded again, as a notebook cell is.
    The kernels defined before it and after it are graded."""
    half = correct_source.index("def return_to_go(")
    text = correct_source[:half] + "import os\nos._exit(3)  # a leftover experiment\n\n" + correct_source[half:]
    killing_line = text[: text.index("os._exit(3)")].count("\n") + 1
    result = grade(write(tmp_path, "exits.py", text), corpus)
    assert result.score == 100
    stopped = [n for n in result.notes if "stopped the grading process" in n["en"]]
    assert len(stopped) == 1 and f"line {killing_line}" in stopped[0]["en"]
    assert f"строке {killing_line}" in stopped[0]["ru"] and "остановила процесс проверки" in stopped[0]["ru"]


def test_a_python_file_that_stops_its_process_again_and_again_is_reloaded_a_bounded_number_of_times(tmp_path, corpus, correct_source):
    """Each left-out statement costs a reload: past 16 the file is not loaded again, and
    the feedback says why, in both languages (a notebook's cells are bounded by their number)."""
    from autograder.grade.worker.parent import MAX_STATEMENTS_LEFT_OUT

    text = correct_source + "\nimport os\n" + "os._exit(1)\n" * (MAX_STATEMENTS_LEFT_OUT + 4)
    result = grade(write(tmp_path, "exits_forever.py", text), corpus)
    assert result.score == 0
    stopped = [n for n in result.notes if "stopped the grading process" in n["en"]]
    assert len(stopped) == MAX_STATEMENTS_LEFT_OUT + 1
    assert "too many statements" in stopped[-1]["en"] and "слишком много инструкций" in stopped[-1]["ru"]


@pytest.mark.beside
def test_each_statement_of_a_python_file_has_its_own_time_limit(tmp_path, corpus, correct_source):
    """Statements that each keep within the cell time limit, and together run past it,
    cost nothing; one that runs past it costs only itself, however late in the file it
    starts (the whole file was once timed as one cell, then lost whole)."""
    text = correct_source + "\nimport time\n" + "time.sleep(0.7)\n" * 5 + "\nwhile True:  # a training run left at module level\n    pass\n"
    budget = pipeline.Budget(cell_timeout=1.0)
    result = grade(write(tmp_path, "slow_tail.py", text), corpus, budget=budget)
    assert result.score == 100
    timed_out = [n for n in result.notes if "time limit" in n["en"]]
    assert len(timed_out) == 1 and "one statement" in timed_out[0]["en"] and "инструкцию" in timed_out[0]["ru"]
    assert f"line {text.count(chr(10)) - 1}" in timed_out[0]["en"]


def test_notebook_cell_with_syntax_error_costs_only_its_kernels(tmp_path, corpus, correct_source):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(correct_source),
        nbformat.v4.new_code_cell("def iql_advantage_weights(a, beta, max_weight=100.0):\n    return (\n"),
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    result = grade(path, corpus, answers=False)
    assert result.score == 100  # the broken cell redefines nothing; the earlier definition stands
    assert any("SyntaxError" in note["en"] for note in result.notes)
    nb.cells = [nbformat.v4.new_code_cell(correct_source.replace("def iql_advantage_weights(", "def _old(")), nb.cells[1]]
    nbformat.write(nb, path)
    result = grade(path, corpus, answers=False)
    assert result.by_group()["iql_advantage_weights"][0] == 0 and result.score == 90


def test_wrong_kernel_feedback_names_input_expected_and_got(tmp_path, corpus, correct_source):
    text = correct_source + (
        "\ndef dqn_targets(rewards, terminated, next_q_target, gamma=0.99):\n"
        "    r = np.asarray(rewards, dtype=float)\n"
        "    return r + gamma * np.asarray(next_q_target, dtype=float).max(axis=1)\n"
    )
    result = pipeline.grade_submission(write(tmp_path, "nomask.py", text), corpus, lang="ru")
    failed = [t for t in result.tests if not t.passed]
    assert {t.group for t in failed} == {"dqn_targets"}
    terminal = next(t for t in failed if t.key == "terminal_rows")
    text = report.feedback(terminal, "ru")
    assert "НЕ ПРОЙДЕНО" in text and "dqn_targets(rewards=" in text and "ожидалось" in text and "получено" in text
    assert "hidden" not in text and "Traceback" not in text


def test_reports_follow_the_gradescope_schema_and_class_csv(tmp_path, corpus, correct_source):
    good = grade(write(tmp_path, "a.py", correct_source), corpus)
    bad = grade(write(tmp_path, "b.py", "import numpy as np\n"), corpus)
    path = report.write_results(good, tmp_path / "out" / "a", isolation_warning=None)
    data = json.loads(path.read_text())
    assert data["score"] == 100 and data["execution_time"] >= 0 and data["output"]
    for test in data["tests"]:
        assert set(test) == {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in {"passed", "failed"}
    csv_path = report.write_grades_csv([good, bad], tmp_path / "grades.csv")
    rows = list(csv.DictReader(csv_path.open()))
    assert [r["score"] for r in rows] == ["100", "0"] and rows[1]["dqn_targets"] == "0"
    summary = report.summary_table([good, bad])
    assert "dqn_targets" in summary and "5.00/10" in summary


def test_numerical_answers_are_graded_for_notebooks(tmp_path, corpus):
    from reference_impl import exercises

    values = exercises.graded_answers(9)
    lines = [f"{name} = {answer.value!r}" for name, answer in values.items()]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("\n".join(lines)), nbformat.v4.new_code_cell("ex10_exact_regret = 4.2")]
    path = tmp_path / "answers.ipynb"
    nbformat.write(nb, path)
    result = grade(path, corpus)
    per = result.by_group()
    assert per["ex09"] == (len(values), len(values))
    assert per["ex10"][0] == 0  # 4.2 is the first-order value, not the exact regret


def _fake_grade(path, corpus, **kwargs):
    """Stands in for grade_submission in the pool: names decide what happens."""
    import os

    from autograder.grade.score import SubmissionResult

    if "crash" in path.name:
        raise RuntimeError("boom")
    if "dies" in path.name:
        os._exit(9)  # the grading process itself dies
    return SubmissionResult(path.name, "en", [], 0.0)


def test_grade_many_delivers_each_result_as_it_finishes_and_survives_crashes(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "grade_submission", _fake_grade)
    # jobs 1 grades in this very process, so only a pool can survive a dying grader
    for jobs, names in ((1, ["a.py", "crash.py", "b.py"]), (2, ["a.py", "crash.py", "b.py", "dies.py", "c.py"])):
        paths = [write(tmp_path, n, "") for n in names]
        delivered = []
        results = pipeline.grade_many(paths, {}, jobs=jobs, on_result=lambda i, p, r, delivered=delivered: delivered.append((i, p, r)))
        assert sorted(i for i, _, _ in delivered) == list(range(len(names)))
        assert all(paths[i] == p and results[i] is r for i, p, r in delivered)
        assert [r.submission for r in results] == names
        errors = {r.submission: r.error for r in results}
        assert "boom" in errors["crash.py"]
        assert all(errors[n] is None for n in names if n not in ("crash.py", "dies.py"))
        if "dies.py" in errors:
            assert errors["dies.py"] == pipeline.POOL_DIED


def test_a_class_run_one_at_a_time_uses_spare_workers_and_leaves_none(tmp_path, corpus, correct_source, monkeypatch):
    import tempfile

    import psutil

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # nothing of a worker may land here
    paths = [write(tmp_path, f"s{i}.py", correct_source) for i in range(3)]
    paths.insert(1, write(tmp_path, "broken.py", correct_source.replace("def dqn_targets(", "def _gone(")))
    results = pipeline.grade_many(paths, corpus, jobs=1, shrink=False)
    assert [r.score for r in results] == [100, 90, 100, 100]
    assert psutil.Process().children(recursive=True) == [] and list(scratch.iterdir()) == []


KILLS_ITS_WORKER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)  # the worker parent"


@pytest.mark.beside
def test_a_class_run_loads_the_next_submission_ahead_and_grades_it_as_alone(tmp_path, corpus, correct_source, monkeypatch):
    """The next submission's cells load in the other sandbox while the current one is
    graded. Whatever happens there (an unreadable file, a cell that kills its worker)
    is met again, in order, and every submission is graded exactly as on its own."""
    taken = []
    real_take = pipeline.NextSubmission.take

    def take(self):
        got = real_take(self)
        taken.append((self.path.name, got is not None and got[1].planned))
        return got

    monkeypatch.setattr(pipeline.NextSubmission, "take", take)
    # A slow kernel in the middle: the other sandbox is surely clean before it ends.
    slow = (
        correct_source.replace("def return_to_go(", "def _rtg(")
        + "\ndef return_to_go(*a, **k):\n    import time\n    time.sleep(0.001)\n    return _rtg(*a, **k)\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(correct_source), nbformat.v4.new_code_cell(KILLS_ITS_WORKER)]
    nbformat.write(nb, tmp_path / "kills.ipynb")
    paths = [
        write(tmp_path, "slow.py", slow),
        write(tmp_path, "unreadable.ipynb", "{not json"),
        write(tmp_path, "slow2.py", slow),
        tmp_path / "kills.ipynb",
        write(tmp_path, "last.py", correct_source),
    ]
    results = pipeline.grade_many(paths, corpus, jobs=1, shrink=False, answers=False)
    alone = [pipeline.grade_many([p], corpus, jobs=1, shrink=False, answers=False)[0] for p in paths]
    for path, together, single in zip(paths, results, alone):
        seen = f"{path.name}: notes together {together.notes}, alone {single.notes}"  # what a failure needs said
        assert together.error == single.error, seen
        assert [repr(t) for t in together.tests] == [repr(t) for t in single.tests], seen
        assert [n["en"] for n in together.notes] == [n["en"] for n in single.notes], seen
    assert "unreadable.ipynb" in results[1].error and results[0].score == results[2].score == 100
    assert results[3].score == 100 and any("stopped the grading process" in n["en"] for n in results[3].notes)
    # After the slow submission, the next one was loaded and its batches were already running.
    assert ("kills.ipynb", True) in taken or ("last.py", True) in taken, taken


def test_the_first_worker_starts_from_the_cached_forms_and_serves_the_first_submission(tmp_path, corpus, correct_source, handed_over):
    handed = handed_over
    path = write(tmp_path, "s.py", correct_source)
    first = cache.first_worker()  # the session's corpus is cached: its forms are there
    assert first is not None and first._holder is not None
    result = pipeline.grade_many([path], corpus, jobs=1, shrink=False, first=first)[0]
    assert result.score == 100
    assert handed[0] == (first, True)  # the first submission took the worker started early
    assert first._holder is None

    # A worker that does not fit (recycling off) is closed, never used.
    unfit = cache.first_worker()
    proc = unfit._holder.proc
    assert pipeline.grade_many([path], corpus, jobs=1, shrink=False, first=unfit, recycle=False)[0].score == 100
    assert all(spare is not unfit for spare, _ in handed[1:]) and proc.poll() is not None


def test_damaged_cached_forms_are_made_again_and_give_no_first_worker(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("M5_CACHE_DIR", str(tmp_path))
    corpus_path = cache.corpus_path(None, pipeline.Budget())
    corpus_path.parent.mkdir(parents=True, exist_ok=True)
    cache.write_atomically(corpus_path, corpus_cache.detach(corpus))
    forms = cache.forms_path(corpus_path)
    forms.write_bytes(b"not a pickle")
    assert cache.first_worker() is None
    again = corpus_cache.load_corpus()
    assert pipeline.corpus_requests(again) == pipeline.corpus_requests(corpus)
    first = cache.first_worker()
    try:
        assert first is not None and first.spec.preload == pipeline.corpus_requests(corpus)
    finally:
        first.close()


def test_loading_the_corpus_leaves_garbage_collection_as_it_found_it(corpus, monkeypatch):
    """load_corpus pauses collections while it unpickles (a process-wide switch): it must
    give back the caller's setting, enabled or not, also when the cache is unreadable."""
    import gc
    import pickle

    seen = []

    def unpickle(fh):
        seen.append(gc.isenabled())
        return real(fh)

    real = pickle.load
    monkeypatch.setattr(corpus_cache.pickle, "load", unpickle)
    try:
        for enabled in (True, False):
            gc.enable() if enabled else gc.disable()
            corpus_cache.load_corpus()
            assert gc.isenabled() is enabled
        gc.enable()
        monkeypatch.setattr(corpus_cache, "check_layout", lambda raw: 1 / 0)  # a bug: raised, collections back on
        with pytest.raises(ZeroDivisionError):
            corpus_cache.load_corpus()
        assert gc.isenabled()
    finally:
        gc.enable()
    assert seen[:2] == [False, False]  # the corpus itself was read with collections paused
