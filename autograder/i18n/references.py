"""The works the course's texts cite, and how a citation is written in each language.

A text cites with ``{{ cite_KEY }}`` (author and year, in the text) and lists what it
cited with ``{{ references }}`` (full entries, at its end); years and venues are
therefore rendered from :data:`REFERENCES`, never typed. The worked answers
(``export/solutions.py``) and the lab's text (``assign/lab_text.py``) both cite from here.
"""

from __future__ import annotations

import re

REFERENCES: dict[str, tuple[tuple[str, ...], int, str]] = {
    "ross2011": (
        ("Ross", "Gordon", "Bagnell"),
        2011,
        "S. Ross, G. J. Gordon, J. A. Bagnell. A Reduction of Imitation Learning and Structured Prediction "
        "to No-Regret Online Learning. AISTATS, 2011.",
    ),
    "ross2010": (("Ross", "Bagnell"), 2010, "S. Ross, J. A. Bagnell. Efficient Reductions for Imitation Learning. AISTATS, 2010."),
    "vanhasselt2010": (("van Hasselt",), 2010, "H. van Hasselt. Double Q-learning. NeurIPS, 2010."),
    "fujimoto2019": (
        ("Fujimoto", "Meger", "Precup"),
        2019,
        "S. Fujimoto, D. Meger, D. Precup. Off-Policy Deep Reinforcement Learning without Exploration (BCQ). ICML, 2019.",
    ),
    "vanhasselt2016": (
        ("van Hasselt", "Guez", "Silver"),
        2016,
        "H. van Hasselt, A. Guez, D. Silver. Deep Reinforcement Learning with Double Q-learning. AAAI, 2016.",
    ),
    "kumar2020": (
        ("Kumar", "Zhou", "Tucker", "Levine"),
        2020,
        "A. Kumar, A. Zhou, G. Tucker, S. Levine. Conservative Q-Learning for Offline Reinforcement Learning. NeurIPS, 2020.",
    ),
    "fujimoto2021": (
        ("Fujimoto", "Gu"),
        2021,
        "S. Fujimoto, S. S. Gu. A Minimalist Approach to Offline Reinforcement Learning (TD3+BC). NeurIPS, 2021.",
    ),
    "kostrikov2021": (
        ("Kostrikov", "Nair", "Levine"),
        2021,
        "I. Kostrikov, A. Nair, S. Levine. Offline Reinforcement Learning with Implicit Q-Learning. arXiv:2110.06169, 2021 (ICLR, 2022).",
    ),
    "chen2021": (
        ("Chen", "Lu", "Rajeswaran"),
        2021,
        "L. Chen, K. Lu, A. Rajeswaran, K. Lee, A. Grover, M. Laskin, P. Abbeel, A. Srinivas, I. Mordatch. "
        "Decision Transformer: Reinforcement Learning via Sequence Modeling. NeurIPS, 2021.",
    ),
    "snell2022": (
        ("Snell", "Kostrikov", "Su"),
        2022,
        "C. Snell, I. Kostrikov, Y. Su, M. Yang, S. Levine. Offline RL for Natural Language Generation with "
        "Implicit Language Q Learning. arXiv:2206.11871, 2022 (ICLR, 2023).",
    ),
    "brandfonbrener2022": (
        ("Brandfonbrener", "Bietti", "Buckman"),
        2022,
        "D. Brandfonbrener, A. Bietti, J. Buckman, R. Laroche, J. Bruna. When does "
        "return-conditioned supervised learning work for offline reinforcement learning? "
        "NeurIPS, 2022.",
    ),
    "paster2022": (
        ("Paster", "McIlraith", "Ba"),
        2022,
        "K. Paster, S. McIlraith, J. Ba. You Can't Count on Luck: Why Decision Transformers and RvS Fail "
        "in Stochastic Environments. NeurIPS, 2022.",
    ),
    "rafailov2023": (
        ("Rafailov", "Sharma", "Mitchell"),
        2023,
        "R. Rafailov, A. Sharma, E. Mitchell, S. Ermon, C. D. Manning, C. Finn. Direct Preference "
        "Optimization: Your Language Model is Secretly a Reward Model. NeurIPS, 2023.",
    ),
}
_REFERENCE_WORDS = {"en": ("and", "et al.", "References"), "ru": ("и", "и др.", "Литература")}
_CITE = re.compile(r"\{\{\s*cite_([a-z0-9]+)\s*\}\}")
_REFERENCES_SLOT = re.compile(r"\{\{\s*references\s*\}\}")


def citation(key: str, lang: str) -> str:
    """Author-year citation of ``REFERENCES[key]``: "Fujimoto and Gu, 2021", "Ross et al., 2011"."""
    if key not in REFERENCES:
        raise ValueError(f"citation: unknown reference `{key}` (known: {sorted(REFERENCES)})")
    authors, year, _ = REFERENCES[key]
    and_word, et_al, _ = _REFERENCE_WORDS[_check_lang(lang)]
    names = authors[0] if len(authors) == 1 else f"{authors[0]} {and_word} {authors[1]}" if len(authors) == 2 else f"{authors[0]} {et_al}"
    return f"{names}, {year}"


def cited_references(template_text: str) -> list[str]:
    """Keys cited by ``{{ cite_KEY }}`` in ``template_text``, first citation first, no repeats."""
    return list(dict.fromkeys(_CITE.findall(template_text)))


def citation_values(template_text: str, lang: str) -> dict[str, str]:
    """``cite_KEY`` and ``references`` placeholders of a template in ``lang``.

    Raises ValueError when a template cites without listing its references, or lists
    references without citing any (the list would be empty or incomplete).
    """
    keys = cited_references(template_text)
    has_slot = bool(_REFERENCES_SLOT.search(template_text))
    if keys and not has_slot:
        raise ValueError(f"citation_values: the template cites {keys} but has no {{{{ references }}}} list")
    if has_slot and not keys:
        raise ValueError("citation_values: the template has a {{ references }} list but cites nothing")
    values = {f"cite_{key}": citation(key, lang) for key in keys}
    if keys:
        heading = _REFERENCE_WORDS[lang][2]
        values["references"] = f"**{heading}.**\n\n" + "\n".join(f"- {REFERENCES[k][2]}" for k in keys)
    return values


def _check_lang(lang: str) -> str:
    if lang not in _REFERENCE_WORDS:
        raise ValueError(f"`lang` must be one of {tuple(_REFERENCE_WORDS)}, got {lang!r}")
    return lang
