"""Run a submission's cells inside the worker (the sandbox side of extraction).

Part of the worker package placed read-only at /m5 (see ``__init__.py``); imports only
the standard library at import time (IPython is imported lazily, and only for a cell that
is not plain Python). Everything that parses or rewrites student code happens here,
inside the sandbox, never in the grader's process.

* A notebook cell that compiles as Python runs exactly as written. Only a cell that
  does not compile goes through IPython's own ``TransformerManager`` (the transform
  Jupyter applies), and runs when the result compiles.
* Magics and shell escapes become calls on :class:`GradingShell`, the ``get_ipython()``
  of the grading namespace: timing and capture magics run their code, help (``np.max?``)
  does nothing, environment and display magics (``%matplotlib``, ``%pip``, ``!pip``) and
  shell escapes do nothing and are reported (``ignored``), and ``files = !ls`` gets an
  empty list.
* A ``.py`` file runs top-level statement by statement, so a failing statement (a
  module-level ``input()``, an ``open()`` of a missing file) costs only itself
  (``sys.exit()`` still ends the script, as it would under ``python``); a file
  with a syntax error is split into the largest pieces that parse. Line numbers are
  the file's. Each statement is announced, and has its own time limit, as a cell has:
  one that kills the process is left out when the file is loaded again.
"""

# No `from __future__` imports here: exec() and compile() would pass them on to the
# student's code (every compile below also says dont_inherit=True).
import ast
import os
import sys

# Set for the student's code while it is graded: m5_student.checks.check() returns at
# once under grading, so a self-check call in an answer cell costs no grading time.
GRADING_FLAG = "M5_GRADING"
# The submission's language (its notebook's m5.lang), set by the grader: the one support
# library in the sandbox (m5_student.notebook_language()) speaks the submission's language.
LANGUAGE_VARIABLE = "M5_LANG"
LANGUAGES = ("en", "ru")
# The id extract.py gives the one cell of a .py file: with a worker that passes only
# {"id", "source"}, the id alone says to run it statement by statement.
PYTHON_FILE_ID = "python-file"
KINDS = ("cell", "python")

# Magics whose code runs (line form: its value is returned), and help magics (silent).
TIMING_MAGICS = frozenset({"time", "timeit", "prun"})
BODY_CELL_MAGICS = TIMING_MAGICS | {"capture"}
HELP_MAGICS = frozenset({"pinfo", "pinfo2", "psearch", "pdef", "pdoc", "psource", "pfile"})
# When a file does not parse, splitting it may try many prefixes: cap the characters
# parsed per character of source (an unterminated string would otherwise be quadratic).
SPLIT_PARSE_FACTOR = 8
# The load report stays small whatever the submission does: at most this many failing
# statements of a .py are listed (then one entry counts the rest), and this many
# ignored magics per cell, each name cut short.
MAX_LISTED_FAILURES = 10
MAX_IGNORED = 20
MAX_MAGIC_NAME = 40
CONTINUATION_KEYWORDS = ("else", "elif", "except", "finally")
UNFINISHED_MESSAGES = ("was never closed", "unterminated triple-quoted", "unexpected EOF", "incomplete input", "expected an indented block")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------ the stub shell
class ShellOutput(list):
    """What ``files = !ls`` gets under grading: an empty list with IPython's SList
    accessors (``.s``, ``.n``, ``.l``, ``.p``, ``.grep()``, ``.fields()``)."""

    s = n = ""

    @property
    def l(self):  # noqa: E743 - IPython's name
        return list(self)

    p = l

    def grep(self, *args, **kwargs):
        return ShellOutput()

    def fields(self, *args):
        return ShellOutput()


class CapturedOutput:
    """The variable ``%%capture name`` assigns: empty (the worker discards output)."""

    stdout = stderr = ""
    outputs: tuple = ()

    def show(self):
        return None

    __call__ = show


