"""Glue between the student's notebooks and the training loops (ships as ``m5_student.notebook``).

* :func:`load_kernels` runs the kernel answer cells of the assignment notebook in a
  fresh namespace and returns the student's ten numpy kernels, so the capstone lab
  trains with the student's own code;
* :func:`check_port` is the public property test of a torch port written in the lab:
  on random inputs its values must equal the student's numpy kernel and its autograd
  gradients must equal central finite differences of that numpy kernel;
* :func:`report_assigned` is the visible part of the numerical answers' test cells;
* :func:`ported` and :func:`lab_section` keep a missing part of the lab to one line:
  a kernel or port that is still a stub raises NotImplementedError naming where to
  write it, and the section that needs it prints that line and stops, while the rest of
  the lab runs on.

What they print is in the language of the kit (``m5_student.notebook_language()``, the
language of the notebooks it was built for), so one code cell serves every notebook.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

KERNEL_NAMES = (
    "dqn_targets",
    "double_dqn_targets",
    "masked_token_nll",
    "cql_discrete_penalty",
    "expectile_loss",
    "return_to_go",
    "pessimistic_values",
    "behavior_support_mask",
    "fqe_targets",
    "iql_advantage_weights",
)
PORTS = ("masked_token_nll", "cql_discrete_penalty", "expectile_loss", "iql_advantage_weights")
# An untouched kernel cell: its body is nbgrader's stub, which raises NotImplementedError
# (saying TEXT[lang]["stub"]; autograder/assign/stubs.py writes it).
STUB_RE = re.compile(r"^[ \t]*raise NotImplementedError\(", re.MULTILINE)
LANGUAGES = ("en", "ru")
TEXT = {
    "en": {
        "stub": "implement `{name}` here: replace this line with your code",
        "missing_kernel": "implement `{name}` in the assignment notebook ({notebook}, Part 3)",
        "missing_port": "implement `{name}_torch` in this lab notebook (section 5a)",
        "section_skipped": "This section did not run: {reason}. The rest of the lab still runs.",
        "needs_section": "it needs the results of section {section}, which did not run",
        "cell_error": "{notebook}, cell {cell}: {error}",
        "port_missing": "{name} port: not implemented yet: write `{name}_torch` in the cell above",
        "port_failed": "{name} port: {failed}/{cases} cases FAIL; first: {first}",
        "port_passed": "{name} port: values and gradients match your numpy kernel on {cases} random cases",
        "case_error": "case {case}: {error}",
        "case_value": "case {case}: value {got} != numpy {want}",
        "case_gradient": "case {case}: gradient {got} != finite differences {want}",
        "unassigned": "not assigned yet: {names}",
        "assigned": "all answers assigned",
        "loaded": "Your kernels: {written} of {total} written, read from {notebook} as saved at {saved}.",
        "loaded_note": (
            "The lab reads that saved file and runs only its imports cell and kernel cells: save the assignment "
            "notebook after each change, and keep a helper a kernel calls inside that kernel's cell."
        ),
    },
    "ru": {
        "stub": "реализуйте `{name}` здесь: замените эту строку своим кодом",
        "missing_kernel": "реализуйте `{name}` в ноутбуке задания ({notebook}, часть 3)",
        "missing_port": "реализуйте `{name}_torch` в этом ноутбуке лабораторной работы (раздел 5a)",
        "section_skipped": "Этот раздел не выполнен: {reason}. Остальная часть лабораторной работы выполняется.",
        "needs_section": "ему нужны результаты раздела {section}, который не выполнен",
        "cell_error": "{notebook}, ячейка {cell}: {error}",
        "port_missing": "{name}, версия на torch: ещё не реализована: напишите `{name}_torch` в ячейке выше",
        "port_failed": "{name}, версия на torch: ОШИБКА в {failed} из {cases} случаев; первый: {first}",
        "port_passed": "{name}, версия на torch: значения и градиенты совпадают с вашим ядром numpy на {cases} случайных примерах",
        "case_error": "случай {case}: {error}",
        "case_value": "случай {case}: значение {got} != numpy {want}",
        "case_gradient": "случай {case}: градиент {got} != конечные разности {want}",
        "unassigned": "ещё не присвоены: {names}",
        "assigned": "все ответы присвоены",
        "loaded": "Ваши ядра: написано {written} из {total}, прочитаны из {notebook} в версии, сохранённой {saved}.",
        "loaded_note": (
            "Лабораторная читает этот сохранённый файл и выполняет только ячейку импортов и ячейки ядер: "
            "сохраняйте ноутбук задания после каждого изменения, а вспомогательную функцию держите в ячейке "
            "того ядра, которое её вызывает."
        ),
    },
}


def _language(lang: str | None = None) -> str:
    """``lang`` if given, else the kit's (English outside the kit)."""
    if lang is not None:
        if lang not in LANGUAGES:
            raise ValueError(f"`lang` must be one of {LANGUAGES}, got {lang!r}")
        return lang
    try:
        from m5_student import notebook_language  # the kit, when this file runs inside it
    except ImportError:  # loaded on its own, outside the kit
        return "en"
    return notebook_language()


