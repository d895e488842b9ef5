"""What the grading sandbox costs and what its CPU share buys, measured on this machine.

Prints:

* the probe time (once per grader process);
* the cost of one sandboxed worker: spawn, one request/reply, terminate (median of
  ``--repeats``), and a worker that imports numpy and torch;
* the CPU share (CPU seconds per wall second) of a victim doing 1 s of CPU work
  while a neighbouring sandbox runs ``--spinners`` spinning setsid() children, with
  the per-worker cpu cgroup and with it switched off (the situation before #11).

    .venv/bin/python bench/sandbox.py [--repeats 10] [--spinners 60]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.grade import sandbox  # noqa: E402
from autograder.grade.sandbox import cgroups, launch  # noqa: E402

ECHO = "import sys\nsys.stdout.write(sys.stdin.readline())\nsys.stdout.flush()\n"
SPINNERS = textwrap.dedent(
    """
    import os, sys
    for _ in range(int(sys.argv[1])):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    sys.stdin.readline()
    """
)
VICTIM = textwrap.dedent(
    """
    import json, time
    start_cpu, start = time.process_time(), time.monotonic()
    while time.process_time() - start_cpu < 1.0:
        pass
    print(json.dumps({"cpu": time.process_time() - start_cpu, "wall": time.monotonic() - start}))
    """
)
LIMITS = sandbox.Limits(max_processes=128)


def round_trip() -> float:
    """Seconds for spawn + one line echoed + terminate."""
    start = time.perf_counter()
    proc = sandbox.spawn([sys.executable, "-I", "/m5/echo.py"], files={"echo.py": ECHO.encode()})
    try:
        proc.stdin.write(b"ping\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == b"ping\n"
    finally:
        sandbox.terminate(proc)
    return time.perf_counter() - start


def victim_share(spinners: int) -> float:
    """The victim's CPU seconds per wall second next to a sandbox of spinning children."""
    attacker = sandbox.spawn([sys.executable, "-I", "/m5/spin.py", str(spinners)], files={"spin.py": SPINNERS.encode()}, limits=LIMITS)
    try:
        deadline = time.monotonic() + 30
        while attacker.sandbox_cgroup is not None and len(attacker.sandbox_cgroup.pids()) < spinners and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        result = sandbox.run([sys.executable, "-I", "/m5/victim.py"], files={"victim.py": VICTIM.encode()}, limits=LIMITS, timeout=300)
    finally:
        sandbox.terminate(attacker)
    found = json.loads(result.stdout)
    return found["cpu"] / found["wall"]


def without_cpu_cgroup():
    """Patch the probe's plan so that workers get no cpu cgroup; returns an undo."""
    plan, info = launch._probe()
    bases = {k: v for k, v in plan.cgroups.bases.items() if k != "cpu"}
    patched = dataclasses.replace(plan, cgroups=cgroups.CgroupLayout(bases))
    original = launch._probe
    launch._probe = lambda: (patched, info)
    return lambda: setattr(launch, "_probe", original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10, help="round trips to time (median)")
    parser.add_argument("--spinners", type=int, default=60, help="spinning children next to the victim")
    args = parser.parse_args()
    if args.repeats < 1 or args.spinners < 1:
        parser.error("--repeats and --spinners must be positive")

    start = time.perf_counter()
    info = sandbox.isolation()
    print(
        f"probe: {time.perf_counter() - start:.2f} s, level {info.level}, "
        f"cgroups {sorted(info.details.get('cgroups', {}))}, fatal: {info.fatal}"
    )
    if info.fatal:
        return
    round_trip()  # warm the page cache
    times = [round_trip() for _ in range(args.repeats)]
    print(
        f"spawn + request/reply + terminate: median {statistics.median(times) * 1000:.0f} ms "
        f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, n={len(times)})"
    )
    start = time.perf_counter()
    heavy = sandbox.run([sys.executable, "-c", "import numpy, torch; print(torch.ones(2).sum().item())"], timeout=120)
    print(f"worker importing numpy + torch: {time.perf_counter() - start:.2f} s (exit {heavy.returncode})")
    if "cpu" in info.details.get("cgroups", {}):
        print(
            f"victim CPU share next to {args.spinners} spinning children, per-worker cpu cgroup: "
            f"{victim_share(args.spinners):.2f} CPU s / wall s"
        )
        undo = without_cpu_cgroup()
        try:
            print(
                f"victim CPU share next to {args.spinners} spinning children, no cpu cgroup:         "
                f"{victim_share(args.spinners):.2f} CPU s / wall s"
            )
        finally:
            undo()
    else:
        print("no cpu cgroup on this machine: the CPU share comparison is skipped")


if __name__ == "__main__":
    main()
