"""Token estimates cheap enough for every step (no tokenizer): about 4 characters of Latin text per
token and about one token per CJK (or other non-ASCII) character."""
from __future__ import annotations

import json
from typing import Any

MESSAGE_OVERHEAD = 4  # role and framing per chat message


def estimate(text: str) -> int:
    """Estimated tokens of TEXT. UTF-8 length minus character count counts the non-ASCII characters'
    extra bytes (two for a CJK character), so this runs at C speed with no per-character loop."""
    if not text:
        return 0
    chars = len(text)
    wide = (len(text.encode("utf-8", "surrogatepass")) - chars) // 2
    return (chars - wide + 3) // 4 + wide


def message_text(message: dict[str, Any]) -> str:
    """What a chat message puts in front of the model, as text (tool-call arguments included)."""
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    else:
        text = content or ""
    calls = message.get("tool_calls") or []
    if calls:
        rendered = [f"→ {c['function']['name']}({c['function'].get('arguments') or '{}'})" for c in calls]
        text = "\n".join([text, *rendered]) if text else "\n".join(rendered)
    return text


def message_tokens(message: dict[str, Any]) -> int:
    return estimate(message_text(message)) + MESSAGE_OVERHEAD


def tools_tokens(schemas: list[dict[str, Any]]) -> int:
    return sum(estimate(json.dumps(s, ensure_ascii=False, separators=(",", ":"))) for s in schemas)
