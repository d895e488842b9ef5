"""make_console_safe: printing never raises, whatever the stream's encoding and the text."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from reference_impl.console import make_console_safe


def stream(encoding: str) -> tuple[io.BytesIO, io.TextIOWrapper]:
    raw = io.BytesIO()
    return raw, io.TextIOWrapper(raw, encoding=encoding, newline="")


def test_a_stream_that_cannot_hold_cyrillic_is_switched_to_utf8():
    raw, text = stream("ascii")
    make_console_safe(text)
    print("Отчёт", file=text, end="")
    text.flush()
    assert raw.getvalue().decode("utf-8") == "Отчёт"


def test_a_stream_that_holds_cyrillic_keeps_its_encoding_and_escapes_the_rest():
    raw, text = stream("cp1251")
    make_console_safe(text)
    print("Ёж ✓", file=text, end="")
    text.flush()
    assert raw.getvalue() == "Ёж ".encode("cp1251") + b"\\u2713"


def test_surrogate_escaped_bytes_come_out_as_the_original_bytes():
    raw, text = stream("utf-8")
    make_console_safe(text)
    name = b"caf\xe9".decode("utf-8", errors="surrogateescape")
    print(name, file=text, end="")
    text.flush()
    assert raw.getvalue() == b"caf\xe9"


def test_a_stream_without_reconfigure_is_left_alone():
    buffer = io.StringIO()
    make_console_safe(buffer)
    print("Отчёт", file=buffer, end="")
    assert buffer.getvalue() == "Отчёт"


@given(st.text(), st.sampled_from(["ascii", "latin-1", "cp1252", "cp1251", "utf-8"]))
def test_printing_any_text_never_raises(text_to_print, encoding):
    raw, text = stream(encoding)
    make_console_safe(text)
    print(text_to_print, file=text, end="")
    text.flush()
    assert isinstance(raw.getvalue(), bytes)
