"""The student kit on the computers students have: no SIGALRM (Windows), a path with spaces
and Cyrillic letters (a Russian user name), and a locale that cannot encode Russian
(``LC_ALL=C PYTHONUTF8=0``).

Windows itself is not available here: these tests remove ``signal.SIGALRM``,
``signal.setitimer`` and ``signal.ITIMER_REAL`` before the kit is imported, which is
what the kit sees on Windows, and run the kit as a student does, without the course
package (``classroom.kit_python``).
"""

from __future__ import annotations

import json
import os
import re

import pytest

# tests/autograder is on sys.path
from classroom import TERMINAL_BUG, TERMINAL_MASK, fill, kit_python, released_copy

from autograder.check import public

# What the kit sees on Windows: the signal module without an alarm.
WITHOUT_ALARM = """
import signal
for name in ("SIGALRM", "setitimer", "ITIMER_REAL", "alarm"):
    if hasattr(signal, name):
        delattr(signal, name)
"""
RUN_KIT = (
    WITHOUT_ALARM
    + """
import runpy, sys
sys.argv = ["m5_student", *sys.argv[1:]]
runpy.run_module("m5_student", run_name="__main__", alter_sys=True)
"""
)
# A locale whose encoding is ASCII, with Python's UTF-8 mode off.
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
RUSSIAN_HOME = "Пользователь Иван/мои курсы"


def kit_folder(tmp_path, lang: str):
    return released_copy(tmp_path / RUSSIAN_HOME, lang)


def run(folder, *args: str) -> tuple[int, str, str]:
    proc = kit_python(folder, *args, env={**ASCII_LOCALE, "HOME": os.fsdecode(folder.parent)}, text=False)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")


def test_the_simulated_windows_has_no_alarm_and_an_ascii_console(tmp_path):
    folder = kit_folder(tmp_path, "en")
    code = WITHOUT_ALARM + "import sys, signal; from m5_student import time_limit; print(sys.stdout.encoding, time_limit.alarm_available())"
    status, out, err = run(folder, "-c", code)
    assert (status, out.split()) == (0, ["ascii", "False"]), err


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_whole_self_check_passes_a_correct_notebook_without_an_alarm(tmp_path, lang):
    folder = kit_folder(tmp_path, lang)
    status, out, err = run(folder, "-c", RUN_KIT, "check", fill(folder, lang))
    assert status == 0, out + err
    summary = r": (\d+)/\1 public checks passed" if lang == "en" else r": пройдено (\d+) из \1 открыт"
    assert len(re.findall(summary, out)) == len(public.KERNEL_NAMES) and "SIGALRM" not in out + err
    assert ("FAIL" if lang == "en" else "ОШИБКА") not in out and not err.strip()


def test_the_self_check_names_a_wrong_kernel_without_an_alarm(tmp_path):
    folder = kit_folder(tmp_path, "ru")
    notebook = fill(folder, "ru", {"kernel_dqn_targets": (TERMINAL_MASK, TERMINAL_BUG)})
    status, out, err = run(folder, "-c", RUN_KIT, "check", notebook)
    assert status == 1, out + err
    assert "dqn_targets: пройдено 4 из 7 открытых проверок" in out
    assert out.count("пройдено") == len(public.KERNEL_NAMES) and not err.strip()


def test_every_check_cell_of_the_notebook_runs_without_an_alarm(tmp_path):
    """The notebook's own check cells (``check(kernel, lang=LANG)``), as Jupyter runs them:
    every code cell up to the last check cell, in order, in one namespace."""
    folder = kit_folder(tmp_path, "en")
    notebook = fill(folder, "en", {"kernel_dqn_targets": (TERMINAL_MASK, TERMINAL_BUG)})
    driver = WITHOUT_ALARM + (
        "import json\n"
        f"cells = json.load(open({notebook!r}, encoding='utf-8'))['cells']\n"
        "namespace = {'__name__': '__main__'}\n"
        "for cell in cells:\n"
        "    role = (cell['metadata'].get('m5') or {}).get('role')\n"
        "    if cell['cell_type'] == 'code' and role in (None, 'setup', 'selfcheck'):\n"
        "        exec(compile(''.join(cell['source']), cell['id'], 'exec'), namespace)\n"
    )
    status, out, err = run(folder, "-c", driver)
    assert status == 0, out + err
    assert "dqn_targets: 4/7 public checks passed" in out
    assert out.count("public checks passed") == len(public.KERNEL_NAMES)
    assert out.count("[FAIL]") == 3 and "SIGALRM" not in out + err


HANGING_RETURN_TO_GO = """
def return_to_go(rewards, gamma=1.0):
    import numpy as np
    rewards = np.asarray(rewards, dtype=float)
    if rewards.size == 0:
        while True:  # hangs on an empty episode only
            pass
    out = np.zeros_like(rewards)
    running = 0.0
    for t in range(rewards.size - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out
"""


@pytest.mark.parametrize("lang, message", [("en", "did not finish within 1 s"), ("ru", "не завершилась за 1 с")])
def test_a_hanging_kernel_is_stopped_with_a_clear_message_without_an_alarm(tmp_path, lang, message):
    folder = kit_folder(tmp_path, lang)
    code = (
        WITHOUT_ALARM
        + HANGING_RETURN_TO_GO
        + "import json\nfrom m5_student import checks\n"
        + f"results = checks.run_checks(return_to_go, timeout=1.0, lang={lang!r})\n"
        + "print(json.dumps([(r.check.title['en'], r.passed, r.detail) for r in results]))\n"
    )
    status, out, err = run(folder, "-c", code)
    assert status == 0, out + err
    results = json.loads(out)
    timed_out = [title for title, passed, detail in results if message in detail]
    assert timed_out == ["an empty batch gives an empty result"], results
    assert any(passed for _, passed, _ in results)  # the checks after it still ran


def test_a_report_the_console_cannot_show_is_printed_in_utf8_not_a_traceback(tmp_path):
    """Under ``LC_ALL=C`` the Russian report would raise UnicodeEncodeError; the kit writes UTF-8."""
    folder = kit_folder(tmp_path, "ru")
    status, out, err = run(folder, "-c", RUN_KIT, "check", "missing.ipynb")
    assert status == 2 and "файл не найден" in out and "Traceback" not in err, out + err
    assert "Пользователь Иван" not in out  # the path is relative, as the student typed it