class _Inert:
    """Any other IPython shell API (``get_ipython().events.register(...)``): does nothing."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return None


class GradingShell:
    """``get_ipython()`` while a submission is graded: runs what changes the namespace
    (timing and capture magics), ignores the notebook's environment (``%matplotlib``,
    ``%pip``, shell escapes) and records what it ignored for the feedback."""

    def __init__(self, namespace: dict):
        self.user_ns = self.user_global_ns = namespace
        self.ignored: list[str] = []  # "%matplotlib", "!pip", ... in order of first use

    def _ignore(self, what: str) -> None:
        what = what[:MAX_MAGIC_NAME]
        if what not in self.ignored and len(self.ignored) < MAX_IGNORED:
            self.ignored.append(what)

    def run_line_magic(self, magic_name, line="", _stack_depth=1):
        name = str(magic_name).lstrip("%")  # a stray `%%time` mid-cell arrives as '%time'
        if name in HELP_MAGICS:
            return None
        if name in TIMING_MAGICS:
            return run_code(_strip_timing_options(str(line)), self.user_ns, "<magic>", shell=self, mode="auto")
        self._ignore("%" + name)
        return None

    def run_cell_magic(self, magic_name, line, cell):
        name = str(magic_name)
        if name not in BODY_CELL_MAGICS:
            self._ignore("%%" + name)
            return None
        # The body sits on the lines after the magic line: keep its line numbers.
        run_code("\n" + str(cell), self.user_ns, self.current_filename, shell=self)
        target = str(line).split()
        if name == "capture" and target and target[0].isidentifier():
            self.user_ns[target[0]] = CapturedOutput()
        return None

    def magic(self, arg_s=""):
        """The old API: ``get_ipython().magic("matplotlib inline")``."""
        name, _, line = str(arg_s).lstrip("%").partition(" ")
        return self.run_line_magic(name, line)

    def system(self, cmd=""):
        self._ignore("!" + (str(cmd).split() or [""])[0])
        return None

    system_raw = system_piped = system

    def getoutput(self, cmd="", split=True, depth=0):
        self.system(cmd)
        return ShellOutput()

    def run_cell(self, raw_cell, *args, **kwargs):
        run_code(str(raw_cell), self.user_ns, "<run_cell>", shell=self)

    def ev(self, expr):
        return eval(compile(str(expr), "<ev>", "eval", dont_inherit=True), self.user_ns)

    def ex(self, cmd):
        exec(compile(str(cmd), "<ex>", "exec", dont_inherit=True), self.user_ns)

    current_filename = "<cell>"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()


def _strip_timing_options(line: str) -> str:
    """``%timeit -n 10 -r 3 f(x)`` -> ``f(x)``: the options only tune the timing."""
    words = line.split(" ")
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option in ("-n", "-r", "-p") and words:
            words.pop(0)
    return " ".join(words).strip()


def _display(*objects, **kwargs):
    """IPython's ``display()`` builtin: output is discarded under grading."""
    return None


# ------------------------------------------------------------------ turning text into code
def ipython_to_python(source: str) -> str:
    """The cell as Jupyter would run it: IPython's own transform of magics and escapes."""
    from IPython.core.inputtransformer2 import TransformerManager  # IPython (0.3 s) only for a cell that is not Python

    return TransformerManager().transform_cell(source)


def parse_cell(source: str, filename: str = "<cell>") -> ast.Module:
    """The cell's syntax tree: of the text as written when it is Python (then it is never
    rewritten), else of IPython's transform of it. Raises the transformed text's
    SyntaxError when neither parses."""
    try:
        return ast.parse(source, filename)
    except SyntaxError as plain:
        error = plain
    try:
        transformed = ipython_to_python(source)
    except Exception:  # noqa: BLE001 - IPython missing or its transform failed, however: report the plain error
        raise error from None
    return ast.parse(transformed, filename)


def compile_cell(source: str, filename: str):
    """Code object of one notebook cell (see :func:`parse_cell`)."""
    return compile(parse_cell(source, filename), filename, "exec", dont_inherit=True)


def run_code(source: str, namespace: dict, filename: str, *, shell: GradingShell, mode: str = "exec"):
    """Run ``source`` (Python or IPython) in ``namespace``; ``mode="auto"`` returns the
    value of a lone expression (``x = %time f()``)."""
    previous, shell.current_filename = shell.current_filename, filename
    try:
        if mode == "auto":
            try:
                return eval(compile(source, filename, "eval", dont_inherit=True), namespace)
            except SyntaxError:
                pass
        exec(compile_cell(source, filename), namespace)
        return None
    finally:
        shell.current_filename = previous


