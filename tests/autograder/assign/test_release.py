"""Source notebooks and the student release: no drift, nbgrader format, and no leaks.

The release is what a student receives; everything in it is public. These tests scan
it for solution code (kernel and torch-port bodies, private helpers), hidden tests,
worked answers and solution prose, check that the student library's kernels are
stubs that name the notebook, and that a release notebook filled with a correct
implementation runs end to end and passes `m5 check`.
"""

from __future__ import annotations

import json
import keyword
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from classroom import RELEASE_ROOT, SOURCE_ROOT, filled_notebook  # tests/autograder is on sys.path
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_impl
from autograder.assign import lab_source, notebooks, release, sources
from reference_impl import exercises

RELEASE_EN = RELEASE_ROOT / sources.ASSIGNMENTS["en"]
ASSIGNMENT = ("m05_assignment_en.ipynb", "m05_assignment_ru.ipynb")
LAB = ("m05_lab_en.ipynb", "m05_lab_ru.ipynb")


def _lang(name: str) -> str:
    return Path(name).stem.rsplit("_", 1)[1]


def source_nb(name: str) -> Path:
    """A source notebook by file name (each language is its own nbgrader assignment folder)."""
    return SOURCE_ROOT / sources.ASSIGNMENTS[_lang(name)] / name


def release_nb(name: str) -> Path:
    return RELEASE_ROOT / sources.ASSIGNMENTS[_lang(name)] / name


