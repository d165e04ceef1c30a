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

from collections.abc import Callable

from seedbed._core.contract import broken
from seedbed.faults._episodes import LATER, Episode, Ledger, Link, Outcome
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
    if ledger.is_down(name) or not ledger.running(name):
        return False
    if not ledger.sim.crash(name):
        broken("a running node crashes when the nemesis crashes it", node=name)

    def end() -> bool:
        ledger.sim.restart(name)
        return False  # counted when it hit a running node

    delay = ledger.stream.exponential(ledger.profile.downtime_mean, f"nemesis: {name} downtime")
    episode = Episode(kind, end, down=[name], crashed=name, bounded=bounded)
    ledger.begin(episode, delay)
    return True


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
    if ledger.is_down(name) or not ledger.sim.crash_at_operation(
        name, operation, after=after, count=count
    ):
        return False

    def end() -> bool:
        fired = ledger.sim.disarm_operation(name)
        if fired:
            ledger.sim.restart(name)
        return fired

    delay = stream.exponential(ledger.profile.fault_duration_mean, f"nemesis: {name} armed time")
    ledger.begin(Episode("operation_crash", end, down=[name], crashed=name), delay)
    return LATER


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
    key = (name, "pause")  # one pause per node at a time
    node = ledger.sim.nodes.get(name)
    ref = node.ref
    if (
        ledger.is_down(name)
        or not ledger.running(name)
        or not ledger.is_free(key)
        or seconds <= 0
        or not ledger.sim.pause(name, seconds)
    ):
        return False

    def end() -> bool:
        ledger.sim.resume(name)  # at its time, or early (the liveness phase)
        return node.ref is ref and node.up

    ledger.begin(Episode("pause", end, links=[key], down=[name]), seconds)
    return LATER


def bounce(ledger: Ledger) -> Outcome:
    """A running host crashes and restarts at once."""
    hosts = ledger.hosts()
    if not hosts:
        return None
    name = ledger.stream.choice(hosts, "nemesis: bounce which node")
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
    if not ledger.sim.jump_clock(name, seconds):
        return False
    ledger.sim.loop.trace.emit("nemesis", "clock_jump", name, int(seconds * 1e9))
    return True


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
    if not ledger.sim.skew_clock(name, drift, step):
        return False
    ledger.sim.loop.trace.emit("nemesis", "clock_skew", name, int(drift * 1e9), int(step * 1e9))
    return True


def disk_fault(ledger: Ledger) -> Outcome:
    """For a drawn time a node's disk fails one read, write or fsync in five."""
    return _degrade(ledger, "disk_fault", {"error_probability": DISK_FAULT_PROBABILITY})


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


def _degrade(ledger: Ledger, kind: str, odds: dict[str, float], longer: float = 1.0) -> Outcome:
    """One node's disk degraded for a drawn time; effective if it injected a fault of
    the raised kinds meanwhile."""
    names = ledger.names()
    if not names:
        return None
    what = kind.replace("_", " ")
    name = ledger.stream.choice(names, f"nemesis: {what} which node")
    key = (name, name)  # a disk holds one fault at a time, like a link
    if not ledger.is_free(key) or not ledger.sim.degrade_disk(name, **odds):
        return False

    def end() -> bool:
        return ledger.sim.restore_disk(name) > 0

    # disk_fault's label is kept as it was: it is part of existing seeds' meaning
    label = f"nemesis: {name} disk" if kind == "disk_fault" else f"nemesis: {name} {what} time"
    delay = ledger.stream.exponential(ledger.profile.fault_duration_mean * longer, label)
    ledger.begin(Episode(kind, end, links=[key]), delay)
    return LATER


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

    Effective when some traffic waited at a cut or held link when it was
    repaired (a stalled stream, a held datagram); dropped datagrams do not count.
    """
    free = [link for link in links if ledger.is_free(link)]
    if not free:
        return None
    for a, b in free:
        apply(a, b, one_way=True)

    def end() -> bool:
        waiting = {(link.src, link.dst) for link in ledger.sim.links() if link.waiting}
        caught = any(link in waiting for link in free)
        for a, b in free:
            undo(a, b, one_way=True)
        return caught

    if delay is None:
        delay = ledger.stream.exponential(
            ledger.profile.fault_duration_mean, f"nemesis: {kind} time"
        )
    ledger.begin(Episode(kind, end, links=free, down=isolated), delay)
    return LATER
