"""KeyDoorGrid: the small grid world every KeyDoor experiment of the lab runs in.

Layout (row 0 at the top, ``#`` wall, ``x`` trap, ``K`` key, ``D`` door, ``G`` goal,
``S`` possible start)::

        col 0 1 2 3 4 5 6 7 8 9 10
    row 0   . . K . . . . # . . G
    row 1   . # # # x . . # . x .
    row 2   S . . . . . x # . . .
    row 3   . . # . S . . D . . .
    row 4   . x # . # # . # x . .
    row 5   . . . . . . . # . . .
    row 6   S . . . S . S # . . .

The goal sits in a room (columns 8-10) whose only entrance is the door. The door
behaves like a wall until the agent has walked over the key; the key is then held
for the rest of the episode. Traps lie next to the shortest routes, so an agent that
acts at random now and then falls into one.

Dynamics (deterministic unless ``slip_probability > 0``): an action moves one cell;
moving into a wall, the closed door or off the grid leaves the agent in place. With
probability ``slip_probability`` the chosen action is replaced by a uniformly random
one (drawn from the environment's seeded generator).

Rewards: ``-step_cost`` (default 0.01) per step, except the step that enters the goal
(``goal_reward``, default +1) or a trap (``trap_reward``, default -1). There is no
reward for the key: the signal is sparse. The optimal return from (6, 0) is
1 - 0.01 * 21 = 0.79.

Stopping: goal and trap are true terminals (``terminated=True``). Reaching
``max_steps`` (default 50) without either is a time-limit cut: ``truncated=True``,
``terminated=False``, ``info["outcome"] == "timeout"``; the last state still has value
and a learner must bootstrap from it.

Observation: float32 vector of length ``height + width + 1`` (19): one-hot row,
one-hot column, key-held flag. The step counter is deliberately not observed; the time
limit is external to the task.
"""

from __future__ import annotations

import copy
import operator

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["ACTION_NAMES", "ACTION_DELTAS", "KeyDoorGrid", "LAYOUT", "WIDE_LAYOUT", "check_layout", "draw_grid"]

#: Action index -> name. Index order is clockwise starting from "up".
ACTION_NAMES: tuple[str, ...] = ("up", "right", "down", "left")
#: Action index -> (row change, column change).
ACTION_DELTAS: tuple[tuple[int, int], ...] = ((-1, 0), (0, 1), (1, 0), (0, -1))

LAYOUT: tuple[str, ...] = (
    "..K....#..G",
    ".###x..#.x.",
    "S.....x#...",
    "..#.S..D...",
    ".x#.##.#x..",
    ".......#...",
    "S...S.S#...",
)

#: A larger KeyDoorGrid (11 x 17, ten start cells, the same key -> door -> goal task)
#: for experiments that need the learner to reach states the demonstrations never show
#: (the lab's DAgger-vs-cloning comparison at an equal label budget): the expert's
#: route from each start cell is a thin path through about 150 free cells, and the
#: traps sit beside the corridors that lead to the door.
WIDE_LAYOUT: tuple[str, ...] = (
    "S......S....x#..G",
    ".##.x.....##.#.x.",
    "....#..x....x#...",
    "S.#...K..#...#.x.",
    "..#.x...##..x#...",
    "S.......S....D...",
    ".x.##.x.....x#...",
    "....#....#...#.x.",
    "S.x...S..#..x#...",
    ".....x.....x.#...",
    "S...S...S....#...",
)

_LAYOUT_CHARS = frozenset(".#xKDGS")


