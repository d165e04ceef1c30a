"""How the nemesis injects each world fault class, through the world's public verbs.

One function per class, named in the fault-class table (`_classes`). Each
picks its target with labelled draws on the nemesis's stream, applies the
fault with a `Simulation` verb (`crash`, `bounce`, `restart`, `partition`,
`repair`, `hold`, `release`, `jump_clock`, `degrade_disk`, `restore_disk`,
`skew_clock`, `links`), and returns an `Outcome`: None when there was nothing to do (not
injected), True or False (injected; effective or not), or `LATER` for a
fault whose end tells whether it was effective. A fault that lasts is an
`Episode` the ledger begins and ends, which keeps the rules (one fault per
link, `max_down`, an episode ends once).

The order of the draws in each function is part of every seed's meaning:
reordering them changes what a seed does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from seedbed._core.contract import broken
from seedbed.faults._episodes import LATER, Episode, Ledger, Link, Outcome
from seedbed.faults._record import links_target
from seedbed.net._links import LinkTraffic
from seedbed.world._operations import OPERATIONS

STALL_FIRST = 0.2  # seconds: TCP's first retransmission timeout, doubled per loss
SPIKE_MAX = 0.5
JUMP_MAX = 10.0
DISK_FAULT_PROBABILITY = 0.2
# Real crystals: a few tens of ppm, a few hundred on cheap or hot hardware.
DRIFT_MAX = 2e-4
SKEW_STEP_MAX = 0.25  # seconds: an NTP-disciplined clock's error, well below a jump
MISDIRECT_PROBABILITY = 0.2  # a damaging disk misdirects one write in five
# A bad sector reads back damaged often: one read in two (each read on its
# own: a re-read may come back clean, as the disk model has it).
CORRUPTION_PROBABILITY = 0.5
FSYNC_FAILURE_PROBABILITY = 0.5
LATENT_FACTOR = 10.0
PAUSE_MAX = 2.0  # seconds: a long stop-the-world collection, a VM's live migration
STALL_MIN, STALL_MAX = 0.005, 0.3  # seconds: a node stall, a short collection or hiccup

Injector = Callable[[Ledger], Outcome]


# -- nodes --------------------------------------------------------------------


def crash(ledger: Ledger) -> Outcome:
    """A running host crashes; it restarts after a drawn downtime."""
    return _crash(ledger, ledger.hosts(), "crash")


def client_crash(ledger: Ledger) -> Outcome:
    """A running client crashes; it restarts (its main from the start) after a downtime."""
    return _crash(ledger, ledger.clients(), "client_crash")


def _crash(ledger: Ledger, names: list[str], kind: str) -> Outcome:
    bounded = kind == "crash"
    if not names or (bounded and not ledger.room_to_take_down()):
        return None
    name = ledger.stream.choice(names, f"nemesis: {kind} which node")
    ledger.aim(name, [name])
    if ledger.is_down(name) or not ledger.running(name):
        return False
    torn = _torn(ledger, name)
    if not ledger.sim.crash(name):
        broken("a running node crashes when the nemesis crashes it", node=name)
    did = {"writes torn": _torn(ledger, name) - torn}

    def end() -> None:
        ledger.sim.restart(name)

    delay = ledger.stream.exponential(ledger.profile.downtime_mean, f"nemesis: {name} downtime")
    episode = Episode(kind, end, down=[name], crashed=name, bounded=bounded, effect=lambda: did)
    ledger.begin(episode, delay)
    return True  # it hit a running node


def _torn(ledger: Ledger, name: str) -> int:
    """Writes a crash of node `name` left torn so far (its disk's count)."""
    return ledger.sim.disk_faults(name).get("torn_write", 0)


def operation_crash(ledger: Ledger) -> Outcome:
    """A running host is armed to crash just before or after its n-th (1-5) operation
    of a drawn kind; it restarts when the fault ends, a drawn time later.

    Held down (against `max_down`) from the arming: it may crash at any
    moment. Effective if it crashed: the operation came while armed.
    """
    hosts = ledger.hosts()
    if not hosts or not ledger.room_to_take_down():
        return None
    stream = ledger.stream
    name = stream.choice(hosts, "nemesis: operation crash which node")
    operation = stream.choice(list(OPERATIONS), f"nemesis: operation crash {name} at what")
    after = stream.chance(0.5, f"nemesis: operation crash {name} after (not before)")
    count = stream.between(1, 5, f"nemesis: operation crash {name} at which {operation}")
    when = "after" if after else "before"
    ledger.aim(name, [name], f"{when} its {_ordinal(count)} {operation} from then")
    if ledger.is_down(name) or not ledger.sim.crash_at_operation(
        name, operation, after=after, count=count
    ):
        return False

    def end() -> None:
        if ledger.sim.disarm_operation(name):
            ledger.sim.restart(name)

    def effect() -> dict[str, int]:
        return {"crashed at the operation": int(ledger.sim.operation_fired(name))}

    delay = stream.exponential(ledger.profile.fault_duration_mean, f"nemesis: {name} armed time")
    episode = Episode("operation_crash", end, down=[name], crashed=name, effect=effect)
    ledger.begin(episode, delay)
    return LATER


def _ordinal(n: int) -> str:
    return f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}"


