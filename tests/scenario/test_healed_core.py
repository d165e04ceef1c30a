"""`Scenario(liveness_core=...)`: a healed core must converge while the other
hosts keep failing (issue 45, item 2)."""

from __future__ import annotations

import pytest
from tests.scenario import _core_world as world

from seedbed import LivenessFailure, Scenario, UsageError

LIVENESS_STARTS = 5.0  # the scenarios' fault phase lasts 5 s


def test_a_drawn_majority_converges_while_the_other_hosts_keep_crashing() -> None:
    restarted_outside = 0
    cores = set()
    for seed in range(4):
        result, error = world.core_converges.execute(seed)
        assert error is None, error
        core = world.state["sim"].liveness_core
        assert len(core) == 3 and list(core) == sorted(core)  # a majority, in host order
        cores.add(core)
        # Restarted by the heal at 5 s, then only outside the core:
        late = [(t, name) for t, name in world.state["starts"] if t > LIVENESS_STARTS + 0.01]
        assert not [name for _, name in late if name in core]  # nothing touched the core
        restarted_outside += len(late)  # the others crashed (and came back) meanwhile
        healed, _ = world.all_healed.execute(seed)
        assert result.faults["crash"]["injected"] > healed.faults["crash"]["injected"]
    assert restarted_outside > 0
    assert len(cores) > 1  # drawn per seed


def test_a_named_core_is_the_one_healed_and_a_seed_replays_exactly() -> None:
    first, error = world.named_core_converges.execute(0)
    assert error is None
    assert world.state["sim"].liveness_core == ("n2", "n4", "n5")
    again, _ = world.named_core_converges.execute(0)
    assert again.trace_hash == first.trace_hash and again.faults == first.faults


def test_requiring_every_host_fails_only_when_the_others_keep_failing() -> None:
    assert world.all_healed.execute(0)[1] is None
    _, error = world.all_must_converge.execute(0)
    assert isinstance(error, LivenessFailure)
    first = str(error).splitlines()[0]
    assert first.startswith("liveness: 1 property still false 5s after the core (")
    assert "was healed, the others failing on: all_progressed (returned False)" in first
    assert "replay: " in str(error)


def test_a_core_that_cannot_be_is_refused() -> None:
    for core in ("half", [], ["n1", 2], 3):
        with pytest.raises(UsageError, match="liveness_core must be None"):
            Scenario("x", world.world, liveness=[world.core_progressed], liveness_core=core)
    with pytest.raises(UsageError, match="needs liveness"):
        Scenario("x", world.world, liveness_core="majority")
    stranger = Scenario("x", world.world, duration=1.0, liveness=[world.core_progressed],
                        liveness_core=["n1", "n9"])  # fmt: skip
    with pytest.raises(UsageError, match="names 'n9', which is not a host"):
        stranger.run(0)
