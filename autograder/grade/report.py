"""Write what grading found: Gradescope results.json, the class grades.csv, tables.

Feedback shows the failing input, what was expected, what came back and a hint,
in the submission's language; never hidden test source or grader tracebacks.
"""
from __future__ import annotations

import csv
import inspect
import json
from pathlib import Path

import numpy as np

import reference_impl
from autograder.grade.score import SubmissionResult, TestResult, class_summary

WORDS = {
    "en": {"passed": "passed", "failed": "FAILED", "input": "Failing input", "expected": "expected",
           "got": "got", "problem": "problem", "hint": "Hint", "total": "Total", "kernel": "item",
           "score": "score", "mean": "mean", "most_failed": "most failed test",
           "disclaimer": "Hidden tests check each kernel on hundreds of generated inputs; "
                         "the score is the sum of the properties that held on all of them."},
    "ru": {"passed": "пройдено", "failed": "НЕ ПРОЙДЕНО", "input": "Вход, на котором тест падает",
           "expected": "ожидалось", "got": "получено", "problem": "проблема", "hint": "Подсказка",
           "total": "Итого", "kernel": "задание", "score": "баллы", "mean": "среднее",
           "most_failed": "чаще всего не пройден",
           "disclaimer": "Скрытые тесты проверяют каждое ядро на сотнях сгенерированных входов; "
                         "балл — сумма свойств, выполненных на всех входах."},
}


def show(value, limit: int = 400) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=6, separator=", ", threshold=40, max_line_width=10**6).replace("\n", "")
        text = f"array({text})" if value.ndim else text
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show_call(kernel: str, call) -> str:
    fn = getattr(reference_impl, kernel, None)
    names = list(inspect.signature(fn).parameters) if fn is not None else []
    parts = [f"{names[i]}={show(np.asarray(a) if isinstance(a, list) else a)}" if i < len(names) else show(a)
             for i, a in enumerate(call.args)]
    parts += [f"{k}={show(v)}" for k, v in call.kwargs.items()]
    return f"{kernel}(" + ", ".join(parts) + ")"


def feedback(test: TestResult, lang: str) -> str:
    w = WORDS[lang]
    if test.passed:
        return w["passed"]
    lines = [w["failed"]]
    f = test.failure
    if f is not None:
        lines.append(f"{w['problem']}: {f.message[lang]}")
        call = test.counterexample or f.call
        if call is not None:
            lines.append(f"{w['input']}: {show_call(test.group, call)}")
        if f.expected is not None:
            lines.append(f"{w['expected']}: {show(f.expected)}")
        if f.got is not None:
            lines.append(f"{w['got']}: {show(f.got)}")
    if test.hint.get(lang):
        lines.append(f"{w['hint']}: {test.hint[lang]}")
    return "\n".join(lines)


def results_json(result: SubmissionResult, isolation_warning: str | None = None) -> dict:
    lang = result.language
    w = WORDS[lang]
    summary = [f"{w['total']}: {result.score:g} / {result.max_score:g}", w["disclaimer"]]
    summary += [note[lang] for note in result.notes]
    if isolation_warning:
        summary.insert(0, isolation_warning)
    return {
        "score": round(result.score, 6),
        "execution_time": round(result.seconds, 3),
        "output": "\n".join(summary),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{
            "name": t.name[lang],
            "score": t.score,
            "max_score": t.max_score,
            "status": "passed" if t.passed else "failed",
            "output": feedback(t, lang),
            "visibility": "visible",
        } for t in result.tests],
    }


def write_results(result: SubmissionResult, out_dir: Path, isolation_warning: str | None = None) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.json"
    path.write_text(json.dumps(results_json(result, isolation_warning), indent=2, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def write_grades_csv(results: list[SubmissionResult], path: Path) -> Path:
    groups: list[str] = []
    for r in results:
        for g in r.by_group():
            if g not in groups:
                groups.append(g)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["submission", "score", "max_score", *groups])
        for r in results:
            per = r.by_group()
            writer.writerow([r.submission, f"{r.score:g}", f"{r.max_score:g}", *(f"{per.get(g, (0, 0))[0]:g}" for g in groups)])
    return path


def grade_table(results: list[SubmissionResult], lang: str = "en") -> str:
    w = WORDS[lang]
    width = max([len(r.submission) for r in results] + [10])
    lines = [f"{'submission':<{width}}  {w['score']:>9}  time"]
    for r in results:
        lines.append(f"{r.submission:<{width}}  {r.score:>4g}/{r.max_score:<4g}  {r.seconds:.2f}s"
                     + (f"  ({r.error})" if r.error else ""))
    return "\n".join(lines)


def summary_table(results: list[SubmissionResult], lang: str = "en") -> str:
    w = WORDS[lang]
    rows = class_summary(results, lang)
    width = max([len(r["group"]) for r in rows] + [8])
    lines = [f"{w['kernel']:<{width}}  {w['mean']:>10}  {w['most_failed']}"]
    for row in rows:
        lines.append(f"{row['group']:<{width}}  {row['mean']:>5.2f}/{row['max']:<4g}  {row['most_failed']}")
    return "\n".join(lines)
