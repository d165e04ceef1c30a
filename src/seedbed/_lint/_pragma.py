"""`# seedbed: allow <why>`: an exception to the rules, on one line, with its reason.

Pragmas are read from the file's comment tokens (a `# seedbed:` inside a
string is not one). A pragma with a reason suppresses every finding on its
line; one without a reason, or with a word other than `allow`, suppresses
nothing and is itself a finding (SB501), so an exception is never silent.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_PRAGMA = re.compile(r"#\s*seedbed\s*:\s*(?P<word>[\w-]*)(?P<rest>.*)$")


@dataclass(frozen=True)
class Pragma:
    line: int
    col: int  # 1-based, the comment's `#`
    word: str  # "allow" for a valid pragma
    reason: str

    @property
    def valid(self) -> bool:
        return self.word == "allow" and bool(self.reason)


def pragmas(source: str) -> dict[int, Pragma]:
    """Line number -> the seedbed pragma in that line's comment, if any."""
    found: dict[int, Pragma] = {}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = _PRAGMA.search(token.string)
        if match is None:
            continue
        line, col = token.start
        offset = match.start()
        # The reason ends at another comment (a pragma followed by another tool's comment).
        reason = match.group("rest").split("#")[0].strip()
        found[line] = Pragma(line, col + offset + 1, match.group("word"), reason)
    return found
