"""The marking page in headless Chromium: two markers, one in English and one in Russian, mark a
question of 80 answers (40 per language, hostile ones among them) through groups, rubric items,
keys and comments, meet a conflict, edit and add items; then the store, the gradebook's sheets,
an LMS export and the feedback pages agree on every mark, and no student text ever ran.

Skipped, with the reason, where Chromium or Playwright is missing (as ``test_browser.py``).
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import re
from pathlib import Path

# tests/autograder is on sys.path
from marking_fixtures import AUTOMATIC, row

from autograder.export import feedback
from autograder.grade import gradebook, shards, written
from autograder.marking import model, server, store
from tests.autograder.workflows.test_browser import browser  # noqa: F401 - the fixture, shared

QUESTION = "q01_answer"
POINTS = 3.0
EN_SAME = "Behaviour cloning at the token level: the state is the prompt plus the response prefix, the action is the next token"
RU_SAME = "Клонирование поведения на уровне токенов: состояние это запрос и префикс ответа, действие это следующий токен"
HOSTILE = {
    "script": "<script>window.__pwned=1</script>",
    "img": '<img src=x onerror="window.__pwned=2">',
    "link": '<a href="javascript:window.__pwned=3">click me</a> [x](javascript:window.__pwned=4)',
    "bidi": "\u202eevil\u202c \u2066isolated\u2069 and a NUL \u0000 here",
    "style": "</pre></style><style>body{display:none}</style><svg onload=window.__pwned=5>",
    "huge": "<b>1 MB</b> " + "wordy answer " * 80_000,
}
HOSTILE_COMMENT = "<img src=y onerror=window.__pwned=7> see §2 \u202eevil"
GROUP_COMMENT = "Ясно и полно; не хватает маски функции потерь. <script>window.__pwned=8</script>"
BLANKS = 5


def variants(text: str, n: int) -> list[str]:
    """``n`` spellings of one text that group as identical (case, spaces, punctuation)."""
    forms = [text, text.lower(), text.upper(), text + ".", "  " + text + "  ", text.replace(" ", "  "), text + "!", text.replace(":", ";")]
    return [forms[i % len(forms)] + (" " * (i // len(forms))) for i in range(n)]


def unique(prefix: str, i: int) -> str:
    """A text no other answer resembles."""
    return f"{prefix} {i}: " + " ".join(hashlib.sha256(f"{prefix}{i}{k}".encode()).hexdigest()[:12] for k in range(6))


def class_answers() -> dict[str, tuple[str, str]]:
    """{student: (language, answer to QUESTION)}: 40 English and 40 Russian students."""
    out = {}
    english = variants(EN_SAME, 12) + [""] * BLANKS + list(HOSTILE.values())
    russian = variants(RU_SAME, 12) + [""] * BLANKS
    english += [unique("en", i) for i in range(40 - len(english))]
    russian += [unique("ru", i) for i in range(40 - len(russian))]
    for i, text in enumerate(english):
        out[f"en{i:02d}"] = ("en", text)
    for i, text in enumerate(russian):
        out[f"ru{i:02d}"] = ("ru", text)
    return out


def make_class(folder: Path) -> Path:
    """A gradebook of the 80 students (grades.json, the sheets, written_answers.json), each with AUTOMATIC points."""
    folder.mkdir(parents=True)
    answers = class_answers()
    rows = []
    for student, (lang, _) in answers.items():
        line = row(student)
        line["label"] = line["record"]["label"] = f"{student}/m05_assignment_{lang}.ipynb"
        line["assignment"], line["language"] = f"module05_{lang}", lang
        rows.append(line)
    shards.write_rows_file(folder, None, len(rows), list(range(len(rows))), rows, [r["record"] for r in rows], {"class": "c"}, root="/x")
    entries = [
        {"label": r["label"], "student": student, "notebook": "assignment", "answers": {QUESTION: text}}
        for r, (student, (_, text)) in zip(rows, answers.items())
    ]
    written.write_class_answers(folder, entries)
    gradebook.rebuild(folder, "moodle")
    return folder


# ------------------------------------------------------------------ driving the page
def settle(page) -> None:
    """Wait until the page's action or load is over (the page keeps aria-busy on its body meanwhile)."""
    page.wait_for_selector("body[aria-busy=false]", state="attached")


def open_marker(browser, url: str, lang: str, name: str):
    """A browser context of its own (one marker), the page opened in ``lang`` and the name given."""
    context = browser.new_context()
    page = context.new_page()
    errors, dialogs = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{url}&lang={lang}")
    page.fill("#marker-name", name)
    page.press("#marker-name", "Enter")
    page.wait_for_selector("#question-progress")
    settle(page)
    return context, page, errors, dialogs


def group(page, text: str):
    return page.locator("section.group", has_text=text).first


def click(page, locator) -> None:
    locator.click()
    settle(page)


def mark_text(page, text: str) -> str:
    return group(page, text).locator(".group-mark").inner_text()


