"""The lab notebook's code cells print only texts from the label table (EN and RU)."""

from __future__ import annotations

import ast
import json
import re

import pytest

from autograder.assign import lab_source
from reference_impl.lab.labels import LABELS

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


def test_every_figure_and_table_names_its_run_and_shows_the_course_run_as_mean_and_interval():
    """One rule: a figure of the course's run is titled COURSE_RUN (mean over its seeds, 95 %
    interval), a figure of the student's run YOUR_RUN; every your-run table sets the student's
    value beside the course's per-seed values, which the table prints as mean [95 % interval];
    no cell reads a single seed of the course's run."""
    for cell in ("DAGGER", "DQN", "OFFLINE", "FQE", "DT", "LANGUAGE"):
        calls = re.findall(r"figures\.plot_\w+\((?:[^;]|\n)*?\);", CELLS[cell])
        assert calls and all("run_label=COURSE_RUN" in c for c in calls), cell
        assert "compare(" in CELLS[cell], cell
        # a seed-0 artifact gives only axes and names, never a value shown
        read = re.findall(r'load_pinned\("M5_(?!lab_seeds|course_numbers)\w+"\)\["(\w+)"\]', CELLS[cell])
        read += re.findall(r'\bcourse\["(\w+)"\]', CELLS[cell])
        assert set(read) <= {"method_names", "fqe_names", "target_return", "rounds", "budget_labels", "overestimation_episodes"}, cell
        assert "std(" not in CELLS[cell] and "mean_sd" not in CELLS[cell], cell
    assert "run_label=YOUR_RUN" in CELLS["LOG"]
    # the language question asks about held-out prompts: every method's held-out value is on screen
    assert (
        "heldout_exact_match=heldout" in CELLS["LANGUAGE"] and '"heldout_evaluation", "language_heldout_exact_match"' in CELLS["LANGUAGE"]
    )
    assert 'show("nb.cql_note"' in CELLS["OFFLINE"]  # CQL's measured excess is explained where it is shown


def test_each_question_follows_a_short_table_of_the_course_numbers_it_is_about():
    """Students see what the answers quote: before each question a locked cell prints the course's
    numbers the question needs from the kit's copy of claims.json (every comparison its worked answer
    quotes among them, at most a dozen rows), the section's others one call away; both languages
    print the same ids (the code cells stay identical)."""
    from autograder.assign.lab_text import TEXT
    from reference_impl.lab.comparisons import compact_phrase
    from reference_impl.lab.pins import load_pinned
    from reference_impl.lab.results import DEFAULT_CLAIMS

    pinned = load_pinned("M5_course_numbers")
    committed = json.loads(DEFAULT_CLAIMS.read_text(encoding="utf-8"))
    for cid, entry in committed["comparisons"].items():  # a comparison's value leads with its interval's words
        assert pinned["rows"][cid]["value"]["ru"] == compact_phrase(entry, "ru"), cid
    assert set(lab_source.QUESTION_NUMBERS) == set(TEXT["en"]["answers"]) == set(TEXT["en"]["questions"])
    for key, shown in lab_source.QUESTION_NUMBERS.items():
        ids = lab_source.answer_ids(TEXT["en"], key)
        assert ids == lab_source.answer_ids(TEXT["ru"], key), key
        quoted_comparisons = [cid for cid in ids if cid in committed["comparisons"]]
        assert set(quoted_comparisons) <= set(shown), (key, set(quoted_comparisons) - set(shown))
        assert all(cid in pinned["rows"] for cid in shown) and len(shown) <= 12, key
        for lang in ("en", "ru"):
            cells = lab_source._question(TEXT[lang], key)
            assert cells[0].source.splitlines()[0] == f"course_numbers({shown!r})", key
            assert cells[-1].source == TEXT[lang]["answers"][key]
