"""Offline learners for KeyDoorGrid: one fixed log, several ways to distrust extrapolation.

Every method reads the same flat log (see :mod:`reference_impl.offline_data`) and
never acts in the environment while training. Each has a config dataclass, small
``compute_*_target`` / ``*_loss`` functions, and a training loop that only wires them
together. The mathematics inside the losses is the module's kernels:

==========================  ==============================================================
behavior cloning            ``masked_token_nll`` of the logged actions (all rows active)
naive offline DQN           ``dqn_targets`` (max over *all* actions of the target net)
support-restricted DQN      ``behavior_support_mask`` on a learned behavior model picks the
(discrete BCQ)              allowed actions; ``double_dqn_targets`` evaluates the allowed
                            argmax with the target net; acting uses the same mask
discrete CQL                ``dqn_targets`` TD loss + alpha * ``cql_discrete_penalty``
IQL                         ``expectile_loss`` for V, ``dqn_targets`` with the single
                            column V(s') for Q, ``iql_advantage_weights`` for the policy
==========================  ==============================================================

Target kernels are the numpy ones (targets need no gradient; a student's numpy kernel
can drive training), loss kernels are the torch twins. ``kernels=`` replaces any of
them by name. Only ``terminals`` stops bootstrapping: a timeout row bootstraps.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from reference_impl import kernels as np_kernels
from reference_impl.common import with_kernels
from reference_impl.imitation import make_mlp
from reference_impl.offline_data import TRAINING_KEYS, check_transition_arrays
from reference_impl.optimizers import adam, polyak_update
from reference_impl.torch_kernels import (
    cql_discrete_penalty_torch,
    expectile_loss_torch,
    iql_advantage_weights_torch,
    masked_token_nll_torch,
)

__all__ = [
    "DEFAULT_KERNELS",
    "resolve_kernels",
    "OfflineLog",
    "BehaviorCloningConfig",
    "DQNConfig",
    "RestrictedDQNConfig",
    "CQLConfig",
    "IQLConfig",
    "GreedyPolicy",
    "bc_loss",
    "td_loss",
    "compute_dqn_target",
    "compute_restricted_target",
    "cql_loss",
    "compute_iql_q_target",
    "iql_value_loss",
    "iql_policy_loss",
    "train_behavior_cloning",
    "train_offline_dqn",
    "train_restricted_dqn",
    "train_cql",
    "train_iql",
]

#: The kernels the learners call, by name. Targets and masks: numpy; losses: torch.
DEFAULT_KERNELS: dict[str, Callable] = {
    "dqn_targets": np_kernels.dqn_targets,
    "double_dqn_targets": np_kernels.double_dqn_targets,
    "behavior_support_mask": np_kernels.behavior_support_mask,
    "fqe_targets": np_kernels.fqe_targets,
    "masked_token_nll": masked_token_nll_torch,
    "cql_discrete_penalty": cql_discrete_penalty_torch,
    "expectile_loss": expectile_loss_torch,
    "iql_advantage_weights": iql_advantage_weights_torch,
}


def resolve_kernels(kernels: Mapping[str, Callable] | None) -> dict[str, Callable]:
    """DEFAULT_KERNELS with the entries of ``kernels`` swapped in; unknown names raise ValueError."""
    return with_kernels(DEFAULT_KERNELS, kernels)


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class OfflineLog:
    """The log as tensors (for networks) and numpy arrays (for the target kernels).

    obs, next_obs (N, d) float32; actions (N,) int64; rewards (N,) float64;
    terminated (N,) bool (timeouts are *not* here: they bootstrap).
    """

    obs: torch.Tensor
    actions: torch.Tensor
    rewards: np.ndarray
    next_obs: torch.Tensor
    terminated: np.ndarray

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> OfflineLog:
        """From the flat arrays of :func:`reference_impl.offline_data.to_arrays` (``timeouts`` unused)."""
        check_transition_arrays(arrays, "OfflineLog.from_arrays", keys=TRAINING_KEYS, allow_empty=False)
        return cls(
            obs=torch.as_tensor(np.asarray(arrays["observations"], dtype=np.float32)),
            actions=torch.as_tensor(np.asarray(arrays["actions"], dtype=np.int64)),
            rewards=np.asarray(arrays["rewards"], dtype=np.float64),
            next_obs=torch.as_tensor(np.asarray(arrays["next_observations"], dtype=np.float32)),
            terminated=np.asarray(arrays["terminals"], dtype=bool),
        )

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @property
    def observation_dim(self) -> int:
        return int(self.obs.shape[1])

    def batch(self, idx: np.ndarray) -> OfflineLog:
        t = torch.as_tensor(idx)
        return OfflineLog(self.obs[t], self.actions[t], self.rewards[idx], self.next_obs[t], self.terminated[idx])


def _minibatches(n: int, batch_size: int, epochs: int, rng: np.random.Generator):
    """Index arrays: ``epochs`` shuffled passes over n rows (the last batch may be short)."""
    for _ in range(epochs):
        order = rng.permutation(n)
        for begin in range(0, n, batch_size):
            yield order[begin : begin + batch_size]


def _check_training(epochs, caller: str) -> int:
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
        raise ValueError(f"{caller}: `epochs` must be a positive integer, got {epochs!r}")
    return int(epochs)


def _fresh_net(seed: int, in_dim: int, hidden: int, out_dim: int) -> nn.Module:
    with torch.random.fork_rng(devices=[]):  # seeded weights, global generator untouched
        torch.manual_seed(seed)
        return make_mlp(in_dim, hidden, out_dim)


def _as_f64(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy()


# --------------------------------------------------------------------------- configs
@dataclass(frozen=True)
class _NetConfig:
    # Shared defaults, chosen on the full profile (80 episodes, 16 epochs): batch 32
    # gives ~880 updates; lr 1e-3 was steadier across seeds than 2e-3 or 3e-3.
    hidden: int = 64
    learning_rate: float = 1e-3
    batch_size: int = 32

    def __post_init__(self) -> None:
        name = type(self).__name__
        if self.hidden < 1 or self.batch_size < 1:
            raise ValueError(f"{name}: `hidden` and `batch_size` must be positive")
        if not self.learning_rate > 0:
            raise ValueError(f"{name}: `learning_rate` must be positive, got {self.learning_rate}")
        gamma = getattr(self, "gamma", None)
        if gamma is not None and not 0.0 <= gamma <= 1.0:
            raise ValueError(f"{name}: `gamma` must lie in [0, 1], got {gamma}")
        rate = getattr(self, "target_update_rate", None)
        if rate is not None and not 0.0 < rate <= 1.0:
            raise ValueError(f"{name}: `target_update_rate` must lie in (0, 1], got {rate}")


@dataclass(frozen=True)
class BehaviorCloningConfig(_NetConfig):
    """BC on the logged actions; also the behavior model of the restricted DQN."""


@dataclass(frozen=True)
class DQNConfig(_NetConfig):
    """Naive offline DQN: TD regression onto dqn_targets with a Polyak-averaged target net."""

    gamma: float = 0.99
    target_update_rate: float = 0.05


@dataclass(frozen=True)
class RestrictedDQNConfig(DQNConfig):
    """Discrete BCQ: maximize only over actions with
    p_behavior(a|s) >= threshold_ratio * max_b p_behavior(b|s)."""

    threshold_ratio: float = 0.35

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.threshold_ratio <= 1.0:
            raise ValueError(f"RestrictedDQNConfig: `threshold_ratio` must lie in [0, 1], got {self.threshold_ratio}")


@dataclass(frozen=True)
class CQLConfig(DQNConfig):
    """Discrete CQL: TD loss + alpha * (logsumexp_b Q(s, b) - Q(s, a_logged))."""

    alpha: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (math.isfinite(self.alpha) and self.alpha >= 0):
            raise ValueError(f"CQLConfig: `alpha` must be a finite non-negative number, got {self.alpha}")


@dataclass(frozen=True)
class IQLConfig(_NetConfig):
    """IQL: expectile ``tau`` for V, inverse temperature ``beta`` and cap ``max_weight``
    for the advantage-weighted policy."""

    gamma: float = 0.99
    target_update_rate: float = 0.05
    expectile: float = 0.8
    beta: float = 10.0
    max_weight: float = 100.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 < self.expectile < 1.0:
            raise ValueError(f"IQLConfig: `expectile` must lie in (0, 1), got {self.expectile}")
        if not self.beta >= 0 or not self.max_weight > 0:
            raise ValueError(f"IQLConfig: `beta` must be >= 0 and `max_weight` > 0, got {self.beta}, {self.max_weight}")


# --------------------------------------------------------------------------- policies
class GreedyPolicy:
    """Deterministic greedy policy over a score network, optionally restricted by a mask.

    ``scores = net(obs)`` (Q-values or logits); with ``support`` (obs batch -> bool
    (B, A)) disallowed actions are never chosen. Ties go to the first index, as in
    the kernels. ``policy(obs, info) -> int`` for rollouts; ``probs(obs_batch)`` gives
    the one-hot action distribution (B, A) that FQE evaluates.
    """

    def __init__(self, net: nn.Module, support: Callable[[torch.Tensor], np.ndarray] | None = None) -> None:
        self.net = net
        self.support = support

    def scores(self, observations) -> np.ndarray:
        """Network scores (B, A) as float64, with -inf on disallowed actions."""
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
        with torch.no_grad():
            scores = self.net(obs).double().numpy()
        if self.support is not None:
            scores = np.where(self.support(obs), scores, -np.inf)
        return scores

    def actions(self, observations) -> np.ndarray:
        """Greedy actions (B,) int."""
        return self.scores(observations).argmax(axis=1)

    def probs(self, observations) -> np.ndarray:
        """The policy as a distribution: one-hot rows (B, A) on the greedy action."""
        scores = self.scores(observations)
        out = np.zeros(scores.shape, dtype=np.float64)
        out[np.arange(scores.shape[0]), scores.argmax(axis=1)] = 1.0
        return out

    def __call__(self, obs, info=None) -> int:
        return int(self.actions(np.asarray(obs, dtype=np.float32)[None, :])[0])


def behavior_support(behavior_net: nn.Module, threshold_ratio: float, mask_kernel: Callable) -> Callable:
    """obs (B, d) -> bool (B, A): actions the learned behavior model deems supported."""

    def support(obs: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            probs = torch.softmax(behavior_net(obs), dim=1).double().numpy()
        return np.asarray(mask_kernel(probs, threshold_ratio), dtype=bool)

    return support


# --------------------------------------------------------------------------- losses and targets
def _taken(values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    return values.gather(1, actions[:, None]).squeeze(1)


def bc_loss(logits: torch.Tensor, actions: torch.Tensor, *, masked_token_nll: Callable = masked_token_nll_torch) -> torch.Tensor:
    """-mean_i log softmax(logits_i)[a_i]: masked_token_nll with every row active.

    logits (B, A), actions (B,) long -> 0-d tensor (the cross-entropy of the log).
    """
    logp = _taken(F.log_softmax(logits, dim=1), actions)
    return masked_token_nll(logp, torch.ones_like(logp, dtype=torch.bool))


def td_loss(q_values: torch.Tensor, actions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """mean_i (Q(s_i, a_i) - y_i)^2 with fixed targets. (B, A), (B,), (B,) -> 0-d."""
    if targets.shape != actions.shape or q_values.shape[0] != actions.shape[0]:
        raise ValueError(
            f"td_loss: `q_values` (B, A), `actions` and `targets` (B,) disagree: "
            f"{tuple(q_values.shape)}, {tuple(actions.shape)}, {tuple(targets.shape)}"
        )
    return torch.mean((_taken(q_values, actions) - targets.to(q_values.dtype)) ** 2)


def compute_dqn_target(
    batch: OfflineLog, target_net: nn.Module, gamma: float, *, dqn_targets: Callable = np_kernels.dqn_targets
) -> torch.Tensor:
    """y = r + gamma (1 - terminated) max_a Qbar(s', a) over *all* actions (naive). -> (B,) float32."""
    with torch.no_grad():
        next_q = _as_f64(target_net(batch.next_obs))
    y = dqn_targets(batch.rewards, batch.terminated, next_q, gamma=gamma)
    return torch.as_tensor(np.asarray(y, dtype=np.float32))


def compute_restricted_target(
    batch: OfflineLog,
    online_net: nn.Module,
    target_net: nn.Module,
    support: Callable[[torch.Tensor], np.ndarray],
    gamma: float,
    *,
    double_dqn_targets: Callable = np_kernels.double_dqn_targets,
) -> torch.Tensor:
    """Discrete-BCQ target: y = r + gamma (1 - terminated) Qbar(s', a*),
    a* = argmax over *supported* a of Q_online(s', a).

    The restricted argmax is handed to ``double_dqn_targets`` as a one-hot selection
    table (its argmax is a*), so the kernel does the bootstrapping and the masking of
    terminal rows. -> (B,) float32.
    """
    with torch.no_grad():
        online_next = _as_f64(online_net(batch.next_obs))
        target_next = _as_f64(target_net(batch.next_obs))
    allowed = support(batch.next_obs)
    chosen = np.where(allowed, online_next, -np.inf).argmax(axis=1)
    selection = np.zeros_like(online_next)
    selection[np.arange(len(chosen)), chosen] = 1.0
    y = double_dqn_targets(batch.rewards, batch.terminated, selection, target_next, gamma=gamma)
    return torch.as_tensor(np.asarray(y, dtype=np.float32))


def cql_loss(
    q_values: torch.Tensor,
    actions: torch.Tensor,
    targets: torch.Tensor,
    alpha: float,
    *,
    cql_discrete_penalty: Callable = cql_discrete_penalty_torch,
) -> dict[str, torch.Tensor]:
    """Discrete CQL objective: {"td", "penalty", "total" = td + alpha * penalty} (0-d each).

    The penalty, logsumexp_b Q(s, b) - Q(s, a_logged), pushes every action down in
    proportion to its softmax weight and the logged one up, so actions the log
    never shows cannot keep inflated values.
    """
    td = td_loss(q_values, actions, targets)
    penalty = cql_discrete_penalty(q_values, actions)
    return {"td": td, "penalty": penalty, "total": td + alpha * penalty}


def compute_iql_q_target(
    batch: OfflineLog, value_net: nn.Module, gamma: float, *, dqn_targets: Callable = np_kernels.dqn_targets
) -> torch.Tensor:
    """IQL's Q target, y = r + gamma (1 - terminated) V(s'): no max over actions at all.

    V(s') is passed to ``dqn_targets`` as a one-column table (the max of one column is
    that column). -> (B,) float32.
    """
    with torch.no_grad():
        v_next = _as_f64(value_net(batch.next_obs))  # (B, 1)
    y = dqn_targets(batch.rewards, batch.terminated, v_next, gamma=gamma)
    return torch.as_tensor(np.asarray(y, dtype=np.float32))


def iql_value_loss(
    q_target_taken: torch.Tensor, values: torch.Tensor, tau: float, *, expectile_loss: Callable = expectile_loss_torch
) -> torch.Tensor:
    """expectile_loss(Qbar(s, a) - V(s), tau): V tracks an upper expectile of in-sample Q.

    q_target_taken (B,) from the frozen target net; values (B,) -> 0-d.
    """
    return expectile_loss(q_target_taken.detach() - values, tau)


def iql_policy_loss(
    logits: torch.Tensor,
    actions: torch.Tensor,
    advantages: torch.Tensor,
    beta: float,
    max_weight: float,
    *,
    iql_advantage_weights: Callable = iql_advantage_weights_torch,
) -> torch.Tensor:
    """Advantage-weighted BC: -mean_i w_i log pi(a_i | s_i), w = iql_advantage_weights(A, beta, cap).

    The advantages come from frozen critics (detached here). (B, A), (B,), (B,) -> 0-d.
    """
    weights = iql_advantage_weights(advantages.detach(), beta, max_weight)
    logp = _taken(F.log_softmax(logits, dim=1), actions)
    return -(weights.to(logp.dtype) * logp).mean()


# --------------------------------------------------------------------------- training loops
@dataclass
class TrainResult:
    """What a loop returns: the networks, the greedy policy, per-epoch mean losses, update count."""

    policy: GreedyPolicy
    networks: dict[str, nn.Module]
    losses: list[float]
    updates: int


def _optimise(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def _epoch_means(values: list[float], per_epoch: int) -> list[float]:
    return [float(np.mean(values[i : i + per_epoch])) for i in range(0, len(values), per_epoch)]


def train_behavior_cloning(
    log: OfflineLog,
    n_actions: int,
    *,
    epochs: int,
    seed: int,
    config: BehaviorCloningConfig = BehaviorCloningConfig(),
    kernels: Mapping[str, Callable] | None = None,
) -> TrainResult:
    """Fit pi(a|s) to the logged actions. The network doubles as the behavior model."""
    k = resolve_kernels(kernels)
    epochs = _check_training(epochs, "train_behavior_cloning")
    net = _fresh_net(seed, log.observation_dim, config.hidden, n_actions)
    optimizer = adam(net.parameters(), lr=config.learning_rate)
    rng = np.random.default_rng(seed)
    history = []
    for idx in _minibatches(len(log), config.batch_size, epochs, rng):
        b = log.batch(idx)
        loss = bc_loss(net(b.obs), b.actions, masked_token_nll=k["masked_token_nll"])
        _optimise(optimizer, loss)
        history.append(float(loss.detach()))
    per_epoch = math.ceil(len(log) / config.batch_size)
    return TrainResult(GreedyPolicy(net), {"policy": net}, _epoch_means(history, per_epoch), len(history))


def _train_q_learner(
    log: OfflineLog,
    n_actions: int,
    epochs: int,
    seed: int,
    config: DQNConfig,
    step_loss: Callable[[OfflineLog, nn.Module, nn.Module], torch.Tensor],
) -> tuple[nn.Module, list[float], int]:
    """Shared loop of the DQN family: minibatches, Adam, Polyak target updates.
    ``step_loss(batch, online, target)`` is the only thing a method changes."""
    online = _fresh_net(seed, log.observation_dim, config.hidden, n_actions)
    target = copy.deepcopy(online)
    optimizer = adam(online.parameters(), lr=config.learning_rate)
    rng = np.random.default_rng(seed)
    history = []
    for idx in _minibatches(len(log), config.batch_size, epochs, rng):
        loss = step_loss(log.batch(idx), online, target)
        _optimise(optimizer, loss)
        polyak_update(target, online, config.target_update_rate)
        history.append(float(loss.detach()))
    per_epoch = math.ceil(len(log) / config.batch_size)
    return online, _epoch_means(history, per_epoch), len(history)


def train_offline_dqn(
    log: OfflineLog,
    n_actions: int,
    *,
    epochs: int,
    seed: int,
    config: DQNConfig = DQNConfig(),
    kernels: Mapping[str, Callable] | None = None,
) -> TrainResult:
    """Naive offline DQN: Q-learning on the log with the unrestricted max in the target."""
    k = resolve_kernels(kernels)
    epochs = _check_training(epochs, "train_offline_dqn")

    def step_loss(b: OfflineLog, online: nn.Module, target: nn.Module) -> torch.Tensor:
        y = compute_dqn_target(b, target, config.gamma, dqn_targets=k["dqn_targets"])
        return td_loss(online(b.obs), b.actions, y)

    net, losses, updates = _train_q_learner(log, n_actions, epochs, seed, config, step_loss)
    return TrainResult(GreedyPolicy(net), {"q": net}, losses, updates)


def train_restricted_dqn(
    log: OfflineLog,
    n_actions: int,
    behavior_net: nn.Module,
    *,
    epochs: int,
    seed: int,
    config: RestrictedDQNConfig = RestrictedDQNConfig(),
    kernels: Mapping[str, Callable] | None = None,
) -> TrainResult:
    """Support-restricted DQN (discrete BCQ): the behavior model's support mask limits the
    maximization in the target and the greedy choice when acting."""
    k = resolve_kernels(kernels)
    epochs = _check_training(epochs, "train_restricted_dqn")
    support = behavior_support(behavior_net, config.threshold_ratio, k["behavior_support_mask"])

    def step_loss(b: OfflineLog, online: nn.Module, target: nn.Module) -> torch.Tensor:
        y = compute_restricted_target(b, online, target, support, config.gamma, double_dqn_targets=k["double_dqn_targets"])
        return td_loss(online(b.obs), b.actions, y)

    net, losses, updates = _train_q_learner(log, n_actions, epochs, seed, config, step_loss)
    return TrainResult(GreedyPolicy(net, support), {"q": net, "behavior": behavior_net}, losses, updates)


def train_cql(
    log: OfflineLog,
    n_actions: int,
    *,
    epochs: int,
    seed: int,
    config: CQLConfig = CQLConfig(),
    kernels: Mapping[str, Callable] | None = None,
) -> TrainResult:
    """Discrete CQL: the naive DQN target and TD loss plus alpha * cql_discrete_penalty."""
    k = resolve_kernels(kernels)
    epochs = _check_training(epochs, "train_cql")

    def step_loss(b: OfflineLog, online: nn.Module, target: nn.Module) -> torch.Tensor:
        y = compute_dqn_target(b, target, config.gamma, dqn_targets=k["dqn_targets"])
        return cql_loss(online(b.obs), b.actions, y, config.alpha, cql_discrete_penalty=k["cql_discrete_penalty"])["total"]

    net, losses, updates = _train_q_learner(log, n_actions, epochs, seed, config, step_loss)
    return TrainResult(GreedyPolicy(net), {"q": net}, losses, updates)


def train_iql(
    log: OfflineLog,
    n_actions: int,
    *,
    epochs: int,
    seed: int,
    config: IQLConfig = IQLConfig(),
    kernels: Mapping[str, Callable] | None = None,
) -> TrainResult:
    """IQL: V by expectile regression on in-sample Qbar(s, a), Q onto r + gamma V(s'),
    policy by advantage-weighted BC. Only logged actions are ever evaluated."""
    k = resolve_kernels(kernels)
    epochs = _check_training(epochs, "train_iql")
    d = log.observation_dim
    q_net = _fresh_net(seed, d, config.hidden, n_actions)
    v_net = _fresh_net(seed + 1, d, config.hidden, 1)
    policy_net = _fresh_net(seed + 2, d, config.hidden, n_actions)
    q_target = copy.deepcopy(q_net)
    q_opt = adam(q_net.parameters(), lr=config.learning_rate)
    v_opt = adam(v_net.parameters(), lr=config.learning_rate)
    pi_opt = adam(policy_net.parameters(), lr=config.learning_rate)
    rng = np.random.default_rng(seed)
    history = []
    for idx in _minibatches(len(log), config.batch_size, epochs, rng):
        b = log.batch(idx)
        with torch.no_grad():
            q_bar = _taken(q_target(b.obs), b.actions)
        values = v_net(b.obs).squeeze(1)
        v_loss = iql_value_loss(q_bar, values, config.expectile, expectile_loss=k["expectile_loss"])
        _optimise(v_opt, v_loss)
        y = compute_iql_q_target(b, v_net, config.gamma, dqn_targets=k["dqn_targets"])
        q_loss = td_loss(q_net(b.obs), b.actions, y)
        _optimise(q_opt, q_loss)
        polyak_update(q_target, q_net, config.target_update_rate)
        advantages = q_bar - values.detach()
        pi_loss = iql_policy_loss(
            policy_net(b.obs),
            b.actions,
            advantages,
            config.beta,
            config.max_weight,
            iql_advantage_weights=k["iql_advantage_weights"],
        )
        _optimise(pi_opt, pi_loss)
        history.append(float(q_loss.detach() + v_loss.detach() + pi_loss.detach()))
    per_epoch = math.ceil(len(log) / config.batch_size)
    nets = {"q": q_net, "v": v_net, "policy": policy_net}
    return TrainResult(GreedyPolicy(policy_net), nets, _epoch_means(history, per_epoch), len(history))
