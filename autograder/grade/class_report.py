"""What the class got wrong: ``class_report.json`` and a self-contained ``class_report.html``.

Every class run writes both beside ``grades.csv``. The report is built from one plain
record per submission (:func:`record`), so a merge of shards (``shards.py``) builds the
same report from the records its shards kept. It holds:

* the score distribution (a histogram, mean and median of the graded submissions) and
  the submissions that could not be graded, with why;
* per kernel and per property, the share of the graded submissions that failed it, most
  failed first;
* the named likely mistakes: how many submissions made each, its explanation, and which;
* per numerical exercise, the most common wrong answers and their counts;
* the slowest submissions, and those that hit a limit (a cell or a kernel stopped);
* pairs of submissions with near-identical code, side by side (:mod:`.similarity`), each
  member with whether it was graded like its cluster's first and, kernel by kernel, whether
  its outputs on the hidden inputs are the same (:mod:`.output_digest`).

Every text a student controls (file and folder names, answers) is escaped, and the page
carries a Content-Security-Policy that allows no script at all: nothing in it can run.
"""

from __future__ import annotations

import html
import io
import json
import statistics
from collections import Counter
from pathlib import Path

import numpy as np

from autograder.grade import copy_clusters, outputs, report, similarity
from autograder.grade.score import SubmissionResult, assignment_total

JSON_NAME = "class_report.json"
HTML_NAME = "class_report.html"
TOP = 5  # wrong answers per exercise and slowest submissions listed
LIMIT_WORDS = ("time limit", "stopped", "memory limit")  # read in the English message of a failure or note

WORDS = {
    "en": {
        "title": "Class report",
        "submissions": "submissions",
        "graded": "graded",
        "mean": "mean",
        "median": "median",
        "maximum": "maximum",
        "not_graded": "Not graded",
        "why": "why",
        "distribution": "Score distribution",
        "score": "score",
        "count": "submissions",
        "kernels": "Kernels, most failed first",
        "properties": "Properties, most failed first",
        "kernel": "kernel",
        "property": "property",
        "failed": "failed",
        "share": "share",
        "mistakes": "Named likely mistakes",
        "mistake": "mistake",
        "who": "submissions",
        "answers": "Most common wrong numerical answers",
        "exercise": "exercise",
        "answer": "answer",
        "slowest": "Slowest submissions",
        "seconds": "seconds",
        "limits": "Submissions that hit a limit",
        "what": "what",
        "none": "none",
        "missing": "(missing)",
        "similar": "Near-identical code",
        "shared": "of their fingerprints shared",
        "cluster": "Cluster",
        "alike": "graded like the first (same failed tests and answers)",
        "outputs": "outputs on the hidden inputs, against the first",
        "same_for": "same for {same} of {total} {kernels}",
        "kernel_forms": ("kernel", "kernels"),
        "differ_in": "differ in: {kernels}",
        "not_compared": "not compared (not run, or not to the end): {kernels}",
        "no_outputs": "not known",
        "yes": "yes",
        "no": "no",
        "similar_note": (
            "Groups of submissions whose code is the same once names, comments, layout and statements that "
            "do nothing are set aside, or one of which holds the other (the released notebook's code does not "
            "count). Each member's outputs on the hidden inputs are compared with the first's, kernel by kernel: "
            "a member whose outputs differ in a kernel has the same shape with different logic there, not a copy "
            "of it. A flag changes no grade: read the codes side by side. All {pairs} flagged pairs are in {file}."
        ),
    },
    "ru": {
        "title": "Отчёт по группе",
        "submissions": "решений",
        "graded": "проверено",
        "mean": "среднее",
        "median": "медиана",
        "maximum": "максимум",
        "not_graded": "Не проверены",
        "why": "причина",
        "distribution": "Распределение баллов",
        "score": "балл",
        "count": "решений",
        "kernels": "Ядра, сначала самые проваленные",
        "properties": "Свойства, сначала самые проваленные",
        "kernel": "ядро",
        "property": "свойство",
        "failed": "провалили",
        "share": "доля",
        "mistakes": "Названные вероятные ошибки",
        "mistake": "ошибка",
        "who": "решения",
        "answers": "Самые частые неверные численные ответы",
        "exercise": "упражнение",
        "answer": "ответ",
        "slowest": "Самые медленные решения",
        "seconds": "секунд",
        "limits": "Решения, упёршиеся в лимит",
        "what": "что",
        "none": "нет",
        "missing": "(нет ответа)",
        "similar": "Почти одинаковый код",
        "shared": "общих отпечатков",
        "cluster": "Группа",
        "alike": "оценено как первое (те же проваленные тесты и ответы)",
        "outputs": "результаты на скрытых входах в сравнении с первым",
        "same_for": "совпадают у {same} из {total} {kernels}",
        "kernel_forms": ("ядра", "ядер"),
        "differ_in": "различаются: {kernels}",
        "not_compared": "не сравнивались (ядро не запускалось или не выполнено до конца): {kernels}",
        "no_outputs": "неизвестно",
        "yes": "да",
        "no": "нет",
        "similar_note": (
            "Группы решений, чей код совпадает, если не считать имён, комментариев, оформления и ничего не "
            "делающих инструкций, или одно из которых содержит другое (код из выданного ноутбука не "
            "учитывается). Результаты каждого решения на скрытых входах сравниваются с результатами первого, "
            "ядро за ядром: если у какого-то ядра они различаются, то это ядро — та же форма с другой логикой, "
            "а не копия. Отметка не меняет оценку: прочитайте код рядом. Все отмеченные пары ({pairs}) — в {file}."
        ),
    },
}


