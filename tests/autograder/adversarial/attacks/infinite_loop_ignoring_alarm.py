"""Attack: the kernel switches off SIGALRM (the worker's per-call timer) and then spins.

The call's CPU clock, watched from outside by the worker's parent, stops it.
"""

import signal


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_REAL, 0)
    while True:
        pass
