"""The marking page, ``m5 review GRADEBOOK --serve``: the package's one local web application.

Why the standard library (:class:`http.server.ThreadingHTTPServer`) and not Flask: the page has
a dozen routes, and every rule that keeps it safe (the Host, the token, the Origin, the content
type, the body's size, the headers on every answer, the errors the HTTP parser itself sends)
reads top to bottom in this module instead of hiding in a framework's hooks and defaults; and a
tool a TA runs on a laptop gains no dependency.

Every request passes, in this order (the first that fails answers, nothing else runs):

1. **Host** is ``127.0.0.1:PORT`` or ``localhost:PORT``: a DNS-rebinding page reaches the port
   under its own name, and is refused (403).
2. **The token** (``secrets.token_urlsafe(32)``, printed in the URL, compared in constant time):
   from the query (``?token=``) for the page and its files, from the ``X-M5-Token`` header
   for the API. Not a cookie: a browser shares cookies between every port of 127.0.0.1 (two
   servers would overwrite each other's), and sends them with forged cross-site requests.
   No token, a wrong one: 403 and no data.
3. **A POST** (the only method that changes anything) carries an ``Origin`` that is the
   server's own when it carries one, ``Content-Type: application/json``, a ``Content-Length`` of
   at most :data:`MAX_BODY`, and a JSON object: a cross-site form post fails on the Origin, the
   content type and the missing header, and changes nothing.
4. **The path** is one of a fixed set of routes; the page's files are bytes read from the
   package when the server starts, so no path from a request reaches the file system (404).

Every answer carries the security headers (:data:`SECURITY_HEADERS`: a Content-Security-Policy
that allows only the page's own script and style); an error is ``{"error": "..."}`` with a 4xx
status; an unexpected exception is logged on the server's stderr and answered 500 without it.
The server listens on 127.0.0.1 only. The actions themselves are in :mod:`.api`.
"""

from __future__ import annotations

import hmac
import json
import secrets
import sys
import threading
import traceback
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from autograder.marking import api
from autograder.marking.model import MarkingError

HOST = "127.0.0.1"
MAX_BODY = 1024 * 1024
MAX_QUERY_FIELDS = 20
TOKEN_HEADER = "X-M5-Token"
MARKER_HEADER = "X-M5-Marker"  # the marker's name, percent-encoded (a header is latin-1)
LANG_HEADER = "X-M5-Lang"  # the page's language, for the messages
PAGE_DIR = Path(__file__).resolve().parent / "page"
STATIC_FILES = {
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
    "/static/favicon.svg": ("favicon.svg", "image/svg+xml"),  # named by the page, so the browser never asks /favicon.ico without the token
}
PAGE_ROUTES = {"/", "/index.html"}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the token is in the page's URL: never sent anywhere
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
REQUEST_TIMEOUT = 30  # seconds a connection may stay silent: a stalled client never holds a thread for long
TEXTS = {
    "en": {
        "open": "Marking page for {folder}: open {url}\n(anyone with this URL can mark; Ctrl-C stops the server)",
        "stopped": "Marking page stopped.",
        "cannot": "m5 review --serve: cannot start: {error}",
    },
    "ru": {
        "open": (
            "Страница проверки для {folder}: откройте {url}\n(проверять может любой, у кого есть эта ссылка; Ctrl-C останавливает сервер)"
        ),
        "stopped": "Страница проверки остановлена.",
        "cannot": "m5 review --serve: не удалось запустить: {error}",
    },
}


REFUSALS = {
    "host": ("refused: this server answers only at its own address", "отказ: сервер отвечает только по своему адресу"),
    "token": (
        "refused: the token is missing or wrong (open the URL the server printed)",
        "отказ: токена нет или он неверен (откройте ссылку, которую напечатал сервер)",
    ),
    "origin": ("refused: a request from another site", "отказ: запрос с другого сайта"),
    "json_type": ("refused: a change is posted as application/json", "отказ: изменение отправляется как application/json"),
    "length": ("refused: the body needs a Content-Length", "отказ: у тела запроса нужен Content-Length"),
    "too_big": (f"refused: the body is over {MAX_BODY} bytes", f"отказ: тело запроса больше {MAX_BODY} байт"),
    "json": ("refused: the body is not valid JSON", "отказ: тело запроса не является корректным JSON"),
    "object": ("refused: the body must be a JSON object", "отказ: тело запроса должно быть объектом JSON"),
    "no_name": (
        "name yourself first: the page sends your name with each action",
        "сначала назовите себя: страница отправляет ваше имя с каждым действием",
    ),
    "name_utf8": ("the marker's name is not UTF-8", "имя проверяющего не в UTF-8"),
    "method": ("refused: only GET and POST are answered", "отказ: сервер отвечает только на GET и POST"),
    "not_found": ("not found", "не найдено"),
    "query": ("refused: a query that cannot be read", "отказ: строку запроса невозможно прочесть"),
    "failed": (
        "the server failed on this request (its terminal shows why); nothing was changed",
        "сервер не смог выполнить запрос (причина в его терминале); ничего не изменено",
    ),
}