# ---------------------------------------------------------------- per submission
def _is_exercise(group: str) -> bool:
    return group.startswith("ex") and group[2:].isdigit()


def _answer_text(value) -> str | None:
    """A numerical answer as the report lists it (None: the answer was missing)."""
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.size > 16:
        return "…"
    return json.dumps(np.round(arr.astype(float), 6).tolist())


def record(result: SubmissionResult, code: str = "", given: frozenset | set = frozenset()) -> dict:
    """What the class report reads of one submission, as plain JSON-ready data. ``code``:
    the submission's code, for the similarity flags; ``given``: the fingerprints of the
    released notebooks, which are no evidence (:mod:`.similarity`)."""
    failed, mistakes, answers, limits = [], [], [], []
    for t in result.tests:
        if t.passed:
            continue
        failed.append([t.group, t.key, t.name.get("en", t.key), t.name.get("ru", t.key)])
        named = t.failure.likely_mistake if t.failure is not None else None
        if named and not any(m[0] == named["id"] for m in mistakes):
            mistakes.append([named["id"], t.group, named.get("en", ""), named.get("ru", "")])
        if _is_exercise(t.group):
            answers.append([t.group, t.key, _answer_text(t.failure.got if t.failure is not None else None)])
        message = t.failure.message.get("en", "") if t.failure is not None else ""
        if any(word in message for word in LIMIT_WORDS):
            limits.append([t.group, report.for_terminal(message)[:200]])
    for note in result.notes:
        text = note.get("en", "")
        if any(word in text for word in LIMIT_WORDS):
            limits.append(["", report.for_terminal(text)[:200]])
    return {
        "label": result.label,
        "score": result.score,
        "maximum": report.maximum(result),
        "graded": result.error is None,
        "error": result.error or "",
        "seconds": round(result.seconds, 3),
        "failed": failed,
        "mistakes": mistakes,
        "answers": answers,
        "limits": limits,
        "fingerprints": sorted(similarity.fingerprints(code) - given) if code else [],
        "outputs": dict(result.outputs),
        "code": similarity.shown(code),
    }


# ---------------------------------------------------------------- the class
def _share(n: int, total: int) -> float:
    return round(n / total, 4) if total else 0.0


