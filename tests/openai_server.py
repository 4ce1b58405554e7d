"""A loopback HTTP server speaking the OpenAI chat-completions API, with scripted behaviours.

The only stand-in for an LLM endpoint in errdex's tests: a real ``ThreadingHTTPServer`` on
127.0.0.1 serving ``POST /v1/chat/completions`` and ``POST /chat/completions``. Each request is
recorded (:class:`Seen`) and answered by the server's *behaviour*, a function of the request:

    with OpenAIServer(sequence(status(500), good)) as server:
        ...  # point the writer at server.url
        assert server.max_in_flight == 1

A *conversation* is the system and first user message; ``Seen.attempt`` counts the requests of
one conversation (retries and the repair request included), so behaviours can script "fail the
first time, then answer" per record even when requests run concurrently.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 120
COMPLETION_TOKENS = 40
PATHS = ("/v1/chat/completions", "/chat/completions")
_FACTS = re.compile(r"## Facts[^\n]*\n(`{3,})json\n(.*?)\n\1", re.DOTALL)
_SITE_LINE = re.compile(r"^([a-z ]+): (.*)$", re.MULTILINE)


@dataclass
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    attempt: int
    received: float
    finished: float = 0.0

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def system(self) -> str:
        return self.messages[0]["content"]

    @property
    def prompt(self) -> str:
        return self.messages[1]["content"]

    @property
    def repair(self) -> bool:
        return len(self.messages) > 2

    @property
    def structured(self) -> bool:
        return "response_format" in self.body

    def facts(self) -> dict[str, Any]:
        match = _FACTS.search(self.prompt)
        return json.loads(match.group(2)) if match else {}

    def site(self) -> dict[str, str]:
        block = self.prompt.split("## Site\n", 1)[1].split("\n\n", 1)[0]
        return dict(_SITE_LINE.findall(block))


@dataclass
class Reply:
    """What the server does with one request."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False


Behaviour = Callable[[Seen], Reply]


def completion(content: str | None, *, usage: bool = True) -> dict[str, Any]:
    """An OpenAI chat-completion body with the given message content."""
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        body["usage"] = {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
        }
    return body


def narrative_from(seen: Seen) -> dict[str, Any]:
    """A valid answer built from the facts and site the request carried."""
    facts = seen.facts()
    site = seen.site()
    function = facts.get("function", "the function")
    subject = facts.get("subject", "the value")
    accepted = ", ".join(facts.get("acceptedValues", []))
    error_class = site.get("error class", "the error")
    return {
        "documentation": f"{function} raises {error_class} when {subject} is not one of "
        f"{accepted}.",
        "triggerScenarios": f"Calling {function} with {subject} outside {accepted}.",
        "commonSituations": f"A typo in {subject}.",
        "solutions": [f"Pass one of {accepted}."],
        "exampleFix": f"{function}({subject}={facts.get('acceptedValues', ['x'])[0]})",
        "validationCode": None,
        "typeGuard": None,
        "tryCatchPattern": f"try:\n    ...\nexcept {error_class}:\n    ...",
        "preventionTips": [f"Keep the accepted values of {subject} in one constant."],
    }


def good(seen: Seen) -> Reply:
    """Answer with a valid narrative built from the request's facts."""
    return Reply(body=completion(json.dumps(narrative_from(seen))))


def content(text: str | None) -> Behaviour:
    """Answer 200 with this message content (malformed JSON, a wrong shape …)."""
    return lambda seen: Reply(body=completion(text))


def status(code: int, message: str = "scripted error", *, retry_after: str | None = None):
    """Answer with an HTTP error (OpenAI's error shape), optionally with Retry-After."""

    def behaviour(seen: Seen) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        body = {"error": {"message": message, "type": "error", "code": code}}
        return Reply(status=code, body=body, headers=headers)

    return behaviour


def slow(seconds: float, then: Behaviour = good) -> Behaviour:
    """Wait before answering as ``then`` would."""

    def behaviour(seen: Seen) -> Reply:
        reply = then(seen)
        reply.delay = seconds
        return reply

    return behaviour


def drop(seen: Seen) -> Reply:
    """Close the connection without any response."""
    return Reply(drop=True)


def rejects_response_format(then: Behaviour = good) -> Behaviour:
    """Reject requests carrying response_format with a 400 (as some servers do)."""

    def behaviour(seen: Seen) -> Reply:
        if seen.structured:
            message = "1 validation error: response_format: json_schema is not supported"
            return status(400, message)(seen)
        return then(seen)

    return behaviour


def sequence(*behaviours: Behaviour) -> Behaviour:
    """The n-th request of a conversation gets the n-th behaviour (the last one repeats)."""
    return lambda seen: behaviours[min(seen.attempt, len(behaviours)) - 1](seen)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path not in PATHS:
            self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, {"error": {"message": "request body is not JSON"}}, {})
            return
        seen = owner._enter(self.path, dict(self.headers.items()), body)
        try:
            reply = owner.behaviour(seen)
            if reply.delay:
                owner._stopping.wait(reply.delay)
            if reply.drop:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self._send(reply.status, reply.body, reply.headers)
        except OSError:  # the client gave up (a timeout) and closed the connection
            self.close_connection = True
        finally:
            owner._leave(seen)

    def _send(self, code: int, body: Any, headers: dict[str, str]) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up is part of the scripts, not a test failure


class OpenAIServer:
    """The loopback server; a context manager that starts and stops it."""

    def __init__(self, behaviour: Behaviour = good) -> None:
        self.behaviour = behaviour
        self.requests: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = {}
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL to configure (``llm_base_url``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def answered(self) -> list[Seen]:
        """The requests that were not repairs (one per record and attempt)."""
        return [seen for seen in self.requests if not seen.repair]

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def _enter(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Seen:
        messages = body.get("messages", [])
        conversation = json.dumps(messages[:2], sort_keys=True)
        with self._lock:
            attempt = self._attempts[conversation] = self._attempts.get(conversation, 0) + 1
            seen = Seen(
                path=path,
                headers={name.lower(): value for name, value in headers.items()},
                body=body,
                attempt=attempt,
                received=time.monotonic(),
            )
            self.requests.append(seen)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return seen

    def _leave(self, seen: Seen) -> None:
        with self._lock:
            self.in_flight -= 1
            seen.finished = time.monotonic()
