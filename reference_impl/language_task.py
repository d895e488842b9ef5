"""The token-level pipeline's task and data, without a model: the vocabulary, the
prompts and their rewards, and the annotator who writes the logged responses.

It imports only numpy, so the lab's report, claims and comparisons read the task's
names (its prompts, its methods) without loading torch; the models and their training
are in :mod:`reference_impl.language`.

The task
--------
Each prompt asks for the sum of two digits, e.g. ``"8+7="``; the expected response
is the decimal answer followed by an end-of-sequence token, ``"15<eos>"``. A
response is a sequence of *actions* drawn from the response tokens (the ten digits
and ``<eos>``); the state of step t is the prompt plus the first t response tokens.

Reward (given once, on the step that emits ``<eos>``; every earlier step gets 0):

* 1.0 when the digits before ``<eos>`` are exactly the answer;
* otherwise ``PARTIAL_CREDIT * k / len(answer)`` where k is the number of leading
  answer digits the response reproduces (``"16"`` for 15 earns 0.1, ``"150"`` 0.2);
* 0.0 when the response never emits ``<eos>`` within ``MAX_RESPONSE_TOKENS``
  (that last step is a truncation, not a termination).

The behavior data
-----------------
A noisy "annotator" writes the logged responses: the exact answer only part of the
time, more often a consistent slip (answer + 1), sometimes a verbose answer with a
stray extra digit, sometimes random digits (see :class:`BehaviorMix`). Behavior
cloning copies the most frequent continuation, which is the slip; token-level
values computed from the rewards can tell the rare exact answers apart.

Training and held-out prompts
-----------------------------
The annotator writes responses to the twelve ``PROMPTS`` only. ``HELDOUT_PROMPTS``
are six digit sums no method ever trains on; every method is evaluated on both
splits (``split="train"`` or ``"heldout"`` in :func:`response_reward` and
:func:`greedy_decode`). Two of them swap the operands of a training prompt
(``"4+3="``, ``"7+8="``: same answer as ``"3+4="``, ``"8+7="``); four are new digit
pairs: three of their answers (5, 6, 17) are no training prompt's answer, the
fourth (12) is also the answer of ``"6+6="``. A model that learned addition would
answer them; a model that memorized twelve prompt-to-answer pairs would not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# --------------------------------------------------------------------------- vocabulary
# Response tokens come first so that a response token's id is also its action index.
VOCAB: tuple[str, ...] = ("<eos>", *"0123456789", "+", "=", "<pad>")
EOS = 0
PAD = VOCAB.index("<pad>")
N_ACTIONS = 11  # "<eos>" and the ten digits
_TOKEN_ID = {tok: i for i, tok in enumerate(VOCAB)}

PROMPTS: tuple[str, ...] = (
    "3+4=",
    "8+7=",
    "5+5=",
    "9+6=",
    "2+6=",
    "7+7=",
    "4+9=",
    "6+1=",
    "9+9=",
    "1+8=",
    "6+6=",
    "3+8=",
)
ANSWERS: tuple[str, ...] = tuple(str(int(p[0]) + int(p[2])) for p in PROMPTS)
# Never in the log (see the module docstring): two swapped training prompts, four new pairs.
HELDOUT_PROMPTS: tuple[str, ...] = ("4+3=", "7+8=", "2+3=", "1+5=", "5+7=", "8+9=")
HELDOUT_ANSWERS: tuple[str, ...] = tuple(str(int(p[0]) + int(p[2])) for p in HELDOUT_PROMPTS)
SPLITS: tuple[str, ...] = ("train", "heldout")
MAX_RESPONSE_TOKENS = 4
PARTIAL_CREDIT = 0.2
# Imitation, then rewards without a critic, then the critic's weights, then its value heads at decoding.
LANGUAGE_METHODS: tuple[str, ...] = ("behavior_cloning", "return_weighted_bc", "advantage_weighted_bc", "ilql_like")


def encode(text: str) -> list[int]:
    """Token ids of ``text`` (one character per token; ``"<eos>"`` as one token)."""
    if not isinstance(text, str):
        raise ValueError(f"encode: `text` must be a str, got {type(text).__name__}")
    ids, i = [], 0
    while i < len(text):
        if text.startswith("<eos>", i):
            ids.append(EOS)
            i += len("<eos>")
            continue
        if text[i] not in _TOKEN_ID:
            raise ValueError(f"encode: `text` holds {text[i]!r}, which is not in VOCAB")
        ids.append(_TOKEN_ID[text[i]])
        i += 1
    return ids


def token_text(seq) -> str:
    """Readable text of a token-id sequence: tokens joined without separators.

    ``token_text([2, 6, 0]) == "15<eos>"``. Accepts any 1-D sequence of ints (list,
    tuple, numpy or torch). Raises ValueError on ids outside ``range(len(VOCAB))`` or
    non-integer entries.
    """
    if hasattr(seq, "detach"):  # a torch tensor (this module does not import torch)
        seq = seq.detach().cpu().tolist()
    arr = np.asarray(seq)
    if arr.ndim != 1:
        raise ValueError(f"token_text: `seq` must be 1-D, got shape {arr.shape}")
    if arr.size and (arr.dtype == np.bool_ or arr.dtype.kind not in "iu"):
        raise ValueError(f"token_text: `seq` must hold integer token ids, got dtype {arr.dtype}")
    bad = [int(t) for t in arr.tolist() if not 0 <= int(t) < len(VOCAB)]
    if bad:
        raise ValueError(f"token_text: `seq` holds token id {bad[0]} outside [0, {len(VOCAB)})")
    return "".join(VOCAB[int(t)] for t in arr.tolist())


def split_prompts(split: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(prompts, answers)`` of ``split``: ``"train"`` (``PROMPTS``) or ``"heldout"``."""
    if split == "train":
        return PROMPTS, ANSWERS
    if split == "heldout":
        return HELDOUT_PROMPTS, HELDOUT_ANSWERS
    raise ValueError(f"`split` must be one of {SPLITS}, got {split!r}")