def _error_line(exc: BaseException, filename: str):
    """Line of the innermost frame of ``exc`` that ran code from ``filename``."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return _short(f"SyntaxError: {exc.msg}")
    return _short(f"{type(exc).__name__}: {exc}")


# ------------------------------------------------------------------ .py files
def _statement_starts(lines: list[str]) -> list[int]:
    """Indices of lines that may start a top-level statement (column 0, not a comment,
    not a closing bracket or a clause like ``else:``), plus ``len(lines)``."""
    starts = []
    for i, line in enumerate(lines):
        if not line or line[0] in " \t\r\n#)]}\f":
            continue
        word = line.split(None, 1)[0].rstrip(":")
        if word in CONTINUATION_KEYWORDS:
            continue
        starts.append(i)
    return starts + [len(lines)]


def _unfinished(error: SyntaxError, n_lines: int) -> bool:
    """Whether a piece of ``n_lines`` lines failed only because it stops too early
    (an open bracket or string, a decorator or a block header without its body)."""
    return any(mark in (error.msg or "") for mark in UNFINISHED_MESSAGES) or (error.lineno or 0) >= n_lines


def _parses(text: str) -> SyntaxError | None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return SyntaxError(str(exc))
    return None


def _lines(text: str) -> list[str]:
    """Lines as Python counts them (only newlines break lines, not form feeds or U+2028),
    each with its newline; ``text`` has LF newlines."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _parse_file(source: str):
    """(tree, text): the file as written, else IPython's transform of it (a cell pasted
    with ``!pip install`` into a .py); (None, source) when neither parses."""
    try:
        return ast.parse(source), source
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        transformed = ipython_to_python(source)
        return ast.parse(transformed), transformed
    except Exception:  # noqa: BLE001 - IPython's transform failed, however: the file is read as plain Python
        return None, source


def split_statements(source: str):
    """Top-level pieces of a file as (first line, text) with 1-based file line numbers.

    A file that parses gives one piece per statement. Otherwise it is cut at lines that
    may start a statement into the smallest pieces that parse; a piece that never parses
    (a real syntax error) ends at the next start line and is returned as a SyntaxError.
    """
    tree, source = _parse_file(source)
    lines = _lines(source)
    if tree is not None:
        for node in tree.body:
            first = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
            yield first, "".join(lines[first - 1 : node.end_lineno])
        return
    starts = _statement_starts(lines)
    budget = SPLIT_PARSE_FACTOR * len(source) + 4096
    k = 0
    while k < len(starts) - 1:
        begin = starts[k]
        end_k, error = k + 1, None
        while end_k < len(starts):
            text = "".join(lines[begin : starts[end_k]])
            budget -= len(text)
            error = _parses(text)
            if error is None:
                break
            if budget <= 0 or not _unfinished(error, starts[end_k] - begin):
                break
            end_k += 1
        if error is None:
            yield begin + 1, "".join(lines[begin : starts[end_k]])
            k = end_k
        else:
            error.lineno = None if error.lineno is None else error.lineno + begin
            yield begin + 1, error
            k += 1


# ------------------------------------------------------------------ running
def _entry(cell_id, ok, error=None, line=None, ignored=(), timed_out=False) -> dict:
    return {"id": cell_id, "ok": ok, "error": error, "line": line, "ignored": list(ignored), "timed_out": timed_out}


def _run_timed(code, namespace, cell_timeout, timed, untimed):
    timed(cell_timeout)
    try:
        exec(code, namespace)
    finally:
        untimed()


def _run_cell(cell, namespace, shell, cell_timeout, *, send, timed, untimed, timeout_exc) -> list[dict]:
    send({"op": "cell", "id": cell["id"]})
    filename = f"<cell {cell['id']}>"
    shell.ignored = []
    shell.current_filename = filename
    try:
        code = compile_cell(cell["source"], filename)
    except SyntaxError as exc:
        return [_entry(cell["id"], False, _describe(exc), exc.lineno)]
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return [_entry(cell["id"], False, _describe(exc))]
    try:
        _run_timed(code, namespace, cell_timeout, timed, untimed)
    except timeout_exc:
        return [_entry(cell["id"], False, f"the cell ran longer than {cell_timeout:g} s", None, shell.ignored, True)]
    except BaseException as exc:  # noqa: BLE001 - whatever the student's cell raises is its outcome
        return [_entry(cell["id"], False, _describe(exc), _error_line(exc, filename), shell.ignored)]
    return [_entry(cell["id"], True, None, None, shell.ignored)]


