"""The lab notebook's code cells print only texts from the label table (EN and RU)."""

from __future__ import annotations

import ast
import json
import re

import pytest

from autograder.assign import lab_source
from reference_impl.labels import LABELS

CELLS = {
    name: getattr(lab_source, name)
    for name in ("LAB_SETUP", "ENVIRONMENT", "DAGGER", "DQN", "LOG", "OFFLINE", "FQE", "DT", "LANGUAGE", "TAKEAWAYS")
}
# A literal a cell may print as is: a code identifier such as "  dqn_targets:" (the same in both languages).
IDENTIFIER = re.compile(r"^\s*[a-z_]+:\s*$|^-$")
LETTER = re.compile(r"[^\W\d_]")


def _printed_literals(source: str) -> list[str]:
    """String literals that reach print() directly (plain or inside an f-string)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append(arg.value)
                elif isinstance(arg, ast.JoinedStr):
                    found += [v.value for v in arg.values if isinstance(v, ast.Constant)]
    return found


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_cells_print_no_english_of_their_own(cell):
    words = [s for s in _printed_literals(CELLS[cell]) if LETTER.search(s) and not IDENTIFIER.match(s)]
    assert words == [], f"{cell} prints text that is not from LABELS: {words}"


def test_every_label_a_cell_uses_exists_in_both_languages():
    used = set()
    for source in CELLS.values():
        used |= set(re.findall(r'LABELS\["([\w.]+)"\]', source)) | set(re.findall(r'show\("([\w.]+)"', source))
        used |= set(re.findall(r"LABELS\['([\w.]+)' if", source)) | set(re.findall(r"else '([\w.]+)'\]", source))
    assert {"nb.profile", "nb.round", "nb.dt_loss", "nb.dt_request", "run.yours", "run.pinned_seeds"} <= used
    for lang in ("en", "ru"):
        assert not used - set(LABELS[lang]), (lang, sorted(used - set(LABELS[lang])))


def test_pinned_figures_say_pinned_and_the_student_log_figure_says_yours():
    for cell in ("DAGGER", "DQN", "OFFLINE", "FQE", "DT", "LANGUAGE"):
        calls = re.findall(r"figures\.plot_\w+\((?:[^;]|\n)*?\);", CELLS[cell])
        # every figure shows every seed of the course's run (the printed comparison uses seed offset 0)
        assert calls and all("run_label=ALL_SEEDS" in c for c in calls), cell
        assert "compare(" in CELLS[cell], cell  # your numbers next to the pinned ones
    assert "run_label=YOUR_RUN" in CELLS["LOG"]


def test_each_worked_answer_follows_a_cell_printing_the_course_numbers_it_quotes():
    """Students see what the answers quote: before each question whose worked answer cites lab
    numbers, a locked cell prints exactly those claims and comparisons from the kit's pinned
    copy of claims.json; both languages cite the same ids (the code cells stay identical)."""
    from autograder.assign.lab_text import TEXT
    from reference_impl import lab
    from reference_impl.lab_comparisons import phrase
    from reference_impl.lab_results import DEFAULT_CLAIMS

    pinned = lab.load_pinned("M5_course_numbers")
    committed = json.loads(DEFAULT_CLAIMS.read_text(encoding="utf-8"))
    assert pinned == lab.course_lines(committed)  # the kit ships the report's own numbers, as printed
    for cid, entry in committed["comparisons"].items():  # a comparison line leads with its interval's words
        assert pinned["lines"][cid]["en"].startswith(phrase(entry, "en")), cid
    cited_somewhere = False
    for key in TEXT["en"]["answers"]:
        ids = lab_source.answer_ids(TEXT["en"], key)
        assert ids == lab_source.answer_ids(TEXT["ru"], key), key
        for lang in ("en", "ru"):
            cells = lab_source._question(TEXT[lang], key)
            if not ids:
                assert "course_numbers" not in cells[0].source, key
                continue
            cited_somewhere = True
            assert cells[0].source == f"course_numbers({ids!r})", key
            assert cells[-1].source == TEXT[lang]["answers"][key]
        for cid in ids:
            assert set(pinned["lines"][cid]) == {"en", "ru"}, (key, cid)
    assert cited_somewhere
