"""Fixed logs of KeyDoorGrid for the offline-RL part of the lab.

A log is collected once by a *behavior policy* and then never extended: every
offline learner and the FQE evaluator read the same immutable transitions.

Profiles (the behavior policy of each episode):

* ``expert``: the shortest-path expert, no noise;
* ``noisy``: the expert with a uniformly random action with probability 0.3;
* ``random``: uniformly random actions;
* ``mixed``: each episode draws its noise level from MIXED_EPSILONS with
  MIXED_WEIGHTS (mostly clean or lightly noisy expert, some very noisy and fully
  random episodes), and its random actions come from the *skewed* distribution
  MIXED_NOISE_PROBS instead of a uniform one (the Decision Transformer's log);
* ``mediocre``: each episode draws its demonstrator from MEDIOCRE_DEMONSTRATORS with
  MEDIOCRE_WEIGHTS: the expert (a minority), the key-forgetting planner (the
  majority; see :class:`~reference_impl.expert.KeyForgettingPolicy`) or uniform
  random actions; the first two also take a uniformly random action with
  probability MEDIOCRE_EPSILON (the offline methods' log).

Why the offline methods get the ``mediocre`` log: noise *around* an expert leaves the
expert's action the most frequent one in every state, so cloning's argmax recovers
the expert however noisy the log, and no offline method can do better than imitation.
Imitation is beaten only where the log's most common behavior is wrong in a
consistent way and good behavior is a minority that a learner reading the rewards can
find. This log is designed for that: a fixed wrong planner (55 %) beside a noisy expert
(30 %) and random actions. It is not a learning agent's replay buffer (what D4RL's
"medium-replay" data are); the lab runs the same methods on one of those too, online DQN's
own buffer (:func:`reference_impl.offline.offline_experiment_on`). Here the majority walks
to the closed door without the key and waits there, while a minority fetches the key.

Why the mixed log's noise is skewed: the expert's routes already use "up" and
"right" far more than "down" and "left", but uniform noise fills the rare actions
back in, and with it the relative frequency of "left" hovers around the lab's
support threshold (0.35 of the most frequent action) and flips from seed to seed.
Real logging policies explore unevenly too; making the noise prefer up/right keeps
"left" clearly rare (about 0.19-0.33 of the top action over 42 logs of 30 and 80
episodes), so ``behavior_support_mask(action_frequencies, 0.35)`` reliably leaves it
out and the log says little about what "left" does. That thin coverage is what the
offline methods must cope with; the noisy episodes supply the traps and detours
that give the value learners something to tell apart.

Flat export follows the usual offline-RL layout (as in D4RL):
``observations`` (N, d) float32, ``actions`` (N,) int64, ``rewards`` (N,) float64,
``next_observations`` (N, d) float32, ``terminals`` (N,) bool (goal or trap: the task
ended), ``timeouts`` (N,) bool (the time limit cut the episode; *not* terminal). An
episode ends at a row where ``terminals | timeouts``; no object arrays are stored, so
``np.load`` works with ``allow_pickle=False``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from reference_impl.expert import ExpertPolicy, KeyForgettingPolicy
from reference_impl.keydoor import ACTION_NAMES, KeyDoorGrid
from reference_impl.records import Episode, Transition
from reference_impl.rollout import rollout

__all__ = [
    "PROFILES",
    "MIXED_EPSILONS",
    "MIXED_WEIGHTS",
    "MIXED_NOISE_PROBS",
    "MEDIOCRE_DEMONSTRATORS",
    "MEDIOCRE_WEIGHTS",
    "MEDIOCRE_EPSILON",
    "BehaviorPolicy",
    "ARRAY_KEYS",
    "collect_offline_dataset",
    "to_arrays",
    "from_arrays",
    "save_npz",
    "load_npz",
    "episode_start_indices",
    "action_frequencies",
    "summarize_dataset",
]

#: Noise level (probability of a uniformly random action) of each pure profile.
PROFILE_EPSILON = {"expert": 0.0, "noisy": 0.3, "random": 1.0}
#: Per-episode noise levels of the "mixed" profile and how often each is drawn.
MIXED_EPSILONS = (0.0, 0.1, 0.3, 1.0)
MIXED_WEIGHTS = (0.35, 0.35, 0.2, 0.1)
#: Distribution of the random actions of the mixed profile (up, right, down, left).
MIXED_NOISE_PROBS = (0.35, 0.35, 0.2, 0.1)
UNIFORM_NOISE_PROBS = (0.25, 0.25, 0.25, 0.25)
#: Demonstrators of the "mediocre" profile, how often each leads an episode, and their noise.
MEDIOCRE_DEMONSTRATORS = ("expert", "forgets the key", "random")
MEDIOCRE_WEIGHTS = (0.3, 0.55, 0.15)
MEDIOCRE_EPSILON = 0.1
PROFILES = ("expert", "noisy", "random", "mixed", "mediocre")
ARRAY_KEYS = ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")


def _positive_int(value, name: str, caller: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{caller}: `{name}` must be a positive integer, got {value!r}")
    return int(value)


class BehaviorPolicy:
    """The expert, except that with probability ``epsilon`` it takes a random action
    drawn from ``noise_probs`` (A,). Draws come from ``rng``; ``epsilon`` and
    ``expert`` (any planner with an ``env``, e.g. the key-forgetting one) may be
    changed between episodes. Policy protocol: ``policy(obs, info) -> int``.
    """

    def __init__(self, expert: ExpertPolicy, epsilon: float, noise_probs, rng: np.random.Generator) -> None:
        probs = np.asarray(noise_probs, dtype=np.float64)
        if probs.shape != (expert.env.action_dim,) or (probs < 0).any() or abs(probs.sum() - 1.0) > 1e-9:
            raise ValueError(
                f"BehaviorPolicy: `noise_probs` must be a distribution over {expert.env.action_dim} actions, got {noise_probs!r}"
            )
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"BehaviorPolicy: `epsilon` must lie in [0, 1], got {epsilon!r}")
        self.expert = expert
        self.epsilon = float(epsilon)
        self.noise_cdf = np.cumsum(probs)
        self.rng = rng

    def __call__(self, obs, info=None) -> int:
        if self.epsilon > 0.0 and self.rng.random() < self.epsilon:
            draw = self.rng.random() * self.noise_cdf[-1]
            return int(min(np.searchsorted(self.noise_cdf, draw, side="right"), len(self.noise_cdf) - 1))
        return self.expert(obs, info)


def collect_offline_dataset(
    seed: int,
    episodes: int,
    profile: str = "mixed",
    *,
    env: KeyDoorGrid | None = None,
) -> tuple[list[Episode], list[Transition]]:
    """Collect a fixed log: ``episodes`` episodes of the ``profile`` behavior policy.

    Returns ``(episodes, transitions)``: the :class:`~reference_impl.records.Episode`
    records (transitions, ``return_``, ``length``, ``outcome``, ``start``) and all
    their transitions in order. Start cells, noise and random actions all come from
    ``seed``, so the same arguments give the same log. ``env`` defaults to a fresh
    ``KeyDoorGrid()`` (50-step limit, no slips).
    Raises ValueError on an unknown profile or a non-positive episode count.
    """
    if profile not in PROFILES:
        raise ValueError(f"collect_offline_dataset: `profile` must be one of {PROFILES}, got {profile!r}")
    n = _positive_int(episodes, "episodes", "collect_offline_dataset")
    env = KeyDoorGrid() if env is None else env
    rng = np.random.default_rng(seed)
    # The behavior noise has its own stream so the start cells do not depend on it.
    noise_probs = MIXED_NOISE_PROBS if profile == "mixed" else UNIFORM_NOISE_PROBS
    behavior = BehaviorPolicy(ExpertPolicy(env), 0.0, noise_probs, np.random.default_rng([seed, 1]))
    reset_seeds = rng.integers(0, 2**31 - 1, size=n)
    planners = [behavior.expert] * n
    if profile == "mixed":
        levels = rng.choice(np.asarray(MIXED_EPSILONS), size=n, p=np.asarray(MIXED_WEIGHTS))
    elif profile == "mediocre":
        kinds = rng.choice(len(MEDIOCRE_DEMONSTRATORS), size=n, p=np.asarray(MEDIOCRE_WEIGHTS))
        forgetful = KeyForgettingPolicy(env)
        planners = [forgetful if MEDIOCRE_DEMONSTRATORS[k] == "forgets the key" else behavior.expert for k in kinds]
        levels = np.where([MEDIOCRE_DEMONSTRATORS[k] == "random" for k in kinds], 1.0, MEDIOCRE_EPSILON)
    else:
        levels = np.full(n, PROFILE_EPSILON[profile])
    log: list[Episode] = []
    for reset_seed, epsilon, planner in zip(reset_seeds.tolist(), levels.tolist(), planners):
        behavior.epsilon, behavior.expert = float(epsilon), planner
        log.append(rollout(env, behavior, seed=int(reset_seed)))
    transitions = [t for ep in log for t in ep.transitions]
    return log, transitions


def to_arrays(transitions: Sequence[Transition]) -> dict[str, np.ndarray]:
    """Flat offline-RL arrays (see the module docstring) from transitions in log order.

    Raises ValueError on an empty sequence or a transition flagged both terminated
    and truncated (the environment never produces one; a log that has one is corrupt).
    """
    if len(transitions) == 0:
        raise ValueError("to_arrays: `transitions` is empty")
    terminals = np.fromiter((t.terminated for t in transitions), dtype=bool, count=len(transitions))
    timeouts = np.fromiter((t.truncated for t in transitions), dtype=bool, count=len(transitions))
    if (terminals & timeouts).any():
        raise ValueError("to_arrays: `transitions` holds a row both terminated and truncated")
    return {
        "observations": np.stack([np.asarray(t.obs, dtype=np.float32) for t in transitions]),
        "actions": np.fromiter((t.action for t in transitions), dtype=np.int64, count=len(transitions)),
        "rewards": np.fromiter((t.reward for t in transitions), dtype=np.float64, count=len(transitions)),
        "next_observations": np.stack([np.asarray(t.next_obs, dtype=np.float32) for t in transitions]),
        "terminals": terminals,
        "timeouts": timeouts,
    }


TRAINING_KEYS = ARRAY_KEYS[:5]  # what learners read: ``timeouts`` only matters for episode boundaries


def check_transition_arrays(
    arrays: Mapping[str, np.ndarray], caller: str, *, name: str = "arrays", keys: tuple[str, ...] = ARRAY_KEYS, allow_empty: bool = True
) -> int:
    """Number of transitions in flat offline-RL arrays; ValueError on missing keys or ragged rows."""
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise ValueError(f"{caller}: `{name}` lacks the keys {missing}")
    n = len(arrays["actions"])
    if n == 0 and not allow_empty:
        raise ValueError(f"{caller}: `{name}` holds no transitions")
    for k in keys:
        if len(arrays[k]) != n:
            raise ValueError(f"{caller}: `{name}['{k}']` has {len(arrays[k])} rows but `{name}['actions']` has {n}")
    return n


def episode_start_indices(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """Row indices where episodes begin: row 0 and every row after a terminal or timeout."""
    n = check_transition_arrays(arrays, "episode_start_indices")
    ends = np.flatnonzero(np.asarray(arrays["terminals"], bool) | np.asarray(arrays["timeouts"], bool))
    starts = np.concatenate([[0], ends + 1])
    return starts[starts < n]


def from_arrays(arrays: Mapping[str, np.ndarray]) -> tuple[list[Episode], list[Transition]]:
    """Rebuild ``(episodes, transitions)`` from flat arrays (inverse of :func:`to_arrays`).

    Outcomes are read off the flags: a terminal row with positive reward is "goal",
    any other terminal row "trap", a timeout "timeout"; a log that stops mid-episode
    leaves the last outcome ``None``. ``start`` is decoded from the first observation.
    """
    n = check_transition_arrays(arrays, "from_arrays")
    env = KeyDoorGrid()
    transitions = [
        Transition(
            np.asarray(arrays["observations"][i], dtype=np.float32),
            int(arrays["actions"][i]),
            float(arrays["rewards"][i]),
            np.asarray(arrays["next_observations"][i], dtype=np.float32),
            bool(arrays["terminals"][i]),
            bool(arrays["timeouts"][i]),
        )
        for i in range(n)
    ]
    bounds = [*episode_start_indices(arrays).tolist(), n]
    episodes = []
    for begin, end in zip(bounds[:-1], bounds[1:]):
        steps = transitions[begin:end]
        last = steps[-1]
        outcome = None
        if last.terminated:
            outcome = "goal" if last.reward > 0 else "trap"
        elif last.truncated:
            outcome = "timeout"
        episodes.append(
            Episode(
                transitions=steps,
                return_=float(sum(t.reward for t in steps)),
                length=len(steps),
                outcome=outcome,
                start=env.decode(steps[0].obs)[0],
            )
        )
    return episodes, transitions


def save_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """Write the six flat arrays to ``path`` (compressed ``.npz``; no pickled objects)."""
    check_transition_arrays(arrays, "save_npz")
    np.savez_compressed(path, **{k: np.asarray(arrays[k]) for k in ARRAY_KEYS})


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read a log written by :func:`save_npz` (``allow_pickle=False``); checks the keys and lengths."""
    with np.load(path, allow_pickle=False) as stored:
        arrays = {k: stored[k] for k in stored.files}
    check_transition_arrays(arrays, "load_npz")
    return {k: arrays[k] for k in ARRAY_KEYS}