def mark_unmarked(page, not_marked: str, limit: int) -> int:
    """Give item 2 to up to ``limit`` groups not marked yet, one click each; how many it marked."""
    done = 0
    while done < limit:
        unmarked = page.locator("section.group", has=page.locator(".group-mark", has_text=not_marked))
        if unmarked.count() == 0:
            break
        click(page, unmarked.first.locator("button.toggle").nth(1))
        done += 1
    return done


def select(page, text: str) -> None:
    """Select the group showing ``text`` with the keys j and k only."""
    cards = page.locator("section.group").all_inner_texts()
    target = next(i for i, card in enumerate(cards) if text in card)
    for _ in range(2 * len(cards)):
        current = page.evaluate("[...document.querySelectorAll('section.group')].findIndex((n) => n.classList.contains('selected'))")
        if current == target:
            return
        page.keyboard.press("j" if current < target else "k")
    raise AssertionError(f"the keys never selected the group of {text!r}")


def reload_question(page) -> None:
    click(page, page.locator("button.question-link", has_text=QUESTION))


# ------------------------------------------------------------------ the scenario
def test_two_markers_mark_a_question_in_both_languages_and_every_output_agrees(browser, tmp_path):
    book = make_class(tmp_path / "grades")
    with server.MarkingServer(book) as srv:
        context_a, anna, errors_a, dialogs_a = open_marker(browser, srv.url, "en", "Anna")
        context_b, boris, errors_b, dialogs_b = open_marker(browser, srv.url, "ru", "Борис")

        # the page as opened: in each language, the question's progress, the hostile answers as text
        assert anna.locator("html").get_attribute("lang") == "en" and boris.locator("html").get_attribute("lang") == "ru"
        assert "0 of 70 answers marked" in anna.inner_text("#question-progress")
        assert "Проверено 0 из 70" in boris.inner_text("#question-progress")
        for text in [HOSTILE["script"], HOSTILE["img"], "javascript:window.__pwned=3", "⟦U+202E⟧evil"]:
            assert anna.locator("pre.answer-text", has_text=text).count() >= 1, text
        assert "more characters, not shown" in group(anna, "1 MB").inner_text()
        assert anna.locator("a").count() == 0 and anna.locator("img, svg, iframe").count() == 0
        assert anna.locator("script").count() == 1  # the page's own

        # Anna marks the English group of 12 with items 1 and 2 by clicking
        english = group(anna, EN_SAME)
        assert "12" in english.locator("h3").inner_text()
        click(anna, english.locator("button.toggle").nth(0))
        click(anna, group(anna, EN_SAME).locator("button.toggle").nth(1))
        assert mark_text(anna, EN_SAME) == "Mark 2 of 3"

        # Boris, with the page loaded before Anna marked, drafts a comment and toggles item 3 there: a conflict
        draft = group(boris, EN_SAME).locator("textarea.comment").first
        draft.fill(GROUP_COMMENT)
        click(boris, group(boris, EN_SAME).locator("button.toggle").nth(2))
        status = boris.locator("#status")
        assert status.get_attribute("class") == "conflict" and "Anna" in status.inner_text() and "Не сохранено" in status.inner_text()
        assert mark_text(boris, EN_SAME) == "Оценка 2 из 3"  # reloaded: Anna's mark is kept
        assert group(boris, EN_SAME).locator("textarea.comment").first.input_value() == GROUP_COMMENT  # the draft is not lost
        click(boris, group(boris, EN_SAME).locator("button.save-comment").first)
        assert "Сохранено" in status.inner_text()

        # Boris marks the Russian group of 12 with the keys: j to select it, 1 and 3 to toggle items
        select(boris, RU_SAME)
        boris.keyboard.press("1")
        settle(boris)
        boris.keyboard.press("3")
        settle(boris)
        assert mark_text(boris, RU_SAME) == "Оценка 2 из 3"

        # Anna opens her group, takes one answer out of it and marks it on its own; comments on a hostile answer
        reload_question(anna)
        click(anna, group(anna, EN_SAME).locator("button.expand"))
        assert group(anna, EN_SAME).locator(".member").count() == 12
        click(anna, group(anna, EN_SAME).locator(".member button.detach").first)
        assert "11" in group(anna, EN_SAME).locator("h3").inner_text()
        detached = anna.locator("section.group", has=anna.locator("button.attach"))
        assert detached.count() == 1 and "Mark 2 of 3" in detached.inner_text()  # it keeps its decision
        click(anna, detached.locator("button.toggle").nth(1))
        assert anna.locator("section.group", has=anna.locator("button.attach")).locator(".group-mark").inner_text() == "Mark 1 of 3"
        scripted = group(anna, "__pwned=1")
        scripted.locator("textarea.comment").fill(HOSTILE_COMMENT)
        click(anna, scripted.locator("button.save-comment"))

        # Anna edits item 1 to half a point: every answer carrying it changes, in her page and in Boris's
        click(anna, anna.locator("#item-0 button.edit-item"))
        anna.fill("form.item-form input[name=points]", "0.5")
        click(anna, anna.locator("form.item-form button.save-item"))
        assert mark_text(anna, EN_SAME) == "Mark 1.5 of 3" and mark_text(anna, RU_SAME) == "Mark 1.5 of 3"
        reload_question(boris)
        assert mark_text(boris, RU_SAME) == "Оценка 1.5 из 3"

        # Boris adds a deduction and gives it to the Russian group with key 4
        click(boris, boris.locator("#add-item"))
        for name, value in [("points", "-0.5"), ("marker_en", "no mask"), ("marker_ru", "нет маски")]:
            boris.fill(f"form.item-form [name={name}]", value)
        boris.fill("form.item-form [name=student_en]", "the loss mask is missing")
        boris.fill("form.item-form [name=student_ru]", "нет маски функции потерь")
        click(boris, boris.locator("form.item-form button.save-item"))
        assert boris.locator("#rubric .item").count() == 4
        select(boris, RU_SAME)
        boris.keyboard.press("4")
        settle(boris)
        assert mark_text(boris, RU_SAME) == "Оценка 1 из 3"

        # the rest of the question, half each; then both pages show everything marked
        marked = mark_unmarked(anna, "Not marked yet", 20)
        reload_question(boris)
        marked += mark_unmarked(boris, "Ещё не проверено", 200)
        assert marked > 30
        reload_question(anna)
        assert "70 of 70 answers marked, 0 to mark" in anna.inner_text("#question-progress")
        assert "Проверено 70 из 70" in boris.inner_text("#question-progress")
        assert anna.inner_text("#questions").count("70/70") == 1

        # the marks go into the gradebook from the page
        click(anna, anna.locator("#export"))
        assert "Marks written into the gradebook" in anna.inner_text("#status")

        # nothing ran, nothing was logged but the one refusal the conflict caused
        for page, errors, dialogs in [(anna, errors_a, dialogs_a), (boris, errors_b, dialogs_b)]:
            assert page.evaluate("window.__pwned") is None
            assert dialogs == []
            assert [e for e in errors if "409" not in e] == [], errors
        shown_comment = group(anna, "__pwned=1").locator("textarea.comment").input_value()
        assert shown_comment == HOSTILE_COMMENT
        context_a.close()
        context_b.close()

    agree(book, browser)


