"""The marking store: every marker's decisions in one SQLite file inside the gradebook.

Several markers (each names themself), threads and processes may hold a :class:`MarkingStore`
on one gradebook at once. ``marking.sqlite`` (:data:`STORE_FILE`) is opened in WAL mode with
``synchronous=FULL``, so a committed action survives a kill at any moment; every action is one
``BEGIN IMMEDIATE`` transaction, so it lands whole or not at all, and two markers never
interleave inside one.

* An answer carries a version, 0 until first changed and +1 on every change (a mark, a clear, a
  detach or attach). An action names the version the marker saw; a stale one is refused with a
  :class:`ConflictError` naming who changed the answer and when, and nothing changes: no mark is
  lost to a later click.
* A mark is never stored as a number: it is the applied items' points (:func:`model.mark_of`),
  so editing an item's points re-marks every answer that carries it.
* A rubric item carries a version too (1 when seeded or added); an edit names it.
* Every action is kept (who, when, what it left): :meth:`MarkingStore.history`.
* :meth:`MarkingStore.export` hands the decisions to :func:`model.write_marks`, the one writer of
  the gradebook's marks; the markers' names and the times never reach it.

Every string a marker or a student wrote round-trips exactly (stored as UTF-8 with lone
surrogates kept; details as ASCII JSON). Every refusal is a :class:`model.MarkingError` of one
line; its ``text`` attribute holds the message in English and Russian.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from autograder.grade import report, written
from autograder.marking import model

STORE_FILE = "marking.sqlite"
SCHEMA_VERSION = 1  # PRAGMA user_version of a marking store; another number is refused
BUSY_SECONDS = 10.0  # how long an action waits for another marker's transaction
MAX_MARKER_CHARS = model.MAX_MARKER_CHARS
SHOWN_CHARS = 60  # of a student's name in a message
SHOWN_CONFLICTS = 5  # answers a conflict message names before "and N more"

SCHEMA = """
CREATE TABLE answers (
    student BLOB NOT NULL,
    question TEXT NOT NULL,
    blank INTEGER NOT NULL,          -- 1: blank, or no longer in the gradebook: takes no decision
    version INTEGER NOT NULL DEFAULT 0,
    marked INTEGER NOT NULL DEFAULT 0,
    comment BLOB NOT NULL DEFAULT x'',
    marked_by BLOB,                  -- the marker of the decision standing
    detached INTEGER NOT NULL DEFAULT 0,
    changed_by BLOB,                 -- the last change of any kind, for conflict messages
    changed_at REAL,
    PRIMARY KEY (student, question)
) WITHOUT ROWID;
CREATE TABLE items (
    id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    points REAL NOT NULL,
    texts TEXT NOT NULL,             -- JSON {"marker": {lang: text}, "student": {lang: text}}
    version INTEGER NOT NULL DEFAULT 1,
    changed_by BLOB,
    changed_at REAL
);
CREATE TABLE applied (
    student BLOB NOT NULL,
    question TEXT NOT NULL,
    item TEXT NOT NULL REFERENCES items (id),
    PRIMARY KEY (student, question, item),
    FOREIGN KEY (student, question) REFERENCES answers (student, question)
) WITHOUT ROWID;
CREATE TABLE given (                 -- the items each marker last left on an answer
    student BLOB NOT NULL,
    question TEXT NOT NULL,
    marker BLOB NOT NULL,
    items TEXT NOT NULL,             -- JSON list of item ids
    PRIMARY KEY (student, question, marker),
    FOREIGN KEY (student, question) REFERENCES answers (student, question)
) WITHOUT ROWID;
CREATE TABLE actions (
    id INTEGER PRIMARY KEY,
    marker BLOB NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL
);
CREATE TABLE changes (
    action INTEGER NOT NULL REFERENCES actions (id),
    student BLOB,
    question TEXT,
    item TEXT,
    detail TEXT NOT NULL             -- JSON: what the action left
);
CREATE INDEX changes_of_answer ON changes (student, question);
"""

# Every message in each language; {fields} filled in by _say.
EN = {
    "marker": "marker: give your name, 1–{n} printable characters without spaces around it (got {got})",
    "folder": "{folder}: not a gradebook (no {file}; give the --out folder of m5 grade)",
    "student": "student: give a student's id as text, got {got}",
    "no_answers": "{folder}: {file} holds no answers (unreadable or empty; grade the class again)",
    "symlink": "{path}: a symbolic link; the marking store must be a plain file inside the gradebook",
    "not_file": "{path}: not a file",
    "not_sqlite": "{path}: not a marking store (not a SQLite database)",
    "foreign": "{path}: a SQLite database of something else, not a marking store",
    "schema": "{path}: written by another version of m5 (store version {got}, this m5 reads {want})",
    "wal": "{path}: the file system refuses WAL mode (journal mode {got})",
    "busy": "{path}: the marking store stayed busy for {seconds:g} s (another marker is writing); nothing changed, try again",
    "database": "{path}: the marking store failed ({name}); nothing changed",
    "closed": "the marking store is closed",
    "question": "question: unknown question {got}",
    "answer": "{student}, {question}: no such answer in the gradebook (unknown student)",
    "blank": "{student}, {question}: the answer is blank (it counts 0; there is nothing to mark)",
    "targets": "targets: give {{(student, question): the version you saw}}, at least one answer (got {got})",
    "version": "{arg}: must be a whole number >= 0, got {got}",
    "ids": "{arg}: give a set of rubric item ids, got {got}",
    "item": "{arg}: unknown rubric item {got}",
    "item_question": "{arg}: rubric item {item} belongs to {other}, not to {question}",
    "both": "add, remove: {items} in both",
    "comment": "comment: give text of at most {n} characters, or None to keep it (got {got})",
    "texts": "{arg}: give {{'en': text, 'ru': text}}, each 1–{n} characters, not blank (got {got})",
    "points": "points: an item of {question} needs a finite non-zero number within ±{max:g}, the question's points (got {got})",
    "nothing": "edit_item: nothing to change (give points, marker_text or student_text)",
    "csv_format": "csv_format: one of {known} or None, got {got}",
    "write": "{folder}: the marks could not be written ({problem})",
    "conflict_answers": "changed since you saw them, nothing changed (reload and try again): {which}",
    "conflict_answer": "{student}, {question} by {marker} at {at} (version {now}, you saw {seen})",
    "conflict_item": "rubric item {item}: changed by {marker} at {at} (version {now}, you saw {seen}); nothing changed, reload",
    "more": "and {n} more",
}
RU = {
    "marker": "marker: укажите своё имя, от 1 до {n} печатных символов без пробелов по краям (получено {got})",
    "folder": "{folder}: это не журнал оценок (нет {file}; укажите папку --out команды m5 grade)",
    "student": "student: укажите идентификатор студента текстом, получено {got}",
    "no_answers": "{folder}: в {file} нет ответов (файл не читается или пуст; проверьте класс заново)",
    "symlink": "{path}: символическая ссылка; хранилище оценок должно быть обычным файлом в журнале",
    "not_file": "{path}: не файл",
    "not_sqlite": "{path}: не хранилище оценок (не база SQLite)",
    "foreign": "{path}: база SQLite чего-то другого, не хранилище оценок",
    "schema": "{path}: записано другой версией m5 (версия хранилища {got}, эта m5 читает {want})",
    "wal": "{path}: файловая система не допускает режим WAL (режим {got})",
    "busy": "{path}: хранилище оценок занято {seconds:g} с (пишет другой проверяющий); ничего не изменено, повторите",
    "database": "{path}: сбой хранилища оценок ({name}); ничего не изменено",
    "closed": "хранилище оценок закрыто",
    "question": "question: неизвестный вопрос {got}",
    "answer": "{student}, {question}: такого ответа нет в журнале (неизвестный студент)",
    "blank": "{student}, {question}: ответ пуст (он даёт 0; оценивать нечего)",
    "targets": "targets: укажите {{(студент, вопрос): версия, которую вы видели}}, хотя бы один ответ (получено {got})",
    "version": "{arg}: должно быть целым числом >= 0, получено {got}",
    "ids": "{arg}: укажите множество идентификаторов пунктов рубрики, получено {got}",
    "item": "{arg}: неизвестный пункт рубрики {got}",
    "item_question": "{arg}: пункт рубрики {item} относится к {other}, а не к {question}",
    "both": "add, remove: {items} в обоих",
    "comment": "comment: укажите текст не длиннее {n} символов или None, чтобы не менять (получено {got})",
    "texts": "{arg}: укажите {{'en': текст, 'ru': текст}}, каждый от 1 до {n} символов, не пустой (получено {got})",
    "points": "points: пункту {question} нужно конечное ненулевое число в пределах ±{max:g}, баллов вопроса (получено {got})",
    "nothing": "edit_item: нечего менять (укажите points, marker_text или student_text)",
    "csv_format": "csv_format: одно из {known} или None, получено {got}",
    "write": "{folder}: оценки не записаны ({problem})",
    "conflict_answers": "изменены с тех пор, как вы их видели; ничего не изменено (обновите и повторите): {which}",
    "conflict_answer": "{student}, {question}: {marker} в {at} (версия {now}, вы видели {seen})",
    "conflict_item": "пункт рубрики {item}: изменён {marker} в {at} (версия {now}, вы видели {seen}); ничего не изменено, обновите",
    "more": "и ещё {n}",
}
MESSAGES = {"en": EN, "ru": RU}


class ConflictError(model.MarkingError):
    """An action on answers (or an item) someone changed since the marker saw them: nothing changed.
    ``conflicts``: (student or None, question or item id, marker, time) of each."""

    def __init__(self, text: dict[str, str], conflicts: list[tuple]):
        super().__init__(text["en"])
        self.text = text
        self.conflicts = conflicts


def _say(key: str, **fields) -> dict[str, str]:
    """MESSAGES[key] in each language, filled in (a path shown on one line, like any text)."""
    fields = {name: shown_in_message(str(value), 240) if isinstance(value, Path) else value for name, value in fields.items()}
    return {lang: MESSAGES[lang][key].format(**fields) for lang in model.LANGS}


def _error(key: str, **fields) -> model.MarkingError:
    """A one-line refusal (English; ``.text`` in both languages)."""
    text = _say(key, **fields)
    error = model.MarkingError(text["en"])
    error.text = text
    return error


def shown_in_message(value, limit: int = SHOWN_CHARS) -> str:
    """``value`` fit for a one-line message: non-printable characters as ``\\uXXXX``, cut at ``limit``."""
    text = value if isinstance(value, str) else repr(value)
    text = text if len(text) <= limit else text[:limit] + "…"
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def _blob(text: str) -> bytes:
    """A string as stored: UTF-8 keeping lone surrogates (surrogatepass), so every string round-trips."""
    return text.encode("utf-8", "surrogatepass")


def _text(blob: bytes | None) -> str:
    """The inverse of :func:`_blob` (None reads as "")."""
    return bytes(blob or b"").decode("utf-8", "surrogatepass")


def _json(value) -> str:
    """ASCII JSON (a lone surrogate escaped as ``\\ud800``, read back as itself), sorted keys."""
    return json.dumps(value, ensure_ascii=True, sort_keys=True)


def _when(at: float | None) -> str:
    """A stored time as UTC ``YYYY-MM-DD HH:MM:SS``."""
    if at is None:
        return "?"
    return datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def check_marker(marker) -> str:
    """A marker's name (:func:`model.marker_name`: 1–MAX_MARKER_CHARS printable characters, spaces at either end dropped)."""
    name = model.marker_name(marker)
    if name is None:
        raise _error("marker", n=MAX_MARKER_CHARS, got=shown_in_message(marker if isinstance(marker, str) else repr(marker)))
    return name


