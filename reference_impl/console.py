"""Console output that never fails on the text it is given, whatever the platform's locale.

A Russian report printed to a console whose encoding cannot hold Cyrillic (``LC_ALL=C``
with ``PYTHONUTF8=0``, or Windows with its output redirected to a file in code page 1252)
raises ``UnicodeEncodeError`` from ``print``. :func:`make_console_safe` switches such a
stream to UTF-8 and makes every other unencodable character an escape, never an error.
"""

from __future__ import annotations

import codecs
import sys

ERROR_HANDLER = "m5_console"
# Letters the kit prints in Russian: a stream that cannot encode them is switched to UTF-8.
CYRILLIC_PROBE = "ЁёЖжЯя"


def _restore_or_escape(error: UnicodeError) -> tuple[str | bytes, int]:
    """Surrogate-escaped bytes (a file name the locale could not decode) come out as the
    original bytes; any other unencodable character as a backslash escape."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chars = error.object[error.start : error.end]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in chars):
        return bytes(ord(c) - 0xDC00 for c in chars), error.end
    return codecs.backslashreplace_errors(error)


codecs.register_error(ERROR_HANDLER, _restore_or_escape)


def make_console_safe(*streams) -> None:
    """Reconfigure each text stream (default: stdout and stderr) so printing never raises on its text."""
    for stream in streams or (sys.stdout, sys.stderr):
        if not hasattr(stream, "reconfigure"):  # Jupyter's streams, StringIO: already Unicode
            continue
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            CYRILLIC_PROBE.encode(encoding)
        except (UnicodeEncodeError, LookupError):
            encoding = "utf-8"
        stream.reconfigure(encoding=encoding, errors=ERROR_HANDLER)
