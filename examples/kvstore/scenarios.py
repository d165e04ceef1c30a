"""The kvstore's scenarios: the production code under seeded pressure, with its oracles.

    seedbed run examples.kvstore.scenarios:crash_recovery --seed 7
    seedbed sweep examples.kvstore.scenarios:swarm --seeds 300

Every scenario builds the same world (see `KVWorld`): three replicas (five,
under swarm, sometimes), clients doing single-key operations and clients
doing transactions, on 1-5 ms network hops (5-60 ms in
`crash_recovery_wan`) and disks taking 0.1-2 ms per operation. The oracles:

- continuous, inside the replicas' and clients' reports (`oracles.Oracle`,
  with `seedbed.always`): at most one leader per term, holding a majority's
  votes; one vote per replica and term; no replica's commit index going
  backwards; every replica applying the same entry at each index, with
  the same result; a
  leader's match index within what the follower holds; commits of the
  leader's term held by a majority; what a replica acknowledged surviving
  its restart; every ok answer naming where its request was applied; a
  log's terms never going down; the storage's account of the log file
  matching the replica's log;
- liveness, after the faults stop (`settled`): one leader, every replica
  following it in its term, all at one commit index, none damaged;
- liveness, after the faults stop (`progressed`): at least `min_ok` client
  operations succeeded, a get and a transaction among them (else the
  histories' checks could not refuse anything: a false green). Clients
  keep working past the planned time until they have, so faults that
  blocked every operation while they lasted are no failure, but a store
  that cannot make progress once they stop is;
- at the end (`consistent`): the single-key history is linearizable
  (`seedbed.check`), and the transactions are serializable, by inference
  and in the log's order (`workload`'s model).

Pressure beyond the fault classes: `stale_leader` cuts the leader off for
4 s (a follower far behind, with a stale tail, then healed);
`leader_crashes` crashes new leaders just before or after one of their
first sends or fsyncs (a no-op that reached some followers only), with a
snapshot every 2 entries so that catching up crosses snapshot boundaries
and snapshots end before a newer leader's entries; `behind_snapshot` cuts
off a follower one entry short of the snapshot a leader just took, so that
it comes back at the boundary between being sent entries and the snapshot;
`deposed_leaders` cuts leaders off and heals them once replaced, so that
they come back to a snapshot ending inside their stale tail, or cut it
after a snapshot that emptied their log; `deposed_at_snapshot` deposes a
leader when its successor's no-op would end a snapshot, so that the
deposed leader comes back one entry short of that snapshot with a stale
entry at its index: the boundary of `behind_snapshot`, over a stale tail,
where only the snapshot can bring it up to date; `small_batches` sends one
entry per append while leaders are deposed and restarted, so a follower is
brought up to date an entry per round trip, past a stale tail it still holds
and behind a new leader's entries of older terms; `lost_votes` restarts
replicas without their meta file (term and vote) and crashes voters just after
their vote, over wide-area hops where two candidates often campaign in one
term.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, replace
from typing import Any

import seedbed
from examples.kvstore import bugs
from examples.kvstore.cluster import Cluster
from examples.kvstore.raft import Timing
from examples.kvstore.workload import Workload
from seedbed import DiskConfig, FaultProfile, NetworkConfig, Scenario, always, reachable

# Replicas log disk failures and damage as warnings: in a sweep of hundreds of
# seeds that is noise (the failure report tells what happened). Configure the
# "kvstore" logger to see them.
logging.getLogger("kvstore").addHandler(logging.NullHandler())

NETWORK = NetworkConfig(latency_min=0.001, latency_mean=0.002, latency_max=0.005)
DISK = DiskConfig(latency_min=0.0001, latency_max=0.002)
# NETWORK whose cut connections reset after 50 ms, as TCP giving up (`behind_snapshot`).
RESETTING = replace(NETWORK, partition_reset_timeout=0.05, connect_timeout=0.05)
WAN = NetworkConfig(latency_min=0.005, latency_mean=0.02, latency_max=0.06)
# Up to two replicas down at once: a majority, as in a rack's power loss.
# Crashes at chosen moments too: just before or after a fsync, a write or a
# send (the millisecond between a vote's fsync and its reply, say).
CRASHES = FaultProfile(
    crash_per_second=0.4,
    bounce_per_second=0.2,
    operation_crash_per_second=0.3,
    downtime_mean=1.0,
    max_down=2,
    buggify=True,
)


@dataclass(frozen=True)
class Plan:
    """The workload of one scenario."""

    workload_time: float = 5.0  # virtual seconds of client operations
    single_key_clients: int = 2
    txn_clients: int = 2
    min_ok: int = 5
    think_max: float = 0.05  # seconds a client waits between operations, at most
    # (from, to) virtual seconds: cut off whichever replica leads at `from`
    # from its peers (clients still reach it, so it appends what it cannot
    # commit), and heal at `to`: a follower far behind, with a stale tail.
    isolate_leader: tuple[float, float] | None = None
    # The chance that a newly elected leader (while the workload runs) crashes
    # just before or after one of its next few sends or fsyncs: its no-op
    # reaches some followers and not others (Raft's Figure 8), or it dies with
    # an entry durable but unsent.
    crash_new_leaders: float = 0.0
    snapshot_every: int = Timing().snapshot_every  # applied entries between snapshots
    # Cut off a follower whose commit index is one short of the snapshot a leader
    # just took, for a moment: once healed, it rejects the leader's appends with a
    # hint that is that snapshot's index, the boundary between sending entries and
    # sending the snapshot.
    cut_behind_snapshot: bool = False
    # Every `depose_every` virtual seconds (while the workload runs), cut the leader
    # off from its peers (clients still reach it: a stale tail) and heal soon after
    # a newer leader is elected, so that it comes back holding entries of an older
    # term at indexes the new leader may already have snapshotted; then maybe
    # restart it (what it did on coming back must be on its disk).
    depose_every: float | None = None
    # The chance that a deposed leader restarts soon after its heal (see `depose_every`).
    restart_deposed: float = 0.5
    # From `DUE_FROM` virtual seconds on (while the workload runs), depose the leader
    # (as `depose_every` does) whenever a follower holds nothing the leader has not
    # committed and would take its next snapshot at the next index: the successor's
    # no-op then ends its first snapshot, at the index where the deposed leader's
    # stale tail begins, and the deposed leader, its commit one short of that
    # snapshot, comes back to a leader whose next index for it is the snapshot's
    # last entry (the boundary `behind_snapshot` reaches, over a stale tail).
    depose_at_snapshot: bool = False
    # Entries per append message, at most (`Timing.batch`): with one, a follower
    # behind by more than one entry is brought up to date one round trip per
    # entry, so a new leader's no-op reaches it last, and a stale tail outlives
    # the appends that match the entries below it.
    batch: int = Timing().batch
    # The chance that a replica restarts without its meta file (`Cluster.lose_meta`).
    lose_meta: float = 0.0
    # The chance that a replica crashes just after sending a vote it granted
    # (and restarts within `VOTER_DOWN`), while the workload runs.
    crash_voters: float = 0.0
    # Seconds a client tries one operation (`Client.deadline`) and waits for one
    # replica's answer (`Client.attempt_timeout`): short ones make outcomes
    # unknown often, and each unknown outcome starts a new session.
    client_deadline: float = 5.0
    attempt_timeout: float = 1.0


class KVWorld:
    """The world one scenario builds for each run, and its end-of-run oracles."""

    def __init__(self, plan: Plan, bug: str | None = None) -> None:
        self.plan = plan
        self.bug = bug
        self.cluster: Cluster | None = None
        self.workload: Workload | None = None
        self.verdict: list[str] | None = None
        self.cut: str | None = None  # the follower `_cut_behind` holds off, if any
        self.deposed: tuple[int, str, int] | None = None  # (number, name, term) of `_depose`'s
        self.depositions = 0

    def setup(self, sim: seedbed.Simulation) -> None:
        bugs.plant_for_runs(self.bug)
        replicas = sim.params.choice("replicas", [3, 5])
        names = tuple(f"n{number + 1}" for number in range(replicas))
        timing = Timing(snapshot_every=self.plan.snapshot_every, batch=self.plan.batch)
        self.cluster = Cluster(sim, names, timing, lose_meta=self.plan.lose_meta)
        self.workload = Workload(
            self.cluster.peers,
            self.plan.workload_time,
            think_max=self.plan.think_max,
            min_ok=self.plan.min_ok,
            on_ok=self.cluster.oracle.client_ok,
            deadline=self.plan.client_deadline,
            attempt_timeout=self.plan.attempt_timeout,
        )
        self.verdict = None
        for number in range(self.plan.single_key_clients):
            sim.client(f"c{number + 1}", self.workload.runner("single_key", f"c{number + 1}"))
        for number in range(self.plan.txn_clients):
            sim.client(f"t{number + 1}", self.workload.runner("transactions", f"t{number + 1}"))
        if self.plan.crash_new_leaders:
            self.cluster.oracle.on_leader.append(lambda name, term: self._crash_soon(sim, name))
        if self.plan.cut_behind_snapshot:
            self.cut = None
            self.cluster.oracle.on_snapshot.append(
                lambda name, index: self._cut_behind(sim, name, index)
            )
        if self.plan.depose_every:
            self.deposed, self.depositions = None, 0
            self.cluster.oracle.on_leader.append(lambda name, term: self._replaced(sim, name, term))
            when = self.plan.depose_every
            while when < self.plan.workload_time:
                sim.at(when, lambda: self._depose(sim))
                when += self.plan.depose_every
        if self.plan.depose_at_snapshot:
            self.deposed, self.depositions = None, 0
            self.cluster.oracle.on_leader.append(lambda name, term: self._replaced(sim, name, term))
            sim.at(DUE_FROM, lambda: self._depose_when_due(sim))
        if self.plan.crash_voters:
            self.cluster.oracle.on_vote.append(lambda name, term: self._crash_voter(sim, name))
        if self.plan.isolate_leader is not None:
            cut, heal = self.plan.isolate_leader
            sim.at(cut, lambda: self._isolate_leader(sim))
            sim.at(heal, sim.heal)

    def _isolate_leader(self, sim: seedbed.Simulation) -> None:
        """Cut the leader off; with none yet (an election under way), look again soon."""
        assert self.cluster is not None and self.plan.isolate_leader is not None
        replicas = self.cluster.oracle.replicas
        leaders = [name for name in self.cluster.names if replicas[name].role == "leader"]
        if leaders:
            sim.isolate(leaders[0])
            reachable("kvstore: a leader was cut off from its peers (a stale tail to come)")
            # Once healed and caught up (often by a snapshot), it restarts: what it
            # acknowledged while catching up must be on its disk.
            later = self.plan.isolate_leader[1] + RESTART_AFTER_HEAL
            sim.at(later, lambda: sim.crash(leaders[0]) and sim.restart(leaders[0]))
        elif sim.loop.time() + LOOK_AGAIN < self.plan.isolate_leader[1]:
            sim.at(sim.loop.time() + LOOK_AGAIN, lambda: self._isolate_leader(sim))

    def _cut_behind(self, sim: seedbed.Simulation, name: str, index: int) -> None:
        """Leader `name` took a snapshot at `index`: cut off a follower at `index - 1`."""
        assert self.cluster is not None
        replicas = self.cluster.oracle.replicas
        if self.cut is not None or replicas[name].role != "leader":
            return
        behind = [
            peer
            for peer in self.cluster.names
            if peer != name and peer in replicas and replicas[peer].commit == index - 1
        ]
        if not behind:
            return
        self.cut = random.choice(behind)
        sim.isolate(self.cut)
        reachable("kvstore: a follower one entry short of a leader's snapshot was cut off")
        sim.at(sim.loop.time() + random.uniform(*CUT_FOR), lambda: self._heal_cut(sim))

    def _heal_cut(self, sim: seedbed.Simulation) -> None:
        sim.heal()
        self.cut = None

    def _depose(self, sim: seedbed.Simulation) -> None:
        """Cut the leader off (see `Plan.depose_every`); with none yet, look again soon."""
        assert self.cluster is not None
        now = sim.loop.time()
        if self.deposed is not None or now >= self.plan.workload_time:
            return
        replicas = self.cluster.oracle.replicas
        leaders = [name for name, replica in replicas.items() if replica.role == "leader"]
        if not leaders:
            sim.at(now + LOOK_AGAIN, lambda: self._depose(sim))
            return
        self._cut_off_leader(sim, leaders[0])

    def _cut_off_leader(self, sim: seedbed.Simulation, name: str) -> None:
        """Depose leader `name` by a cut, healed by `_replaced` or after `DEPOSED_AT_MOST`."""
        assert self.cluster is not None
        self.depositions += 1
        number = self.depositions
        self.deposed = (number, name, self.cluster.oracle.replicas[name].term)
        sim.isolate(name)
        reachable("kvstore: a leader was deposed by a cut (a stale tail to come)")
        sim.at(sim.loop.time() + DEPOSED_AT_MOST, lambda: self._restore(sim, number))

    def _depose_when_due(self, sim: seedbed.Simulation) -> None:
        """Depose the leader once a follower's next snapshot is one commit away; else poll."""
        assert self.cluster is not None
        now = sim.loop.time()
        if now >= self.plan.workload_time:
            return
        replicas = self.cluster.oracle.replicas
        leaders = [replica for replica in replicas.values() if replica.role == "leader"]
        if self.deposed is None and leaders:
            leader = leaders[0]
            due = [
                replica
                for replica in replicas.values()
                if replica is not leader
                and replica.log.last_index == leader.commit
                and leader.commit + 1 - replica.log.snap_index == self.plan.snapshot_every
            ]
            if due:
                self._cut_off_leader(sim, leader.name)
        sim.at(now + DUE_POLL, lambda: self._depose_when_due(sim))

    def _replaced(self, sim: seedbed.Simulation, name: str, term: int) -> None:
        """A leader was elected: if it replaces the deposed one, heal the cut soon."""
        if self.deposed is None:
            return
        number, deposed, was = self.deposed
        if name != deposed and term > was:
            later = sim.loop.time() + random.uniform(0.0, REPLACED_HEAL_MAX)
            sim.at(later, lambda: self._restore(sim, number))

    def _restore(self, sim: seedbed.Simulation, number: int) -> None:
        """Heal deposition `number` (if still in force); maybe restart its leader soon."""
        if self.deposed is None or self.deposed[0] != number:
            return
        name = self.deposed[1]
        self.deposed = None
        if self.plan.depose_at_snapshot:
            self._at_boundary(name)
        sim.heal()
        if random.random() < self.plan.restart_deposed:
            later = sim.loop.time() + random.uniform(*DEPOSED_RESTART)
            sim.at(later, lambda: sim.crash(name) and sim.restart(name))

    def _at_boundary(self, name: str) -> None:
        """Count a deposed leader coming back one entry short of its successor's snapshot
        and without that snapshot's last entry (a stale one there, or none)."""
        assert self.cluster is not None
        replicas = self.cluster.oracle.replicas
        leaders = [replica for replica in replicas.values() if replica.role == "leader"]
        if name not in replicas or not leaders:
            return
        deposed, snap = replicas[name], leaders[0].log
        short = deposed.commit + 1 == snap.snap_index
        if short and deposed.log.term_at(snap.snap_index) != snap.snap_term:
            reachable(AT_SNAPSHOT)

    def _crash_soon(self, sim: seedbed.Simulation, name: str) -> None:
        """Maybe arm new leader `name` to crash at one of its next operations."""
        now = sim.loop.time()
        if now >= self.plan.workload_time or random.random() >= self.plan.crash_new_leaders:
            return
        operation = random.choice(("send", "send", "fsync"))
        after = random.random() < 0.5
        if sim.crash_at_operation(name, operation, after=after, count=random.randint(1, 6)):
            reachable("kvstore: a new leader was armed to crash at a chosen moment")
            sim.at(now + LEADER_DOWN, lambda: self._disarm_and_restart(sim, name))

    def _crash_voter(self, sim: seedbed.Simulation, name: str) -> None:
        """Maybe crash replica `name` just after it sends the vote it granted, and
        start it again soon, while the election it voted in may still go on."""
        now = sim.loop.time()
        if now >= self.plan.workload_time or random.random() >= self.plan.crash_voters:
            return
        if sim.crash_at_operation(name, "send", after=True, count=1):
            later = now + random.uniform(*VOTER_DOWN)
            sim.at(later, lambda: self._disarm_and_restart(sim, name))

    @staticmethod
    def _disarm_and_restart(sim: seedbed.Simulation, name: str) -> None:
        """Take back a crash that has not fired; start the node again if one did."""
        sim.disarm_operation(name)
        if sim.restart(name):
            reachable("kvstore: a new leader crashed at a chosen moment and was restarted")

    def settled(self) -> bool:
        """Liveness: one leader, followed by every replica, all at one commit index."""
        assert self.cluster is not None
        return self.cluster.settled()

    def progressed(self) -> bool:
        """Liveness: at least `min_ok` client operations succeeded, and the histories
        can show their properties (a get succeeded, a transaction committed)."""
        assert self.workload is not None
        return self.workload.ok_count >= self.plan.min_ok and self.workload.shows()

    def consistent(self) -> bool:
        """Once settled and progressed: the histories check out (fails the run if not)."""
        if self.verdict is None:
            if not (self.settled() and self.progressed()):
                return False
            assert self.workload is not None
            self.verdict = self.workload.problems()
            always(
                not self.verdict,
                "kvstore: the clients' histories check out",
                problems="; ".join(self.verdict)[:2000],
            )
        return not self.verdict