class Refused(Exception):
    """A request answered with a 4xx and ``{"error": message}`` (:data:`REFUSALS`); nothing changed."""

    def __init__(self, status: int, key: str):
        super().__init__(REFUSALS[key][0])
        self.status = status
        self.text = dict(zip(api.LANGS, REFUSALS[key]))


def load_static() -> dict[str, tuple[bytes, str]]:
    """The page's files by route, read once: the only bytes the server sends from disk."""
    return {route: ((PAGE_DIR / name).read_bytes(), kind) for route, (name, kind) in STATIC_FILES.items()}


def page_html(token: str, lang: str) -> bytes:
    """The page's HTML: no inline script or style (the CSP forbids them); its files carry the token in their URLs."""
    # the token is URL-safe base64 ([A-Za-z0-9_-]), so it needs no escaping inside an attribute
    return (
        "<!doctype html>\n"
        f'<html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>m5 review</title>"
        f'<link rel="icon" href="/static/favicon.svg?token={token}">'
        f'<link rel="stylesheet" href="/static/app.css?token={token}">'
        f'<script src="/static/app.js?token={token}" defer></script>'
        '</head><body><main id="app"></main></body></html>\n'
    ).encode("utf-8")


def parse_target(target: str) -> tuple[urllib.parse.SplitResult, dict[str, list[str]]]:
    """A request's path and query; Refused (400) for one that cannot be read (or has too many fields)."""
    try:
        split = urllib.parse.urlsplit(target)
        return split, urllib.parse.parse_qs(split.query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError:
        raise Refused(400, "query") from None


def same_token(given: str | None, token: str) -> bool:
    """The request's token is the server's (constant time, so timing says nothing of it)."""
    return given is not None and hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("ascii"))


def allowed_hosts(port: int) -> set[str]:
    """The Host headers this server answers: its own address, by number or as localhost."""
    return {f"{HOST}:{port}", f"localhost:{port}"}


def marker_name(header: str | None) -> str:
    """The marker's name from its header (percent-encoded UTF-8); Refused when missing or unreadable."""
    if not header:
        raise Refused(400, "no_name")
    try:
        name = urllib.parse.unquote(header, errors="strict")
    except UnicodeDecodeError:
        raise Refused(400, "name_utf8") from None
    return api.check_marker(name)


