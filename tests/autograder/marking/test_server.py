"""The marking page's server without a browser: who it answers, what it refuses, what a refusal changes.

Every test starts a server in a thread over a small gradebook (``marking_fixtures``) and talks to
it with ``http.client`` (or a raw socket where ``http.client`` would correct the request).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)

# tests/autograder is on sys.path
from marking_fixtures import CLASS, make_gradebook

from autograder.marking import api, server, store

HOSTILE = "<script>window.__pwned=1</script><img src=x onerror=alert(1)>\u202eevil\u0000\ud800"
QUESTION = "q01_answer"
ITEM = "q01_answer#1"


@pytest.fixture()
def book(tmp_path):
    answers = {**CLASS, "dave": {QUESTION: HOSTILE, "q02_answer": "x" * (api.MAX_SHOWN_CHARS + 5)}, "erin": {QUESTION: "same text"}}
    answers["frank"] = {QUESTION: "same text"}
    return make_gradebook(tmp_path / "grades", answers)


@pytest.fixture()
def running(book):
    with server.MarkingServer(book) as srv:
        yield srv


def call(srv, method, path, body=None, *, token=True, marker="Anna", headers=None, raw=None, host=None):
    """(status, headers, body bytes) of one request; ``body`` sent as JSON, ``raw`` as given."""
    connection = http.client.HTTPConnection(server.HOST, srv.port, timeout=10)
    sent = {}
    if token is True:
        sent[server.TOKEN_HEADER] = srv.token
    elif token:
        sent[server.TOKEN_HEADER] = token
    if marker:
        sent[server.MARKER_HEADER] = urllib.parse.quote(marker)
    if body is not None:
        raw = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    sent.update(headers or {})
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    if host is not False:
        connection.putheader("Host", f"{server.HOST}:{srv.port}" if host is None else host)
    for name, value in sent.items():
        connection.putheader(name, value)
    if raw is not None and "Content-Length" not in sent:
        connection.putheader("Content-Length", str(len(raw)))
    connection.endheaders(raw)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data


def raw_request(srv, data: bytes) -> bytes:
    """What the server answers to these exact bytes."""
    with socket.create_connection((server.HOST, srv.port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def question(srv, marker="Anna") -> dict:
    status, _, data = call(srv, "GET", f"/api/question?id={QUESTION}", marker=marker)
    assert status == 200, data
    return json.loads(data)


def refs(srv) -> dict[str, dict]:
    """The question's answers by reference."""
    return question(srv)["answers"]


def marked_state(book: Path) -> dict:
    """Everything the marking store holds of the decisions, to compare before and after a refusal."""
    with store.MarkingStore(book, "inspector") as kept:
        return {"decisions": kept.decisions(), "items": kept.items(), "versions": kept.item_versions(), "detached": kept.detached()}


def non_blank_ref(srv) -> tuple[str, int]:
    answer = next(a for a in refs(srv).values() if not a["blank"])
    return answer["ref"], answer["version"]


PAGE_PATHS = ["/", "/index.html", "/static/app.js", "/static/app.css"]
API_GETS = ["/api/labels", "/api/state", f"/api/question?id={QUESTION}"]
EVERY_GET = PAGE_PATHS + API_GETS + ["/nothing", "/static/../../etc/passwd"]


# ------------------------------------------------------------------ the token
@pytest.mark.parametrize("token", [None, "", "wrong", "A" * 43])
def test_no_request_without_the_right_token_gets_anything_but_403(running, book, token):
    before = marked_state(book)
    for path in EVERY_GET:
        query = "" if token is None else ("&" if "?" in path else "?") + f"token={token}"
        status, headers, data = call(running, "GET", path + query, token=token)
        assert status == 403, (path, status)
        assert json.loads(data).keys() == {"error"} and b"q01" not in data and b"Student" not in data
        assert headers["Content-Type"] == "application/json"
    ref, version = non_blank_ref(running)
    for route in sorted(api.POST_ROUTES):
        body = {"question": QUESTION, "targets": [{"ref": ref, "version": version}], "add": [ITEM]}
        assert call(running, "POST", route, body, token=token)[0] == 403
    assert marked_state(book) == before