def report_assigned(names, namespace, lang: str | None = None) -> None:
    """Print which of ``names`` are not yet assigned in ``namespace`` (never raises on them)."""
    try:
        t = TEXT[_language(lang)]
        missing = [str(n) for n in names if namespace.get(n) is None]  # None: the untouched stub's value
        print(t["unassigned"].format(names=", ".join(missing)) if missing else t["assigned"])
    except Exception as exc:  # a traceback here would show nbgrader's hidden part of the cell
        print(f"{type(exc).__name__}: {exc}")


def _cells(path: Path) -> list[dict]:
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        out.append(
            {
                "id": cell.get("id", ""),
                "source": "".join(source) if isinstance(source, list) else source,
                "nbgrader": (cell.get("metadata") or {}).get("nbgrader") or {},
            }
        )
    return out


def _kernel_cells(path: Path) -> list[dict]:
    wanted = []
    for cell in _cells(path):
        defines = any(f"def {name}(" in cell["source"] for name in KERNEL_NAMES)
        if cell["id"] == "kernel_imports" or (cell["nbgrader"].get("solution") and defines):
            wanted.append(cell)
    return wanted


def _implemented(path: Path) -> int:
    return sum(not STUB_RE.search(c["source"]) for c in _kernel_cells(path) if c["id"] != "kernel_imports")


def find_assignment(folder: str | Path = ".", lang: str | None = None) -> Path:
    """The assignment notebook in ``folder`` with the most implemented kernels.

    Ties prefer the notebook in ``lang``. Raises FileNotFoundError when there is none.
    """
    candidates = sorted(Path(folder).glob("m05_assignment_*.ipynb"))
    if not candidates:
        raise FileNotFoundError(f"find_assignment: no m05_assignment_*.ipynb in {Path(folder).resolve()}")
    return max(candidates, key=lambda p: (_implemented(p), p.stem.endswith(f"_{lang}")))


def _missing(name: str, path: Path, lang: str) -> Callable:
    message = TEXT[lang]["missing_kernel"].format(name=name, notebook=path.name)

    def kernel(*args, **kwargs):
        raise NotImplementedError(message)

    kernel.__name__ = name
    return kernel


def _told(fn: Callable, message: str) -> Callable:
    """``fn``, with the NotImplementedError of an untouched stub (bare, or saying "implement
    `<its name>` here", in any language) replaced by one saying ``message``."""

    stub_says = {"", *(TEXT[lang]["stub"].format(name=getattr(fn, "__name__", "")) for lang in LANGUAGES)}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NotImplementedError as exc:
            if " ".join(str(a) for a in exc.args) not in stub_says:
                raise
            raise NotImplementedError(message) from None

    return wrapper


def ported(fn: Callable, name: str, lang: str | None = None) -> Callable:
    """The lab's torch port ``fn`` of kernel ``name``: while it is still a stub, calling it
    raises NotImplementedError saying where to write it (section 5a of the lab)."""
    return _told(fn, TEXT[_language(lang)]["missing_port"].format(name=name))


class lab_section:
    """A lab section's cell body: a NotImplementedError inside (a missing kernel or port)
    prints one line saying what to implement and ends the section; any other error is raised."""

    def __init__(self, lang: str | None = None):
        self.words = TEXT[_language(lang)]

    def require(self, value, section: str) -> None:
        """Stop the section (one line) when ``value``, the result of lab section ``section``, is None."""
        if value is None:
            raise NotImplementedError(self.words["needs_section"].format(section=section))

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None and issubclass(kind, NotImplementedError):
            print(self.words["section_skipped"].format(reason=str(exc).rstrip(".") or kind.__name__))
            return True
        return False


def load_kernels(path: str | Path | None = None, *, lang: str | None = None) -> dict[str, Callable]:
    """The ten kernels of the assignment notebook ``path`` (default: :func:`find_assignment`).

    Only the imports cell and the kernel answer cells of the saved file run (it prints
    which file, when it was saved and how many kernels it holds). A kernel that is missing
    (or whose cell fails), or still raises the answer stub's bare NotImplementedError,
    raises NotImplementedError naming the kernel and where to write it; cell errors are printed. ``lang`` (default: the kit's) is the
    language of the messages and, among equally complete notebooks, the one preferred.
    """
    lang = _language(lang)
    path = find_assignment(".", lang) if path is None else Path(path)
    namespace: dict = {"__name__": "m5_student_kernels"}
    for cell in _kernel_cells(path):
        try:
            exec(compile(cell["source"], f"<{path.name}:{cell['id']}>", "exec"), namespace)
        except Exception as exc:  # one broken cell costs only its kernels
            print(TEXT[lang]["cell_error"].format(notebook=path.name, cell=cell["id"], error=f"{type(exc).__name__}: {exc}"))
    saved = datetime.datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    print(TEXT[lang]["loaded"].format(written=_implemented(path), total=len(KERNEL_NAMES), notebook=path.name, saved=saved))
    print(TEXT[lang]["loaded_note"])
    message = TEXT[lang]["missing_kernel"]
    return {
        name: _told(namespace[name], message.format(name=name, notebook=path.name))
        if callable(namespace.get(name))
        else _missing(name, path, lang)
        for name in KERNEL_NAMES
    }