def read_json(body: bytes) -> dict:
    """A request body as a JSON object; Refused for anything else (NaN and Infinity included)."""

    def refuse_constant(name):
        raise ValueError(f"{name} is not JSON")

    try:
        data = json.loads(body.decode("utf-8"), parse_constant=refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Refused(400, "json") from None
    if not isinstance(data, dict):
        raise Refused(400, "object")
    return data


class Handler(BaseHTTPRequestHandler):
    """One request: the checks of the module's docstring, then a route."""

    protocol_version = "HTTP/1.1"
    server_version = "m5"
    sys_version = ""
    timeout = REQUEST_TIMEOUT
    server: MarkingHTTPServer

    # ------------------------------------------------------------ answers
    def reply(self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        """Send one answer with the security headers; an error closes the connection (its body may be unread)."""
        if status >= 400:
            self.close_connection = True
        self.send_response(status)
        for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, status: int, data) -> None:
        # ensure_ascii: lone surrogates and controls in student text travel as \u escapes JSON.parse reads
        self.reply(status, json.dumps(data, ensure_ascii=True, sort_keys=True).encode("ascii"), "application/json")

    def send_error(self, code, message=None, explain=None):
        """The HTTP parser's own errors (a bad request line, headers too long) also as JSON with the headers."""
        if not str(getattr(self, "request_version", "")).startswith("HTTP/1."):
            self.request_version = "HTTP/1.0"  # an unreadable request line still gets a status line and the headers
        self.reply_json(int(code), {"error": message or HTTPStatus(int(code)).phrase})

    def log_message(self, format, *args):
        """No access log: request lines carry the token."""

    # ------------------------------------------------------------ methods
    def do_GET(self):
        self.handle_request(self.answer_get)

    def do_POST(self):
        self.handle_request(self.answer_post)

    def refuse_method(self):
        self.handle_request(self.method_not_allowed)

    do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = refuse_method

    def method_not_allowed(self, path, query):
        raise Refused(405, "method")

    def handle_request(self, answer) -> None:
        """Run the checks and ``answer``; every outcome is one JSON or page answer, never a traceback."""
        try:
            self.check_host()
            split, query = parse_target(self.path)
            self.check_token(split.path, query)
            answer(split.path, query)
        except Refused as refused:
            self.reply_json(refused.status, {"error": api.message(refused, self.lang())})
        except api.Conflict as conflict:
            self.reply_json(409, {"error": api.message(conflict, self.lang()), "conflict": conflict.refs})
        except MarkingError as exc:
            self.reply_json(400, {"error": api.message(exc, self.lang())})
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception:  # noqa: BLE001 - the client gets one line; the server's stderr gets the traceback
            traceback.print_exc(file=sys.stderr)
            self.reply_json(500, {"error": api.message(Refused(500, "failed"), self.lang())})

    def lang(self) -> str:
        """The language of the page that asks (its ``X-M5-Lang`` header), else the server's."""
        headers = getattr(self, "headers", None)  # absent when the request line itself was malformed
        asked = headers.get(LANG_HEADER) if headers else None
        return asked if asked in api.LANGS else self.server.lang

    # ------------------------------------------------------------ checks
    def check_host(self) -> None:
        if (self.headers.get("Host") or "").lower() not in allowed_hosts(self.server.port):
            raise Refused(403, "host")

    def check_token(self, path: str, query: dict[str, list[str]]) -> None:
        """The API takes the token from its header only; the page and its files from the query."""
        given = self.headers.get(TOKEN_HEADER) if path.startswith("/api/") else (query.get("token") or [None])[0]
        if not same_token(given, self.server.token):
            raise Refused(403, "token")

    def check_post(self) -> dict:
        """Origin, content type and length of a POST; its body as a JSON object."""
        origin = self.headers.get("Origin")
        if origin is not None and origin.lower() not in {f"http://{h}" for h in allowed_hosts(self.server.port)}:
            raise Refused(403, "origin")
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            raise Refused(403, "origin")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Refused(415, "json_type")
        if self.headers.get("Transfer-Encoding"):
            raise Refused(411, "length")
        length = self.headers.get("Content-Length") or ""
        if not length.isdigit() or not length.isascii():
            raise Refused(411, "length")
        if int(length) > MAX_BODY:
            raise Refused(413, "too_big")
        return read_json(self.rfile.read(int(length)))

    # ------------------------------------------------------------ routes
    def answer_get(self, path: str, query: dict[str, list[str]]) -> None:
        if path in PAGE_ROUTES:
            lang = (query.get("lang") or [self.server.lang])[0]
            self.reply(200, page_html(self.server.token, lang if lang in api.LANGS else self.server.lang), "text/html; charset=utf-8")
        elif path in self.server.static:
            body, kind = self.server.static[path]
            self.reply(200, body, kind)
        elif path in api.GET_ROUTES:
            params = {name: values[0] for name, values in query.items()}
            marker = None if path in api.ANONYMOUS_ROUTES else marker_name(self.headers.get(MARKER_HEADER))
            self.reply_json(200, self.server.app.get(path, params, marker))
        else:
            raise Refused(404, "not_found")

    def answer_post(self, path: str, query: dict[str, list[str]]) -> None:
        if path not in api.POST_ROUTES:
            raise Refused(404 if path not in api.GET_ROUTES else 405, "not_found")
        body = self.check_post()
        self.reply_json(200, self.server.app.post(path, body, marker_name(self.headers.get(MARKER_HEADER))))


class MarkingHTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a browser's idle keep-alive connection never holds the server open
    app: api.MarkingApp
    token: str
    lang: str
    static: dict[str, tuple[bytes, str]]

    @property
    def port(self) -> int:
        return self.server_address[1]


class MarkingServer:
    """The marking page over the gradebook in ``folder``, listening on 127.0.0.1:``port`` (0: any free port).

    ``start()`` serves in a thread (for tests), ``serve_forever()`` in the caller's; ``stop()`` ends both.
    ``names``: show the students' ids instead of pseudonyms; ``pseudonyms``: {student: "Student 017"}
    (default: numbers drawn at random when the server starts)."""

    def __init__(
        self,
        folder: Path,
        *,
        port: int = 0,
        names: bool = False,
        lang: str = "en",
        pseudonyms: dict[str, str] | None = None,
        token: str | None = None,
    ):
        if lang not in api.LANGS:
            raise MarkingError(f"language {lang!r}: one of {', '.join(api.LANGS)}")
        self.app = api.MarkingApp(Path(folder), names=names, pseudonyms=pseudonyms)
        self.token = token or secrets.token_urlsafe(32)
        self.httpd = MarkingHTTPServer((HOST, port), Handler, bind_and_activate=True)
        self.httpd.app, self.httpd.token, self.httpd.lang = self.app, self.token, lang
        self.httpd.static = load_static()
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def start(self) -> MarkingServer:
        # a short poll: stop() returns within 50 ms instead of the default half second
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="m5-marking", daemon=True)
        self.thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        """Stop listening; the stores' connections are closed (every action is already committed)."""
        if self.thread is not None:
            self.httpd.shutdown()
            self.thread.join()
            self.thread = None
        self.httpd.server_close()
        self.app.close()

    def __enter__(self) -> MarkingServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve(folder: Path, *, port: int = 0, names: bool = False, lang: str = "en", pseudonyms: dict[str, str] | None = None) -> int:
    """Serve the marking page until Ctrl-C, printing its URL with the token; 0 when stopped, 2 when it cannot start."""
    texts = TEXTS.get(lang, TEXTS["en"])
    try:
        server = MarkingServer(folder, port=port, names=names, lang=lang, pseudonyms=pseudonyms)
    except (MarkingError, OSError) as exc:
        print(texts["cannot"].format(error=exc), file=sys.stderr)
        return 2
    try:  # Ctrl-C as soon as the URL shows is a stop like any other, not a traceback
        print(texts["open"].format(folder=folder, url=server.url), flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print(texts["stopped"], flush=True)
    return 0
