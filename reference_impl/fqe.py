"""Fitted Q evaluation (FQE): the value of a fixed policy, estimated from a log alone.

FQE is policy *evaluation*, not improvement: the bootstrap averages the next
state's values under the evaluated policy instead of maximizing over them,

    y_i = r_i + gamma * (1 - terminated_i) * sum_a pi(a | s'_i) Qbar(s'_i, a)
    Q   <- argmin_Q  mean_i (Q(s_i, a_i) - y_i)^2            (repeated K times)

and the value of the policy is the average over logged start states of
sum_a pi(a | s_0) Q(s_0, a). The log never shows what happens after an action it
does not contain, so FQE is itself a learned model whose calibration has to be
checked (against a simulator here, against an exact solution in the tests).

Transitions cut by the time limit are *not* terminal: they bootstrap.

Two solvers share the target kernel: :func:`fit_fqe` (a torch network, minibatch
regression) and :func:`tabular_fqe` (exact least squares on a table, i.e. the
per-(s, a) mean of the targets). :func:`exact_policy_evaluation` solves the Bellman
linear system of a known tabular MDP, the ground truth the tests compare against.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from reference_impl import kernels
from reference_impl.imitation import make_mlp
from reference_impl.offline_data import TRAINING_KEYS, check_transition_arrays
from reference_impl.optimizers import adam

__all__ = [
    "FQEConfig",
    "compute_fqe_target",
    "fqe_regression_loss",
    "fit_fqe",
    "policy_value",
    "tabular_fqe",
    "exact_policy_evaluation",
]

PolicyProbs = Callable[[np.ndarray], np.ndarray]
"""Maps a batch of observations (B, obs_dim) to action probabilities (B, A)."""
QNetFactory = Callable[[int, int], nn.Module]
"""Builds a fresh Q-network from (observation_dim, n_actions)."""


@dataclass(frozen=True)
class FQEConfig:
    """Hyper-parameters of :func:`fit_fqe`.

    iterations: K, how many times the frozen target copy is refreshed. Each refresh
        moves reward information one step back, so K must exceed the number of steps
        from the start states to the reward (about 22 in KeyDoorGrid); with K = 15 the
        expert's value came out near -0.1 instead of 0.61, with K = 30 about +0.04 high.
    steps_per_iteration: minibatch regression steps between refreshes.
    """

    gamma: float = 0.99
    iterations: int = 50
    steps_per_iteration: int = 25
    batch_size: int = 256
    learning_rate: float = 3e-3
    hidden: int = 64

    def __post_init__(self):
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"FQEConfig: `gamma` must lie in [0, 1], got {self.gamma}")
        for name in ("iterations", "steps_per_iteration", "batch_size", "hidden"):
            if getattr(self, name) < 1:
                raise ValueError(f"FQEConfig: `{name}` must be at least 1, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"FQEConfig: `learning_rate` must be positive, got {self.learning_rate}")


def compute_fqe_target(
    rewards: np.ndarray,
    terminated: np.ndarray,
    next_q: np.ndarray,
    next_policy_probs: np.ndarray,
    gamma: float,
    *,
    targets_kernel: Callable = kernels.fqe_targets,
) -> np.ndarray:
    """FQE regression targets (B,) from the frozen Q table at s' and pi(.|s').

    A thin seam so the kernel is pluggable: ``targets_kernel`` defaults to the
    reference :func:`reference_impl.kernels.fqe_targets`; the result is float64.
    """
    return np.asarray(targets_kernel(rewards, terminated, next_q, next_policy_probs, gamma=gamma), dtype=np.float64)


def fqe_regression_loss(q_values: torch.Tensor, actions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean squared error between Q(s_i, a_i) and the fixed targets y_i.

    q_values (B, A), actions (B,) long, targets (B,) -> 0-d tensor. Raises ValueError
    on mismatched batch sizes.
    """
    if q_values.dim() != 2 or actions.shape != (q_values.shape[0],) or targets.shape != (q_values.shape[0],):
        raise ValueError(
            "fqe_regression_loss: `q_values` must be (B, A) with `actions` and `targets` of shape (B,), got "
            f"{tuple(q_values.shape)}, {tuple(actions.shape)}, {tuple(targets.shape)}"
        )
    chosen = q_values.gather(1, actions.long()[:, None]).squeeze(1)
    return torch.mean((chosen - targets.to(chosen.dtype)) ** 2)


