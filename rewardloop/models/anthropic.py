"""Anthropic Claude through the anthropic SDK (optional extra: pip install 'rewardloop[anthropic]').

Images go as base64 blocks; Claude takes no video, so callers send keyframes. JSON is validated by the caller.
"""

from __future__ import annotations

import base64
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
    key_variables,
    read_key,
    scrub,
)


def _sdk() -> Any:
    return import_sdk("anthropic", "anthropic", "anthropic")


class AnthropicBackend:
    """messages.create on a Claude model (the SDK's own retries off; ours apply)."""

    accepts_video = False

    def __init__(self, spec: ModelSpec, *, timeout_s: float = 120.0):
        self.spec, self.timeout_s, self.name = spec, timeout_s, spec.label
        _sdk()  # fail early, with the install hint

    def complete(self, messages: Sequence[Message], *, schema: dict[str, Any] | None = None,
                 temperature: float = 0.0, max_tokens: int = 2048) -> Completion:
        sdk = _sdk()
        key = read_key(self.spec, required=True)
        client = sdk.Anthropic(api_key=key, max_retries=0, timeout=self.timeout_s)
        system = "\n".join(m.text for m in messages if m.role == "system")
        turns = [{"role": m.role, "content": [_block(p) for p in m.parts]} for m in messages if m.role != "system"]
        try:
            response = client.messages.create(model=self.spec.model, max_tokens=max_tokens, temperature=temperature,
                                              system=system or sdk.NOT_GIVEN, messages=turns)
        except sdk.AuthenticationError:
            raise ModelError(f"{self.name} rejected the key (HTTP 401); check "
                             f"{' or '.join(key_variables(self.spec))}") from None
        except sdk.APITimeoutError:
            raise TransientError(f"{self.name} timed out after {self.timeout_s:g} s") from None
        except sdk.APIConnectionError as error:
            raise ModelError(f"cannot reach Anthropic ({scrub(str(error), key)})") from None
        except sdk.APIStatusError as error:
            code = error.status_code
            text = f"{self.name} answered HTTP {code}: {scrub(str(error.message), key)}"
            raise (TransientError(text) if code == 429 or code >= 500 else ModelError(text)) from None
        text = "".join(getattr(block, "text", "") for block in response.content)
        return Completion(text=text, usage=Usage(response.usage.input_tokens, response.usage.output_tokens),
                          finish_reason="length" if response.stop_reason == "max_tokens" else "stop")


def _block(part: Text | Image | Any) -> dict[str, Any]:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Image):
        data = base64.b64encode(part.png).decode()
        return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    raise ModelError("the anthropic backend takes no video; send keyframe images instead")
