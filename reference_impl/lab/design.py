"""Which seeds chose the lab's settings, and which seeds report its numbers.

Every setting of the lab (grid, slip rule, log mix, epochs, learning rates, the token
task's baseline) was chosen while looking at runs. Those runs used seed offsets below
:data:`REPORT_FIRST_OFFSET` (the offsets of earlier reports, 0..9, and the searches of
``docs/``, all within 0..99): they are the *design* seeds. The course's report
(``make pin``) runs the *report* block from :data:`REPORT_FIRST_OFFSET` on, seeds never
used while choosing anything, so no reported number was looked at before the settings were
fixed. :func:`design_seeds` gives each section's design seeds (every field of its
parameters whose name ends in ``seed``, shifted by each design offset);
``claims.json`` records both blocks (:func:`seed_record`) and a test checks that no
reported claim used a design seed.

:data:`SEARCHES` says, one paragraph per section and in both languages, what was tried,
on which seeds, what was kept and why; the report and the lab notebook print it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from reference_impl.lab.labels import LANGUAGES
from reference_impl.lab.profiles import LabProfile
from reference_impl.lab.text import language_text

#: The first seed offset of the course's report; every offset below it is a design offset.
REPORT_FIRST_OFFSET = 100
DESIGN_OFFSETS = range(0, REPORT_FIRST_OFFSET)

#: The profile field that holds each seeded section's parameters.
SECTION_PARAMS = {
    "dagger": "dagger",
    "dqn": "dqn",
    "log": "log",
    "offline": "offline",
    "fqe": "offline",
    "dt": "dt",
    "language": "language",
}

#: The document each seeded section's search is told in (the paragraphs are ``design.<section>``
#: of the language files).
SEARCH_DOCS = {
    "dagger": "docs/dagger_budget.md",
    "dqn": "docs/lab_results.md",
    "log": "docs/offline_log.md",
    "offline": "docs/offline_log.md",
    "fqe": "docs/offline_log.md",
    "dt": "docs/lab_results.md",
    "language": "docs/token_pipeline.md",
}
#: ``SEARCHES[section]``: ``doc`` (:data:`SEARCH_DOCS`) and, per language, what was tried.
SEARCHES: dict[str, dict[str, str]] = {
    section: {"doc": doc, **{lang: language_text(lang)["design"][section] for lang in LANGUAGES}} for section, doc in SEARCH_DOCS.items()
}


def design_seeds(profile: LabProfile, section: str) -> set[int]:
    """Every seed of ``section`` at a design offset (empty for an unseeded section)."""
    if section not in SECTION_PARAMS:
        return set()
    params = getattr(profile, SECTION_PARAMS[section])
    bases = [getattr(params, f.name) for f in dataclasses.fields(params) if f.name.endswith("seed")]
    return {base + offset for base in bases for offset in DESIGN_OFFSETS}


def seed_record(first_offset: int, seeds: int) -> dict:
    """What ``claims.json`` records of the seeds: the offsets this run used and the design block."""
    return {
        "offsets": [first_offset, first_offset + seeds - 1],
        "design_offsets": [DESIGN_OFFSETS.start, DESIGN_OFFSETS.stop - 1],
        "fresh": first_offset >= REPORT_FIRST_OFFSET,
    }


def overlapping_offsets(first_offset: int, seeds: int) -> list[int]:
    """The offsets of ``first_offset .. first_offset + seeds - 1`` that are design offsets."""
    return [o for o in range(first_offset, first_offset + seeds) if o in DESIGN_OFFSETS]


def search_lines(sections: Mapping[str, str] | list[str], lang: str, *, with_docs: bool = True) -> list[str]:
    """One paragraph per section that ran (``- **title**: what was tried (`doc`).``); the
    document is named by its path in the repository, which reads the same wherever the
    report is written (``with_docs=False``: no path, for readers without the repository)."""
    titles = sections if isinstance(sections, Mapping) else {s: s for s in sections}
    doc = (lambda s: f" (`{SEARCHES[s]['doc']}`)") if with_docs else (lambda s: "")
    return [f"- **{titles[s]}**: {SEARCHES[s][lang]}{doc(s)}" for s in titles if s in SEARCHES]
