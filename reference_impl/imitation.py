"""Behavior cloning and DAgger on KeyDoorGrid.

Behavior cloning (BC) fits a classifier pi(a | s) to expert (state, action) pairs by
minimizing the cross-entropy  -mean log pi(a_expert | s). It only ever sees states the
expert visits; once the learner steps off those states its errors compound.

DAgger (Ross et al., 2011) repairs this by querying the expert on the states the
*learner* visits: each round rolls out the current learner, labels every visited
state with the expert's action, adds those pairs to the dataset (aggregation: nothing
is thrown away) and retrains. Round 0 is plain BC. As in the paper, the data-collecting policy of round k mixes
in the expert: at each step it acts as the expert with probability beta_k = beta**k
(beta = 0.5 by default) and as the learner otherwise, so later rounds are closer to
the pure learner. The labels always come from the expert.

:func:`label_budget_curve` compares the two at an equal *expert-label budget*: a label
is one (state, expert action) pair in a learner's training set, and every time the
expert is consulted (to demonstrate, to act inside DAgger's mixture or to label a
learner state) the state it answers for is one of those pairs. BC spends its budget
on expert demonstrations; DAgger on a few demonstrations plus states its own rollouts
reach. ``docs/dagger_budget.md`` reports what that comparison shows on KeyDoorGrid.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

from reference_impl.common import progress as progress_bar
from reference_impl.common import seed_everything
from reference_impl.exact_eval import exact_outcomes
from reference_impl.expert import ExpertPolicy
from reference_impl.keydoor import WIDE_LAYOUT, KeyDoorGrid, check_layout
from reference_impl.optimizers import adam
from reference_impl.rollout import play_episodes, rollout
from reference_impl.shift import episode_visits, optimal_actions, shift_metrics, state_indices

__all__ = [
    "ArgmaxPolicy",
    "BCConfig",
    "GreedyTablePolicy",
    "LABEL_BUDGETS",
    "LabelBudgetConfig",
    "SHIFT_METRICS",
    "MixturePolicy",
    "behavior_cloning",
    "bc_loss",
    "collect_states",
    "dagger_experiment",
    "label_budget_curve",
    "make_mlp",
]


def make_mlp(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    """Two hidden ReLU layers: (B, in_dim) -> (B, out_dim). Shared by the policy and Q networks."""
    for name, value in (("in_dim", in_dim), ("hidden", hidden), ("out_dim", out_dim)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"make_mlp: `{name}` must be a positive integer, got {value!r}")
    return nn.Sequential(
        nn.Linear(in_dim, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, out_dim),
    )


class MixturePolicy:
    """DAgger's collection policy: the expert with probability ``beta``, else the learner."""

    def __init__(self, expert, learner, beta: float, rng: np.random.Generator) -> None:
        if not 0.0 <= beta <= 1.0:
            raise ValueError(f"MixturePolicy: `beta` must lie in [0, 1], got {beta!r}")
        self.expert, self.learner, self.beta, self.rng = expert, learner, float(beta), rng

    def __call__(self, obs, info=None) -> int:
        if self.beta and self.rng.random() < self.beta:
            return self.expert(obs, info)
        return self.learner(obs, info)


class ArgmaxPolicy:
    """Greedy policy of a network: ``policy(obs, info) = argmax_a net(obs)[a]``.

    Works for policy logits and for Q-values alike (first index on ties, as torch).
    """

    def __init__(self, net: nn.Module) -> None:
        self.net = net

    def __call__(self, obs, info=None) -> int:
        with torch.no_grad():
            out = self.net(torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0))
        return int(out.argmax(dim=1).item())


@dataclass(frozen=True)
class BCConfig:
    """Hyper-parameters of the BC learner (one fresh network per (re)training)."""

    hidden: int = 64
    learning_rate: float = 3e-3
    batch_size: int = 32
    weight_decay: float = 0.0
    # An epoch is one pass over the data but at least this many minibatch updates:
    # round 0 of DAgger has ~90 pairs, and without a floor it would get a handful of
    # updates and fail from underfitting rather than from distribution shift.
    min_updates_per_epoch: int = 25

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.batch_size < 1 or self.min_updates_per_epoch < 1:
            raise ValueError("BCConfig: `hidden`, `batch_size` and `min_updates_per_epoch` must be positive")
        if not self.learning_rate > 0:
            raise ValueError(f"BCConfig: `learning_rate` must be positive, got {self.learning_rate}")


