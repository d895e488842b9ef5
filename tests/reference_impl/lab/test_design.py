"""Design seeds and report seeds: the committed report uses only seeds nobody looked at while choosing settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reference_impl import numerics
from reference_impl.lab import cli as lab_cli
from reference_impl.lab import design as lab_design
from reference_impl.lab import pins as lab_pins
from reference_impl.lab import profiles as lab_profiles
from reference_impl.lab import results as lab_results
from reference_impl.lab import runners as lab_runners
from reference_impl.lab import tasks as lab_tasks
from reference_impl.lab.profiles import PROFILE_PARAMS

COMMITTED = lab_results.DEFAULT_CLAIMS


def test_pin_defaults_to_the_report_block_and_refuses_design_offsets():
    options = lab_cli.parse_options(["--pin"], {})
    assert options.first_offset == lab_design.REPORT_FIRST_OFFSET and options.offsets[0] == 100
    assert lab_cli.parse_options(["--seeds", "3"], {}).offsets == range(0, 3)  # a student's own run: offset 0 as before
    refusal = r"--pin reports fresh seeds only: offsets \d+\.\.\d+ chose the settings \(design offsets 0\.\.99\)"
    for argv in (["--pin", "--seed-offset", "0"], ["--pin", "--seed-offset", "95", "--seeds", "10"]):
        with pytest.raises(lab_profiles.LabUsageError, match=refusal):
            lab_cli.parse_options(argv, {})
    for bad in ("-1", "ten", "1.5"):
        with pytest.raises(lab_profiles.LabUsageError, match="--seed-offset must be a non-negative integer"):
            lab_cli.parse_options(["--seed-offset", bad], {})


def test_design_seeds_cover_every_seed_field_of_a_section_at_every_design_offset():
    full = PROFILE_PARAMS["full"]
    dt = lab_design.design_seeds(full, "dt")
    for base in (full.dt.data_seed, full.dt.train_seed, full.dt.eval_env_seed, full.dt.eval_seed):
        assert {base, base + 99} <= dt
    assert lab_design.design_seeds(full, "environment") == set()
    assert lab_design.overlapping_offsets(95, 10) == [95, 96, 97, 98, 99] and lab_design.overlapping_offsets(100, 10) == []


def test_every_section_has_its_search_in_both_languages():
    seeded = set(lab_profiles.SECTIONS) - set(lab_runners.UNSEEDED)
    assert set(lab_design.SEARCHES) == seeded
    for section, entry in lab_design.SEARCHES.items():
        assert entry["en"] and entry["ru"] and entry["doc"].startswith("docs/"), section
        assert (Path(__file__).resolve().parents[3] / entry["doc"]).is_file(), entry["doc"]


def test_committed_report_uses_only_fresh_seeds():
    """Every claim of the committed claims.json comes from seeds outside every design seed of its section."""
    document = lab_results.load_document(COMMITTED)
    record = document.get("seed_offsets")
    assert record and record["fresh"] and record["offsets"][0] >= lab_design.REPORT_FIRST_OFFSET, record
    full = PROFILE_PARAMS[document["profile"]]
    for claim_id, entry in document["claims"].items():
        section = claim_id.split(".")[0]
        used = set(entry["seed_ids"]) & lab_design.design_seeds(full, section)
        assert not used, f"{claim_id} reports design seeds {sorted(used)}"


def test_the_report_states_no_seed_counts():
    """Verdicts come from intervals: no 'holds on 9 of 10 seeds' in the report or the protocol record."""
    protocol = lab_pins.load_pinned("M5_experiment_protocol")
    assert "seeds_holding" not in json.dumps(protocol)
    for name in ("report.md", "report.ru.md"):
        text = (COMMITTED.parent / name).read_text(encoding="utf-8")
        assert "holds on" not in text and "выполняется в" not in text, name


def test_numerics_are_pinned_on_import_and_a_users_choice_wins():
    code = "import os, reference_impl; print(os.environ['MKL_CBWR'], os.environ['ATEN_CPU_CAPABILITY'])"
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.split()
    assert out == [numerics.PINNED["MKL_CBWR"], numerics.PINNED["ATEN_CPU_CAPABILITY"]]
    mine = {"MKL_CBWR": "AVX2"}
    assert numerics.pin_numerics(mine) == {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
    assert numerics.numerics_description({}) == dict.fromkeys(numerics.PINNED, "unset")


def test_rewrite_gives_the_same_outputs_without_training_and_refuses_another_run(tmp_path, monkeypatch):
    from tests.reference_impl.lab.test_cli import use_tiny  # the tiny profile: every section in a second or two

    use_tiny(monkeypatch)
    argv = ["--seeds", "2", "--section", "dagger", "dqn", "--out", str(tmp_path)]
    assert lab_cli.main(argv) == 0
    first = (tmp_path / lab_cli.CLAIMS_FILE).read_bytes()
    (tmp_path / lab_cli.CLAIMS_FILE).unlink()
    monkeypatch.setattr(lab_tasks, "RUNNERS", {})  # a rewrite that trained anything would fail here
    assert lab_cli.main([*argv, "--rewrite"]) == 0
    assert (tmp_path / lab_cli.CLAIMS_FILE).read_bytes() == first
    assert lab_cli.main(["--seeds", "3", "--section", "dagger", "dqn", "--out", str(tmp_path), "--rewrite"]) == 2  # another run's results
    with pytest.raises(lab_profiles.LabUsageError, match="--rewrite needs the results.pickle"):
        lab_cli.parse_options(["--rewrite", "--out", str(tmp_path / "empty")], {})
