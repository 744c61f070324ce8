"""Any OpenAI-compatible chat-completions server over the standard library's HTTP client (no SDK).

Works with OpenAI, vLLM, Ollama, llama.cpp server, LM Studio and the compatible endpoints of Gemini and
DashScope. Images go as base64 data URLs. JSON answers are requested with `response_format` (json_schema);
a server that rejects it is asked again without, and the answer is parsed and repaired by the caller.
"""

from __future__ import annotations

import base64
import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from rewardloop.models.base import (
    DEFAULT_BASE_URL,
    Completion,
    Image,
    Message,
    ModelError,
    ModelSpec,
    Text,
    TransientError,
    Usage,
    key_variables,
    read_key,
    scrub,
)


class OpenAIBackend:
    """Chat completions at `spec.base_url` (api.openai.com by default)."""

    accepts_video = False

    def __init__(self, spec: ModelSpec, *, timeout_s: float = 120.0):
        self.spec, self.timeout_s = spec, timeout_s
        self.name = spec.label
        self.url = (spec.base_url or DEFAULT_BASE_URL) + "/chat/completions"
        self.structured_output = True
        """Send response_format; switched off for a server that rejects it."""

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        key = read_key(self.spec, required=self.spec.base_url is None)
        body: dict[str, Any] = {"model": self.spec.model, "messages": [_message(m) for m in messages],
                                "temperature": temperature, "max_tokens": max_tokens}
        if schema is not None and self.structured_output:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "answer", "schema": schema}}
        try:
            return _completion(self._post(body, key))
        except _FormatRejected:
            self.structured_output = False
            body.pop("response_format")
            return _completion(self._post(body, key))

    def _post(self, body: dict[str, Any], key: str | None) -> dict[str, Any]:
        raw = self._send(json.dumps(body).encode(), key, structured="response_format" in body)
        try:
            answer = json.loads(raw)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            raise ModelError(f"{self.url} did not answer with JSON; is it an OpenAI-compatible server?") from None
        if not isinstance(answer, dict):
            raise ModelError(f"{self.url} did not answer with a JSON object; is it an OpenAI-compatible server?")
        return answer

    def _send(self, data: bytes, key: str | None, *, structured: bool) -> bytes:
        """POST `data` and return the answer's bytes; every failure becomes a one-line ModelError or TransientError
        that holds neither the key nor a traceback."""
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data, headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as error:
            raise self._http_error(error, key, structured) from None
        except (OSError, http.client.HTTPException) as error:
            raise self._network_error(error, key) from None
        except ValueError:  # http.client refuses a header value (a key with a line break) or the URL: the
            # exception text would hold the header, so it is not repeated
            raise ModelError(f"{self.name}: the request to {self.url} could not be sent (an invalid header or URL); "
                             f"check that {' or '.join(key_variables(self.spec))} holds only the key") from None

    def _network_error(self, error: OSError | http.client.HTTPException, key: str | None) -> ModelError:
        """Timeouts and connections dropped mid-answer are transient; an unreachable server is not."""
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        if isinstance(reason, TimeoutError):
            return TransientError(f"{self.name} timed out after {self.timeout_s:g} s")
        dropped = (isinstance(reason, (http.client.HTTPException, ConnectionError))
                   and not isinstance(reason, ConnectionRefusedError))
        if dropped:  # RemoteDisconnected, IncompleteRead, ConnectionResetError, BrokenPipeError
            return TransientError(f"{self.name}: {self.url} closed the connection before answering in full "
                                  f"({type(reason).__name__})")
        detail = reason if isinstance(reason, str) else f"{type(reason).__name__}: {reason}"
        return ModelError(f"cannot reach {self.url} ({scrub(str(detail), key)})")

    def _http_error(self, error: urllib.error.HTTPError, key: str | None, structured: bool) -> Exception:
        code = error.code
        detail = scrub(_read_detail(error), key)
        if code in (401, 403):
            return ModelError(f"{self.name} rejected the key (HTTP {code}); check "
                              f"{' or '.join(key_variables(self.spec))}")
        if code == 429 or code >= 500:
            retry_after = error.headers.get("Retry-After") if error.headers else None
            return TransientError(f"{self.name} answered HTTP {code}: {detail}",
                                  retry_after_s=_seconds(retry_after))
        if code == 400 and structured and "response_format" in detail:
            return _FormatRejected()
        if code == 404:
            return ModelError(f"{self.url} has no model {self.spec.model!r} or no chat endpoint (HTTP 404)")
        return ModelError(f"{self.name} answered HTTP {code}: {detail}")


class _FormatRejected(Exception):
    """The server does not take response_format."""


def _read_detail(error: urllib.error.HTTPError) -> str:
    try:
        data = json.loads(error.read() or b"{}")
    except (ValueError, OSError):
        return error.reason if isinstance(error.reason, str) else ""
    inner = data.get("error", data) if isinstance(data, dict) else data
    return str(inner.get("message", inner) if isinstance(inner, dict) else inner)


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
