"""docs/sharding/k8s-indexed-job.yaml is a valid Kubernetes Job: checked against the Job's JSON
schema (kubernetes-validate, which ships the schemas of each Kubernetes release; pinned in
requirements.lock), strictly (no field the schema does not know), for the oldest and the newest
release the package holds; and its shard count agrees with itself. Broken copies are refused."""

from __future__ import annotations

import copy
import re

import kubernetes_validate
import pytest
import yaml
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)
from kubernetes_validate import utils

JOB_FILE = REPO / "docs" / "sharding" / "k8s-indexed-job.yaml"
RELEASES = sorted({utils.all_versions()[0], utils.latest_version()})


def _job() -> dict:
    documents = list(yaml.safe_load_all(JOB_FILE.read_text(encoding="utf-8")))
    assert len(documents) == 1
    return documents[0]


@pytest.mark.parametrize("release", RELEASES)
def test_the_indexed_job_is_valid_against_the_job_schema(release):
    kubernetes_validate.validate(_job(), release, strict=True)


def test_the_job_grades_one_shard_per_index_and_names_every_shard():
    job = _job()
    assert (job["apiVersion"], job["kind"], job["spec"]["completionMode"]) == ("batch/v1", "Job", "Indexed")
    n = job["spec"]["completions"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    command = " ".join(container["args"])
    assert "k=$((JOB_COMPLETION_INDEX + 1))" in command  # indices 0..N-1, shards 1..N
    assert re.search(r"--shard \$k/(\d+)\b", command)[1] == str(n)
    assert job["spec"]["parallelism"] <= n
    assert f"shard-{n} --out" in JOB_FILE.read_text(encoding="utf-8")  # the merge in the comment names shards 1..N


def _broken(job: dict) -> list[tuple[str, dict]]:
    """Copies of ``job`` with one mistake each."""
    cases = []
    for name, path, value in [
        ("completions as text", ("spec", "completions"), "eight"),
        ("an unknown completion mode field", ("spec", "completionsMode"), "Indexed"),
        ("args as one string", ("spec", "template", "spec", "containers", 0, "args"), "m5 grade"),
        ("a port number as text", ("spec", "template", "spec", "containers", 0, "ports"), [{"containerPort": "80"}]),
        ("volumes as a mapping", ("spec", "template", "spec", "volumes"), {"name": "data"}),
    ]:
        broken = copy.deepcopy(job)
        target = broken
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        cases.append((name, broken))
    missing = copy.deepcopy(job)
    del missing["spec"]["template"]["spec"]["containers"][0]["name"]
    cases.append(("a container without a name", missing))
    return cases


@pytest.mark.parametrize("name, broken", _broken(_job()), ids=[name for name, _ in _broken(_job())])
def test_a_broken_job_file_is_refused(name, broken):
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, utils.latest_version(), strict=True)
