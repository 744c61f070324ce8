"""How much fits: prompt tokens estimated, a server's context size read from what it reports, max_tokens fitted.

Estimates count CHARS_PER_TOKEN = 3.5 characters per token (current open models' tokenizers give about 4 on
English prose and 3 on code and Markdown tables), MESSAGE_TOKENS per chat message for the template, and
IMAGE_TOKENS per image. A server that counts more refuses the request with its own counts (HTTP 400); the
OpenAI-compatible backend turns that into `ContextExceeded`, and `complete_fitted` fits again with them.

Where servers report their context (parsed here, fetched by `rewardloop.models.openai_compat`):
- llama.cpp server: GET /props -> default_generation_settings.n_ctx (per slot), or n_ctx in older versions;
- vLLM and others: GET /v1/models -> data[].max_model_len, context_length or loaded_context_length;
- Ollama: POST /api/show -> num_ctx in `parameters` when the model file sets one; otherwise Ollama serves
  OLLAMA_DEFAULT_CONTEXT tokens (however long model_info.*.context_length is) and cuts longer prompts
  silently, so that default is what fits;
- llama.cpp's /v1/models meta.n_ctx_train is the length the model was trained for: a last resort;
- llama-cpp-python's server (and LM Studio) report nothing: a local server that does is taken to have 4,096
  tokens (`openai_compat.ASSUMED_CONTEXT`) unless --context says otherwise. An assumed context shapes the prompt
  and answer but refuses nothing (the server may hold more); llama-cpp-python cuts the stream of a prompt longer
  than its context after its 200, and `complete_fitted` asks once more with a shorter prompt and fewer answer
  tokens before the `EndedEarly` error says what to change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from rewardloop.models.base import (
    Completion,
    ContextExceeded,
    EndedEarly,
    Image,
    Message,
    ModelBackend,
    ModelError,
    Video,
    context_is_assumed,
    context_window,
)

CHARS_PER_TOKEN = 3.5
"""Characters per token of the estimate."""
MESSAGE_TOKENS = 8
"""Chat-template tokens around each message (role markers, separators)."""
IMAGE_TOKENS = 256
"""Tokens one image costs (Gemma 3 encodes every image as 256; Qwen2-VL about 100 for a 320 x 240 keyframe)."""
VIDEO_TOKENS = 4096
"""Tokens a video is counted as (only hosted backends with large contexts take video)."""
SAFETY_TOKENS = 64
"""Tokens left free beyond the prompt."""
ESTIMATE_ERROR = 0.15
"""How much longer than estimated a prompt may be on a server's tokenizer (Gemma's counts Markdown tables and
code up to about 10 % longer); room is left for it."""
OLLAMA_DEFAULT_CONTEXT = 4096
"""The context Ollama serves a model with unless its model file sets num_ctx (OLLAMA_CONTEXT_LENGTH)."""


def estimate_tokens(text: str) -> int:
    """Tokens of `text`: characters / CHARS_PER_TOKEN, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def message_tokens(messages: Sequence[Message]) -> int:
    """Estimated prompt tokens of a conversation: its text, captions, images and videos, template included."""
    total = 0
    for message in messages:
        total += MESSAGE_TOKENS
        for part in message.parts:
            if isinstance(part, Image):
                total += IMAGE_TOKENS + estimate_tokens(part.caption)
            elif isinstance(part, Video):
                total += VIDEO_TOKENS + estimate_tokens(part.caption)
            else:
                total += estimate_tokens(part.text)
    return total


def answer_room(context: int, prompt_tokens: int, *, exact: bool = False) -> int:
    """Answer tokens that fit beside a prompt of `prompt_tokens` (estimated, or `exact` as a server counted it)."""
    counted = prompt_tokens if exact else math.ceil(prompt_tokens * (1.0 + ESTIMATE_ERROR))
    return context - counted - SAFETY_TOKENS


def request_tokens(messages: Sequence[Message], max_tokens: int) -> int:
    """Tokens a request takes of a server's context: the prompt as estimated, with room for the estimate's error
    (ESTIMATE_ERROR), and the answer tokens asked for."""
    return math.ceil(message_tokens(messages) * (1.0 + ESTIMATE_ERROR)) + max_tokens


def fit_max_tokens(*, context: int | None, prompt_tokens: int, wanted: int, minimum: int, what: str,
                   exact: bool = False, assumed: bool = False) -> int:
    """The answer length to ask for: `wanted`, less if the context is shorter; a one-line ModelError saying what to
    change when not even `minimum` answer tokens fit beside the prompt. Without a known context, `wanted`.
    `assumed`: the context is only assumed for a server that reports none, which may hold more: `minimum` is
    asked for instead of an error (a server that cannot hold it ends its answer early, and that error says
    what to change)."""
    if context is None:
        return wanted
    room = answer_room(context, prompt_tokens, exact=exact)
    if room < minimum:
        if assumed:
            return minimum
        raise context_too_small(context, what, prompt_tokens, minimum)
    return min(wanted, room)


def context_too_small(context: int, what: str, prompt_tokens: int, minimum: int) -> ModelError:
    """The error for a prompt and answer that cannot fit: it names the context to start the server with."""
    needed = math.ceil(prompt_tokens * (1.0 + ESTIMATE_ERROR)) + minimum + SAFETY_TOKENS
    larger = 2 ** math.ceil(math.log2(max(needed, 2)))
    return ModelError(f"the server's context is {context} tokens; {what} needs ~{prompt_tokens} tokens and its "
                      f"answer at least {minimum}; start the server with a larger context (llama.cpp: -c {larger}; "
                      f"vLLM: --max-model-len {larger}; Ollama: OLLAMA_CONTEXT_LENGTH={larger})")


def complete_fitted(backend: ModelBackend, messages: Sequence[Message], *, wanted: int, minimum: int, what: str,
                    schema: dict[str, Any] | None = None, temperature: float = 0.0,
                    shorter: Sequence[Message] | None = None) -> Completion:
    """`backend.complete` with max_tokens fitted to the backend's context (see `_fitted`).

    When a local server ends its answer early (`EndedEarly`: most likely a prompt longer than a context it does
    not report), asked once more with the `shorter` messages (e.g. the compact prompt; default: the same ones)
    and half the answer tokens (`minimum` at least); a second early end is final, its one-line message naming
    the context that request needed."""
    try:
        return _fitted(backend, messages, wanted=wanted, minimum=minimum, what=what, schema=schema,
                       temperature=temperature)
    except EndedEarly as ended:
        fewer = max(minimum, ended.max_tokens // 2)
        return _fitted(backend, shorter or messages, wanted=fewer, minimum=minimum, what=what, schema=schema,
                       temperature=temperature)


def _fitted(backend: ModelBackend, messages: Sequence[Message], *, wanted: int, minimum: int, what: str,
            schema: dict[str, Any] | None, temperature: float) -> Completion:
    """`backend.complete` with max_tokens fitted to the backend's context; when the server counts the prompt
    longer than estimated and refuses it, fitted again to the server's own counts and asked once more."""
    prompt = message_tokens(messages)
    max_tokens = fit_max_tokens(context=context_window(backend), prompt_tokens=prompt, wanted=wanted,
                                minimum=minimum, what=what, assumed=context_is_assumed(backend))

    def ask(n: int) -> Completion:
        return backend.complete(messages, schema=schema, temperature=temperature, max_tokens=n)

    try:
        return ask(max_tokens)
    except ContextExceeded as refused:
        exact = refused.prompt_tokens is not None
        counted = refused.prompt_tokens if refused.prompt_tokens is not None else prompt
        refit = fit_max_tokens(context=refused.context_tokens, prompt_tokens=counted, wanted=wanted,
                               minimum=minimum, what=what, exact=exact)
        if refit >= max_tokens and refused.prompt_tokens is not None:
            raise  # the server refused for another reason than our estimate: say what it said
        return ask(refit)


# --- what servers report ------------------------------------------------------------------------------------

def _positive(value: Any) -> int | None:
    """A positive int from a JSON value, else None (bools and junk included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return None
    return int(value)


def llama_cpp_context(props: Any) -> int | None:
    """n_ctx per slot from a llama.cpp GET /props answer."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    inner = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _positive(inner) or _positive(props.get("n_ctx"))


def listed_context(listing: Any, model: str) -> tuple[int | None, int | None]:
    """(served context, training context) of `model` (or of the only model listed) from GET /v1/models."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None, None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    if not chosen:
        return None, None
    entry = chosen[0]
    served = next((_positive(entry.get(k)) for k in ("max_model_len", "loaded_context_length", "context_length")
                   if _positive(entry.get(k))), None)
    meta = entry.get("meta")
    return served, _positive(meta.get("n_ctx_train")) if isinstance(meta, dict) else None


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.MULTILINE)


def ollama_context(show: Any) -> int | None:
    """The context Ollama serves a model with, from POST /api/show: its num_ctx parameter, else Ollama's default
    (capped by the model's own context_length)."""
    if not isinstance(show, dict) or not isinstance(show.get("model_info"), dict):
        return None
    parameters = show.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    if match:
        return _positive(int(match.group(1)))
    trained = [_positive(v) for k, v in show["model_info"].items() if k.endswith(".context_length")]
    known = [t for t in trained if t is not None]
    return min([OLLAMA_DEFAULT_CONTEXT, *known])


_EXCEEDED = (  # (pattern, group of the context, group of the prompt tokens or 0)
    (re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)"), 2, 1),  # llama.cpp
    (re.compile(r"maximum context length is (\d+) tokens.*?\((\d+) in the messages"), 1, 2),  # vLLM, OpenAI
    (re.compile(r"maximum context length is (\d+) tokens.*?request has (\d+) input tokens"), 1, 2),  # newer vLLM
    (re.compile(r"maximum context length is (\d+) tokens"), 1, 0),
)


def context_refusal(detail: str, payload: Any) -> tuple[int, int | None] | None:
    """(context, prompt tokens or None) when an HTTP 400 answer says the request was longer than the context."""
    error = payload.get("error", payload) if isinstance(payload, dict) else None
    if isinstance(error, dict) and _positive(error.get("n_ctx")):
        return int(error["n_ctx"]), _positive(error.get("n_prompt_tokens"))
    for pattern, context, prompt in _EXCEEDED:
        match = pattern.search(detail)
        if match:
            return int(match.group(context)), int(match.group(prompt)) if prompt else None
    return None
