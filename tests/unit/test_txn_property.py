"""The serializability verdict agrees with brute force over serial orders.

Small list-append histories, valid ones (transactions executed one at a
time against a model, their invoke/complete windows overlapping around that
order) and arbitrary ones (reads of any values, in any order, garbage
included), are judged both by `check_transactions` and by trying every
serial order of the committed transactions, each ``info`` one committed or
not. The two must agree on every history. For rw-register, whose version
orders reads reveal only in part, every anomaly the checker reports must be
real (no serial order exists).
"""

from __future__ import annotations

from itertools import combinations, permutations
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seedbed.check import History, TxnOutcome, check_transactions
from seedbed.check._history import Event

KEYS = ("x", "y", "z")
Mop = tuple[str, str, Any]
Txn = tuple[str, tuple[Mop, ...]]  # status, mops as completed (reads filled for ok)


def brute_force_serializable(txns: list[Txn]) -> bool:
    """Whether some serial order of the committed transactions explains every ok read."""
    ok = [t for t in txns if t[0] == "ok"]
    info = [t for t in txns if t[0] == "info"]
    for size in range(len(info) + 1):
        for chosen in combinations(info, size):
            for order in permutations(ok + list(chosen)):
                if _explains(order):
                    return True
    return False


def _explains(order: tuple[Txn, ...]) -> bool:
    state: dict[str, tuple[Any, ...]] = {}
    for status, mops in order:
        for f, key, value in mops:
            if f == "append":
                state[key] = (*state.get(key, ()), value)
            elif status == "ok" and tuple(value or ()) != state.get(key, ()):
                return False
    return True


def as_history(txns: list[Txn], windows: list[tuple[float, float]]) -> History:
    """Each transaction its own process, invoked and completed at its window's ends."""
    moments = []
    for number, ((status, mops), (start, end)) in enumerate(zip(txns, windows, strict=True)):
        invoked = tuple((f, k, None if f == "r" else v) for f, k, v in mops)
        done = mops if status == "ok" else invoked
        moments.append((start, number, Event(number, "invoke", "txn", invoked)))
        moments.append((end, number, Event(number, status, "txn", done)))  # type: ignore[arg-type]
    return History(event for _, _, event in sorted(moments, key=lambda m: m[:2]))


@st.composite
def shapes(draw: st.DrawFn) -> list[list[tuple[str, str]]]:
    """Transactions as lists of (f, key), values left to fill."""
    keys = KEYS[: draw(st.integers(1, 3))]
    mop = st.tuples(st.sampled_from(("append", "r")), st.sampled_from(keys))
    return draw(st.lists(st.lists(mop, min_size=1, max_size=3), min_size=1, max_size=5))


@st.composite
def valid_histories(draw: st.DrawFn) -> tuple[list[Txn], list[tuple[float, float]]]:
    """Executed one at a time in list order; windows overlap around each commit point."""
    state: dict[str, tuple[int, ...]] = {}
    counter = 0
    txns: list[Txn] = []
    windows = []
    for number, shape in enumerate(draw(shapes())):
        status = draw(st.sampled_from(("ok", "ok", "ok", "info", "fail")))
        executes = status == "ok" or (status == "info" and draw(st.booleans()))
        local = dict(state)
        mops: list[Mop] = []
        for f, key in shape:
            if f == "append":
                counter += 1
                local[key] = (*local.get(key, ()), counter)
                mops.append(("append", key, counter))
            else:
                mops.append(("r", key, local.get(key, ())))
        if executes:
            state = local
        txns.append((status, tuple(mops)))
        commit = 10.0 * number + 5
        before = draw(st.integers(1, 25)) + number / 100
        after = draw(st.integers(1, 25)) + number / 100
        windows.append((commit - before, commit + after))
    return txns, windows


@st.composite
def arbitrary_histories(draw: st.DrawFn) -> tuple[list[Txn], list[tuple[float, float]]]:
    """Any statuses, reads of any appended values (or garbage) in any order."""
    shaped = draw(shapes())
    values: dict[str, list[int]] = {k: [] for k in KEYS}
    counter = 0
    for shape in shaped:
        for f, key in shape:
            if f == "append":
                counter += 1
                values[key].append(counter)
    counter = 0
    txns: list[Txn] = []
    for shape in shaped:
        mops: list[Mop] = []
        for f, key in shape:
            if f == "append":
                counter += 1
                mops.append(("append", key, counter))
            else:
                pool = [*values[key], 99]
                seen = draw(st.lists(st.sampled_from(pool), max_size=4, unique=True))
                mops.append(("r", key, tuple(seen)))
        txns.append((draw(st.sampled_from(("ok", "ok", "info", "fail"))), tuple(mops)))
    starts = draw(st.lists(st.integers(0, 50), min_size=len(txns), max_size=len(txns)))
    lengths = draw(st.lists(st.integers(1, 30), min_size=len(txns), max_size=len(txns)))
    windows = [
        (s + i / 100, s + n + i / 100) for i, (s, n) in enumerate(zip(starts, lengths, strict=True))
    ]
    return txns, windows


