"""Which standard-library names read the real world, by fully qualified name.

Two kinds, following what `seedbed.aio` interposes (docs/reference/interposition.md):

- `CLOCKS` and `ENTROPY` are virtualized *during* a run, so a call inside a
  function is fine; read at import time (module level, class bodies, default
  values, decorators) they hold the machine's value for ever.
- `ESCAPES` raise `SimulationEscape` inside a run wherever they are called,
  so the lint reports them everywhere.

`asyncio.to_thread` and `loop.run_in_executor` are absent on purpose:
seedbed's loop runs the function inline, on its own thread, so they start no
thread and are deterministic (the function they run is linted like any other).
"""

from __future__ import annotations

_TIME_CLOCKS = (
    "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
    "process_time", "process_time_ns", "thread_time", "thread_time_ns",
    "clock_gettime", "clock_gettime_ns",
)  # fmt: skip

#: Clock functions read at import time (SB101).
CLOCKS: frozenset[str] = frozenset(
    [f"time.{name}" for name in _TIME_CLOCKS]
    + ["os.times"]
    + [f"datetime.datetime.{name}" for name in ("now", "utcnow", "today")]
    + ["datetime.date.today"]
)

#: Calendar functions that read "now" when called without a time (SB101).
#: name -> how many positional arguments they take before the time.
NOW_BY_DEFAULT: dict[str, int] = {
    "time.localtime": 0,
    "time.gmtime": 0,
    "time.ctime": 0,
    "time.asctime": 0,
    "time.strftime": 1,
}

#: Bound methods of datetime's classes: a copy is out of interposition's reach (SB103).
BOUND_CLOCKS: frozenset[str] = frozenset(
    [f"datetime.datetime.{name}" for name in ("now", "utcnow", "today")] + ["datetime.date.today"]
)

#: The module functions of `random` (bound methods of its hidden generator).
RANDOM_FUNCTIONS = (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
    "triangular", "gauss", "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate",
    "gammavariate", "betavariate", "paretovariate", "weibullvariate", "binomialvariate",
    "getrandbits", "randbytes",
)  # fmt: skip

_SECRETS = ("token_bytes", "token_hex", "token_urlsafe", "choice", "randbelow", "randbits")

#: Entropy (and process identity) read at import time (SB102).
ENTROPY: frozenset[str] = frozenset(
    [f"random.{name}" for name in RANDOM_FUNCTIONS]
    + [f"secrets.{name}" for name in _SECRETS]
    + ["os.urandom", "os.getrandom", "uuid.uuid1", "uuid.uuid4", "os.getpid", "os.getppid"]
)

#: Decorators that keep a function's result for the life of the process (SB104).
CACHES = frozenset({"functools.cache", "functools.lru_cache"})

#: Generators of the standard library: seeded by their first argument.
SEEDABLE = frozenset({"random.Random"})
#: Generators that cannot be seeded at all (SB201 wherever they are made).
UNSEEDABLE = frozenset({"random.SystemRandom", "secrets.SystemRandom"})

#: numpy's generator classes (not its global functions): seeded by the first argument.
NUMPY_SEEDABLE = frozenset(
    {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.SeedSequence"}
)
#: numpy names under `numpy.random` that draw nothing by themselves.
NUMPY_QUIET = frozenset(
    {
        "numpy.random.Generator", "numpy.random.BitGenerator", "numpy.random.PCG64",
        "numpy.random.PCG64DXSM", "numpy.random.MT19937", "numpy.random.Philox",
        "numpy.random.SFC64",
    }
)  # fmt: skip

_OS_PROCESSES = (
    "system", "popen", "fork", "forkpty", "execl", "execle", "execlp", "execlpe", "execv",
    "execve", "execvp", "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv",
    "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp",
)  # fmt: skip
_SUBPROCESS = ("run", "Popen", "call", "check_call", "check_output", "getoutput",
               "getstatusoutput")  # fmt: skip
_MULTIPROCESSING = ("Process", "Pool", "Manager", "get_context", "set_start_method")
_SOCKETS = (
    "socket", "create_connection", "create_server", "socketpair", "fromfd", "getaddrinfo",
    "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo",
)  # fmt: skip

#: Calls that escape the simulation, anywhere: qualified name -> rule.
ESCAPES: dict[str, str] = {
    "_thread.start_new_thread": "SB301",
    "_thread.start_new": "SB301",
    **{f"os.{name}": "SB302" for name in _OS_PROCESSES},
    **{f"subprocess.{name}": "SB302" for name in _SUBPROCESS},
    **{f"multiprocessing.{name}": "SB302" for name in _MULTIPROCESSING},
    "concurrent.futures.ProcessPoolExecutor": "SB302",
    "concurrent.futures.process.ProcessPoolExecutor": "SB302",
    "asyncio.create_subprocess_exec": "SB302",
    "asyncio.create_subprocess_shell": "SB302",
    "pty.spawn": "SB302",
    **{f"socket.{name}": "SB303" for name in _SOCKETS},
    "urllib.request.urlopen": "SB303",
    "http.client.HTTPConnection": "SB303",
    "http.client.HTTPSConnection": "SB303",
    "time.sleep": "SB304",
    **{f"select.{name}": "SB305" for name in ("select", "poll", "epoll", "devpoll", "kqueue")},
    "signal.alarm": "SB305",
    "signal.setitimer": "SB305",
}

#: Base classes that make a class a process (SB302). A `threading.Thread` is
#: not one: inside a run it is a simulated thread (`seedbed.aio._threadlanes`).
ESCAPE_BASES: dict[str, str] = {
    "multiprocessing.Process": "SB302",
}
