"""Choice recording and lenient replay (issue 14 item 5): what a saved failure
relies on to still replay after small changes to the program."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.unit._ledger import ledger

from seedbed._core import Entropy, Stream, Trace
from seedbed._core.choices import Choice, session, setting


def _draws(stream: Stream) -> tuple[object, ...]:
    return (
        stream.below(5, "which"),
        stream.chance(0.5, "drop it"),
        stream.exponential(1.0, "delay"),
        stream.uniform(2.0, 4.0, "spread"),
        stream.permutation(4, "order"),
        stream.raw(16, "bits"),
        stream.swapped("pair order"),
        stream.order(3, "batch order"),
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
        "pair order",
        "batch order",
    ]


def test_replaying_the_recorded_choices_repeats_the_draws_under_any_seed() -> None:
    with session() as made:
        recorded = _draws(Entropy(3, Trace()).stream("s"))
    with session(made.choices):
        assert _draws(Entropy(999, Trace()).stream("s")) == recorded


def test_a_choice_the_list_lacks_gets_its_typical_value_never_an_extreme() -> None:
    """The first option, the likelier side of a chance, the median of a delay and
    of a range, FIFO, and raw bits whose lanes read as 0.5 (a median hop, which
    the heavy-tailed latency model never reads as its spike); logged as null."""
    with session([]) as made:
        stream = Entropy(3, Trace()).stream("s")
        fifo = (0, False, math.log(2), 3.0, [0, 1, 2, 3], 0x8000, False, [0, 1, 2])
        assert _draws(stream) == fifo
        assert stream.chance(0.9, "likely") is True
        assert stream.raw(64, "a hop") == 0x80000000_80000000
        assert stream.exponential(1.0, "time to next fault", quiet=math.inf) == math.inf
    assert all(choice.value is None for choice in made.choices)


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


def test_a_value_of_the_wrong_type_takes_the_default_and_is_kept_as_a_misfit() -> None:
    """The run goes on (nothing raises inside it); the replay refuses the file after."""
    source = [
        Choice("s", "which", "three", 0),
        Choice("s", "delay", "soon", 1),
        Choice("s", "order", 7, 2),
        Choice("s", "bits", 12, 3),
        Choice("s", "drop it", None, 4),  # null: the quiet default, asked for
        Choice("s", "spread", 2.5, 5),  # fits
    ]
    with session(source) as replayed:
        stream = Entropy(3, Trace()).stream("s")
        assert stream.below(5, "which") == 0
        assert stream.exponential(1.0, "delay") == math.log(2)
        assert stream.permutation(3, "order") == [0, 1, 2]
        assert stream.raw(8, "bits") == 0x80  # the middle of 8 bits
        assert stream.chance(0.5, "drop it") is False
        assert stream.uniform(2.0, 4.0, "spread") == 2.5
    assert replayed.misfits == [
        ("s", "which", "three", "an integer"),
        ("s", "delay", "soon", "a number"),
        ("s", "order", 7, "an order written as 2,0,1"),
        ("s", "bits", 12, "bits written as 0x... hex"),
    ]


def test_a_choice_file_with_a_string_where_a_number_is_drawn_is_refused_naming_the_stream(
    tmp_path: Path,
) -> None:
    """Issue 27: such a value used to be replaced by the default, silently."""
    from click.testing import CliRunner

    from seedbed._harness.shrink._file import ChoiceFile, write_choices
    from seedbed._harness.targets import resolve, run_target
    from seedbed.cli import cli

    target = "examples.race:main"
    with session() as made:
        run_target(resolve(target), 7)
    path = tmp_path / "race.json"
    write_choices(path, ChoiceFile(target, 7, made.choices))
    runner = CliRunner()
    assert runner.invoke(cli, ["run", target, "--choices", str(path)]).exit_code in (0, 1)
    saved = json.loads(path.read_text(encoding="utf-8"))
    stream, pairs = next(
        (name, pairs) for name, pairs in saved["streams"].items()
        if any(isinstance(value, int | float) for _, value in pairs)
    )  # fmt: skip
    at = next(i for i, (_, value) in enumerate(pairs) if isinstance(value, int | float))
    reason = pairs[at][0]
    pairs[at][1] = "soon"
    path.write_text(json.dumps(saved), encoding="utf-8")
    result = runner.invoke(cli, ["run", target, "--choices", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1
    assert f"stream {stream!r}, draw {reason!r}, holds 'soon', not a" in result.output
    assert "write null for the quiet default" in result.output


def test_a_second_run_in_the_session_replays_from_the_start() -> None:
    """A failure report re-runs its seed: that pass must see the same choices."""
    with session([Choice("s", "which", 3, 0)]) as made:
        first = Entropy(3, Trace()).stream("s").below(5, "which")
        again = Entropy(3, Trace()).stream("s").below(5, "which")
    assert first == again == 3
    assert len(made.choices) == 1


def test_a_draw_whose_reason_has_no_value_left_takes_one_of_its_kind() -> None:
    """A crash that moves tears another sector: it still gets the recorded tear."""
    source = [
        Choice("disk", "torn /log sector 4", 1, 0),
        Choice("disk", "torn /log sector 9", 0, 1),
        Choice("disk", "latency n2", 3, 2),
    ]
    with session(source):
        stream = Entropy(3, Trace()).stream("disk")
        assert stream.chance(0.5, "torn /log sector 9") is False  # its own value first
        assert stream.chance(0.5, "torn /log sector 2") is True  # sector 4's, unused
        assert stream.chance(0.5, "torn /log sector 4") is False  # taken: the default
        assert stream.below(5, "latency n3") == 0  # a node's name is not a number


def test_a_setting_is_the_given_value_unless_a_replay_cuts_it() -> None:
    assert setting("scenario", "fault phase seconds", 30.0) == 30.0  # no session
    with session() as made:
        assert setting("scenario", "fault phase seconds", 30.0) == 30.0
    assert [(c.stream, c.reason, c.value) for c in made.choices] == [
        ("scenario", "fault phase seconds", None)  # the quiet default: not cut
    ]
    for recorded, used in ((2.5, 2.5), (-1.0, 0.0), (99.0, 30.0), ("soon", 30.0)):
        with session([Choice("scenario", "fault phase seconds", recorded, 0)]):
            assert setting("scenario", "fault phase seconds", 30.0) == used


def test_recording_a_scenario_changes_nothing_it_runs_or_hashes() -> None:
    seed = next(s for s in range(30) if ledger.execute(s, last_events=False)[0] is not None)
    plain, _ = ledger.execute(seed, last_events=False)  # a seed the planted bug spares
    with session() as made:
        recorded, _ = ledger.execute(seed, last_events=False)
    assert plain is not None and recorded is not None
    assert (recorded.trace_hash, recorded.steps) == (plain.trace_hash, plain.steps)
    drawn = {(c.stream, c.reason, c.value) for c in made.choices}
    assert ("scenario", "fault phase seconds", None) in drawn
