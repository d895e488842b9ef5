"""The marking page's actions: JSON in, JSON out, over one :class:`store.MarkingStore` per marker.

:mod:`.server` checks who may ask (token, host, origin) and hands each request here as a route,
its parameters and the marker's name. What this module keeps:

* **Students are never named to the page unless asked** (``names=True``): each answer travels
  under a reference (``s017``) and a pseudonym number, and the page writes "Student 017" /
  «Студент 017»; a store message that names a student is rewritten with the pseudonym.
  Pseudonyms are the ones given (``m5 review --anonymize``'s key) or drawn at random when the
  server starts, so their order says nothing of the names.
* **Student text is data**: sent as JSON (lone surrogates as ``\\ud800`` escapes the page reads
  as U+FFFD), with control and bidi characters shown as ``⟦U+202E⟧`` so a marker sees every
  character written, cut after :data:`MAX_SHOWN_CHARS` (the page says how much more there is).
* **Every action names the versions the marker saw**; a stale one is a :class:`Conflict` (409)
  naming the answers by reference and pseudonym, and nothing changes.
* Every message exists in English and Russian (:data:`LABELS`, :data:`MESSAGES`).
"""

from __future__ import annotations

import datetime
import re
import secrets
import threading
from pathlib import Path

from autograder.marking import consistency, groups, model, store

LANGS = model.LANGS
MAX_SHOWN_CHARS = 20_000  # of one answer: what the gradebook keeps of a notebook's answer (written.MAX_ANSWER_CHARS)
MAX_TARGETS = 5_000  # answers one action may name (a question of the largest class)
MAX_IDS = 200  # rubric item ids one action may name
MAX_MARKERS = 64  # stores kept open, one per marker name
GET_ROUTES = {"/api/labels", "/api/state", "/api/question"}
POST_ROUTES = {"/api/apply", "/api/clear", "/api/item/add", "/api/item/edit", "/api/detach", "/api/attach", "/api/export"}
ANONYMOUS_ROUTES = {"/api/labels"}  # answered before the marker has named themself

# Characters shown by their code instead of acting: controls (but newline and tab), bidi
# overrides and isolates, zero-width and other invisible format characters, and lone surrogates.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")
_SURROGATE = re.compile("[\ud800-\udfff]")

