"""Correct submissions written the way students really write them (issue #12).

Every habit here is a correct submission: each must get full marks. The notebooks
start from the notebook students receive (``release/module05_<lang>/m05_assignment_<lang>.ipynb``)
with its stubs replaced by correct kernels and its answer cells filled, then add one
habit: black formatting, magics and shell escapes (inside ``try`` too), helper cells
that print and plot, a Colab or VS Code export, cells copied into a fresh notebook
without metadata, a self-check call in an answer cell, ... The ``.py`` habits start
from the demo's correct submission: an nbconvert export, cp1251 with a coding line,
a BOM with CRLF, module-level input() and file reads, failing self-tests.

:data:`BROKEN` holds notebooks with real errors: each loses exactly the kernels named.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from adversarial import build  # tests/autograder is on sys.path (pytest rootdir-relative import)

REPO = Path(__file__).resolve().parents[3]
RELEASE_ROOT = REPO / "release"
SOURCE_ROOT = REPO / "source"
CORRECT_SOURCE = build.BASE_SUBMISSION.read_text(encoding="utf-8")
CHUNKS = build.kernel_cells(CORRECT_SOURCE)  # {"setup": imports and helpers, kernel: def}
KERNELS = [name for name in CHUNKS if name != "setup"]
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


@dataclass(frozen=True)
class Habit:
    name: str
    suffix: str  # ".ipynb" or ".py"
    make: Callable[[], str | bytes]  # the file's content
    lang: str = "en"
    # Imports m5_student (needs the library on the worker's path: WorkerSession(import_dirs=)).
    needs_library: bool = False
    lost: frozenset = field(default_factory=frozenset)  # kernels a broken notebook must lose

    def write(self, folder: Path) -> Path:
        path = Path(folder) / f"{self.name}{self.suffix}"
        content = self.make()
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path


# ------------------------------------------------------------------ the received notebook, solved
def _strip_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def instructor_answers(lang: str) -> dict[str, str]:
    """Source of the answer cells (``exNN_answer``) as the worked solutions fill them."""
    nb = nbformat.read(SOURCE_ROOT / f"module05_{lang}" / f"m05_assignment_{lang}.ipynb", as_version=4)
    return {c.id: _strip_markers(c.source) for c in nb.cells if c.cell_type == "code" and c.id.endswith("_answer")}


def instructor_kernels(lang: str = "en") -> dict[str, str]:
    """The instructor's kernel cells (they use ``v.``, the m5_student.validation helpers)."""
    nb = nbformat.read(SOURCE_ROOT / f"module05_{lang}" / f"m05_assignment_{lang}.ipynb", as_version=4)
    return {
        c.id[len("kernel_") :]: _strip_markers(c.source)
        for c in nb.cells
        if c.cell_type == "code" and c.id.startswith("kernel_") and c.id != "kernel_imports"
    }


def solved(
    lang: str = "en", *, kernels: dict[str, str] | None = None, helpers: str | None = CHUNKS["setup"], answers: bool = True
) -> nbformat.NotebookNode:
    """The received notebook with its kernel stubs replaced (default: the demo's correct
    kernels), a helper cell with their private helpers after the imports cell, and the
    answer cells filled."""
    nb = nbformat.read(RELEASE_ROOT / f"module05_{lang}" / f"m05_assignment_{lang}.ipynb", as_version=4)
    kernels = {name: CHUNKS[name] for name in KERNELS} if kernels is None else kernels
    filled = instructor_answers(lang) if answers else {}
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.id.startswith("kernel_") and cell.id[len("kernel_") :] in kernels:
            cell.source = kernels[cell.id[len("kernel_") :]]
        elif cell.cell_type == "code" and cell.id in filled:
            cell.source = filled[cell.id]
        cells.append(cell)
        if cell.id == "kernel_imports" and helpers:
            cells.append(nbformat.v4.new_code_cell(helpers, id="my_helpers"))
    nb.cells = cells
    return nb


def cell(nb: nbformat.NotebookNode, cell_id: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.get("id") == cell_id)


def insert_after(nb: nbformat.NotebookNode, cell_id: str, *new_cells) -> nbformat.NotebookNode:
    index = next(i for i, c in enumerate(nb.cells) if c.get("id") == cell_id)
    nb.cells[index + 1 : index + 1] = list(new_cells)
    return nb


