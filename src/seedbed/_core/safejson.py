"""One JSON line from an untrusted file, decoded without surprises.

`json.loads` on its own raises `RecursionError` on deep nesting and a bare
`ValueError` on integers longer than Python's 4,300-digit limit; a reader
must turn both into its own one-line error naming the file and line. Here
every defect is a `BadJSON` with a short reason, and nesting is capped well
below the interpreter's recursion limit, so code walking the decoded value
recursively is safe too. Standard library only: `seedbed.check` uses it.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # arrays/objects inside each other; seedbed writes at most 3


class BadJSON(ValueError):
    """A line is not JSON seedbed can use; `str()` is the short reason."""


def _refuse_constant(name: str) -> Any:
    raise BadJSON(f"{name} is not a JSON number")


def loads(text: str, *, allow_nan: bool = True) -> Any:
    """Decode one JSON document; every defect is a `BadJSON` with a reason."""
    if text.count("[") + text.count("{") > MAX_DEPTH:  # cheap: only then measure
        _check_depth(text)
    try:
        if allow_nan:
            return json.loads(text)
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise BadJSON(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except BadJSON:
        raise
    except ValueError as exc:  # an integer past the interpreter's digit limit
        raise BadJSON(f"a number is too long ({str(exc).split(':')[0]})") from None
    except RecursionError:
        raise BadJSON(f"nested more than {MAX_DEPTH} deep") from None


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (brackets inside strings do not count)."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise BadJSON(f"nested more than {MAX_DEPTH} deep")
        elif char in "]}":
            depth -= 1