def _probs(policy: PolicyProbs, obs: np.ndarray, n_actions: int, caller: str) -> np.ndarray:
    probs = np.asarray(policy(obs), dtype=np.float64)
    if probs.shape != (obs.shape[0], n_actions):
        raise ValueError(f"{caller}: `policy` must return probabilities of shape {(obs.shape[0], n_actions)}, got {probs.shape}")
    return probs


def fit_fqe(
    data: Mapping[str, np.ndarray],
    policy: PolicyProbs,
    n_actions: int,
    config: FQEConfig = FQEConfig(),
    *,
    seed: int = 0,
    targets_kernel: Callable = kernels.fqe_targets,
    make_q_net: QNetFactory | None = None,
) -> nn.Module:
    """Fit Q^pi on the log ``data`` (flat arrays: observations, actions, rewards,
    next_observations, terminals) by K rounds of regression onto FQE targets.

    ``policy`` is evaluated once on all next observations (it is fixed), so each
    round costs one forward pass over the log plus ``steps_per_iteration`` updates.
    Only ``terminals`` stops bootstrapping; ``timeouts`` are ignored on purpose.
    ``make_q_net(obs_dim, n_actions)`` builds the network (default: the shared
    two-hidden-layer MLP of width ``config.hidden``; a linear map on one-hot states
    makes FQE tabular). Returns the fitted float32 network (obs -> (A,) values).
    Deterministic in ``seed``; the global torch generator is left untouched.
    """
    n = check_transition_arrays(data, "fit_fqe", name="data", keys=TRAINING_KEYS, allow_empty=False)
    if n_actions < 1:
        raise ValueError(f"fit_fqe: `n_actions` must be positive, got {n_actions}")
    rng = np.random.default_rng(seed)
    obs = torch.as_tensor(np.asarray(data["observations"], dtype=np.float32))
    next_obs_np = np.asarray(data["next_observations"], dtype=np.float32)
    next_obs = torch.as_tensor(next_obs_np)
    actions = torch.as_tensor(np.asarray(data["actions"], dtype=np.int64))
    rewards = np.asarray(data["rewards"], dtype=np.float64)
    terminated = np.asarray(data["terminals"], dtype=bool)
    next_probs = _probs(policy, next_obs_np, n_actions, "fit_fqe")

    with torch.random.fork_rng(devices=[]):  # seed the initial weights without touching global state
        torch.manual_seed(seed)
        q_net = make_mlp(obs.shape[1], config.hidden, n_actions) if make_q_net is None else make_q_net(obs.shape[1], n_actions)
    optimizer = adam(q_net.parameters(), lr=config.learning_rate)
    batch = min(config.batch_size, n)
    for _ in range(config.iterations):
        frozen = copy.deepcopy(q_net)
        with torch.no_grad():
            next_q = frozen(next_obs).double().numpy()
        targets = torch.as_tensor(
            compute_fqe_target(rewards, terminated, next_q, next_probs, config.gamma, targets_kernel=targets_kernel),
            dtype=torch.float32,
        )
        for _ in range(config.steps_per_iteration):
            idx = torch.as_tensor(rng.integers(0, n, size=batch))
            loss = fqe_regression_loss(q_net(obs[idx]), actions[idx], targets[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return q_net


def policy_value(q_net: nn.Module, initial_observations: np.ndarray, policy: PolicyProbs) -> float:
    """Estimated value of the policy: mean over start states of sum_a pi(a|s0) Q(s0, a)."""
    s0 = np.asarray(initial_observations, dtype=np.float32)
    if s0.ndim != 2 or s0.shape[0] == 0:
        raise ValueError(f"policy_value: `initial_observations` must be a non-empty (N, obs_dim) array, got shape {s0.shape}")
    with torch.no_grad():
        q = q_net(torch.as_tensor(s0)).double().numpy()
    probs = _probs(policy, s0, q.shape[1], "policy_value")
    return float(np.mean(np.sum(probs * q, axis=1)))


def tabular_fqe(
    states: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    next_states: np.ndarray,
    terminated: np.ndarray,
    policy: np.ndarray,
    gamma: float,
    *,
    iterations: int = 200,
    targets_kernel: Callable = kernels.fqe_targets,
) -> np.ndarray:
    """FQE with a lookup table: each round sets Q(s, a) to the mean target of its rows.

    That mean is the exact least-squares fit of a table, so this is FQE without
    function-approximation error: on a log that covers every (s, a) of a
    deterministic MDP it converges to Q^pi. Pairs the log never shows stay 0.
    Shapes: states, actions, next_states (N,) int; rewards (N,); terminated (N,);
    policy (S, A) rows summing to 1 -> Q (S, A) float64.
    """
    pi = np.asarray(policy, dtype=np.float64)
    if pi.ndim != 2:
        raise ValueError(f"tabular_fqe: `policy` must be an (S, A) table, got shape {pi.shape}")
    if iterations < 1:
        raise ValueError(f"tabular_fqe: `iterations` must be at least 1, got {iterations}")
    n_states, n_actions = pi.shape
    s = np.asarray(states, dtype=np.intp)
    a = np.asarray(actions, dtype=np.intp)
    s_next = np.asarray(next_states, dtype=np.intp)
    for name, arr, top in (("states", s, n_states), ("actions", a, n_actions), ("next_states", s_next, n_states)):
        if arr.shape != s.shape or arr.ndim != 1:
            raise ValueError(f"tabular_fqe: `{name}` must be (N,) like `states`, got shape {arr.shape}")
        if arr.size and (arr.min() < 0 or arr.max() >= top):
            raise ValueError(f"tabular_fqe: `{name}` holds an index outside [0, {top})")
    counts = np.zeros((n_states, n_actions))
    np.add.at(counts, (s, a), 1.0)
    seen = counts > 0
    q = np.zeros((n_states, n_actions))
    for _ in range(iterations):
        y = compute_fqe_target(rewards, terminated, q[s_next], pi[s_next], gamma, targets_kernel=targets_kernel)
        sums = np.zeros_like(q)
        np.add.at(sums, (s, a), y)
        q = np.where(seen, sums / np.where(seen, counts, 1.0), 0.0)
    return q


def exact_policy_evaluation(
    transition_probs: np.ndarray,
    rewards: np.ndarray,
    terminal_probs: np.ndarray,
    policy: np.ndarray,
    gamma: float,
) -> np.ndarray:
    """Q^pi of a known tabular MDP by solving the Bellman linear system.

    Q = R + gamma * P_cont Pi Q, i.e. (I - gamma * M) q = r with
    M[(s,a),(s',a')] = P(s'|s,a) * (1 - T(s,a,s')) * pi(a'|s').
    Shapes: transition_probs P (S, A, S); rewards R (S, A) expected reward;
    terminal_probs T (S, A, S) in [0, 1], the chance the move to s' ends the task;
    policy (S, A) -> Q (S, A). Raises ValueError on shape mismatches.
    """
    p = np.asarray(transition_probs, dtype=np.float64)
    r = np.asarray(rewards, dtype=np.float64)
    term = np.asarray(terminal_probs, dtype=np.float64)
    pi = np.asarray(policy, dtype=np.float64)
    if p.ndim != 3 or p.shape[0] != p.shape[2]:
        raise ValueError(f"exact_policy_evaluation: `transition_probs` must be (S, A, S), got {p.shape}")
    n_states, n_actions, _ = p.shape
    if r.shape != (n_states, n_actions) or pi.shape != (n_states, n_actions) or term.shape != p.shape:
        raise ValueError("exact_policy_evaluation: `rewards`, `policy` must be (S, A) and `terminal_probs` (S, A, S)")
    continue_probs = p * (1.0 - term)  # (S, A, S')
    m = np.einsum("xyz,zw->xyzw", continue_probs, pi).reshape(n_states * n_actions, n_states * n_actions)
    q = np.linalg.solve(np.eye(n_states * n_actions) - gamma * m, r.reshape(-1))
    return q.reshape(n_states, n_actions)


def exact_action_values(model: dict, policy_probs: np.ndarray, gamma: float) -> np.ndarray:
    """Q^pi (S, A) of a tabular model (``KeyDoorGrid.tabular_model()``, no time limit) for the
    policy ``policy_probs`` (S, A) over ``model["observations"]``.

    The exact truth a learned Q is compared with; rows are indexed by ``env.state_index``.
    Callers build the model once and read its observations for the policy too.
    """
    return exact_policy_evaluation(
        model["transition_probs"], model["rewards"], model["terminal_probs"], np.asarray(policy_probs, dtype=np.float64), gamma
    )
