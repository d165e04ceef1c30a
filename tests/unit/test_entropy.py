"""The entropy: seeded, labelled, independent by stream name, and the same on every CPython.

The pinned values below were produced on CPython 3.11.7, 3.12.1 and 3.13.0;
CI runs this file on all three. If one changes, seeds recorded by users stop
replaying: that is a breaking change, never a test to update casually.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from typing import Any

import pytest

from seedbed._core import Entropy, Trace, derive_seed

SEED = 12648430  # 0xC0FFEE


def stream(name: str = "pinned", seed: int = SEED, trace: Trace | None = None):  # type: ignore[no-untyped-def]
    return Entropy(seed, trace or Trace()).stream(name)


def test_first_draws_of_every_distribution_are_pinned_across_python_versions() -> None:
    s = stream()
    assert [s.below(1000, "b") for _ in range(3)] == [375, 837, 150]
    assert [s.between(-5, 5, "b") for _ in range(3)] == [-4, -3, -1]
    assert [s.random("r") for _ in range(2)] == [0.5044224859186076, 0.27329894373600117]
    assert [s.uniform(2.0, 3.0, "u") for _ in range(2)] == [2.385077591134613, 2.0940090309172446]
    assert [s.chance(0.5, "c") for _ in range(4)] == [False, False, True, False]
    assert [s.exponential(1.5, "e") for _ in range(2)] == [1.1096078327819354, 0.3499364329581526]
    assert s.choice("abcdef", "ch") == "a"
    assert s.permutation(6, "p") == [3, 1, 4, 0, 5, 2]
    assert s.shuffled("xyz", "s") == ["z", "x", "y"]
    assert s.seed_for("seed") == 6734524257870481559
    assert s.raw(64) == 7051069442169837744


def test_the_same_seed_and_name_give_the_same_draws() -> None:
    first = [stream().below(10**9, "x") for _ in range(5)]
    again = [stream().below(10**9, "x") for _ in range(5)]
    assert first == again


def test_streams_are_independent_so_a_new_draw_in_one_never_shifts_another() -> None:
    quiet = Entropy(SEED, Trace())
    busy = Entropy(SEED, Trace())
    busy.stream("disk").random("an extra draw in another subsystem")
    assert [quiet.stream("net").below(100, "d") for _ in range(20)] == [
        busy.stream("net").below(100, "d") for _ in range(20)
    ]


def test_a_stream_seeded_at_its_first_draw_draws_what_an_eagerly_seeded_one_does() -> None:
    from seedbed._core.entropy import Stream

    lazy = Entropy(SEED, Trace()).stream("disk n1")  # seeded only when it first draws
    eager = Stream("disk n1", derive_seed(SEED, "disk n1"), Trace())
    assert [lazy.below(10**9, "x") for _ in range(5)] == [eager.below(10**9, "x") for _ in range(5)]
    assert lazy.raw(64) == eager.raw(64)


def test_different_seeds_and_names_derive_different_stream_seeds() -> None:
    seeds = {derive_seed(s, n) for s in range(50) for n in ("loop", "net", "user")}
    assert len(seeds) == 150


def test_forced_choices_consume_no_entropy_and_record_nothing() -> None:
    trace = Trace(keep=True)
    forced = stream(trace=trace)
    assert forced.below(1, "only one option") == 0
    assert forced.choice(["only"], "only one option") == "only"
    assert forced.chance(0.0, "never") is False
    assert forced.chance(1.0, "always") is True
    assert forced.permutation(1, "one item") == [0]
    assert trace.events == []
    assert forced.below(1000, "b") == 375  # the first real draw is the pinned first draw


def test_every_draw_is_recorded_with_its_stream_and_reason() -> None:
    trace = Trace(keep=True)
    s = stream("net", trace=trace)
    value = s.below(7, "delay n1->n2")
    assert trace.events == [("draw", "net", "delay n1->n2", value)]


def test_raw_bits_traced_by_the_caller_fold_as_the_draw_event_they_stand_for() -> None:
    kept, quiet = Trace(keep=True), Trace()
    values = []
    for trace in (kept, quiet):
        s = stream("net stalls", trace=trace)
        bits = s.raw(64, "stall n1->n2")
        s.trace_raw("stall n1->n2", bits)
        values.append(bits)
    assert values[0] == values[1]
    assert kept.events == [("draw", "net stalls", "stall n1->n2", values[0])]
    by_emit = Trace()
    by_emit.emit("draw", "net stalls", "stall n1->n2", values[0])
    assert quiet.hash == kept.hash == by_emit.hash


def test_bounded_integers_are_uniform_and_in_range() -> None:
    s = stream()
    counts = Counter(s.below(6, "die") for _ in range(6000))
    assert set(counts) == set(range(6))
    assert all(800 < count < 1200 for count in counts.values()), counts


def test_permutations_are_permutations_and_all_orders_occur() -> None:
    s = stream()
    orders = Counter(tuple(s.permutation(3, "p")) for _ in range(600))
    assert len(orders) == 6
    assert all(sorted(order) == [0, 1, 2] for order in orders)


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, None])
def test_a_seed_that_is_not_a_non_negative_int_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        Entropy(bad, Trace())  # type: ignore[arg-type]


def test_invalid_bounds_are_refused_with_the_offending_value() -> None:
    s = stream()
    with pytest.raises(ValueError, match="got 0"):
        s.below(0, "nothing to choose")
    with pytest.raises(ValueError, match="3 > 2"):
        s.between(3, 2, "empty range")


def _by_keys(stream: Any, n: int) -> list[int]:
    """A permutation as defined for every length: indices sorted by 32-bit
    little-endian keys, ties in index order."""
    from array import array

    keys = array("I", stream._bits(32 * n).to_bytes(4 * n, "little"))
    if sys.byteorder == "big":
        keys.byteswap()
    order = sorted(range(n), key=keys.__getitem__)
    stream._note("why", ",".join(map(str, order)))
    return order


@pytest.mark.parametrize("n", [2, 3])
def test_a_short_permutation_is_the_keys_sorted_as_for_any_other_length(n: int) -> None:
    # The shortcuts for two and three (issue 50) must give the general
    # definition's order and trace.
    short, spelled = Trace(), Trace()
    fast, slow = Entropy(11, short).stream("loop"), Entropy(11, spelled).stream("loop")
    orders = [fast.permutation(n, "why") for _ in range(3_000)]
    assert orders == [_by_keys(slow, n) for _ in range(3_000)]
    assert len({tuple(order) for order in orders}) == math.factorial(n)
    assert short.hash == spelled.hash


def _pool_words(seed: int, pools: int) -> list[list[int]]:
    """The 32-bit keys of a loop stream's first `pools` pools, worked out by hand."""
    from array import array

    from seedbed._core.entropy import POOL_KEYS

    twin = Entropy(seed, Trace()).stream("loop")
    words = []
    for _ in range(pools):
        keys = array("I", twin._bits(32 * POOL_KEYS).to_bytes(4 * POOL_KEYS, "little"))
        if sys.byteorder == "big":
            keys.byteswap()
        words.append(list(keys))
    return words


