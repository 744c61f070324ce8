"""A backend made safe to use in a run: response cache, retries with backoff, JSON repair, accounting, budget.

`make_backend(spec, ...)` returns a `ManagedBackend` around a provider backend. A call goes:
cache hit? -> budget check -> provider call (retried on timeouts, 429 and 5xx with exponential backoff,
honouring Retry-After) -> parse and validate JSON against the schema (asking the model once more with the
problem if its JSON cannot be repaired) -> record usage in the ledger -> store in the cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rewardloop.models.accounting import CallRecord, Ledger, price_of, usage_with_cost
from rewardloop.models.base import (
    BACKENDS,
    Completion,
    Message,
    ModelBackend,
    ModelError,
    ModelSpec,
    NoteCallback,
    StreamCallback,
    Timeouts,
    TransientError,
    context_is_assumed,
    context_window,
    parse_model,
)
from rewardloop.models.cache import ResponseCache, cache_key
from rewardloop.models.jsonreply import parse_json_reply


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried."""

    attempts: int = 4
    """Tries in all, the first included."""
    base_delay_s: float = 1.0
    """Wait before the second try; doubles each time."""
    max_delay_s: float = 30.0
    """Longest wait between tries, Retry-After included."""


def call_with_retries(call: Callable[[], Completion], policy: RetryPolicy,
                      sleep: Callable[[float], None] = time.sleep) -> Completion:
    """`call()`, retried on TransientError; a one-line ModelError when every try failed."""
    for attempt in range(policy.attempts):
        try:
            return call()
        except TransientError as error:
            if attempt == policy.attempts - 1:
                raise ModelError(f"{error} (gave up after {policy.attempts} tries)") from None
            delay = policy.base_delay_s * 2**attempt
            if error.retry_after_s is not None:
                delay = max(delay, error.retry_after_s)
            sleep(min(delay, policy.max_delay_s))
    raise ModelError("no attempts configured")  # only when policy.attempts < 1


class BuiltinBackend:
    """The offline default. It is not a language model: `Critic`/`Designer` factories turn it into
    `BuiltinCritic` and `BuiltinDesigner`, rules over physics measurements. Calling it directly is an error."""

    name = "builtin"
    accepts_video = False

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        raise ModelError("the builtin backend is not a language model; use BuiltinCritic and BuiltinDesigner "
                         "(rules over physics measurements) or a model string such as openai:gpt-4o")


class ManagedBackend:
    """A provider backend with cache, retries, JSON repair, accounting and budget. Same interface."""

    def __init__(self, inner: ModelBackend, *, ledger: Ledger | None = None, cache: ResponseCache | None = None,
                 retry: RetryPolicy = RetryPolicy(), role: str = "model", json_retries: int = 1,
                 sleep: Callable[[float], None] = time.sleep):
        self.inner, self.ledger, self.cache, self.retry = inner, ledger or Ledger(), cache, retry
        self.role, self.json_retries, self._sleep = role, json_retries, sleep
        self.name, self.accepts_video = inner.name, inner.accepts_video

    def context_tokens(self) -> int | None:
        """The provider's context size (tokens), when it knows one."""
        return context_window(self.inner)

    def context_assumed(self) -> bool:
        """Whether that context is an assumption for a server that reports none."""
        return context_is_assumed(self.inner)

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        """Answer from the cache or the provider; with a schema, `.parsed` is validated JSON."""
        key = cache_key(self.name, messages, schema=schema, temperature=temperature, max_tokens=max_tokens)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            self.ledger.record(CallRecord(self.name, self.role, hit.usage, True, True, 0.0))
            return hit
        conversation = list(messages)
        for attempt in range(self.json_retries + 1):
            completion = self._call(conversation, schema, temperature, max_tokens)
            if schema is None:
                break
            try:
                completion = replace(completion, parsed=parse_json_reply(completion.text, schema))
                break
            except ModelError as error:
                if completion.finish_reason == "length":
                    raise ModelError(f"{self.name} stopped at max_tokens={max_tokens} before finishing its JSON "
                                     "answer; raise max_tokens") from None
                if attempt == self.json_retries:
                    raise
                conversation += [Message.assistant(completion.text),
                                 Message.user(f"{error}. Reply with only the corrected JSON object.")]
        if self.cache is not None:
            self.cache.put(key, completion)
        return completion

    def _call(self, messages: list[Message], schema: dict[str, Any] | None, temperature: float,
              max_tokens: int) -> Completion:
        self.ledger.check(self.name)
        start = time.monotonic()
        completion = call_with_retries(
            lambda: self.inner.complete(messages, schema=schema, temperature=temperature, max_tokens=max_tokens),
            self.retry, self._sleep)
        usage = usage_with_cost(self.name, completion.usage.input_tokens, completion.usage.output_tokens)
        completion = replace(completion, usage=usage, model=self.name)
        self.ledger.record(CallRecord(self.name, self.role, usage, False, price_of(self.name) is not None,
                                      time.monotonic() - start))
        return completion


@dataclass(frozen=True)
class ServerOptions:
    """How to talk to a model server, beyond the model string."""

    timeouts: Timeouts = field(default_factory=Timeouts)
    """First-token and silence limits (the OpenAI-compatible backend streams; the SDK backends use
    `first_token_s` as their whole-call timeout)."""
    context_tokens: int | None = None
    """The context (tokens) to assume when the server reports none (`rewardloop run --context`)."""
    on_stream: StreamCallback | None = None
    """Called about once a second while an answer streams in (tokens so far, tokens/s)."""
    on_note: NoteCallback | None = None
    """Hears a note about the server, said once (the context assumed for a local server that reports none)."""


def make_backend(spec: ModelSpec | str, *, ledger: Ledger | None = None, cache: ResponseCache | None = None,
                 retry: RetryPolicy = RetryPolicy(), server: ServerOptions = ServerOptions(), role: str = "model",
                 sleep: Callable[[float], None] = time.sleep) -> ModelBackend:
    """The backend a model string names, wrapped with cache, retries and accounting (builtin is returned bare)."""
    spec = parse_model(spec) if isinstance(spec, str) else spec
    if spec.backend == "builtin":
        return BuiltinBackend()
    inner = _provider(spec, server)
    return ManagedBackend(inner, ledger=ledger, cache=cache, retry=retry, role=role, sleep=sleep)


def _provider(spec: ModelSpec, server: ServerOptions) -> ModelBackend:
    if spec.backend == "openai":
        from rewardloop.models.openai_compat import OpenAIBackend
        return OpenAIBackend(spec, timeouts=server.timeouts, context_tokens=server.context_tokens,
                             on_stream=server.on_stream, on_note=server.on_note)
    if spec.backend == "gemini":
        from rewardloop.models.gemini import GeminiBackend
        return GeminiBackend(spec, timeout_s=server.timeouts.first_token_s)
    if spec.backend == "anthropic":
        from rewardloop.models.anthropic import AnthropicBackend
        return AnthropicBackend(spec, timeout_s=server.timeouts.first_token_s)
    raise ModelError(f"unknown backend {spec.backend!r}; choose one of: {', '.join(BACKENDS)}")