# ------------------------------------------------------------------ torch ports
def _numeric_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    flat, out = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + eps
        up = f(x)
        flat[i] = keep - eps
        down = f(x)
        flat[i] = keep
        out[i] = (up - down) / (2 * eps)
    return grad


def _cases(name: str, rng: np.random.Generator):
    """(float input to differentiate, other args, kwargs) for one random case of ``name``."""
    if name == "masked_token_nll":
        shape = (int(rng.integers(1, 4)), int(rng.integers(1, 6)))
        logp = -rng.exponential(1.0, shape)
        mask = rng.random(shape) < 0.6
        mask.flat[int(rng.integers(mask.size))] = True
        return logp, (mask,), {}
    if name == "cql_discrete_penalty":
        batch, actions = int(rng.integers(1, 5)), int(rng.integers(2, 5))
        return rng.normal(0, 3, (batch, actions)), (rng.integers(0, actions, batch),), {}
    if name == "expectile_loss":
        u = rng.normal(0, 2, int(rng.integers(1, 8)))
        u[np.abs(u) < 1e-3] = 0.5  # the loss has a kink at 0: keep finite differences away from it
        return u, (float(rng.uniform(0.05, 0.95)),), {}
    if name == "iql_advantage_weights":
        a = rng.normal(0, 1, int(rng.integers(1, 8)))
        beta, cap = float(rng.uniform(0.1, 3.0)), float(rng.uniform(2.0, 20.0))
        near_cap = np.abs(beta * a - np.log(cap)) < 1e-3
        a[near_cap] -= 0.01  # the cap is a kink too
        return a, (beta,), {"max_weight": cap}
    raise ValueError(f"check_port: `name` must be one of {PORTS}, got {name!r}")


def check_port(
    torch_fn: Callable, numpy_fn: Callable, name: str, *, cases: int = 25, seed: int = 0, tol: float = 1e-6, lang: str | None = None
) -> bool:
    """Compare a torch port with the numpy kernel on ``cases`` random inputs; print a report.

    Values: the port's output (float64 tensors in) equals ``numpy_fn``'s within ``tol``.
    Gradients: d(sum of the output * fixed random weights)/d(input) from autograd
    equals central finite differences of ``numpy_fn``. Returns True when all pass.
    The report is in ``lang`` (default: the kit's). Raises ValueError for an unknown ``name``.
    """
    import torch  # the lab's ports only: the assignment notebook never loads torch

    if name not in PORTS:
        raise ValueError(f"check_port: `name` must be one of {PORTS}, got {name!r}")
    words = TEXT[_language(lang)]
    rng = np.random.default_rng(seed)
    failures = []
    for case in range(cases):
        x, args, kwargs = _cases(name, rng)
        weights = rng.normal(size=np.shape(numpy_fn(x, *args, **kwargs)))

        def scalar(z):
            return float(np.sum(np.asarray(numpy_fn(z, *args, **kwargs), dtype=float) * weights))

        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        t_args = tuple(torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in args)
        try:
            out = torch_fn(t, *t_args, **kwargs)
            value = out.detach().numpy()
            (out * torch.as_tensor(weights)).sum().backward()
            grad = t.grad.numpy() if t.grad is not None else np.zeros_like(x)
        except NotImplementedError:
            print(words["port_missing"].format(name=name))
            return False
        except Exception as exc:
            failures.append(words["case_error"].format(case=case, error=f"{type(exc).__name__}: {exc}"))
            continue
        want = np.asarray(numpy_fn(x, *args, **kwargs), dtype=float)
        if value.shape != want.shape or not np.allclose(value, want, rtol=tol, atol=tol):
            failures.append(words["case_value"].format(case=case, got=value, want=want))
            continue
        numeric = _numeric_grad(scalar, x.copy())
        if not np.allclose(grad, numeric, rtol=1e-4, atol=1e-5):
            failures.append(words["case_gradient"].format(case=case, got=np.round(grad, 6), want=np.round(numeric, 6)))
    if failures:
        print(words["port_failed"].format(name=name, failed=len(failures), cases=cases, first=failures[0]))
        return False
    print(words["port_passed"].format(name=name, cases=cases))
    return True
