"""The class report: what the class got wrong, in numbers that match grades.csv."""

from __future__ import annotations

import csv
import json
import statistics
from html.parser import HTMLParser

import pytest

from autograder import cli
from autograder.grade import class_report
from autograder.grade.score import assignment_total


def _record(label, score, failed=(), mistakes=(), answers=(), graded=True, error="", seconds=1.0, limits=()):
    return {
        "label": label,
        "score": score,
        "maximum": 120.0,
        "graded": graded,
        "error": error,
        "seconds": seconds,
        "failed": [list(f) for f in failed],
        "mistakes": [list(m) for m in mistakes],
        "answers": [list(a) for a in answers],
        "limits": [list(x) for x in limits],
    }


TERMINAL = ("dqn_targets", "terminal_rows", "dqn_targets: terminal rows", "dqn_targets: терминальные")
SHAPE = ("dqn_targets", "shape", "dqn_targets: shape", "dqn_targets: форма")
BOOTSTRAPS = ("dqn_targets.bootstraps_terminal", "dqn_targets", "terminal rows still bootstrap", "бутстрэп")


def test_the_report_counts_failures_mistakes_and_wrong_answers_per_class():
    records = [
        _record("alice.py", 120.0),
        _record("bob.py", 100.0, failed=[TERMINAL, SHAPE], mistakes=[BOOTSTRAPS], answers=[("ex09", "ex09_value", "[0.5]")], seconds=3.0),
        _record(
            "carol.py",
            90.0,
            failed=[TERMINAL],
            mistakes=[BOOTSTRAPS],
            answers=[("ex09", "ex09_value", "[0.5]")],
            limits=[("fqe_targets", "a call of fqe_targets did not finish within its time limit")],
        ),
        _record("dave.py", 0.0, graded=False, error="not a readable notebook"),
    ]
    document = class_report.build(records, "en")
    assert (document["submissions"], document["graded"]) == (4, 3)
    assert document["mean"] == pytest.approx(statistics.fmean([120, 100, 90]), abs=1e-4)
    assert document["median"] == 100.0 and sum(document["histogram"]["counts"]) == 3
    assert document["not_graded"] == [{"submission": "dave.py", "why": "not a readable notebook"}]
    assert [(k["kernel"], k["failed"]) for k in document["kernels"]] == [("dqn_targets", 2)]
    assert [(p["property"], p["failed"]) for p in document["properties"]] == [("terminal_rows", 2), ("shape", 1)]
    assert document["properties"][0]["share"] == pytest.approx(2 / 3, abs=1e-4)
    assert [(m["id"], m["count"], m["submissions"]) for m in document["mistakes"]] == [
        ("dqn_targets.bootstraps_terminal", 2, ["bob.py", "carol.py"])
    ]
    assert document["answers"] == [{"exercise": "ex09", "name": "ex09_value", "wrong": [{"answer": "[0.5]", "count": 2}]}]
    assert document["slowest"][0] == {"submission": "bob.py", "seconds": 3.0}
    assert [x["submission"] for x in document["limits"]] == ["carol.py"]


