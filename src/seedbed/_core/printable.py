"""Text from a simulated program, made safe to show on a terminal.

A failure message, a node's name, an assertion's message, a value's repr:
all come from the program under test, and may hold control characters. An
escape sequence (`\x1b]0;...\x07` sets the window title, `\x1b[2J` clears
the screen) acts on the terminal that prints it; a carriage return draws
over the line before it; a bidirectional control such as U+202E RIGHT-TO-LEFT
OVERRIDE shows what follows reversed (`gnp.exe` reads as `exe.png`).
`terminal(text)` writes each as its Python escape (`\\x1b`, `\\u202e`),
keeping newlines and tabs, which seedbed's own reports are made of; every
line the command line prints passes through it. HTML pages show the same
bidirectional controls as `<U+202E>` (`BIDI`), and escape the rest as HTML.
"""

from __future__ import annotations

import re

# Bidirectional controls: the marks, embeddings, overrides and isolates.
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029"  # C0 but \t \n, DEL, C1, line separators
    + "".join(chr(code) for code in BIDI)
    + "]"
)


def terminal(text: str) -> str:
    """`text` with every control character but newline and tab written as its escape."""
    return _CONTROL.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
