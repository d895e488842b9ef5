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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from reference_impl.common import progress as progress_bar
from reference_impl.common import seed_everything
from reference_impl.expert import ExpertPolicy
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.rollout import evaluate_policy, rollout

__all__ = [
    "ArgmaxPolicy",
    "BCConfig",
    "MixturePolicy",
    "behavior_cloning",
    "bc_loss",
    "dagger_experiment",
    "make_mlp",
]


def make_mlp(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    """Two hidden ReLU layers: (B, in_dim) -> (B, out_dim). Shared by the policy and Q networks."""
    for name, value in (("in_dim", in_dim), ("hidden", hidden), ("out_dim", out_dim)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"make_mlp: `{name}` must be a positive integer, got {value!r}")
    return nn.Sequential(
        nn.Linear(in_dim, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
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
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
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
            idx = order[u * cfg.batch_size:(u + 1) * cfg.batch_size]
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
    evaluation_episodes: int,
    *,
    beta: float = 0.5,
    config: BCConfig | None = None,
    progress: bool | None = None,
) -> dict:
    """BC on a few expert episodes (round 0), then ``rounds`` DAgger rounds.

    Round k >= 1: roll out the round k-1 learner (greedy; the expert acts instead with
    probability ``beta**k`` per step) for ``learner_episodes_per_round`` episodes,
    label every visited state with the BFS expert's action, append to the dataset, retrain a fresh network on the whole
    aggregate for ``epochs`` epochs and evaluate it greedily on
    ``evaluation_episodes`` episodes (the same evaluation seeds every round, so rounds
    are compared on the same start cells).

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
    evaluation_episodes = _check_count("evaluation_episodes", evaluation_episodes, 1)

    rng = seed_everything(seed)
    env = KeyDoorGrid(seed=seed)
    expert = ExpertPolicy(env)
    eval_env = KeyDoorGrid(seed=seed + 1)
    eval_seed = seed * 1000 + 500_000  # far from the data-collection reset seeds below

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
            np.stack(observations), np.asarray(labels, dtype=np.int64),
            epochs=epochs, seed=seed + round_index, action_dim=env.action_dim, config=config,
        )
        losses.append(history)
        metrics = evaluate_policy(eval_env, ArgmaxPolicy(learner), episodes=evaluation_episodes, seed=eval_seed)
        records.append({
            "round": round_index,
            "dataset_size": len(observations),
            "new_states": new_states,
            "success_rate": metrics["success_rate"],
            "mean_return": metrics["mean_return"],
            "outcomes": metrics["outcomes"],
            "learner_outcomes": learner_outcomes,
        })
    return {
        "records": records,
        "bc_losses": losses,
        "config": {
            "seed": seed, "expert_episodes": expert_episodes, "rounds": rounds,
            "learner_episodes_per_round": learner_episodes_per_round, "epochs": epochs,
            "evaluation_episodes": evaluation_episodes, "beta": beta,
        },
        "policy": learner,
    }
