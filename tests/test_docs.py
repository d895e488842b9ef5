"""The documentation's own rules: a short README, its command table and docs/cli.md generated
from the parser, no commit hash or CPU model outside the performance page and the bench
history, and every relative link pointing at a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder import cli_docs

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 120
# Where measurements keep the commit and the host they ran on; nowhere else.
MEASUREMENT_LOGS = {ROOT / "docs" / "performance.md", ROOT / "bench" / "HISTORY.md"}
# A commit-like token: 7-40 hex digits with a digit and a letter, standing alone (not part of a
# path, a word, a number with a unit or a longer hex string such as a SHA-256 pin).
COMMIT = re.compile(r"(?<![\w./#-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
CPU_MODEL = re.compile(r"\bfamily \d+\b|\bmodel \d+\b|\bXeon\b|\bEPYC\b|\bRyzen\b|\bAuthenticAMD\b|\bGenuineIntel\b|\bCore\(TM\)", re.I)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def documents() -> list[Path]:
    """The README, the changelog and every Markdown page under docs/ (generated ones included)."""
    return [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def findings(text: str) -> list[str]:
    """Commit-like tokens and CPU models in ``text``."""
    return [m.group(0) for m in COMMIT.finditer(text)] + [m.group(0) for m in CPU_MODEL.finditer(text)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def broken_links(path: Path) -> list[str]:
    """Relative links of ``path`` whose file, or heading in a Markdown file, does not exist."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists() or anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(target)
    return broken


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"
    assert lines[0].startswith("# ") and "make demo" in "\n".join(lines[:6]) and "make test" in "\n".join(lines[:6])


def test_the_command_table_and_the_cli_page_are_what_the_parser_gives():
    assert cli_docs.differences() == [], "run `.venv/bin/python -m autograder.cli_docs --write`"


def test_every_command_of_the_parser_is_in_the_readme_and_the_cli_page():
    readme, page = README.read_text(encoding="utf-8"), cli_docs.CLI_PAGE.read_text(encoding="utf-8")
    for name, command, _purpose in cli_docs.commands():
        assert f"| `m5 {name}` | `{cli_docs.synopsis(name, command)}`" in readme, name
        assert f"\n## m5 {name}\n" in page and "Exit status:" in page, name
        for action in command._actions:
            for flag in action.option_strings:
                assert flag in page or flag in ("-h", "--help"), (name, flag)


@pytest.mark.parametrize("path", [p for p in documents() if p not in MEASUREMENT_LOGS], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_commit_hash_or_cpu_model_outside_the_measurement_pages(path):
    assert findings(path.read_text(encoding="utf-8")) == [], (
        "commit hashes and CPU models belong with their figures in docs/performance.md or bench/HISTORY.md"
    )


def test_the_hash_and_cpu_checks_can_fail():
    assert findings("measured at 9cb5c70 (`21930ec`, run T)") == ["9cb5c70", "21930ec"]
    assert findings("an Intel Xeon (family 6 model 207)") == ["Xeon", "family 6", "model 207"]
    assert findings("on AMD EPYC; AuthenticAMD") == ["EPYC", "AuthenticAMD"]
    for clean in ("1e-150", "seeds 100-299", "deadline", "sha256 " + "ab12" * 16, "docs/a1b2c3d.md", "#a1b2c3d4"):
        assert findings(clean) == [], clean


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_the_link_check_can_fail(tmp_path):
    (tmp_path / "there.md").write_text("# A heading: with `code`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading-with-code) [web](https://example.org) `[no](x.md)`\n"
        "[missing](gone.md) [bad anchor](there.md#nowhere)\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["gone.md", "there.md#nowhere"]