def pause(ledger: Ledger) -> Outcome:
    """A running node's code stops for up to PAUSE_MAX seconds (a GC pause, a
    stopped VM) while the others run; held down (against `max_down`) meanwhile.

    Effective if it came back the same incarnation it was paused as, its
    timers and leases having had the pause to expire around it.
    """
    names = ledger.names()
    if not names or not ledger.room_to_take_down():
        return None
    stream = ledger.stream
    name = stream.choice(names, "nemesis: pause which node")
    seconds = stream.uniform(0.0, PAUSE_MAX, f"nemesis: pause {name} seconds")
    return _stop_node(ledger, "pause", name, seconds, down=True)


def node_stall(ledger: Ledger) -> Outcome:
    """A running node's code stops for a short drawn time (log-uniform in
    STALL_MIN-STALL_MAX: a collection, a scheduler hiccup) while the others
    run. Slow, not down: not counted against `max_down`, so it may hit a
    node the other faults left as the last of a quorum."""
    names = ledger.names()
    if not names:
        return None
    stream = ledger.stream
    name = stream.choice(names, "nemesis: node stall which node")
    low, high = math.log(STALL_MIN), math.log(STALL_MAX)
    seconds = math.exp(stream.uniform(low, high, f"nemesis: node stall {name} seconds"))
    return _stop_node(ledger, "node_stall", name, seconds, down=False)


def _stop_node(ledger: Ledger, kind: str, name: str, seconds: float, *, down: bool) -> Outcome:
    """Pause node `name` for `seconds` as fault `kind` (one stop per node at a
    time). Effective if it came back the same incarnation it was stopped as,
    its timers and leases having had the stop to expire around it."""
    key = (name, "pause")
    node = ledger.sim.nodes.get(name)
    ref = node.ref
    ledger.aim(name, [name], f"for {seconds:.3f}s")
    if (
        ledger.is_down(name)
        or not ledger.running(name)
        or not ledger.is_free(key)
        or seconds <= 0
        or not ledger.sim.pause(name, seconds)
    ):
        return False

    def end() -> None:
        ledger.sim.resume(name)  # at its time, or early (the liveness phase)

    def effect() -> dict[str, int]:
        return {"paused while running": int(node.ref is ref and node.up)}

    held = [name] if down else []
    ledger.begin(Episode(kind, end, links=[key], down=held, effect=effect), seconds)
    return LATER


def bounce(ledger: Ledger) -> Outcome:
    """A running host crashes and restarts at once."""
    hosts = ledger.hosts()
    if not hosts:
        return None
    name = ledger.stream.choice(hosts, "nemesis: bounce which node")
    ledger.aim(name, [name])
    if ledger.is_down(name) or not ledger.running(name):
        return False
    ledger.sim.bounce(name)
    return True


def clock_jump(ledger: Ledger) -> Outcome:
    """A running node's wall clock jumps up to JUMP_MAX seconds either way."""
    names = ledger.names()
    if not names:
        return None
    name = ledger.stream.choice(names, "nemesis: clock jump which node")
    seconds = ledger.stream.uniform(-JUMP_MAX, JUMP_MAX, f"nemesis: clock jump {name}")
    ledger.aim(name, [name], f"wall clock {seconds:+.3f}s")
    if not ledger.sim.jump_clock(name, seconds):
        return False
    ledger.sim.loop.trace.emit("nemesis", "clock_jump", name, int(seconds * 1e9))
    return _read_later(ledger, "clock_jump", name)


def _read_later(ledger: Ledger, kind: str, name: str) -> Outcome:
    """A stepped wall clock is effective once its node reads it."""
    reads = ledger.sim.wall_clock_reads(name)
    ledger.watch(kind, lambda: {"wall clock reads": ledger.sim.wall_clock_reads(name) - reads})
    return LATER