def test_the_token_counts_only_where_it_belongs(running):
    # the page and its files take it from the query, the API from its header: one in the other place is refused
    assert call(running, "GET", "/", token=True)[0] == 403
    assert call(running, "GET", "/static/app.js", token=True)[0] == 403
    assert call(running, "GET", f"/api/state?token={running.token}", token=None)[0] == 403
    assert call(running, "GET", f"/?token={running.token}", token=None)[0] == 200
    assert call(running, "GET", f"/static/app.js?token={running.token}", token=None)[0] == 200
    assert call(running, "GET", "/api/state")[0] == 200
    # a token differing in one character, case, or with extra characters is wrong
    for wrong in [running.token.swapcase(), running.token + "x", running.token[:-1], running.token + " x"]:
        assert call(running, "GET", "/api/state", token=wrong)[0] == 403


def test_the_printed_url_carries_a_fresh_random_token(book):
    with server.MarkingServer(book) as one, server.MarkingServer(book) as two:
        assert one.token != two.token and len(one.token) >= 43
        assert one.url == f"http://127.0.0.1:{one.port}/?token={one.token}"
        status, _, page = call(one, "GET", urllib.parse.urlsplit(one.url).path + "?" + urllib.parse.urlsplit(one.url).query, token=None)
        assert status == 200 and b'<script src="/static/app.js?token=' in page
        assert call(two, "GET", "/api/state", token=one.token)[0] == 403  # one server's token opens no other


# ------------------------------------------------------------------ host, origin, forged posts
@pytest.mark.parametrize(
    "host", ["evil.example:{port}", "127.0.0.1", "127.0.0.1:1", "localhost", "127.0.0.2:{port}", "[::1]:{port}", "0.0.0.0:{port}", ""]
)
def test_a_forged_host_is_refused(running, host):
    # a DNS-rebinding page reaches 127.0.0.1 under its own name: the Host header gives it away
    status, _, data = call(running, "GET", "/api/state", host=host.format(port=running.port))
    assert status == 403 and b"questions" not in data
    assert call(running, "GET", "/api/state", host=False)[0] == 403  # no Host header at all
    assert call(running, "GET", "/api/state", host=f"LOCALHOST:{running.port}")[0] == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "https://127.0.0.1:{port}"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_post_from_another_site_changes_nothing(running, book, headers):
    before = marked_state(book)
    ref, version = non_blank_ref(running)
    headers = {k: v.format(port=running.port) for k, v in headers.items()}
    body = {"question": QUESTION, "targets": [{"ref": ref, "version": version}], "add": [ITEM]}
    status, _, data = call(running, "POST", "/api/apply", body, headers=headers)
    assert status == 403 and "another site" in json.loads(data)["error"]
    assert marked_state(book) == before
    same = {"Origin": f"http://127.0.0.1:{running.port}", "Sec-Fetch-Site": "same-origin"}
    assert call(running, "POST", "/api/apply", body, headers=same)[0] == 200


@pytest.mark.parametrize(
    "kind",
    ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", "", "application/json-seq", "text/json"],
)
def test_a_forged_form_post_is_refused_and_changes_nothing(running, book, kind):
    before = marked_state(book)
    ref, version = non_blank_ref(running)
    form = urllib.parse.urlencode({"question": QUESTION, "ref": ref, "version": version, "add": ITEM}).encode()
    for token in (None, True):  # what a cross-site form can send (no header) and even with it
        headers = {"Content-Type": kind} if kind else {}
        status, _, _ = call(running, "POST", "/api/apply", raw=form, headers=headers, token=token, marker="Anna")
        assert status in (403, 415)
    # a JSON body sent as text/plain (the one type a form or a simple request may use) is refused too
    body = json.dumps({"question": QUESTION, "targets": [{"ref": ref, "version": version}], "add": [ITEM]}).encode()
    assert call(running, "POST", "/api/apply", raw=body, headers={"Content-Type": "text/plain"})[0] == 415
    assert marked_state(book) == before


