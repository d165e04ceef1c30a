"""Choice recording and lenient replay (issue 14 item 5): what a saved failure
relies on to still replay after small changes to the program."""

from __future__ import annotations

import math

from seedbed._core import Entropy, Stream, Trace
from seedbed._core.choices import Choice, session


def _draws(stream: Stream) -> tuple[object, ...]:
    return (
        stream.below(5, "which"),
        stream.chance(0.5, "drop it"),
        stream.exponential(1.0, "delay"),
        stream.uniform(2.0, 4.0, "spread"),
        stream.permutation(4, "order"),
        stream.raw(16, "bits"),
    )


def test_a_run_outside_a_session_uses_the_plain_stream() -> None:
    assert type(Entropy(1, Trace()).stream("s")) is Stream


def test_recording_changes_nothing_the_run_draws_or_hashes() -> None:
    plain_trace, recorded_trace = Trace(), Trace()
    plain = _draws(Entropy(3, plain_trace).stream("s"))
    with session() as made:
        recorded = _draws(Entropy(3, recorded_trace).stream("s"))
    assert recorded == plain and recorded_trace.hash == plain_trace.hash
    assert [c.reason for c in made.choices] == [
        "which",
        "drop it",
        "delay",
        "spread",
        "order",
        "bits",
    ]


def test_replaying_the_recorded_choices_repeats_the_draws_under_any_seed() -> None:
    with session() as made:
        recorded = _draws(Entropy(3, Trace()).stream("s"))
    with session(made.choices):
        assert _draws(Entropy(999, Trace()).stream("s")) == recorded


def test_a_choice_the_list_lacks_gets_the_quiet_default() -> None:
    with session([]):
        stream = Entropy(3, Trace()).stream("s")
        assert _draws(stream) == (0, False, 0.0, 2.0, [0, 1, 2, 3], 0)
        assert stream.exponential(1.0, "time to next fault", quiet=math.inf) == math.inf


def test_a_value_out_of_range_wraps() -> None:
    source = [
        Choice("s", "which", 7, 0),
        Choice("s", "drop it", 3, 1),
        Choice("s", "spread", 5.5, 2),
        Choice("s", "order", "4,2,0", 3),
        Choice("s", "bits", "0x12345", 4),
    ]
    with session(source):
        stream = Entropy(3, Trace()).stream("s")
        assert stream.below(5, "which") == 2
        assert stream.chance(0.5, "drop it") is True
        assert stream.uniform(2.0, 4.0, "spread") == 3.5
        assert stream.permutation(3, "order") == [2, 0, 1]
        assert stream.raw(16, "bits") == 0x2345


def test_a_changed_program_still_gets_its_values_by_reason() -> None:
    with session() as made:
        old = Entropy(3, Trace()).stream("s")
        first, second = old.below(100, "a"), old.below(100, "b")
    with session(made.choices):
        new = Entropy(3, Trace()).stream("s")
        assert new.below(100, "new draw") == 0  # not in the list: the default
        assert new.below(100, "b") == second  # reordered: still its own value
        assert new.below(100, "a") == first


def test_a_value_of_the_wrong_type_gets_the_default() -> None:
    with session([Choice("s", "which", "three", 0), Choice("s", "delay", "soon", 1)]):
        stream = Entropy(3, Trace()).stream("s")
        assert stream.below(5, "which") == 0
        assert stream.exponential(1.0, "delay") == 0.0


def test_a_second_run_in_the_session_replays_from_the_start() -> None:
    """A failure report re-runs its seed: that pass must see the same choices."""
    with session([Choice("s", "which", 3, 0)]) as made:
        first = Entropy(3, Trace()).stream("s").below(5, "which")
        again = Entropy(3, Trace()).stream("s").below(5, "which")
    assert first == again == 3
    assert len(made.choices) == 1
