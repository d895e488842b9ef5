"""Online DQN and Double DQN on KeyDoorGrid.

Ingredients (Mnih et al., 2015; van Hasselt et al., 2016): a replay buffer, a target
network copied from the online network every ``target_update_interval`` updates,
epsilon-greedy collection, and the Huber loss between Q(s, a) and the target

    DQN:         y = r + gamma * (1 - terminated) * max_a Qbar(s', a)
    Double DQN:  y = r + gamma * (1 - terminated) * Qbar(s', argmax_a Q(s', a))

The target is computed by a *kernel* (numpy, signature of
:func:`reference_impl.kernels.dqn_targets` / :func:`~reference_impl.kernels.double_dqn_targets`)
passed as ``targets_fn``, so a student's own kernel can drive training. The buffer
stores ``terminated`` and ``truncated`` separately; only ``terminated`` reaches the
kernel, so time-limit cuts bootstrap.

Warm start (a course engineering choice, not part of vanilla DQN): the reward is
sparse (the goal needs the key and the door first, and random play almost never gets
there), so before the first training episode the buffer is seeded with
``warm_start_episodes`` trajectories of the epsilon-noisy BFS expert, and
``warm_start_updates`` gradient updates are made on them before the first episode.
They are data only: the learner is never told which actions the expert took, it has to propagate
the goal reward back through its own Bellman targets.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from reference_impl import kernels
from reference_impl.common import progress as progress_bar
from reference_impl.common import seed_everything
from reference_impl.exact_eval import exact_outcomes
from reference_impl.expert import NoisyExpertPolicy
from reference_impl.fqe import exact_action_values
from reference_impl.imitation import ArgmaxPolicy, make_mlp
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.optimizers import adam
from reference_impl.records import Episode, Transition
from reference_impl.rollout import rollout

__all__ = [
    "DQNConfig",
    "QNetwork",
    "ReplayBuffer",
    "compute_loss",
    "compute_target",
    "epsilon_at",
    "greedy_overestimation",
    "train_online_dqn",
]


@dataclass(frozen=True)
class DQNConfig:
    """Hyper-parameters of :func:`train_online_dqn` (defaults are the lab's)."""

    # Defaults chosen on seeds 0-2 (the 10-seed check in the report uses seeds 5-14).
    # KeyDoorGrid's action gaps are small: with a 0.01 step cost a detour of one step
    # costs about 0.01 + (1 - gamma) * V. Three choices keep the greedy policy from
    # looping on near-ties: gamma = 0.95 (the largest gap (1 - gamma) * gamma**d at the
    # ~20-step distances here, while every start still sees the goal), two updates per
    # step, and a learning rate annealed to a tenth so the final network is not caught
    # mid-jitter (constant-rate Adam reshuffles near-tied actions at every update).
    gamma: float = 0.95
    learning_rate: float = 1e-3
    final_learning_rate_fraction: float = 0.1  # learning rate falls linearly to this fraction by the last episode
    batch_size: int = 64
    hidden: int = 128
    buffer_capacity: int = 20_000
    target_update_interval: int = 50  # gradient updates between hard target copies
    updates_per_step: int = 2
    learning_starts: int = 256  # buffer size before the first online update
    epsilon_start: float = 0.3
    epsilon_end: float = 0.02
    epsilon_decay_fraction: float = 0.5  # fraction of the episodes over which epsilon falls linearly
    warm_start_episodes: int = 40  # noisy-expert episodes put in the buffer before episode 0
    warm_start_epsilon: float = 0.2
    warm_start_updates: int = 1000  # gradient updates on the warm-start buffer before episode 0
    max_grad_norm: float = 10.0
    overestimation_every: int = 10  # episodes between measurements of the greedy action's overestimation

    def __post_init__(self) -> None:
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"DQNConfig: `gamma` must lie in [0, 1], got {self.gamma}")
        for name in ("batch_size", "hidden", "buffer_capacity", "target_update_interval", "updates_per_step", "overestimation_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"DQNConfig: `{name}` must be positive, got {getattr(self, name)}")
        if self.learning_starts < self.batch_size:
            raise ValueError("DQNConfig: `learning_starts` must be at least `batch_size`")
        for name in ("epsilon_start", "epsilon_end", "warm_start_epsilon"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"DQNConfig: `{name}` must lie in [0, 1], got {getattr(self, name)}")
        if not 0.0 < self.final_learning_rate_fraction <= 1.0:
            raise ValueError(f"DQNConfig: `final_learning_rate_fraction` must lie in (0, 1], got {self.final_learning_rate_fraction}")
        if not 0.0 < self.epsilon_decay_fraction <= 1.0:
            raise ValueError(f"DQNConfig: `epsilon_decay_fraction` must lie in (0, 1], got {self.epsilon_decay_fraction}")
        for name in ("warm_start_episodes", "warm_start_updates"):
            if getattr(self, name) < 0:
                raise ValueError(f"DQNConfig: `{name}` must be >= 0, got {getattr(self, name)}")


class QNetwork(nn.Module):
    """Q(s, .) for all actions at once: (B, observation_dim) -> (B, action_dim)."""

    def __init__(self, observation_dim: int, action_dim: int, hidden: int = 128) -> None:
        super().__init__()
        self.body = make_mlp(observation_dim, hidden, action_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.body(obs)


class ReplayBuffer:
    """Fixed-capacity ring buffer of transitions, numpy-backed.

    Keeps ``terminated`` and ``truncated`` as two separate bool columns. ``sample``
    returns a dict of arrays: obs (B, d) float32, actions (B,) int64, rewards (B,)
    float64, next_obs (B, d) float32, terminated (B,) bool, truncated (B,) bool.
    """

    def __init__(self, capacity: int, observation_dim: int) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError(f"ReplayBuffer: `capacity` must be a positive integer, got {capacity!r}")
        self.capacity = int(capacity)
        self.obs = np.zeros((capacity, observation_dim), dtype=np.float32)
        self.next_obs = np.zeros((capacity, observation_dim), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float64)
        self.terminated = np.zeros(capacity, dtype=bool)
        self.truncated = np.zeros(capacity, dtype=bool)
        self._next = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, obs, action: int, reward: float, next_obs, terminated: bool, truncated: bool) -> None:
        """Store one transition, overwriting the oldest when full.

        Raises ValueError when both flags are set (a goal/trap step that also hits the
        time limit is a termination; the environment reports it as such).
        """
        if terminated and truncated:
            raise ValueError("ReplayBuffer.add: `terminated` and `truncated` are both set; a true end wins, pass truncated=False")
        i = self._next
        self.obs[i] = obs
        self.actions[i] = action
        self.rewards[i] = reward
        self.next_obs[i] = next_obs
        self.terminated[i] = terminated
        self.truncated[i] = truncated
        self._next = (i + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def add_episode(self, episode) -> None:
        """Store every transition of a :class:`~reference_impl.records.Episode`."""
        for t in episode.transitions:
            self.add(t.obs, t.action, t.reward, t.next_obs, t.terminated, t.truncated)

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict:
        """Uniform sample with replacement of ``batch_size`` stored transitions."""
        if self._size == 0:
            raise ValueError("ReplayBuffer.sample: the buffer is empty")
        idx = rng.integers(self._size, size=batch_size)
        return {
            "obs": self.obs[idx],
            "actions": self.actions[idx],
            "rewards": self.rewards[idx],
            "next_obs": self.next_obs[idx],
            "terminated": self.terminated[idx],
            "truncated": self.truncated[idx],
        }


def epsilon_at(episode: int, episodes: int, config: DQNConfig) -> float:
    """Linear schedule: epsilon_start at episode 0 down to epsilon_end after
    ``epsilon_decay_fraction * episodes`` episodes, constant afterwards."""
    span = max(1.0, config.epsilon_decay_fraction * episodes)
    frac = min(1.0, episode / span)
    return config.epsilon_start + frac * (config.epsilon_end - config.epsilon_start)


def compute_target(batch: dict, online: nn.Module, target: nn.Module, *, gamma: float, double: bool, targets_fn) -> np.ndarray:
    """Bellman targets of a sampled batch via the kernel ``targets_fn``.

    The networks are evaluated on ``next_obs`` without gradient and converted to
    float64 numpy, then the kernel is called exactly as the reference kernels are:
    ``targets_fn(rewards, terminated, next_q_target, gamma=gamma)`` for DQN,
    ``targets_fn(rewards, terminated, next_q_online, next_q_target, gamma=gamma)`` for
    Double DQN. ``truncated`` is deliberately not passed: a time-limit cut bootstraps.
    Returns (B,) float64.
    """
    next_obs = torch.from_numpy(batch["next_obs"])
    with torch.no_grad():
        next_q_target = target(next_obs).double().numpy()
        if double:
            next_q_online = online(next_obs).double().numpy()
            y = targets_fn(batch["rewards"], batch["terminated"], next_q_online, next_q_target, gamma=gamma)
        else:
            y = targets_fn(batch["rewards"], batch["terminated"], next_q_target, gamma=gamma)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != batch["rewards"].shape:
        raise ValueError(f"compute_target: `targets_fn` returned shape {y.shape}, expected {batch['rewards'].shape}")
    return y


def compute_loss(online: nn.Module, batch: dict, targets: np.ndarray) -> torch.Tensor:
    """Huber (smooth L1, delta 1) loss between Q(s_i, a_i) and the fixed targets y_i."""
    q = online(torch.from_numpy(batch["obs"]))
    q_taken = q.gather(1, torch.from_numpy(batch["actions"]).unsqueeze(1)).squeeze(1)
    return nn.functional.smooth_l1_loss(q_taken, torch.as_tensor(targets, dtype=torch.float32))


def greedy_overestimation(q_net: nn.Module, env: KeyDoorGrid, observations: np.ndarray, gamma: float) -> float:
    """Mean over the distinct states of ``observations`` of Q(s, a*) - Q^pi(s, a*), a* = argmax_a Q(s, a).

    Q^pi is the exact action value of the network's own greedy policy pi (the tabular
    model, no time limit: the fixed point that bootstrapping across time-limit cuts aims
    at). Positive: the network believes its chosen actions are worth more than they are,
    the bias of a maximum over noisy estimates that Double DQN is meant to reduce.
    """
    model = env.tabular_model()
    states = np.unique([env.state_index(o) for o in np.unique(np.asarray(observations), axis=0)])
    with torch.no_grad():
        greedy = q_net(torch.as_tensor(model["observations"], dtype=torch.float32)).argmax(dim=1).numpy()
        q = q_net(torch.as_tensor(model["observations"][states], dtype=torch.float32)).double().numpy()
    q_true = exact_action_values(model, np.eye(env.action_dim)[greedy], gamma)[states]
    chosen = q.argmax(axis=1)
    rows = np.arange(len(states))
    return float(np.mean(q[rows, chosen] - q_true[rows, chosen]))


class _EpsilonGreedy:
    """Random action with probability ``epsilon`` (from ``rng``), else greedy in Q."""

    def __init__(self, q_net: nn.Module, action_dim: int, rng: np.random.Generator) -> None:
        self.greedy = ArgmaxPolicy(q_net)
        self.action_dim = action_dim
        self.rng = rng
        self.epsilon = 1.0

    def __call__(self, obs, info=None) -> int:
        if self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.action_dim))
        return self.greedy(obs, info)


