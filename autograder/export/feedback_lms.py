"""The feedback pages packed for an LMS's bulk upload: Moodle's and Canvas's own naming.

Each LMS finds the student a file is for in the file's name, by the name its own submissions
download gave; a submission graded from such a download is packed under that name, any other
is left out (and said so). Both archives are deterministic (fixed timestamps and modes, entries
sorted) and written atomically.

Moodle (assignment, *Upload multiple feedback files in a zip*; ``mod/assign/feedback/file``):
the importer splits each part of a path in the zip at ``_`` into at most five fields, and takes
the first part whose fields read ``<full name>_<participant id>_<plugin type>_<plugin name>``
(``_<rest>`` after it, or a trailing ``_``, optional) with a numeric participant id of this
assignment; the rest of the path is the feedback file's name. Moodle's *Download all
submissions* names each student's folder ``<Full Name>_<participant id>_assignsubmission_file``
(with a trailing ``_`` before Moodle 4.1; underscores in a name become spaces) and, in the flat
layout of Moodle 3.0 and earlier, each file ``<...>_assignsubmission_file_<file name>``. A page
goes to ``<that folder>/feedback.html`` (flat: ``<...>_assignsubmission_file_feedback.html``).

Canvas (assignment, *Submissions → Upload*, after *Download Submissions*): the download names
each file ``<lastfirst>[_late]_<user id>_<attachment id>_<file name>`` (lower case, only word
characters before the ids; anonymous grading: ``anon_<anonymous id>_<attachment id>_...``);
the upload takes the user id and the attachment id from a file's base name (the first two
all-digit fields, ``LATE`` skipped) and attaches the file as a comment on that submission. A
page goes to ``<lastfirst>[_late]_<user id>_<attachment id>_feedback.html`` at the zip's root.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.grade import outputs, report

MOODLE_ZIP = "feedback_moodle.zip"
CANVAS_ZIP = "feedback_canvas.zip"
FEEDBACK_NAME = "feedback.html"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: the same bytes on every run
_DIGITS = re.compile(r"[0-9]+")
_PLUGIN = re.compile(r"[a-z][a-z0-9]*")
_WORD = re.compile(r"\w+")  # Canvas keeps [[:word:]] (any script's letters, digits, _) before the ids
_UNSAFE = set('\\/:*?"<>|')  # never in a zip entry's part, whatever an LMS would accept


@dataclass
class Package:
    """One LMS archive's entries ({name in the zip: page bytes}) and the rows it could not take."""

    entries: dict[str, bytes] = field(default_factory=dict)
    not_packaged: list[str] = field(default_factory=list)  # labels of rows not from this LMS's download


def _clean(part: str) -> bool:
    return bool(part) and part.isprintable() and not (set(part) & _UNSAFE) and part not in (".", "..")


def moodle_entry(label: str) -> str | None:
    """Where Moodle's feedback importer takes a page for the submission at ``label`` (a path from
    Moodle's download, the folder its first part or deeper), or None when no part of the path is
    named as Moodle names a participant's submission."""
    parts = PurePosixPath(label).parts
    for depth, part in enumerate(parts):
        fields = part.split("_", 4)
        if len(fields) < 4 or not _DIGITS.fullmatch(fields[1]) or fields[2] != "assignsubmission" or not _PLUGIN.fullmatch(fields[3]):
            continue
        name = fields[0] if _clean(fields[0]) else "".join(ch if ch.isprintable() and ch not in _UNSAFE else " " for ch in fields[0])
        prefix = "_".join([name.strip() or "Participant", *fields[1:4]])
        if depth < len(parts) - 1:  # a participant's folder: the page goes inside it
            return f"{part if _clean(part) else prefix}/{FEEDBACK_NAME}"
        return f"{prefix}_{FEEDBACK_NAME}"  # the flat layout: the prefix carries the participant
    return None


def canvas_entry(label: str) -> str | None:
    """The name Canvas's submissions upload maps to the same student and attachment as the file at
    ``label`` (named as Canvas's download names it), or None for any other file name."""
    fields = PurePosixPath(label).name.split("_")
    if fields[0] == "anon":  # anonymous grading: the anonymous id, then the attachment's (LATE skipped)
        kept = [f for f in fields if f != "LATE"]
        if len(kept) >= 4 and _WORD.fullmatch(kept[1]) and _DIGITS.fullmatch(kept[2]):
            return f"anon_{kept[1]}_{kept[2]}_{FEEDBACK_NAME}"
        return None
    digits = [i for i, f in enumerate(fields) if _DIGITS.fullmatch(f)]
    if len(digits) < 2:
        return None
    user, attachment = digits[:2]
    before = fields[:user]
    if attachment != user + 1 or attachment >= len(fields) - 1 or not before:
        return None  # the ids side by side, a name before them and the file's own name after
    if not all(_WORD.fullmatch(f) and f == f.lower() for f in before if f != "LATE"):
        return None
    return "_".join(fields[: attachment + 1]) + "_" + FEEDBACK_NAME


def package(pages: list[tuple[bytes, list[str], str]], entry_of) -> Package:
    """The archive of ``pages`` (page bytes, the labels of its student's rows, a short id of the
    page) under the names ``entry_of(label)`` gives: one entry per page and LMS student (the
    first row naming it), a second page for one name gets the page's id in its name."""
    out = Package()
    for data, labels, page_id in pages:
        mine: list[str] = []
        for label in labels:
            entry = entry_of(label)
            if entry is None:
                out.not_packaged.append(label)
                continue
            if entry in mine:
                continue
            mine.append(entry)
            if entry in out.entries:
                stem, _, suffix = entry.rpartition(".")
                entry = f"{stem}-{page_id}.{suffix}"
            out.entries[entry] = data
    return out


def zip_bytes(entries: dict[str, bytes]) -> bytes:
    """A zip of ``entries``: sorted by name, every entry with the same time, mode and system
    (Unix), deflated; the same entries give the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            archive.writestr(info, entries[name], compresslevel=9)
    return buffer.getvalue()


def write_packages(out: Path, pages: list[tuple[bytes, list[str], str]]) -> tuple[list[Path], dict[str, Package]]:
    """``feedback_moodle.zip`` and ``feedback_canvas.zip`` in ``out``, each only when some row
    came from that LMS's download; (the zips written, {zip name: its Package})."""
    written, packages = [], {}
    for name, entry_of in ((MOODLE_ZIP, moodle_entry), (CANVAS_ZIP, canvas_entry)):
        packages[name] = found = package(pages, entry_of)
        if found.entries:
            written.append(outputs.write_bytes(out / name, zip_bytes(found.entries)))
    return written, packages


LMS_NAMES = {MOODLE_ZIP: "Moodle", CANVAS_ZIP: "Canvas"}
SHOWN_LABELS = 10  # submissions named in the one line that says which were not packed


def summary(name: str, found: Package) -> str:
    """One line on one archive: how many pages it holds and which submissions it left out."""

    lms = LMS_NAMES.get(name, name)
    if not found.entries:
        return f"{name}: not written (no submission was graded from a {lms} download)"
    count = len(found.entries)
    line = f"{name}: {count} feedback file{'' if count == 1 else 's'}"
    if found.not_packaged:
        shown = ", ".join(report.for_terminal(label) for label in found.not_packaged[:SHOWN_LABELS])
        more = f" and {len(found.not_packaged) - SHOWN_LABELS} more" if len(found.not_packaged) > SHOWN_LABELS else ""
        line += f"; not packaged (not from a {lms} download): {shown}{more}"
    return line