def test_an_order_sorts_consecutive_pool_keys_and_a_pool_is_one_traced_draw() -> None:
    from seedbed._core.entropy import POOL_KEYS

    trace = Trace(keep=True)
    s = Entropy(9, trace).stream("loop")
    sizes = [2, 3, 16, 5, 2, 7] * 20  # 1,400 keys: past five pools, leftovers unused
    orders = [s.order(n, "why") for n in sizes]
    pools, pool, at, expected = _pool_words(9, 6), -1, POOL_KEYS, []
    for n in sizes:
        if at + n > POOL_KEYS:
            pool, at = pool + 1, 0
        keys = pools[pool][at : at + n]
        expected.append(sorted(range(n), key=keys.__getitem__))
        at += n
    assert orders == expected
    first_words = [words[0] | words[1] << 32 for words in pools[: pool + 1]]
    assert trace.events == [("draw", "loop", "why", word) for word in first_words]


def test_orders_are_uniform_and_a_swap_is_the_order_of_two() -> None:
    s = stream("loop")
    counts = Counter(tuple(s.order(3, "why")) for _ in range(6_000))
    assert len(counts) == 6 and all(900 < count < 1_100 for count in counts.values())
    short, spelled = Trace(), Trace()
    fast, slow = stream("loop", trace=short), stream("loop", trace=spelled)
    swaps = [fast.swapped("why") for _ in range(1_000)]
    assert swaps == [slow.order(2, "why") == [1, 0] for _ in range(1_000)]
    assert 400 < sum(swaps) < 600 and short.hash == spelled.hash


def test_an_order_of_tied_keys_keeps_index_order() -> None:
    tied = stream()
    tied._bits = lambda k: int.from_bytes(b"\x07\x00\x00\x00" * (k // 32), "little")
    assert tied.order(4, "why") == [0, 1, 2, 3]
    assert tied.swapped("why") is False


def test_three_tied_keys_keep_index_order_as_the_sort_does() -> None:
    # Random keys almost never tie: feed every pattern of equal keys.
    patterns = [(a, b, c) for a in range(3) for b in range(3) for c in range(3)]
    for keys in patterns:
        bits = keys[0] | keys[1] << 32 | keys[2] << 64
        fast, slow = Entropy(1, Trace()).stream("loop"), Entropy(1, Trace()).stream("loop")
        fast._bits = slow._bits = lambda k, bits=bits: bits
        assert fast.permutation(3, "why") == _by_keys(slow, 3), keys