def text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb)


def without_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Cells copied into a fresh notebook: no nbgrader or m5 metadata, new ids."""
    fresh = nbformat.v4.new_notebook()
    fresh.cells = [
        nbformat.v4.new_code_cell(c.source) if c.cell_type == "code" else nbformat.v4.new_markdown_cell(c.source) for c in nb.cells
    ]
    return fresh


# ------------------------------------------------------------------ black-formatted kernels
BLACK_KERNELS = {
    "double_dqn_targets": """
def double_dqn_targets(
    rewards, terminated, next_q_online, next_q_target, gamma=0.99
):
    g = _gamma(gamma)
    r, d, online = _batch(rewards, terminated, next_q_online)
    target = np.asarray(next_q_target, dtype=float)
    if (
        target.shape
        != online.shape
    ):
        raise ValueError("tables differ in shape")
    chosen = online.argmax(axis=1)
    return r + g * np.where(
        d,
        0.0,
        target[np.arange(len(r)), chosen],
    )
""",
    "expectile_loss": """
def expectile_loss(diff, tau):
    if not 0 < tau < 1:
        raise ValueError(
            "tau must be in (0, 1), got %r"
            % (tau,)
        )
    u = np.asarray(diff, dtype=float)
    if u.size == 0:
        raise ValueError("empty diff")
    return float(
        np.mean(
            np.abs(tau - (u < 0))
            * u**2
        )
    )
""",
    "pessimistic_values": """
def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    means = np.asarray(empirical_means, dtype=float)
    n = np.asarray(counts, dtype=float)
    if (
        means.shape != n.shape
        or (n < 0).any()
        or not np.isfinite(n).all()
    ):
        raise ValueError("bad counts")
    if not np.isfinite(radius_scale) or radius_scale < 0:
        raise ValueError("bad radius_scale")
    out = np.full(means.shape, -np.inf)
    seen = n > 0
    out[seen] = (
        means[seen]
        - radius_scale / np.sqrt(n[seen])
    )
    return out
""",
    "return_to_go": """
def return_to_go(rewards, gamma=1.0):
    g = _gamma(gamma)
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1:
        raise ValueError("rewards must be 1-D")
    out = np.zeros_like(r)
    running = 0.0
    for t in range(
        len(r) - 1,
        -1,
        -1,
    ):
        running = (
            r[t]
            + g * running
        )
        out[t] = running
    return out
""",
}


def black_formatted() -> str:
    kernels = {name: BLACK_KERNELS.get(name, CHUNKS[name]).strip("\n") for name in KERNELS}
    return text(solved(kernels=kernels))


# ------------------------------------------------------------------ notebook habits
MAGIC_SETUP = """
%matplotlib inline
%load_ext autoreload
%autoreload 2
%config InlineBackend.figure_format = "retina"
try:
    import gymnasium
except ImportError:
    !pip install -q gymnasium
    import gymnasium
!nvidia-smi
ip = get_ipython()
if ip is not None:
    ip.run_line_magic("matplotlib", "inline")
import numpy as np
import matplotlib.pyplot as plt
"""


def magics_in_setup() -> str:
    nb = solved()
    insert_after(nb, "setup", nbformat.v4.new_code_cell(MAGIC_SETUP.strip()))
    return text(nb)


def pip_in_try_in_answer_cell() -> str:
    nb = solved()
    kernel = cell(nb, "kernel_dqn_targets")
    kernel.source = "try:\n    import torch\nexcept ImportError:\n    %pip install torch --quiet\n\n" + kernel.source
    return text(nb)


def shell_escapes_and_help() -> str:
    nb = solved()
    cell(nb, "kernel_masked_token_nll").source += "\n\nfiles = !ls\nprint(len(files), files.s)\nnp.max?\n"
    cell(nb, "kernel_cql_discrete_penalty").source = "np.logaddexp??\n" + cell(nb, "kernel_cql_discrete_penalty").source
    cell(nb, "kernel_fqe_targets").source += "\n\nfqe_targets?\n!echo done > /tmp/log.txt\n"
    return text(nb)


def cell_magics() -> str:
    nb = solved()
    cell(nb, "kernel_return_to_go").source = "%%time\n" + cell(nb, "kernel_return_to_go").source
    cell(nb, "my_helpers").source = "%%capture setup_log\n" + cell(nb, "my_helpers").source + "\nprint('helpers ready')"
    cell(nb, "kernel_expectile_loss").source += "\n\n%timeit expectile_loss(np.linspace(-1, 1, 100), 0.7)\n"
    return text(nb)


HELPERS_WITH_OUTPUT = """
import numpy as np
import matplotlib.pyplot as plt

EPS = np.finfo(float).eps
SEED = 0
rng = np.random.default_rng(SEED)
print("numpy", np.__version__, "eps", EPS)

{helpers}

xs = np.linspace(-2, 2, 50)
plt.plot(xs, np.where(xs < 0, 0.3, 0.7) * xs**2)
plt.title("expectile weights")
plt.show()
"""


def helper_cell_with_prints_constants_and_a_plot() -> str:
    helpers = HELPERS_WITH_OUTPUT.format(helpers=CHUNKS["setup"].replace("import numpy as np\n", ""))
    return text(solved(helpers=helpers.strip()))


def demos_in_answer_cells() -> str:
    nb = solved()
    cell(nb, "kernel_dqn_targets").source += (
        "\n\n# quick test\nprint(dqn_targets([1.0, 0.5], [0, 1], [[1, 2], [3, 4]]))\n"
        "assert dqn_targets([0.0], [1], [[5.0]])[0] == 0.0\n"
        "dqn_targets([1.0], [0], [[2.0, 3.0]], gamma=0.5)"
    )
    cell(nb, "kernel_return_to_go").source += "\n\nimport matplotlib.pyplot as plt\nplt.plot(return_to_go([1, 0, 2]))\nplt.show()"
    return text(nb)


def redefined_after_a_first_attempt() -> str:
    nb = solved()
    first_try = (
        "def behavior_support_mask(probabilities, threshold_ratio=0.35):\n"
        "    # first try, wrong: fixed below\n"
        "    return probabilities > threshold_ratio"
    )
    index = nb.cells.index(cell(nb, "kernel_behavior_support_mask"))
    nb.cells.insert(index, nbformat.v4.new_code_cell(first_try))
    return text(nb)


def everything_in_one_cell() -> str:
    nb = solved(helpers=None)
    for name in KERNELS:
        cell(nb, f"kernel_{name}").source = "# moved to the first answer cell" if name != KERNELS[0] else CORRECT_SOURCE
    return text(nb)


def instructor_style_validation() -> str:
    """Kernels written with the m5_student.validation helpers, as the notebook suggests."""
    return text(solved(kernels=instructor_kernels(), helpers=None))


def russian_notebook() -> str:
    return text(solved("ru"))


def outputs_kept() -> str:
    nb = solved()
    for index, c in enumerate(nb.cells):
        if c.cell_type == "code":
            c.execution_count = index
            c.outputs = [
                nbformat.v4.new_output("stream", text="ok\n"),
                nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
                nbformat.v4.new_output(
                    "error", ename="NameError", evalue="name 'x' is not defined", traceback=["NameError: name 'x' is not defined"]
                ),
            ]
    return text(nb)


def check_call_in_answer_cell() -> str:
    nb = solved()
    kernel = cell(nb, "kernel_dqn_targets")
    kernel.source = "from m5_student.checks import check\n\n" + kernel.source + "\n\ncheck(dqn_targets)\n"
    return text(nb)


def copied_into_a_fresh_notebook() -> str:
    return text(without_metadata(solved()))


def colab_export() -> str:
    """Colab: nbformat 4.0 (no cell ids), metadata of its own, Drive and pip cells, no nbgrader."""
    nb = solved()
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "outputs": [],
            "metadata": {"id": "mount-drive", "colab": {"base_uri": "https://localhost:8080/"}, "outputId": "a1"},
            "source": [
                "from google.colab import drive\n",
                "drive.mount('/content/drive')\n",
                "%cd /content/drive/MyDrive/module05\n",
                "!pip install -q gymnasium",
            ],
        }
    ]
    for c in nb.cells:
        source = c.source.splitlines(keepends=True)
        if c.cell_type == "markdown":
            cells.append({"cell_type": "markdown", "metadata": {"id": f"md{len(cells)}"}, "source": source})
        else:
            cells.append(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "outputs": [],
                    "source": source,
                    "metadata": {"id": f"c{len(cells)}", "colab": {"base_uri": "https://localhost:8080/"}},
                }
            )
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 0,
            "cells": cells,
            "metadata": {
                "colab": {"provenance": [], "name": "m05_assignment_en.ipynb"},
                "kernelspec": {"name": "python3", "display_name": "Python 3"},
                "language_info": {"name": "python"},
                "accelerator": "GPU",
            },
        },
        indent=2,
    )


def vscode_export() -> str:
    """VS Code: cell metadata of its own, no nbgrader, stale outputs, CRLF sources (Windows)."""
    nb = without_metadata(solved())
    for index, c in enumerate(nb.cells):
        c.source = c.source.replace("\n", "\r\n")
        if c.cell_type == "code":
            c.metadata = {"vscode": {"languageId": "python"}}
            c.execution_count = index
    nb.metadata = {
        "kernelspec": {"display_name": ".venv", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.7"},
        "vscode": {"interpreter": {"hash": "0f3a"}},
    }
    return text(nb)


def ipython_display_helpers() -> str:
    nb = solved()
    insert_after(
        nb,
        "kernel_imports",
        nbformat.v4.new_code_cell(
            "from IPython.display import Markdown, display\n\ndisplay(Markdown('**Module 5** answers'))\ndisplay({'gamma': 0.99})"
        ),
    )
    return text(nb)


def scratch_cells_and_env_magics() -> str:
    """A `%%script false` scratch cell, environment magics, and a cell that stops a
    Run All on purpose (`raise SystemExit`)."""
    nb = solved()
    insert_after(
        nb,
        "kernel_imports",
        nbformat.v4.new_code_cell("%%script false\nthis is scratch text, never run\n"),
        nbformat.v4.new_code_cell("%whos\n%env OMP_NUM_THREADS=1\n%cd ..\n%pwd"),
        nbformat.v4.new_code_cell("raise SystemExit('stop here when running all')"),
    )
    return text(nb)


# ------------------------------------------------------------------ .py habits
def nbconvert_export() -> str:
    """`jupyter nbconvert --to script` of a solved notebook with magics (get_ipython() calls)."""
    from nbconvert import PythonExporter

    nb = solved()
    insert_after(nb, "setup", nbformat.v4.new_code_cell(MAGIC_SETUP.strip()))
    body, _ = PythonExporter().from_notebook_node(nb)
    return body


def cp1251_with_coding_line() -> bytes:
    source = (
        "# -*- coding: cp1251 -*-\n# Решение модуля 5 (Иванов И.): ядра обучения на фиксированных данных.\n"
        + CORRECT_SOURCE
        + "\nАВТОР = 'Иван Иванов'\n"
    )
    return source.encode("cp1251")


def bom_and_crlf() -> bytes:
    return ("# Решение: модуль 5\n" + CORRECT_SOURCE).replace("\n", "\r\n").encode("utf-8-sig")


MODULE_LEVEL_IO = """
name = input("Your name: ")
print("Hello,", name)
with open("my_notes.txt", encoding="utf-8") as fh:
    NOTES = fh.read()
LOG = np.load("keydoor_log.npz")
import pandas as pd_missing_maybe
"""


def module_level_io() -> str:
    head, _, tail = CORRECT_SOURCE.partition("\n\n\ndef dqn_targets")
    return head + "\n" + MODULE_LEVEL_IO + "\n\ndef dqn_targets" + tail


def self_tests_at_module_level() -> str:
    return (
        CORRECT_SOURCE
        + """

# my own tests
print(return_to_go([1, 0, 2]))
assert np.allclose(return_to_go([1.0, 1.0]), [2.0, 1.0])
assert dqn_targets([1.0], [1], [[5.0]])[0] == 1.0
assert expectile_loss([1.0], 0.5) == 0.5, "my expected value was wrong"
import matplotlib.pyplot as plt
plt.plot(return_to_go([1, 2, 3]))
plt.show()

if __name__ == "__main__":
    for _ in range(10**9):
        pass
"""
    )


def pasted_shell_lines_in_py() -> str:
    return "!pip install numpy\n%matplotlib inline\n" + CORRECT_SOURCE + "\nnp.where?\n"


def tabs_and_main_guard() -> str:
    """Tab indentation and a `main()` behind the usual guard."""
    return (
        CORRECT_SOURCE.replace("    ", "\t")
        + """

def main():
\tprint(return_to_go([1, 2, 3]))


if __name__ == "__main__":
\tmain()
"""
    )


def percent_cells_py() -> str:
    """A jupytext / VS Code ``# %%`` script with the magics jupytext comments out."""
    chunks = [f"# %%\n{CHUNKS['setup']}\n"] + [f"# %% [markdown]\n# ## {name}\n\n# %%\n{CHUNKS[name]}\n" for name in KERNELS]
    return "# %%\n# %matplotlib inline\n# !pip install gymnasium\n\n" + "\n".join(chunks)


HABITS = [
    Habit("black_formatted", ".ipynb", black_formatted),
    Habit("magics_in_setup_cell", ".ipynb", magics_in_setup),
    Habit("pip_in_try_in_answer_cell", ".ipynb", pip_in_try_in_answer_cell),
    Habit("shell_escapes_and_help", ".ipynb", shell_escapes_and_help),
    Habit("cell_magics_time_capture_timeit", ".ipynb", cell_magics),
    Habit("helper_cell_prints_constants_plot", ".ipynb", helper_cell_with_prints_constants_and_a_plot),
    Habit("demo_calls_in_answer_cells", ".ipynb", demos_in_answer_cells),
    Habit("redefined_after_first_attempt", ".ipynb", redefined_after_a_first_attempt),
    Habit("everything_in_one_cell", ".ipynb", everything_in_one_cell),
    Habit("instructor_style_validation", ".ipynb", instructor_style_validation, needs_library=True),
    Habit("russian_notebook", ".ipynb", russian_notebook, lang="ru"),
    Habit("outputs_and_errors_kept", ".ipynb", outputs_kept),
    Habit("check_call_in_answer_cell", ".ipynb", check_call_in_answer_cell, needs_library=True),
    Habit("copied_into_fresh_notebook", ".ipynb", copied_into_a_fresh_notebook),
    Habit("colab_export", ".ipynb", colab_export),
    Habit("vscode_export_crlf", ".ipynb", vscode_export),
    Habit("ipython_display", ".ipynb", ipython_display_helpers),
    Habit("scratch_cells_and_env_magics", ".ipynb", scratch_cells_and_env_magics),
    Habit("nbconvert_export", ".py", nbconvert_export),
    Habit("cp1251_coding_line", ".py", cp1251_with_coding_line, lang="ru"),
    Habit("utf8_bom_crlf", ".py", bom_and_crlf),
    Habit("module_level_io", ".py", module_level_io),
    Habit("self_tests_at_module_level", ".py", self_tests_at_module_level),
    Habit("pasted_shell_lines", ".py", pasted_shell_lines_in_py),
    Habit("tabs_and_main_guard", ".py", tabs_and_main_guard),
    Habit("percent_cells_script", ".py", percent_cells_py),
]


# ------------------------------------------------------------------ real errors: exactly these kernels lost
def syntax_error_in_one_kernel() -> str:
    nb = solved()
    cell(nb, "kernel_expectile_loss").source = cell(nb, "kernel_expectile_loss").source.replace("return float(", "return float((", 1)
    return text(nb)


def name_errors_in_two_kernels() -> str:
    nb = solved()
    # Inside the body: raises on every call. On a decorator: the definition itself fails.
    cell(nb, "kernel_fqe_targets").source = cell(nb, "kernel_fqe_targets").source.replace("np.allclose", "npp.allclose")
    cell(nb, "kernel_return_to_go").source = "%%time\n@my_cache\n" + cell(nb, "kernel_return_to_go").source
    return text(nb)


BROKEN = [
    Habit("syntax_error_in_one_kernel", ".ipynb", syntax_error_in_one_kernel, lost=frozenset({"expectile_loss"})),
    Habit("name_errors_in_two_kernels", ".ipynb", name_errors_in_two_kernels, lost=frozenset({"fqe_targets", "return_to_go"})),
]
