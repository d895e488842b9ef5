"""Plain records shared by the environment, the data collectors and every learner.

A transition keeps `terminated` (a true end of the task: goal or trap) apart from
`truncated` (the time limit cut the episode). Only `terminated` stops bootstrapping.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Transition:
    obs: np.ndarray  # float32, shape (observation_dim,)
    action: int
    reward: float
    next_obs: np.ndarray  # float32, shape (observation_dim,)
    terminated: bool  # goal or trap: no bootstrap from next_obs
    truncated: bool  # time limit: the next state still has value


@dataclass
class Episode:
    transitions: list[Transition] = field(default_factory=list)
    return_: float = 0.0  # undiscounted sum of rewards
    length: int = 0
    outcome: str | None = None  # "goal", "trap", "timeout" (None while running)
    start: tuple[int, int] | None = None
