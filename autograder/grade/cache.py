"""The corpus cache on disk: where it lives, its key, atomic writes, and the worker
forms cached beside it.

Kept apart from :mod:`pipeline` so that a grading run can start its first sandboxed
worker from the cached forms before the grading modules (and Hypothesis, about 0.2 s
to import) are even imported: this module imports neither.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np

from autograder.grade.call_forms import adopt_forms
from autograder.grade.extract import library_dirs
from autograder.grade.sandbox.paths import cache_dir
from autograder.grade.worker_session import Budget, SpareWorker

ROOT = Path(__file__).resolve().parents[2]
# What the corpus is made from; the last two make the worker forms cached beside it.
KEY_SOURCES = (
    "autograder/hidden/kernels.py",
    "autograder/grade/properties.py",
    "autograder/grade/corpus.py",
    "reference_impl/kernels.py",
    "reference_impl/validation.py",
    "autograder/grade/worker/wire.py",
    "autograder/grade/call_forms.py",
)


def _hypothesis_version() -> bytes:
    """Hypothesis' version module, read without importing Hypothesis: the corpus is
    drawn by it, so another version means another corpus."""
    spec = importlib.util.find_spec("hypothesis")
    if spec is None or spec.origin is None:
        return b"no hypothesis"
    return (Path(spec.origin).parent / "version.py").read_bytes()


def corpus_key(examples: int | None) -> str:
    digest = hashlib.sha256()
    for module in KEY_SOURCES:
        digest.update((ROOT / module).read_bytes())
    digest.update(_hypothesis_version())
    digest.update(f"|{np.__version__}|{examples}".encode())
    return digest.hexdigest()[:16]


def corpus_path(examples: int | None, budget: Budget) -> Path:
    return cache_dir() / f"corpus-{corpus_key(examples)}-{budget.call_timeout:g}.pkl"


def forms_path(corpus_file: Path) -> Path:
    """The worker forms of the corpus' requests, cached beside it (see call_forms.worker_forms)."""
    return corpus_file.with_suffix(".forms.pkl")


def write_atomically(path: Path, obj) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
        pickle.dump(obj, tmp, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp.name, path)


FORMS_READ: dict[Path, tuple[bytes, ...]] = {}  # forms files this process has taken: the requests they hold


def adopt_cached_forms(corpus_file: Path) -> tuple[bytes, ...] | None:
    """Take the cached worker forms (once per process); the corpus requests they are
    for (None: no readable file)."""
    if corpus_file in FORMS_READ:
        return FORMS_READ[corpus_file]
    try:
        with forms_path(corpus_file).open("rb") as fh:
            forms = pickle.load(fh)
        adopt_forms(forms)
        FORMS_READ[corpus_file] = tuple(forms["preload"][0])
        return FORMS_READ[corpus_file]
    except Exception:  # noqa: BLE001 - missing, stale or partial (a damaged pickle raises almost anything): load_corpus makes them again
        return None


def first_worker(budget: Budget = Budget()) -> SpareWorker | None:
    """A recycling worker for the first submission of a one-at-a-time class run, started
    from the cached worker forms before the corpus itself is loaded, so that its start
    (about 0.3 s of CPU) overlaps the load. None when nothing is cached yet. Pass it to
    :func:`pipeline.grade_many` (``first=``), which closes it if it does not fit."""
    requests = adopt_cached_forms(corpus_path(None, budget))
    if requests is None:
        return None
    spare = SpareWorker(import_dirs=library_dirs(), preload=requests, recycle=True)
    spare.remaining = 1
    try:
        spare.refill()
    except Exception:  # noqa: BLE001 - only a head start (e.g. no sandbox here): grading itself reports what stops it
        spare.close()
        return None
    return spare
