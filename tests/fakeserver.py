"""A scripted OpenAI-compatible chat server on 127.0.0.1, for the tests of the model plumbing.

It answers POST /v1/chat/completions from a script of `Reply`s (or a function of the request), records every
request it received, and runs in a background thread. No network beyond the loopback interface.

Like a local llama.cpp, vLLM or Ollama server it can also:
- stream the answer as server-sent events when the request asks (`stream: true`), token by token, slowly
  (`Reply.delay_s` before the first token, `token_delay_s` between tokens) or going silent mid-answer
  (`stall_after`, `stall_s`);
- report a context size (`context`) where its kind does: llama.cpp GET /props, vLLM GET /v1/models, Ollama
  POST /api/show (Ollama's default 4096-token context unless `ollama_num_ctx` is set), unless `reports` is off;
  llama-cpp-python's server (kind "llama-cpp-python") lists its model at GET /v1/models with no context at all;
- refuse a request longer than that context with the server's own HTTP 400 message, counting tokens its own
  way (`count_tokens`: words and punctuation marks, which is not how the client estimates them); except
  llama-cpp-python's server, which takes a streamed request (HTTP 200) and then ends the stream without a word
  (it raises "Requested tokens (N) exceed context window of M" after its 200);
- cut a streamed answer after its 200 (`Reply.cut_after`): some tokens, then the connection closes without the
  final event (no finish_reason, no `data: [DONE]`), as a server that crashes mid-answer does.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None
    """JSON-able body, or a str sent as is."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Wait before answering, or before the first streamed token (to provoke client timeouts)."""
    drop: bool = False
    """Close the connection without answering (the client sees http.client.RemoteDisconnected)."""
    stream: bool = True
    """Stream a chat answer as server-sent events when the request asks for it."""
    token_delay_s: float = 0.0
    """Wait between streamed tokens."""
    stall_after: int | None = None
    """Go silent after this many streamed tokens ..."""
    stall_s: float = 0.0
    """... for this long, then close the connection."""
    thinking: tuple[str, ...] = ()
    """Pieces streamed as `reasoning_content` before the answer (a reasoning model's thoughts), token_delay_s apart."""
    cut_after: int | None = None
    """Close the stream after this many tokens, without the final event (a server that fails mid-answer)."""


def chat_reply(text: str, *, finish_reason: str = "stop", prompt_tokens: int = 100, completion_tokens: int = 20,
               model: str = "scripted", **options: Any) -> Reply:
    """A successful chat-completions answer carrying `text` (options: Reply's timing fields)."""
    return Reply(body={"id": "chatcmpl-test", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "finish_reason": finish_reason,
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                 "total_tokens": prompt_tokens + completion_tokens}}, **options)


def error_reply(status: int, message: str, **headers: str) -> Reply:
    """An OpenAI-style error answer."""
    return Reply(status=status, body={"error": {"message": message, "type": "error", "code": status}},
                 headers=headers)


Responder = Callable[[dict[str, Any]], Reply]
Kind = Literal["llama.cpp", "llama-cpp-python", "vllm", "ollama", "plain"]


def count_tokens(request: dict[str, Any]) -> int:
    """The server's count of a request's prompt: words and punctuation marks of every text, 256 per image,
    4 per message."""
    total = 0
    for message in request.get("messages", []):
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        total += 4 + sum(len(re.findall(r"\w+|[^\w\s]", p.get("text", ""))) if p.get("type") == "text" else 256
                         for p in parts)
    return total


