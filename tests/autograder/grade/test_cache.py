"""The corpus cache's key and the module a grading run starts its first worker from."""

from __future__ import annotations

import subprocess
import sys

from autograder.grade import cache


def test_the_cache_module_imports_neither_hypothesis_nor_the_pipeline():
    # m5 grade imports it (and starts the first worker) before the grading modules:
    # importing Hypothesis here would put its 0.2 s back in front of the worker's start.
    code = (
        "import sys, autograder.grade.cache\n"
        "print(sorted(m for m in ('hypothesis', 'autograder.grade.pipeline', 'autograder.grade.corpus')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_key_changes_with_hypothesis_the_sources_and_the_examples(monkeypatch, tmp_path):
    import hypothesis

    assert f"{hypothesis.__version__.split('.')[1]}".encode() in cache._hypothesis_version()  # found without importing
    key = cache.corpus_key(None)
    assert cache.corpus_key(None) == key and cache.corpus_key(50) != key
    monkeypatch.setattr(cache, "_hypothesis_version", lambda: b"__version_info__ = (99, 0, 0)")
    assert cache.corpus_key(None) != key  # another Hypothesis draws another corpus
    monkeypatch.undo()
    (tmp_path / "autograder" / "grade").mkdir(parents=True)
    for module in cache.KEY_SOURCES:
        target = tmp_path / module
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((cache.ROOT / module).read_bytes())
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    assert cache.corpus_key(None) == key
    (tmp_path / "autograder/grade/worker/wire.py").write_bytes(b"# changed\n")
    assert cache.corpus_key(None) != key  # the worker forms cached beside the corpus change with it
