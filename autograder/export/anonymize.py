"""Anonymized views of a gradebook, for teaching assistants and projectors: ``m5 review GRADES_DIR --anonymize``.

Every student gets a pseudonym, ``Student 017``: numbers drawn at random the first time a
student is seen (so their order says nothing about the names, and no hash of an id is shown
that a roster could be hashed against), then kept in ``GRADES_DIR/anonymization_key.csv``
(pseudonym, a key the commands match on, the student id). That file is the only link back to
the names: it is written once, extended (its lines kept byte for byte) only when a new student
appears, never rewritten, and never named by the anonymized pages. Deleting it draws new
pseudonyms next time.

The anonymized views go to ``GRADES_DIR/review/anonymized/`` (``review`` is a name the class
outputs reserve, so no student's results folder can be there): the review pages and their
``marks.csv`` (keyed by pseudonym; ``m5 review --marks`` maps it back through the key), and the
class report (``class_report.html``, ``class_report.json``) and ``similarity_pairs.json`` rebuilt
from the records ``grades.json`` keeps, with every submission named by its student's pseudonym
(``Student 017 (en)`` when the student has several) and listed in pseudonym order.

What identifies a student, replaced wherever text is shown: their id, their submissions' paths,
each folder or file name in those paths that no other student's path holds (a student's folder,
a file named after them) and its stem, and the pieces of their id (split at spaces and
underscores) of :data:`MIN_PIECE` characters or more that no other student's id holds. In
error texts, the answers and the code a student wrote, those strings are replaced where they
stand as whole words, in each of the forms a text may hold them (as written, escaped for a
terminal, for HTML, for JSON, for Python); the code of similar submissions is cleaned of every
student's strings (a copied comment may name the student copied from). What is not replaced:
a name a student writes into an answer that is not one of these strings (a classmate's full
name, a nickname), and strings of fewer than :data:`MIN_SCRUB` characters.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
import secrets
from collections import Counter
from pathlib import Path

from autograder.grade import class_report, outputs, report
from autograder.grade.student_files import SubmissionError, read_bytes

KEY_FILE = "anonymization_key.csv"
FOLDER = "anonymized"  # inside GRADES_DIR/review/
KEY_COLUMNS = ["pseudonym", "key", "student"]
WORD = "Student"
PSEUDONYM = re.compile(rf"{WORD} (\d{{3,}})")
MIN_SCRUB = 3  # shorter strings are not replaced inside texts (every letter "a" would go)
MIN_PIECE = 4
MAX_KEY_BYTES = 16 * 1024 * 1024


class AnonymizeError(ValueError):
    """A key file that cannot be used, or a gradebook without what the views are built from."""


def key_of(student: str) -> str:
    """How the key file matches a student (an id any text can hold, as a short hex key)."""
    return "k" + hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def number(pseudonym: str) -> int:
    """A pseudonym's number (pseudonyms sort by it)."""
    match = PSEUDONYM.match(pseudonym)
    return int(match.group(1)) if match else 0


# ---------------------------------------------------------------- the key
def _read_key(path: Path) -> tuple[bytes, list[list[str]]]:
    try:
        data = read_bytes(path, MAX_KEY_BYTES)
    except SubmissionError as exc:
        raise AnonymizeError(f"{exc} (the pseudonyms' key)") from None
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    except (UnicodeDecodeError, csv.Error):
        raise AnonymizeError(f"{path}: unreadable (not the key m5 review --anonymize writes)") from None
    if not rows or rows[0] != KEY_COLUMNS:
        raise AnonymizeError(f"{path}: row 1 must be {','.join(KEY_COLUMNS)} (the key m5 review --anonymize writes); move it away")
    seen: set[str] = set()
    for n, row in enumerate(rows[1:], 2):
        if not row:
            continue
        if len(row) != len(KEY_COLUMNS) or not PSEUDONYM.fullmatch(row[0]) or not row[1]:
            raise AnonymizeError(f"{path}: row {n} is not pseudonym,key,student")
        if row[0] in seen or row[1] in seen:
            raise AnonymizeError(f"{path}: row {n}: {row[0] if row[0] in seen else 'its key'} again")
        seen.update(row[:2])
    return data, [row for row in rows[1:] if row]


def assign(grades_dir: Path, students) -> tuple[dict[str, str], bytes | None]:
    """{student: pseudonym} for ``students`` from the key file, and the key file's new content
    (None when it holds every one of them already). A student the key does not hold yet gets the
    next free number, in a random order, on a line appended to the key's earlier lines."""
    path = Path(grades_dir) / KEY_FILE
    before, rows = _read_key(path) if path.exists() or path.is_symlink() else (b"", [])
    known = {key: pseudonym for pseudonym, key, _ in rows}
    wanted = sorted(set(students))
    names = {s: known[key_of(s)] for s in wanted if key_of(s) in known}
    new = [s for s in wanted if s not in names]
    if not new:
        return names, None
    secrets.SystemRandom().shuffle(new)
    first = max((number(p) for p in known.values()), default=0) + 1
    lines = io.StringIO(newline="")
    sheet = csv.writer(lines)
    if not before:
        sheet.writerow(KEY_COLUMNS)
    for n, student in enumerate(new, first):
        names[student] = f"{WORD} {n:03d}"
        sheet.writerow([names[student], key_of(student), report.for_csv(student)])
    joiner = b"" if not before or before.endswith(b"\n") else b"\r\n"
    return names, before + joiner + lines.getvalue().encode("utf-8", outputs.ENCODE_ERRORS)