def checked_prompt_index(prompt_index: int, split: str = "train") -> int:
    prompts, _ = split_prompts(split)
    if isinstance(prompt_index, bool) or not isinstance(prompt_index, (int, np.integer)):
        raise ValueError(f"`prompt_index` must be an int, got {prompt_index!r}")
    if not 0 <= int(prompt_index) < len(prompts):
        raise ValueError(f"`prompt_index` must lie in [0, {len(prompts)}) for split {split!r}, got {prompt_index}")
    return int(prompt_index)


def response_reward(prompt_index: int, response: Sequence[int], split: str = "train") -> float:
    """The terminal reward of ``response`` (token ids) to prompt ``prompt_index`` of ``split``.

    ``split="train"`` (default) indexes ``PROMPTS``, ``"heldout"`` ``HELDOUT_PROMPTS``.
    Only the part up to the first ``<eos>`` counts. 1.0 for the exact answer,
    ``PARTIAL_CREDIT * (matching leading digits) / len(answer)`` for other
    responses, 0.0 when there is no ``<eos>``. Raises ValueError on a bad prompt
    index or split, or a response holding non-response tokens (``+``, ``=``, ``<pad>``).
    """
    p = checked_prompt_index(prompt_index, split)
    tokens = [int(t) for t in response]
    if any(not 0 <= t < N_ACTIONS for t in tokens):
        raise ValueError(f"response_reward: `response` must hold response-token ids in [0, {N_ACTIONS}), got {tokens}")
    if EOS not in tokens:
        return 0.0
    digits = token_text(tokens[: tokens.index(EOS)])
    answer = split_prompts(split)[1][p]
    if digits == answer:
        return 1.0
    matched = 0
    for got, want in zip(digits, answer):
        if got != want:
            break
        matched += 1
    return PARTIAL_CREDIT * matched / len(answer)


# --------------------------------------------------------------------------- behavior data
@dataclass(frozen=True)
class BehaviorMix:
    """Probabilities of the annotator's four kinds of response (they must sum to 1).

    exact: the answer; slip: answer + 1 (a consistent mistake, the most common
    response); verbose: the answer plus one random extra digit; random: one or two
    uniformly random digits. All end with ``<eos>``.
    """

    exact: float = 0.25
    slip: float = 0.45
    verbose: float = 0.10
    random: float = 0.20

    def probabilities(self) -> np.ndarray:
        p = np.array([self.exact, self.slip, self.verbose, self.random], dtype=np.float64)
        if not np.isfinite(p).all() or (p < 0).any() or abs(p.sum() - 1.0) > 1e-9:
            raise ValueError(f"BehaviorMix: probabilities must be non-negative and sum to 1, got {p.tolist()}")
        return p


_KINDS = ("exact", "slip", "verbose", "random")


@dataclass(frozen=True)
class TokenEpisode:
    """One logged response: the prompt, the response token ids (ending in <eos>), its reward."""

    prompt_index: int
    response: tuple[int, ...]
    reward: float
    kind: str = "unknown"


def behavior_response(prompt_index: int, rng: np.random.Generator, mix: BehaviorMix | None = None) -> tuple[tuple[int, ...], str]:
    """Sample one annotator response ``(token ids ending in <eos>, kind)``."""
    p = checked_prompt_index(prompt_index)
    probs = (mix or BehaviorMix()).probabilities()
    kind = _KINDS[int(rng.choice(4, p=probs))]
    answer = ANSWERS[p]
    if kind == "exact":
        digits = answer
    elif kind == "slip":
        digits = str(int(answer) + 1)
    elif kind == "verbose":
        digits = answer + str(int(rng.integers(10)))
    else:
        digits = "".join(str(int(d)) for d in rng.integers(10, size=int(rng.integers(1, 3))))
    return (*encode(digits), EOS), kind


def collect_language_dataset(episodes_per_prompt: int, rng: np.random.Generator, mix: BehaviorMix | None = None) -> list[TokenEpisode]:
    """``episodes_per_prompt`` annotator responses for every training prompt (``PROMPTS``,
    never ``HELDOUT_PROMPTS``), prompt-major order."""
    n = positive_int(episodes_per_prompt, "episodes_per_prompt")
    out = []
    for p in range(len(PROMPTS)):
        for _ in range(n):
            response, kind = behavior_response(p, rng, mix)
            out.append(TokenEpisode(p, response, response_reward(p, response), kind))
    return out


def summarize_language_dataset(episodes: Sequence[TokenEpisode]) -> dict:
    """Scalars describing the log: sizes, reward mean and the reward composition."""
    if not episodes:
        raise ValueError("summarize_language_dataset: `episodes` is empty")
    rewards = np.array([ep.reward for ep in episodes])
    return {
        "prompts": len({ep.prompt_index for ep in episodes}),
        "episodes": len(episodes),
        "tokens": int(sum(len(ep.response) for ep in episodes)),
        "mean_reward": float(rewards.mean()),
        "exact_fraction": float(np.mean(rewards == 1.0)),
        "partial_fraction": float(np.mean((rewards > 0.0) & (rewards < 1.0))),
        "zero_fraction": float(np.mean(rewards == 0.0)),
    }


def positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")
    return int(value)
