"""seedbed's version, written into every trace header, and the trace format.

`TRACE_FORMAT` counts changes to what a trace's events and hash mean: a
replay of a trace written under another format could only diverge, so the
reader refuses it in one line instead (see `tracefile`). Format 1 (no `format`
key) hashed draws and events only; format 2 places every event at its step
and virtual time, digests delivered payloads and seals the outcome.
"""

VERSION = "0.1.0"
TRACE_FORMAT = 2