def test_a_get_changes_nothing_and_other_methods_are_refused(running, book):
    before = marked_state(book)
    ref, version = non_blank_ref(running)
    query = urllib.parse.urlencode({"question": QUESTION, "targets": json.dumps([{"ref": ref, "version": version}]), "add": ITEM})
    for route in sorted(api.POST_ROUTES):
        assert call(running, "GET", f"{route}?{query}")[0] == 404
    for method in ["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"]:
        status, headers, _ = call(running, method, "/api/apply")
        assert status == 405 and headers["Content-Security-Policy"] == server.SECURITY_HEADERS["Content-Security-Policy"]
    assert marked_state(book) == before


# ------------------------------------------------------------------ paths
TRAVERSALS = [
    "/../../../../etc/passwd",
    "/static/../../etc/passwd",
    "/static/%2e%2e/%2e%2e/etc/passwd",
    "/static/..%2f..%2f..%2fetc%2fpasswd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "//etc/passwd",
    "/etc/passwd",
    "/static//etc/passwd",
    "/static/app.js/../../server.py",
    "/static/../server.py",
    "/static/app.js%00.png",
    "/static/APP.JS",
    "/static/",
    "/page/app.js",
    "/autograder/marking/server.py",
    "/static/..\\..\\server.py",
    "/static/%252e%252e/server.py",
    "http://127.0.0.1/etc/passwd",
    "/C:/Windows/win.ini",
    "/api/../static/app.js",
    "/api/question/../../etc/passwd",
    "/./static/app.js",
]


def test_no_path_from_a_request_reaches_the_file_system(running):
    opened = []
    watching = threading.Event()

    def audit(event, args):
        if watching.is_set() and event in ("open", "os.listdir", "os.scandir", "os.chdir", "sqlite3.connect"):
            opened.append((event, args[0] if args else None))

    sys.addaudithook(audit)  # cannot be removed: it records only while watching
    call(running, "GET", f"/static/app.js?token={running.token}", token=None)  # warm every import first
    for path in TRAVERSALS:
        call(running, "GET", path + ("&" if "?" in path else "?") + f"token={running.token}", token=None)
    watching.set()
    try:
        for path in TRAVERSALS:
            for with_token in (True, False):
                target = path + (("&" if "?" in path else "?") + f"token={running.token}" if with_token else "")
                status, headers, data = call(running, "GET", target, token=None)
                assert status in (403, 404), (path, status)
                assert b"root:" not in data and b"import" not in data
                assert headers["X-Content-Type-Options"] == "nosniff"
                status, _, _ = call(running, "POST", path, {"x": 1})
                assert status in (403, 404, 405), (path, status)
    finally:
        watching.clear()
    assert opened == []


def test_the_static_files_are_the_packages_own_read_once(running):
    for route, (name, kind) in server.STATIC_FILES.items():
        status, headers, data = call(running, "GET", f"{route}?token={running.token}", token=None)
        assert status == 200 and data == (server.PAGE_DIR / name).read_bytes() and headers["Content-Type"] == kind