LABELS = {
    "en": {
        "title": "Marking the written answers",
        "name_prompt": "Your name (other markers see it beside your marks):",
        "name_button": "Start marking",
        "marking_as": "Marking as {name}",
        "change_name": "Change name",
        "export": "Write the marks into the gradebook",
        "exported": "Marks written into the gradebook; its sheets are rebuilt ({files})",
        "other_language": "Русский",
        "questions": "Questions",
        "progress_short": "{marked}/{total}",
        "progress": "{marked} of {total} answers marked, {to_mark} to mark (blank answers count 0 and need nothing)",
        "question": "Question",
        "points": "{points} points",
        "model_answer": "Model answer",
        "rubric": "Rubric items (keys 1–9 toggle them on the selected group or answer)",
        "edit": "Edit",
        "add_item": "Add an item",
        "item_points": "Points (negative: a deduction)",
        "marker_text_en": "Marker's wording, English",
        "marker_text_ru": "Marker's wording, Russian",
        "student_text_en": "What the student reads, English",
        "student_text_ru": "What the student reads, Russian",
        "save": "Save",
        "cancel": "Cancel",
        "consistency": "Consistency",
        "groups": "Answers by group",
        "group": "Group {n}",
        "kind_blank": groups.KIND_TEXT["blank"]["en"],
        "kind_identical": groups.KIND_TEXT["identical"]["en"],
        "kind_similar": groups.KIND_TEXT["similar"]["en"],
        "kind_single": groups.KIND_TEXT["single"]["en"],
        "answers_count": "{n} answers",
        "blank_zero": "Blank answers: 0 points, nothing to mark",
        "representative": "shown",
        "members": "Show its {n} answers",
        "hide_members": "Hide its answers",
        "leave_group": "Take out of the group",
        "rejoin": "Back into its group",
        "mark": "Mark {mark} of {points}",
        "not_marked": "Not marked yet",
        "mixed": "Marks differ inside the group",
        "by": "by {marker}",
        "manual": "a number from a marks sheet",
        "clear": "Clear the mark",
        "comment": "Comment to the student",
        "comment_group": "Comment to every student of the group",
        "comments_differ": "The answers of this group have different comments; saving writes this one to all",
        "save_comment": "Save the comment",
        "truncated": "… and {n} more characters, not shown",
        "off_group": "differs from its group's mark ({mark})",
        "off_group_count": "{n} answers have a mark that differs from their group's",
        "student": "Student {n}",
        "saved": "Saved.",
        "conflict": "Not saved: {error} The page now shows what is stored; your comment drafts are kept.",
        "refused": "Refused: {error}",
        "nothing": "No answers to this question.",
        "keys": (
            "Keys: j / k next / previous group or answer · 1–9 toggle a rubric item · o open or close a group"
            " · c write a comment · Esc leave a text box"
        ),
    },
    "ru": {
        "title": "Проверка письменных ответов",
        "name_prompt": "Ваше имя (другие проверяющие видят его рядом с вашими оценками):",
        "name_button": "Начать проверку",
        "marking_as": "Проверяет {name}",
        "change_name": "Сменить имя",
        "export": "Записать оценки в журнал",
        "exported": "Оценки записаны в журнал, его таблицы пересобраны ({files})",
        "other_language": "English",
        "questions": "Вопросы",
        "progress_short": "{marked}/{total}",
        "progress": "Проверено {marked} из {total} ответов, осталось {to_mark} (пустые ответы дают 0 и проверки не требуют)",
        "question": "Вопрос",
        "points": "баллов: {points}",
        "model_answer": "Образцовый ответ",
        "rubric": "Пункты рубрики (клавиши 1–9 переключают их у выбранной группы или ответа)",
        "edit": "Изменить",
        "add_item": "Добавить пункт",
        "item_points": "Баллы (отрицательные: вычет)",
        "marker_text_en": "Формулировка для проверяющего, по-английски",
        "marker_text_ru": "Формулировка для проверяющего, по-русски",
        "student_text_en": "Что прочтёт студент, по-английски",
        "student_text_ru": "Что прочтёт студент, по-русски",
        "save": "Сохранить",
        "cancel": "Отмена",
        "consistency": "Согласованность",
        "groups": "Ответы по группам",
        "group": "Группа {n}",
        "kind_blank": groups.KIND_TEXT["blank"]["ru"],
        "kind_identical": groups.KIND_TEXT["identical"]["ru"],
        "kind_similar": groups.KIND_TEXT["similar"]["ru"],
        "kind_single": groups.KIND_TEXT["single"]["ru"],
        "answers_count": "ответов: {n}",
        "blank_zero": "Пустые ответы: 0 баллов, проверять нечего",
        "representative": "показан",
        "members": "Показать ответы группы ({n})",
        "hide_members": "Скрыть ответы группы",
        "leave_group": "Вывести из группы",
        "rejoin": "Вернуть в группу",
        "mark": "Оценка {mark} из {points}",
        "not_marked": "Ещё не проверено",
        "mixed": "Оценки внутри группы различаются",
        "by": "проверяющий: {marker}",
        "manual": "число из таблицы оценок",
        "clear": "Снять оценку",
        "comment": "Комментарий студенту",
        "comment_group": "Комментарий каждому студенту группы",
        "comments_differ": "У ответов этой группы разные комментарии; сохранение запишет этот всем",
        "save_comment": "Сохранить комментарий",
        "truncated": "… и ещё символов: {n}, не показаны",
        "off_group": "отличается от балла группы ({mark})",
        "off_group_count": "ответов с баллом, отличным от балла их группы: {n}",
        "student": "Студент {n}",
        "saved": "Сохранено.",
        "conflict": "Не сохранено: {error} Страница показывает то, что сохранено; черновики комментариев не потеряны.",
        "refused": "Отказ: {error}",
        "nothing": "На этот вопрос нет ответов.",
        "keys": (
            "Клавиши: j / k следующая / предыдущая группа или ответ · 1–9 переключить пункт рубрики"
            " · o раскрыть или свернуть группу · c написать комментарий · Esc выйти из поля"
        ),
    },
}