def _version(value, arg: str) -> int:
    """A version as given: an int >= 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _error("version", arg=arg, got=shown_in_message(repr(value)))
    return value


def _ids(value, arg: str) -> frozenset[str]:
    """A set of item ids as given: any collection of strings but a bare string."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise _error("ids", arg=arg, got=shown_in_message(repr(value)))
    ids = frozenset(value)
    if any(not isinstance(i, str) for i in ids):
        raise _error("ids", arg=arg, got=shown_in_message(repr(value)))
    return ids


def _item_texts(value, arg: str) -> dict[str, str]:
    """An item's wording: exactly {"en", "ru"}, each a non-blank string of at most MAX_ITEM_TEXT_CHARS."""
    ok = (
        isinstance(value, dict)
        and set(value) == set(model.LANGS)
        and all(isinstance(v, str) and v.strip() and len(v) <= model.MAX_ITEM_TEXT_CHARS for v in value.values())
    )
    if not ok:
        raise _error("texts", arg=arg, n=model.MAX_ITEM_TEXT_CHARS, got=shown_in_message(repr(value)))
    return {lang: value[lang] for lang in model.LANGS}


def _points(points, question: model.Question) -> float:
    """An item's points as :func:`model.check_points` allows them, refused in both languages."""
    try:
        return model.check_points(points, question)
    except model.MarkingError:
        raise _error("points", question=question.id, max=question.points, got=shown_in_message(repr(points))) from None