def pseudonyms(grades_dir: Path, students) -> dict[str, str]:
    """:func:`assign`, the key file written (atomically) when it gained a student."""
    names, content = assign(grades_dir, students)
    if content is not None:
        outputs.write_bytes(Path(grades_dir) / KEY_FILE, content)
    return names


def aliases(grades_dir: Path, students) -> dict[str, str]:
    """{pseudonym: student} of ``students`` from the key file (empty without one): how a marks sheet
    filled under pseudonyms is read back."""
    path = Path(grades_dir) / KEY_FILE
    if not (path.exists() or path.is_symlink()):
        return {}
    _, rows = _read_key(path)
    by_key = {key_of(s): s for s in students}
    return {pseudonym: by_key[key] for pseudonym, key, _ in rows if key in by_key}


# ---------------------------------------------------------------- what identifies a student
def _forms(text: str) -> set[str]:
    """The forms a text may hold ``text`` in: as written, for a terminal, for HTML, JSON and Python."""
    forms = {
        text,
        report.for_terminal(text),
        outputs.json_safe(text),
        html.escape(text, quote=True),
        html.escape(text, quote=False),
        json.dumps(text)[1:-1],
        json.dumps(outputs.json_safe(text), ensure_ascii=False)[1:-1],
        repr(text)[1:-1],
    }
    return {f for f in forms if len(f) >= MIN_SCRUB}


def _parts(label: str) -> set[str]:
    parts = {p for p in label.split("/") if p}
    return parts | {p.rsplit(".", 1)[0] for p in parts if "." in p[1:]}


def _pieces(student: str) -> set[str]:
    return {p for p in re.split(r"[\s_]+", student) if len(p) >= MIN_PIECE and any(c.isalpha() for c in p)}


def _pattern(replacements: dict[str, str]) -> re.Pattern | None:
    """One pattern for every string, longest first, each matched as a whole word."""
    if not replacements:
        return None
    alternatives = []
    for text in sorted(replacements, key=lambda t: (-len(t), t)):
        before = r"(?<!\w)" if re.match(r"\w", text[0]) else ""
        after = r"(?!\w)" if re.match(r"\w", text[-1]) else ""
        alternatives.append(f"{before}{re.escape(text)}{after}")
    return re.compile("|".join(alternatives))


class Anonymizer:
    """The pseudonyms of a class, and what to replace in the texts of each student.

    ``names``: {student: pseudonym}; ``submissions``: (label, student, language) of every
    submission the views may name, in class order (grades.json's rows: each gets a label of its
    own, its student's pseudonym, with the language and a number when the student has several),
    then the notebooks whose written answers were kept with language None (not named on their
    own: their paths are replaced by the pseudonym)."""

    def __init__(self, names: dict[str, str], submissions: list[tuple[str, str, str | None]]):
        self.names = names
        shown: dict[str, list[tuple[str, str]]] = {}
        paths: dict[str, set[str]] = {}
        for label, student, language in submissions:
            paths.setdefault(student, set()).add(label)
            if language is not None and all(label != seen for seen, _ in shown.get(student, [])):
                shown.setdefault(student, []).append((label, language))
        self.labels: dict[str, str] = {}
        for student, labels in shown.items():
            languages = Counter(language for _, language in labels)
            count: Counter = Counter()
            for label, language in labels:
                tags = []
                if len(labels) > 1:
                    count[language] += 1
                    tags = [language] if language in ("en", "ru") else []
                    if languages[language] > 1 or not tags:
                        tags.append(f"#{count[language]}")
                self.labels[label] = names[student] + (f" ({', '.join(tags)})" if tags else "")
        held = Counter(p for labels in paths.values() for p in set().union(*map(_parts, labels)))
        held_pieces = Counter(p for student in names for p in _pieces(student))
        self._strings: dict[str, dict[str, str]] = {}
        for student, pseudonym in names.items():
            strings = {p: pseudonym for label in paths.get(student, ()) for p in _parts(label) if held[p] == 1}
            strings.update({p: pseudonym for p in _pieces(student) if held_pieces[p] == 1})
            strings.update({label: self.labels.get(label, pseudonym) for label in paths.get(student, ())})
            strings[student] = pseudonym
            self._strings[student] = {}
            for text, replacement in strings.items():  # the id's own forms win over a part's that looks alike
                self._strings[student].update(dict.fromkeys(_forms(text), replacement))
        self._own: dict[str, re.Pattern | None] = {}
        self._everyone: dict[str, str] | None = None

    def student(self, student: str) -> str:
        return self.names[student]

    def label(self, label: str) -> str:
        return self.labels[label]

    def _sub(self, pattern: re.Pattern | None, table: dict[str, str], text: str) -> str:
        return pattern.sub(lambda m: table[m.group(0)], text) if pattern is not None and text else text

    def text(self, student: str, text: str) -> str:
        """``text`` written by (or about) ``student``, their identifying strings replaced."""
        if student not in self._own:
            self._own[student] = _pattern(self._strings.get(student, {}))
        return self._sub(self._own[student], self._strings.get(student, {}), text)

    def any_text(self, text: str) -> str:
        """``text`` with every student's identifying strings replaced."""
        if self._everyone is None:
            self._everyone = {form: shown for strings in reversed(list(self._strings.values())) for form, shown in strings.items()}
        found = {form: shown for form, shown in self._everyone.items() if form in text}  # one pattern of them all is slow
        return self._sub(_pattern(found), found, text)


