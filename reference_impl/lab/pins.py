"""The lab's pinned artifacts: what ``m5 lab --pin`` writes to ``reference_impl/data/``
and how notebooks read it back, with the machine and package identity of the run.

Each section's seed-offset-0 run (:data:`PINNED_KEYS`), every seed stacked
(:data:`SEEDS_PIN`), the numbers the lab notebook prints (:data:`CLAIMS_PIN`) and the
protocol. The ``.npz`` files hold no object arrays and are written byte for byte
deterministically (:func:`write_npz`).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import platform
import zipfile
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import numpy as np

from reference_impl.course_run import claim_bounds, format_interval
from reference_impl.lab.comparisons import compact_phrase
from reference_impl.lab.design import DESIGN_OFFSETS
from reference_impl.lab.labels import LABELS, LANGUAGES
from reference_impl.lab.profiles import LabProfile
from reference_impl.numerics import numerics_description

__all__ = [
    "DATA_DIR",
    "PROTOCOL_FILE",
    "CLAIMS_PIN",
    "SEEDS_PIN",
    "BY_SEED",
    "PINNED_KEYS",
    "ARTIFACT_SCOPE",
    "write_npz",
    "load_pinned",
    "machine_description",
    "cpu_identity",
    "same_machine",
    "package_versions",
    "nan_none",
    "course_numbers",
    "write_pinned",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
PROTOCOL_FILE = "M5_experiment_protocol.json"
#: The full run's claims and comparisons as the lab notebook prints them (see :func:`course_numbers`):
#: the numbers its worked answers quote, over every seed.
CLAIMS_PIN = "M5_course_numbers.json"

#: Pinned artifact -> the arrays it must hold (extra arrays may follow these).
#: Every seed of the run, for the sections whose figures the lab notebook draws over all
#: seeds: ``<section>_<key>`` -> the per-seed results stacked on a first axis of seeds
#: (NaN where a method has no value). One file, so each section's own pin stays the
#: seed-offset-0 run that a one-seed ``--pin`` reproduces byte for byte.
SEEDS_PIN = "M5_lab_seeds.npz"
BY_SEED: dict[str, tuple[str, ...]] = {
    "dagger": (
        "success_rate",
        "budget_bc_success",
        "budget_dagger_success",
        "budget_bc_labels",
        "budget_bc_unseen_share",
        "budget_bc_error_unseen",
        "budget_bc_error_seen",
        "budget_dagger_unseen_share",
        "budget_dagger_error_unseen",
        "budget_dagger_error_seen",
    ),
    "dqn": ("dqn_success", "double_success", "dqn_overestimation", "double_overestimation"),
    "offline": (
        "mean_return",
        "success_rate",
        "greedy_q_mean",
        "greedy_value_true",
        "fqe_logged_value",
        "q_logged_error",
        "q_unlogged_error",
        "optimal_return",
    ),
    "fqe": ("fqe_values", "simulated_values"),
    "dt": ("mean_return", "return_se", "log_returns", "log_outcome_codes"),
    "language": ("exact_match", "heldout_exact_match"),
}

PINNED_KEYS: dict[str, tuple[str, ...]] = {
    "M5_dagger_curve.npz": ("rounds", "success_rate", "budget_labels", "budget_bc_success", "budget_dagger_success"),
    "M5_online_dqn_curve.npz": ("dqn_success", "double_success", "overestimation_episodes", "dqn_overestimation", "double_overestimation"),
    "M5_offline_method_results.npz": (
        "method_names",
        "mean_return",
        "success_rate",
        "fqe_names",
        "fqe_values",
        "greedy_q_mean",
        "greedy_value_true",
        "fqe_logged_values",
        "q_logged_error",
        "q_unlogged_error",
        "above_max_share",
        "optimal_return",
    ),
    "M5_decision_transformer_results.npz": ("target_return", "mean_return", "log_returns"),
    "M5_language_ilql_results.npz": ("method_names", "exact_match"),
}

ARTIFACT_SCOPE = LABELS["en"]["nb.artifact_scope"]


def write_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to a compressed ``.npz`` byte-for-byte deterministically.

    Members are written in sorted order with a fixed timestamp, and through a
    temporary file then renamed, so equal arrays give an identical file. Raises
    ValueError when an array has dtype object (it would need pickle to load).
    """
    path = Path(path)
    for key, value in arrays.items():
        if np.asarray(value).dtype == object:
            raise ValueError(f"write_npz: array `{key}` has dtype object; store names as fixed-width unicode")
    tmp = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(arrays[key]), allow_pickle=False)
            archive.writestr(info, buffer.getvalue())
    os.replace(tmp, path)