def _comment(value) -> str | None:
    """A comment as given: None (keep it) or a string of at most MAX_COMMENT_CHARS (any characters)."""
    if value is not None and (not isinstance(value, str) or len(value) > model.MAX_COMMENT_CHARS):
        got = f"{len(value)} characters" if isinstance(value, str) else shown_in_message(repr(value))
        raise _error("comment", n=model.MAX_COMMENT_CHARS, got=got)
    return value


def _item_order(item_id: str, question_order: dict[str, int]) -> tuple:
    """Items sort by question (notebook order), the rubric's items before those added, then k."""
    question, _, tail = item_id.rpartition("#")
    added = tail.startswith("n")
    number = tail[1:] if added else tail
    return (question_order.get(question, len(question_order)), question, added, int(number) if number.isdigit() else 0, tail)


def _item(row) -> model.RubricItem:
    """A RubricItem from a row (id, question, points, texts)."""
    texts = json.loads(row[3])
    return model.RubricItem(row[0], row[1], row[2], texts["marker"], texts["student"])


def _database_error(exc: sqlite3.Error, path: Path) -> model.MarkingError:
    """A one-line MarkingError for what SQLite raised."""
    name = getattr(exc, "sqlite_errorname", "") or type(exc).__name__
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in str(exc):
        return _error("busy", path=path, seconds=BUSY_SECONDS)
    if name == "SQLITE_NOTADB" or "not a database" in str(exc):
        return _error("not_sqlite", path=path)
    return _error("database", path=path, name=f"{name}: {shown_in_message(str(exc), 120)}")