def submissions(rows: list[dict], entries: list[dict]) -> list[tuple[str, str, str | None]]:
    """(label, student, language) of grades.json's ``rows``, then (label, student, None) of
    written_answers.json's ``entries``: :class:`Anonymizer`'s ``submissions``, each student named as
    the sheets name one (the id, else the label)."""
    out = [(str(r["label"]), str(r.get("student") or r["label"]), str(r.get("language", ""))) for r in rows]
    return out + [(str(e.get("label", "")), str(e.get("student") or e.get("label", "")), None) for e in entries]


# ---------------------------------------------------------------- the views
def _record(anonymizer: Anonymizer, row: dict, where: str) -> dict:
    record = row.get("record")
    if not isinstance(record, dict):
        raise AnonymizeError(f"{where} has no class-report record (grade the class again with this version)")
    student = str(row.get("student") or row["label"])
    return {
        **record,
        "label": anonymizer.label(str(row["label"])),
        "error": anonymizer.text(student, str(record.get("error", ""))),
        "limits": [[group, anonymizer.text(student, str(text))] for group, text in record.get("limits", [])],
        "code": "",  # each flagged member's is shown below, cleaned of everyone's strings
    }


class Views:
    """Everything the anonymized views need, read and built before anything is written:
    the pseudonyms (and the key file's new content), and the class report with its pairs."""

    def __init__(self, grades_dir: Path, rows: list[dict], entries: list[dict], lang: str = "en"):
        self.grades_dir, self.lang = Path(grades_dir), lang
        where = self.grades_dir / "grades.json"
        if not isinstance(rows, list):
            raise AnonymizeError(f"{where}: no rows (not written by m5 grade or m5 merge)")
        try:
            everyone = submissions(rows, entries)
        except (KeyError, TypeError, AttributeError):
            raise AnonymizeError(f"{where}: a row without its label (not written by m5 grade or m5 merge)") from None
        names, self.key_content = assign(self.grades_dir, [student for _, student, _ in everyone])
        self.anonymizer = Anonymizer(names, everyone)
        records, code = [], {}
        try:
            for n, row in enumerate(rows, 1):
                record = _record(self.anonymizer, row, f"{where}: row {n}")
                records.append(record)
                code[record["label"]] = str(row["record"].get("code", ""))
            records.sort(key=lambda r: (number(r["label"]), r["label"]))  # class order would follow the names
            self.document = class_report.build(records, lang)
        except AnonymizeError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise AnonymizeError(f"{where}: a class-report record is malformed ({type(exc).__name__})") from None
        self.pairs = self.document["similar"].pop("_pairs")
        for cluster in self.document["similar"]["clusters"]:
            for k, member in enumerate(cluster["members"]):  # the lengths class_report keeps
                limit = class_report.SIDE_CHARS if k < 2 else class_report.EXCERPT_CHARS if k < 2 + class_report.EXCERPTS else 0
                member["code"] = self.anonymizer.any_text(code[member["label"]])[:limit] if limit else ""

    def write_key(self) -> Path:
        """The key file, when it gained a student (first: no page names a pseudonym the key lacks)."""
        path = self.grades_dir / KEY_FILE
        if self.key_content is not None:
            outputs.write_bytes(path, self.key_content)
            self.key_content = None
        return path

    def write_report(self, folder: Path) -> list[Path]:
        """The class report and every flagged pair, as ``m5 grade`` writes them, with pseudonyms, into ``folder``."""
        return [
            outputs.write_json(folder / class_report.PAIRS_NAME, {"pairs": self.pairs}, indent=None),
            outputs.write_json(folder / class_report.JSON_NAME, self.document),
            outputs.write_text(folder / class_report.HTML_NAME, class_report.to_html(self.document, self.lang)),
        ]