# ------------------------------------------------------------------ bodies
def test_bodies_too_big_or_without_a_length_are_refused(running, book):
    before = marked_state(book)
    # a length over the limit is refused before a byte of the body is read
    head = (
        f"POST /api/apply HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\n{server.TOKEN_HEADER}: {running.token}\r\n"
        f"{server.MARKER_HEADER}: Anna\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n"
    )
    answer = raw_request(running, head.encode())
    assert answer.startswith(b"HTTP/1.1 413") and b"Content-Security-Policy" in answer
    just_over = raw_request(running, head.replace("99999999999", str(server.MAX_BODY + 1)).encode() + b"{" * 1000)
    assert just_over.startswith(b"HTTP/1.1 413")
    chunked = head.replace("Content-Length: 99999999999", "Transfer-Encoding: chunked") + "5\r\n{}{}{\r\n0\r\n\r\n"
    assert raw_request(running, chunked.encode()).startswith(b"HTTP/1.1 411")
    no_length = head.replace("Content-Length: 99999999999\r\n", "")
    assert raw_request(running, no_length.encode()).startswith(b"HTTP/1.1 411")
    for bad in ["-1", "1e3", "0x10", "٣"]:
        assert raw_request(running, head.replace("99999999999", bad).encode()).startswith(b"HTTP/1.1 411")
    assert marked_state(book) == before


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"",
        b"[]",
        b'"text"',
        b"null",
        b'{"question": NaN}',
        b'{"question": Infinity}',
        b"\xff\xfe{}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"question": "q01_answer", "targets": "all"}',
        b'{"question": "q01_answer", "targets": [{"ref": "s999", "version": 0}]}',
        b'{"question": "q01_answer", "targets": [{"ref": ["s001"], "version": 0}]}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": -1}]}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": true}]}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": 1.5}]}',
        b'{"question": "../../etc/passwd", "targets": [{"ref": "s001", "version": 0}]}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": 0}], "add": "q01_answer#1"}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": 0}], "add": ["q02_answer#1"]}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": 0}], "add": ["nope"]}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": 0}], "comment": 5}',
        b'{"question": "q01_answer", "targets": [{"ref": "s001", "version": 0}, {"ref": "s001", "version": 0}]}',
        b'{"question": "q01_answer", "targets": []}',
    ],
)
def test_malformed_bodies_get_one_line_and_change_nothing(running, book, raw):
    before = marked_state(book)
    status, _, data = call(running, "POST", "/api/apply", raw=raw, headers={"Content-Type": "application/json"})
    assert status == 400, (raw[:80], status, data[:200])
    error = json.loads(data)["error"]
    assert "\n" not in error and "Traceback" not in error
    assert marked_state(book) == before


@pytest.mark.parametrize(
    "route, body",
    [
        ("/api/item/add", {"question": QUESTION, "points": "1", "marker": {"en": "a", "ru": "б"}, "student": {"en": "a", "ru": "б"}}),
        ("/api/item/add", {"question": QUESTION, "points": 99, "marker": {"en": "a", "ru": "б"}, "student": {"en": "a", "ru": "б"}}),
        ("/api/item/add", {"question": QUESTION, "points": 1, "marker": {"en": "a"}, "student": {"en": "a", "ru": "б"}}),
        ("/api/item/add", {"question": QUESTION, "points": 1, "marker": "a", "student": {"en": "a", "ru": "б"}}),
        ("/api/item/edit", {"item": ITEM, "version": 1}),
        ("/api/item/edit", {"item": ITEM, "version": "1", "points": 1}),
        ("/api/item/edit", {"item": 7, "version": 1, "points": 1}),
        ("/api/item/edit", {"item": "nope#1", "version": 1, "points": 1}),
        ("/api/item/edit", {"item": ITEM, "version": 1, "points": 0}),
        ("/api/detach", {"question": QUESTION, "ref": "s999"}),
        ("/api/attach", {"question": "nope", "ref": "s001"}),
    ],
)
def test_bad_actions_are_refused_in_the_pages_language(running, book, route, body):
    before = marked_state(book)
    for lang in ("en", "ru"):
        status, _, data = call(running, "POST", route, body, headers={server.LANG_HEADER: lang})
        assert status == 400, (route, body, data)
        error = json.loads(data)["error"]
        assert "\n" not in error and error.strip()
    assert marked_state(book) == before