def check_layout(layout) -> tuple[str, ...]:
    """``layout`` as a tuple of rows, else ValueError naming what is wrong.

    A layout is a non-empty sequence of equally long strings over ``. # x K D G S``
    with exactly one key ``K``, door ``D`` and goal ``G`` and at least one start ``S``.
    """
    if isinstance(layout, str) or not isinstance(layout, (tuple, list)) or not layout:
        raise ValueError(f"KeyDoorGrid: `layout` must be a non-empty sequence of row strings, got {layout!r}")
    rows = tuple(layout)
    if not all(isinstance(row, str) and row for row in rows) or len({len(row) for row in rows}) != 1:
        raise ValueError("KeyDoorGrid: `layout` rows must be non-empty strings of equal length")
    bad = sorted(set("".join(rows)) - _LAYOUT_CHARS)
    if bad:
        raise ValueError(f"KeyDoorGrid: `layout` holds {bad[0]!r}; allowed cells are {''.join(sorted(_LAYOUT_CHARS))}")
    text = "".join(rows)
    for ch, what in (("K", "key"), ("D", "door"), ("G", "goal")):
        if text.count(ch) != 1:
            raise ValueError(f"KeyDoorGrid: `layout` must hold exactly one {what} {ch!r}, got {text.count(ch)}")
    if "S" not in text:
        raise ValueError("KeyDoorGrid: `layout` must hold at least one start cell 'S'")
    return rows


# Cell kinds in the precomputed table.
_FLOOR, _WALL, _TRAP, _GOAL = 0, 1, 2, 3
#: Tables ``__init__`` builds and nothing changes afterwards (the observations' is not writeable):
#: a deep copy shares them.
_READ_ONLY_TABLES = frozenset({"_next_cell", "_kind", "_positions", "_obs_table"})