def clock_skew(ledger: Ledger) -> Outcome:
    """A running node's wall clock takes a new error: a rate error up to DRIFT_MAX
    either way (from now on, continuously) and a step up to SKEW_STEP_MAX."""
    names = ledger.names()
    if not names:
        return None
    stream = ledger.stream
    name = stream.choice(names, "nemesis: clock skew which node")
    drift = stream.uniform(-DRIFT_MAX, DRIFT_MAX, f"nemesis: clock drift {name}")
    step = stream.uniform(-SKEW_STEP_MAX, SKEW_STEP_MAX, f"nemesis: clock skew step {name}")
    ledger.aim(name, [name], f"drift {drift * 1e6:+.0f} ppm, step {step:+.3f}s")
    if not ledger.sim.skew_clock(name, drift, step):
        return False
    ledger.sim.loop.trace.emit("nemesis", "clock_skew", name, int(drift * 1e9), int(step * 1e9))
    return _read_later(ledger, "clock_skew", name)


def disk_fault(ledger: Ledger) -> Outcome:
    """For a drawn time a node's disk fails one read, write or fsync in five."""
    odds = dict.fromkeys(("read_error", "write_error", "fsync_error"), DISK_FAULT_PROBABILITY)
    return _degrade(ledger, "disk_fault", odds)


def disk_corruption(ledger: Ledger) -> Outcome:
    """For a drawn time a node's disk returns one read in two with a bit flipped.

    Latent, like a bad sector: it lasts LATENT_FACTOR times a fault's mean,
    since a program reads its files back mostly when it recovers from a crash.
    """
    return _degrade(
        ledger, "disk_corruption", {"corrupt_read": CORRUPTION_PROBABILITY}, LATENT_FACTOR
    )


def misdirected_write(ledger: Ledger) -> Outcome:
    """For a drawn time a node's disk lands one write in five at another sector."""
    return _degrade(ledger, "misdirected_write", {"misdirect_write": MISDIRECT_PROBABILITY})


def fsync_failure(ledger: Ledger) -> Outcome:
    """For a drawn time a node's disk fails one fsync in two, losing the unsynced writes."""
    return _degrade(ledger, "fsync_failure", {"fsync_error": FSYNC_FAILURE_PROBABILITY})


# What each disk fault kind did to the program, in words (`FaultRecord.did`).
_DISK_DID = {
    "read_error": "reads failed",
    "write_error": "writes failed",
    "fsync_error": "fsyncs failed",
    "corrupt_read": "reads corrupted",
    "misdirect_write": "writes misdirected",
}


def _degrade(ledger: Ledger, kind: str, odds: dict[str, float], longer: float = 1.0) -> Outcome:
    """One node's disk degraded for a drawn time (`odds`: disk fault kind ->
    probability); effective once it injected a fault of those kinds."""
    names = ledger.names()
    if not names:
        return None
    what = kind.replace("_", " ")
    name = ledger.stream.choice(names, f"nemesis: {what} which node")
    ledger.aim(f"{name}'s disk", [name])
    key = (name, name)  # a disk holds one fault at a time, like a link
    settings = _disk_settings(odds)
    if not ledger.is_free(key) or not ledger.sim.degrade_disk(name, **settings):
        return False
    before = ledger.sim.disk_faults(name)

    def effect() -> dict[str, int]:
        now = ledger.sim.disk_faults(name)
        return {_DISK_DID[k]: now.get(k, 0) - before.get(k, 0) for k in odds}

    def end() -> None:
        ledger.sim.restore_disk(name)

    # disk_fault's label is kept as it was: it is part of existing seeds' meaning
    label = f"nemesis: {name} disk" if kind == "disk_fault" else f"nemesis: {name} {what} time"
    delay = ledger.stream.exponential(ledger.profile.fault_duration_mean * longer, label)
    ledger.begin(Episode(kind, end, links=[key], effect=effect), delay)
    return LATER


def _disk_settings(odds: dict[str, float]) -> dict[str, float]:
    """`Simulation.degrade_disk`'s keywords for `odds` (the three errors together
    are its `error_probability`)."""
    errors = ("read_error", "write_error", "fsync_error")
    if all(kind in odds for kind in errors):
        return {"error_probability": odds["read_error"]}
    return dict(odds)


# -- links --------------------------------------------------------------------