def scenario(
    name: str,
    faults: FaultProfile | str | None = None,
    plan: Plan = Plan(),
    bug: str | None = None,
    **world: Any,
) -> Scenario:
    """A scenario over a fresh `KVWorld` (with planted `bug` switched on in its runs)."""
    kv = KVWorld(plan, bug)
    world.setdefault("network", NETWORK)
    world.setdefault("disk", DISK)
    return Scenario(
        name,
        kv.setup,
        faults=faults,
        duration=plan.workload_time + 5.0,
        liveness=[kv.settled, kv.progressed, kv.consistent],
        liveness_timeout=30.0,
        **world,
    )


# Each scenario's pressure and world options, by name.
PRESSURE: dict[str, tuple[FaultProfile | str | None, dict[str, Any]]] = {
    "happy_path": (None, {}),
    "crash_recovery": (CRASHES, {}),
    # The same over wide-area hops: two candidates whose timeouts fall within
    # one round trip both win a pre-vote and campaign in one term far more
    # often, so a voter's mistakes (forget_vote) show.
    "crash_recovery_wan": (CRASHES, {"network": WAN}),
    "partitions": (
        FaultProfile(
            partition_per_second=0.4,
            clog_per_second=0.2,
            stream_stall_per_second=0.2,
            fault_duration_mean=1.5,
        ),
        {},
    ),
    "contention": (FaultProfile(bounce_per_second=0.1), {}),
    "client_crash": (FaultProfile(client_crash_per_second=0.5, downtime_mean=0.5), {}),
    # Damage never reaches every replica's copy of a block (spare_one_replica).
    # Every file (meta, log, snapshot) damaged: at rest (misdirected writes),
    # on the way back (corrupt reads), by failed fsyncs, and crashes at fsync.
    "disk_faults": (
        FaultProfile(
            crash_per_second=0.3,
            disk_fault_per_second=0.2,
            disk_corruption_per_second=0.2,
            misdirected_write_per_second=0.2,
            fsync_failure_per_second=0.1,
            operation_crash_per_second=0.2,
            downtime_mean=1.0,
        ),
        {
            "disk": DiskConfig(
                latency_min=0.0001,
                latency_max=0.002,
                corrupt_read_probability=0.1,
                misdirect_write_probability=0.002,
                spare_one_replica=True,
            )
        },
    ),
    "swarm": ("swarm", {}),
    # The leader cut off for 4 s (see `Plan.isolate_leader`), with restarts (a
    # follower that installed a snapshot must still hold it after one).
    "stale_leader": (
        FaultProfile(bounce_per_second=0.3, operation_crash_per_second=0.2, buggify=True),
        {},
    ),
    # New leaders crash at chosen moments (see `Plan.crash_new_leaders`), over
    # wide-area hops so that a no-op's way to each follower takes long enough
    # for the crash to split them.
    "leader_crashes": (FaultProfile(bounce_per_second=0.1), {"network": WAN}),
    # Followers cut off one entry short of a leader's snapshot (`Plan.cut_behind_snapshot`).
    # A cut resets the connections after 50 ms (TCP giving up), so that what the
    # leader sent meanwhile is lost and the follower must reject what follows;
    # a connection attempt into it fails as fast, so a heal takes effect at once.
    "behind_snapshot": (None, {"network": RESETTING}),
    # Leaders deposed by cuts and healed once replaced (`Plan.depose_every`).
    # Connections reset under the cut: what the new leader sent the deposed one is
    # lost, so it comes back to a rejection, and often a snapshot ending inside its
    # stale tail.
    "deposed_leaders": (None, {"network": RESETTING}),
    # Leaders deposed when their successor's no-op would end a snapshot
    # (`Plan.depose_at_snapshot`), on the same resetting network.
    "deposed_at_snapshot": (None, {"network": RESETTING}),
    # Replicas that restart without their meta file (term and vote: gone, or
    # garbage; `Plan.lose_meta`), after crashes, over wide-area hops, so that
    # candidates campaign in one term and a replica that lost its vote is
    # asked for it again.
    "lost_votes": (
        FaultProfile(crash_per_second=0.5, bounce_per_second=0.3, downtime_mean=0.5),
        {
            "network": WAN,
        },
    ),
    # Clients that give up after 0.4 s (`Plan.client_deadline`) under cuts,
    # clogs, stalls and crashes: many operations of unknown outcome, each
    # followed by a new session, and requests still in flight from the last.
    "impatient_clients": (
        FaultProfile(
            partition_per_second=0.4,
            clog_per_second=0.2,
            stream_stall_per_second=0.2,
            bounce_per_second=0.2,
            fault_duration_mean=1.0,
        ),
        {},
    ),
    # One entry per append (`Plan.batch`), leaders deposed and restarted, and
    # crashes: followers far behind a new leader that holds entries of older
    # terms it has not committed, and stale tails beyond what an append matched.
    "small_batches": (CRASHES, {"network": RESETTING}),
}
CONTENTION = Plan(single_key_clients=1, txn_clients=4, think_max=0.02)
LOOK_AGAIN = 0.1  # seconds: how soon `_isolate_leader` looks again for a leader
RESTART_AFTER_HEAL = 1.2  # seconds after the heal at which the cut-off replica restarts
STALE_LEADER = Plan(workload_time=8.0, isolate_leader=(1.0, 5.0))
# A snapshot every 2 entries: a follower's commit then often lands on a snapshot
# while it holds a new leader's entries after it (a snapshot ending before a
# newer term: 16 of seeds 0-99; with one every 8, 0 of 552 snapshots of seeds 0-9).
LEADER_CRASHES = Plan(workload_time=8.0, crash_new_leaders=0.8, snapshot_every=2)
LEADER_DOWN = 0.6  # seconds after its election: an armed crash not yet fired is taken back,
# and a leader it crashed is started again
# A follower one entry short of a leader's snapshot, cut off for a moment: the
# snapshot boundary. A snapshot every 32 entries: the leader's stays where it is
# through most cuts, and it holds a few entries after its last one when the
# workload ends.
BEHIND_SNAPSHOT = Plan(cut_behind_snapshot=True, snapshot_every=32)
CUT_FOR = (0.1, 0.3)  # seconds a follower behind a snapshot stays cut off
# Leaders deposed every 1.2 s, with a snapshot every 2 entries: the new leader's
# snapshot often ends inside the deposed leader's stale tail.
DEPOSED_LEADERS = Plan(workload_time=6.0, depose_every=1.2, snapshot_every=2)
DEPOSED_AT_MOST = 2.5  # seconds a deposed leader stays cut off without a successor
REPLACED_HEAL_MAX = 0.2  # seconds after its successor's election, at most, it is healed
DEPOSED_RESTART = (0.05, 0.6)  # seconds after the heal it restarts (half the time)
# Leaders deposed when a follower's snapshot is one commit away, with a snapshot every
# 32 entries: the successor's stays where it is for a while after the deposed leader
# comes back, so the boundary is what brings it up to date. No restarts: a restarted
# replica's commit falls back to its own snapshot, away from the boundary.
DEPOSED_AT_SNAPSHOT = Plan(
    workload_time=6.0, depose_at_snapshot=True, snapshot_every=32, restart_deposed=0.0
)
# Leaders deposed every 1.5 s and restarted after the heal (their commit index
# falls back to their last snapshot, so the hint they answer with is far below
# their stale tail), with one entry per append.
SMALL_BATCHES = Plan(workload_time=6.0, depose_every=1.5, restart_deposed=0.8, batch=1)
IMPATIENT_CLIENTS = Plan(client_deadline=0.4, attempt_timeout=0.15)
# Half of all restarts without the meta file, and a third of the votes granted
# followed by a crash and a quick restart.
LOST_VOTES = Plan(lose_meta=0.5, crash_voters=0.3)
VOTER_DOWN = (0.02, 0.3)  # seconds a crashed voter stays down
DUE_FROM = 1.0  # virtual seconds: when `depose_at_snapshot` starts looking (a leader by then)
DUE_POLL = 0.005  # seconds between its looks at the replicas
AT_SNAPSHOT = "kvstore: a deposed leader came back one short of a snapshot, stale at its end"


