"""Figure and summary text of the Module 5 lab, in English and Russian.

``LABELS[lang][key]`` holds the axis labels, titles and closing takeaways the lab
figures (:mod:`reference_impl.lab.figures`) and the notebooks use, the display names of
methods, actions and outcomes (``name.<raw>``, see :func:`display_name`) and the text
of the ``m5 lab`` report (``report.<what>``). Both languages carry exactly the same
keys; :func:`labels_for` picks one and rejects an unknown language. The language is
always an explicit argument (the lab's ``--lang``, the notebook's own language),
never read from the environment. The text itself is in the language files
(:mod:`reference_impl.lab.text`: tables ``labels``, ``names`` and ``report``).
"""

from __future__ import annotations

from collections.abc import Mapping

from reference_impl.lab.text import language_text

__all__ = ["LABELS", "LANGUAGES", "LABEL_KEYS", "labels_for", "display_name", "method_slug"]

LANGUAGES: tuple[str, ...] = ("en", "ru")


def _label_table(lang: str) -> dict[str, str]:
    """One language's labels: its ``labels`` table, then ``name.<raw>`` and ``report.<what>`` entries."""
    text = language_text(lang)
    return {
        **text["labels"],
        **{f"name.{raw}": shown for raw, shown in text["names"].items()},
        **{f"report.{what}": phrase for what, phrase in text["report"].items()},
    }


#: ``LABELS[lang][key]``: figure, notebook and report text, and the display names (``name.<raw>``,
#: see :func:`display_name`) of the raw names that reach the figures and the report.
LABELS: dict[str, dict[str, str]] = {lang: _label_table(lang) for lang in LANGUAGES}

#: The keys every language provides (in the order of the English table).
LABEL_KEYS: tuple[str, ...] = tuple(LABELS["en"])


def labels_for(lang: str) -> dict[str, str]:
    """A copy of the label table for ``lang`` ("en" or "ru").

    Raises ValueError naming ``lang`` when the language is not one of :data:`LANGUAGES`.
    """
    if lang not in LABELS:
        raise ValueError(f"labels_for: `lang` must be one of {LANGUAGES}, got {lang!r}")
    return dict(LABELS[lang])


def display_name(labels: Mapping[str, str], raw: str) -> str:
    """How ``raw`` (a method, action or outcome identifier) is shown with ``labels``.

    Looks up ``name.<raw>`` in the label table; an unknown name is shown as is, so a
    student's own method name still appears on the axis.
    """
    return labels.get(f"name.{raw}", raw)


def method_slug(name: str) -> str:
    """A method name as it appears in a claim or comparison id: ``naive DQN`` -> ``naive_dqn``."""
    return name.lower().replace(" ", "_").replace("-", "_")