def bc_loss(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the expert actions: -mean_i log softmax(logits_i)[a_i].

    Shapes: logits (B, A) float, actions (B,) int64 -> scalar tensor.
    """
    if logits.ndim != 2 or actions.ndim != 1 or logits.shape[0] != actions.shape[0]:
        raise ValueError(f"bc_loss: `logits` must be (B, A) and `actions` (B,), got {tuple(logits.shape)} and {tuple(actions.shape)}")
    return nn.functional.cross_entropy(logits, actions)


def behavior_cloning(
    observations,
    actions,
    *,
    epochs: int,
    seed: int,
    action_dim: int = 4,
    config: BCConfig | None = None,
) -> tuple[nn.Module, list[float]]:
    """Fit a fresh MLP policy to (observation, action) pairs by minibatch cross-entropy.

    observations (N, d) float, actions (N,) int in [0, action_dim). Each of ``epochs``
    epochs makes max(ceil(N / batch_size), config.min_updates_per_epoch) Adam updates
    on minibatches cut from seeded random permutations of the data. Returns
    ``(network, mean loss per epoch)``.
    Raises ValueError on empty or mismatched data, bad actions or epochs < 1.
    """
    cfg = config or BCConfig()
    obs = np.asarray(observations, dtype=np.float32)
    act = np.asarray(actions)
    if obs.ndim != 2 or obs.shape[0] == 0:
        raise ValueError(f"behavior_cloning: `observations` must be a non-empty (N, d) array, got shape {obs.shape}")
    if act.shape != (obs.shape[0],):
        raise ValueError(f"behavior_cloning: `actions` must have shape ({obs.shape[0]},), got {act.shape}")
    if act.dtype.kind not in "iu" or (act < 0).any() or (act >= action_dim).any():
        raise ValueError(f"behavior_cloning: `actions` must be integers in [0, {action_dim})")
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
        raise ValueError(f"behavior_cloning: `epochs` must be a positive integer, got {epochs!r}")

    torch.manual_seed(seed)
    torch.set_num_threads(1)  # as seed_everything: small nets run faster and reproducibly on one thread
    net = make_mlp(obs.shape[1], cfg.hidden, action_dim)
    optimizer = adam(net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    x_all = torch.from_numpy(obs)
    y_all = torch.from_numpy(act.astype(np.int64))
    order_rng = np.random.default_rng(seed)
    n = obs.shape[0]
    updates = max(-(-n // cfg.batch_size), cfg.min_updates_per_epoch)
    history = []
    for _ in range(int(epochs)):
        passes = -(-updates * cfg.batch_size // n)
        order = torch.from_numpy(np.concatenate([order_rng.permutation(n) for _ in range(passes)]))
        total, count = 0.0, 0
        for u in range(updates):
            idx = order[u * cfg.batch_size : (u + 1) * cfg.batch_size]
            loss = bc_loss(net(x_all[idx]), y_all[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        history.append(total / count)
    net.eval()
    return net, history


def _check_count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"dagger_experiment: `{name}` must be an integer >= {minimum}, got {value!r}")
    return int(value)


def dagger_experiment(
    seed: int,
    expert_episodes: int,
    rounds: int,
    learner_episodes_per_round: int,
    epochs: int,
    *,
    beta: float = 0.5,
    config: BCConfig | None = None,
    progress: bool | None = None,
) -> dict:
    """BC on a few expert episodes (round 0), then ``rounds`` DAgger rounds.

    Round k >= 1: roll out the round k-1 learner (greedy; the expert acts instead with
    probability ``beta**k`` per step) for ``learner_episodes_per_round`` episodes,
    label every visited state with the BFS expert's action, append to the dataset, retrain a fresh network on the whole
    aggregate for ``epochs`` epochs and score its greedy policy exactly from the
    environment's model (:func:`reference_impl.exact_eval.exact_outcomes`: success and
    return averaged over the start cells, nothing sampled).

    Returns ``{"records": [...], "config": {...}, "bc_losses": [...]}`` with one record
    per round (``rounds + 1`` in all): ``{"round", "dataset_size", "new_states",
    "success_rate", "mean_return", "outcomes", "learner_outcomes"}``;
    ``learner_outcomes`` counts how the data-collecting rollouts of that round ended
    (None for round 0, whose data come from the expert).
    """
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"dagger_experiment: `beta` must lie in [0, 1], got {beta!r}")
    expert_episodes = _check_count("expert_episodes", expert_episodes, 1)
    rounds = _check_count("rounds", rounds, 0)
    learner_episodes_per_round = _check_count("learner_episodes_per_round", learner_episodes_per_round, 1)
    epochs = _check_count("epochs", epochs, 1)

    rng = seed_everything(seed)
    env = KeyDoorGrid(seed=seed)
    expert = ExpertPolicy(env)
    eval_env = KeyDoorGrid(seed=seed + 1)

    observations: list[np.ndarray] = []
    labels: list[int] = []
    for i in range(expert_episodes):
        episode = rollout(env, expert, seed=seed * 1000 + i)
        observations.extend(t.obs for t in episode.transitions)
        labels.extend(t.action for t in episode.transitions)

    records, losses = [], []
    learner = None
    for round_index in progress_bar(range(rounds + 1), desc="DAgger rounds", total=rounds + 1, enabled=progress):
        new_states, learner_outcomes = len(observations), None
        if round_index > 0:
            policy = MixturePolicy(expert, ArgmaxPolicy(learner), beta**round_index, rng)
            learner_outcomes = {"goal": 0, "trap": 0, "timeout": 0}
            visited = []
            for j in range(learner_episodes_per_round):
                reset_seed = seed * 1000 + 100 * round_index + j + expert_episodes
                episode = rollout(env, policy, seed=reset_seed)
                learner_outcomes[episode.outcome] += 1
                visited.extend(t.obs for t in episode.transitions)
            # The expert labels the learner's own states: the DAgger step.
            observations.extend(visited)
            labels.extend(expert.label(np.stack(visited)).tolist())
            new_states = len(visited)
        learner, history = behavior_cloning(
            np.stack(observations),
            np.asarray(labels, dtype=np.int64),
            epochs=epochs,
            seed=seed + round_index,
            action_dim=env.action_dim,
            config=config,
        )
        losses.append(history)
        metrics = exact_outcomes(eval_env, ArgmaxPolicy(learner))
        records.append(
            {
                "round": round_index,
                "dataset_size": len(observations),
                "new_states": new_states,
                "success_rate": metrics["success_rate"],
                "mean_return": metrics["mean_return"],
                "outcomes": metrics["outcomes"],
                "learner_outcomes": learner_outcomes,
            }
        )
    return {
        "records": records,
        "bc_losses": losses,
        "config": {
            "seed": seed,
            "expert_episodes": expert_episodes,
            "rounds": rounds,
            "learner_episodes_per_round": learner_episodes_per_round,
            "epochs": epochs,
            "beta": beta,
        },
        "policy": learner,
    }


# --------------------------------------------------------------------------- equal label budget
class GreedyTablePolicy:
    """The greedy policy of a network on KeyDoorGrid, evaluated once for every state.

    KeyDoorGrid has ``2 * height * width`` observations (each cell, with and without
    the key), so the network's argmax is computed for all of them in one batch and
    acting is a table look-up: the same choices as :class:`ArgmaxPolicy`, without a
    forward pass per step (the budget curve runs thousands of evaluation episodes).
    """

    def __init__(self, net: nn.Module, env: KeyDoorGrid) -> None:
        cells = [(r, c) for r in range(env.height) for c in range(env.width)]
        observations = np.stack([env.encode(cell, key) for key in (False, True) for cell in cells])
        with torch.no_grad():
            actions = net(torch.from_numpy(observations)).argmax(dim=1).numpy()
        self.env = env
        self.table = actions.reshape(2, env.height, env.width)

    def __call__(self, obs, info=None) -> int:
        (row, col), has_key = self.env.decode(obs)
        return int(self.table[int(has_key), row, col])


def collect_states(env: KeyDoorGrid, policy, count: int, reset_seeds, *, known: set | None = None, patience: int = 200) -> np.ndarray:
    """The first ``count`` states that ``policy`` visits, episode after episode.

    Episode ``i`` starts with ``env.reset(seed=reset_seeds[i])`` (``reset_seeds`` is
    any iterable of ints, consumed lazily). A state is recorded *before* the policy
    acts in it, and collection stops as soon as ``count`` states are recorded (the
    last episode is cut short) or the seeds run out. Returns ``(n, observation_dim)``
    float32 in visit order, ``n <= count``.

    ``known`` (a set of state indices, updated in place) makes the states distinct:
    a visit to a state already in ``known`` is not recorded, and collection also stops
    after ``patience`` episodes in a row that record nothing new (the policy's states
    are exhausted). Without ``known`` every visit is recorded, and the policy is only
    ever asked about recorded states.
    """
    seeds = iter(reset_seeds)
    states: list[np.ndarray] = []
    stale = 0
    for seed in seeds:
        if len(states) >= count or stale >= patience:
            break
        before = len(states)
        obs, info = env.reset(seed=seed)
        done = False
        while not done and len(states) < count:
            if known is None:
                states.append(obs)
            else:
                index = env.state_index(obs)
                if index not in known:
                    known.add(index)
                    states.append(obs)
            obs, _, terminated, truncated, info = env.step(policy(obs, info))
            done = terminated or truncated
        stale = stale + 1 if len(states) == before else 0
    return np.stack(states) if states else np.zeros((0, env.observation_dim), dtype=np.float32)


@dataclass(frozen=True)
class LabelBudgetConfig:
    """Setting of :func:`label_budget_curve` (the environment, DAgger's schedule, training).

    ``slip_probability`` and ``max_steps`` configure the KeyDoorGrid the learners act
    in (DAgger's rollouts, every evaluation); the expert demonstrates in a KeyDoorGrid
    with ``demonstration_slip_probability`` (None: the same), so 0.0 models clean
    demonstrations that never show a recovery. Start cells stay the environment's own. DAgger starts from the first ``initial_labels`` labels of
    the expert demonstrations; each round then labels ``labels_per_round`` states of
    the round's mixture rollouts (expert with probability ``beta**round``, or ``beta``
    in every round when ``decay_beta`` is False; else the current learner). Every
    learner is a fresh :func:`behavior_cloning` fit for ``epochs`` epochs with ``bc``;
    each greedy policy's success and return are exact (the environment's model, slips
    included); its distribution shift is measured over ``evaluation_episodes`` episodes whose
    start seeds are shared by all learners of one seed.
    """  # noqa: E501  (the wording is kept: translations are keyed to this docstring)

    # The default setting (docs/dagger_budget.md): the wide layout, whose ten start cells
    # and longer routes leave most of the states a learner reaches out of a few
    # demonstrations; clean demonstrations (no recovery shown) and a learner whose
    # actions slip one time in ten.
    layout: tuple[str, ...] = WIDE_LAYOUT
    slip_probability: float = 0.1
    demonstration_slip_probability: float | None = 0.0
    max_steps: int = 100
    initial_labels: int = 40
    labels_per_round: int = 40
    beta: float = 0.5
    decay_beta: bool = True
    epochs: int = 20
    evaluation_episodes: int = 300
    distinct_labels: bool = True
    bc: BCConfig = field(default_factory=BCConfig)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layout", check_layout(self.layout))
        for name in ("max_steps", "initial_labels", "labels_per_round", "epochs", "evaluation_episodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"LabelBudgetConfig: `{name}` must be a positive integer, got {value!r}")
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"LabelBudgetConfig: `beta` must lie in [0, 1], got {self.beta!r}")
        if not isinstance(self.distinct_labels, bool):
            raise ValueError(f"LabelBudgetConfig: `distinct_labels` must be True or False, got {self.distinct_labels!r}")
        if not isinstance(self.decay_beta, bool):
            raise ValueError(f"LabelBudgetConfig: `decay_beta` must be True or False, got {self.decay_beta!r}")
        for name in ("slip_probability", "demonstration_slip_probability"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value < 1.0:
                raise ValueError(f"LabelBudgetConfig: `{name}` must lie in [0, 1), got {value!r}")
        if self.slip_probability is None:
            raise ValueError("LabelBudgetConfig: `slip_probability` must lie in [0, 1), got None")
        if not isinstance(self.bc, BCConfig):
            raise ValueError(f"LabelBudgetConfig: `bc` must be a BCConfig, got {type(self.bc).__name__}")

    def describe(self) -> dict:
        """The setting as figures and reports name it: ``slip``, ``rows``, ``cols``, ``starts``, ``max_steps``."""
        return {
            "slip": f"{self.slip_probability:g}",
            "rows": len(self.layout),
            "cols": len(self.layout[0]),
            "starts": "".join(self.layout).count("S"),
            "max_steps": self.max_steps,
        }


#: The distribution-shift measures :func:`label_budget_curve` reports per learner and budget
#: (:func:`reference_impl.shift.shift_metrics` over the learner's evaluation episodes).
SHIFT_METRICS: tuple[str, ...] = ("unseen_share", "error_unseen", "error_seen")

#: Default budgets of :func:`label_budget_curve`: from DAgger's initial demonstrations
#: alone (40 labels) to where both learners have stopped improving (docs/dagger_budget.md).
LABEL_BUDGETS: tuple[int, ...] = (40, 80, 120, 160, 200, 300, 400)


def _check_budgets(budgets) -> list[int]:
    """``budgets`` as a list of strictly increasing positive ints, else ValueError."""
    if isinstance(budgets, (str, bytes)) or not hasattr(budgets, "__iter__"):
        raise ValueError(f"label_budget_curve: `budgets` must be a sequence of positive integers, got {budgets!r}")
    values = list(budgets)
    if not values:
        raise ValueError("label_budget_curve: `budgets` is empty; give at least one label budget")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"label_budget_curve: `budgets` must hold positive integers, got {value!r}")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"label_budget_curve: `budgets` must be strictly increasing, got {values}")
    return [int(v) for v in values]


def _reset_seeds(seed: int, stream: int):
    """Endless reset seeds of one data stream (0: demonstrations, k: DAgger round k).

    Streams are 10,000 episodes apart and far below the evaluation seeds, so no
    collection episode repeats another stream's or an evaluation episode's start.
    """
    base = seed * 1_000_000 + stream * 10_000
    return (base + i for i in range(10_000))


def label_budget_curve(
    seed: int,
    budgets=LABEL_BUDGETS,
    config: LabelBudgetConfig | None = None,
    *,
    progress: bool | None = None,
) -> dict:
    """BC and DAgger trained on exactly ``b`` expert labels, for each budget ``b``.

    A label is one (state, expert action) pair in a learner's training set; the two
    learners share one seed, one environment and the same evaluation episodes.

    * BC at budget ``b``: the first ``b`` states of the expert's demonstrations
      (episodes played one after another, the last one cut at ``b``).
    * DAgger at budget ``b``: the first ``min(b, initial_labels)`` of those same
      demonstration labels, then rounds k = 1, 2, ...: the learner trained on all
      labels so far is rolled out mixed with the expert (the expert acts with
      probability ``beta**k``, or ``beta`` if not ``decay_beta``), and the first
      ``labels_per_round`` states those rollouts visit are labeled by the expert;
      the round that reaches ``b`` labels stops there. The expert acts only in states it labels, so expert queries equal
      labels. The labels of a smaller budget are a prefix of a larger one's, so one
      pass serves every budget and equals a run with that budget alone.

    Returns a dict of lists aligned with ``budgets``: ``budgets``, ``bc_labels``,
    ``bc_success_rate``, ``bc_mean_return``, ``bc_distinct_states``, ``dagger_labels``,
    ``dagger_learner_labels`` (labels on states of DAgger's own rollouts),
    ``dagger_rounds``, ``dagger_success_rate``, ``dagger_mean_return``,
    ``dagger_distinct_states``, and for each learner ``<bc|dagger>_unseen_share``,
    ``_error_unseen``, ``_error_seen``: its distribution shift on its own evaluation
    episodes against its own training labels (:func:`reference_impl.shift.shift_metrics`;
    for BC those are the demonstrations); plus ``expert_success_rate`` and ``expert_mean_return``
    (the expert, exactly: the ceiling), ``seed`` and ``config``.
    Raises ValueError on a bad ``budgets`` (empty, not positive integers, not increasing).
    """
    cfg = config or LabelBudgetConfig()
    budgets = _check_budgets(budgets)
    seed_everything(seed)
    env = KeyDoorGrid(seed=seed, slip_probability=cfg.slip_probability, max_steps=cfg.max_steps, layout=cfg.layout)
    demo_slip = cfg.slip_probability if cfg.demonstration_slip_probability is None else cfg.demonstration_slip_probability
    demo_env = KeyDoorGrid(seed=seed, slip_probability=demo_slip, max_steps=cfg.max_steps, layout=cfg.layout)
    optimal = optimal_actions(env)
    expert = ExpertPolicy(env)
    largest = budgets[-1]
    eval_seed = seed * 1_000_000 + 900_000

    def fit(states: np.ndarray) -> nn.Module:
        net, _ = behavior_cloning(states, expert.label(states), epochs=cfg.epochs, seed=seed, action_dim=env.action_dim, config=cfg.bc)
        return net

    def score(policy, trained: np.ndarray | None = None) -> dict:
        """Exact success and return of the greedy policy (slips included), and the learner's shift
        from ``trained`` over the shared evaluation episodes (where it goes is what is sampled)."""
        metrics = exact_outcomes(env, policy)
        if trained is not None:
            episodes = play_episodes(env, policy, episodes=cfg.evaluation_episodes, seed=eval_seed)
            metrics.update(shift_metrics(*episode_visits(env, episodes), optimal, state_indices(env, trained)))
        return metrics

    demonstrations = collect_states(demo_env, expert, largest, _reset_seeds(seed, 0), known=_known(cfg, env, ()))
    dagger_states, round_nets = _dagger_states(env, expert, demonstrations, largest, cfg, fit, seed, progress)

    out = {
        key: []
        for key in (
            "bc_labels",
            "bc_success_rate",
            "bc_mean_return",
            "bc_distinct_states",
            "dagger_labels",
            "dagger_learner_labels",
            "dagger_rounds",
            "dagger_success_rate",
            "dagger_mean_return",
            "dagger_distinct_states",
            *(f"{who}_{m}" for who in ("bc", "dagger") for m in SHIFT_METRICS),
        )
    }
    for budget in progress_bar(budgets, desc="label budgets", total=len(budgets), enabled=progress):
        bc_metrics = score(GreedyTablePolicy(fit(demonstrations[:budget]), env), demonstrations[:budget])
        if budget <= cfg.initial_labels:
            dagger_metrics = bc_metrics  # the same demonstrations, seed and training: the same learner
        else:
            net = round_nets[budget] if budget in round_nets else fit(dagger_states[:budget])
            dagger_metrics = score(GreedyTablePolicy(net, env), dagger_states[:budget])
        learner_labels = max(0, len(dagger_states[:budget]) - cfg.initial_labels)
        for name, states, metrics in (("bc", demonstrations[:budget], bc_metrics), ("dagger", dagger_states[:budget], dagger_metrics)):
            out[f"{name}_labels"].append(len(states))
            out[f"{name}_success_rate"].append(metrics["success_rate"])
            out[f"{name}_mean_return"].append(metrics["mean_return"])
            out[f"{name}_distinct_states"].append(len(np.unique(states, axis=0)))
            for m in SHIFT_METRICS:
                out[f"{name}_{m}"].append(metrics[m])
        out["dagger_learner_labels"].append(learner_labels)
        out["dagger_rounds"].append(-(-learner_labels // cfg.labels_per_round))
    expert_metrics = score(expert)
    return {
        "budgets": budgets,
        **out,
        "expert_success_rate": expert_metrics["success_rate"],
        "expert_mean_return": expert_metrics["mean_return"],
        "seed": seed,
        "config": asdict(cfg),
    }


def _known(cfg: LabelBudgetConfig, env: KeyDoorGrid, states) -> set | None:
    """The set of labeled state indices when labels are distinct (else None: every visit counts)."""
    return {int(i) for i in state_indices(env, np.reshape(states, (-1, env.observation_dim)))} if cfg.distinct_labels else None


def _dagger_states(env, expert, demonstrations, largest, cfg, fit, seed, progress):
    """DAgger's labeled states up to ``largest`` labels, and its learner after each round.

    Returns ``(states, nets)``: ``states`` (largest, d) in labeling order, ``nets``
    maps a label count reached at the end of a round to the learner trained on it.
    """
    states = demonstrations[: min(cfg.initial_labels, largest)]
    known = _known(cfg, env, states)
    nets = {len(states): fit(states)}
    rounds = -(-max(0, largest - len(states)) // cfg.labels_per_round)
    for k in progress_bar(range(1, rounds + 1), desc="DAgger rounds", total=rounds, enabled=progress):
        learner = GreedyTablePolicy(nets[len(states)], env)
        beta = cfg.beta**k if cfg.decay_beta else cfg.beta
        policy = MixturePolicy(expert, learner, beta, np.random.default_rng([seed, k]))
        count = min(cfg.labels_per_round, largest - len(states))
        # The DAgger step: the expert labels the states the learner's own rollouts reach.
        new = collect_states(env, policy, count, _reset_seeds(seed, k), known=known)
        if not len(new):
            break  # nothing left to label: the budget cannot be spent
        states = np.concatenate([states, new])
        nets[len(states)] = fit(states)
    return states, nets
