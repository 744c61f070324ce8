"""The one small interface every model backend speaks: messages in, text or parsed JSON and token usage out.

A message is a role and a sequence of parts: text, images (PNG bytes with a caption such as a keyframe's time
and view) and at most one video file. A backend is named by a model string:

    builtin                                  rules over physics measurements, offline (no language model)
    openai:gpt-4o                            api.openai.com, key from OPENAI_API_KEY
    openai:qwen2.5-vl-72b@http://host:8000/v1  any OpenAI-compatible server (vLLM, Ollama, llama.cpp, ...)
    gemini:gemini-2.0-flash                  google-genai, key from GEMINI_API_KEY or GOOGLE_API_KEY
    anthropic:claude-sonnet-4-0              anthropic SDK, key from ANTHROPIC_API_KEY

Keys are read from environment variables when a call is made and never stored in a spec, a cache key, a log,
a run file or an error message.
"""

from __future__ import annotations

import hashlib
import importlib
import ipaddress
import os
import re
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from rewardloop.errors import UserError, unknown_name

Role = Literal["system", "user", "assistant"]


class ModelError(UserError):
    """A model call failed in a way a user can act on; the message is one line and never holds a key."""


def import_sdk(module: str, package: str, extra: str) -> Any:
    """Import an optional provider SDK, or raise a ModelError naming the pip extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelError(f"the {extra} backend needs the {package} package: pip install 'rewardloop[{extra}]'") \
            from None


class TransientError(ModelError):
    """A failure worth retrying: a timeout, HTTP 429 or 5xx."""

    def __init__(self, message: str, *, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ContextExceeded(ModelError):
    """The server refused a request longer than its context; it said how long both were (when it did)."""

    def __init__(self, message: str, *, context_tokens: int, prompt_tokens: int | None):
        super().__init__(message)
        self.context_tokens = context_tokens
        """The server's context (tokens)."""
        self.prompt_tokens = prompt_tokens
        """The prompt's length as the server counted it (tokens); None when it did not say."""


class EndedEarly(ModelError):
    """A local server took the request (HTTP 200) and ended its streamed answer without its final event. For a
    local server that is most likely a prompt longer than a context it does not report: llama-cpp-python's server
    raises "Requested tokens (N) exceed context window of M" only after its 200, and closes the stream."""

    def __init__(self, message: str, *, max_tokens: int):
        super().__init__(message)
        self.max_tokens = max_tokens
        """The answer tokens the request asked for (a retry asks for fewer)."""


@dataclass(frozen=True)
class StreamProgress:
    """How a streamed answer is coming along, reported to a live view while a call runs."""

    model: str
    """The model label, e.g. 'openai:gemma3'."""
    waited_s: float
    """Seconds since the request was sent."""
    tokens: int
    """Answer tokens received so far (streamed chunks with text; 0 while the server reads the prompt)."""
    first_token_s: float | None
    """Seconds the first token took (the server reading the prompt); None before it came."""
    done: bool = False
    """True for the last report of a call, when the answer is complete."""

    @property
    def tokens_per_s(self) -> float | None:
        """Answer tokens per second since the first token; None before two tokens came."""
        if self.first_token_s is None or self.tokens < 2 or self.waited_s <= self.first_token_s:
            return None
        return (self.tokens - 1) / (self.waited_s - self.first_token_s)


StreamCallback = Callable[[StreamProgress], None]


@dataclass(frozen=True)
class Text:
    """A text part of a message."""

    text: str


@dataclass(frozen=True)
class Image:
    """An image part of a message."""

    png: bytes
    """PNG-encoded image."""
    caption: str = ""
    """What the image shows, e.g. 't = 0.60 s, side view'; sent as text just before the image."""

    def digest(self) -> str:
        return hashlib.sha256(self.png).hexdigest()


@dataclass(frozen=True)
class Video:
    """A video file part of a message (only backends with `accepts_video` take it)."""

    path: Path
    """An .mp4 file."""
    caption: str = ""

    def digest(self) -> str:
        return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()