@pytest.mark.parametrize("name", ["", "  ", "A" * 41, "An\u0000na", "%FF%FE", "\u202eAnna"])
def test_a_marker_without_a_proper_name_is_refused(running, name):
    header = name if name.startswith("%") else urllib.parse.quote(name)
    status, _, data = call(running, "GET", "/api/state", marker=None, headers={server.MARKER_HEADER: header} if header else None)
    assert status == 400 and json.loads(data)["error"]
    assert call(running, "GET", "/api/state", marker="Анна Петрова")[0] == 200
    assert call(running, "GET", "/api/labels", marker=None)[0] == 200  # the page reads its labels before the name


# ------------------------------------------------------------------ headers
def test_every_answer_carries_the_security_headers(running):
    answers = [
        call(running, "GET", f"/?token={running.token}", token=None),
        call(running, "GET", f"/static/app.js?token={running.token}", token=None),
        call(running, "GET", "/api/state"),
        call(running, "GET", "/api/state", token="wrong"),
        call(running, "GET", "/nothing"),
        call(running, "DELETE", "/api/state"),
        call(running, "POST", "/api/apply", raw=b"{", headers={"Content-Type": "application/json"}),
        call(running, "GET", "/api/state", host="evil.example"),
        call(running, "GET", "/api/state?" + "&".join(f"a{i}=1" for i in range(50))),
    ]
    for status, headers, _ in answers:
        for name, value in server.SECURITY_HEADERS.items():
            assert headers.get(name) == value, (status, name)
    # what http.server itself refuses (a malformed request line, an unsupported version) gets them too
    for garbage in [b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n"]:
        answer = raw_request(running, garbage)
        assert answer.startswith(b"HTTP/") and b"Content-Security-Policy: default-src 'none'" in answer, answer[:200]
        assert b"Traceback" not in answer


def test_the_page_allows_only_its_own_script_and_no_inline_code(running):
    policy = server.SECURITY_HEADERS["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "unsafe" not in policy and "default-src 'none'" in policy
    _, _, page = call(running, "GET", f"/?token={running.token}&lang=ru", token=None)
    text = page.decode()
    assert re.findall(r"<script[^>]*>", text) == [f'<script src="/static/app.js?token={running.token}" defer>']
    assert "<style" not in text and " on" not in text.lower().replace("content=", "") and 'lang="ru"' in text
    _, _, page = call(running, "GET", f"/?token={running.token}&lang=<x>", token=None)
    assert 'lang="en"' in page.decode() and "<x>" not in page.decode()


def test_an_unexpected_failure_is_one_line_to_the_client_and_a_traceback_on_stderr(running, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(running.app, "state", broken)
    status, headers, data = call(running, "GET", "/api/state")
    assert status == 500 and b"secret" not in data and b"Traceback" not in data and json.loads(data)["error"]
    assert headers["Cache-Control"] == "no-store"
    assert "secret internal detail" in capsys.readouterr().err


# ------------------------------------------------------------------ the socket
def test_it_listens_on_127_0_0_1_only(running):
    assert running.httpd.socket.getsockname()[0] == "127.0.0.1"
    assert running.httpd.socket.family == socket.AF_INET
    addresses = {"127.0.0.2"}  # loopback too, but not the address the server bound
    with contextlib.suppress(OSError):
        addresses |= {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    for address in sorted(addresses - {"127.0.0.1"}):
        with pytest.raises(OSError):
            socket.create_connection((address, running.port), timeout=2).close()
    with pytest.raises(OSError):
        socket.create_connection(("::1", running.port), timeout=2).close()


# ------------------------------------------------------------------ marking through the API
def test_students_are_pseudonyms_unless_names_are_asked(book):
    with server.MarkingServer(book) as anonymous:
        _, _, data = call(anonymous, "GET", f"/api/question?id={QUESTION}")
        assert all(student.encode() not in data for student in ["alice", "bob", "carol", "dave", "erin", "frank"])
        numbers = [a["number"] for a in json.loads(data)["answers"].values()]
        assert sorted(numbers) == [f"{n:03d}" for n in range(1, 7)]
    with server.MarkingServer(book, names=True) as named:
        answers = json.loads(call(named, "GET", f"/api/question?id={QUESTION}")[2])["answers"]
        assert {a["name"] for a in answers.values()} == {"alice", "bob", "carol", "dave", "erin", "frank"}
    given = {"alice": "Student 017", "bob": "Student 003"}
    with server.MarkingServer(book, pseudonyms=given) as keyed:
        answers = json.loads(call(keyed, "GET", f"/api/question?id={QUESTION}")[2])["answers"]
        assert {"017", "003"} <= {a["number"] for a in answers.values()} and len({a["number"] for a in answers.values()}) == 6


def test_student_text_travels_as_data_with_hidden_characters_shown(running):
    answers = refs(running)
    hostile = next(a for a in answers.values() if "__pwned" in a["text"])
    assert hostile["text"].startswith("<script>window.__pwned=1</script>")  # JSON data: the page inserts it as text
    assert "⟦U+202E⟧" in hostile["text"] and "⟦U+0000⟧" in hostile["text"]
    assert api.shown("a\ud800b\u2066c\u0007\n\td") == ("a\ufffdb⟦U+2066⟧c⟦U+0007⟧\n\td", 0)
    status, headers, data = call(running, "GET", "/api/question?id=q02_answer")
    long = max(json.loads(data)["answers"].values(), key=lambda a: len(a["text"]))
    assert len(long["text"]) == api.MAX_SHOWN_CHARS and long["cut"] == 5
    assert headers["Content-Type"] == "application/json" and data.isascii()


def test_a_stale_version_is_a_409_with_a_message_and_the_mark_is_kept(running, book):
    ref, version = non_blank_ref(running)
    target = {"question": QUESTION, "targets": [{"ref": ref, "version": version}]}
    assert call(running, "POST", "/api/apply", {**target, "add": [ITEM]}, marker="Anna")[0] == 200
    for lang in ("en", "ru"):
        status, _, data = call(
            running, "POST", "/api/apply", {**target, "remove": [ITEM]}, marker="Boris", headers={server.LANG_HEADER: lang}
        )
        reply = json.loads(data)
        assert status == 409 and reply["conflict"] == [ref] and "Anna" in reply["error"]
        assert ("Student" if lang == "en" else "Студент") in reply["error"] and "alice" not in reply["error"]
    assert refs(running)[ref]["items"] == [ITEM] and refs(running)[ref]["marker"] == "Anna"
    item = next(i for i in question(running)["items"] if i["id"] == ITEM)
    edit = {"item": ITEM, "version": item["version"], "points": 0.5}
    assert call(running, "POST", "/api/item/edit", edit, marker="Anna")[0] == 200
    status, _, data = call(running, "POST", "/api/item/edit", {**edit, "points": 1}, marker="Boris")
    assert status == 409 and ITEM in json.loads(data)["error"]
    assert next(i for i in question(running)["items"] if i["id"] == ITEM)["points"] == 0.5


def test_a_group_action_an_item_edit_detach_and_export(running, book):
    q = question(running)
    pair = next(g for g in q["groups"] if len(g["members"]) == 2)
    targets = [{"ref": r, "version": q["answers"][r]["version"]} for r in pair["members"]]
    body = {"question": QUESTION, "targets": targets, "add": [ITEM, "q01_answer#2"], "comment": "see <b>§2</b>"}
    assert call(running, "POST", "/api/apply", body)[0] == 200
    answers = refs(running)
    assert all(answers[r]["mark"] == 2.0 and answers[r]["comment"] == "see <b>§2</b>" for r in pair["members"])
    version = next(i for i in question(running)["items"] if i["id"] == ITEM)["version"]
    assert call(running, "POST", "/api/item/edit", {"item": ITEM, "version": version, "points": 0.5})[0] == 200
    assert all(refs(running)[r]["mark"] == 1.5 for r in pair["members"])  # every carrier re-marked
    assert call(running, "POST", "/api/detach", {"question": QUESTION, "ref": pair["members"][0]})[0] == 200
    groups = question(running)["groups"]
    assert [pair["members"][0]] in [g["members"] for g in groups if g["detached"]]
    status, _, data = call(running, "POST", "/api/export", {})
    assert status == 200 and json.loads(data)["files"] == ["written_marks.json"]
    marks = json.loads((book / "written_marks.json").read_text(encoding="utf-8"))
    marked = {student for student, by_question in marks["marks"].items() if QUESTION in by_question}
    assert marked == {"erin", "frank"} and marks["marks"]["erin"][QUESTION] == 1.5  # no other answer to it is marked or blank
    state = json.loads(call(running, "GET", "/api/state")[2])
    assert next(q for q in state["questions"] if q["id"] == QUESTION)["progress"] == {"marked": 2, "total": 6, "to_mark": 4}


def test_two_markers_in_parallel_lose_no_mark(running, book):
    answers = refs(running)
    order = sorted(answers)
    results: dict[str, list[int]] = {"Anna": [], "Boris": []}
    start = threading.Barrier(2)

    def mark(marker: str, item: str):
        start.wait()
        for _ in range(3):
            for ref in order:
                current = refs_for(marker)[ref]
                body = {"question": QUESTION, "targets": [{"ref": ref, "version": current["version"]}], "add": [item]}
                results[marker].append(call(running, "POST", "/api/apply", body, marker=marker)[0])

    def refs_for(marker):
        return question(running, marker)["answers"]

    threads = [threading.Thread(target=mark, args=("Anna", ITEM)), threading.Thread(target=mark, args=("Boris", "q01_answer#2"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert set(results["Anna"]) | set(results["Boris"]) <= {200, 409}
    final = refs(running)
    with store.MarkingStore(book, "inspector") as kept:
        history = kept.history(question=QUESTION)
    for marker, item in (("Anna", ITEM), ("Boris", "q01_answer#2")):
        # every 200 a marker got is an action in the history, and the items it added are still there
        assert sum(1 for s in results[marker] if s == 200) == sum(1 for h in history if h["marker"] == marker and h["kind"] == "apply")
        if 200 in results[marker]:
            assert any(item in a["items"] for a in final.values())
    # each answer's version counts every change acknowledged on it, whoever made it
    assert sum(a["version"] for a in final.values()) == results["Anna"].count(200) + results["Boris"].count(200)


def test_two_markers_racing_on_one_answer_one_wins_the_other_is_told(running):
    ref, version = non_blank_ref(running)
    statuses = []
    start = threading.Barrier(8)

    def race(n):
        start.wait()
        body = {"question": QUESTION, "targets": [{"ref": ref, "version": version}], "add": [ITEM], "comment": f"from {n}"}
        statuses.append((n, call(running, "POST", "/api/apply", body, marker=f"M{n % 2}")[0]))

    threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(s for _, s in statuses) == [200] + [409] * 7
    winner = next(n for n, s in statuses if s == 200)
    assert refs(running)[ref]["comment"] == f"from {winner}" and refs(running)[ref]["version"] == version + 1


# ------------------------------------------------------------------ the process
def _spawn(book: Path, *args: str) -> subprocess.Popen:
    code = (
        "import sys; from pathlib import Path; from autograder.marking import server; "
        "sys.exit(server.serve(Path(sys.argv[1]), lang=sys.argv[2], names=len(sys.argv) > 3))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", code, str(book), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _url(process: subprocess.Popen) -> str:
    line = process.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+", line)
    assert found, line
    return found.group()


class Remote:
    """A server in another process, as ``call`` addresses it."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.port = parts.port
        self.token = urllib.parse.parse_qs(parts.query)["token"][0]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_serve_prints_its_url_in_the_language_and_stops_on_ctrl_c(book, lang):
    process = _spawn(book, lang)
    try:
        first = process.stdout.readline()
        assert ("open" in first) if lang == "en" else ("откройте" in first)
        remote = Remote(re.search(r"http://\S+", first).group())
        assert call(remote, "GET", "/api/state")[0] == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0 and ("stopped" in out if lang == "en" else "остановлена" in out)
        assert "Traceback" not in err
    finally:
        process.kill()


def test_serve_refuses_a_folder_that_is_no_gradebook_in_one_line(tmp_path, capsys):
    assert server.serve(tmp_path / "nothing") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot start" in err
    assert server.serve(tmp_path / "nothing", lang="ru") == 2 and "не удалось" in capsys.readouterr().err


def test_a_server_killed_mid_write_loses_no_acknowledged_mark(book):
    process = _spawn(book, "en", "names")
    acknowledged: dict[str, int] = {}  # student: the version the server acknowledged
    try:
        remote = Remote(_url(process))
        stop = threading.Event()

        def hammer():
            while not stop.is_set():
                try:
                    answers = json.loads(call(remote, "GET", f"/api/question?id={QUESTION}")[2])["answers"]
                    for ref, answer in answers.items():
                        if answer["blank"]:
                            continue
                        body = {"question": QUESTION, "targets": [{"ref": ref, "version": answer["version"]}]}
                        body["remove" if answer["items"] else "add"] = [ITEM]
                        status, _, data = call(remote, "POST", "/api/apply", body)
                        if status == 200:
                            acknowledged[answer["name"]] = json.loads(data)["versions"][ref]
                except (OSError, http.client.HTTPException, ValueError):
                    return

        worker = threading.Thread(target=hammer)
        worker.start()
        time.sleep(1.0)
        process.send_signal(signal.SIGKILL)  # mid-write: the worker is posting as fast as it can
        process.wait(10)
        stop.set()
        worker.join(20)
    finally:
        process.kill()
    assert acknowledged, "no action was acknowledged before the kill"
    with store.MarkingStore(book, "inspector") as kept:  # the store opens again, whole
        for student, version in acknowledged.items():
            decision, stored = kept.decision(student, QUESTION)
            assert stored >= version  # at most one action in flight may have landed unacknowledged
            assert (decision is not None and ITEM in decision.items) == (stored % 2 == 1)
    with server.MarkingServer(book) as again:
        assert call(again, "GET", "/api/state")[0] == 200


# ------------------------------------------------------------------ the page's own texts and script
def test_every_label_exists_in_both_languages_and_the_page_uses_no_other():
    en, ru = api.LABELS["en"], api.LABELS["ru"]
    assert en.keys() == ru.keys() and all(text.strip() for table in (en, ru) for text in table.values())
    for key in en:
        assert set(re.findall(r"{(\w+)}", en[key])) == set(re.findall(r"{(\w+)}", ru[key])), key
    script = (server.PAGE_DIR / "app.js").read_text(encoding="utf-8")
    used = {name for call in re.findall(r"\bt\(([^()]*)", script) for name in re.findall(r'"([a-z_]+)"', call)}
    used |= {f"kind_{kind}" for kind in ("blank", "identical", "similar", "single")}  # t("kind_" + group.kind)
    assert used - {"kind_"} <= en.keys() and len(used) > 40
    for table in (server.REFUSALS, api.MESSAGES):
        assert all(len(pair) == 2 and all(text.strip() for text in pair) for pair in table.values())
    assert server.TEXTS["en"].keys() == server.TEXTS["ru"].keys()


def test_the_script_never_turns_data_into_markup_or_code():
    script = "\n".join(line for line in (server.PAGE_DIR / "app.js").read_text(encoding="utf-8").splitlines() if not line.startswith("//"))
    for forbidden in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", 'setTimeout("', "href"]:
        assert forbidden not in script, forbidden
    assert "textContent" in script or "createTextNode" in script
    assert not re.search(r"https?://", script + (server.PAGE_DIR / "app.css").read_text(encoding="utf-8"))  # no CDN, no remote URL