class _Collect(HTMLParser):
    """Text by element id, every tag, and every attribute, of a page."""

    def __init__(self):
        super().__init__()
        self.by_id, self.tags, self.attrs, self._open = {}, [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        self._open.append(dict(attrs).get("id"))

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        for element in self._open:
            if element:
                self.by_id[element] = self.by_id.get(element, "") + data


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_outputs_comparison_is_escaped_and_says_what_differs(lang):
    """Kernel names come from the reference, but the page escapes them all the same."""
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    first = {**_record("a.py", 120.0), "fingerprints": list(range(40)), "code": "x = 1"}
    second = {**_record("b.py", 110.0), "fingerprints": list(range(40)), "code": "x = 1"}
    first["outputs"] = {"dqn_targets": "0" * 16, hostile: "1" * 16, "fqe_targets": None}
    second["outputs"] = {"dqn_targets": "0" * 16, hostile: "2" * 16, "fqe_targets": "3" * 16}
    document = class_report.build([first, second], lang)
    (cluster,) = document["similar"]["clusters"]
    assert cluster["members"][1]["outputs_agree"] == {"same": ["dqn_targets"], "different": [hostile], "unknown": ["fqe_targets"]}
    page = class_report.to_html(document, lang)
    parsed = _Collect()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not [name for name, _ in parsed.attrs if name.startswith("on")]
    words = class_report.WORDS[lang]
    shown = parsed.by_id["cluster-1"]
    assert words["differ_in"].format(kernels=hostile) in shown  # as text
    assert words["same_for"].format(same=1, total=3, kernels={"en": "kernels", "ru": "ядер"}[lang]) in shown
    one = class_report.outputs_text({"same": ["dqn_targets"], "different": [], "unknown": []}, lang)
    assert one == {"en": "same for 1 of 1 kernel", "ru": "совпадают у 1 из 1 ядра"}[lang]
    assert words["not_compared"].format(kernels="fqe_targets") in shown
    assert class_report.outputs_text({}, lang) == words["no_outputs"]  # a record from before the digests


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_student_text_is_escaped_and_nothing_in_the_page_can_run(lang):
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>\x1b[2J'
    records = [
        _record(hostile + ".py", 10.0, failed=[TERMINAL], mistakes=[BOOTSTRAPS], answers=[("ex09", "ex09_value", hostile)]),
        _record("x.py", 0.0, graded=False, error=hostile),
    ]
    page = class_report.to_html(class_report.build(records, lang), lang)
    parsed = _Collect()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not [name for name, _ in parsed.attrs if name.startswith("on")]
    assert "default-src 'none'" in page and "\x1b" not in page
    assert hostile.split("\x1b")[0] in parsed.by_id["mistakes"]  # shown as text, escaped
    assert class_report.WORDS[lang]["title"] in page


def test_a_class_run_writes_a_report_whose_figures_match_grades_csv(tmp_path, corpus, correct_source):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(correct_source)
    (folder / "bob.py").write_text(correct_source + "\n\ndef dqn_targets(*args, **kwargs):\n    return 0.0\n")
    (folder / "carol.py").write_text("import numpy as np\nex09_active_mean_nll = 12345.0\n")
    (folder / "dave.ipynb").write_text("{not json")
    out = tmp_path / "out"
    assert cli.main(["grade", str(folder), "--no-shrink", "--out", str(out), "--lang", "ru"]) == cli.EXIT_INCOMPLETE  # dave
    rows = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8")))
    graded = [float(r["score"]) for r in rows if not r["error"]]
    document = json.loads((out / "class_report.json").read_text(encoding="utf-8"))
    assert (document["submissions"], document["graded"]) == (len(rows), len(graded)) == (4, 3)
    assert document["maximum"] == assignment_total()
    page = _Collect()
    page.feed((out / "class_report.html").read_text(encoding="utf-8"))
    assert int(page.by_id["n-graded"]) == len(graded) and int(page.by_id["n-submissions"]) == len(rows)
    assert float(page.by_id["mean"]) == pytest.approx(statistics.fmean(graded), abs=1e-3)
    assert float(page.by_id["median"]) == pytest.approx(statistics.median(graded), abs=1e-3)
    failed_dqn = sum(1 for r in rows if not r["error"] and float(r["dqn_targets"]) < 10)
    assert {k["kernel"]: k["failed"] for k in document["kernels"]}["dqn_targets"] == failed_dqn == 2
    carol = [a for a in document["answers"] if a["name"] == "ex09_active_mean_nll"]
    assert carol and {"answer": "12345.0", "count": 1} in carol[0]["wrong"]
    assert [x["submission"] for x in document["not_graded"]] == ["dave.ipynb"]
    # bob is alice's code with one kernel redefined: flagged, with both scores, read as graded differently
    (cluster,) = document["similar"]["clusters"]
    assert [(m["label"], m["score"]) for m in cluster["members"]] == [
        (r["submission"], float(r["score"])) for r in rows if r["submission"] in ("alice.py", "bob.py")
    ]
    assert [m["graded_alike"] for m in cluster["members"]] == [True, False]
    assert [m["outputs_agree"]["different"] for m in cluster["members"]] == [[], ["dqn_targets"]]
    (pair,) = json.loads((out / "similarity_pairs.json").read_text(encoding="utf-8"))["pairs"]
    assert (pair["a"], pair["b"]) == ("alice.py", "bob.py") and not pair["graded_alike"]
    assert pair["outputs_agree"]["different"] == ["dqn_targets"] and len(pair["outputs_agree"]["same"]) == 9
    kept = {row["label"]: row["record"]["outputs"] for row in json.loads((out / "grades.json").read_text(encoding="utf-8"))["rows"]}
    assert kept["dave.ipynb"] == {} and set(kept["carol.py"].values()) == {None}  # never graded; every kernel missing
    assert "различаются: dqn_targets" in (out / "class_report.html").read_text(encoding="utf-8")
    assert "Отчёт по группе" in (out / "class_report.html").read_text(encoding="utf-8")