class KeyDoorGrid(gym.Env):
    """Grid world with a key, a door, a goal and traps (see the module docstring).

    Parameters
    ----------
    seed: seeds the generator that picks start cells (and slips) until the next
        ``reset(seed=...)``.
    max_steps: time limit; reaching it truncates the episode.
    slip_probability: chance in [0, 1) that an action is replaced by a random one.
    step_cost, goal_reward, trap_reward: the reward design.
    render_mode: ``None`` or ``"ansi"`` (``render()`` returns the text picture).
    layout: the map, rows of ``. # x K D G S`` (default :data:`LAYOUT`; see
        :func:`check_layout`); the observation length is ``height + width + 1``.

    ``reset(seed=None, options=None, start=None)`` returns ``(obs, info)``;
    ``options={"start": (row, col)}`` or ``start=(row, col)`` fixes the start cell,
    otherwise it is drawn uniformly from ``start_positions``. ``info["state"]`` is
    ``{"position": (row, col), "has_key": bool, "step": int}``; ``step`` also returns
    ``info["outcome"]`` in ``{"goal", "trap", "timeout", None}``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        seed: int | None = None,
        *,
        max_steps: int = 50,
        slip_probability: float = 0.0,
        step_cost: float = 0.01,
        goal_reward: float = 1.0,
        trap_reward: float = -1.0,
        render_mode: str | None = None,
        layout=LAYOUT,
    ) -> None:
        if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ValueError(f"KeyDoorGrid: `max_steps` must be a positive integer, got {max_steps!r}")
        if not 0.0 <= float(slip_probability) < 1.0:
            raise ValueError(f"KeyDoorGrid: `slip_probability` must lie in [0, 1), got {slip_probability!r}")
        for name, value in (("step_cost", step_cost), ("goal_reward", goal_reward), ("trap_reward", trap_reward)):
            if not np.isfinite(value):
                raise ValueError(f"KeyDoorGrid: `{name}` must be finite, got {value!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"KeyDoorGrid: `render_mode` must be None or 'ansi', got {render_mode!r}")

        self.render_mode = render_mode
        self.max_steps = int(max_steps)
        self.slip_probability = float(slip_probability)
        self.step_cost = float(step_cost)
        self.goal_reward = float(goal_reward)
        self.trap_reward = float(trap_reward)

        self.layout = check_layout(layout)
        self.height = len(self.layout)
        self.width = len(self.layout[0])
        cells = {(r, c): ch for r, row in enumerate(self.layout) for c, ch in enumerate(row)}
        self.wall_positions = tuple(p for p, ch in cells.items() if ch == "#")
        self.trap_positions = tuple(p for p, ch in cells.items() if ch == "x")
        self.start_positions = tuple(p for p, ch in cells.items() if ch == "S")
        (self.key_position,) = [p for p, ch in cells.items() if ch == "K"]
        (self.door_position,) = [p for p, ch in cells.items() if ch == "D"]
        (self.goal_position,) = [p for p, ch in cells.items() if ch == "G"]
        self.action_dim = len(ACTION_NAMES)
        self.observation_dim = self.height + self.width + 1

        self.action_space = spaces.Discrete(self.action_dim)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.observation_dim,), dtype=np.float32)

        self._build_tables()
        if seed is not None:
            super().reset(seed=seed)
        self._cell = -1  # -1: reset() has not been called
        self._has_key = False
        self._t = 0
        self._done = True

    # ------------------------------------------------------------------ tables
    def _build_tables(self) -> None:
        """Precompute moves, cell kinds and observations so ``step`` only looks up."""
        h, w = self.height, self.width
        n = h * w
        kind = np.full(n, _FLOOR, dtype=np.int8)
        for r, c in self.wall_positions:
            kind[r * w + c] = _WALL
        for r, c in self.trap_positions:
            kind[r * w + c] = _TRAP
        gr, gc = self.goal_position
        kind[gr * w + gc] = _GOAL
        door = self.door_position[0] * w + self.door_position[1]
        # next_cell[has_key][cell][action] -> cell (plain lists: faster than numpy scalars)
        next_cell = [[[0] * self.action_dim for _ in range(n)] for _ in range(2)]
        for key in (0, 1):
            for cell in range(n):
                r, c = divmod(cell, w)
                for a, (dr, dc) in enumerate(ACTION_DELTAS):
                    nr, nc = r + dr, c + dc
                    target = nr * w + nc
                    blocked = not (0 <= nr < h and 0 <= nc < w) or kind[target] == _WALL or (target == door and not key)
                    next_cell[key][cell][a] = cell if blocked else target
        self._next_cell = next_cell
        self._kind = kind.tolist()
        self._key_cell = self.key_position[0] * w + self.key_position[1]
        self._positions = [divmod(cell, w) for cell in range(n)]
        obs = np.zeros((n, 2, self.observation_dim), dtype=np.float32)
        for cell in range(n):
            r, c = divmod(cell, w)
            obs[cell, :, r] = 1.0
            obs[cell, :, h + c] = 1.0
            obs[cell, 1, h + w] = 1.0
        obs.setflags(write=False)
        self._obs_table = obs

    def __deepcopy__(self, memo: dict) -> KeyDoorGrid:
        """An independent copy (its own episode state and random generators) that shares
        the read-only tables built in ``__init__``: copying those cost about 1 ms a copy,
        and a Decision Transformer sweep copies the env once per episode, thousands of times."""
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        for name, value in vars(self).items():
            setattr(clone, name, value if name in _READ_ONLY_TABLES else copy.deepcopy(value, memo))
        return clone

    # ------------------------------------------------------------- encoding
    def encode(self, position: tuple[int, int], has_key: bool) -> np.ndarray:
        """Observation of the agent at ``position`` (row, col) holding the key or not."""
        cell = self._cell_of(position, "position")
        return self._obs_table[cell, int(bool(has_key))].copy()

    def decode(self, obs) -> tuple[tuple[int, int], bool]:
        """Inverse of :meth:`encode`: ``((row, col), has_key)`` from an observation."""
        x = np.asarray(obs)
        if x.shape != (self.observation_dim,):
            raise ValueError(f"KeyDoorGrid.decode: `obs` must have shape ({self.observation_dim},), got {x.shape}")
        h, w = self.height, self.width
        return (int(np.argmax(x[:h])), int(np.argmax(x[h : h + w]))), bool(x[h + w] > 0.5)

    def state_index(self, obs) -> int:
        """Index of an observation's state in :meth:`tabular_model`: 2 * cell + has_key."""
        (r, c), key = self.decode(obs)
        return 2 * (r * self.width + c) + int(key)

    def tabular_model(self) -> dict[str, np.ndarray]:
        """The task as a tabular MDP over (cell, has_key) states, for exact policy evaluation.

        State ``2 * cell + has_key`` (cell = row * width + col; see :meth:`state_index`).
        Returns ``transition_probs`` P (S, A, S), ``rewards`` (S, A) (expected reward of the
        move), ``terminal_probs`` (S, A, S) (1 where the move enters the goal or a trap)
        and ``observations`` (S, observation_dim). Slips are included (with probability
        ``slip_probability`` the action is uniform). There is no time limit: the step
        counter is not observed, so a learner that bootstraps across the limit targets
        exactly this MDP's values. Wall, trap and goal cells are states nobody reaches.
        """
        n, a_dim = self.height * self.width, self.action_dim
        s_dim = 2 * n
        p = np.zeros((s_dim, a_dim, s_dim))
        for key in (0, 1):
            for cell in range(n):
                for a in range(a_dim):
                    # The intended move, then the slip's uniform move over all actions.
                    for b, weight in ((a, 1.0 - self.slip_probability), *((b, self.slip_probability / a_dim) for b in range(a_dim))):
                        target = self._next_cell[key][cell][b]
                        p[2 * cell + key, a, 2 * target + int(key or target == self._key_cell)] += weight
        kind = np.repeat(np.asarray(self._kind), 2)  # kind of every state's cell
        reward_of = np.where(kind == _GOAL, self.goal_reward, np.where(kind == _TRAP, self.trap_reward, -self.step_cost))
        terminal = np.broadcast_to(((kind == _GOAL) | (kind == _TRAP)).astype(np.float64), p.shape)
        observations = self._obs_table.reshape(s_dim, self.observation_dim).copy()
        return {"transition_probs": p, "rewards": p @ reward_of, "terminal_probs": terminal.copy(), "observations": observations}

    def goal_states(self) -> np.ndarray:
        """(S,) 1.0 where a tabular state's cell is the goal (:meth:`tabular_model`'s state order)."""
        return np.repeat(np.asarray(self._kind) == _GOAL, 2).astype(np.float64)

    def trap_states(self) -> np.ndarray:
        """(S,) 1.0 where a tabular state's cell is a trap (:meth:`tabular_model`'s state order)."""
        return np.repeat(np.asarray(self._kind) == _TRAP, 2).astype(np.float64)

    def _cell_of(self, position, name: str) -> int:
        try:
            r, c = (operator.index(v) for v in position)
        except (TypeError, ValueError):
            raise ValueError(f"KeyDoorGrid: `{name}` must be a (row, col) pair of integers, got {position!r}") from None
        if not (0 <= r < self.height and 0 <= c < self.width):
            raise ValueError(f"KeyDoorGrid: `{name}` {(r, c)} lies outside the {self.height}x{self.width} grid")
        return r * self.width + c

    def _state(self) -> dict:
        return {"position": self._positions[self._cell], "has_key": self._has_key, "step": self._t}

    @property
    def deterministic(self) -> bool:
        """True when nothing but the start cell is random (no slips): a deterministic policy
        then plays the same episode from the same start cell, whatever the seed."""
        return self.slip_probability == 0.0

    # ------------------------------------------------------------- gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None, start=None):
        """Start an episode; see the class docstring for ``start`` / ``options``."""
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"KeyDoorGrid.reset: `options` must be a dict or None, got {type(options).__name__}")
        if start is None and options:
            start = options.get("start")
        if start is None:
            start = self.start_positions[int(self.np_random.integers(len(self.start_positions)))]
        cell = self._cell_of(start, "start")
        kind = self._kind[cell]
        if kind != _FLOOR or cell == self._key_cell or cell == self.door_position[0] * self.width + self.door_position[1]:
            what = {_WALL: "a wall", _TRAP: "a trap", _GOAL: "the goal"}.get(kind, "the key or the door")
            raise ValueError(f"KeyDoorGrid.reset: `start` {tuple(start)} is on {what}; pick a free floor cell")
        self._cell = cell
        self._has_key = False
        self._t = 0
        self._done = False
        return self._obs_table[cell, 0].copy(), {"state": self._state()}

    def step(self, action):
        """Move one cell. Returns ``(obs, reward, terminated, truncated, info)``."""
        if action.__class__ is not int:  # fast path for plain ints; numpy ints go through index()
            if isinstance(action, (bool, np.bool_)):
                raise ValueError(f"KeyDoorGrid.step: `action` must be an integer in [0, 4), got {action!r}")
            try:
                action = operator.index(action)
            except TypeError:
                raise ValueError(f"KeyDoorGrid.step: `action` must be an integer in [0, 4), got {action!r}") from None
        if not 0 <= action < 4:
            raise ValueError(f"KeyDoorGrid.step: `action` must be an integer in [0, 4), got {action!r}")
        if self._done:
            raise RuntimeError("KeyDoorGrid.step: the episode has ended (or never started); call reset() first")
        if self.slip_probability and self.np_random.random() < self.slip_probability:
            action = int(self.np_random.integers(4))
        key = self._has_key
        cell = self._next_cell[key][self._cell][action]
        self._cell = cell
        if cell == self._key_cell:
            key = self._has_key = True
        self._t += 1
        kind = self._kind[cell]
        if kind == _GOAL:
            reward, terminated, outcome = self.goal_reward, True, "goal"
        elif kind == _TRAP:
            reward, terminated, outcome = self.trap_reward, True, "trap"
        else:
            reward, terminated, outcome = -self.step_cost, False, None
        truncated = not terminated and self._t >= self.max_steps
        if truncated:
            outcome = "timeout"
        self._done = terminated or truncated
        info = {"state": {"position": self._positions[cell], "has_key": key, "step": self._t}, "outcome": outcome}
        return self._obs_table[cell, int(key)].copy(), reward, terminated, truncated, info

    def render(self):
        """Text picture (``render_mode="ansi"``); ``A`` marks the agent, ``a`` with the key."""
        if self.render_mode != "ansi":
            return None
        return self.ascii()

    def ascii(self) -> str:
        rows = [list(row.replace("S", ".")) for row in self.layout]
        if self._cell >= 0:
            r, c = self._positions[self._cell]
            rows[r][c] = "a" if self._has_key else "A"
        return "\n".join("".join(row) for row in rows) + "\n"


