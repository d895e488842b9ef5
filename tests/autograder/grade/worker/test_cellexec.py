"""Running a submission's cells as the worker runs them (autograder/grade/worker/cellexec.py).

Here cellexec runs in the test process, as the worker would run it, so each behavior
is checked directly; tests/autograder/workflows/test_habits.py grades whole submissions through
the sandboxed pipeline.
"""

from __future__ import annotations

import ast
import io
import os
import sys
import time

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.grade.extract import extract
from autograder.grade.worker import cellexec
from autograder.grade.worker.child import CallTimeout, _timed, _untimed

KERNELS = ["dqn_targets", "return_to_go"]


def load(cells, *, timeout=10.0, request=None, timer=False):
    """load_cells on {"id", "source"[, "kind"]} dicts; returns (report entries, namespace)."""
    cells = [c if isinstance(c, dict) else {"id": f"c{i}", "source": c} for i, c in enumerate(cells)]
    announced = []
    timing = dict(timed=_timed, untimed=_untimed) if timer else dict(timed=lambda s: None, untimed=lambda: None)
    loaded = cellexec.load_cells(cells, KERNELS, timeout, announced.append, timeout_exc=CallTimeout, request=request, **timing)
    # A notebook cell is announced once; a .py file once per statement it runs, with its first line.
    assert [a for a in announced if "line" not in a] == [{"op": "cell", "id": c["id"]} for c in cells if cellexec.cell_kind(c) != "python"]
    files = {c["id"] for c in cells if cellexec.cell_kind(c) == "python"}
    assert all(a["id"] in files and isinstance(a["line"], int) for a in announced if "line" in a)
    return loaded["cells"], loaded["namespace"]


@pytest.fixture(autouse=True)
def _restore_process_state(monkeypatch):
    """load_cells sets the grading flag, the matplotlib backend and sys.path for the
    student's process; keep the test process as it was."""
    for name in (cellexec.GRADING_FLAG, "MPLBACKEND"):
        monkeypatch.setenv(name, os.environ.get(name, "")) if name in os.environ else monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))


# ------------------------------------------------------------------ plain Python is never rewritten
NAMES = st.sampled_from(["a", "b", "shape", "values", "np.pi", "x[0]", "f(y)"])
LITERALS = st.sampled_from(["1", "2.5", "'%d items'", "'!ls'", '"%(x)s"', "None", "-3"])
OPERATORS = st.sampled_from(["+", "-", "*", "%", "//", "!=", "==", "<", "and", "or", "@", "|"])


@st.composite
def exploded_expression(draw, indent: str) -> str:
    """An expression in parentheses, one operand per line, operators first (black's style
    for a long expression): lines may start with ``%`` or ``!=``."""
    atoms = draw(st.lists(st.one_of(NAMES, LITERALS), min_size=2, max_size=5))
    lines = [f"{indent}    {atoms[0]}"] + [f"{indent}    {draw(OPERATORS)} {atom}" for atom in atoms[1:]]
    return "(\n" + "\n".join(lines) + f"\n{indent})"


@st.composite
def black_statement(draw) -> str:
    kind = draw(st.sampled_from(["assign", "if", "call", "def", "string", "comment", "decorated", "dict"]))
    if kind == "assign":
        return f"{draw(st.sampled_from(['result', 'total', 'mask']))} = {draw(exploded_expression(''))}"
    if kind == "if":
        return f'if {draw(exploded_expression(""))}:\n    raise ValueError("shapes differ")'
    if kind == "call":
        args = draw(st.lists(st.one_of(NAMES, LITERALS), min_size=1, max_size=4))
        return "result = np.where(\n" + "".join(f"    {a},\n" for a in args) + ")"
    if kind == "def":
        return f"def kernel(\n    rewards,\n    terminated,\n    gamma=0.99,\n):\n    return {draw(exploded_expression('    '))}"
    if kind == "string":  # magic-looking lines inside a string: text, not commands
        return 'TEXT = """\n%matplotlib inline\n!pip install numpy\nnp.max?\n%%time\n"""'
    if kind == "comment":
        return "# %time kernel(x)\n#!ls\n# %%capture"
    if kind == "decorated":
        return "@functools.cache\ndef helper(\n    x,\n):\n    return x"
    return 'TABLE = {\n    "a": 1,\n    "b": (\n        2\n        % 3\n    ),\n}'


BLACK_CODE = st.lists(black_statement(), min_size=1, max_size=6).map("\n\n\n".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=BLACK_CODE)
def test_plain_python_in_black_style_reaches_the_worker_ast_identical(source, tmp_path):
    """Through the grader's side (notebook JSON, .py decoding) and the worker's (cells,
    statement splitting), code without IPython syntax is never rewritten."""
    ast.parse(source)  # the generator makes valid Python
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, tmp_path / "cell.ipynb")
    cell = extract(tmp_path / "cell.ipynb").cells[0]
    assert ast.dump(cellexec.parse_cell(cell.source)) == ast.dump(ast.parse(source))

    (tmp_path / "file.py").write_text(source, encoding="utf-8")
    file_source = extract(tmp_path / "file.py").cells[0].source
    pieces = list(cellexec.split_statements(file_source))
    assert [ast.dump(ast.parse(piece).body[0]) for _, piece in pieces] == [ast.dump(node) for node in ast.parse(source).body]


def test_only_the_ipython_lines_of_a_mixed_cell_change():
    black = "if (\n    a.shape\n    != b.shape\n):\n    pass\nx = (\n    a\n    % b\n)\n"
    tree = cellexec.parse_cell("%matplotlib inline\n" + black)
    expected = ast.parse("get_ipython().run_line_magic('matplotlib', 'inline')\n" + black)
    assert ast.dump(tree) == ast.dump(expected)


# ------------------------------------------------------------------ IPython syntax under grading
def test_magics_and_shell_escapes_in_a_setup_cell():
    entries, ns = load(
        [
            "%matplotlib inline\n%load_ext autoreload\n%autoreload 2\nimport numpy as np\n"
            "try:\n    !pip install gymnasium\nexcept Exception:\n    pass\n"
            "files = !ls data\nnp.max?\n??np.min\nget_ipython().run_line_magic('config', \"InlineBackend.figure_format = 'svg'\")\n"
            "EPS = np.finfo(float).eps\nprint('setup done', files.s, files.n, files.l)\n",
        ]
    )
    assert entries == [
        {
            "id": "c0",
            "ok": True,
            "error": None,
            "line": None,
            "timed_out": False,
            "ignored": ["%matplotlib", "%load_ext", "%autoreload", "!pip", "!ls", "%config"],
        }
    ]
    assert ns["files"] == [] and ns["EPS"] > 0 and ns["np"].__name__ == "numpy"


def test_timing_and_capture_magics_run_their_code():
    entries, ns = load(
        [
            "%%time\nimport numpy as np\ndef return_to_go(r, gamma=1.0):\n    return np.cumsum(np.asarray(r)[::-1])[::-1]\n",
            "calls = []\ntotal = %time return_to_go([1, 2]).sum()\n%timeit -n 3 -r 1 calls.append(1)",
            "%%capture captured\nprint('noise')\nDONE = True\n",
            "%%timeit -n 2\nTIMED = 1\n",
            "%%writefile helpers.py\nimport os\nos._exit(3)\n",  # not run: no file written, no exit
        ]
    )
    assert all(e["ok"] for e in entries)
    assert callable(ns["return_to_go"]) and ns["total"] == 5 and ns["calls"] == [1]
    assert ns["DONE"] is True and ns["captured"].stdout == "" and ns["TIMED"] == 1
    assert entries[4]["ignored"] == ["%%writefile"] and not os.path.exists("helpers.py")


def test_nbconvert_export_calls_and_ipython_builtins():
    entries, ns = load(
        [
            "get_ipython().run_line_magic('matplotlib', 'inline')\nget_ipython().system('nvidia-smi')\n"
            "out = get_ipython().getoutput('ls')\nget_ipython().magic('load_ext autoreload')\n"
            "get_ipython().events.register('post_run_cell', print)\ndisplay('table')\n"
            "IN_NOTEBOOK = type(get_ipython()).__name__ != 'NoneType'\n",
        ]
    )
    assert entries[0]["ok"] and entries[0]["ignored"] == ["%matplotlib", "!nvidia-smi", "!ls", "%load_ext"]
    assert ns["out"] == [] and ns["IN_NOTEBOOK"]


def test_a_failing_cell_costs_only_itself_and_reports_its_line():
    entries, ns = load(
        [
            "import numpy as np",
            "def dqn_targets(r, d, q, gamma=0.99):\n    return r\n\nprint(undefined_helper)\n",
            "def return_to_go(r gamma=1.0):\n    return r\n",
            "X = 1",
        ]
    )
    assert [e["ok"] for e in entries] == [True, False, False, True]
    assert entries[1]["error"] == "NameError: name 'undefined_helper' is not defined" and entries[1]["line"] == 4
    assert entries[2]["error"].startswith("SyntaxError") and entries[2]["line"] == 1
    assert callable(ns["dqn_targets"]) and "return_to_go" not in ns and ns["X"] == 1


def test_a_cell_that_runs_too_long_is_stopped_and_the_next_cells_run():
    started = time.process_time()
    entries, ns = load(["while True:\n    pass", "AFTER = 2"], timeout=0.3, timer=True)
    assert entries[0]["timed_out"] and not entries[0]["ok"] and entries[1]["ok"] and ns["AFTER"] == 2
    assert time.process_time() - started < 60  # stopped, not run to the end


def test_bytes_that_python_refuses_cost_only_their_cell():
    entries, _ = load(["x = 1\x00", "(" * 300 + ")" * 300, "Y = 2"])
    assert [e["ok"] for e in entries] == [False, False, True]


# ------------------------------------------------------------------ .py files, statement by statement
def python_file(source: str) -> dict:
    return {"id": cellexec.PYTHON_FILE_ID, "source": source}


def test_a_python_file_runs_statement_by_statement_with_the_files_line_numbers(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the worker's stdin is /dev/null
    source = (
        "import numpy as np\n"
        "name = input('Your name: ')\n"  # line 2: EOFError under grading
        "DATA = np.loadtxt('my_data.csv')\n"  # line 3: no such file
        "\n"
        "def return_to_go(rewards, gamma=1.0):\n"
        "    out = np.zeros(len(rewards))\n"
        "    running = 0.0\n"
        "    for t in reversed(range(len(rewards))):\n"
        "        running = rewards[t] + gamma * running\n"
        "        out[t] = running\n"
        "    return out\n"
        "print(return_to_go([1, 2]))\n"
    )
    entries, ns = load([python_file(source)])
    assert [(e["error"].split(":")[0], e["line"]) for e in entries] == [("EOFError", 2), ("FileNotFoundError", 3)]
    assert callable(ns["return_to_go"]) and list(ns["return_to_go"]([1.0, 1.0])) == [2.0, 1.0]


def test_a_python_file_with_a_syntax_error_keeps_every_piece_that_parses():
    source = (
        "import numpy as np\n\n"
        "@staticmethod\n"
        "def helper():\n    return 1\n\n"
        "def dqn_targets(r, d, q, gamma=0.99):\n    return r +\n\n"  # lines 7-8: broken
        "NOTE = '''\nText at column 0\n'''\n"
        "if NOTE:\n    A = 1\nelse:\n    A = 2\n"
        "def return_to_go(r, gamma=1.0):\n    return (\n        np.asarray(r)\n"
        ")\n"
    )
    pieces = list(cellexec.split_statements(source))
    broken = [(first, piece) for first, piece in pieces if isinstance(piece, SyntaxError)]
    assert [(first, error.lineno) for first, error in broken] == [(7, 8)]
    entries, ns = load([python_file(source)])
    assert len(entries) == 1 and entries[0]["line"] == 8 and entries[0]["error"].startswith("SyntaxError")
    assert callable(ns["return_to_go"]) and "dqn_targets" not in ns and ns["A"] == 1
    assert ns["NOTE"] == "\nText at column 0\n"


def test_a_python_file_with_crlf_and_ipython_lines():
    source = "import numpy as np\r\n!pip install numpy\r\n%matplotlib inline\r\nX = np.ones(2)\r\nY = (\r\n    X\r\n    % 2\r\n)\r\n"
    entries, ns = load([python_file(source)])
    assert entries[0]["ok"] and entries[0]["ignored"] == ["!pip", "%matplotlib"]
    assert list(ns["Y"]) == [1.0, 1.0]


def test_splitting_an_unparsable_file_is_bounded():
    source = 'S = """\n' + "x = 1\n" * 20_000  # an unterminated string: every prefix is unfinished
    started = time.process_time()
    pieces = list(cellexec.split_statements(source))
    assert time.process_time() - started < 60
    assert isinstance(pieces[0][1], SyntaxError)


def test_sys_exit_ends_a_python_file_as_it_would_but_only_its_cell_in_a_notebook():
    entries, ns = load([python_file("A = 1\nimport sys\nsys.exit(0)\nB = 2\n")])
    assert [(e["error"], e["line"]) for e in entries] == [("SystemExit: 0", 3)] and "B" not in ns
    entries, ns = load(["A = 1\nraise SystemExit('stop Run All here')", "B = 2"])
    assert [e["ok"] for e in entries] == [False, True] and ns["B"] == 2


def test_the_load_report_stays_small_whatever_the_file_does():
    source = "%" + "m" * 1000 + "\n" + "".join(f"print(undefined_{i})\n" for i in range(500))
    source += "".join(f"!cmd{i}\n" for i in range(100)) + "X = 1\n"
    entries, ns = load([python_file(source)])
    assert len(entries) == cellexec.MAX_LISTED_FAILURES + 1 and entries[-1]["error"] == "490 more statements failed"
    assert len(entries[0]["ignored"]) == cellexec.MAX_IGNORED
    assert len(entries[0]["ignored"][0]) == cellexec.MAX_MAGIC_NAME
    assert ns["X"] == 1


def test_main_guard_is_not_run():
    entries, ns = load([python_file("X = 1\nif __name__ == '__main__':\n    X = train_for_hours()\n")])
    assert entries[0]["ok"] and ns["X"] == 1


# ------------------------------------------------------------------ the student library under grading
def test_grading_environment_flag_backend_and_import_dirs(tmp_path):
    (tmp_path / "lib_probe.py").write_text("VALUE = 7\n")
    entries, ns = load(
        ["import os, lib_probe\nFLAG = os.environ['M5_GRADING']\nBACKEND = os.environ['MPLBACKEND']\nV = lib_probe.VALUE"],
        request={"import_dirs": [str(tmp_path)]},
    )
    assert entries[0]["ok"] and (ns["FLAG"], ns["BACKEND"], ns["V"]) == ("1", "Agg", 7)


def test_a_self_check_call_in_an_answer_cell_costs_no_grading_time(tmp_path):
    from autograder.assign import release

    release.build_student_library(tmp_path / "m5_student")
    started = time.process_time()
    entries, ns = load(
        [
            "import numpy as np\nfrom m5_student import validation as v\nfrom m5_student.checks import check\n\n"
            "def return_to_go(rewards, gamma=1.0):\n    r = v.float_array(rewards, 'rewards', 'return_to_go')\n"
            "    return np.cumsum(r[::-1])[::-1]\n\nPASSED = check(return_to_go)\n",
        ],
        request={"import_dirs": [str(tmp_path)]},
    )
    assert entries[0]["ok"], entries
    assert ns["PASSED"] is True
    assert time.process_time() - started < 30  # the public Hypothesis checks did not run


def test_a_python_file_announces_each_statement_and_skips_the_lines_it_is_told():
    """The worker blames a statement that kills the process by its announcement, and
    loads the file again without it (``skip_lines``)."""
    source = "a = 1\n\ndef f():\n    return 2\n\nb = f() + a\nc = 3\n"
    announced = []
    loaded = cellexec.load_cells(
        [{"id": "python-file", "source": source}],
        KERNELS,
        5.0,
        announced.append,
        timed=lambda s: None,
        untimed=lambda: None,
        timeout_exc=CallTimeout,
    )
    assert [a["line"] for a in announced] == [1, 3, 6, 7] and loaded["namespace"]["c"] == 3
    announced.clear()
    loaded = cellexec.load_cells(
        [{"id": "python-file", "source": source, "skip_lines": [6]}],
        KERNELS,
        5.0,
        announced.append,
        timed=lambda s: None,
        untimed=lambda: None,
        timeout_exc=CallTimeout,
    )
    assert [a["line"] for a in announced] == [1, 3, 7]
    assert "b" not in loaded["namespace"] and loaded["namespace"]["c"] == 3
    assert loaded["cells"] == [{"id": "python-file", "ok": True, "error": None, "line": None, "ignored": [], "timed_out": False}]
    # A notebook cell ignores skip_lines: it runs whole or not at all.
    loaded = cellexec.load_cells(
        [{"id": "c0", "source": source, "skip_lines": [6]}],
        KERNELS,
        5.0,
        lambda m: None,
        timed=lambda s: None,
        untimed=lambda: None,
        timeout_exc=CallTimeout,
    )
    assert loaded["namespace"]["b"] == 3