def make(name: str, plan: Plan | None = None, bug: str | None = None) -> Scenario:
    """Scenario `name` (a key of `PRESSURE`), with its own workload or `plan`.

    With `bug`, the scenario is named `bug_<bug>` and plants that bug in its runs.
    """
    faults, world = PRESSURE[name]
    plans = {
        "contention": CONTENTION,
        "stale_leader": STALE_LEADER,
        "leader_crashes": LEADER_CRASHES,
        "behind_snapshot": BEHIND_SNAPSHOT,
        "deposed_leaders": DEPOSED_LEADERS,
        "deposed_at_snapshot": DEPOSED_AT_SNAPSHOT,
        "small_batches": SMALL_BATCHES,
        "lost_votes": LOST_VOTES,
        "impatient_clients": IMPATIENT_CLIENTS,
    }
    default = plans.get(name, Plan())
    title = name if bug is None else f"bug_{bug}"
    return scenario(title, faults, plan or default, bug, **world)


happy_path = make("happy_path")
crash_recovery = make("crash_recovery")
crash_recovery_wan = make("crash_recovery_wan")
partitions = make("partitions")
contention = make("contention")
client_crash = make("client_crash")
disk_faults = make("disk_faults")
swarm = make("swarm")
stale_leader = make("stale_leader")
leader_crashes = make("leader_crashes")
behind_snapshot = make("behind_snapshot")
deposed_leaders = make("deposed_leaders")
deposed_at_snapshot = make("deposed_at_snapshot")
small_batches = make("small_batches")
lost_votes = make("lost_votes")
impatient_clients = make("impatient_clients")

SCENARIOS = (
    happy_path,
    crash_recovery,
    crash_recovery_wan,
    partitions,
    contention,
    client_crash,
    disk_faults,
    swarm,
    stale_leader,
    leader_crashes,
    behind_snapshot,
    deposed_leaders,
    deposed_at_snapshot,
    small_batches,
    lost_votes,
    impatient_clients,
)

# Each planted bug under the scenario that exposes it: `bug_forget_vote` and so on.
bug_ack_before_fsync = make(bugs.HUNTED_BY["ack_before_fsync"], bug="ack_before_fsync")
bug_follower_reads = make(bugs.HUNTED_BY["follower_reads"], bug="follower_reads")
bug_forget_vote = make(bugs.HUNTED_BY["forget_vote"], bug="forget_vote")
bug_commit_without_quorum = make(
    bugs.HUNTED_BY["commit_without_quorum"], bug="commit_without_quorum"
)
bug_trust_without_checksum = make(
    bugs.HUNTED_BY["trust_without_checksum"], bug="trust_without_checksum"
)
bug_skip_read_validation = make(bugs.HUNTED_BY["skip_read_validation"], bug="skip_read_validation")
BUG_SCENARIOS = {bug: globals()[f"bug_{bug}"] for bug in bugs.BUGS}
