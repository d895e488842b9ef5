"""The corpus cache rebuilds quietly only a missing, partial or stale file; a bug is raised."""

from __future__ import annotations

import pickle

import pytest

from autograder.grade import cache, corpus_cache
from autograder.grade.worker_session import Budget


@pytest.fixture
def cache_dir(tmp_path, monkeypatch, corpus):
    """An empty cache folder, and a build that hands back the session's corpus (counted)."""
    monkeypatch.setenv("M5_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "FORMS_READ", dict(cache.FORMS_READ))
    builds = []

    def build(**_):
        builds.append(1)
        return corpus

    monkeypatch.setattr(corpus_cache.corpus_mod, "build_corpus", build)
    path = corpus_cache.cache.corpus_path(None, Budget())
    return path, builds


def test_a_fresh_cache_is_read_and_a_missing_one_built(cache_dir, corpus):
    path, builds = cache_dir
    built = corpus_cache.load_corpus()
    assert builds == [1] and path.exists()
    again = corpus_cache.load_corpus()
    assert builds == [1]  # read, not built
    assert corpus_cache.corpus_requests(again) == corpus_cache.corpus_requests(built)
    assert [len(kc.cases) for kc in again.values()] == [len(kc.cases) for kc in corpus.values()]


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: pickle.dumps(raw)[:1000],  # cut short
        lambda raw: b"not a pickle",
        lambda raw: pickle.dumps({k: v for k, v in list(raw.items())[1:]}),  # a kernel missing
        lambda raw: pickle.dumps({k: {**v, "extra": 1} for k, v in raw.items()}),  # another layout
        lambda raw: pickle.dumps({k: {**v, "cases": [c[:3] for c in v["cases"]]} for k, v in raw.items()}),
    ],
)
def test_a_partial_or_stale_file_is_rebuilt_quietly(cache_dir, corpus, damage):
    path, builds = cache_dir
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage(corpus_cache.detach(corpus)))
    corpus_cache.load_corpus()
    assert builds == [1]
    corpus_cache.load_corpus()  # the rebuilt file is read
    assert builds == [1]


def test_a_bug_while_reading_the_cache_is_raised_not_rebuilt(cache_dir, corpus, monkeypatch):
    path, builds = cache_dir
    corpus_cache.load_corpus()

    def broken(raw, examples):
        raise KeyError("a bug in attach")

    monkeypatch.setattr(corpus_cache, "attach", broken)
    with pytest.raises(KeyError, match="a bug in attach"):
        corpus_cache.load_corpus()
    assert builds == [1]