def partition(ledger: Ledger) -> Outcome:
    """One of three cuts, drawn: a node isolated, random halves, a one-way cut of a pair."""
    names = ledger.names()
    if len(names) < 2:
        return None
    stream = ledger.stream
    mode = stream.below(3, "nemesis: partition mode (isolate, halves, one-way)")
    isolated: list[str] = []
    if mode == 0:
        if not ledger.room_to_take_down():
            return None
        node = stream.choice(names, "nemesis: isolate which node")
        links = _all_links_of(node, names)
        isolated = [node]
    elif mode == 1:
        order = stream.permutation(len(names), "nemesis: random halves")
        first = {names[i] for i in order[: len(names) // 2]}
        links = [(a, b) for a in names for b in names if (a in first) != (b in first)]
    else:
        pair = stream.permutation(len(names), "nemesis: one-way cut of a pair")[:2]
        links = [(names[pair[0]], names[pair[1]])]
    sim = ledger.sim
    return _cut(ledger, "partition", links, sim.partition, sim.repair, isolated)


def clog(ledger: Ledger) -> Outcome:
    """A pair's links hold their traffic (queued, in order) for a drawn time."""
    a, b = _pair(ledger, "clog")
    if a is None or b is None:
        return None
    return _cut(ledger, "clog", [(a, b), (b, a)], ledger.sim.hold, ledger.sim.release, [])


def stream_stall(ledger: Ledger) -> Outcome:
    """One direction of a pair stalls for TCP's retransmission backoff (1-5 losses)."""
    a, b = _pair(ledger, "stream stall")
    if a is None or b is None:
        return None
    losses = ledger.stream.between(1, 5, "nemesis: stream stall lost retransmissions")
    delay = STALL_FIRST * (2**losses - 1)
    sim = ledger.sim
    return _cut(ledger, "stream_stall", [(a, b)], sim.hold, sim.release, [], delay)


def latency_spike(ledger: Ledger) -> Outcome:
    """Every link of one node holds its traffic for up to SPIKE_MAX seconds."""
    names = ledger.names()
    if len(names) < 2:
        return None
    node = ledger.stream.choice(names, "nemesis: latency spike which node")
    delay = ledger.stream.uniform(0.0, SPIKE_MAX, f"nemesis: latency spike {node}")
    links = _all_links_of(node, names)
    sim = ledger.sim
    return _cut(ledger, "latency_spike", links, sim.hold, sim.release, [], delay)


def _all_links_of(node: str, names: list[str]) -> list[Link]:
    """Both directions between `node` and every other node, in node order."""
    return [(a, b) for other in names if other != node for a, b in
            ((node, other), (other, node))]  # fmt: skip


def _pair(ledger: Ledger, what: str) -> tuple[str | None, str | None]:
    names = ledger.names()
    if len(names) < 2:
        return None, None
    order = ledger.stream.permutation(len(names), f"nemesis: {what} which pair")
    return names[order[0]], names[order[1]]


def _cut(
    ledger: Ledger,
    kind: str,
    links: list[Link],
    apply: Callable[..., None],
    undo: Callable[..., None],
    isolated: list[str],
    delay: float | None = None,
) -> Outcome:
    """Put the free ones of `links` into a fault; end it after `delay` (or a drawn time).

    Effective once it changed what the program saw on one of its links: a
    datagram dropped or held, a stream's bytes stalled, a connect blocked.
    """
    free = [link for link in links if ledger.is_free(link)]
    if not free:
        return None
    sim = ledger.sim
    ledger.aim(*links_target(free, ledger.names()))
    for a, b in free:
        apply(a, b, one_way=True)
    before = [sim.traffic(a, b) for a, b in free]

    def effect() -> dict[str, int]:
        now = [sim.traffic(a, b) for a, b in free]
        return {
            what: sum(getattr(new, field) - getattr(old, field)
                      for old, new in zip(before, now, strict=True))
            for what, field in _LINK_DID
        }  # fmt: skip

    def hit() -> list[str]:
        now = [sim.traffic(a, b) for a, b in free]
        return [f"{a}->{b}" for (a, b), old, new in zip(free, before, now, strict=True)
                if _caught(old, new)]  # fmt: skip

    def end() -> None:
        for a, b in free:
            undo(a, b, one_way=True)

    if delay is None:
        delay = ledger.stream.exponential(
            ledger.profile.fault_duration_mean, f"nemesis: {kind} time"
        )
    episode = Episode(kind, end, links=free, down=isolated, effect=effect, hit=hit)
    ledger.begin(episode, delay)
    return LATER


def _caught(old: LinkTraffic, new: LinkTraffic) -> bool:
    return any(getattr(new, field) > getattr(old, field) for _, field in _LINK_DID)


# What a closed link did to its traffic, in words, and its `LinkTraffic` field.
_LINK_DID = (
    ("datagrams dropped", "dropped"),
    ("datagrams held", "held"),
    ("streams stalled", "stalled"),
    ("connects blocked", "blocked"),
)