MESSAGES = {
    "body": ("{field}: {problem}", "{field}: {problem}"),
    "shape": ("must be {what}", "должно быть: {what}"),
    "unknown_ref": ("no such answer on this page (reload it)", "такого ответа на странице нет (обновите её)"),
    "twice": ("an answer named twice", "ответ указан дважды"),
    "too_many_markers": (
        "{n} markers already use this page; restart it to admit others",
        "страницей уже пользуются {n} проверяющих; перезапустите её, чтобы пустить других",
    ),
    "conflict": (
        "changed since you saw them: {which}.",
        "изменены с тех пор, как вы их видели: {which}.",
    ),
    "conflict_one": ("{who} by {marker} at {at}", "{who}: {marker} в {at}"),
    "item": ("rubric item {item}", "пункт рубрики {item}"),
}


class Conflict(model.MarkingError):
    """An action refused because answers (``refs``) or an item changed since the marker saw them."""

    def __init__(self, text: dict[str, str], refs: list[str]):
        super().__init__(text["en"])
        self.text = text
        self.refs = refs


def say(key: str, **fields) -> dict[str, str]:
    """MESSAGES[key] in each language, filled in."""
    return {lang: template.format(**fields) for lang, template in zip(LANGS, MESSAGES[key])}


def refusal(field: str, what_en: str, what_ru: str) -> model.MarkingError:
    """A one-line MarkingError about one field of a request (``.text`` in both languages)."""
    shape = {"en": f"must be {what_en}", "ru": f"должно быть: {what_ru}"}
    error = model.MarkingError(f"{field}: {shape['en']}")
    error.text = {lang: f"{field}: {shape[lang]}" for lang in LANGS}
    return error


def message(exc: Exception, lang: str) -> str:
    """An error's text in ``lang`` when it carries both (``.text``), else its one line."""
    text = getattr(exc, "text", None)
    return text.get(lang, str(exc)) if isinstance(text, dict) else str(exc)


def check_marker(name: str) -> str:
    """A marker's name as the store accepts it (1–40 printable characters, no outer spaces)."""
    return store.check_marker(name)


def shown(text: str) -> tuple[str, int]:
    """(a text as the page shows it, the characters cut): hidden characters written as
    ``⟦U+XXXX⟧``, lone surrogates as U+FFFD, at most MAX_SHOWN_CHARS of the original."""
    cut = max(len(text) - MAX_SHOWN_CHARS, 0)
    visible = _HIDDEN.sub(lambda m: f"⟦U+{ord(m.group()):04X}⟧", text[:MAX_SHOWN_CHARS])
    return _SURROGATE.sub("\ufffd", visible), cut


def draw_numbers(students: list[str], given: dict[str, str] | None) -> dict[str, str]:
    """Each student's pseudonym number: the digits of the given pseudonym (``Student 017``), or
    1..n drawn at random (zero-padded to three digits) for the students without one."""
    given = given or {}
    numbers = {s: m.group() for s in students if (m := re.search(r"\d+", str(given.get(s, ""))))}
    rest = [s for s in students if s not in numbers]
    taken = set(numbers.values())
    free = [f"{n:03d}" for n in range(1, len(students) + len(taken) + 1) if f"{n:03d}" not in taken][: len(rest)]
    secrets.SystemRandom().shuffle(free)
    numbers.update(zip(rest, free))
    return numbers