def _agree(txns: list[Txn], windows: list[tuple[float, float]]) -> bool:
    history = as_history(txns, windows)
    options: dict[str, Any] = {"consistency": "serializable", "realtime": False, "process": False}
    verdict = check_transactions(history, allow_empty=True, **options)
    expected = brute_force_serializable(txns)
    assert (verdict.models["serializable"] == "ok") == expected, verdict.explain()
    guarded = check_transactions(history, **options)
    if guarded.outcome is TxnOutcome.VACUOUS:  # no committed read: nothing could refuse it
        assert expected and not any(t[0] == "ok" and _reads(t) for t in txns)
    else:
        assert guarded.outcome is verdict.outcome
    return expected


def _reads(txn: Txn) -> bool:
    return any(mop[0] == "r" for mop in txn[1])


@settings(max_examples=300, deadline=None)
@given(valid_histories())
def test_valid_histories_are_serializable(
    case: tuple[list[Txn], list[tuple[float, float]]],
) -> None:
    txns, windows = case
    assert _agree(txns, windows)
    # Every window holds its commit point, so real time agrees with the order too.
    verdict = check_transactions(as_history(txns, windows), allow_empty=True)
    assert set(verdict.models.values()) == {"ok"}, verdict.explain()


@settings(max_examples=300, deadline=None)
@given(arbitrary_histories())
def test_arbitrary_histories_agree_with_brute_force(
    case: tuple[list[Txn], list[tuple[float, float]]],
) -> None:
    _agree(*case)


# --- rw-register: version orders are only partly known, so soundness only -----------


def brute_force_register(txns: list[Txn]) -> bool:
    """Whether some serial order of the committed transactions explains every ok read."""
    ok = [t for t in txns if t[0] == "ok"]
    info = [t for t in txns if t[0] == "info"]
    for size in range(len(info) + 1):
        for chosen in combinations(info, size):
            for order in permutations(ok + list(chosen)):
                state: dict[str, Any] = {}
                if all(_register_step(state, t) for t in order):
                    return True
    return False


def _register_step(state: dict[str, Any], txn: Txn) -> bool:
    status, mops = txn
    for f, key, value in mops:
        if f == "w":
            state[key] = value
        elif status == "ok" and state.get(key) != value:
            return False
    return True


@st.composite
def register_histories(draw: st.DrawFn) -> tuple[list[Txn], list[tuple[float, float]]]:
    """Serially executed (valid) or with reads of any written value (arbitrary)."""
    valid = draw(st.booleans())
    shaped = [[("w" if f == "append" else "r", k) for f, k in s] for s in draw(shapes())]
    written: dict[str, list[int]] = {k: [] for k in KEYS}
    counter = 0
    for shape in shaped:
        for f, key in shape:
            if f == "w":
                counter += 1
                written[key].append(counter)
    counter, state, txns = 0, {}, []
    for shape in shaped:
        status = draw(st.sampled_from(("ok", "ok", "info", "fail")))
        local = dict(state)
        mops: list[Mop] = []
        for f, key in shape:
            if f == "w":
                counter += 1
                local[key] = counter
                mops.append(("w", key, counter))
            elif valid:
                mops.append(("r", key, local.get(key)))
            else:
                mops.append(("r", key, draw(st.sampled_from([None, 99, *written[key]]))))
        if status == "ok" or (status == "info" and draw(st.booleans())):
            state = local
        txns.append((status, tuple(mops)))
    windows = [(10.0 * i - draw(st.integers(1, 25)), 10.0 * i + 0.5) for i in range(len(txns))]
    return txns, windows


@settings(max_examples=300, deadline=None)
@given(register_histories())
def test_rw_register_anomalies_are_real(case: tuple[list[Txn], list[tuple[float, float]]]) -> None:
    txns, windows = case
    verdict = check_transactions(
        as_history(txns, windows), "rw-register", realtime=False, process=False
    )
    if verdict.models["serializable"] == "ruled-out":
        assert not brute_force_register(txns), verdict.explain()