def build(records: list[dict], lang: str = "en") -> dict:
    """The class report (the JSON document) from the submissions' records, in class order."""
    graded = [r for r in records if r["graded"]]
    scores = [r["score"] for r in graded]
    top = assignment_total()
    counts, edges = np.histogram(scores, bins=12, range=(0.0, top)) if scores else (np.zeros(12, int), np.linspace(0, top, 13))
    kernels: Counter = Counter()
    properties: Counter = Counter()
    titles: dict = {}
    for r in graded:
        failed = [f for f in r["failed"] if not _is_exercise(f[0])]  # answers: their own table below
        kernels.update({group for group, *_ in failed})
        for group, key, en, ru in failed:
            properties[group, key] += 1
            titles[group, key] = {"en": en, "ru": ru}
    mistakes: dict = {}
    for r in graded:
        for name, group, en, ru in r["mistakes"]:
            entry = mistakes.setdefault(name, {"id": name, "kernel": group, "explanation": {"en": en, "ru": ru}, "submissions": []})
            entry["submissions"].append(r["label"])
    answers: dict = {}
    for r in graded:
        for group, name, value in r["answers"]:
            answers.setdefault((group, name), Counter())[value] += 1
    n = len(graded)
    return {
        "language": lang,
        "submissions": len(records),
        "graded": n,
        "maximum": top,
        "not_graded": [{"submission": r["label"], "why": r["error"]} for r in records if not r["graded"]],
        "mean": round(statistics.fmean(scores), 4) if scores else None,
        "median": round(statistics.median(scores), 4) if scores else None,
        "histogram": {"edges": [round(float(e), 4) for e in edges], "counts": [int(c) for c in counts]},
        "kernels": [{"kernel": k, "failed": c, "share": _share(c, n)} for k, c in sorted(kernels.items(), key=lambda kv: (-kv[1], kv[0]))],
        "properties": [
            {"kernel": g, "property": key, "title": titles[g, key], "failed": c, "share": _share(c, n)}
            for (g, key), c in sorted(properties.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "mistakes": sorted(({**m, "count": len(m["submissions"])} for m in mistakes.values()), key=lambda m: (-m["count"], m["id"])),
        "answers": [
            {
                "exercise": g,
                "name": name,
                "wrong": [{"answer": a, "count": c} for a, c in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))][:TOP],
            }
            for (g, name), counter in sorted(answers.items())
        ],
        "slowest": [
            {"submission": r["label"], "seconds": r["seconds"]} for r in sorted(graded, key=lambda r: (-r["seconds"], r["label"]))[:TOP]
        ],
        "limits": [{"submission": r["label"], "kernel": group, "what": text} for r in records for group, text in r["limits"]],
        "similar": _clusters(graded),
    }


# Code shown per cluster: the first two members side by side, short excerpts of the next ones.
SIDE_CHARS = 6_000
EXCERPT_CHARS = 600
EXCERPTS = 10
PAIRS_NAME = "similarity_pairs.json"


def _clusters(graded: list[dict]) -> dict:
    """The similarity section: flagged clusters with bounded code (every pair goes to :data:`PAIRS_NAME`)."""
    pairs = copy_clusters.flagged_pairs(graded)
    found = copy_clusters.clusters(graded, pairs)
    for cluster in found:
        for k, member in enumerate(cluster["members"]):
            member["code"] = member["code"][: SIDE_CHARS if k < 2 else EXCERPT_CHARS if k < 2 + EXCERPTS else 0]
    return {"clusters": found, "pairs": len(pairs), "pairs_file": PAIRS_NAME, "_pairs": pairs}


# ---------------------------------------------------------------- writing it
def _e(text) -> str:
    """Student-controlled text for the page: one printable line, HTML-escaped (quotes too)."""
    return html.escape(report.for_terminal(text), quote=True)