def when(at: float | None) -> str:
    """A stored time as the page shows it: UTC, to the second."""
    if at is None:
        return "?"
    return datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _text_field(body: dict, field: str, *, optional: bool = False) -> str | None:
    value = body.get(field)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise refusal(field, "a text", "текст")
    return value


def _ids_field(body: dict, field: str) -> list[str]:
    value = body.get(field, [])
    if not isinstance(value, list) or len(value) > MAX_IDS or not all(isinstance(i, str) for i in value):
        raise refusal(field, f"a list of at most {MAX_IDS} rubric item ids", f"список не более чем из {MAX_IDS} пунктов рубрики")
    return value


def _texts_field(body: dict, field: str) -> dict | None:
    value = body.get(field)
    if value is not None and not isinstance(value, dict):
        raise refusal(field, '{"en": text, "ru": text}', '{"en": текст, "ru": текст}')
    return value


def _points_field(body: dict, optional: bool = False) -> float | None:
    value = body.get("points")
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise refusal("points", "a number", "число")
    return value


class MarkingApp:
    """The page's actions over the gradebook in ``folder``: one store per marker, the students under
    pseudonyms unless ``names``. Thread-safe: the stores are, and the app's own maps only grow under a lock."""

    def __init__(self, folder: Path, *, names: bool = False, pseudonyms: dict[str, str] | None = None):
        self.folder = Path(folder)
        self.names = names
        self.questions = model.questions()
        self.lock = threading.Lock()
        self.stores: dict[str, store.MarkingStore] = {}
        first = store.MarkingStore(self.folder, "m5")  # checks the gradebook now: a bad folder is refused at start
        self.answers = {q: first.answers(q) for q in self.questions}
        first.close()
        students = sorted({a.student for answers in self.answers.values() for a in answers})
        self.numbers = draw_numbers(students, pseudonyms)
        self.refs = {s: "s" + self.numbers[s] for s in students}
        self.students = {ref: s for s, ref in self.refs.items()}
        self.group_cache: dict[tuple[str, frozenset[str]], list[groups.Group]] = {}

    def close(self) -> None:
        with self.lock:
            for kept in self.stores.values():
                kept.close()
            self.stores.clear()

    def store_of(self, marker: str) -> store.MarkingStore:
        """The marker's store, opened on their first action."""
        with self.lock:
            if marker not in self.stores:
                if len(self.stores) >= MAX_MARKERS:
                    error = model.MarkingError(say("too_many_markers", n=MAX_MARKERS)["en"])
                    error.text = say("too_many_markers", n=MAX_MARKERS)
                    raise error
                self.stores[marker] = store.MarkingStore(self.folder, marker)
            return self.stores[marker]

    # ------------------------------------------------------------------ routes
    def get(self, route: str, params: dict[str, str], marker: str | None) -> dict:
        if route == "/api/labels":
            return {"labels": LABELS}
        kept = self.store_of(marker)
        if route == "/api/state":
            return self.state(kept)
        return self.question(kept, self.question_id(params.get("id")))

    def post(self, route: str, body: dict, marker: str) -> dict:
        kept = self.store_of(marker)
        try:
            return self.act(kept, route, body)
        except store.ConflictError as exc:
            raise self.conflict(exc) from None
        except model.MarkingError as exc:
            raise self.scrubbed(exc) from None

    def act(self, kept: store.MarkingStore, route: str, body: dict) -> dict:
        """One POST's action (every one a single store transaction)."""
        if route == "/api/apply":
            targets = self.targets(body)
            comment = _text_field(body, "comment", optional=True)
            versions = kept.apply(targets, add=_ids_field(body, "add"), remove=_ids_field(body, "remove"), comment=comment)
            return {"versions": {self.refs[s]: v for (s, _), v in versions.items()}}
        if route == "/api/clear":
            return {"versions": {self.refs[s]: v for (s, _), v in kept.clear(self.targets(body)).items()}}
        if route in ("/api/detach", "/api/attach"):
            question = self.question_id(body.get("question"))
            student = self.student(body.get("ref"))
            version = (kept.detach if route == "/api/detach" else kept.attach)(student, question)
            return {"versions": {self.refs[student]: version}}
        if route == "/api/item/add":
            question = self.question_id(body.get("question"))
            item = kept.add_item(question, _points_field(body), _texts_field(body, "marker"), _texts_field(body, "student"))
            return {"item": item.id}
        if route == "/api/item/edit":
            item_id = _text_field(body, "item")
            version = body.get("version")
            edited = kept.edit_item(
                item_id,
                version=version,
                points=_points_field(body, optional=True),
                marker_text=_texts_field(body, "marker"),
                student_text=_texts_field(body, "student"),
            )
            return {"item": edited.id}
        return {"files": [kept.export().name]}  # /api/export

    # ------------------------------------------------------------------ reading requests
    def question_id(self, value) -> str:
        if not isinstance(value, str) or value not in self.questions:
            raise refusal("question", "one of the page's questions", "один из вопросов страницы")
        return value

    def student(self, ref) -> str:
        if not isinstance(ref, str) or ref not in self.students:
            error = model.MarkingError("ref: " + say("unknown_ref")["en"])
            error.text = {lang: "ref: " + text for lang, text in say("unknown_ref").items()}
            raise error
        return self.students[ref]

    def targets(self, body: dict) -> dict[tuple[str, str], int]:
        """{(student, question): version seen} from ``[{"ref", "version"}, ...]`` of one question."""
        question = self.question_id(body.get("question"))
        given = body.get("targets")
        if not isinstance(given, list) or not 0 < len(given) <= MAX_TARGETS:
            raise refusal("targets", f"a list of 1 to {MAX_TARGETS} answers", f"список от 1 до {MAX_TARGETS} ответов")
        out: dict[tuple[str, str], int] = {}
        for target in given:
            if not isinstance(target, dict):
                raise refusal("targets", '[{"ref": …, "version": …}, …]', '[{"ref": …, "version": …}, …]')
            key = (self.student(target.get("ref")), question)
            if key in out:
                raise refusal("targets", "each answer once", "каждый ответ по одному разу")
            out[key] = target.get("version")  # the store checks it is a whole number
        return out

    # ------------------------------------------------------------------ errors without names
    def who(self, student: str) -> dict[str, str]:
        """How the page names a student in a message."""
        if self.names:
            return {lang: shown(student)[0][:60] for lang in LANGS}
        return {lang: LABELS[lang]["student"].format(n=self.numbers.get(student, "?")) for lang in LANGS}

    def conflict(self, exc: store.ConflictError) -> Conflict:
        """The store's conflict with each student named by pseudonym (and their refs for the page)."""
        parts: dict[str, list[str]] = {lang: [] for lang in LANGS}
        refs = []
        for student, what, marker, at in exc.conflicts[: store.SHOWN_CONFLICTS]:
            who = self.who(student) if student is not None else say("item", item=what)
            for lang in LANGS:
                parts[lang].append(MESSAGES["conflict_one"][LANGS.index(lang)].format(who=who[lang], marker=shown(marker)[0], at=when(at)))
        refs = [self.refs[s] for s, *_ in exc.conflicts if s in self.refs]
        more = len(exc.conflicts) - store.SHOWN_CONFLICTS
        text = {
            lang: MESSAGES["conflict"][k].format(which="; ".join(parts[lang]) + (f" (+{more})" if more > 0 else ""))
            for k, lang in enumerate(LANGS)
        }
        return Conflict(text, refs)

    def scrubbed(self, exc: model.MarkingError) -> model.MarkingError:
        """A store refusal with every student's id replaced by their pseudonym (anonymous mode)."""
        if self.names:
            return exc
        texts = getattr(exc, "text", None) or {lang: str(exc) for lang in LANGS}
        texts = dict(texts)
        for student in sorted(self.refs, key=len, reverse=True):
            forms = {student, store.shown_in_message(student)}
            for lang in LANGS:
                for form in forms:
                    if form and form in texts[lang]:
                        texts[lang] = texts[lang].replace(form, self.who(student)[lang])
        error = model.MarkingError(texts["en"])
        error.text = texts
        return error

    # ------------------------------------------------------------------ views
    def progress(self, kept: store.MarkingStore, question: str) -> dict[str, int]:
        marked, total = kept.progress(question)
        return {"marked": marked, "total": total, "to_mark": total - marked}

    def state(self, kept: store.MarkingStore) -> dict:
        """The question list with each question's progress."""
        questions = [
            {"id": q.id, "points": q.points, "notebook": q.notebook, "progress": self.progress(kept, q.id)} for q in self.questions.values()
        ]
        return {"names": self.names, "questions": questions}

    def groups_of(self, question: str, detached: frozenset[str]) -> list[groups.Group]:
        """The question's groups (cached: the answers do not change while the server runs)."""
        key = (question, detached)
        with self.lock:
            cached = self.group_cache.get(key)
        if cached is None:
            cached = groups.group_answers(self.answers[question], detached)
            with self.lock:
                if len(self.group_cache) > 256:
                    self.group_cache.clear()
                self.group_cache[key] = cached
        return cached

    def answer_view(self, kept: store.MarkingStore, answer: model.Answer, items: dict, points: float, detached: bool) -> dict:
        """One answer as the page reads it: reference, pseudonym (or name), text, decision, version, mark."""
        decision, version = kept.decision(answer.student, answer.question)
        text, cut = shown(answer.text)
        view = {
            "ref": self.refs[answer.student],
            "text": text,
            "cut": cut,
            "blank": answer.blank,
            "version": version,
            "items": list(decision.items) if decision else [],
            "comment": decision.comment if decision else "",
            "marker": decision.marker if decision else "",
            "mark": model.mark_of(decision, items, points) if decision else None,
            "manual": getattr(decision, "manual", None) is not None,
            "detached": detached,
        }
        if self.names:
            view["name"] = shown(answer.student)[0]
        else:
            view["number"] = self.numbers[answer.student]
        return view

    def question(self, kept: store.MarkingStore, question: str) -> dict:
        """A question: its text, model answer, rubric items (with versions), groups and answers."""
        q = self.questions[question]
        items = kept.items(question)
        versions = kept.item_versions()
        detached = frozenset(s for s, qid in kept.detached() if qid == question)
        found = self.groups_of(question, detached)
        answers = {a.student: a for a in self.answers[question]}
        views = {self.refs[s]: self.answer_view(kept, a, items, q.points, s in detached) for s, a in answers.items()}
        decisions = {key: d for key, d in kept.decisions().items() if key[1] == question}
        found_consistency = consistency.build(decisions, items, self.questions, found)
        for off in found_consistency.off_group:
            views[self.refs[off.student]]["group_mark"] = off.group_mark
        return {
            "id": q.id,
            "points": q.points,
            "text": q.text,
            "model": q.model,
            "items": [
                {"id": i.id, "points": i.points, "marker": i.marker, "student": i.student, "version": versions.get(i.id, 1)}
                for i in items.values()
            ],
            "groups": [
                {
                    "kind": g.kind,
                    "members": [self.refs[s] for s in g.members],
                    "representative": self.refs[g.representative],
                    "detached": g.kind == "single" and g.members[0] in detached,
                }
                for g in found
            ],
            "answers": views,
            "progress": self.progress(kept, question),
            "consistency": {
                lang: {"rows": consistency.marker_rows(found_consistency, lang), "off_group": len(found_consistency.off_group)}
                for lang in LANGS
            },
        }
