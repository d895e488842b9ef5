"""Decision Transformer: return-conditioned sequence modeling of fixed trajectories.

Each time step t of an episode contributes three tokens, in this order:
(return-to-go R_t, state s_t, action a_t). With a causal mask the output at the
state token s_t sees R_0, s_0, a_0, ..., R_t, s_t but not a_t, and is trained to
predict a_t (cross-entropy over discrete actions; no Bellman backup anywhere).

Training targets: R_t = sum_{k >= t} gamma^(k-t) r_k from
:func:`reference_impl.kernels.return_to_go` (``gamma = 1`` by default; the function
is pluggable so a student's kernel can drive training).

At evaluation the first condition is the requested return R_0 = target and after
each reward the request is lowered: R_{t+1} = (R_t - r_t) / gamma (``gamma = 1``:
R_t - r_t). A request is a condition the model was trained on, not a promise: above
the returns present in the data the achieved return saturates. Evaluation steps a
request's episodes together (episode i on its own copy of the env, reset with seed
``seed + i``; one batched forward per time step), which gives exactly the results of
running them one by one. On an env that declares itself ``deterministic`` (KeyDoorGrid
without slips) the greedy model plays the same episode from the same start, so only one
episode per distinct start is played and its result stands for every episode that
starts there: the same returns, outcomes and requests, without the repeated work.

Shapes used throughout: B windows, K = ``context_steps`` steps per window, S the
state dimension, A the number of actions. Windows are right-padded; with a causal
mask, padding after the real steps cannot change their outputs, and padded steps are
left out of the loss by ``mask``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from reference_impl.common import progress as progress_bar
from reference_impl.common import seed_everything, summarize_episodes
from reference_impl.kernels import return_to_go
from reference_impl.optimizers import adamw
from reference_impl.records import Episode
from reference_impl.torch_kernels import masked_token_nll_torch

__all__ = [
    "DTConfig",
    "DTWindows",
    "DecisionTransformer",
    "make_training_windows",
    "dt_action_loss",
    "next_return_to_go",
    "train_decision_transformer",
    "evaluate_decision_transformer",
    "dt_return_sweep",
    "REQUESTED_RETURNS",
]

#: Requests for the lab's sweep. KeyDoorGrid returns lie in about [-1.5, 0.83] (trap
#: after a long walk ... goal by the shortest route), so the grid covers the data's
#: range and goes past its top, where the achieved return can only saturate.
REQUESTED_RETURNS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5)


def _positive_int(value, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{where}: `{name}` must be a positive int, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class DTConfig:
    """Architecture and optimization of the Decision Transformer.

    ``dim_feedforward`` is set explicitly (4 x d_model): torch's default of 2048 makes
    this tiny model several times slower for no gain. Timesteps at or above
    ``max_timestep`` share the last timestep embedding. Returns-to-go are divided by
    ``return_scale`` before embedding.
    """

    state_dim: int
    action_dim: int
    context_steps: int = 16
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    dim_feedforward: int = 256
    dropout: float = 0.1
    max_timestep: int = 128
    return_scale: float = 1.0
    gamma: float = 1.0
    lr: float = 1e-3
    weight_decay: float = 1e-4
    grad_clip: float = 1.0

    def __post_init__(self):
        for name in ("state_dim", "action_dim", "context_steps", "d_model", "n_layers", "n_heads", "dim_feedforward", "max_timestep"):
            _positive_int(getattr(self, name), name, "DTConfig")
        if self.d_model % self.n_heads:
            raise ValueError(f"DTConfig: `d_model` ({self.d_model}) must be divisible by `n_heads` ({self.n_heads})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"DTConfig: `dropout` must lie in [0, 1), got {self.dropout}")
        if not (np.isfinite(self.return_scale) and self.return_scale > 0):
            raise ValueError(f"DTConfig: `return_scale` must be a positive finite number, got {self.return_scale}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"DTConfig: `gamma` must lie in (0, 1], got {self.gamma}")
        if not (self.lr > 0 and self.weight_decay >= 0 and self.grad_clip > 0):
            raise ValueError("DTConfig: `lr` and `grad_clip` must be positive and `weight_decay` non-negative")


# --------------------------------------------------------------------------- model
class DecisionTransformer(nn.Module):
    """Causal transformer over interleaved (return-to-go, state, action) tokens.

    ``forward(returns_to_go (B, K), states (B, K, S), actions (B, K) long,
    timesteps (B, K) long) -> action logits (B, K, A)``; logits[:, t] are read at
    the state token of step t, so they depend on tokens of steps <= t except a_t.
    """

    def __init__(self, config: DTConfig):
        super().__init__()
        self.config = config
        d = config.d_model
        self.embed_return = nn.Linear(1, d)
        self.embed_state = nn.Linear(config.state_dim, d)
        self.embed_action = nn.Embedding(config.action_dim, d)
        self.embed_time = nn.Embedding(config.max_timestep, d)
        self.embed_norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(
            d_model=d,
            nhead=config.n_heads,
            dim_feedforward=config.dim_feedforward,
            dropout=config.dropout,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, config.n_layers, norm=nn.LayerNorm(d), enable_nested_tensor=False)
        self.action_head = nn.Linear(d, config.action_dim)
        self._masks: dict[int, torch.Tensor] = {}

    def _causal_mask(self, length: int) -> torch.Tensor:
        # Boolean mask, True = may not attend: every token sees itself and the past only.
        if length not in self._masks:
            self._masks[length] = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        return self._masks[length]

    def forward(self, returns_to_go: torch.Tensor, states: torch.Tensor, actions: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor:
        B, K = actions.shape
        if returns_to_go.shape != (B, K) or timesteps.shape != (B, K) or states.shape != (B, K, self.config.state_dim):
            raise ValueError(
                "DecisionTransformer: expected returns_to_go (B, K), states (B, K, "
                f"{self.config.state_dim}), actions (B, K), timesteps (B, K); got {tuple(returns_to_go.shape)}, "
                f"{tuple(states.shape)}, {tuple(actions.shape)}, {tuple(timesteps.shape)}"
            )
        time = self.embed_time(timesteps.clamp(0, self.config.max_timestep - 1))
        r = self.embed_return((returns_to_go / self.config.return_scale).unsqueeze(-1)) + time
        s = self.embed_state(states) + time
        a = self.embed_action(actions) + time
        tokens = torch.stack((r, s, a), dim=2).reshape(B, 3 * K, -1)  # r0 s0 a0 r1 s1 a1 ...
        hidden = self.encoder(self.embed_norm(tokens), mask=self._causal_mask(3 * K))
        return self.action_head(hidden[:, 1::3])


# --------------------------------------------------------------------------- data
@dataclass
class DTWindows:
    """Training windows (numpy). returns_to_go (N, K) float32, states (N, K, S) float32,
    actions (N, K) int64, timesteps (N, K) int64, mask (N, K) bool (False = padding)."""

    returns_to_go: np.ndarray
    states: np.ndarray
    actions: np.ndarray
    timesteps: np.ndarray
    mask: np.ndarray

    def __len__(self) -> int:
        return self.actions.shape[0]

    def batch(self, index) -> tuple[torch.Tensor, ...]:
        return tuple(
            torch.from_numpy(np.ascontiguousarray(a[index]))
            for a in (self.returns_to_go, self.states, self.actions, self.timesteps, self.mask)
        )


def make_training_windows(
    episodes: Sequence[Episode],
    context_steps: int,
    *,
    gamma: float = 1.0,
    return_to_go_fn: Callable | None = None,
) -> DTWindows:
    """One window per (episode, start step t): steps t .. t + K - 1, right-padded.

    RTG targets come from ``return_to_go_fn(rewards, gamma)`` (default the reference
    kernel :func:`reference_impl.kernels.return_to_go`), computed once per episode.
    Raises ValueError on an empty episode list, an episode without transitions,
    inconsistent state sizes, or an RTG function whose output is not (T,) finite.
    """
    K = _positive_int(context_steps, "context_steps", "make_training_windows")
    rtg_fn = return_to_go if return_to_go_fn is None else return_to_go_fn
    if not episodes:
        raise ValueError("make_training_windows: `episodes` is empty")
    total = 0
    state_dim = None
    for i, ep in enumerate(episodes):
        if not ep.transitions:
            raise ValueError(f"make_training_windows: `episodes[{i}]` has no transitions")
        total += len(ep.transitions)
        dims = {np.asarray(t.obs).shape for t in ep.transitions}
        if len(dims) != 1 or len(next(iter(dims))) != 1 or (state_dim is not None and dims != {(state_dim,)}):
            raise ValueError(f"make_training_windows: `episodes[{i}]` has observations of shapes {sorted(dims)}; expected one (S,) shape")
        state_dim = next(iter(dims))[0]
    out = DTWindows(
        returns_to_go=np.zeros((total, K), np.float32),
        states=np.zeros((total, K, state_dim), np.float32),
        actions=np.zeros((total, K), np.int64),
        timesteps=np.zeros((total, K), np.int64),
        mask=np.zeros((total, K), bool),
    )
    row = 0
    for i, ep in enumerate(episodes):
        T = len(ep.transitions)
        rewards = np.array([t.reward for t in ep.transitions], dtype=np.float64)
        rtg = np.asarray(rtg_fn(rewards, gamma), dtype=np.float64)
        if rtg.shape != (T,) or not np.isfinite(rtg).all():
            raise ValueError(
                f"make_training_windows: `return_to_go_fn` returned shape {rtg.shape} (or non-finite values) for episode {i} of length {T}"
            )
        states = np.stack([np.asarray(t.obs, dtype=np.float32) for t in ep.transitions])
        actions = np.array([t.action for t in ep.transitions], dtype=np.int64)
        for start in range(T):
            n = min(K, T - start)
            out.returns_to_go[row, :n] = rtg[start : start + n]
            out.states[row, :n] = states[start : start + n]
            out.actions[row, :n] = actions[start : start + n]
            out.timesteps[row, :n] = np.arange(start, start + n)
            out.mask[row, :n] = True
            row += 1
    return out


# --------------------------------------------------------------------------- loss
def dt_action_loss(
    model: DecisionTransformer, returns_to_go, states, actions, timesteps, mask, masked_token_nll=masked_token_nll_torch
) -> torch.Tensor:
    """Mean cross-entropy of the logged actions over real (unpadded) steps (0-d).

    L = - sum(mask * log pi(a_t | R_<=t, s_<=t, a_<t)) / sum(mask)
    """
    logits = model(returns_to_go, states, actions, timesteps)
    logp = F.log_softmax(logits, dim=-1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    return masked_token_nll(logp, mask)


def next_return_to_go(current: float, reward: float, gamma: float = 1.0) -> float:
    """The evaluation-time condition update R_{t+1} = (R_t - r_t) / gamma."""
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"next_return_to_go: `gamma` must lie in (0, 1], got {gamma}")
    return (float(current) - float(reward)) / gamma


# --------------------------------------------------------------------------- training
def train_decision_transformer(
    episodes: Sequence[Episode],
    seed: int,
    state_dim: int,
    action_dim: int,
    context_steps: int,
    epochs: int,
    batch_size: int,
    *,
    return_to_go_fn: Callable | None = None,
    masked_token_nll: Callable = masked_token_nll_torch,
    progress: bool | None = None,
    config: DTConfig | None = None,
) -> tuple[DecisionTransformer, list[float]]:
    """Train a Decision Transformer on fixed episodes; returns (model in eval mode,
    mean loss of each epoch).

    ``config`` overrides the architecture (its state_dim, action_dim and
    context_steps must agree with the arguments). ``masked_token_nll`` is the torch loss
    of the action tokens (default the reference twin; a student's port in the lab).
    Deterministic for a given seed.
    Raises ValueError on non-positive sizes, actions outside [0, action_dim) or
    observations that are not (state_dim,).
    """
    where = "train_decision_transformer"
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{where}: `seed` must be an int, got {seed!r}")
    for name, value in (
        ("state_dim", state_dim),
        ("action_dim", action_dim),
        ("context_steps", context_steps),
        ("epochs", epochs),
        ("batch_size", batch_size),
    ):
        _positive_int(value, name, where)
    cfg = config or DTConfig(state_dim=int(state_dim), action_dim=int(action_dim), context_steps=int(context_steps))
    if (cfg.state_dim, cfg.action_dim, cfg.context_steps) != (state_dim, action_dim, context_steps):
        raise ValueError(
            f"{where}: `config` has (state_dim, action_dim, context_steps) = "
            f"{(cfg.state_dim, cfg.action_dim, cfg.context_steps)}, the arguments {(state_dim, action_dim, context_steps)}"
        )
    windows = make_training_windows(episodes, context_steps, gamma=cfg.gamma, return_to_go_fn=return_to_go_fn)
    if windows.states.shape[-1] != state_dim:
        raise ValueError(f"{where}: observations have size {windows.states.shape[-1]}, `state_dim` is {state_dim}")
    if windows.actions.min() < 0 or windows.actions.max() >= action_dim:
        raise ValueError(f"{where}: logged actions lie in [{windows.actions.min()}, {windows.actions.max()}], outside [0, {action_dim})")
    rng = seed_everything(int(seed))
    model = DecisionTransformer(cfg)
    optimizer = adamw(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    losses = []
    model.train()
    for _ in progress_bar(range(int(epochs)), desc="Decision Transformer", total=int(epochs), enabled=progress):
        order = rng.permutation(len(windows))
        epoch_losses = []
        for start in range(0, len(order), int(batch_size)):
            loss = dt_action_loss(model, *windows.batch(order[start : start + int(batch_size)]), masked_token_nll=masked_token_nll)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            optimizer.step()
            epoch_losses.append(loss.item())
        losses.append(float(np.mean(epoch_losses)))
    return model.eval(), losses


# --------------------------------------------------------------------------- evaluation
@torch.no_grad()
def _run_batch(
    envs: Sequence, model: DecisionTransformer, target_return: float, seeds: Sequence[int], context_steps: int
) -> tuple[list[float], list[str | None], list[list[float]]]:
    """Greedy episodes on ``envs`` stepped together, env j reset with ``seeds[j]``.

    Every episode of the batch is at the same step t, so one forward over the rows still
    running gives all their actions (the same K-step window the one-episode rollout
    would feed, row by row). Returns each episode's return, outcome and requests R_0, R_1, ...
    """
    gamma = model.config.gamma
    n = len(envs)
    first = [np.asarray(env.reset(seed=int(s))[0], np.float32) for env, s in zip(envs, seeds)]
    # History by step: rtgs[t] (n,), states[t] (n, S), actions[t] (n,); rows of finished episodes go stale.
    rtgs, states, actions = [np.full(n, float(target_return))], [np.stack(first)], []
    totals, outcomes = [0.0] * n, [None] * n
    conditions: list[list[float]] = [[float(target_return)] for _ in range(n)]
    alive = np.arange(n)
    t = 0
    while alive.size:
        lo = max(0, t + 1 - context_steps)
        # The current step's action is unknown: a placeholder the causal mask hides.
        acts = np.stack(actions[lo:] + [np.zeros(n, np.int64)], axis=1)[alive]
        logits = model(
            torch.from_numpy(np.stack(rtgs[lo:], axis=1)[alive].astype(np.float32)),
            torch.from_numpy(np.stack(states[lo:], axis=1)[alive]),
            torch.from_numpy(acts),
            torch.arange(lo, t + 1).expand(alive.size, -1),
        )
        chosen = logits[:, -1].argmax(dim=-1).numpy()
        step_actions = np.zeros(n, np.int64)
        step_rtgs = rtgs[-1].copy()
        step_states = states[-1].copy()
        still = []
        for row, j in enumerate(alive):
            action = int(chosen[row])
            step_actions[j] = action
            obs, reward, terminated, truncated, info = envs[j].step(action)
            totals[j] += float(reward)
            if terminated or truncated:
                outcomes[j] = info.get("outcome") or ("timeout" if truncated else None)
                continue
            step_rtgs[j] = next_return_to_go(step_rtgs[j], reward, gamma)
            conditions[j].append(float(step_rtgs[j]))
            step_states[j] = np.asarray(obs, np.float32)
            still.append(j)
        actions.append(step_actions)
        rtgs.append(step_rtgs)
        states.append(step_states)
        alive = np.asarray(still, dtype=np.int64)
        t += 1
    return totals, outcomes, conditions


def _episodes_to_play(env, seeds: list[int]) -> tuple[list[int], list[int]]:
    """(seeds to play, for each of ``seeds`` the index of the played episode that stands for it).

    Every seed is played unless ``env.deterministic`` is true; then an episode is decided
    by its start alone (``info["state"]["position"]`` after the reset), so the first seed
    of each start is played for all the seeds that start there.
    """
    if not getattr(env, "deterministic", False):
        return list(seeds), list(range(len(seeds)))
    probe = copy.deepcopy(env)
    played: list[int] = []
    index_of_start: dict = {}
    stands_for = []
    for s in seeds:
        start = probe.reset(seed=s)[1]["state"]["position"]
        if start not in index_of_start:
            index_of_start[start] = len(played)
            played.append(s)
        stands_for.append(index_of_start[start])
    return played, stands_for


def evaluate_decision_transformer(
    env,
    model: DecisionTransformer,
    target_return: float,
    episodes: int,
    seed: int,
    context_steps: int,
    *,
    conditions: list | None = None,
    batch_size: int | None = None,
) -> dict:
    """Greedy rollouts conditioned on ``target_return``, run as batches of parallel episodes.

    Episode i is reset with seed ``seed + i`` on its own deep copy of ``env`` (``env``
    itself is not stepped), so episode i does the same whatever the batch it runs in:
    the result is that of running the episodes one by one. Up to ``batch_size``
    episodes (default: all of them) are stepped together, one batched forward per time
    step. When ``env.deterministic`` is true only the first episode of each start cell
    is played, and the others that start there get its result (see the module docstring).
    Returns the metrics dict of :func:`reference_impl.common.summarize_episodes`
    plus ``"target_return"``, ``"episode_returns"`` (list, episode order),
    ``"return_sd"`` (sample sd, ddof = 1) and ``"return_se"`` = return_sd / sqrt(n)
    (both NaN for a single episode). When a list is passed as ``conditions``, the
    sequence of requests R_0, R_1, ... of each episode is appended to it.
    Raises ValueError on a non-finite target or non-positive sizes.
    """
    where = "evaluate_decision_transformer"
    n_episodes = _positive_int(episodes, "episodes", where)
    K = _positive_int(context_steps, "context_steps", where)
    chunk = n_episodes if batch_size is None else _positive_int(batch_size, "batch_size", where)
    if not np.isfinite(target_return):
        raise ValueError(f"{where}: `target_return` must be finite, got {target_return!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{where}: `seed` must be an int, got {seed!r}")
    model.eval()
    seeds = [int(seed) + i for i in range(n_episodes)]
    played, stands_for = _episodes_to_play(env, seeds)
    totals, ends, requests = [], [], []
    for start in range(0, len(played), chunk):
        batch = played[start : start + chunk]
        t, e, r = _run_batch([copy.deepcopy(env) for _ in batch], model, float(target_return), batch, K)
        totals += t
        ends += e
        requests += r
    returns = [totals[j] for j in stands_for]
    outcomes = [ends[j] for j in stands_for]
    if conditions is not None:
        conditions.extend(list(requests[j]) for j in stands_for)
    metrics = summarize_episodes(returns, outcomes)
    sd = float(np.std(returns, ddof=1)) if n_episodes > 1 else float("nan")
    metrics.update(
        target_return=float(target_return),
        episode_returns=[float(r) for r in returns],
        return_sd=sd,
        return_se=sd / float(np.sqrt(n_episodes)),
    )
    return metrics


def dt_return_sweep(
    model: DecisionTransformer,
    env_factory: Callable[[], object],
    target_returns: Sequence[float],
    *,
    episodes: int,
    seed: int,
    context_steps: int,
    progress: bool | None = None,
    batch_size: int | None = None,
) -> dict:
    """Achieved return against requested return (the lab's DT figure).

    Every request is evaluated on a fresh ``env_factory()`` with the same episode
    seeds ``seed + i`` (i < ``episodes``), so the requests are compared on the same
    start cells; each request's episodes run in parallel batches (see
    :func:`evaluate_decision_transformer`). Returns ``{"target_return": (N,),
    "mean_return": (N,), "success_rate": (N,), "return_se": (N,)}`` float64 arrays
    (return_se: the standard error of each mean, sample sd / sqrt(episodes)) plus
    ``"metrics"``: the list of per-request metrics dicts.
    """
    targets = [float(x) for x in target_returns]
    if not targets:
        raise ValueError("dt_return_sweep: `target_returns` is empty")
    metrics = [
        evaluate_decision_transformer(env_factory(), model, target, episodes, seed, context_steps, batch_size=batch_size)
        for target in progress_bar(targets, desc="DT return sweep", total=len(targets), enabled=progress)
    ]
    return {
        "target_return": np.array(targets, dtype=np.float64),
        "mean_return": np.array([m["mean_return"] for m in metrics], dtype=np.float64),
        "success_rate": np.array([m["success_rate"] for m in metrics], dtype=np.float64),
        "return_se": np.array([m["return_se"] for m in metrics], dtype=np.float64),
        "metrics": metrics,
    }
