"""Similarity flags: renamed, re-commented, reformatted copies are flagged; independent code is not."""

from __future__ import annotations

import re
from pathlib import Path

from autograder.grade import similarity

ROOT = Path(__file__).resolve().parents[2]


def _disguised(source: str) -> str:
    """A copy as a student hides one: every local name renamed, comments reworded, layout changed."""
    renamed = re.sub(r"\b(rewards|terminated|gamma|mask|values|out|result|probs|counts|beta)\b", lambda m: "my_" + m.group(1)[::-1], source)
    recommented = re.sub(r"#[^\n]*", "# my own note", renamed)
    return "\n\n".join(line.replace(" = ", "=").replace(", ", ",") for line in recommented.splitlines()) + "\n"


def _record(label: str, code: str, given=frozenset()) -> dict:
    return {"label": label, "score": 120.0, "code": code, "fingerprints": sorted(similarity.fingerprints(code) - given)}


def test_normalized_tokens_ignore_names_comments_and_layout():
    a = "def f(x, y):\n    # add them\n    return x + y  # done\n"
    b = "def   add(first,second):  return first+second\n"
    assert similarity.normalized_tokens(a) == similarity.normalized_tokens(b)
    assert similarity.normalized_tokens("return x - y") != similarity.normalized_tokens("return x + y")
    assert similarity.normalized_tokens("def f(:\n  '''unfinished") == ["def", "N", "(", ":"]  # lexing stops, no crash


def test_a_disguised_copy_is_flagged_and_independent_code_is_not(correct_source):
    given = similarity.released_fingerprints()
    reference = (ROOT / "reference_impl" / "kernels.py").read_text()
    torch_port = (ROOT / "reference_impl" / "torch_kernels.py").read_text()
    records = [
        _record("alice.py", correct_source, given),
        _record("mallory.py", _disguised(correct_source), given),
        _record("numpy.py", reference, given),
        _record("torch.py", torch_port, given),
    ]
    flags = similarity.flag_pairs(records)
    assert [(f["a"], f["b"]) for f in flags] == [("alice.py", "mallory.py")]
    assert flags[0]["similarity"] >= similarity.THRESHOLD and flags[0]["code"][1].startswith(_disguised(correct_source)[:50])


def test_the_released_notebook_is_no_evidence():
    # two students who hand in the release untouched share only the code they were given
    from autograder.grade.extract import from_notebook

    given = similarity.released_fingerprints()
    untouched = similarity.code_of(from_notebook(similarity.RELEASED[0]))
    assert given and not (similarity.fingerprints(untouched) - given)
    assert similarity.flag_pairs([_record("a.ipynb", untouched, given), _record("b.ipynb", untouched, given)]) == []


def test_an_idiom_of_half_the_class_is_not_evidence():
    shared = (ROOT / "reference_impl" / "kernels.py").read_text()
    records = [_record(f"s{i}.py", shared) for i in range(30)]
    assert similarity.flag_pairs(records) == []  # held by all 30 > max(10, 30 // 5)
    assert similarity.flag_pairs(records[:2])  # two of them alone are a pair
