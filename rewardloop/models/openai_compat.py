"""Any OpenAI-compatible chat-completions server over the standard library's HTTP client (no SDK).

Works with OpenAI, vLLM, Ollama, llama.cpp server, LM Studio and the compatible endpoints of Gemini and
DashScope. Images go as base64 data URLs. JSON answers are requested with `response_format` (json_schema);
a server that rejects it is asked again without, and the answer is parsed and repaired by the caller.

Answers are streamed (server-sent events, `stream: true`), so a slow server is told apart from a dead one:
the first token may take `Timeouts.first_token` (long for a local server, which may read a long prompt on a
CPU for minutes), and once tokens flow a silence longer than `Timeouts.silence_s` ends the call. A server that
answers without streaming is read as one JSON answer. The server's context size is asked once (see
`rewardloop.models.context`), so callers can fit their prompts and `max_tokens` to it; a local server that reports
none (llama-cpp-python's server, LM Studio) is taken to have ASSUMED_CONTEXT tokens unless the user passed
--context, and a note says so once.

A stream that ends without its final event (a finish_reason or `data: [DONE]`) after the server took the request
is, from a local server, most likely a prompt that overflowed a context it does not report: llama-cpp-python's
server raises "Requested tokens (N) exceed context window of M" after its 200 and closes the stream. That is an
`EndedEarly` (not retried as it was sent; `complete_fitted` asks once more with a shorter prompt and fewer answer
tokens); from a remote server it is a dropped connection, retried.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from rewardloop.models.base import (
    DEFAULT_BASE_URL,
    Completion,
    ContextExceeded,
    EndedEarly,
    Image,
    Message,
    ModelError,
    ModelSpec,
    NoteCallback,
    StreamCallback,
    StreamProgress,
    Text,
    Timeouts,
    TransientError,
    Usage,
    is_local_url,
    key_variables,
    read_key,
    scrub,
)
from rewardloop.models.context import (
    context_refusal,
    listed_context,
    llama_cpp_context,
    ollama_context,
    request_tokens,
)

DISCOVERY_TIMEOUT_S = 5.0
"""Seconds each question about the server's context may take."""
PROGRESS_EVERY_S = 1.0
"""Seconds between stream progress reports."""
ASSUMED_CONTEXT = 4096
"""The context (tokens) taken for a local server that reports none, without --context: what small local servers
are commonly started with (llama-cpp-python's server defaults to 2048, Ollama serves 4096). Assuming more sends
prompts such a server cuts off after its 200; assuming this much of a larger server only shortens the prompts."""


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Delta fields in which reasoning models (DeepSeek-R1, Qwen3 on llama.cpp/vLLM, ...) stream their thinking: tokens
that end the first-token wait and keep the stream from counting as silent, but are not part of the answer."""

class OpenAIBackend:
    """Chat completions at `spec.base_url` (api.openai.com by default)."""

    accepts_video = False

    def __init__(self, spec: ModelSpec, *, timeouts: Timeouts | None = None, context_tokens: int | None = None,
                 on_stream: StreamCallback | None = None, on_note: NoteCallback | None = None):
        self.spec, self.timeouts, self.on_stream, self.on_note = spec, timeouts or Timeouts(), on_stream, on_note
        self.name = spec.label
        self.root = spec.base_url or DEFAULT_BASE_URL
        self.url = self.root + "/chat/completions"
        self.local = is_local_url(self.url)
        self.fallback_context = context_tokens
        """The context to assume when the server reports none (the user's --context)."""
        self._context: int | None = None
        self._asked = False
        self._assumed = False
        self.refused_fields: set[str] = set()
        """Request fields this server rejected (response_format, stream_options); not sent again."""

    # ---- the context -------------------------------------------------------------------------------------

    def context_tokens(self) -> int | None:
        """The server's context (tokens), asked once; the fallback (--context) when it reports none, else the
        length the model was trained for where the server says it, else ASSUMED_CONTEXT for a local server;
        None for a remote one (api.openai.com and hosted endpoints: their contexts dwarf these prompts)."""
        if not self._asked:
            self._asked = True
            served, trained = self._discover() if self.spec.base_url else (None, None)
            self._context = served or self.fallback_context or trained or self._assume()
        return self._context

    def context_assumed(self) -> bool:
        """Whether `context_tokens()` is ASSUMED_CONTEXT for a local server that reports no context."""
        self.context_tokens()
        return self._assumed

    def _assume(self) -> int | None:
        """ASSUMED_CONTEXT for a local server (said once through `on_note`), None for a remote one."""
        if not self.local:
            return None
        self._assumed = True
        if self.on_note is not None:
            self.on_note(f"{self.name} at {self.root} reports no context size; assuming {ASSUMED_CONTEXT} tokens "
                         f"(pass --context with its real size)")
        return ASSUMED_CONTEXT

    def _discover(self) -> tuple[int | None, int | None]:
        """(served context, training context) from llama.cpp's /props, /v1/models or Ollama's /api/show."""
        key = read_key(self.spec, required=False)
        server_root = self.root.removesuffix("/v1")
        served = llama_cpp_context(self._get_json(server_root + "/props", key))
        listed, trained = listed_context(self._get_json(self.root + "/models", key), self.spec.model)
        served = served or listed
        if served is None:
            show = {"model": self.spec.model, "name": self.spec.model}
            served = ollama_context(self._get_json(server_root + "/api/show", key, body=show))
        return served, trained

    def _get_json(self, url: str, key: str | None, *, body: dict[str, Any] | None = None) -> Any:
        """The JSON answer of a GET (or a POST of `body`), None on any failure: these questions are optional."""
        try:
            connection, target = _connect(url, DISCOVERY_TIMEOUT_S)
            with _closing(connection):
                data = None if body is None else json.dumps(body).encode()
                connection.request("GET" if body is None else "POST", target, data, _headers(key))
                response = connection.getresponse()
                return json.loads(response.read()) if response.status == 200 else None
        except (OSError, http.client.HTTPException, ValueError):
            return None

    # ---- a call ------------------------------------------------------------------------------------------

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        key = read_key(self.spec, required=self.spec.base_url is None)
        body: dict[str, Any] = {"model": self.spec.model, "messages": [_message(m) for m in messages],
                                "temperature": temperature, "max_tokens": max_tokens, "stream": True,
                                "stream_options": {"include_usage": True}}
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        needed = request_tokens(messages, max_tokens)
        while True:  # ends: each rejection names a field still sent, which is then dropped
            body = {name: value for name, value in body.items() if name not in self.refused_fields}
            try:
                return self._post(body, key, needed=needed)
            except _FieldRejected as rejected:
                self.refused_fields.add(rejected.field)

    def _post(self, body: dict[str, Any], key: str | None, *, needed: int = 0) -> Completion:
        """POST the request and read the answer, streamed or not; every failure becomes a one-line ModelError or
        TransientError that holds neither the key nor a traceback. `needed`: the context the request takes
        (tokens, estimated), named when a local server ends its answer early."""
        started = time.monotonic()
        stream = _Stream(self, started)
        try:
            connection, target = _connect(self.url, self.timeouts.first_token(local=self.local))
            with _closing(connection):
                self._send(connection, target, json.dumps(body).encode(), key)
                sock = connection.sock  # getresponse() hands it to the response when the server closes after it
                response = connection.getresponse()
                if response.status >= 400:
                    raise self._http_error(response, key, set(body))
                if "text/event-stream" in response.getheader("Content-Type", ""):
                    return self._streamed(stream, response, sock, int(body.get("max_tokens", 0)), needed)
                return _completion(self._json(response.read()))
        except TimeoutError:
            raise stream.timeout() from None
        except (OSError, http.client.HTTPException) as error:
            raise self._network_error(error, key) from None

    def _streamed(self, stream: _Stream, response: http.client.HTTPResponse, sock: socket.socket | None,
                  max_tokens: int, needed: int) -> Completion:
        """The streamed answer; from a local server, an EndedEarly when the stream ends without its final event
        (a remote server's dropped connection goes on to `_network_error`, and is retried)."""
        try:
            return stream.read(response, sock)
        except (http.client.HTTPException, ConnectionError):
            if not self.local:
                raise
            raise EndedEarly(f"{self.name}: the server ended its answer early (after {stream.tokens} tokens); if it "
                             f"is a local server, its context may be smaller than {needed} tokens (start it with a "
                             f"larger one or pass --context)", max_tokens=max_tokens) from None

    def _send(self, connection: http.client.HTTPConnection, target: str, data: bytes, key: str | None) -> None:
        try:
            connection.request("POST", target, data, _headers(key))
        except ValueError:  # http.client refuses a header value (a key with a line break) or the URL: the
            # exception text would hold the header, so it is not repeated
            raise ModelError(f"{self.name}: the request to {self.url} could not be sent (an invalid header or URL); "
                             f"check that {' or '.join(key_variables(self.spec))} holds only the key") from None

    def _json(self, raw: bytes) -> dict[str, Any]:
        try:
            answer = json.loads(raw)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            raise ModelError(f"{self.url} did not answer with JSON; is it an OpenAI-compatible server?") from None
        if not isinstance(answer, dict):
            raise ModelError(f"{self.url} did not answer with a JSON object; is it an OpenAI-compatible server?")
        return answer

    def _network_error(self, error: OSError | http.client.HTTPException, key: str | None) -> ModelError:
        """Connections dropped mid-answer are transient; an unreachable server is not."""
        dropped = isinstance(error, (http.client.HTTPException, ConnectionError)) and not isinstance(
            error, ConnectionRefusedError)
        if dropped:  # RemoteDisconnected, IncompleteRead, ConnectionResetError, BrokenPipeError
            return TransientError(f"{self.name}: {self.url} closed the connection before answering in full "
                                  f"({type(error).__name__})")
        return ModelError(f"cannot reach {self.url} ({scrub(f'{type(error).__name__}: {error}', key)})")

    def _http_error(self, response: http.client.HTTPResponse, key: str | None, sent: set[str]) -> Exception:
        """The error for an HTTP error answer; `sent` names the request's fields."""
        code, raw = response.status, _read_quietly(response)
        payload, detail = _detail(raw)
        detail = scrub(detail or response.reason or "", key)
        if code in (401, 403):
            return ModelError(f"{self.name} rejected the key (HTTP {code}); check "
                              f"{' or '.join(key_variables(self.spec))}")
        if code == 429 or code >= 500:
            return TransientError(f"{self.name} answered HTTP {code}: {detail}",
                                  retry_after_s=_seconds(response.getheader("Retry-After")))
        refusal = context_refusal(detail, payload) if code in (400, 413) else None
        if refusal is not None:
            self._context, self._asked, self._assumed = refusal[0], True, False  # the server's word beats any guess
            return ContextExceeded(f"{self.name} answered HTTP {code}: {detail}", context_tokens=refusal[0],
                                   prompt_tokens=refusal[1])
        for field in ("response_format", "stream_options"):
            if code == 400 and field in detail and field in sent:
                return _FieldRejected(field)
        if code == 404:
            return ModelError(f"{self.url} has no model {self.spec.model!r} or no chat endpoint (HTTP 404)")
        return ModelError(f"{self.name} answered HTTP {code}: {detail}")


class _Stream:
    """Reads one streamed answer (server-sent events) with the first-token and silence limits."""

    def __init__(self, backend: OpenAIBackend, started: float):
        self.backend, self.started = backend, started
        self.first: float | None = None
        """Seconds to the first token."""
        self.tokens, self.reported = 0, 0.0
        self.text: list[str] = []
        self.finish: str | None = None
        self.usage: Any = None
        self.done = False
        """Whether `data: [DONE]` came."""

    def read(self, response: http.client.HTTPResponse, sock: socket.socket | None) -> Completion:
        """The whole answer read from `response` on `sock`; TimeoutError (turned into `timeout()`) when a limit
        passes."""
        while True:
            self._arm(sock)
            line = response.readline()
            if not line:
                break
            data = line.strip()
            if not data.startswith(b"data:"):
                continue  # blank separators, comments (': ping'), 'event:' lines
            data = data[5:].strip()
            if data == b"[DONE]":
                self.done = True
                break
            self._chunk(self.backend._json(data))
        if self.finish is None and not self.done:
            raise http.client.IncompleteRead(b"")  # closed before its final event: a cut answer
        self._report(force=True)
        return Completion(text="".join(self.text), finish_reason=self.finish or "stop",
                          usage=Usage(_tokens(self.usage, "prompt_tokens"), _tokens(self.usage, "completion_tokens")))

    def _arm(self, sock: socket.socket | None) -> None:
        """Set the socket's timeout to what is left of the current limit."""
        if self.first is None:
            limit = self.backend.timeouts.first_token(local=self.backend.local) - (time.monotonic() - self.started)
        else:
            limit = self.backend.timeouts.silence_s
        if limit <= 0:
            raise TimeoutError
        if sock is not None:
            sock.settimeout(limit)

    def _chunk(self, chunk: dict[str, Any]) -> None:
        if "error" in chunk:
            _, detail = _detail(json.dumps(chunk).encode())
            raise ModelError(f"{self.backend.name} reported an error mid-answer: {scrub(detail, None)}")
        self.usage = chunk.get("usage") or self.usage
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        delta = choice.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
        thinking = any(isinstance(delta.get(k), str) and delta[k] for k in REASONING_FIELDS)
        if (isinstance(content, str) and content) or thinking:  # a reasoning model's thoughts are tokens too
            self.tokens += 1
            if self.first is None:
                self.first = time.monotonic() - self.started
        reason = choice.get("finish_reason")
        self.finish = reason if isinstance(reason, str) and reason else self.finish
        self._report()

    def _report(self, *, force: bool = False) -> None:
        callback, now = self.backend.on_stream, time.monotonic() - self.started
        if callback is None or self.first is None or (not force and now - self.reported < PROGRESS_EVERY_S):
            return
        self.reported = now
        callback(StreamProgress(self.backend.name, now, self.tokens, self.first, done=force))

    def timeout(self) -> ModelError:
        """The error for a limit that passed: silence once tokens flowed (retried), or no first token (retried
        for a remote server; final for a local one, which would only read the same prompt again)."""
        backend = self.backend
        if self.first is not None:
            return TransientError(f"{backend.name} went silent for {backend.timeouts.silence_s:g} s mid-answer "
                                  f"(after {self.tokens} tokens)")
        limit = backend.timeouts.first_token(local=backend.local)
        if not backend.local:
            return TransientError(f"{backend.name} timed out after {limit:g} s waiting for the first token")
        return ModelError(f"{backend.name} sent no token within {limit:g} s; a local server may still be reading "
                          f"the prompt: allow it longer (--model-timeout), use shorter prompts (--compact-prompts) "
                          f"or a faster model")


class _FieldRejected(Exception):
    """The server does not take this request field."""

    def __init__(self, field: str):
        super().__init__(field)
        self.field = field


def _connect(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    """A connection for `url` (through the environment's HTTP(S)_PROXY unless NO_PROXY exempts the host) and the
    request target to send on it."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "", parts.port
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if parts.scheme == "https":
            tunnel = http.client.HTTPSConnection(via.hostname or "", via.port, timeout=timeout)
            tunnel.set_tunnel(host, port)
            return tunnel, target
        return http.client.HTTPConnection(via.hostname or "", via.port, timeout=timeout), url
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(host, port, timeout=timeout), target


class _closing:
    """Close a connection on leaving (http.client connections are no context managers)."""

    def __init__(self, connection: http.client.HTTPConnection):
        self.connection = connection

    def __enter__(self) -> http.client.HTTPConnection:
        return self.connection

    def __exit__(self, *exc: object) -> None:
        self.connection.close()


def _headers(key: str | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream, application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _read_quietly(response: http.client.HTTPResponse) -> bytes:
    try:
        return response.read()
    except (OSError, http.client.HTTPException):
        return b""


def _detail(raw: bytes) -> tuple[Any, str]:
    """(parsed JSON or None, the error's message) of an error answer."""
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return None, raw.decode(errors="replace")
    inner = data.get("error", data) if isinstance(data, dict) else data
    return data, str(inner.get("message", inner) if isinstance(inner, dict) else inner)


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _message(message: Message) -> dict[str, Any]:
    if all(isinstance(p, Text) for p in message.parts):
        return {"role": message.role, "content": message.text}
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, Text):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, Image):
            if part.caption:
                content.append({"type": "text", "text": part.caption})
            url = "data:image/png;base64," + base64.b64encode(part.png).decode()
            content.append({"type": "image_url", "image_url": {"url": url}})
        else:
            raise ModelError("the openai backend takes no video; send keyframe images instead")
    return {"role": message.role, "content": content}


def _completion(data: dict[str, Any]) -> Completion:
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError("the server's answer has no choices[0].message; is it an OpenAI-compatible server?") from None
    usage = data.get("usage")
    reason = choice.get("finish_reason")
    return Completion(text=text if isinstance(text, str) else str(text),
                      usage=Usage(_tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens")),
                      finish_reason=reason if isinstance(reason, str) and reason else "stop")


def _tokens(usage: Any, field: str) -> int:
    """A token count from the answer's `usage`; 0 when missing, negative or not a number (servers differ)."""
    value = usage.get(field) if isinstance(usage, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return 0
    try:
        return max(int(float(value)), 0)
    except (ValueError, OverflowError):
        return 0
