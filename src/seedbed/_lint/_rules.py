"""The rules of `seedbed lint`: one code each, what it finds, why it matters, the fix.

The codes are grouped by what leaks:

- SB1xx: the real clock or the machine's entropy read where interposition
  cannot reach (at import time, or through a copy it never rebinds);
- SB2xx: random generators whose seed is not the run's;
- SB3xx: escapes (threads, processes, sockets, blocking waits): they raise
  `SimulationEscape` inside a run, and the lint finds them before one;
- SB4xx: orders set by hashing or memory addresses;
- SB5xx: the pragmas themselves.

The rule table of docs/reference/lint-rules.md is this table (a test checks that every code is
there); keep the wording of each in step.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    code: str
    what: str
    why: str
    fix: str


_TABLE = (
    Rule(
        "SB101",
        "a clock read at import time",
        "module globals, class attributes and default values are computed once, when the "
        "module is imported, from the real clock: every process gets a different value "
        "and no run can change it",
        "read the clock inside the code that runs (a default of None, read in the body)",
    ),
    Rule(
        "SB102",
        "entropy or a process id read at import time",
        "the value comes from the machine (OS entropy, the import-time state of `random`, "
        "the real pid) before any run, and differs in every process",
        "draw it inside the code that runs, where seedbed supplies it from the seed",
    ),
    Rule(
        "SB103",
        "a copy of a clock that interposition cannot rebind",
        "seedbed rebinds copies of the clock functions in globals, closures, defaults and "
        "classes, but not bound methods such as `datetime.now` or copies in tuples, lists "
        "and sets: those keep reading the real clock inside a run",
        "call the function where it is needed (`datetime.datetime.now()`), or keep the "
        "module function (`time.time`) in a plain variable",
    ),
    Rule(
        "SB104",
        "a clock or entropy read in a cached function",
        "`functools.cache` keeps the first value for the life of the process: every later "
        "run (the next seed of a sweep's worker) sees the first run's time or draw",
        "do not cache it, or cache only what does not depend on the clock or the seed",
    ),
    Rule(
        "SB201",
        "a random generator without a seed",
        "outside a run it is seeded from OS entropy, and generators are usually made in "
        "constructors and setup code, which often run before the simulation starts; "
        "`SystemRandom` cannot be seeded at all",
        "pass a seed: `random.Random(seed)`, with the seed drawn inside the run or "
        "derived from the run's seed",
    ),
    Rule(
        "SB202",
        "numpy's random numbers",
        "seedbed does not interpose numpy: its global generator and an unseeded "
        "`default_rng()` draw from OS entropy even inside a run",
        "make `numpy.random.default_rng(seed)` with a seed drawn from `random` inside the run",
    ),
    Rule(
        "SB203",
        "a random generator made at import time",
        "its state lives as long as the process: seeds run one after another in one "
        "process (a sweep's worker) see each other's draws, so a seed's result depends on "
        "the seeds before it",
        "make the generator inside the run (in the node's main or the client)",
    ),
    Rule(
        "SB301",
        "a raw thread (`_thread.start_new_thread`)",
        "it bypasses `threading.Thread`, which seedbed runs as a simulated thread; a raw "
        "one would run outside the simulation on real time, so a run refuses it with "
        "SimulationEscape",
        "start a `threading.Thread` (or use asyncio tasks)",
    ),
    Rule(
        "SB302",
        "a child process",
        "a process runs outside the simulation; starting one inside a run raises SimulationEscape",
        "model the program as a simulated node (sim.host) or replace the call with a fake",
    ),
    Rule(
        "SB303",
        "a real socket or network call",
        "real connections and name lookups reach outside the simulation; inside a run "
        "they raise SimulationEscape",
        "use asyncio.open_connection/start_server (or loop.create_connection), which the "
        "simulated network serves",
    ),
    Rule(
        "SB304",
        "a blocking sleep",
        "`time.sleep` blocks the whole simulation in real time; inside a run it raises "
        "SimulationEscape",
        "await asyncio.sleep(...)",
    ),
    Rule(
        "SB305",
        "a real wait on file descriptors or a timer signal",
        "`select`, `poll`, `epoll` and `signal.alarm/setitimer` wait in real time; "
        "inside a run they raise SimulationEscape",
        "use asyncio streams and asyncio.timeout(...) / loop.call_later(...)",
    ),
    Rule(
        "SB401",
        "an order set by id() or hash()",
        "`id()` is a memory address and `hash()` of a string changes with PYTHONHASHSEED: "
        "sorting or comparing by them gives a different order in every process",
        "order by a value of the object's own (a name, a number, a creation counter)",
    ),
    Rule(
        "SB402",
        "a value of hash() computed with or formatted",
        "the hash of a string or bytes changes with PYTHONHASHSEED, and an object "
        "without `__hash__` hashes by address: shard choices, keys or output built "
        "from it differ between processes",
        "use a stable digest (zlib.crc32, hashlib) of the object's own data",
    ),
    Rule(
        "SB403",
        "a value of id() computed with, formatted or printed",
        "`id()` is a memory address: printed, formatted or computed with, it differs "
        "between processes and runs",
        "use a value of the object's own (a name, a counter); `id()` is fine as a dict key",
    ),
    Rule(
        "SB411",
        "iteration over a set",
        "a set of strings (or of objects hashed by address) iterates in an order that "
        "changes between processes; a loop, a list or a join over it leaks that order",
        "iterate `sorted(the_set)`, or keep a dict (insertion-ordered); if the set holds "
        "ints or tasks, annotate it (`set[int]`, `set[asyncio.Task[None]]`)",
    ),
    Rule(
        "SB501",
        "a pragma without a reason, or not understood",
        "an exception to a determinism rule must say why it is safe, for the next reader",
        "write `# seedbed: allow <why this use cannot change a run>`",
    ),
    Rule(
        "SB502",
        "a pragma that suppresses nothing",
        "a stale exception hides the next real finding on its line",
        "remove the pragma",
    ),
)

RULES: dict[str, Rule] = {rule.code: rule for rule in _TABLE}


def rules() -> tuple[Rule, ...]:
    """Every rule, in code order."""
    return _TABLE
