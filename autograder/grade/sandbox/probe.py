"""Probe what isolation works here, once per process: the plans tried, best first,
each run through the very launch the grader uses."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys

from autograder.grade.sandbox import cgroups, hiding, paths, seccomp
from autograder.grade.sandbox import files as sfiles
from autograder.grade.sandbox.limits import LIMITS_FAILED, SANDBOX_UID, Limits, unraisable_limits
from autograder.grade.sandbox.plan import BWRAP_CANDIDATES, UNSHARE_CANDIDATES, Isolation, Plan
from autograder.grade.sandbox.process import run_with_plan


def _find(name: str, candidates: tuple[str, ...]) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def _bwrap_supports(bwrap: str, option: str) -> bool:
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return option.encode() in out


def _probe_run(plan: Plan) -> tuple[bool, int | None, str]:
    """Run a trivial interpreter exactly as spawn would with ``plan``:
    (worked, exit status, stderr tail)."""
    result = run_with_plan(plan, [sys.executable, "-I", "-S", "-c", "print('ok')"], timeout=60.0)
    worked = result.returncode == 0 and result.stdout.strip() == b"ok"
    return worked, result.returncode, result.stderr_tail.strip()[-500:]


def _candidate_plans(common: dict, details: dict) -> list[Plan]:
    """The plans to try, best first."""
    drop = SANDBOX_UID if os.geteuid() == 0 else None
    plans = []
    bwrap = _find("bwrap", BWRAP_CANDIDATES)
    details["bwrap"] = bwrap
    if bwrap is not None:
        plans.append(
            Plan(level="bubblewrap", bwrap=bwrap, disable_userns=_bwrap_supports(bwrap, "--disable-userns"), drop_to_uid=drop, **common)
        )
    if drop is not None:
        # unshare(1) would run after the uid drop, without the rights it needs.
        plans.append(Plan(level="fallback", isolate=True, drop_to_uid=drop, **common))
    else:
        unshare = _find("unshare", UNSHARE_CANDIDATES)
        details["unshare"] = unshare
        if unshare is not None:
            plans.append(Plan(level="fallback", unshare=unshare, **common))
    plans.append(Plan(level="fallback", drop_to_uid=drop, **common))
    return plans


def _build_plan() -> tuple[Plan | None, dict, str | None]:
    """The first plan that runs code here, the probe's findings, and a fatal reason when
    no plan may be used."""
    details: dict = {"python": sys.executable, "euid": os.geteuid()}
    problems = unraisable_limits(Limits())
    if problems:
        return None, details, _limits_fatal(problems)
    hidden_pkgs = paths.project_package_dirs()
    hidden = paths.hidden_paths(hidden_pkgs, paths.python_roots())
    details["hidden"] = [str(h) for h in hidden]
    masked_files, extra_roots = paths.pth_masks_and_extra_roots(hidden)
    roots = paths.python_roots() + [r for r in extra_roots if not any(paths.is_within(r, h) for h in hidden)]
    site_dirs = paths.site_dirs()
    layout = cgroups.probe_layout(Limits())
    details["cgroups"] = {c: str(b) for c, (b, _) in layout.bases.items()}
    try:
        program = seccomp.seccomp_program()
    except seccomp.SeccompUnavailable as exc:
        program = None
        details["seccomp_error"] = str(exc)
    sfiles.sweep_stale_trees()
    common = dict(
        cgroups=layout,
        seccomp=program,
        roots=tuple(roots),
        hidden=tuple(hidden),
        masked_packages=tuple(d for d in hidden_pkgs if d.parent in site_dirs),
        masked_files=tuple(masked_files),
        secrets=tuple(hiding.secret_paths(hidden)),
    )
    failures = []
    for plan in _candidate_plans(common, details):
        worked, status, why = _probe_run(plan)
        if worked:
            if failures:
                details["probe_errors"] = failures
            if plan.level == "fallback":
                details.update(_fallback_facts(plan))
            return plan, details, None
        if status == LIMITS_FAILED:
            return None, details, _limits_fatal([why])
        variant = "+unshare" if plan.unshare else "+namespaces" if plan.isolate else ""
        failures.append(f"{plan.level}{variant}: {why or f'exit status {status}'}")
    details["probe_errors"] = failures
    who = "as an unprivileged uid (never as root)" if os.geteuid() == 0 else "here"
    return (
        None,
        details,
        (
            "SANDBOX ERROR: no sandbox can run student code "
            + who
            + ": "
            + "; ".join(failures)
            + ". Install bubblewrap (make sandbox-deps)."
        ),
    )


def _fallback_facts(plan: Plan) -> dict:
    """Measured as the worker: which secrets it can open, whether it gets an internet
    socket. Without a uid change everything the grader reads counts as readable."""
    targets = hiding.probe_targets(list(plan.secrets))
    if not plan.hides_by_permissions:
        return {"readable_secrets": targets, "worker_socket": None}
    result = run_with_plan(plan, [sys.executable, "-I", "-S", "-c", hiding.READ_PROBE, json.dumps(targets)], timeout=60.0)
    try:
        found = json.loads(result.stdout.decode().strip().splitlines()[-1])
        return {"readable_secrets": found["readable"], "worker_socket": found["socket"]}
    except (ValueError, IndexError, KeyError, TypeError):
        return {"readable_secrets": targets, "worker_socket": None, "read_probe": result.stderr_tail[-300:]}


def _limits_fatal(problems: list[str]) -> str:
    return (
        "SANDBOX ERROR: the grader runs under resource limits a worker cannot get ("
        + "; ".join(problems)
        + "). Every kernel would fail; raise the limits "
        "(e.g. ulimit -v unlimited) and start again."
    )


def _warning_for(plan: Plan, details: dict) -> str | None:
    problems, russian = [], ""
    if plan.level == "fallback":
        reason = (details.get("probe_errors") or ["bwrap not found"])[0]
        facts = dict(
            root=plan.hides_by_permissions,
            readable=details.get("readable_secrets", []),
            seccomp=plan.keeper_seccomp,
            socket=details.get("worker_socket") is not False,
            namespaces=plan.unshare is not None or plan.isolate,
        )
        problems.append(hiding.warning_text(**facts) + f" (why: {reason})")
        russian = " ПРЕДУПРЕЖДЕНИЕ ПЕСОЧНИЦЫ: " + hiding.warning_text(**facts, lang="ru") + "."
    bases = plan.cgroups.bases
    if "pids" not in bases and not plan.nproc_rlimit:
        problems.append("no pids cgroup is writable and RLIMIT_NPROC is ignored for root: a fork bomb is NOT capped")
    if "cpu" not in bases:
        problems.append("no cpu cgroup: one submission's processes can take CPU time from submissions graded at the same time (--jobs > 1)")
    if "memory" not in bases:
        problems.append("no memory cgroup: memory is capped per process (RLIMIT_AS) only")
    if plan.seccomp is None:
        problems.append(f"no seccomp filter ({details.get('seccomp_error', 'unavailable')})")
    elif plan.level == "fallback" and not plan.keeper_seccomp:
        problems.append("no seccomp filter (unshare(1) needs system calls the allow-list denies)")
    if not problems:
        return None
    return "SANDBOX WARNING: " + "; ".join(problems) + "." + russian


@functools.lru_cache(maxsize=1)
def probe_isolation() -> tuple[Plan | None, Isolation]:
    plan, details, fatal = _build_plan()
    if plan is None:
        return None, Isolation(level="none", warning=fatal, process_cap="none", details=details, fatal=fatal)
    if plan.cgroup_base is not None:
        cap = "cgroup"
    elif plan.nproc_rlimit:
        cap = "rlimit"
    else:
        cap = "none"
    return plan, Isolation(level=plan.level, warning=_warning_for(plan, details), process_cap=cap, details=details)


def isolation() -> Isolation:
    """Probe (once per process, cached) what isolation works here.

    Call ``isolation.cache_clear()`` to probe again (tests do, after faking a missing
    bwrap). The probe runs a trivial interpreter through the very sandbox spawn uses.
    """
    return probe_isolation()[1]


isolation.cache_clear = probe_isolation.cache_clear