def agree(book: Path, browser) -> None:
    """The store, written_marks.json, grades.csv, the Moodle export and the feedback pages give every student one mark."""
    answers = class_answers()
    with store.MarkingStore(book, "checker") as kept:
        kept.export("moodle")
        items = kept.items(QUESTION)
        decisions = {key: d for key, d in kept.decisions().items() if key[1] == QUESTION}
        marks = kept.marks(QUESTION)
        assert kept.progress(QUESTION) == (70, 70)
        by_marker = kept.marks_by_marker(QUESTION)
    assert items["q01_answer#1"].points == 0.5 and items["q01_answer#n1"].points == -0.5
    assert set(by_marker) == {"Anna", "Борис"}
    carriers = [key for key, d in decisions.items() if "q01_answer#1" in d.items]
    assert len(carriers) == 24  # both groups of 12, the detached answer included (it kept item 1)
    for key, decision in decisions.items():
        assert marks[key] == model.mark_of(decision, items, POINTS)
    document = json.loads((book / gradebook.MARKS_FILE).read_text(encoding="utf-8"))
    expected = {s: (0.0 if not text.strip() else marks[(s, QUESTION)]) for s, (_, text) in answers.items()}
    assert {s: document["marks"][s][QUESTION] for s in answers} == expected
    assert document["comments"]["en17"][QUESTION] == HOSTILE_COMMENT
    with (book / "grades.csv").open(encoding="utf-8", newline="") as fh:
        sheet = {r["student"]: float(r["score"]) for r in csv.DictReader(fh)}
    assert sheet == {s: AUTOMATIC + mark for s, mark in expected.items()}
    with (book / "grades_moodle.csv").open(encoding="utf-8", newline="") as fh:
        lms = {r["Username"]: float(r["module05"]) for r in csv.DictReader(fh)}
    assert lms == sheet
    feedback.write_feedback(book, book / feedback.FEEDBACK_DIR)
    for student, (lang, _) in answers.items():
        page = (book / feedback.FEEDBACK_DIR / feedback.page_name(student)).read_text(encoding="utf-8")
        total = re.search(r'class="counts">([^<]+)</span>', page).group(1)
        assert float(total) == sheet[student], student
        of = "of" if lang == "en" else "из"
        assert f"{QUESTION}: {expected[student]:g} {of} 3" in html.unescape(page), student
    hostile_page = (book / feedback.FEEDBACK_DIR / feedback.page_name("en17")).read_text(encoding="utf-8")
    assert "<img src=y" not in hostile_page and "<script>window" not in hostile_page
    assert "window.__pwned=7" in html.unescape(hostile_page)
    page = browser.new_page()
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("dialog", lambda dialog: (errors.append(dialog.message), dialog.dismiss()))
    page.goto((book / feedback.FEEDBACK_DIR / feedback.page_name("en17")).resolve().as_uri())
    assert page.evaluate("window.__pwned") is None and errors == []
    page.close()