class ScriptedChatServer:
    """Use as a context manager; `.base_url` is 'http://127.0.0.1:PORT/v1'."""

    def __init__(self, script: list[Reply] | Responder, *, kind: Kind = "plain", context: int | None = None,
                 ollama_num_ctx: int | None = None, reports: bool = True):
        self.requests: list[dict[str, Any]] = []
        """Chat request bodies received, in order (refused ones included)."""
        self.headers: list[dict[str, str]] = []
        """Chat request headers received, in order."""
        self.questions: list[str] = []
        """Other requests ('GET /props', ...) in order."""
        self.refused: list[int] = []
        """Prompt tokens (the server's count) of each request refused as longer than the context."""
        self.kind, self.context, self.ollama_num_ctx, self.reports = kind, context, ollama_num_ctx, reports
        self._script = script
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            refusal = self._refusal(request)
            if refusal is not None:
                return refusal
            if callable(self._script):
                return self._script(request)
            if not self._script:
                return error_reply(500, "the test script has no more replies")
            return self._script.pop(0)

    def _refusal(self, request: dict[str, Any]) -> Reply | None:
        """The server's HTTP 400 for a request longer than its context (llama.cpp: the prompt alone; vLLM:
        prompt and max_tokens); llama-cpp-python's stream cut after its 200 (the prompt alone)."""
        if self.context is None:
            return None
        prompt, answer = count_tokens(request), int(request.get("max_tokens") or 0)
        if self.kind == "llama-cpp-python" and prompt >= self.context:
            self.refused.append(prompt)
            if request.get("stream"):
                return dataclasses.replace(chat_reply(""), cut_after=0)
            return error_reply(400, f"This model's maximum context length is {self.context} tokens. However, you "
                                    f"requested {prompt} tokens ({prompt} in the messages, 0 in the completion).")
        if self.kind == "vllm" and prompt + answer > self.context:
            self.refused.append(prompt)
            return error_reply(400, f"This model's maximum context length is {self.context} tokens. However, you "
                                    f"requested {prompt + answer} tokens ({prompt} in the messages, {answer} in the "
                                    f"completion). Please reduce the length of the messages or completion.")
        if self.kind != "vllm" and prompt > self.context:
            self.refused.append(prompt)
            message = f"request ({prompt} tokens) exceeds the available context size ({self.context} tokens), " \
                      "try increasing it"
            return Reply(status=400, body={"error": {"code": 400, "message": message,
                                                     "type": "exceed_context_size_error",
                                                     "n_prompt_tokens": prompt, "n_ctx": self.context}})
        return None

    def _question(self, method: str, path: str) -> Reply:
        """What the server says about itself: its context, where its kind reports one."""
        self.questions.append(f"{method} {path}")
        context = self.context or 4096
        if not self.reports:
            return error_reply(404, f"File Not Found: {path}")
        if (method, path, self.kind) == ("GET", "/props", "llama.cpp"):
            return Reply(body={"default_generation_settings": {"n_ctx": context}, "total_slots": 1})
        if (method, path) == ("GET", "/v1/models") and self.kind == "llama-cpp-python":
            return Reply(body={"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "me",
                                                           "permissions": []}]})
        if (method, path) == ("GET", "/v1/models") and self.kind in ("llama.cpp", "vllm"):
            entry = {"id": "scripted", "object": "model"}
            entry.update({"max_model_len": context} if self.kind == "vllm" else {"meta": {"n_ctx_train": 131072}})
            return Reply(body={"object": "list", "data": [entry]})
        if (method, path, self.kind) == ("POST", "/api/show", "ollama"):
            parameters = f"num_ctx {self.ollama_num_ctx}\n" if self.ollama_num_ctx else 'stop "<end_of_turn>"\n'
            return Reply(body={"parameters": parameters, "model_info": {"gemma3.context_length": 131072}})
        return error_reply(404, f"File Not Found: {path}")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(server._question("GET", self.path), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._answer(server._question("POST", self.path), body)
                    return
                server.headers.append(dict(self.headers.items()))
                self._answer(server._next(body), body)

            def _answer(self, reply: Reply, request: dict[str, Any]) -> None:
                try:
                    if request.get("stream") and reply.stream and _is_chat(reply.body):
                        self._stream(reply, request)
                    else:
                        self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _send(self, reply: Reply) -> None:
                time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    return
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                self.send_response(reply.status)
                for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload.encode())

            def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
                """Headers at once, then one event per token (HTTP/1.0: the end of the answer closes it)."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.flush()
                time.sleep(reply.delay_s)
                choice = reply.body["choices"][0]
                pieces = re.findall(r"\S*\s*", choice["message"]["content"])[:-1] or [""]
                for thought in reply.thinking:
                    self._event({"choices": [{"index": 0, "delta": {"reasoning_content": thought},
                                              "finish_reason": None}]})
                    time.sleep(reply.token_delay_s)
                for n, piece in enumerate(pieces):
                    if reply.stall_after is not None and n == reply.stall_after:
                        time.sleep(reply.stall_s)
                        return
                    if reply.cut_after is not None and n == reply.cut_after:
                        return  # the final event never comes
                    self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
                    time.sleep(reply.token_delay_s)
                self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
                if (request.get("stream_options") or {}).get("include_usage"):
                    self._event({"choices": [], "usage": reply.body.get("usage")})
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, data: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                """Silent."""

        return Handler


def _is_chat(body: Any) -> bool:
    """Whether a reply body is a chat completion (streamable)."""
    choices = body.get("choices") if isinstance(body, dict) else None
    return isinstance(choices, list) and bool(choices) and isinstance(choices[0].get("message"), dict)
