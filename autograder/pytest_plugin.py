"""``pytest --m5-submission PATH``: the hidden suite as pytest items (docs/pytest_plugin.md).

Registered through the package's ``pytest11`` entry point, so every pytest run that has the
package installed imports this module: it imports nothing but pytest and the standard
library, and without ``--m5-submission`` it only adds its options. With it, a
:class:`HiddenSuite` is registered: one item per hidden property and numerical answer
(``m5/<file>::<kernel>::<property>``), whose outcome, points and feedback are those of
``m5 grade``, since the submission is graded once, by ``m5 grade``'s own steps
(:func:`autograder.grade.classrun.grade_found`, the sandboxed worker included), and each
item reads its test from the ``results.json`` document ``m5 grade`` writes. The
submission's code runs only in the sandbox, never in the pytest process; the
``m5_student`` fixture calls its kernels there for an instructor's own properties.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LANGS = ("en", "ru")
# Characters a node id may carry: a student's file name is shown as one safe word.
UNSAFE_IN_NODE_ID = re.compile(r"[^A-Za-z0-9._-]")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("m5", "Module 5 hidden suite (docs/pytest_plugin.md)")
    group.addoption(
        "--m5-submission",
        metavar="PATH",
        help="grade this submission (.py or .ipynb) as m5 grade does: one item per hidden property and numerical answer",
    )
    group.addoption("--m5-lang", choices=LANGS, help="feedback language (default: the submission's own)")
    group.addoption(
        "--m5-no-shrink",
        action="store_true",
        help="no counterexample search: feedback shows the smallest failing generated input (m5 grade --no-shrink)",
    )


def pytest_configure(config: pytest.Config) -> None:
    raw = config.getoption("m5_submission", None)
    if raw is None:
        return
    refuse_configuration_beside(config, raw)
    suite = HiddenSuite(config, submission(raw), lang=config.getoption("m5_lang"), shrink=not config.getoption("m5_no_shrink"))
    config.pluginmanager.register(suite, "m5-hidden-suite")


def usage(problem: str) -> pytest.UsageError:
    """A one-line usage error naming the option and the problem."""
    from autograder.grade.report import for_terminal  # why: the grader loads only when a submission is named

    return pytest.UsageError(f"--m5-submission: {for_terminal(problem)}")


def refuse_configuration_beside(config: pytest.Config, raw: str) -> None:
    """A usage error when pytest took its configuration file from the submission's folder.

    pytest picks its rootdir and ini file before any plugin loads, and it reads the word
    after ``--m5-submission`` as a path to search from: a ``pytest.ini`` (or ``pyproject.toml``,
    ``tox.ini``, ``setup.cfg``) beside a student's file would configure this run. One found
    from the invocation folder (or above it) is the instructor's; any other is refused.
    ``--m5-submission=PATH`` (one word) is never searched from."""
    inipath = config.inipath
    if inipath is None or "--m5-submission" not in config.invocation_params.args:
        return
    here = Path(config.invocation_params.dir).absolute()
    if inipath.parent.absolute() not in (here, *here.parents):
        raise usage(f"pytest read {inipath}, beside the submission: write --m5-submission={raw} (one word) to keep its folder's files out")


def submission(raw: str):
    """The submission ``raw`` names (a discovery item), or a usage error saying why it cannot be graded:
    the same refusals as ``m5 grade`` given one file, and a folder (``m5 grade`` grades folders; this grades one file)."""
    from autograder.grade import classrun, discover, pipeline  # why: the grader loads only when a submission is named

    path = Path(raw)
    if path.is_dir():
        raise usage(f"{raw} is a folder: name one submission file (.py or .ipynb); m5 grade grades whole folders")
    try:
        found = discover.discover([path], set(pipeline.KERNELS))
    except (FileNotFoundError, ValueError) as exc:
        raise usage(str(exc)) from None
    if not found.submissions:
        raise usage(f"{raw}: {found.skipped[0].skip}" if found.skipped else f"{raw}: not a submission")
    refused = classrun.refusal_alone(found.submissions[0])
    if refused is not None:
        raise usage(refused)
    return found.submissions[0]


def expected_items() -> list[tuple[str, str, float]]:
    """(group, key, points) of every test ``m5 grade`` gives a submission, in its order: each
    kernel's hidden properties, then the numerical answers (a point each)."""
    from autograder.grade import judge, pipeline  # why: the grader loads only when a submission is named
    from autograder.hidden.kernels import PROPERTIES  # why: Hypothesis and the suite load only when a submission is named

    properties = [(kernel, p.key, p.points) for kernel in pipeline.KERNELS for p in PROPERTIES if p.kernel == kernel]
    return properties + [(exercise, name, 1.0) for exercise, name, _ in judge.graded_answers()]


class PropertyFailed(Exception):
    """A hidden property did not hold: ``args[0]`` is its feedback as ``m5 grade`` wrote it."""


