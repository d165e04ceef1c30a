"""An mkdocs hook: the field tables of docs/reference/configs.md, from the code.

A line `<!-- config-fields: seedbed.NetworkConfig -->` becomes a table of
that dataclass's fields: name, type, default, and the values it accepts. The
accepted values are the validator's own words: each field is set to a value
no validator accepts, and the `UsageError` it raises says "must be <what it
accepts>". So the table cannot drift from the checks (a field with no check
says so).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from typing import Any

MARKER = re.compile(r"^<!-- config-fields: ([\w.]+) -->$", re.MULTILINE)
ALLOWED = re.compile(r" must be (.*), got ")


class _Probe:
    """A value of no type any validator accepts."""

    def __repr__(self) -> str:
        return "<probe>"


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARKER.sub(lambda match: _table(match.group(1)), markdown)


def _table(dotted: str) -> str:
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    rows = ["| field | type | default | accepts |", "|---|---|---|---|"]
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        default = _default(item)
        accepts = _accepts(cls, item, default)
        rows.append(f"| `{item.name}` | {_type(item.type)} | `{default!r}` | {accepts} |")
    return "\n".join(rows)


def _default(item: dataclasses.Field[Any]) -> Any:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return "(required)"


def _type(annotation: object) -> str:
    """The type as a reader writes it ("int | None"), outside a code span: a
    table's escaped pipe inside one would show its backslash."""
    text = (
        annotation
        if isinstance(annotation, str)
        else getattr(annotation, "__name__", repr(annotation))
    )
    return str(text).replace("|", "\\|")


def _accepts(cls: type, item: dataclasses.Field[Any], default: object) -> str:
    try:
        cls(**{item.name: _Probe()})
    except Exception as error:  # the validator's refusal names what it accepts
        found = ALLOWED.search(str(error))
        if found:
            allowed = found.group(1).replace("|", "\\|")
            return f"{allowed}, or None" if default is None else allowed
        return "checked with the other fields (see above)"
    return "not checked"