def load_pinned(name: str, data_dir: str | os.PathLike | None = None):
    """Load a pinned artifact by file name, with or without its extension.

    ``.npz`` artifacts come back as ``{key: ndarray}`` (loaded with
    ``allow_pickle=False``); the protocol (``M5_experiment_protocol``) as a dict.
    Raises ValueError for a name that is not a pinned artifact and FileNotFoundError
    (with the command that regenerates it) when the file is missing.
    """
    known = {Path(n).stem: n for n in (*PINNED_KEYS, PROTOCOL_FILE, CLAIMS_PIN, SEEDS_PIN)}
    stem = Path(str(name)).stem if str(name).endswith((".npz", ".json")) else str(name)
    if stem not in known:
        raise ValueError(f"load_pinned: `name` must be one of {sorted(known)}, got {name!r}")
    path = Path(DATA_DIR if data_dir is None else data_dir) / known[stem]
    if not path.is_file():
        raise FileNotFoundError(
            f"load_pinned: {path} is missing; regenerate it with `make pin` "
            "(m5 lab --profile full --seeds 10 --out docs/lab-results --lang en --lang ru --pin)"
        )
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    with np.load(path, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in ("numpy", "torch", "gymnasium", "matplotlib"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - all are pinned deps
            versions[package] = "missing"
    return versions


def machine_description() -> dict[str, str]:
    """What, besides the package versions, decides the bits of a run's floats.

    torch picks its vectorised CPU kernels by the instructions the CPU offers
    (``get_cpu_capability``: AVX2, AVX512, ...), and its BLAS (MKL) picks its own code
    path by the CPU's vendor and model; both sum in different orders. Measured: forcing
    torch's default kernels (``ATEN_CPU_CAPABILITY=default``) changes the online DQN
    curves; on two AMD hosts (family 25, one AVX2, one AVX512) the pins of 2026-12-01
    (made on a host described only as x86_64, with the same code and packages) came
    out with the same differences (20 and 24 of 130 DQN flags, FQE values within
    0.064). So the capability alone does not name the machine: the record names the
    CPU too, and the code-path settings of :mod:`reference_impl.numerics` in effect.
    """
    import torch  # the machine's identity only: pins are read without torch

    return {
        "arch": platform.machine(),
        "cpu": cpu_identity(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        **numerics_description(),
    }


def cpu_identity(cpuinfo: str = "/proc/cpuinfo") -> str:
    """``"<vendor_id> family <f> model <m>"`` of the first CPU, e.g. ``"AuthenticAMD family
    25 model 17"``; ``platform.processor()`` where ``/proc/cpuinfo`` is missing."""
    fields: dict[str, str] = {}
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "vendor_id" in fields:
        return f"{fields['vendor_id']} family {fields.get('cpu family', '?')} model {fields.get('model', '?')}"
    return platform.processor() or "unknown"


def same_machine(a: Mapping, b: Mapping) -> bool:
    """Whether two run records (protocol or claims.json) come from equivalent machines.

    Only then must a rerun reproduce a committed run bit for bit. A record written
    before the machine was described this fully (``machine`` missing, a bare
    architecture string, or a description without ``cpu``) never equals a current
    description: what decided its bits is unknown.
    """
    machine = a.get("machine")
    return isinstance(machine, dict) and machine == b.get("machine") and a.get("package_versions") == b.get("package_versions")


def nan_none(values) -> np.ndarray:
    """A list that may hold None (a method without Q, a run without FQE) as floats with NaN."""
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def _pinned_arrays(results: dict[str, list[dict]]) -> dict[str, dict[str, np.ndarray]]:
    """The pinned artifacts' arrays from the first seed offset's run of each section."""
    dagger, dqn, off, fqe, dt, lang = (results[s][0] for s in ("dagger", "dqn", "offline", "fqe", "dt", "language"))
    return {
        "M5_dagger_curve.npz": {
            "rounds": dagger["rounds"],
            "success_rate": dagger["success_rate"],
            "mean_return": dagger["mean_return"],
            "dataset_size": dagger["dataset_size"],
            "budget_labels": dagger["budget_labels"],
            "budget_bc_success": dagger["budget_bc_success"],
            "budget_dagger_success": dagger["budget_dagger_success"],
        },
        "M5_online_dqn_curve.npz": {
            "dqn_success": dqn["dqn_success"],
            "double_success": dqn["double_success"],
            "overestimation_episodes": dqn["overestimation_episodes"],
            "dqn_overestimation": dqn["dqn_overestimation"],
            "double_overestimation": dqn["double_overestimation"],
            "eval_success_rate": np.asarray([dqn["dqn_eval_success"], dqn["double_eval_success"]]),
        },
        "M5_offline_method_results.npz": {
            "method_names": np.asarray(off["method_names"], dtype=str),
            "mean_return": np.asarray(off["mean_return"], dtype=np.float64),
            "success_rate": np.asarray(off["success_rate"], dtype=np.float64),
            "fqe_names": np.asarray(fqe["fqe_names"], dtype=str),
            "fqe_values": np.asarray(fqe["fqe_values"], dtype=np.float64),
            "fqe_simulated_values": np.asarray(fqe["simulated_values"], dtype=np.float64),
            "greedy_q_mean": nan_none(off["greedy_q_mean"]),
            "greedy_value_true": np.asarray(off["greedy_value_true"], dtype=np.float64),
            "logged_pair_share": np.asarray(off["logged_pair_share"], dtype=np.float64),
            "fqe_logged_values": nan_none(off["fqe_logged_value"]),
            "q_logged_error": nan_none(off["q_logged_error"]),
            "q_unlogged_error": nan_none(off["q_unlogged_error"]),
            "above_max_share": nan_none(off["above_max_share"]),
            "optimal_return": np.asarray(off["optimal_return"], dtype=np.float64),
        },
        "M5_decision_transformer_results.npz": {
            "target_return": dt["target_return"],
            "mean_return": dt["mean_return"],
            "success_rate": dt["success_rate"],
            "data_return_range": dt["data_return_range"],
            "log_returns": dt["log_returns"],
            "return_se": dt["return_se"],
            "log_outcome_codes": dt["log_outcome_codes"],
        },
        "M5_language_ilql_results.npz": {
            "method_names": np.asarray(lang["method_names"], dtype=str),
            "exact_match": np.asarray(lang["exact_match"], dtype=np.float64),
            "mean_reward": np.asarray(lang["mean_reward"], dtype=np.float64),
            "heldout_exact_match": np.asarray(lang["heldout_exact_match"], dtype=np.float64),
            "heldout_mean_reward": np.asarray(lang["heldout_mean_reward"], dtype=np.float64),
        },
    }


def _seeds_arrays(results: dict[str, list[dict]]) -> dict[str, np.ndarray]:
    """:data:`SEEDS_PIN`'s arrays: :data:`BY_SEED` of every section, stacked over seeds."""
    arrays = {"seeds": np.asarray(len(results["offline"]), dtype=np.int64)}
    for section, keys in BY_SEED.items():
        runs = results[section]
        arrays[f"{section}_seed_ids"] = np.asarray([r["seed"] for r in runs], dtype=np.int64)
        for key in keys:
            arrays[f"{section}_{key}"] = np.stack([nan_none(r[key]) if np.ndim(r[key]) else np.float64(r[key]) for r in runs])
    return arrays


def course_numbers(document: Mapping) -> dict:
    """``{"seeds": n, "rows": {id: {"value": {lang}, "text": {lang}}}}``: each claim and
    comparison of a claims.json as the lab notebook shows it. A claim's value is the mean of
    the runs with its 95 % interval (``0.72 [0.55, 0.90]``, :func:`course_run.format_interval`);
    a comparison's is the paired difference with its interval
    and the verdict the interval allows (``+0.16 [+0.15, +0.18]: ahead``). Formatted once
    here, at two decimals, so the kit ships what students read and every language reads the
    same numbers."""
    rows: dict[str, dict] = {}
    for cid, entry in document["claims"].items():
        value = format_interval(entry["per_seed"], 2, bounds=claim_bounds(cid))
        rows[cid] = {"value": dict.fromkeys(LANGUAGES, value), "text": entry["text"]}
    for cid, entry in document.get("comparisons", {}).items():
        rows[cid] = {"value": {lang: compact_phrase(entry, lang) for lang in LANGUAGES}, "text": entry["text"]}
    return {"seeds": document["seeds"], "rows": rows}


def _protocol(profile: LabProfile, offsets: range, verdicts: dict) -> dict:
    params = {s: dataclasses.asdict(getattr(profile, s)) for s in ("environment", "dagger", "dqn", "log", "offline", "dt", "language")}
    return {
        "artifact_scope": ARTIFACT_SCOPE.format(seeds=len(offsets)),
        "command": "m5 lab --profile full --pin" + (f" --seeds {len(offsets)}" if len(offsets) > 1 else ""),
        "profile": profile.name,
        "seeds": {s: {k: v for k, v in p.items() if k.endswith("seed")} for s, p in params.items()},
        "seed_offsets_checked": list(offsets),
        "design_offsets": [DESIGN_OFFSETS.start, DESIGN_OFFSETS.stop - 1],
        "parameters": params,
        "claims": verdicts,
        "artifacts": {name: list(keys) for name, keys in PINNED_KEYS.items()},
        "package_versions": package_versions(),
        "machine": machine_description(),
    }


def write_pinned(
    results: dict[str, list[dict]], profile: LabProfile, offsets: range, verdicts: dict, data_dir: Path, document: Mapping | None = None
) -> list[Path]:
    data_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, arrays in _pinned_arrays(results).items():
        missing = [k for k in PINNED_KEYS[name] if k not in arrays]
        assert not missing, f"{name} lacks {missing}"  # guards this module's own tables
        write_npz(data_dir / name, arrays)
        written.append(data_dir / name)
    write_npz(data_dir / SEEDS_PIN, _seeds_arrays(results))
    written.append(data_dir / SEEDS_PIN)
    path = data_dir / PROTOCOL_FILE
    path.write_text(
        json.dumps(_protocol(profile, offsets, verdicts), indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    written.append(path)
    if document is not None:
        (data_dir / CLAIMS_PIN).write_text(json.dumps(course_numbers(document), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(data_dir / CLAIMS_PIN)
    return written