def _run_file(cell, namespace, shell, cell_timeout, *, send, timed, untimed, timeout_exc) -> list[dict]:
    """Statement by statement; one entry per failing statement, or one ok entry. A failing
    statement costs only itself, except sys.exit(), which ends the script as it would.

    Each statement is announced with its first line, as a notebook cell is, so one that
    kills the process or outlives the grader's patience is the one left out when the
    file is loaded again (``skip_lines``: the first lines of those statements; the
    grader reports them)."""
    filename = f"<file {cell['id']}>"
    shell.ignored = []
    failures = []
    skip = set(cell.get("skip_lines") or ())
    source = cell["source"].replace("\r\n", "\n").replace("\r", "\n")  # Python's universal newlines
    for first, piece in split_statements(source):
        if isinstance(piece, SyntaxError):
            failures.append(_entry(cell["id"], False, _describe(piece), piece.lineno or first))
            continue
        if first in skip:
            continue
        send({"op": "cell", "id": cell["id"], "line": first})
        shell.current_filename = filename
        try:
            # Padding keeps the file's line numbers in tracebacks and feedback.
            code = compile_cell("\n" * (first - 1) + piece, filename)
            _run_timed(code, namespace, cell_timeout, timed, untimed)
        except timeout_exc:
            failures.append(_entry(cell["id"], False, f"the statement ran longer than {cell_timeout:g} s", first, timed_out=True))
        except BaseException as exc:  # noqa: BLE001 - whatever the statement raises is its outcome
            failures.append(_entry(cell["id"], False, _describe(exc), _error_line(exc, filename) or first))
            if isinstance(exc, SystemExit):  # the script ends here, as it would under python
                break
    if len(failures) > MAX_LISTED_FAILURES:
        more = len(failures) - MAX_LISTED_FAILURES
        failures = failures[:MAX_LISTED_FAILURES] + [_entry(cell["id"], False, f"{more} more statements failed")]
    entries = failures or [_entry(cell["id"], True)]
    entries[0]["ignored"] = list(shell.ignored)  # reported once per file
    return entries


def cell_kind(cell: dict) -> str:
    """ "python" (a .py file, run statement by statement) or "cell" (a notebook cell)."""
    kind = cell.get("kind")
    if kind in KINDS:
        return kind
    return "python" if cell.get("id") == PYTHON_FILE_ID else "cell"


def grading_namespace() -> tuple[dict, GradingShell]:
    """A fresh namespace with the names IPython provides without an import."""
    namespace = {"__name__": "__submission__", "__builtins__": __builtins__}
    shell = GradingShell(namespace)
    namespace["get_ipython"] = lambda: shell
    namespace["display"] = _display
    return namespace, shell


def prepare_environment(import_dirs=(), lang=None) -> None:
    """What the student's process sees: the grading flag, the submission's language
    (``lang``, "en" or "ru"; anything else leaves it unset), a non-interactive
    matplotlib, and the read-only support libraries first on sys.path."""
    os.environ[GRADING_FLAG] = "1"
    if lang in LANGUAGES:
        os.environ[LANGUAGE_VARIABLE] = lang
    else:
        os.environ.pop(LANGUAGE_VARIABLE, None)
    os.environ["MPLBACKEND"] = "Agg"
    for folder in reversed([str(d) for d in import_dirs]):
        if folder not in sys.path:
            sys.path.insert(0, folder)


def load_cells(cells, kernels, cell_timeout, send, *, timed, untimed, timeout_exc, request=None) -> dict:
    """Execute ``cells`` ({"id", "source"}, optionally "kind") in one namespace, in order.

    Returns {"op": "loaded", "cells": [{"id", "ok", "error", "line", "ignored", "timed_out"}],
    "found": {kernel: bool}, "namespace": dict}. A .py file gives one entry per failing
    statement (or one ok entry). ``send({"op": "cell", "id"})`` announces each cell
    first (``{"op": "cell", "id", "line"}`` each statement of a .py file), so the
    grader knows which cell or statement killed the worker if it dies. ``request`` is
    the whole load request; its optional "import_dirs" go on sys.path and its optional
    "lang" is the submission's language (see :func:`prepare_environment`).
    """
    request = request or {}
    prepare_environment(request.get("import_dirs") or (), request.get("lang"))
    namespace, shell = grading_namespace()
    report = []
    for cell in cells:
        run = _run_file if cell_kind(cell) == "python" else _run_cell
        report += run(cell, namespace, shell, cell_timeout, send=send, timed=timed, untimed=untimed, timeout_exc=timeout_exc)
    found = {name: callable(namespace.get(name)) for name in kernels}
    return {"op": "loaded", "cells": report, "found": found, "namespace": namespace}