def _histogram_svg(document: dict, lang: str) -> str:
    import matplotlib  # only when a class report is drawn
    from matplotlib.figure import Figure  # (the same; a bare Figure keeps pyplot's state alone)

    w = WORDS[lang]
    edges, counts = document["histogram"]["edges"], document["histogram"]["counts"]
    fig = Figure(figsize=(6.0, 2.6))
    ax = fig.add_subplot()
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="0.35", edgecolor="white")
    ax.set_xlabel(w["score"])
    ax.set_ylabel(w["count"])
    ax.set_xlim(edges[0], edges[-1])
    fig.tight_layout()
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "m5-class-report"}):  # the same page for the same class
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _table(head: list[str], rows: list[list[str]], table_id: str, empty: str) -> str:
    if not rows:
        return f'<p id="{table_id}">{empty}</p>'
    cells = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table id="{table_id}"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'


def _kernels_word(lang: str, n: int) -> str:
    """ "kernel(s)" after "of n" (English), «ядра/ядер» after «из n» (Russian: the genitive)."""
    one, many = WORDS[lang]["kernel_forms"]
    if lang == "ru":
        return one if n % 10 == 1 and n % 100 != 11 else many
    return one if n == 1 else many


def outputs_text(agree: dict, lang: str) -> str:
    """How a member's outputs on the hidden inputs compare with the first's, as the page says it:
    "same for k of n kernels; differ in: …; not compared (not run, or not to the end): …" (HTML, escaped)."""
    w = WORDS[lang]
    same, different, unknown = (list(agree.get(key) or []) for key in ("same", "different", "unknown"))
    total = len(same) + len(different) + len(unknown)
    if not total:
        return w["no_outputs"]
    parts = [w["same_for"].format(same=len(same), total=total, kernels=_kernels_word(lang, total))]
    if different:
        parts.append("<b>" + w["differ_in"].format(kernels=", ".join(_e(k) for k in different)) + "</b>")
    if unknown:
        parts.append(w["not_compared"].format(kernels=", ".join(_e(k) for k in unknown)))
    return "; ".join(parts)


def _similar(similar: dict, lang: str) -> str:
    """Each cluster once: who, how alike, their scores, whether they were graded alike and how
    their outputs on the hidden inputs compare with the first's, the first two codes side by
    side and short excerpts of the next members (every pair is in the pairs file)."""
    w = WORDS[lang]
    if not similar["clusters"]:
        return f'<p id="similar">{w["none"]}</p>'
    blocks = []
    for n, cluster in enumerate(similar["clusters"], 1):
        low, high = cluster["similarity"]
        head = (
            f"<h3>{w['cluster']} {n}: {cluster['size']} {w['submissions']}, {100 * low:.0f}–{100 * high:.0f} % "
            f"{w['shared']}, {w['score']} {cluster['scores'][0]:g}–{cluster['scores'][1]:g}</h3>"
        )
        # The first member is what the others are compared with: a dash, not "same as itself".
        rows = [
            [
                _e(m["label"]),
                f"{m['score']:g}",
                "—" if i == 0 else w["yes"] if m["graded_alike"] else f"<b>{w['no']}</b>",
                "—" if i == 0 else outputs_text(m.get("outputs_agree") or {}, lang),
            ]
            for i, m in enumerate(cluster["members"])
        ]
        table = _table([w["submissions"], w["score"], w["alike"], w["outputs"]], rows, f"cluster-{n}", w["none"])
        side = "".join(f"<pre>{html.escape(report.for_block(m['code']), quote=True)}</pre>" for m in cluster["members"][:2])
        more = "".join(
            f'<p>{_e(m["label"])}</p><pre class="excerpt">{html.escape(report.for_block(m["code"]), quote=True)}</pre>'
            for m in cluster["members"][2:]
            if m["code"]
        )
        blocks.append(f'<div class="pair">{head}{table}<div class="side">{side}</div>{more}</div>')
    note = w["similar_note"].format(pairs=similar["pairs"], file=similar["pairs_file"])
    return f'<div id="similar"><p>{note}</p>' + "".join(blocks) + "</div>"