def action_frequencies(actions, n_actions: int = len(ACTION_NAMES)) -> np.ndarray:
    """Empirical action distribution of a log: counts / N, shape (n_actions,)."""
    a = np.asarray(actions)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"action_frequencies: `actions` must be a non-empty (N,) array, got shape {a.shape}")
    if a.dtype.kind not in "iu" or a.min() < 0 or a.max() >= n_actions:
        raise ValueError(f"action_frequencies: `actions` must be integers in [0, {n_actions})")
    counts = np.bincount(a, minlength=n_actions)
    return counts / counts.sum()


def summarize_dataset(episodes: Sequence[Episode]) -> dict:
    """Counts a lab prints before choosing an algorithm: size, returns, outcomes, actions."""
    if len(episodes) == 0:
        raise ValueError("summarize_dataset: `episodes` is empty")
    actions = np.asarray([t.action for ep in episodes for t in ep.transitions], dtype=np.int64)
    outcomes = Counter(ep.outcome for ep in episodes)
    counts = np.bincount(actions, minlength=len(ACTION_NAMES))
    return {
        "episodes": len(episodes),
        "transitions": int(actions.size),
        "mean_return": float(np.mean([ep.return_ for ep in episodes])),
        "outcomes": {name: int(outcomes.get(name, 0)) for name in ("goal", "trap", "timeout")},
        "action_counts": dict(zip(ACTION_NAMES, counts.tolist())),
        "action_frequencies": dict(zip(ACTION_NAMES, (counts / counts.sum()).round(6).tolist())),
    }
