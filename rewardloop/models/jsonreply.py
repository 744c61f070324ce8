"""Turn a model's text into JSON that matches a schema: parse, repair common slips, validate.

Repairs, in order: strip Markdown code fences, cut out the first balanced JSON object, drop trailing commas
before a closing bracket. Validation covers the JSON-schema subset our prompts use (type, properties,
required, additionalProperties, items, enum, minimum, maximum, minItems, maxItems) and reports every problem
with its path, so a model can be told exactly what to fix.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rewardloop.models.base import ModelError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def parse_json_reply(text: str, schema: dict[str, Any] | None = None) -> Any:
    """The JSON value in `text`, repaired if needed and validated against `schema`; ModelError otherwise."""
    value = _parse(text)
    if schema is not None:
        problems = validate(value, schema)
        if problems:
            raise ModelError(f"the model's JSON does not match the schema: {'; '.join(problems[:5])}")
    return value


def _parse(text: str) -> Any:
    candidates = [text.strip()]
    fenced = _FENCE.search(text)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start = text.find("{")
    if start >= 0:
        candidates.append(_balanced_object(text, start))
    for candidate in candidates:
        for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
            try:
                return json.loads(attempt)
            except json.JSONDecodeError:
                continue
    preview = " ".join(text.split())[:80]
    raise ModelError(f"the model's answer holds no parseable JSON object (starts: {preview!r})")


def _balanced_object(text: str, start: int) -> str:
    """The text from `start` (a '{') to its matching '}', respecting strings; the rest if unbalanced."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            escaped = char == "\\" and not escaped
            in_string = not (char == '"' and not escaped)
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return text[start:]


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems of `value` against `schema` (empty when it conforms), each naming its JSON path."""
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        is_bool = isinstance(value, bool)
        if not any(isinstance(value, _TYPES[k]) and not (is_bool and k in ("integer", "number")) for k in kinds):
            return [f"{path} should be {' or '.join(kinds)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path} should be one of {schema['enum']}, got {value!r}"]
    problems: list[str] = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path} should be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path} should be <= {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        problems += _validate_object(value, schema, path)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            problems.append(f"{path} should have {schema.get('minItems', 0)}..{schema.get('maxItems', '')} items")
        for index, item in enumerate(value):
            problems += validate(item, schema.get("items", {}), f"{path}[{index}]")
    return problems


def _validate_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    properties = schema.get("properties", {})
    problems = [f"{path}.{name} is missing" for name in schema.get("required", []) if name not in value]
    for name, item in value.items():
        if name in properties:
            problems += validate(item, properties[name], f"{path}.{name}")
        elif schema.get("additionalProperties") is False:
            problems.append(f"{path}.{name} is not allowed")
    return problems