def to_html(document: dict, lang: str = "en") -> str:
    w = WORDS[lang]
    pct = lambda share: f"{100 * share:.0f} %"  # noqa: E731 - one format, used in three tables
    summary = (
        f'<p id="summary"><span id="n-submissions">{document["submissions"]}</span> {w["submissions"]}, '
        f'<span id="n-graded">{document["graded"]}</span> {w["graded"]}; {w["mean"]} '
        f'<span id="mean">{document["mean"] if document["mean"] is not None else "–"}</span>, {w["median"]} '
        f'<span id="median">{document["median"] if document["median"] is not None else "–"}</span>, '
        f"{w['maximum']} {document['maximum']:g}</p>"
    )
    parts = [
        f"<h1>{w['title']}</h1>",
        summary,
        f"<h2>{w['distribution']}</h2>",
        _histogram_svg(document, lang),
        f"<h2>{w['not_graded']}</h2>",
        _table(
            [w["submissions"], w["why"]], [[_e(r["submission"]), _e(r["why"])] for r in document["not_graded"]], "not-graded", w["none"]
        ),
        f"<h2>{w['kernels']}</h2>",
        _table(
            [w["kernel"], w["failed"], w["share"]],
            [[_e(k["kernel"]), str(k["failed"]), pct(k["share"])] for k in document["kernels"]],
            "kernels",
            w["none"],
        ),
        f"<h2>{w['properties']}</h2>",
        _table(
            [w["property"], w["failed"], w["share"]],
            [[_e(p["title"][lang]), str(p["failed"]), pct(p["share"])] for p in document["properties"]],
            "properties",
            w["none"],
        ),
        f"<h2>{w['mistakes']}</h2>",
        _table(
            [w["mistake"], w["count"], w["who"]],
            [
                [f"<code>{_e(m['id'])}</code>: {_e(m['explanation'][lang])}", str(m["count"]), ", ".join(_e(s) for s in m["submissions"])]
                for m in document["mistakes"]
            ],
            "mistakes",
            w["none"],
        ),
        f"<h2>{w['answers']}</h2>",
        _table(
            [w["exercise"], w["answer"], w["count"]],
            [
                [
                    f"{_e(a['exercise'])} <code>{_e(a['name'])}</code>",
                    _e(x["answer"]) if x["answer"] is not None else w["missing"],
                    str(x["count"]),
                ]
                for a in document["answers"]
                for x in a["wrong"]
            ],
            "answers",
            w["none"],
        ),
        f"<h2>{w['slowest']}</h2>",
        _table(
            [w["submissions"], w["seconds"]],
            [[_e(s["submission"]), f"{s['seconds']:.2f}"] for s in document["slowest"]],
            "slowest",
            w["none"],
        ),
        f"<h2>{w['similar']}</h2>",
        _similar(document["similar"], lang),
        f"<h2>{w['limits']}</h2>",
        _table(
            [w["submissions"], w["kernel"], w["what"]],
            [[_e(s["submission"]), _e(s["kernel"]), _e(s["what"])] for s in document["limits"]],
            "limits",
            w["none"],
        ),
    ]
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;"
        "text-align:left;vertical-align:top}th{background:#eee}svg{max-width:100%;height:auto}"
        ".side{display:flex;gap:1em}.side pre,pre.excerpt{flex:1;overflow:auto;max-height:30em;background:#f6f6f6;padding:.5em;"
        "font-size:80%}"
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{lang}"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<title>{w['title']}</title><style>{style}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def write(records: list[dict], out: Path, lang: str = "en") -> dict:
    """``out/class_report.json``, ``out/class_report.html`` and every flagged pair in
    ``out/similarity_pairs.json``, from the submissions' records."""
    document = build(records, lang)
    pairs = document["similar"].pop("_pairs")
    outputs.write_json(out / PAIRS_NAME, {"pairs": pairs}, indent=None)
    outputs.write_json(out / JSON_NAME, document)
    outputs.write_text(out / HTML_NAME, to_html(document, lang))
    return document