def _targets_fn_or_default(targets_fn, double: bool):
    if targets_fn is None:
        return kernels.double_dqn_targets if double else kernels.dqn_targets
    if not callable(targets_fn):
        raise ValueError(f"train_online_dqn: `targets_fn` must be callable, got {targets_fn!r}")
    return targets_fn


def _anneal_learning_rate(optimizer: torch.optim.Optimizer, cfg: DQNConfig, progress_fraction: float) -> None:
    """lr = lr0 * (1 - (1 - final_fraction) * progress): linear from lr0 to lr0 * final_fraction."""
    for group in optimizer.param_groups:
        group["lr"] = cfg.learning_rate * (1.0 - (1.0 - cfg.final_learning_rate_fraction) * progress_fraction)


def _play_and_learn(env: KeyDoorGrid, behavior, buffer: ReplayBuffer, update, cfg: DQNConfig) -> Episode:
    """One episode: every step enters the buffer, then ``updates_per_step`` updates run once
    the buffer holds ``learning_starts`` transitions."""
    obs, info = env.reset()
    total = 0.0
    record = Episode(start=tuple(info["state"]["position"]))
    while True:
        action = behavior(obs, info)
        next_obs, reward, terminated, truncated, info = env.step(action)
        buffer.add(obs, action, reward, next_obs, terminated, truncated)
        record.transitions.append(Transition(obs, int(action), float(reward), next_obs, bool(terminated), bool(truncated)))
        total += reward
        obs = next_obs
        if len(buffer) >= cfg.learning_starts:
            for _ in range(cfg.updates_per_step):
                update()
        if terminated or truncated:
            break
    record.return_, record.length, record.outcome = float(total), len(record.transitions), info["outcome"]
    return record


