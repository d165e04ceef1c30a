"""JSON safe to put inside a page's `<script type="application/json">` block."""

from __future__ import annotations

import json
from typing import Any


def embed_json(data: Any) -> str:
    """JSON that cannot end its script block or open a comment, whatever it holds:
    `<`, `>` and `&` as `\\u` escapes, every non-ASCII character too."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