class HiddenSuite:
    """The plugin's work for one ``--m5-submission`` run (registered only then).

    Collection: the hidden suite's items, under the session, and nothing of the project's
    ``testpaths`` unless paths are named; the submission file itself is never collected
    (pytest would import it). Running: the submission is graded once, when the first item
    runs, exactly as ``m5 grade FILE`` grades it.
    """

    def __init__(self, config: pytest.Config, found, *, lang: str | None, shrink: bool):
        self.found, self.lang, self.shrink = found, lang, shrink
        self.path = Path(found.path).absolute()
        self.label = UNSAFE_IN_NODE_ID.sub("_", self.path.name)
        self.isolation = None
        self._graded = None  # ({(group, key): results.json test entry}, the document's summary), once graded
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            config.args = []  # no paths named: the hidden suite alone, not the project's testpaths
        elif self.path in {Path(config.invocation_params.dir, arg.split("::")[0]).absolute() for arg in config.args}:
            raise usage(f"{found.path} is also named as a path to collect: it runs in the sandbox, never here (select items with -k)")

    # ------------------------------------------------------------ collection
    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector):
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.append(SubmissionNode.from_parent(collector, name=self.label, nodeid=f"m5/{self.label}", path=self.path))
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(self, file_path: Path, parent):
        collectors = yield
        return [] if file_path.absolute() == self.path else collectors  # student code is never imported here

    # ------------------------------------------------------------ running
    def pytest_sessionstart(self, session) -> None:
        from autograder.grade import sandbox  # why: the grader loads only when a submission is named

        self.isolation = sandbox.isolation()
        if self.isolation.fatal:  # what m5 grade refuses with exit status 3: every score would be 0
            pytest.exit(f"m5: {self.isolation.fatal}", returncode=3)

    def outcome(self, group: str, key: str) -> tuple[dict | None, str]:
        """The results.json entry of one test (None when the submission could not be graded)
        and the submission's summary text; the submission is graded on the first call."""
        if self._graded is None:
            from autograder.grade import classrun, report  # why: the grader loads only when a submission is named

            (result,) = classrun.grade_found([self.found], jobs=1, lang=self.lang, shrink=self.shrink, on_result=lambda *_: None)
            document = report.results_json(result, self.isolation.warning if self.isolation else None)
            self._graded = {(t.group, t.key): entry for t, entry in zip(result.tests, document["tests"])}, document["output"]
        entries, summary = self._graded
        return entries.get((group, key)), summary

    @pytest.fixture(scope="session")
    def m5_student(self):
        """The submission's kernels, each call run in its sandboxed worker:
        ``m5_student.dqn_targets(rewards, terminated, next_q)`` returns the student's array, or
        raises what the student's code raised (a ValueError stays a ValueError)."""
        from autograder.grade.student_calls import StudentKernels  # why: the grader loads only when a submission is named

        with StudentKernels(self.path, lang=self.lang) as kernels:
            yield kernels

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self._graded is None:
            return
        terminalreporter.write_sep("=", f"m5 grade of {self.label}")
        terminalreporter.write_line(self._graded[1])


class SubmissionNode(pytest.Collector):
    """The submission: one child per kernel (and per exercise of the numerical answers)."""

    def collect(self):
        groups: dict[str, list[tuple[str, float]]] = {}
        for group, key, points in expected_items():
            groups.setdefault(group, []).append((key, points))
        return [GroupNode.from_parent(self, name=group, tests=tests) for group, tests in groups.items()]


class GroupNode(pytest.Collector):
    """A kernel (or an exercise): one item per test, with its points."""

    def __init__(self, *, tests: list[tuple[str, float]], **kwargs):
        super().__init__(**kwargs)
        self.tests = tests

    def collect(self):
        return [HiddenItem.from_parent(self, name=key, max_points=points) for key, points in self.tests]


class HiddenItem(pytest.Item):
    """One hidden property (or numerical answer): passes or fails as in ``m5 grade``, with its
    points in ``user_properties`` (the JUnit XML's ``<properties>``)."""

    def __init__(self, *, max_points: float, **kwargs):
        super().__init__(**kwargs)
        self.max_points = max_points

    def runtest(self) -> None:
        suite: HiddenSuite = self.config.pluginmanager.get_plugin("m5-hidden-suite")
        entry, summary = suite.outcome(self.parent.name, self.name)
        if entry is None:  # the submission could not be graded: 0 of the test's points, and why
            self.user_properties += [("points", 0), ("max_points", self.max_points), ("title", f"{self.parent.name}: {self.name}")]
            raise PropertyFailed(f"{self.parent.name}: {self.name}: not graded\n{summary}")
        self.user_properties += [("points", entry["score"]), ("max_points", entry["max_score"]), ("title", entry["name"])]
        if entry["status"] != "passed":
            raise PropertyFailed(f"{entry['name']}\n{entry['output']}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, PropertyFailed):
            return str(excinfo.value.args[0])
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.name}"
