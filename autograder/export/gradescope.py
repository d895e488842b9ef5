"""Gradescope front door: `m5 gradescope-bundle --out autograder.zip`.

The zip holds the project's installable source (``reference_impl``, ``autograder``,
``pyproject.toml``, ``requirements.lock``) and the two scripts Gradescope runs:

* ``setup.sh`` (once, when the image is built): installs bubblewrap and the pinned
  Python environment, then builds the grading corpus so submissions do not pay for it;
* ``run_autograder`` (per submission): grades the notebook or .py file found in
  ``$ROOT/submission`` with ``m5 grade --json`` and writes ``$ROOT/results/results.json``.

``ROOT`` is ``/autograder`` on Gradescope; ``M5_GS_ROOT`` overrides it (tests use a
temporary folder laid out the same way).
"""
from __future__ import annotations

import stat
import zipfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
INCLUDE = ("pyproject.toml", "requirements.lock", "README.md", "reference_impl", "autograder")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}

SETUP_SH = """#!/usr/bin/env bash
# Gradescope image setup: sandbox, pinned Python environment, prebuilt grading corpus.
set -euo pipefail
ROOT="${M5_GS_ROOT:-/autograder}"
SRC="$ROOT/source"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap python3 python3-venv python3-pip >/dev/null
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install -q --upgrade pip
"$ROOT/venv/bin/pip" install -q -r "$SRC/requirements.lock"
"$ROOT/venv/bin/pip" install -q --no-deps "$SRC"
M5_CACHE_DIR="$ROOT/cache" "$ROOT/venv/bin/python" -c "from autograder.grade.pipeline import load_corpus; load_corpus()"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grade the one submission in $ROOT/submission; write $ROOT/results/results.json.
set -uo pipefail
ROOT="${M5_GS_ROOT:-/autograder}"
export M5_CACHE_DIR="${M5_CACHE_DIR:-$ROOT/cache}"
M5="${M5_BIN:-$ROOT/venv/bin/m5}"
mkdir -p "$ROOT/results"
shopt -s nullglob
files=("$ROOT"/submission/*.ipynb "$ROOT"/submission/*.py)
if [ "${#files[@]}" -eq 0 ]; then
  cat > "$ROOT/results/results.json" <<'JSON'
{"score": 0, "output": "No .ipynb or .py file was submitted. / Не найден файл .ipynb или .py.", "tests": [], "visibility": "visible"}
JSON
  exit 0
fi
tmp="$(mktemp -d)"
if "$M5" grade "${files[0]}" --json --out "$tmp" > "$tmp/results.json" 2> "$tmp/stderr.log"; then
  cp "$tmp/results.json" "$ROOT/results/results.json"
else
  reason="$(tail -n 1 "$tmp/stderr.log" | tr -d '"\\\\')"
  printf '{"score": 0, "output": "The submission could not be read: %s", "tests": [], "visibility": "visible"}\\n' "$reason" > "$ROOT/results/results.json"
fi
rm -rf "$tmp"
"""


def _files():
    for name in INCLUDE:
        path = PROJECT / name
        if path.is_file():
            yield path
        else:
            for child in sorted(path.rglob("*")):
                if child.is_file() and not SKIP_PARTS.intersection(child.parts) and child.suffix != ".pyc":
                    yield child


def build_bundle(out: Path) -> Path:
    """Write the Gradescope autograder zip; returns its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    executable = (stat.S_IFREG | 0o755) << 16
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = executable
            zf.writestr(info, text)
        for path in _files():
            rel = path.relative_to(PROJECT).as_posix()
            info = zipfile.ZipInfo(rel, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, path.read_bytes())
    return out
