"""Nothing a student receives points outside the assignment folder.

Every text file under ``release/`` (the notebooks' markdown, code and any stored
outputs, the kit's ``.py`` modules, README.md, requirements.txt) is scanned for the
course repository's own names, which a student does not have: the package
``reference_impl``, the ``docs/`` folder and the course's ``m5`` commands (``m5 lab``,
``m5 release``). The kit's pinned arrays are not text and are left out; their protocol
record (JSON) is read like any other text.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from classroom import RELEASE_ROOT  # tests/autograder is on sys.path

OUTSIDE = re.compile(r"reference_impl|\bdocs/|(?<![\w-])m5 (?=[a-z])")


def student_texts(folder: Path) -> dict[str, str]:
    """Place -> text of every student-facing text in ``folder`` (one entry per notebook cell and output)."""
    texts = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or "__pycache__" in relative.parts or ("data" in relative.parts and path.suffix != ".json"):
            continue
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                texts[f"{relative}:{cell.id}"] = cell.source
                for i, output in enumerate(cell.get("outputs", [])):
                    texts[f"{relative}:{cell.id}:out{i}"] = str(output.get("text", "")) + str(output.get("data", ""))
        elif path.suffix in (".py", ".md", ".txt", ".json", ".toml"):
            texts[str(relative)] = path.read_text(encoding="utf-8")
    return texts


@pytest.mark.parametrize("folder", sorted(p.name for p in RELEASE_ROOT.iterdir() if p.is_dir()))
def test_no_release_text_names_what_the_student_does_not_have(folder):
    texts = student_texts(RELEASE_ROOT / folder)
    assert any(name.endswith(".ipynb:intro") for name in texts) and any(name.endswith("README.md") for name in texts)
    assert any(name.endswith("lab/cli.py") for name in texts) and "requirements.txt" in texts
    assert any(name.endswith("lab/text/ru.toml") for name in texts)  # the lab's own words are student text too
    found = {name: sorted(set(OUTSIDE.findall(text))) for name, text in texts.items() if OUTSIDE.search(text)}
    assert not found, found


def test_the_scan_finds_each_name():
    for text in ("see reference_impl/data", "docs/lab-results", "run `m5 lab --pin`", "m5 release replaces"):
        assert OUTSIDE.search(text), text
    for text in ("m5_student/data", "python -m m5_student check", "module05_en", "RL_LLM_M5_PROFILE=full"):
        assert not OUTSIDE.search(text), text
