"""A token-level offline-RL pipeline on a tiny synthetic language task.

The task, its rewards, the annotator who writes the logged responses and the held-out
prompts are described in :mod:`reference_impl.language_task` (numpy only; its names are
re-exported here). This module holds the models and their training.

Methods
-------
* ``behavior_cloning``: token NLL with :func:`masked_token_nll_torch`, greedy decoding.
* ``ilql_like``: token-level Q(s, a) and V(s) on a shared GRU trunk, trained with
  Q <- r + gamma (1 - terminated) V(s'), an expectile V loss against a Polyak
  target copy of Q, and a discrete CQL term; decoding takes the argmax of
  log pi_beta(a | s) + beta (Q(s, a) - V(s)) with pi_beta the BC policy.
* ``advantage_weighted_bc``: token NLL weighted by capped exp(beta_awr (Q - V)).
* ``return_weighted_bc``: the ablation without any learned value: token NLL weighted
  by capped exp(beta_awr (G_t - b(prompt))), G_t the Monte Carlo return-to-go of the
  logged response and b(prompt) the mean logged return of its prompt (reward-weighted
  regression, Peters & Schaal 2007, with a per-prompt baseline). It differs from
  ``advantage_weighted_bc`` only in where the weights come from, so
  AWBC - RWBC is what the critic adds to weighting, RWBC - BC what rewards alone give.

Everything is small (a 64-unit GRU over at most 8 tokens) and runs in seconds on
one CPU core. This is a reduced, ILQL-like illustration, not a reproduction of
ILQL on a language model.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from reference_impl.common import progress as progress_bar
from reference_impl.common import seed_everything, with_kernels
from reference_impl.language_task import (
    EOS,
    LANGUAGE_METHODS,
    MAX_RESPONSE_TOKENS,
    N_ACTIONS,
    PAD,
    PROMPTS,
    VOCAB,
    BehaviorMix,
    TokenEpisode,
    checked_prompt_index,
    collect_language_dataset,
    encode,
    positive_int,
    response_reward,
    split_prompts,
    summarize_language_dataset,
    token_text,
)
from reference_impl.optimizers import adam, polyak_update
from reference_impl.torch_kernels import (
    cql_discrete_penalty_torch,
    expectile_loss_torch,
    iql_advantage_weights_torch,
    masked_token_nll_torch,
)

__all__ = [
    "DEFAULT_KERNELS",
    "TokenBCConfig",
    "TokenILQLConfig",
    "TokenBatch",
    "make_token_batch",
    "TokenPolicy",
    "TokenQV",
    "bc_loss",
    "ilql_losses",
    "awr_loss",
    "returns_to_go",
    "prompt_baselines",
    "return_weights",
    "rwr_loss",
    "train_token_bc",
    "train_token_ilql",
    "train_token_awr",
    "train_token_rwr",
    "greedy_decode",
    "ilql_scores",
    "language_offline_experiment",
]


# --------------------------------------------------------------------------- batches
@dataclass
class TokenBatch:
    """Padded token-level view of a list of episodes (B episodes, T response steps).

    tokens (B, L) long: prompt + response, right-padded with ``PAD``;
    state_index (B, T) long: position in ``tokens`` whose prefix is state s_t
    (the last prompt token for t = 0); actions (B, T) long (0 at padding);
    rewards (B, T) float: the episode reward on its last step, 0 elsewhere;
    terminated (B, T) bool: True on an ``<eos>`` step; mask (B, T) bool: real steps.
    """

    tokens: torch.Tensor
    state_index: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    mask: torch.Tensor


def make_token_batch(episodes: Sequence[TokenEpisode]) -> TokenBatch:
    """Build a :class:`TokenBatch` from episodes (see its docstring for shapes)."""
    if not episodes:
        raise ValueError("make_token_batch: `episodes` is empty")
    prompts = [encode(PROMPTS[checked_prompt_index(ep.prompt_index)]) for ep in episodes]
    lengths = [len(ep.response) for ep in episodes]
    for i, ep in enumerate(episodes):
        if not ep.response:
            raise ValueError(f"make_token_batch: `episodes[{i}]` has an empty response")
        if EOS in ep.response[:-1]:
            raise ValueError(f"make_token_batch: `episodes[{i}]` continues after <eos>: {token_text(ep.response)!r}")
        if not all(0 <= int(t) < N_ACTIONS for t in ep.response):
            raise ValueError(f"make_token_batch: `episodes[{i}]` holds non-response tokens: {list(ep.response)}")
    n, steps = len(episodes), max(lengths)
    width = max(len(p) + len(ep.response) for p, ep in zip(prompts, episodes))
    tokens = np.full((n, width), PAD, dtype=np.int64)
    state_index = np.zeros((n, steps), dtype=np.int64)
    actions = np.zeros((n, steps), dtype=np.int64)
    rewards = np.zeros((n, steps), dtype=np.float32)
    terminated = np.zeros((n, steps), dtype=bool)
    mask = np.zeros((n, steps), dtype=bool)
    for i, (prompt, ep) in enumerate(zip(prompts, episodes)):
        seq = [*prompt, *ep.response]
        tokens[i, : len(seq)] = seq
        T = len(ep.response)
        state_index[i] = len(prompt) - 1 + np.minimum(np.arange(steps), T - 1)
        actions[i, :T] = ep.response
        rewards[i, T - 1] = ep.reward
        terminated[i, :T] = np.asarray(ep.response) == EOS
        mask[i, :T] = True
    return TokenBatch(*(torch.from_numpy(a) for a in (tokens, state_index, actions, rewards, terminated, mask)))


# --------------------------------------------------------------------------- models
class _PrefixEncoder(nn.Module):
    """Embedding + GRU; the hidden state after reading a prefix represents that state."""

    def __init__(self, embed_dim: int, hidden_dim: int):
        super().__init__()
        self.embed = nn.Embedding(len(VOCAB), embed_dim)
        self.gru = nn.GRU(embed_dim, hidden_dim, batch_first=True)

    def forward(self, tokens: torch.Tensor, state_index: torch.Tensor) -> torch.Tensor:
        """tokens (B, L), state_index (B, T) -> features (B, T, H)."""
        hidden, _ = self.gru(self.embed(tokens))
        index = state_index.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
        return hidden.gather(1, index)


class TokenPolicy(nn.Module):
    """pi(a | prefix): logits over the N_ACTIONS response tokens, (B, T, N_ACTIONS)."""

    def __init__(self, embed_dim: int = 32, hidden_dim: int = 64):
        super().__init__()
        self.encoder = _PrefixEncoder(embed_dim, hidden_dim)
        self.head = nn.Linear(hidden_dim, N_ACTIONS)

    def forward(self, tokens: torch.Tensor, state_index: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(tokens, state_index))


class TokenQV(nn.Module):
    """Token-level Q(s, .) (B, T, N_ACTIONS) and V(s) (B, T) on one GRU trunk."""

    def __init__(self, embed_dim: int = 32, hidden_dim: int = 64):
        super().__init__()
        self.encoder = _PrefixEncoder(embed_dim, hidden_dim)
        self.q_head = nn.Linear(hidden_dim, N_ACTIONS)
        self.v_head = nn.Linear(hidden_dim, 1)

    def forward(self, tokens: torch.Tensor, state_index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.encoder(tokens, state_index)
        return self.q_head(features), self.v_head(features).squeeze(-1)


# --------------------------------------------------------------------------- configs
@dataclass(frozen=True)
class TokenBCConfig:
    embed_dim: int = 32
    hidden_dim: int = 64
    lr: float = 3e-3
    batch_size: int = 32


@dataclass(frozen=True)
class TokenILQLConfig:
    """ILQL-like learner. ``expectile`` is tau of the V loss; ``beta`` shifts decoding
    logits; ``awr_beta``/``max_weight`` shape the advantage-weighted policy."""

    embed_dim: int = 32
    hidden_dim: int = 64
    # Small batches and a quick target: the critic must memorise 12 prompts' answers
    # in a few hundred updates (measured: batch 32 / Polyak 0.05 left it undertrained).
    lr: float = 5e-3
    batch_size: int = 16
    gamma: float = 0.99
    expectile: float = 0.8
    cql_weight: float = 0.5
    polyak: float = 0.1
    beta: float = 4.0
    awr_beta: float = 3.0
    max_weight: float = 100.0


# The torch kernels a run uses; ``kernels=`` overrides any of them (e.g. a student's).
DEFAULT_KERNELS: dict[str, Callable] = {
    "masked_token_nll": masked_token_nll_torch,
    "cql_discrete_penalty": cql_discrete_penalty_torch,
    "expectile_loss": expectile_loss_torch,
    "iql_advantage_weights": iql_advantage_weights_torch,
}


def _resolve_kernels(kernels: Mapping[str, Callable] | None) -> dict[str, Callable]:
    return with_kernels(DEFAULT_KERNELS, kernels)


# --------------------------------------------------------------------------- losses
def _taken_logprobs(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """log pi(a_t | s_t) of the logged actions: (B, T, A), (B, T) -> (B, T)."""
    return F.log_softmax(logits, dim=-1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def bc_loss(policy: TokenPolicy, batch: TokenBatch, masked_token_nll=masked_token_nll_torch) -> torch.Tensor:
    """Token-level BC: mean NLL of the logged response tokens over real steps."""
    logits = policy(batch.tokens, batch.state_index)
    return masked_token_nll(_taken_logprobs(logits, batch.actions), batch.mask)


def ilql_losses(
    model: TokenQV,
    target: TokenQV,
    batch: TokenBatch,
    config: TokenILQLConfig,
    kernels: Mapping[str, Callable] | None = None,
) -> dict[str, torch.Tensor]:
    """The three ILQL-like terms on the real steps of ``batch`` (each a 0-d tensor).

    q:   mean (Q(s_t, a_t) - y_t)^2,  y_t = r_t + gamma (1 - terminated_t) V(s_{t+1}) (detached)
    v:   expectile_loss(Qbar(s_t, a_t) - V(s_t), tau)  with Qbar the target copy
    cql: cql_discrete_penalty(Q(s_t, .), a_t), scaled by ``config.cql_weight`` in "total".
    A step that reaches ``MAX_RESPONSE_TOKENS`` without ``<eos>`` is not terminated, so
    it bootstraps from V of the next prefix (never the case in the annotator's data).
    """
    k = _resolve_kernels(kernels)
    q_all, v_all = model(batch.tokens, batch.state_index)
    with torch.no_grad():
        # V(s_{t+1}) sits one token later; clamp keeps padded/terminal rows in range.
        next_index = torch.clamp(batch.state_index + 1, max=batch.tokens.shape[1] - 1)
        _, v_next = model(batch.tokens, next_index)
        q_target_all, _ = target(batch.tokens, batch.state_index)
    m = batch.mask
    actions = batch.actions[m]
    q_taken = q_all[m].gather(1, actions[:, None]).squeeze(1)
    done = batch.terminated[m]
    y = batch.rewards[m] + config.gamma * torch.where(done, torch.zeros_like(v_next[m]), v_next[m])
    q_loss = F.mse_loss(q_taken, y)
    q_bar = q_target_all[m].gather(1, actions[:, None]).squeeze(1)
    v_loss = k["expectile_loss"](q_bar - v_all[m], config.expectile)
    cql = k["cql_discrete_penalty"](q_all[m], actions)
    return {"q": q_loss, "v": v_loss, "cql": cql, "total": q_loss + v_loss + config.cql_weight * cql}


def awr_loss(
    policy: TokenPolicy,
    qv: TokenQV,
    batch: TokenBatch,
    config: TokenILQLConfig,
    kernels: Mapping[str, Callable] | None = None,
) -> torch.Tensor:
    """Advantage-weighted token NLL: - sum(mask * w * log pi(a|s)) / sum(mask),
    w = min(exp(awr_beta (Q(s,a) - V(s))), max_weight) from the frozen critic."""
    k = _resolve_kernels(kernels)
    with torch.no_grad():
        q_all, v_all = qv(batch.tokens, batch.state_index)
        advantage = q_all.gather(-1, batch.actions.unsqueeze(-1)).squeeze(-1) - v_all
        weights = k["iql_advantage_weights"](advantage, config.awr_beta, config.max_weight)
    logp = _taken_logprobs(policy(batch.tokens, batch.state_index), batch.actions)
    return k["masked_token_nll"](weights * logp, batch.mask)


def returns_to_go(rewards: torch.Tensor, mask: torch.Tensor, gamma: float) -> torch.Tensor:
    """Monte Carlo return-to-go of every step: (B, T), (B, T) -> (B, T).

    G_t = sum_{k >= t, mask_k} gamma^(k - t) r_k on real steps, 0 on padding. The log's
    responses all end with ``<eos>``, so G_t is the episode's own discounted reward.
    Raises ValueError on mismatched shapes or ``gamma`` outside [0, 1].
    """
    if not isinstance(rewards, torch.Tensor) or not isinstance(mask, torch.Tensor) or rewards.shape != mask.shape or rewards.ndim != 2:
        raise ValueError(
            f"returns_to_go: `rewards` and `mask` must be (B, T) tensors of one shape, got "
            f"{getattr(rewards, 'shape', None)} and {getattr(mask, 'shape', None)}"
        )
    if not np.isfinite(gamma) or not 0.0 <= gamma <= 1.0:
        raise ValueError(f"returns_to_go: `gamma` must lie in [0, 1], got {gamma!r}")
    r = torch.where(mask.bool(), rewards.to(torch.float32), torch.zeros((), dtype=torch.float32))
    out = torch.zeros_like(r)
    running = torch.zeros(r.shape[0], dtype=r.dtype)
    for t in range(r.shape[1] - 1, -1, -1):
        running = r[:, t] + gamma * running
        out[:, t] = running
    return torch.where(mask.bool(), out, torch.zeros_like(out))


def prompt_baselines(episodes: Sequence[TokenEpisode], gamma: float) -> np.ndarray:
    """b(p): the mean logged return G_0 of prompt p's episodes, one per entry of ``PROMPTS``.

    G_0 = gamma^(len(response) - 1) * reward. A prompt without episodes gets NaN.
    Raises ValueError on an empty list or ``gamma`` outside [0, 1].
    """
    if not episodes:
        raise ValueError("prompt_baselines: `episodes` is empty")
    if not np.isfinite(gamma) or not 0.0 <= gamma <= 1.0:
        raise ValueError(f"prompt_baselines: `gamma` must lie in [0, 1], got {gamma!r}")
    totals, counts = np.zeros(len(PROMPTS)), np.zeros(len(PROMPTS))
    for ep in episodes:
        p = checked_prompt_index(ep.prompt_index)
        totals[p] += gamma ** (len(ep.response) - 1) * ep.reward
        counts[p] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def return_weights(
    rewards: torch.Tensor,
    mask: torch.Tensor,
    baseline: torch.Tensor,
    gamma: float,
    beta: float,
    max_weight: float,
    iql_advantage_weights=iql_advantage_weights_torch,
) -> torch.Tensor:
    """Reward-weighted-regression weights without a critic: (B, T) -> (B, T).

    w_t = min(exp(beta (G_t - b)), max_weight) on real steps (0 on padding), with
    G_t = :func:`returns_to_go` and ``baseline`` b of shape (B,), one per episode (its
    prompt's mean logged return; zeros give plain return weighting). Every step of an
    episode shares its return, so, unlike Q - V, the weight cannot tell which token
    earned it. Raises ValueError on a ``baseline`` of the wrong shape or non-finite values.
    """
    returns = returns_to_go(rewards, mask, gamma)
    if not isinstance(baseline, torch.Tensor) or baseline.shape != (rewards.shape[0],):
        raise ValueError(f"return_weights: `baseline` must be a ({rewards.shape[0]},) tensor, got {getattr(baseline, 'shape', baseline)!r}")
    if not torch.isfinite(baseline).all():
        raise ValueError("return_weights: `baseline` must be finite")
    weights = iql_advantage_weights(returns - baseline.to(returns.dtype)[:, None], beta, max_weight)
    return torch.where(mask.bool(), weights, torch.zeros_like(weights))


def rwr_loss(
    policy: TokenPolicy,
    batch: TokenBatch,
    baseline: torch.Tensor,
    config: TokenILQLConfig,
    kernels: Mapping[str, Callable] | None = None,
) -> torch.Tensor:
    """Return-weighted token NLL: - sum(mask * w * log pi(a|s)) / sum(mask), w from
    :func:`return_weights` with ``config.gamma``, ``awr_beta`` and ``max_weight``."""
    k = _resolve_kernels(kernels)
    with torch.no_grad():
        weights = return_weights(
            batch.rewards, batch.mask, baseline, config.gamma, config.awr_beta, config.max_weight, k["iql_advantage_weights"]
        )
    logp = _taken_logprobs(policy(batch.tokens, batch.state_index), batch.actions)
    return k["masked_token_nll"](weights * logp, batch.mask)


# --------------------------------------------------------------------------- training
def _minibatches(n: int, batch_size: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def _epochs(epochs: int, desc: str, show: bool | None):
    return progress_bar(range(epochs), desc=desc, total=epochs, enabled=show)


def train_token_bc(
    episodes: Sequence[TokenEpisode],
    epochs: int,
    rng: np.random.Generator,
    config: TokenBCConfig | None = None,
    *,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
) -> tuple[TokenPolicy, list[float]]:
    """Behavior cloning of the annotator; returns (policy, mean loss per epoch)."""
    cfg = config or TokenBCConfig()
    k = _resolve_kernels(kernels)
    n_epochs = positive_int(epochs, "bc_epochs")
    policy = TokenPolicy(cfg.embed_dim, cfg.hidden_dim)
    optimizer = adam(policy.parameters(), lr=cfg.lr)
    losses = []
    for _ in _epochs(n_epochs, "language BC", progress):
        epoch = []
        for idx in _minibatches(len(episodes), cfg.batch_size, rng):
            loss = bc_loss(policy, make_token_batch([episodes[i] for i in idx]), k["masked_token_nll"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch.append(loss.item())
        losses.append(float(np.mean(epoch)))
    return policy.eval(), losses


def train_token_ilql(
    episodes: Sequence[TokenEpisode],
    epochs: int,
    rng: np.random.Generator,
    config: TokenILQLConfig | None = None,
    *,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
) -> tuple[TokenQV, list[dict[str, float]]]:
    """Fit token-level Q and V; returns (model, per-epoch means of the loss terms)."""
    cfg = config or TokenILQLConfig()
    n_epochs = positive_int(epochs, "iql_epochs")
    model = TokenQV(cfg.embed_dim, cfg.hidden_dim)
    target = copy.deepcopy(model).requires_grad_(False)
    optimizer = adam(model.parameters(), lr=cfg.lr)
    history = []
    for _ in _epochs(n_epochs, "language ILQL", progress):
        epoch: dict[str, list[float]] = {"q": [], "v": [], "cql": [], "total": []}
        for idx in _minibatches(len(episodes), cfg.batch_size, rng):
            terms = ilql_losses(model, target, make_token_batch([episodes[i] for i in idx]), cfg, kernels)
            optimizer.zero_grad()
            terms["total"].backward()
            optimizer.step()
            polyak_update(target, model, cfg.polyak)
            for name, value in terms.items():
                epoch[name].append(value.item())
        history.append({name: float(np.mean(values)) for name, values in epoch.items()})
    return model.eval(), history


def train_token_awr(
    episodes: Sequence[TokenEpisode],
    qv: TokenQV,
    epochs: int,
    rng: np.random.Generator,
    config: TokenILQLConfig | None = None,
    *,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
) -> tuple[TokenPolicy, list[float]]:
    """Advantage-weighted BC against a trained (frozen) critic; (policy, loss per epoch)."""
    cfg = config or TokenILQLConfig()
    n_epochs = positive_int(epochs, "bc_epochs")
    policy = TokenPolicy(cfg.embed_dim, cfg.hidden_dim)
    optimizer = adam(policy.parameters(), lr=cfg.lr)
    losses = []
    for _ in _epochs(n_epochs, "language AWR", progress):
        epoch = []
        for idx in _minibatches(len(episodes), cfg.batch_size, rng):
            loss = awr_loss(policy, qv, make_token_batch([episodes[i] for i in idx]), cfg, kernels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch.append(loss.item())
        losses.append(float(np.mean(epoch)))
    return policy.eval(), losses


def train_token_rwr(
    episodes: Sequence[TokenEpisode],
    epochs: int,
    rng: np.random.Generator,
    config: TokenILQLConfig | None = None,
    *,
    per_prompt_baseline: bool = True,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
) -> tuple[TokenPolicy, list[float]]:
    """Return-weighted BC, no critic: the same policy, optimizer and schedule as
    :func:`train_token_awr`, weights from :func:`return_weights` (baseline: the prompt's
    mean logged return, or 0 when ``per_prompt_baseline`` is False); (policy, loss per epoch)."""
    cfg = config or TokenILQLConfig()
    n_epochs = positive_int(epochs, "bc_epochs")
    if not episodes:
        raise ValueError("train_token_rwr: `episodes` is empty")
    per_prompt = prompt_baselines(episodes, cfg.gamma) if per_prompt_baseline else np.zeros(len(PROMPTS))
    baseline = torch.tensor([per_prompt[ep.prompt_index] for ep in episodes], dtype=torch.float32)
    policy = TokenPolicy(cfg.embed_dim, cfg.hidden_dim)
    optimizer = adam(policy.parameters(), lr=cfg.lr)
    losses = []
    for _ in _epochs(n_epochs, "language RWR", progress):
        epoch = []
        for idx in _minibatches(len(episodes), cfg.batch_size, rng):
            batch = make_token_batch([episodes[i] for i in idx])
            loss = rwr_loss(policy, batch, baseline[torch.as_tensor(idx)], cfg, kernels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch.append(loss.item())
        losses.append(float(np.mean(epoch)))
    return policy.eval(), losses


# --------------------------------------------------------------------------- decoding
ScoreFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@torch.no_grad()
def greedy_decode(
    score_fn: ScoreFn, prompt_indices: Sequence[int] | None = None, max_tokens: int = MAX_RESPONSE_TOKENS, split: str = "train"
) -> list[tuple[int, ...]]:
    """Greedy responses, one per prompt of ``split`` (default: all of ``PROMPTS`` in
    order; ``split="heldout"`` indexes ``HELDOUT_PROMPTS``).

    ``score_fn(tokens (B, L), state_index (B, 1)) -> scores (B, 1, N_ACTIONS)``; the
    argmax (first index on ties) is emitted. A response stops at ``<eos>`` or after
    ``max_tokens`` tokens (then it has no ``<eos>`` and earns 0).
    """
    prompts, _ = split_prompts(split)
    indices = list(range(len(prompts))) if prompt_indices is None else [checked_prompt_index(p, split) for p in prompt_indices]
    limit = positive_int(max_tokens, "max_tokens")
    responses: list[list[int]] = [[] for _ in indices]
    for _ in range(limit):
        active = [i for i, r in enumerate(responses) if not r or r[-1] != EOS]
        if not active:
            break
        seqs = [[*encode(prompts[indices[i]]), *responses[i]] for i in active]
        width = max(len(s) for s in seqs)
        tokens = torch.full((len(seqs), width), PAD, dtype=torch.long)
        for row, s in enumerate(seqs):
            tokens[row, : len(s)] = torch.tensor(s)
        last = torch.tensor([[len(s) - 1] for s in seqs])
        choice = score_fn(tokens, last)[:, 0, :].argmax(dim=-1)
        for row, i in enumerate(active):
            responses[i].append(int(choice[row]))
    return [tuple(r) for r in responses]


def ilql_scores(policy: TokenPolicy, qv: TokenQV, beta: float) -> ScoreFn:
    """Advantage-shifted decoding scores log pi_beta(a|s) + beta (Q(s, a) - V(s))."""
    if not np.isfinite(beta) or beta < 0:
        raise ValueError(f"ilql_scores: `beta` must be finite and non-negative, got {beta!r}")

    def score(tokens: torch.Tensor, state_index: torch.Tensor) -> torch.Tensor:
        log_pi = F.log_softmax(policy(tokens, state_index), dim=-1)
        q, v = qv(tokens, state_index)
        return log_pi + beta * (q - v.unsqueeze(-1))

    return score


def _evaluate(score_fn: ScoreFn, split: str = "train") -> dict:
    """Greedy responses to every prompt of ``split``, their rewards, mean reward and exact match."""
    sequences = greedy_decode(score_fn, split=split)
    rewards = [response_reward(p, seq, split) for p, seq in enumerate(sequences)]
    return {
        "mean_reward": float(np.mean(rewards)),
        "exact_match": float(np.mean([r == 1.0 for r in rewards])),
        "sequences": [list(s) for s in sequences],
        "rewards": [float(r) for r in rewards],
    }


# --------------------------------------------------------------------------- experiment
def language_offline_experiment(
    seed: int,
    episodes_per_prompt: int,
    bc_epochs: int,
    iql_epochs: int,
    *,
    kernels: Mapping[str, Callable] | None = None,
    progress: bool | None = None,
    behavior: BehaviorMix | None = None,
    bc_config: TokenBCConfig | None = None,
    ilql_config: TokenILQLConfig | None = None,
) -> dict:
    """Collect the annotator log (training prompts only), train BC, the ILQL-like critic,
    AWR and return-weighted BC, decode greedily on both splits.

    Returns ``{"dataset": summarize_language_dataset(...), "evaluation": {method:
    {"mean_reward", "exact_match", "sequences", "rewards"}}, "heldout_evaluation":
    {method: same keys}, "losses": {...}, "config": {...}}``: "evaluation" has one
    sequence and reward per entry of ``PROMPTS``, "heldout_evaluation" one per entry of
    ``HELDOUT_PROMPTS``, in order; methods are ``LANGUAGE_METHODS``. Return-weighted BC
    trains last, so the other methods' numbers do not depend on it. ``kernels`` maps any of ``DEFAULT_KERNELS``'
    names to a replacement torch function. Deterministic for a given seed.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"language_offline_experiment: `seed` must be an int, got {seed!r}")
    positive_int(episodes_per_prompt, "episodes_per_prompt")
    positive_int(bc_epochs, "bc_epochs")
    positive_int(iql_epochs, "iql_epochs")
    k = _resolve_kernels(kernels)
    bc_cfg = bc_config or TokenBCConfig()
    ilql_cfg = ilql_config or TokenILQLConfig()
    rng = seed_everything(int(seed))
    episodes = collect_language_dataset(episodes_per_prompt, rng, behavior)
    policy, bc_losses = train_token_bc(episodes, bc_epochs, rng, bc_cfg, kernels=k, progress=progress)
    qv, ilql_history = train_token_ilql(episodes, iql_epochs, rng, ilql_cfg, kernels=k, progress=progress)
    awr_policy, awr_losses = train_token_awr(episodes, qv, bc_epochs, rng, ilql_cfg, kernels=k, progress=progress)
    rwr_policy, rwr_losses = train_token_rwr(episodes, bc_epochs, rng, ilql_cfg, kernels=k, progress=progress)

    def log_probs(model: TokenPolicy) -> ScoreFn:
        return lambda tokens, index: F.log_softmax(model(tokens, index), dim=-1)

    scores = {
        "behavior_cloning": log_probs(policy),
        "return_weighted_bc": log_probs(rwr_policy),
        "advantage_weighted_bc": log_probs(awr_policy),
        "ilql_like": ilql_scores(policy, qv, ilql_cfg.beta),
    }
    return {
        "dataset": summarize_language_dataset(episodes),
        "evaluation": {m: _evaluate(scores[m], "train") for m in LANGUAGE_METHODS},
        "heldout_evaluation": {m: _evaluate(scores[m], "heldout") for m in LANGUAGE_METHODS},
        "losses": {
            "behavior_cloning": bc_losses,
            "ilql": ilql_history,
            "advantage_weighted_bc": awr_losses,
            "return_weighted_bc": rwr_losses,
        },
        "config": {"bc": asdict(bc_cfg), "ilql": asdict(ilql_cfg), "behavior": asdict(behavior or BehaviorMix())},
    }
