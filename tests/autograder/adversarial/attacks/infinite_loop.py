"""Attack: dqn_targets never returns (a plain busy loop). Only that kernel may lose points."""


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    while True:
        pass
