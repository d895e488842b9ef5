"""Attack: return_to_go ends the worker process with os._exit (no cleanup, no reply)."""

import os


def return_to_go(rewards, gamma=1.0):
    os._exit(3)
