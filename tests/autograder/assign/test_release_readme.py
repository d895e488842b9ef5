"""The kit's README and requirements.txt work where only the package registry is reachable,
and give every command a student needs in the shells the README names."""

from __future__ import annotations

import pytest
from classroom import RELEASE_ROOT  # tests/autograder is on sys.path

from autograder.assign import release, sources


@pytest.mark.parametrize("lang", sources.LANGS)
def test_requirements_install_from_the_registry_alone(lang):
    text = (RELEASE_ROOT / sources.ASSIGNMENTS[lang] / "requirements.txt").read_text(encoding="utf-8")
    assert "://" not in text and "--index-url" not in text and "--extra-index-url" not in text
    assert f"torch=={release._pins()['torch']}" in text.splitlines()


@pytest.mark.parametrize("lang", sources.LANGS)
def test_readme_gives_the_commands_in_every_shell_it_names(lang):
    text = (RELEASE_ROOT / sources.ASSIGNMENTS[lang] / "README.md").read_text(encoding="utf-8")
    assert text == release.student_readme(lang)
    for language_part in text.split("\n## ")[1:]:  # each language's half
        torch = release._pins()["torch"]
        assert f"pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu" in language_part
        assert "pip install -r requirements.txt" in language_part
        assert "Activate.ps1" in language_part and "bin/activate" in language_part
        for command in ("RL_LLM_M5_PROFILE=full jupyter lab", '$env:RL_LLM_M5_PROFILE = "full"; jupyter lab', "set RL_LLM_M5_PROFILE=full"):
            assert command in language_part, command
        assert "Ctrl+S" in language_part and "python -m m5_student check" in language_part
        assert "5a" in language_part  # the lab's torch ports are announced
