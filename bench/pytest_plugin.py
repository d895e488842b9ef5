"""What the pytest plugin costs: a pytest run without --m5-submission, and a graded run against m5 grade.

    .venv/bin/python bench/pytest_plugin.py [--rounds 5]

Interleaved rounds, medians of wall time: a trivial test file collected and run with the plugin
installed and with it switched off (``-p no:m5``), and the demo submission graded by
``pytest --m5-submission=...`` and by ``m5 grade ... --json`` (both without shrinking). Prints the
ratios; the seconds are this host's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "autograder" / "assets" / "demo" / "correct.py"


def seconds(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    m5 = [sys.executable, "-m", "autograder.cli"]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "test_trivial.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
        commands = {
            "pytest, plugin installed": [*pytest, "test_trivial.py"],
            "pytest, plugin off": [*pytest, "-p", "no:m5", "test_trivial.py"],
            "pytest --m5-submission": [*pytest, f"--m5-submission={DEMO}", "--m5-no-shrink"],
            "m5 grade --json": [*m5, "grade", str(DEMO), "--json", "--no-shrink", "--out"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(rounds):
            for name, command in commands.items():
                fresh_out = [str(work / f"grades{round_}")] if command[-1] == "--out" else []  # m5 grade refuses an existing gradebook
                times[name].append(seconds([*command, *fresh_out], work))
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:28s} {value:6.2f} s (median of {rounds})")
    print(f"no option, plugin installed / off: {median['pytest, plugin installed'] / median['pytest, plugin off']:.3f}")
    print(f"graded demo, plugin / m5 grade:    {median['pytest --m5-submission'] / median['m5 grade --json']:.3f}")


if __name__ == "__main__":
    main()