Part = Text | Image | Video


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    parts: tuple[Part, ...]
    """Text, images and videos, in order."""

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", (Text(text),))

    @classmethod
    def user(cls, *parts: str | Part) -> Message:
        """A user message; plain strings become Text parts."""
        return cls("user", tuple(Text(p) if isinstance(p, str) else p for p in parts))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", (Text(text),))

    @property
    def text(self) -> str:
        """All text parts joined (captions excluded)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, Text))

    def fingerprint(self) -> dict[str, Any]:
        """A JSON-able description that identifies the content (images and videos by hash) for cache keys."""
        def one(part: Part) -> dict[str, str]:
            if isinstance(part, Text):
                return {"text": part.text}
            kind = "image" if isinstance(part, Image) else "video"
            return {kind: part.digest(), "caption": part.caption}
        return {"role": self.role, "parts": [one(p) for p in self.parts]}


@dataclass(frozen=True)
class Usage:
    """Tokens and estimated cost of one call (or a sum of calls)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    """Estimated from the price table in `rewardloop.models.accounting`; 0 for unknown models."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cost_usd + other.cost_usd)


@dataclass(frozen=True)
class Completion:
    """A model's answer."""

    text: str
    """The raw text of the answer."""
    parsed: Any = None
    """The answer parsed and validated against the requested JSON schema; None without a schema."""
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    """'stop', or 'length' when the answer was cut at max_tokens."""
    cached: bool = False
    """True when replayed from the response cache (no call made, no cost)."""
    model: str = ""
    """The model string that answered (no key, no URL credentials)."""


class ModelBackend(Protocol):
    """Anything that answers chat messages."""

    name: str
    """The model string, e.g. 'openai:gpt-4o' (never with a key)."""
    accepts_video: bool
    """Whether Video parts can be sent; otherwise callers send keyframe images."""

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        """Answer the conversation; with a schema, `Completion.parsed` holds the validated JSON."""
        ...


@dataclass(frozen=True)
class Timeouts:
    """How long a model server may take. Answers are streamed, so a slow server is told apart from a dead one:
    the first token may take long (the server reads the whole prompt first), later tokens may not."""

    first_token_s: float = 120.0
    """Seconds to the first answer token from a remote server (connecting and reading the prompt included)."""
    local_first_token_s: float = 1800.0
    """The same for a server on this machine or the local network (`is_local_url`): a CPU server may read a
    5,000-token prompt for many minutes."""
    silence_s: float = 120.0
    """Seconds without a byte, once the first token came, before the answer counts as stalled."""

    def __post_init__(self) -> None:
        for name in ("first_token_s", "local_first_token_s", "silence_s"):
            value = getattr(self, name)
            if not value > 0:
                raise UserError(f"model timeout {name} must be a positive number of seconds, got {value}")

    def first_token(self, *, local: bool) -> float:
        """The first-token limit for a local (`is_local_url`) or remote server."""
        return self.local_first_token_s if local else self.first_token_s


def is_local_url(url: str) -> bool:
    """Whether `url` names this machine or the local network: localhost, loopback and private addresses, and
    names that are no public host name (one label like 'llama', or ending .local, .lan, .internal, .home)."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host or host == "localhost" or host.endswith(
            (".localhost", ".local", ".lan", ".internal", ".home", ".home.arpa"))
    return address.is_private or address.is_loopback or address.is_link_local


def context_window(backend: ModelBackend) -> int | None:
    """The backend's context size (tokens) when it knows one (`context_tokens()`, asked of the server once);
    None otherwise, e.g. for the builtin backend and hosted APIs with large contexts."""
    probe = getattr(backend, "context_tokens", None)
    return probe() if callable(probe) else None


def context_is_assumed(backend: ModelBackend) -> bool:
    """Whether the backend's context (`context_window`) is an assumption for a server that reports none, not the
    server's word or the user's --context."""
    probe = getattr(backend, "context_assumed", None)
    return bool(probe()) if callable(probe) else False


NoteCallback = Callable[[str], None]
"""Hears a one-line note about a server, said once (e.g. the context assumed for a server that reports none)."""


BACKENDS: dict[str, str] = {
    "builtin": "rules over physics measurements, offline; no language model, no network, no weights",
    "openai": "any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, LM Studio, ...)",
    "gemini": "Google Gemini through google-genai, with video upload (pip install 'rewardloop[gemini]')",
    "anthropic": "Anthropic Claude through the anthropic SDK (pip install 'rewardloop[anthropic]')",
}
"""Backend kinds by name."""

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string."""

    backend: str
    """A key of BACKENDS."""
    model: str = ""
    """The provider's model name; '' for builtin."""
    base_url: str | None = None
    """Server for the openai backend; None means api.openai.com."""
    key_env: str | None = None
    """Environment variable holding the key (None: the backend's default variables)."""

    def __str__(self) -> str:
        if self.backend == "builtin":
            return "builtin"
        return f"{self.backend}:{self.model}" + (f"@{self.base_url}" if self.base_url else "")

    @property
    def label(self) -> str:
        """backend:model, without the URL (for cache keys, logs and price lookup)."""
        return "builtin" if self.backend == "builtin" else f"{self.backend}:{self.model}"


ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
"""What a '#KEY_ENV' suffix must look like."""

_PLAIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.]{0,19}")
"""An unknown backend name that is safe to repeat in an error (a short word, not a pasted key like 'sk-...')."""


def parse_model(text: str) -> ModelSpec:
    """Parse 'builtin', 'openai:gpt-4o', 'openai:qwen2.5-vl-72b@http://host:8000/v1', 'gemini:gemini-2.0-flash'.

    An optional '#ENV_NAME' suffix names the environment variable holding the key, e.g.
    'openai:qwen-vl-max@https://dashscope.aliyuncs.com/compatible-mode/v1#DASHSCOPE_API_KEY'.
    A model string never holds a key: URLs with user:token@ or a ?query are refused, and errors about the URL or
    the variable name do not repeat them (the string may be stored in a run file or printed).
    """
    text = text.strip()
    if text == "builtin":
        return ModelSpec("builtin")
    backend, sep, rest = text.partition(":")
    if backend not in BACKENDS and not _PLAIN_WORD.fullmatch(backend):  # perhaps a pasted key: do not echo it
        raise ModelError(f"a model string starts with a backend name: one of {', '.join(sorted(BACKENDS))}")
    if backend not in BACKENDS:
        raise unknown_name("model backend", backend, BACKENDS)
    rest, _, key_env = rest.partition("#")
    model, _, base_url = rest.partition("@")
    if not sep or not model:
        raise UserError(f"model string {backend}:{model} needs a model name, e.g. {backend}:NAME")
    if base_url:
        _check_base_url(base_url, backend)
    if key_env and not ENV_NAME.fullmatch(key_env):
        raise ModelError("the part after '#' in a model string must name an environment variable (uppercase "
                         "letters, digits and _, starting with a letter), e.g. #DASHSCOPE_API_KEY; "
                         "put the key itself in that variable")
    return ModelSpec(backend, model, base_url.rstrip("/") or None, key_env or None)


_NO_KEYS_IN_URLS = "keys go in environment variables (OPENAI_API_KEY, or name one with #KEY_ENV)"


def _check_base_url(base_url: str, backend: str) -> None:
    """A ModelError (that does not repeat the URL, which may hold a key) unless it is a plain http(s) URL."""
    if backend != "openai":
        raise ModelError(f"only the openai backend takes a server URL (@URL), not {backend}")
    if not base_url.startswith(("http://", "https://")):
        raise ModelError("the server URL after '@' in a model string must start with http:// or https://")
    try:
        parts = urllib.parse.urlsplit(base_url)
    except ValueError:
        raise ModelError("the server URL after '@' in a model string is not a valid URL") from None
    if "@" in parts.netloc:
        raise ModelError(f"the server URL after '@' in a model string holds a user name or token (user:token@host); "
                         f"remove it: {_NO_KEYS_IN_URLS}")
    if parts.query or "?" in base_url:
        raise ModelError(f"the server URL after '@' in a model string has a query string (?...); remove it: "
                         f"{_NO_KEYS_IN_URLS}")


KEY_ENV: dict[str, tuple[str, ...]] = {
    "builtin": (),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "anthropic": ("ANTHROPIC_API_KEY",),
}
"""Environment variables each backend reads its key from, in order (a spec's key_env replaces them)."""


def key_variables(spec: ModelSpec) -> tuple[str, ...]:
    """The environment variables this spec reads its key from."""
    return (spec.key_env,) if spec.key_env else KEY_ENV[spec.backend]


def read_key(spec: ModelSpec, *, required: bool) -> str | None:
    """The key from the environment, stripped of surrounding whitespace (CRLF .env files leave a '\\r').

    A ModelError naming the variable(s) if required and absent, or naming the variable (never the value) if it
    holds spaces, control characters or non-ASCII characters inside the key.
    """
    for name in key_variables(spec):
        value = os.environ.get(name, "").strip()
        if not value:
            continue
        if not value.isascii() or any(c.isspace() or not c.isprintable() for c in value):
            raise ModelError(f"{name} must hold only the key: printable ASCII without spaces or line breaks")
        return value
    if required:
        raise ModelError(f"{spec.label} needs a key: set {' or '.join(key_variables(spec))}")
    return None


def scrub(text: str, secret: str | None) -> str:
    """`text` with the secret (and any 'sk-...'-like token) removed, cut to one short line."""
    if secret:
        text = text.replace(secret, "***")
    text = re.sub(r"\b(sk-|AIza)[-_A-Za-z0-9*]{6,}", "***", text)
    return " ".join(text.split())[:200]