def train_online_dqn(
    seed: int,
    episodes: int,
    double: bool,
    *,
    targets_fn=None,
    config: DQNConfig | None = None,
    progress: bool | None = None,
) -> dict:
    """Train DQN (``double=False``) or Double DQN (``double=True``) online.

    ``targets_fn`` defaults to :func:`reference_impl.kernels.dqn_targets` or
    :func:`~reference_impl.kernels.double_dqn_targets`; see :func:`compute_target` for
    how it is called. Collection is epsilon-greedy (:func:`epsilon_at`), with
    ``updates_per_step`` gradient updates per environment step once the buffer holds
    ``learning_starts`` transitions. The final greedy policy is scored exactly from the
    environment's model (:func:`reference_impl.exact_eval.exact_outcomes`; no episode sampled).

    Every ``overestimation_every`` episodes and after the last one,
    :func:`greedy_overestimation` is measured over the states the buffer holds.

    Returns ``{"evaluation": metrics, "episode_success": [0/1 per episode],
    "episode_return": [...], "episode_outcome": [...], "losses": [per update],
    "overestimation": [(episodes done, learned minus true Q of the greedy action)],
    "updates": int, "env_steps": int, "warm_start_transitions": int, "config": dict,
    "q_network": nn.Module, "played_episodes": [Episode]}``; ``played_episodes`` are the
    warm-start and training episodes in the order they entered the replay buffer (a learning
    agent's log, from exploratory to good: what D4RL's "medium-replay" data stand for).
    """
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"train_online_dqn: `episodes` must be a positive integer, got {episodes!r}")
    cfg = config or DQNConfig()
    targets_fn = _targets_fn_or_default(targets_fn, double)

    rng = seed_everything(seed)
    env = KeyDoorGrid(seed=seed)
    online = QNetwork(env.observation_dim, env.action_dim, cfg.hidden)
    target = copy.deepcopy(online)
    target.requires_grad_(False)
    optimizer = adam(online.parameters(), lr=cfg.learning_rate)
    buffer = ReplayBuffer(cfg.buffer_capacity, env.observation_dim)

    warm = NoisyExpertPolicy(env, cfg.warm_start_epsilon, rng=rng)
    played: list[Episode] = []  # every episode the agent's buffer saw, in order: its whole replay history
    for i in range(cfg.warm_start_episodes):
        played.append(rollout(env, warm, seed=seed * 1000 + 700_000 + i))
        buffer.add_episode(played[-1])
    warm_transitions = len(buffer)

    losses: list[float] = []

    def update() -> None:
        batch = buffer.sample(cfg.batch_size, rng)
        y = compute_target(batch, online, target, gamma=cfg.gamma, double=double, targets_fn=targets_fn)
        loss = compute_loss(online, batch, y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(online.parameters(), cfg.max_grad_norm)
        optimizer.step()
        losses.append(float(loss.detach()))
        if len(losses) % cfg.target_update_interval == 0:
            target.load_state_dict(online.state_dict())

    if warm_transitions >= cfg.batch_size:
        for _ in range(cfg.warm_start_updates):
            update()

    behavior = _EpsilonGreedy(online, env.action_dim, rng)
    successes, returns, outcomes = [], [], []
    overestimation: list[tuple[int, float]] = []
    env_steps = 0
    label = "Double DQN" if double else "DQN"
    for episode in progress_bar(range(episodes), desc=label, total=episodes, enabled=progress):
        behavior.epsilon = epsilon_at(episode, episodes, cfg)
        _anneal_learning_rate(optimizer, cfg, episode / max(1, episodes - 1))
        record = _play_and_learn(env, behavior, buffer, update, cfg)
        env_steps += record.length
        played.append(record)
        successes.append(int(record.outcome == "goal"))
        returns.append(record.return_)
        outcomes.append(record.outcome)
        if (episode + 1) % cfg.overestimation_every == 0 or episode + 1 == episodes:
            overestimation.append((episode + 1, greedy_overestimation(online, env, buffer.obs[: len(buffer)], cfg.gamma)))

    online.eval()
    evaluation = exact_outcomes(KeyDoorGrid(seed=seed + 1), ArgmaxPolicy(online))
    return {
        "evaluation": evaluation,
        "episode_success": successes,
        "episode_return": returns,
        "episode_outcome": outcomes,
        "losses": losses,
        "overestimation": overestimation,
        "updates": len(losses),
        "env_steps": env_steps,
        "warm_start_transitions": warm_transitions,
        "played_episodes": played,
        "double": bool(double),
        "config": asdict(cfg),
        "q_network": online,
    }