def draw_grid(env: KeyDoorGrid, ax=None, *, title: str | None = None, xlabel: str = "column", ylabel: str = "row"):
    """Draw the layout with matplotlib: walls as filled squares, traps as ×, K, D, G,
    start cells as dots. Labels are arguments so notebooks can pass either language.
    Returns the axes."""
    import matplotlib.pyplot as plt  # only for a drawing: the environment itself needs no matplotlib

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 5.5))
    ax.set_xlim(0, env.width)
    ax.set_ylim(env.height, 0)  # row 0 at the top, as in the text picture
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(env.width + 1))
    ax.set_yticks(np.arange(env.height + 1))
    ax.grid(True, linewidth=0.8)
    for r, c in env.wall_positions:
        ax.add_patch(plt.Rectangle((c, r), 1, 1, color="0.35", alpha=0.7))
    for r, c in env.trap_positions:
        ax.text(c + 0.5, r + 0.5, "×", ha="center", va="center", fontsize=22, color="crimson")
    for label, (r, c) in (("K", env.key_position), ("D", env.door_position), ("G", env.goal_position)):
        ax.text(c + 0.5, r + 0.5, label, ha="center", va="center", fontsize=18, fontweight="bold")
    for r, c in env.start_positions:
        ax.plot(c + 0.5, r + 0.5, "o", markersize=6, color="tab:blue")
    if title is not None:
        ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax
