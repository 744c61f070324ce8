"""Google Gemini through the google-genai SDK (optional extra: pip install 'rewardloop[gemini]').

Gemini takes the whole video: a Video part is uploaded through the Files API and referenced in the request.
JSON is requested with response_mime_type='application/json' and validated by the caller.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rewardloop.models.base import (
    Completion,
    Image,
    Message,
    ModelError,
    ModelSpec,
    Text,
    TransientError,
    Usage,
    import_sdk,
    read_key,
    scrub,
)

UPLOAD_WAIT_S = 120.0
"""Longest wait for an uploaded video to become ready (s)."""


def _sdk() -> Any:
    return import_sdk("google.genai", "google-genai", "gemini")


class GeminiBackend:
    """generate_content on a Gemini model; videos uploaded once per process and reused by content."""

    accepts_video = True

    def __init__(self, spec: ModelSpec, *, timeout_s: float = 120.0):
        self.spec, self.timeout_s, self.name = spec, timeout_s, spec.label
        self._uploads: dict[str, Any] = {}
        _sdk()  # fail early, with the install hint

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        genai = _sdk()
        from google.genai import types

        key = read_key(self.spec, required=True)
        system = "\n".join(m.text for m in messages if m.role == "system") or None
        config = types.GenerateContentConfig(
            temperature=temperature, max_output_tokens=max_tokens, system_instruction=system,
            response_mime_type="application/json" if schema is not None else None)
        try:  # building the contents uploads videos: SDK errors there are translated too
            client = genai.Client(api_key=key, http_options=types.HttpOptions(timeout=int(self.timeout_s * 1000)))
            contents = [types.Content(role="model" if m.role == "assistant" else "user",
                                      parts=[p for part in m.parts for p in self._parts(client, types, part)])
                        for m in messages if m.role != "system"]
            response = client.models.generate_content(model=self.spec.model, contents=contents, config=config)
        except ModelError:
            raise
        except Exception as error:  # the SDK raises its own APIError family and httpx errors
            raise _translate(error, self.name, key) from None
        return _completion(response)

    def _parts(self, client: Any, types: Any, part: Text | Image | Any) -> list[Any]:
        if isinstance(part, Text):
            return [types.Part.from_text(text=part.text)]
        caption = [types.Part.from_text(text=part.caption)] if part.caption else []
        if isinstance(part, Image):
            return [*caption, types.Part.from_bytes(data=part.png, mime_type="image/png")]
        digest = part.digest()
        if digest not in self._uploads:
            self._uploads[digest] = _upload(client, str(part.path))
        uploaded = self._uploads[digest]
        return [*caption, types.Part.from_uri(file_uri=uploaded.uri, mime_type=uploaded.mime_type)]


def _upload(client: Any, path: str) -> Any:
    uploaded = client.files.upload(file=path)
    deadline = time.monotonic() + UPLOAD_WAIT_S
    while getattr(uploaded.state, "name", "ACTIVE") == "PROCESSING":
        if time.monotonic() > deadline:
            raise TransientError(f"gemini did not finish processing {path} within {UPLOAD_WAIT_S:g} s")
        time.sleep(1.0)
        uploaded = client.files.get(name=uploaded.name)
    if getattr(uploaded.state, "name", "ACTIVE") == "FAILED":
        raise ModelError(f"gemini could not process the video {path}")
    return uploaded


def _translate(error: Exception, name: str, key: str | None) -> ModelError:
    code = getattr(error, "code", None) or getattr(error, "status_code", None)
    message = scrub(str(getattr(error, "message", None) or error), key)
    if code in (401, 403) or (code == 400 and "API key" in message):
        return ModelError(f"{name} rejected the key (HTTP {code}); check GEMINI_API_KEY or GOOGLE_API_KEY")
    if isinstance(code, int) and (code == 429 or code >= 500):
        return TransientError(f"{name} answered HTTP {code}: {message}")
    if "timeout" in type(error).__name__.lower() or "timed out" in message.lower():
        return TransientError(f"{name} timed out")
    return ModelError(f"{name} failed: {type(error).__name__}: {message}")


def _completion(response: Any) -> Completion:
    meta = getattr(response, "usage_metadata", None)
    candidates = getattr(response, "candidates", None) or []
    reason = str(getattr(candidates[0], "finish_reason", "STOP")) if candidates else "STOP"
    return Completion(text=response.text or "",
                      usage=Usage(int(getattr(meta, "prompt_token_count", 0) or 0),
                                  int(getattr(meta, "candidates_token_count", 0) or 0)),
                      finish_reason="length" if "MAX_TOKENS" in reason else "stop")
