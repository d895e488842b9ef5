"""No sentence of the lab's texts ranks results that its paired intervals do not rank.

Every word that orders things ("largest", "better", "fewer", «наибольший», «лучше», ...) in
the texts students and instructors read about the course's run — the lab notebook's
sections, questions and worked answers, the report's caveats and summaries, and the
design paragraphs — is found here, and each must match one entry of :data:`ALLOWED`:
either it orders no result (a definition, a mechanism, a question, a hedge), or it states
a result, and then the committed run must support it (its check on ``claims.json``).
A new ranking sentence fails until someone decides which it is.
"""

from __future__ import annotations

import json
import re

import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)

from autograder.assign import claims
from autograder.assign.lab_text import TEXT
from reference_impl.lab.design import SEARCHES
from reference_impl.lab.labels import LABELS

RANKING = re.compile(
    r"\b(largest|smallest|best|worst|better|worse|fewer|more than|less than|outperform\w*|beats?|wins?|highest|lowest|"
    r"наибольш\w*|наименьш\w*|лучш\w*|худш\w*|больше|меньше|превосход\w*|выигрыва\w*)\b",
    re.IGNORECASE,
)


def _per_seed(claim_id: str) -> list[float]:
    return claims.load_claims()[claim_id]["per_seed"]


def _fewer_distinct_labels() -> bool:
    return all(b < d for b, d in zip(_per_seed("dagger.bc_equal_budget_labels"), _per_seed("dagger.dagger_equal_budget_labels")))


def _maxbias_gap() -> bool:
    """The side study's DQN minus Double DQN: the bad branch more often early and more overestimation
    over training (intervals above zero), no detectable gap at the end."""
    study = json.loads((REPO / "docs" / "lab-results" / "maxbias.json").read_text(encoding="utf-8"))
    verdicts = {c["id"]: c["verdict"] for c in study["comparisons"]}
    early, over, end = (verdicts[f"dqn_vs_double_dqn.{q}"] for q in ("left_share_first", "over_a_mean", "over_a_end"))
    return early == over == "ahead" and end == "no detectable difference"


#: (pattern around the word, why it is allowed, check on the committed run or None).
ALLOWED: list[tuple[str, str, object]] = [
    (r"say more than a method name|говорят больше, чем название", "not a result", None),
    (r"Which methods do better than behavior cloning|Какие методы .{0,40}работают лучше", "a question", None),
    (r"can a method that reads the rewards beat imitation|может превзойти имитацию|can do better than imitation", "a hedge: 'can'", None),
    (r"which policy has the largest FQE error|ошибка FQE наибольшая", "a question, answered from the interval", None),
    (r"above the best one|выше лучшей из них", "the log's best return: a definition", None),
    (r"decoder beat advantage-weighted|when should the ILQL", "a question", None),
    (r"more than one task", "not a result", None),
    (r'supports "better" or "worse"|«лучше» или «хуже»', "the rule itself", None),
    (r"the maximum picks the largest|максимум выбирает наибольшую", "the mechanism of a max", None),
    (
        r"largest (learned )?Q exceeds the largest possible return|наибольшее (выученное )?Q выше наибольшей возможной",
        "defines a measured share",
        None,
    ),
    (r"no true Q exceeds|ни одно истинное Q не больше", "a bound of the task", None),
    (r"Which method wins also depends|Какой метод выигрывает, зависит", "followed by the cited comparisons", None),
    (
        r"for the highest request|highest request minus|Highest request minus|the highest request inside"
        r"|Самый высокий запрос|наибольший запрос внутри",
        "names a request",
        None,
    ),
    (r"asking for more than the log holds", "names a request", None),
    (r"stitch an episode better than|сшить эпизод лучше", "what the model cannot do, by construction", None),
    (r"best answer is rare|лучший ответ редок|best continuation|лучшего продолжения", "a mechanism", None),
    (r"Больше меток эксперта помогает", "a general fact, stated with its lever", None),
    (r"больше ничего не обучает|с наибольшей суммой", "not a ranking (nothing more; the argmax)", None),
    (r"завышает ли он оценки меньше|less than DQN, as designed", "a question", None),
    (r"не больше чем на u", "the bound's condition", None),
    (r"больше запусков", "more seeds: not a result", None),
    (r"меньше единицы", "the goal group's returns: a definition", None),
    (r"the lowest returns|largest standard error|наибольшая стандартная ошибка", "a definition", None),
    (r"can be hard to beat|бывает трудно превзойти", "a hedge, followed by the comparisons", None),
    (
        r"fewer distinct labels than DAgger|меток у него меньше, чем у DAgger|hold fewer distinct labels|различных меток меньше",
        "cloning's distinct labels below DAgger's on every seed",
        _fewer_distinct_labels,
    ),
    (r"сравнение не при равном числе меток|on fewer labels", "says the counts differ", None),
    (
        r"overestimates it more than Double DQN, with paired|сильнее завышает её ценность, чем Double DQN",
        "the side study's comparisons",
        _maxbias_gap,
    ),
    (r"получает больше|earn more", "the goal pays more: a fact of the task", None),
    (
        r"achieves more than the lowest|achieves more than the highest|highest request within the log.s range"
        r"|даёт больше, чем наименьший|методу наименьших квадратов"
        r"|выше лучшей отдачи журнала|сверх наибольшего запроса",
        "states the property that the intervals after it test",
        None,
    ),
]


def _texts() -> list[tuple[str, str]]:
    out = []

    def walk(value, where: str) -> None:
        if isinstance(value, str):
            out.append((where, value))
        elif isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, f"{where}.{key}")

    walk(TEXT, "lab_text")
    for lang in ("en", "ru"):
        for key, value in LABELS[lang].items():
            if key.startswith(("report.caveat", "summary", "report.design", "report.dt_claim")):
                walk(value, f"labels.{lang}.{key}")
    walk({s: {lang: e[lang] for lang in ("en", "ru")} for s, e in SEARCHES.items()}, "lab_design")
    return out


def _hits() -> list[tuple[str, str]]:
    found = []
    for where, text in _texts():
        for match in RANKING.finditer(text):
            found.append((where, text[max(0, match.start() - 90) : match.end() + 60].replace("\n", " ")))
    return found


def test_every_ranking_word_is_a_definition_a_question_a_hedge_or_supported_by_the_run():
    unexplained = [(where, context) for where, context in _hits() if not any(re.search(p, context) for p, _, _ in ALLOWED)]
    assert not unexplained, "ranking words nobody has checked:\n" + "\n".join(f"{w}: …{c}…" for w, c in unexplained)


@pytest.mark.parametrize("pattern, why, check", [a for a in ALLOWED if a[2] is not None], ids=lambda a: getattr(a, "__name__", str(a)[:30]))
def test_each_ranking_that_states_a_result_holds_in_the_committed_run(pattern, why, check):
    assert check(), why


def test_the_lint_finds_a_new_ranking_sentence():
    assert RANKING.search("IQL is the best offline method here") and RANKING.search("CQL работает лучше IQL")
    assert not any(re.search(p, "IQL is the best offline method here") for p, _, _ in ALLOWED)