class MarkingStore:
    """One marker's handle on the gradebook's marking store; safe to share between threads."""

    def __init__(self, folder: Path, marker: str, *, now: Callable[[], float] = time.time):
        self.marker = check_marker(marker)
        if not isinstance(folder, (str, os.PathLike)):
            raise _error("folder", folder=shown_in_message(repr(folder)), file=written.ANSWERS_FILE)
        self.folder = Path(folder)
        self.path = self.folder / STORE_FILE
        self._now = now
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        if not (self.folder / written.ANSWERS_FILE).is_file():
            raise _error("folder", folder=self.folder, file=written.ANSWERS_FILE)
        self._questions = model.questions()
        self._order = {q: i for i, q in enumerate(self._questions)}
        if not written.class_answers(self.folder):
            raise _error("no_answers", folder=self.folder, file=written.ANSWERS_FILE)
        self._answers = model.class_answers(self.folder, self._questions)
        self._by_key = {(a.student, a.question): a for a in self._answers}
        self._conn = self._open()
        try:
            with self._transaction(write=True) as conn:
                self._prepare(conn)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ opening
    def _open(self) -> sqlite3.Connection:
        """A connection in WAL mode, synchronous=FULL, foreign keys on; refuses a link or a non-file."""
        for path in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            if path.is_symlink():
                raise _error("symlink", path=path)
        if self.path.exists() and not self.path.is_file():
            raise _error("not_file", path=self.path)
        try:
            conn = sqlite3.connect(str(self.path), timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _database_error(exc, self.path) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
            self._check_kind(conn)  # before WAL mode, which would rewrite another database's header
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except (sqlite3.Error, model.MarkingError) as exc:
            conn.close()
            raise exc if isinstance(exc, model.MarkingError) else _database_error(exc, self.path) from None
        if str(mode).lower() != "wal":
            conn.close()
            raise _error("wal", path=self.path, got=mode)
        return conn

    def _check_kind(self, conn: sqlite3.Connection) -> int:
        """The store's schema version; refuses another version, or a database of something else."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise _error("foreign", path=self.path)
        if version not in (0, SCHEMA_VERSION):
            raise _error("schema", path=self.path, got=version, want=SCHEMA_VERSION)
        return version

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Create the schema in a new store (refusing another version or another database), then
        add the rubric's items not yet there and bring the answers in line with the gradebook."""
        if self._check_kind(conn) == 0:  # again, inside the transaction: another marker may have just created it
            for statement in SCHEMA.split(";\n"):  # not executescript: it would commit the transaction first
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.executemany(
            "INSERT OR IGNORE INTO items (id, question, points, texts) VALUES (?, ?, ?, ?)",
            [(i.id, i.question, i.points, _json({"marker": i.marker, "student": i.student})) for i in model.rubric_items().values()],
        )
        self._sync_answers(conn)

    def _sync_answers(self, conn: sqlite3.Connection) -> None:
        """Record every answer of the gradebook and whether it is blank; an answer no longer in the
        gradebook counts as blank (its decision is kept, and shows again if the answer returns)."""
        stored = {(_text(s), q): blank for s, q, blank in conn.execute("SELECT student, question, blank FROM answers")}
        wanted = {key: int(a.blank) for key, a in self._by_key.items()}
        wanted.update({key: 1 for key in stored.keys() - wanted.keys()})
        new = [(_blob(s), q, blank) for (s, q), blank in wanted.items() if (s, q) not in stored]
        changed = [(blank, _blob(s), q) for (s, q), blank in wanted.items() if (s, q) in stored and stored[(s, q)] != blank]
        conn.executemany("INSERT INTO answers (student, question, blank) VALUES (?, ?, ?)", new)
        conn.executemany("UPDATE answers SET blank = ? WHERE student = ? AND question = ?", changed)

    def close(self) -> None:
        """Close the connection (again: nothing)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> MarkingStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self, write: bool):
        """One transaction (``BEGIN IMMEDIATE`` for a write: the write lock is taken before anything
        is read, so what is checked is what is changed); rolled back on any error."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise _error("closed")
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as exc:
                raise _database_error(exc, self.path) from None
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _database_error(exc, self.path) from None
                raise

    # ------------------------------------------------------------------ reading
    def _question(self, question) -> str:
        if not isinstance(question, str) or question not in self._questions:
            raise _error("question", got=shown_in_message(repr(question)))
        return question

    def answers(self, question: str | None = None) -> list[model.Answer]:
        """The gradebook's answers (of ``question``, or all), in (question, student) order, as read
        when this store was opened (a store opened later sees a regraded class)."""
        if question is None:
            return list(self._answers)
        question = self._question(question)
        return [a for a in self._answers if a.question == question]

    def _items(self, conn: sqlite3.Connection) -> dict[str, model.RubricItem]:
        rows = conn.execute("SELECT id, question, points, texts FROM items").fetchall()
        found = {row[0]: _item(row) for row in rows}
        return {i: found[i] for i in sorted(found, key=lambda i: _item_order(i, self._order))}

    def items(self, question: str | None = None) -> dict[str, model.RubricItem]:
        """Every rubric item as it stands (edits and added items included), by id in rubric order."""
        question = None if question is None else self._question(question)
        with self._transaction(write=False) as conn:
            found = self._items(conn)
        return {i: item for i, item in found.items() if question is None or item.question == question}

    def item_versions(self) -> dict[str, int]:
        """Each item's version (1 as seeded or added, +1 per edit)."""
        with self._transaction(write=False) as conn:
            return dict(conn.execute("SELECT id, version FROM items ORDER BY id").fetchall())

    def _row(self, conn: sqlite3.Connection, student, question) -> tuple:
        """(blank, version, marked, comment, marked_by, changed_by, changed_at, detached) of a known answer."""
        question = self._question(question)
        row = None
        if isinstance(student, str):
            row = conn.execute(
                "SELECT blank, version, marked, comment, marked_by, changed_by, changed_at, detached FROM answers "
                "WHERE student = ? AND question = ?",
                (_blob(student), question),
            ).fetchone()
        if row is None:
            raise _error("answer", student=shown_in_message(student), question=question)
        return row

    def _applied(self, conn: sqlite3.Connection, student: str, question: str) -> set[str]:
        rows = conn.execute("SELECT item FROM applied WHERE student = ? AND question = ?", (_blob(student), question))
        return {item for (item,) in rows}

    def decision(self, student: str, question: str) -> tuple[model.Decision | None, int]:
        """(the decision standing on this answer, or None when unmarked or blank; the answer's version)."""
        with self._transaction(write=False) as conn:
            blank, version, marked, comment, marked_by, *_ = self._row(conn, student, question)
            if blank or not marked:
                return None, version
            return model.Decision(tuple(self._applied(conn, student, question)), _text(comment), _text(marked_by)), version

    def _decisions(self, conn: sqlite3.Connection) -> dict[tuple[str, str], model.Decision]:
        applied: dict[tuple[str, str], list[str]] = {}
        for student, question, item in conn.execute("SELECT student, question, item FROM applied"):
            applied.setdefault((_text(student), question), []).append(item)
        rows = conn.execute("SELECT student, question, comment, marked_by FROM answers WHERE marked = 1 AND blank = 0")
        decisions = {}
        for student, question, comment, marked_by in rows:
            key = (_text(student), question)
            decisions[key] = model.Decision(tuple(applied.get(key, ())), _text(comment), _text(marked_by))
        return dict(sorted(decisions.items()))

    def decisions(self) -> dict[tuple[str, str], model.Decision]:
        """Every marked answer's decision (blank answers take none), with its marker's name."""
        with self._transaction(write=False) as conn:
            return self._decisions(conn)

    def marks(self, question: str | None = None) -> dict[tuple[str, str], float]:
        """Each marked answer's mark: :func:`model.mark_of` of its decision with the items as they stand."""
        question = None if question is None else self._question(question)
        with self._transaction(write=False) as conn:
            decisions, items = self._decisions(conn), self._items(conn)
        return {
            key: model.mark_of(d, items, self._questions[key[1]].points)
            for key, d in decisions.items()
            if question is None or key[1] == question
        }

    def progress(self, question: str | None = None) -> tuple[int, int]:
        """(answers marked, answers to mark in all): blank answers are neither."""
        question = None if question is None else self._question(question)
        with self._transaction(write=False) as conn:
            marked, total = conn.execute(
                "SELECT coalesce(sum(marked), 0), count(*) FROM answers WHERE blank = 0 AND (? IS NULL OR question = ?)",
                (question, question),
            ).fetchone()
        return marked, total

    def detached(self) -> frozenset[tuple[str, str]]:
        """The answers taken out of their group."""
        with self._transaction(write=False) as conn:
            return frozenset((_text(s), q) for s, q in conn.execute("SELECT student, question FROM answers WHERE detached = 1"))

    def history(self, student: str | None = None, question: str | None = None) -> list[dict]:
        """Every action, oldest first, one entry per answer or item it changed: ``seq`` (the action;
        a group's answers share it), ``kind``, ``marker``, ``at``, ``student``, ``question``,
        ``item`` and ``detail`` (what it left: items and comment, points and wording, ...)."""
        question = None if question is None else self._question(question)
        if student is not None and not isinstance(student, str):
            raise _error("student", got=shown_in_message(repr(student)))
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT a.id, a.kind, a.marker, a.at, c.student, c.question, c.item, c.detail "
                "FROM changes c JOIN actions a ON a.id = c.action "
                "WHERE (? IS NULL OR c.student = ?) AND (? IS NULL OR c.question = ?) ORDER BY c.rowid",
                (*[None if student is None else _blob(student)] * 2, question, question),
            ).fetchall()
        keys = ("seq", "kind", "marker", "at", "student", "question", "item", "detail")
        return [
            dict(zip(keys, (seq, kind, _text(marker), at, None if s is None else _text(s), q, item, json.loads(detail))))
            for seq, kind, marker, at, s, q, item, detail in rows
        ]

    def marks_by_marker(self, question: str) -> dict[str, list[float]]:
        """For each marker, the mark they last left on each answer of ``question`` they marked
        (their items, with today's points), in student order: what the consistency view compares."""
        question = self._question(question)
        with self._transaction(write=False) as conn:
            items = self._items(conn)
            rows = conn.execute(
                "SELECT g.marker, g.student, g.items FROM given g JOIN answers a USING (student, question) "
                "WHERE g.question = ? AND a.blank = 0 ORDER BY g.marker, g.student",
                (question,),
            ).fetchall()
        out: dict[str, list[float]] = {}
        for marker, _, applied in rows:
            mark = model.mark_of(model.Decision(tuple(json.loads(applied))), items, self._questions[question].points)
            out.setdefault(_text(marker), []).append(mark)
        return dict(sorted(out.items()))

    # ------------------------------------------------------------------ acting
    def _action(self, conn: sqlite3.Connection, kind: str) -> int:
        """Record one action (who, when, what kind); its changes name it."""
        return conn.execute(
            "INSERT INTO actions (marker, at, kind) VALUES (?, ?, ?)", (_blob(self.marker), float(self._now()), kind)
        ).lastrowid

    def _change(self, conn: sqlite3.Connection, action: int, detail: dict, student=None, question=None, item=None) -> None:
        conn.execute(
            "INSERT INTO changes (action, student, question, item, detail) VALUES (?, ?, ?, ?, ?)",
            (action, None if student is None else _blob(student), question, item, _json(detail)),
        )

    def _targets(self, targets) -> list[tuple[tuple[str, str], int]]:
        """The answers an action names, with the versions seen, checked for shape (sorted, so two
        group actions take their answers in one order)."""
        if not isinstance(targets, dict) or not targets:
            raise _error("targets", got=shown_in_message(repr(targets)))
        out = []
        for key, version in targets.items():
            if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)):
                raise _error("targets", got=shown_in_message(repr(key)))
            self._question(key[1])
            out.append((key, _version(version, f"targets[{shown_in_message(key[0])}, {key[1]}]")))
        return sorted(out)

    def _check_answers(self, conn: sqlite3.Connection, targets: list[tuple[tuple[str, str], int]]) -> dict[tuple[str, str], tuple]:
        """Each target's row; refuses an unknown or blank answer, and raises ConflictError naming
        every answer changed since its version was seen."""
        rows = {}
        stale = []
        for (student, question), seen in targets:
            row = rows[(student, question)] = self._row(conn, student, question)
            if row[0]:
                raise _error("blank", student=shown_in_message(student), question=question)
            if row[1] != seen:
                stale.append((student, question, seen, row[1], _text(row[5]), row[6]))
        if stale:
            raise _answers_conflict(stale)
        return rows

    def _check_items(self, conn: sqlite3.Connection, ids: frozenset[str], arg: str, questions: set[str]) -> None:
        """Every id an item of the targets' question."""
        items = self._items(conn)
        for i in sorted(ids):
            if i not in items:
                raise _error("item", arg=arg, got=shown_in_message(repr(i)))
            others = sorted(questions - {items[i].question})
            if others:
                raise _error("item_question", arg=arg, item=i, other=items[i].question, question=others[0])

    def apply(
        self,
        targets: dict[tuple[str, str], int],
        add: Iterable[str] = frozenset(),
        remove: Iterable[str] = frozenset(),
        comment: str | None = None,
    ) -> dict[tuple[str, str], int]:
        """Mark each target (student, question) whose version is as seen: its items become
        (items ∪ add) − remove, its comment ``comment`` (None: kept). One transaction for all
        (a group): a stale version anywhere changes nothing (ConflictError). Returns the new versions."""
        wanted = self._targets(targets)
        add, remove, comment = _ids(add, "add"), _ids(remove, "remove"), _comment(comment)
        if add & remove:
            raise _error("both", items=", ".join(sorted(add & remove)))
        with self._transaction(write=True) as conn:
            questions = {q for (_, q), _ in wanted}
            self._check_items(conn, add, "add", questions)
            self._check_items(conn, remove, "remove", questions)
            rows = self._check_answers(conn, wanted)
            action = self._action(conn, "apply")
            out = {}
            for (student, question), version in wanted:
                items = sorted((self._applied(conn, student, question) | add) - remove)
                kept = _text(rows[(student, question)][3]) if comment is None else comment
                self._set_decision(conn, student, question, items, kept)
                self._change(conn, action, {"items": items, "comment": kept, "version": version + 1}, student, question)
                out[(student, question)] = version + 1
        return out

    def _set_decision(self, conn: sqlite3.Connection, student: str, question: str, items: list[str], comment: str) -> None:
        """The answer marked with exactly ``items`` and ``comment`` by this marker; version + 1."""
        key = (_blob(student), question)
        conn.execute("DELETE FROM applied WHERE student = ? AND question = ?", key)
        conn.executemany("INSERT INTO applied (student, question, item) VALUES (?, ?, ?)", [(*key, i) for i in items])
        me, at = _blob(self.marker), float(self._now())
        conn.execute(
            "UPDATE answers SET marked = 1, comment = ?, marked_by = ?, version = version + 1, changed_by = ?, changed_at = ? "
            "WHERE student = ? AND question = ?",
            (_blob(comment), me, me, at, *key),
        )
        conn.execute("INSERT OR REPLACE INTO given (student, question, marker, items) VALUES (?, ?, ?, ?)", (*key, me, _json(items)))

    def clear(self, targets: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
        """Return each target to unmarked (no items, no comment), as :meth:`apply` checks versions; new versions."""
        wanted = self._targets(targets)
        with self._transaction(write=True) as conn:
            self._check_answers(conn, wanted)
            action = self._action(conn, "clear")
            me, at = _blob(self.marker), float(self._now())
            for (student, question), version in wanted:
                key = (_blob(student), question)
                conn.execute("DELETE FROM applied WHERE student = ? AND question = ?", key)
                conn.execute("DELETE FROM given WHERE student = ? AND question = ? AND marker = ?", (*key, me))
                conn.execute(
                    "UPDATE answers SET marked = 0, comment = x'', marked_by = NULL, version = version + 1, changed_by = ?, "
                    "changed_at = ? WHERE student = ? AND question = ?",
                    (me, at, *key),
                )
                self._change(conn, action, {"version": version + 1}, student, question)
        return {key: version + 1 for key, version in wanted}

    def _set_detached(self, student: str, question: str, detached: bool) -> int:
        """Take the answer out of its group (or back in); its version + 1 when that changes it, so
        a group action on a membership someone else changed is a conflict."""
        with self._transaction(write=True) as conn:
            row = self._row(conn, student, question)
            if bool(row[7]) == detached:
                return row[1]
            me = _blob(self.marker)
            conn.execute(
                "UPDATE answers SET detached = ?, version = version + 1, changed_by = ?, changed_at = ? WHERE student = ? AND question = ?",
                (int(detached), me, float(self._now()), _blob(student), question),
            )
            action = self._action(conn, "detach" if detached else "attach")
            self._change(conn, action, {"version": row[1] + 1}, student, question)
            return row[1] + 1

    def detach(self, student: str, question: str) -> int:
        """The answer leaves its group; returns its version."""
        return self._set_detached(student, question, True)

    def attach(self, student: str, question: str) -> int:
        """The answer rejoins its group; returns its version."""
        return self._set_detached(student, question, False)

    def add_item(self, question: str, points: float, marker_text: dict, student_text: dict) -> model.RubricItem:
        """A new rubric item ``<question>#n<k>`` (k: one more than the question's last added item)."""
        question = self._question(question)
        points = _points(points, self._questions[question])
        texts = {"marker": _item_texts(marker_text, "marker_text"), "student": _item_texts(student_text, "student_text")}
        with self._transaction(write=True) as conn:
            ids = [i for (i,) in conn.execute("SELECT id FROM items WHERE question = ?", (question,))]
            added = [int(i.rpartition("#n")[2]) for i in ids if "#n" in i and i.rpartition("#n")[2].isdigit()]
            item_id = model.item_id(question, max(added, default=0) + 1, added=True)
            me, at = _blob(self.marker), float(self._now())
            conn.execute(
                "INSERT INTO items (id, question, points, texts, version, changed_by, changed_at) VALUES (?, ?, ?, ?, 1, ?, ?)",
                (item_id, question, points, _json(texts), me, at),
            )
            self._change(conn, self._action(conn, "add_item"), {"points": points, **texts, "version": 1}, question=question, item=item_id)
        return model.RubricItem(item_id, question, points, texts["marker"], texts["student"])

    def edit_item(
        self, item_id: str, *, version: int, points: float | None = None, marker_text: dict | None = None, student_text: dict | None = None
    ) -> model.RubricItem:
        """Change an item's points or wording if its version is as seen (else ConflictError, nothing
        changed); every answer carrying it is re-marked, since marks are computed from the items."""
        version = _version(version, "version")
        if points is None and marker_text is None and student_text is None:
            raise _error("nothing")
        with self._transaction(write=True) as conn:
            row = conn.execute(
                "SELECT id, question, points, texts, version, changed_by, changed_at FROM items WHERE id = ?", (str(item_id),)
            ).fetchone()
            if not isinstance(item_id, str) or row is None:
                raise _error("item", arg="item_id", got=shown_in_message(repr(item_id)))
            if row[4] != version:
                raise _item_conflict(item_id, version, row[4], _text(row[5]), row[6])
            item = _item(row)
            question = self._questions[item.question]
            new = model.RubricItem(
                item.id,
                item.question,
                item.points if points is None else _points(points, question),
                item.marker if marker_text is None else _item_texts(marker_text, "marker_text"),
                item.student if student_text is None else _item_texts(student_text, "student_text"),
            )
            me = _blob(self.marker)
            conn.execute(
                "UPDATE items SET points = ?, texts = ?, version = version + 1, changed_by = ?, changed_at = ? WHERE id = ?",
                (new.points, _json({"marker": new.marker, "student": new.student}), me, float(self._now()), item.id),
            )
            detail = {"points": new.points, "marker": new.marker, "student": new.student, "version": version + 1}
            self._change(conn, self._action(conn, "edit_item"), detail, question=item.question, item=item.id)
        return new

    def export(self, csv_format: str | None = None) -> Path:
        """Write the decisions, and 0 for each blank answer, into the gradebook (:func:`model.write_marks`:
        written_marks.json and every sheet); the write lock is held meanwhile, so the marks are one moment's and two
        exports never interleave their files. Returns the marks file."""
        if csv_format is not None and csv_format not in report.LMS_FORMATS:
            raise _error("csv_format", known=", ".join(report.LMS_FORMATS), got=shown_in_message(repr(csv_format)))
        with self._transaction(write=True) as conn:
            decisions = model.with_blank_answers(self._decisions(conn), self._answers)  # a blank answer counts 0, as on every route
            items = self._items(conn)
            try:
                return model.write_marks(self.folder, decisions, items, csv_format)
            except OSError as exc:
                problem = shown_in_message(f"{type(exc).__name__}: {exc.strerror or exc}", 120)
                raise _error("write", folder=self.folder, problem=problem) from None


def _answers_conflict(stale: list[tuple]) -> ConflictError:
    """ConflictError naming each stale answer (the first SHOWN_CONFLICTS): who changed it, when,
    its version and the one seen."""
    named = [
        _say("conflict_answer", student=shown_in_message(s), question=q, marker=m, at=_when(at), now=now, seen=seen)
        for s, q, seen, now, m, at in stale[:SHOWN_CONFLICTS]
    ]
    if len(stale) > SHOWN_CONFLICTS:
        named.append(_say("more", n=len(stale) - SHOWN_CONFLICTS))
    which = {lang: "; ".join(part[lang] for part in named) for lang in model.LANGS}
    text = {lang: MESSAGES[lang]["conflict_answers"].format(which=which[lang]) for lang in model.LANGS}
    return ConflictError(text, [(s, q, m, at) for s, q, _, _, m, at in stale])


def _item_conflict(item_id: str, seen: int, now: int, marker: str, at: float | None) -> ConflictError:
    """ConflictError naming who changed the item and when."""
    text = _say("conflict_item", item=item_id, marker=marker, at=_when(at), now=now, seen=seen)
    return ConflictError(text, [(None, item_id, marker, at)])
