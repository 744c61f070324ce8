"""A content-addressed cache of model answers, so a run can be replayed at no cost and tests are deterministic.

The key is the SHA-256 of the model label, the messages (images and videos by content hash), the schema,
the temperature and max_tokens. No key, URL or credential ever enters it. Each answer is one JSON file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rewardloop.models.base import Completion, Message, Usage


def cache_key(label: str, messages: Sequence[Message], *, schema: dict[str, Any] | None, temperature: float,
              max_tokens: int) -> str:
    """Hex SHA-256 identifying one request."""
    request = {"model": label, "messages": [m.fingerprint() for m in messages], "schema": schema,
               "temperature": round(float(temperature), 6), "max_tokens": int(max_tokens)}
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


class ResponseCache:
    """Answers stored under `directory` as <key[:2]>/<key>.json."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        """The stored answer, marked cached, or None."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
            usage = Usage(**data["usage"])
            return Completion(data["text"], data["parsed"], usage, data["finish_reason"], True, data["model"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged entry is a miss; it will be overwritten

    def put(self, key: str, completion: Completion) -> None:
        """Store an answer atomically (write then rename)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"text": completion.text, "parsed": completion.parsed, "usage": asdict(completion.usage),
                "finish_reason": completion.finish_reason, "model": completion.model}
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data, indent=1))
        temporary.replace(path)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json")) if self.directory.is_dir() else 0