def _text_files(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if release._is_cache(path.relative_to(folder)):
            continue
        if path.is_file() and path.suffix in (".py", ".ipynb", ".md", ".json", ".txt"):
            out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def release_texts() -> dict[str, str]:
    for assignment in sources.ASSIGNMENTS.values():
        assert (RELEASE_ROOT / assignment).is_dir(), f"release/{assignment} is missing: run `m5 release`"
    return _text_files(RELEASE_ROOT)


def _solution_regions(path: Path) -> list[list[str]]:
    regions, current = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() == "### BEGIN SOLUTION":
            current = []
        elif line.strip() == "### END SOLUTION":
            regions.append(current)
            current = None
        elif current is not None:
            current.append(line.strip())
    return regions


def _distinctive(lines: list[str]) -> list[str]:
    """Lines long enough to identify solution code (short ones like `return r` are generic)."""
    return [line for line in lines if len(line) >= 30 and not line.startswith("#")]


# ------------------------------------------------------------------ sources
def test_committed_sources_match_the_builder():
    built = notebooks.build_notebooks()
    assert sorted(built) == sorted(p.name for p in SOURCE_ROOT.glob("module05_*/*.ipynb"))
    for name, nb in built.items():
        assert source_nb(name).read_text(encoding="utf-8") == sources.notebook_text(nb), f"{name} is stale: run `m5 release`"


def test_source_folders_are_what_m5_release_writes(tmp_path):
    """Notebooks (committed) and the student kit (m5_student, requirements.txt, README.md:
    built by every test run and by `m5 release`) of each assignment folder."""
    built = release.build_sources(tmp_path)
    assert sorted(p.name for p in built) == ["module05_en", "module05_ru"]
    assert sorted(p.name for p in SOURCE_ROOT.iterdir() if p.is_dir()) == ["module05_en", "module05_ru"]
    for folder in built:
        fresh, here = release.release_files(folder), release.release_files(SOURCE_ROOT / folder.name)
        assert sorted(fresh) == sorted(here)
        stale = [name for name in fresh if fresh[name] != here[name]]
        assert not stale, f"source/{folder.name} is stale (run `m5 release`): {stale}"
        assert {
            "m5_student/__init__.py",
            "m5_student/__main__.py",
            "m5_student/selfcheck.py",
            "m5_student/answer_format.json",
            "requirements.txt",
            "README.md",
        } <= set(fresh)


def test_only_the_instructor_notebooks_are_committed_under_source():
    """The kit is a build output: git holds the notebooks (and the builder script), never a kit copy."""
    listed = subprocess.run(["git", "ls-files", "source"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    tracked = listed.stdout.split()
    assert tracked and all(name.endswith(".ipynb") or name == "source/build.py" for name in tracked), tracked
    ignored = subprocess.run(["git", "check-ignore", "-q", "source/module05_en/m5_student/kernels.py"], cwd=REPO)
    assert ignored.returncode == 0


@pytest.mark.parametrize("pair", [ASSIGNMENT, LAB])
def test_english_and_russian_notebooks_differ_in_words_only(pair):
    """Same code (tests/autograder/i18n/test_contracts_ru.py compares it closely), translated markdown."""
    en, ru = (nbformat.read(source_nb(name), as_version=4) for name in pair)
    assert sources.code_cells(en) == sources.code_cells(ru)
    assert en.metadata["m5"]["lang"] == "en" and ru.metadata["m5"]["lang"] == "ru"
    # The markdown really is translated (not the English text twice).
    ru_text = " ".join(c.source for c in ru.cells if c.cell_type == "markdown")
    assert len(re.findall("[а-яА-Я]", ru_text)) > 1000


@pytest.mark.parametrize("name", ASSIGNMENT + LAB)
def test_nbgrader_metadata_schema_and_unique_grade_ids(name):
    nb = nbformat.read(source_nb(name), as_version=4)
    ids = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if not meta:
            continue
        assert meta["schema_version"] == 3
        assert meta["grade_id"] == cell.id
        if meta["grade"]:
            assert meta["points"] > 0
        ids.append(meta["grade_id"])
    assert len(ids) == len(set(ids))


def test_assignment_has_every_exercise_and_kernel():
    nb = nbformat.read(source_nb(ASSIGNMENT[0]), as_version=4)
    cells = {c.id: c for c in nb.cells}
    meta = {k: c.metadata.get("nbgrader", {}) for k, c in cells.items()}
    for n in exercises.CONCEPTUAL:
        assert cells[f"q{n:02d}_answer"].cell_type == "markdown" and meta[f"q{n:02d}_answer"]["grade"]
    for n in exercises.NUMERICAL_NUMBERS:
        assert f"answer_points({n})" in cells[f"ex{n:02d}_tests"].source
        assert meta[f"ex{n:02d}_tests"]["points"] == len(exercises.ANSWER_NAMES[n])
        for answer_name in exercises.ANSWER_NAMES[n]:
            assert re.search(rf"^{answer_name} = ", cells[f"ex{n:02d}_answer"].source, re.M)
    for kernel in reference_impl.KERNEL_NAMES:
        assert cells[f"kernel_{kernel}"].source.startswith(f"def {kernel}(")
        assert f'kernel_points("{kernel}")' in cells[f"test_{kernel}"].source
        assert meta[f"test_{kernel}"]["points"] == sources.KERNEL_POINTS
        assert f"check({kernel}" in cells[f"check_{kernel}"].source
    assert nb.metadata["m5"]["kind"] == "assignment"


def test_numerical_answer_cells_hold_the_graded_values():
    nb = nbformat.read(source_nb(ASSIGNMENT[0]), as_version=4)
    namespace: dict = {}
    for n in exercises.NUMERICAL_NUMBERS:
        exec(next(c.source for c in nb.cells if c.id == f"ex{n:02d}_answer"), namespace)
    for name, answer in exercises.all_graded_answers().items():
        assert exercises.check_answer(answer, namespace[name]), name


def test_kernel_solution_cells_are_the_reference_code():
    nb = nbformat.read(source_nb(ASSIGNMENT[0]), as_version=4)
    cells = {c.id: c.source for c in nb.cells}
    namespace: dict = {}
    exec(cells["kernel_imports"].replace("from m5_student import validation", "from reference_impl import validation"), namespace)
    for kernel in reference_impl.KERNEL_NAMES:
        exec(cells[f"kernel_{kernel}"], namespace)
        region_lines = {line.strip() for line in cells[f"kernel_{kernel}"].splitlines()}
        for line in _distinctive([code_line for region in _solution_regions(sources.KERNELS_PY) for code_line in region]):
            if f'"{kernel}"' in line:
                assert line in region_lines
    assert list(namespace["dqn_targets"]([0.2, -1.0], [0, 1], [[1.1, 1.6], [10, 20]], gamma=0.95)) == pytest.approx([1.72, -1.0])
    assert namespace["return_to_go"]([1.0, 0.0, -0.5, 2.0]).tolist() == [2.5, 1.5, 1.5, 2.0]


def test_solution_source_rejects_functions_without_markers():
    with pytest.raises(ValueError, match="markers"):
        sources.solution_source("_bootstrap")
    with pytest.raises(ValueError, match="not a function"):
        sources.solution_source("no_such_kernel")


# ------------------------------------------------------------------ the release
def test_release_is_what_m5_release_produces(tmp_path):
    built = release.build_release(tmp_path)
    assert sorted(p.name for p in RELEASE_ROOT.iterdir() if p.is_dir()) == [p.name for p in built]
    for folder in built:
        fresh, committed = release.release_files(folder), release.release_files(RELEASE_ROOT / folder.name)
        assert sorted(fresh) == sorted(committed)
        stale = [name for name in fresh if fresh[name] != committed[name]]
        assert not stale, f"release/{folder.name} is stale (run `m5 release`): {stale}"
        # nbgrader's release carries the whole kit: what it copied is what the source folder holds.
        assert sorted(fresh) == sorted(release.release_files(SOURCE_ROOT / folder.name))


def test_release_has_no_kernel_or_port_solution_code(release_texts):
    for path in (sources.KERNELS_PY, sources.TORCH_KERNELS_PY):
        secret = _distinctive([code_line for region in _solution_regions(path) for code_line in region])
        assert len(secret) > 20
        for name, text in release_texts.items():
            leaked = [line for line in secret if line in text]
            assert not leaked, f"{name} contains solution code of {path.name}: {leaked[:3]}"


def test_release_has_no_private_helper_bodies(release_texts):
    helpers = set()
    for kernel in ("dqn_targets", "fqe_targets"):
        helpers.update(sources.private_helpers(kernel, sources.KERNELS_PY))
    for port in lab_source.PORTS:
        helpers.update(sources.private_helpers(f"{port}_torch", sources.TORCH_KERNELS_PY))
    assert {"_transition_batch", "_bootstrap"} <= helpers
    helper_lines = [f"def {helper}(" for helper in sorted(helpers)]
    helper_lines.append("np.copyto(next_values, 0.0, where=terminated)")
    for name, text in release_texts.items():
        for line in helper_lines:
            assert line not in text, f"{name} contains {line!r}"


def test_release_has_no_markers_or_hidden_tests(release_texts):
    forbidden = (
        "BEGIN HIDDEN TESTS",
        "END HIDDEN TESTS",
        "kernel_points",
        "answer_points",
        "nbgrader_bridge",
        "autograder.hidden",
        "import autograder",
        "from autograder",
    )
    marker = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.M)
    for name, text in release_texts.items():
        for word in forbidden:
            assert word not in text, f"{name} contains {word!r}"
        if name.endswith(".ipynb"):
            for cell in json.loads(text)["cells"]:
                assert not marker.search("".join(cell["source"])), f"{name}: a solution marker survived"
        else:
            assert not marker.search(text), f"{name}: a solution marker survived"


# The course package (and its `m5` command) holds the hidden tests: students never have it.
M5_COMMAND = re.compile(r"`m5 |\bm5 (check|grade|release|solutions|demo|gradescope-bundle)\b")
# Student-facing kit files written for students (m5_student's other modules are reference_impl's loops).
KIT_TEXTS = (
    "README.md",
    "requirements.txt",
    "m5_student/__init__.py",
    "m5_student/__main__.py",
    "m5_student/selfcheck.py",
    "m5_student/checks.py",
    "m5_student/checks_text.py",
    "m5_student/notebook.py",
)


def test_no_student_facing_text_tells_students_to_run_m5(release_texts):
    for assignment in sources.ASSIGNMENTS.values():
        names = [f"{assignment}/{name}" for name in KIT_TEXTS]
        names += [name for name in release_texts if name.startswith(assignment) and name.endswith(".ipynb")]
        assert len(names) == len(KIT_TEXTS) + 2
        for name in names:
            match = M5_COMMAND.search(release_texts[name])
            assert not match, f"{name} tells students to run {match.group(0)!r}"
        assert "python -m m5_student check" in release_texts[f"{assignment}/README.md"]


def test_release_has_no_worked_answers(release_texts):
    assignments = re.compile(r"^\s*(" + "|".join(exercises.all_graded_answers()) + r")\s*=", re.M)
    prose = []
    for lang in sources.LANGS:
        for n in exercises.EXERCISE_NUMBERS:
            answer = sources.exercise_text(n, lang)["answer"]
            prose += [
                s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", answer) if len(s.strip()) >= 60 and not s.strip().startswith("def ")
            ]  # signatures are public
        for text in lab_source.TEXT[lang]["answers"].values():
            prose.append(text[:80])
    assert len(prose) > 50
    for name, text in release_texts.items():
        assert not assignments.search(text), f"{name} assigns a graded answer"
        if name.endswith(".ipynb"):
            body = " ".join("".join(c["source"]) for c in json.loads(text)["cells"])
            leaked = [p for p in prose if p in body]
            assert not leaked, f"{name} contains solution prose: {leaked[:2]}"
    assert "exercises.py" not in {Path(n).name for n in release_texts}


def test_release_notebooks_have_stubs_in_their_language_and_no_outputs():
    from autograder.assign.stubs import STUBS

    for name in ASSIGNMENT + LAB:
        nb = nbformat.read(release_nb(name), as_version=4)
        stubs, other = STUBS[_lang(name)], STUBS["ru" if _lang(name) == "en" else "en"]
        solution_cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        assert solution_cells
        for cell in solution_cells:
            if cell.cell_type == "code":
                lines = [line.strip() for line in cell.source.splitlines()]
                assert stubs["header"] in "\n".join(lines) and other["header"] not in "\n".join(lines)
                function = re.search(r"^def (\w+)\(", cell.source, re.MULTILINE)
                if function:  # a kernel or a port: it raises, saying which function to write
                    message = stubs["function"].format(name=function[1])
                    assert lines[-1] == f"raise NotImplementedError({json.dumps(message, ensure_ascii=False)})"
                else:  # numerical answers: every name the answer cell asks for starts as None
                    asked = re.findall(r"^#   (ex\d\d_\w+):", cell.source, re.MULTILINE)
                    assert asked and lines[-len(asked) :] == [f"{name} = None" for name in asked]
            else:
                assert cell.source == stubs["text"]
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None


def test_student_library_kernels_raise_not_implemented_naming_the_notebook():
    script = """
import inspect, sys, torch
import m5_student
from m5_student import torch_kernels
out = []
for name in m5_student.KERNEL_NAMES:
    try:
        fn = getattr(m5_student, name)
        required = [p for p in inspect.signature(fn).parameters.values() if p.default is p.empty and p.kind == p.POSITIONAL_OR_KEYWORD]
        fn(*([[1.0]] * len(required)))
        out.append(name + ': no error')
    except NotImplementedError as exc:
        out.append(str(exc))
for name in ('masked_token_nll_torch', 'cql_discrete_penalty_torch', 'expectile_loss_torch', 'iql_advantage_weights_torch'):
    try:
        getattr(torch_kernels, name)(torch.zeros(2), torch.ones(2))
        out.append(name + ': no error')
    except NotImplementedError as exc:
        out.append(str(exc))
print('\\n'.join(out))
"""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # keep release/ free of caches
    for lang, (assignment, lab) in {
        "en": ("the assignment notebook (Part 3)", "the lab notebook (section 5a)"),
        "ru": ("ноутбуке задания (часть 3)", "ноутбуке лабораторной работы (раздел 5a)"),
    }.items():
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=RELEASE_ROOT / sources.ASSIGNMENTS[lang],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        verb = release.STUB_MESSAGES[lang]["message"].split()[0]
        for name in reference_impl.KERNEL_NAMES:
            assert f"{verb} {name} в {assignment}" in lines if lang == "ru" else f"{verb} {name} in {assignment}" in lines
        for name in lab_source.PORTS:
            assert f"{verb} {name}_torch в {lab}" in lines if lang == "ru" else f"{verb} {name}_torch in {lab}" in lines


def test_stub_solutions_rejects_unbalanced_markers():
    with pytest.raises(release.ReleaseError, match="without END"):
        release.stub_solutions("def f():\n    ### BEGIN SOLUTION\n    return 1\n", "assignment")
    with pytest.raises(release.ReleaseError, match="without BEGIN"):
        release.stub_solutions("def f():\n    return 1\n    ### END SOLUTION\n", "assignment")


def test_filled_release_notebook_runs_and_passes_m5_check(tmp_path):
    import shutil

    from nbclient import NotebookClient

    from autograder.check import selfcheck

    folder = tmp_path / "module05_en"
    shutil.copytree(RELEASE_EN, folder)
    nb = filled_notebook(release_nb(ASSIGNMENT[0]), source_nb(ASSIGNMENT[0]))
    path = folder / ASSIGNMENT[0]
    nbformat.write(nb, path)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "FAIL" not in printed and "public checks passed" in printed
    assert selfcheck.main(path) == 0


@pytest.mark.slow
def test_filled_release_lab_trains_with_the_students_code_only(tmp_path, monkeypatch):
    """The stubs in m5_student are never reached: every loop gets the notebook's kernels and ports.

    Slow (~35 s); the default suite covers the same path with the source lab, which
    also imports the stubbed m5_student of its folder (tests/notebooks).
    """
    import shutil

    from nbclient import NotebookClient

    folder = tmp_path / "module05_en"
    shutil.copytree(RELEASE_EN, folder)
    nbformat.write(filled_notebook(release_nb(ASSIGNMENT[0]), source_nb(ASSIGNMENT[0])), folder / ASSIGNMENT[0])
    nb = filled_notebook(release_nb(LAB[0]), source_nb(LAB[0]))
    monkeypatch.setenv("RL_LLM_M5_PROFILE", "smoke")
    monkeypatch.setenv("M5_PROGRESS", "0")
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    errors = [f"{c.id}: {o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


_IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda s: s not in keyword.kwlist)
_BODY_LINE = st.from_regex(r"[a-z_]{1,8} = [1-9][0-9]{0,3}", fullmatch=True).filter(
    lambda line: not keyword.iskeyword(line.split(" = ")[0])
)


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(_IDENT, min_size=1, max_size=4, unique=True),
    bodies=st.lists(st.lists(_BODY_LINE, min_size=1, max_size=4), min_size=4, max_size=4),
    nested=st.booleans(),
)
def test_stub_solutions_property(names, bodies, nested):
    """Any module of functions with solution regions: every region becomes a stub naming its function."""
    chunks = []
    for name, body in zip(names, bodies):
        indent = "        " if nested else "    "
        head = f'def {name}(x):\n    """doc"""\n' + ("    if True:\n" if nested else "")
        region = "".join(f"{indent}{line}\n" for line in body)
        chunks.append(f"{head}{indent}### BEGIN SOLUTION\n{region}{indent}### END SOLUTION\n")
    source = "\n\n".join(chunks)
    out = release.stub_solutions(source, "assignment")
    namespace: dict = {}
    exec(compile(out, "<stubbed>", "exec"), namespace)
    assert "SOLUTION" not in out
    for name in names:
        with pytest.raises(NotImplementedError, match=f"implement {name} in the assignment notebook"):
            namespace[name](0)
    # Body lines are gone (each one is unique enough: `name = number`).
    remaining = {line.strip() for line in out.splitlines()}
    assert not any(line in remaining for body in bodies[: len(names)] for line in body)


def test_drop_unused_private_functions_keeps_used_helpers():
    source = (
        "def _used(x):\n    return x\n\n\ndef _orphan(x):\n    return -x\n    # trailing comment\n\n\ndef public(x):\n    return _used(x)\n"
    )
    out = release.drop_unused_private_functions(source)
    assert "_orphan" not in out and "def _used(" in out and "def public(" in out
    exec(compile(out, "<dropped>", "exec"), {})


# As Jupyter, VS Code, nbconvert or nbgrader may leave the environment: none of it matters.
ENVIRONMENTS = [
    {},
    {"JPY_SESSION_NAME": "m05_assignment_en.ipynb"},
    {"JPY_SESSION_NAME": "m05_lab_ru.ipynb"},
    {"__vsc_ipynb_file__": "/home/s/m05_assignment_en.ipynb", "LANG": "en_US.UTF-8"},
    {"M5_LANG": "en"},
    {"M5_LANG": "ru"},
]


@pytest.mark.parametrize("root", [SOURCE_ROOT, RELEASE_ROOT], ids=["source", "release"])
@pytest.mark.parametrize("lang", sources.LANGS)
def test_each_kit_knows_the_language_of_its_notebooks_whatever_the_environment(root, lang):
    folder = root / sources.ASSIGNMENTS[lang]
    for path in folder.glob("*.ipynb"):
        assert json.loads(path.read_text(encoding="utf-8"))["metadata"]["m5"]["lang"] == lang
    for extra in ENVIRONMENTS:
        env = {"PATH": "", "PYTHONDONTWRITEBYTECODE": "1", **extra}
        proc = subprocess.run(
            [sys.executable, "-c", "import m5_student; print(m5_student.notebook_language())"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.stdout.strip() == lang, (extra, proc.stderr)


@pytest.mark.parametrize("lang", sources.LANGS)
def test_under_grading_the_kit_speaks_the_language_the_grader_passes(lang):
    """The grader's sandbox holds one kit (release/module05_en) for every submission."""
    env = {"PATH": "", "PYTHONDONTWRITEBYTECODE": "1", "M5_GRADING": "1", "M5_LANG": lang}
    proc = subprocess.run(
        [sys.executable, "-c", "import m5_student; print(m5_student.notebook_language())"],
        cwd=RELEASE_EN,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == lang, proc.stderr
    env["M5_LANG"] = "de"  # not a course language: the kit's own
    proc = subprocess.run(
        [sys.executable, "-c", "import m5_student; print(m5_student.notebook_language())"],
        cwd=RELEASE_EN,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "en", proc.stderr


# ------------------------------------------------------------------ m5_student.notebook (student glue)
@pytest.fixture(scope="module")
def glue():
    import importlib.util

    spec = importlib.util.spec_from_file_location("m5_notebook_glue", release.EXTRAS / "notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_port_accepts_the_reference_twins(glue, capsys):
    from reference_impl import kernels, torch_kernels

    for name in glue.PORTS:
        assert glue.check_port(getattr(torch_kernels, f"{name}_torch"), getattr(kernels, name), name, cases=8)
    assert "values and gradients match" in capsys.readouterr().out


def test_check_port_rejects_wrong_values_and_wrong_gradients(glue, capsys):
    import torch

    from reference_impl import kernels

    def unweighted_expectile(diff, tau):  # wrong value: ignores the asymmetric weight
        return 0.5 * (diff * diff).mean()

    def detached_nll(token_logprobs, mask):  # right value, no gradient
        return torch.tensor(kernels.masked_token_nll(token_logprobs.detach().numpy(), mask.numpy()))

    def unclipped_weights(advantages, beta, max_weight=100.0):  # exceeds the cap
        return torch.exp(beta * advantages)

    assert not glue.check_port(unweighted_expectile, kernels.expectile_loss, "expectile_loss", cases=8)
    assert not glue.check_port(detached_nll, kernels.masked_token_nll, "masked_token_nll", cases=8)
    assert not glue.check_port(unclipped_weights, kernels.iql_advantage_weights, "iql_advantage_weights", cases=25)
    assert "FAIL" in capsys.readouterr().out
    with pytest.raises(ValueError, match="name"):
        glue.check_port(unweighted_expectile, kernels.expectile_loss, "no_such_loss")


def test_load_kernels_takes_the_notebook_that_implements_them(glue, tmp_path):
    import shutil

    shutil.copyfile(release_nb(ASSIGNMENT[1]), tmp_path / ASSIGNMENT[1])  # Russian: stubs only
    assert glue.find_assignment(tmp_path, "ru").name == ASSIGNMENT[1]
    stubbed = glue.load_kernels(tmp_path / ASSIGNMENT[1])
    with pytest.raises(NotImplementedError):
        stubbed["dqn_targets"]([0.0], [1], [[0.0]])
    shutil.copyfile(source_nb(ASSIGNMENT[0]), tmp_path / ASSIGNMENT[0])  # English: implemented
    assert glue.find_assignment(tmp_path, "ru").name == ASSIGNMENT[0]
    import sys as _sys

    _sys.path.insert(0, str(RELEASE_EN))
    try:
        kernels = glue.load_kernels(tmp_path / ASSIGNMENT[0])
    finally:
        _sys.path.remove(str(RELEASE_EN))
    assert sorted(kernels) == sorted(reference_impl.KERNEL_NAMES)
    assert kernels["return_to_go"]([1.0, 0.0, -0.5, 2.0]).tolist() == [2.5, 1.5, 1.5, 2.0]
    with pytest.raises(FileNotFoundError):
        glue.find_assignment(tmp_path / "empty")


def test_load_kernels_says_which_saved_file_it_read_and_how_many_kernels_it_holds(glue, tmp_path, capsys):
    import datetime
    import os
    import shutil

    path = tmp_path / ASSIGNMENT[1]
    shutil.copyfile(release_nb(ASSIGNMENT[1]), path)  # stubs only
    saved = datetime.datetime(2026, 3, 1, 14, 5)
    os.utime(path, (saved.timestamp(), saved.timestamp()))
    glue.load_kernels(path, lang="ru")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Ваши ядра: написано 0 из 10, прочитаны из {ASSIGNMENT[1]} в версии, сохранённой 2026-03-01 14:05."
    assert "сохраняйте ноутбук задания после каждого изменения" in lines[1]
    shutil.copyfile(source_nb(ASSIGNMENT[0]), path)  # every kernel written
    glue.load_kernels(path, lang="en")
    out = capsys.readouterr().out
    assert f"Your kernels: 10 of 10 written, read from {ASSIGNMENT[1]} as saved at " in out
    assert "save the assignment notebook after each change, and keep a helper a kernel calls inside that kernel's cell" in out


def test_setup_cell_finds_the_kit_next_to_the_notebook_or_says_where_it_must_be(tmp_path):
    """The first cell of every notebook: m5_student next to it (as nbgrader's release leaves it), else one bilingual error."""
    nb = nbformat.read(release_nb(ASSIGNMENT[1]), as_version=4)
    setup = next(c.source for c in nb.cells if c.id == "setup")
    env = {"PATH": "", "PYTHONDONTWRITEBYTECODE": "1"}
    script = f"exec(compile({setup!r}, 'setup', 'exec')); print(m5_student.__file__)"
    found = subprocess.run(
        [sys.executable, "-c", script], cwd=RELEASE_ROOT / "module05_ru", env=env, capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == RELEASE_ROOT / "module05_ru" / "m5_student" / "__init__.py"
    missing = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0
    assert "m5_student not found" in missing.stderr and "m5_student не найдена" in missing.stderr


# ------------------------------------------------------------------ an untouched Russian notebook
def test_the_grader_sees_an_untouched_russian_release_notebook_as_not_implemented(corpus):
    """The localised stub (# ВАШ КОД) still raises NotImplementedError: nothing is graded as an attempt."""
    from autograder.grade import pipeline
    from autograder.grade.judge import LOST

    result = pipeline.grade_submission(release_nb(ASSIGNMENT[1]), corpus, answers=True, shrink=False)
    assert result.language == "ru" and sum(t.score for t in result.tests) == 0
    for kernel in reference_impl.KERNEL_NAMES:
        tests = [t for t in result.tests if t.group == kernel]
        assert tests and all(t.failure.message["ru"] == LOST["not_implemented"]["ru"].format(k=kernel) for t in tests)


def test_the_self_check_and_the_lab_see_an_untouched_russian_notebook_as_untouched(tmp_path, capsys):
    import importlib.util
    import shutil

    from autograder.check import kit, public, selfcheck

    path = tmp_path / ASSIGNMENT[1]
    shutil.copyfile(release_nb(ASSIGNMENT[1]), path)
    assert kit.check_notebook(path, formats=selfcheck.answer_formats()) == 1
    out = capsys.readouterr().out
    for kernel in reference_impl.KERNEL_NAMES:
        assert public.TEXT["ru"]["not_impl"].format(name=kernel) in out.splitlines()
    spec = importlib.util.spec_from_file_location("m5_notebook_glue_ru", release.EXTRAS / "notebook.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    assert glue._implemented(path) == 0
