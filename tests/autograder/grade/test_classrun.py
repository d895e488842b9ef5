"""A class run reads each submission once: its class outputs use what grading read."""

from __future__ import annotations

import json
from collections import Counter

import nbformat

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, filled_notebook, notebook

from autograder.grade import classrun, discover, extract, pipeline, shards, written


def test_the_class_outputs_come_from_the_grading_pass_which_reads_each_submission_once(tmp_path, correct_source, monkeypatch):
    folder = tmp_path / "class"
    (folder / "ann").mkdir(parents=True)
    (folder / "bob").mkdir()
    (folder / "ann" / "homework.py").write_text(correct_source)
    nb = filled_notebook(notebook("assignment", "en", RELEASE_ROOT), notebook("assignment", "en"))
    nbformat.write(nb, folder / "bob" / "m05_assignment_en.ipynb")
    found = discover.discover([folder], set(pipeline.KERNELS), root=folder).submissions
    assert len(found) == 2
    expected_answers = written.answers_in(folder / "bob" / "m05_assignment_en.ipynb", written.question_ids())

    reads = Counter()
    for module in (extract, written):
        real = module.read_bytes

        def counted(path, limit, real=real):
            if folder in path.parents:  # not the released notebooks the similarity flags discount
                reads[path.name] += 1
            return real(path, limit)

        monkeypatch.setattr(module, "read_bytes", counted)
    classrun.grade_into(found, tmp_path / "out", jobs=1)
    assert reads == {"homework.py": 1, "m05_assignment_en.ipynb": 1}

    answers = json.loads((tmp_path / "out" / written.ANSWERS_FILE).read_text())["submissions"]
    assert [(e["label"], e["notebook"], e["answers"]) for e in answers] == [("bob/m05_assignment_en.ipynb", *expected_answers)]
    assert any(answers[0]["answers"].values())  # the instructor's answers, not blanks
    rows = json.loads((tmp_path / "out" / shards.ROWS_FILE).read_text())["rows"]
    assert [row["label"] for row in rows] == ["ann/homework.py", "bob/m05_assignment_en.ipynb"]
    assert all(row["record"]["fingerprints"] and row["record"]["code"] for row in rows)
