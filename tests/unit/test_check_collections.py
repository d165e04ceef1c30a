"""The set, queue, counter and unique-ids checks: each finding shown alone, and the guard.

Every case is a small history written out event by event (process, type,
function, value), so what it shows can be read off the test. The checks'
agreement with their definitions on random histories is in
`test_check_collections_property`; the command line in
`test_check_collections_cli`.
"""

from __future__ import annotations

from typing import Any

import pytest

from seedbed.check import (
    CheckVerdict,
    Event,
    History,
    HistoryError,
    Validity,
    check_collection,
    check_counter,
    check_queue,
    check_set,
    check_unique_ids,
    parse_op_history,
)

Row = tuple[Any, str, str, Any]


def history(*rows: Row) -> History:
    return History([Event(p, kind, f, value) for p, kind, f, value in rows], "h.jsonl")


def done(p: Any, f: str, value: Any = None, result: Any = None, kind: str = "ok") -> list[Row]:
    """One operation that completes before the next begins."""
    return [(p, "invoke", f, value), (p, kind, f, result)]


def kinds(verdict: CheckVerdict) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for finding in verdict.findings:
        found.setdefault(finding.kind, []).append(finding.subject)
    return found


# --- set -------------------------------------------------------------------------


def test_a_set_that_keeps_every_acknowledged_add_is_valid() -> None:
    h = history(*done(0, "add", 1), *done(1, "add", 2), *done(2, "read", result=[2, 1]))
    verdict = check_set(h)
    assert verdict.outcome is Validity.VALID and verdict
    assert verdict.counts["stable"] == 2 and not verdict.findings


def test_an_acknowledged_add_missing_from_every_later_read_is_lost() -> None:
    h = history(
        *done(0, "add", 1),
        *done(0, "add", 2),
        *done(1, "read", result=[1, 2]),
        *done(1, "read", result=[1]),
        *done(1, "read", result=[1]),
    )
    verdict = check_set(h)
    assert verdict.outcome is Validity.INVALID
    assert kinds(verdict) == {"lost": [2]}
    lost = verdict.findings[0]
    assert [op.id for op in lost.ops] == [
        1,
        2,
        4,
    ]  # the add, the last read seeing it, the last missing it
    assert "read #2 saw it last" in lost.text


def test_an_element_missed_once_then_seen_again_is_stale_not_lost() -> None:
    h = history(
        *done(0, "add", 1),
        *done(1, "read", result=[]),
        *done(1, "read", result=[1]),
    )
    verdict = check_set(h)
    assert verdict.outcome is Validity.VALID and kinds(verdict) == {"stale": [1]}
    assert not check_set(h, linearizable=True)  # a read went back in time


def test_a_read_concurrent_with_the_add_may_miss_it() -> None:
    h = history(
        (0, "invoke", "add", 1),
        (1, "invoke", "read", None),
        (0, "ok", "add", None),
        (1, "ok", "read", []),
        *done(1, "read", result=[1]),
    )
    assert check_set(h, linearizable=True).outcome is Validity.VALID


def test_an_add_of_unknown_outcome_may_or_may_not_be_there() -> None:
    for seen in ([1], []):
        h = history(
            *done(0, "add", 1, kind="info"),
            *done(0, "add", 2),
            *done(1, "read", result=[2, *seen]),
        )
        verdict = check_set(h)
        assert verdict.outcome is Validity.VALID
        assert kinds(verdict).get("never-read", []) == ([] if seen else [1])


def test_reads_never_invent_elements() -> None:
    h = history(
        *done(0, "add", 1),
        *done(0, "add", 3, kind="fail"),
        *done(1, "read", result=[1, 9, 3]),
        *done(0, "add", 4),
        *done(1, "read", result=[1, 4]),
    )
    early = history(*done(1, "read", result=[4]), *done(0, "add", 4), *done(1, "read", result=[4]))
    verdict = check_set(h)
    assert kinds(verdict) == {"unexpected": [9, 3]}
    assert "no add of it was attempted" in verdict.findings[0].text
    assert "failed" in verdict.findings[1].text
    assert kinds(check_set(early)) == {"unexpected": [4]}  # read before its add began


def test_a_read_returning_an_element_twice_is_duplicated() -> None:
    h = history(*done(0, "add", 1), *done(1, "read", result=[1, 1]))
    assert kinds(check_set(h)) == {"duplicated": [1]}


def test_an_element_is_added_once_or_retried_after_a_failed_add() -> None:
    retried = history(
        *done(0, "add", 1, kind="fail"), *done(0, "add", 1), *done(1, "read", result=[1])
    )
    assert check_set(retried)
    twice = history(*done(0, "add", 1), *done(0, "add", 1))
    with pytest.raises(HistoryError, match="element 1 is added twice"):
        check_set(twice)


# --- queue -----------------------------------------------------------------------


def test_a_queue_that_hands_out_each_element_once_is_valid() -> None:
    h = history(
        *done(0, "enqueue", "a"),
        *done(0, "enqueue", "b"),
        *done(1, "dequeue", result="b"),
        *done(1, "drain", result=["a"]),
        *done(1, "dequeue", result=None),  # the queue was empty
    )
    verdict = check_queue(h)
    assert verdict.outcome is Validity.VALID, verdict.explain()
    assert verdict.counts["dequeued"] == 2


def test_a_queue_that_duplicates_one_element_and_loses_another_is_invalid() -> None:
    h = history(
        *done(0, "enqueue", "a"),
        *done(0, "enqueue", "b"),
        *done(1, "dequeue", result="a"),
        *done(1, "dequeue", result="a"),
    )
    verdict = check_queue(h)
    assert verdict.outcome is Validity.INVALID
    assert kinds(verdict) == {"lost": ["b"], "duplicated": ["a"]}


def test_a_dequeue_of_unknown_outcome_may_have_taken_a_lost_element() -> None:
    rows = [*done(0, "enqueue", "a"), *done(0, "enqueue", "b"), *done(1, "dequeue", result="a")]
    maybe = history(*rows, *done(1, "dequeue", kind="info"))
    verdict = check_queue(maybe)
    assert verdict.outcome is Validity.VALID and kinds(verdict) == {"lost": ["b"]}
    assert not verdict.findings[0].refutes and "may have taken it" in verdict.findings[0].text
    assert not check_queue(history(*rows))


def test_a_queue_never_hands_out_what_was_not_enqueued() -> None:
    never = history(
        *done(0, "enqueue", "a"), *done(1, "dequeue", result="a"), *done(1, "dequeue", result="z")
    )
    failed = history(*done(0, "enqueue", "a", kind="fail"), *done(1, "dequeue", result="a"))
    early = history(*done(1, "dequeue", result="a"), *done(0, "enqueue", "a"))
    assert kinds(check_queue(never)) == {"unexpected": ["z"]}
    assert "failed" in check_queue(failed).findings[0].text
    assert kinds(check_queue(early)) == {"unexpected": ["a"]}


def test_an_enqueue_of_unknown_outcome_that_came_out_is_recovered() -> None:
    h = history(*done(0, "enqueue", "a"), *done(0, "enqueue", "b", kind="info"),
                *done(1, "drain", result=["b", "a"]))  # fmt: skip
    verdict = check_queue(h)
    assert verdict and verdict.counts["recovered"] == 1


# --- counter -----------------------------------------------------------------------


def test_reads_within_the_bounds_the_adds_allow_are_valid() -> None:
    h = history(
        *done(0, "add", 2),
        (0, "invoke", "add", 3),  # concurrent with the read: may or may not count
        *done(1, "read", result=5),
        (0, "ok", "add", None),
        *done(0, "add", 10, kind="info"),
        *done(1, "read", result=5),
        *done(1, "read", result=15),
    )
    verdict = check_counter(h)
    assert verdict.outcome is Validity.VALID, verdict.explain()


def test_a_read_below_the_acknowledged_adds_or_above_the_attempted_is_out_of_bounds() -> None:
    h = history(
        *done(0, "add", 2),
        *done(0, "add", 3, kind="fail"),
        *done(1, "read", result=1),
        *done(1, "read", result=5),
    )
    verdict = check_counter(h)
    assert kinds(verdict) == {"out-of-bounds": [1, 5]}
    assert "allow only 2..2" in verdict.findings[0].text


def test_negative_increments_widen_the_bounds_downward() -> None:
    h = history(*done(0, "add", 5), (0, "invoke", "add", -2), *done(1, "read", result=3),
                *done(1, "read", result=5), (0, "info", "add", None))  # fmt: skip
    assert check_counter(h)
    assert not check_counter(history(*done(0, "add", 5), (0, "invoke", "add", -2),
                                     *done(1, "read", result=2)))  # fmt: skip


def test_a_counter_starts_where_told() -> None:
    h = history(*done(0, "add", 1), *done(1, "read", result=11))
    assert not check_counter(h) and check_counter(h, initial=10)


# --- unique ids -----------------------------------------------------------------------


def test_an_id_returned_twice_is_duplicated_with_every_operation() -> None:
    h = history(*done(0, "generate", result=1), *done(1, "generate", result=2),
                *done(2, "generate", result=1), *done(3, "generate", kind="info"))  # fmt: skip
    verdict = check_unique_ids(h)
    assert kinds(verdict) == {"duplicated": [1]}
    assert [op.id for op in verdict.findings[0].ops] == [0, 2]
    assert verdict.counts == {"generates": 4, "acknowledged": 3, "distinct": 2, "duplicated": 1}
    assert check_unique_ids(history(*done(0, "generate", result=1), *done(1, "generate", result=2)))


# --- no false greens -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "rows", "reason"),
    [
        ("set", [*done(0, "add", 1, kind="info"), *done(1, "read", kind="fail")],
         "no add and no read succeeded"),
        ("set", done(0, "add", 1), "no read succeeded"),
        ("set", [*done(1, "read", result=[]), *done(0, "add", 1)],
         "no read that began after an element was added saw it"),
        ("queue", done(1, "dequeue", result=None), "no enqueue was acknowledged"),
        ("queue", [*done(0, "enqueue", 1, kind="info"), *done(1, "dequeue", kind="info")],
         "no enqueue was acknowledged and no element was dequeued"),
        ("counter", done(1, "read", result=0), "no add was acknowledged"),
        ("counter", [*done(1, "read", result=0), *done(0, "add", 1)],
         "no read began after an add was acknowledged"),
        ("unique-ids", done(0, "generate", result=7), "only one generate succeeded"),
        ("unique-ids", [], "no generate succeeded"),
    ],
)  # fmt: skip
def test_a_history_that_cannot_show_the_property_is_vacuous_unless_allowed(
    model: str, rows: list[Row], reason: str
) -> None:
    h = history(*rows)
    verdict = check_collection(h, model)
    assert verdict.outcome is Validity.VACUOUS and not verdict
    assert verdict.reason is not None and verdict.reason.startswith(reason)
    assert verdict.explain().startswith(f"cannot show the {model} property: {reason}")
    assert check_collection(h, model, allow_empty=True).outcome is Validity.VALID


def test_a_refuted_history_is_invalid_even_when_it_also_shows_nothing() -> None:
    h = history(*done(1, "read", result=[5]))  # no add succeeded, but 5 was invented
    assert check_set(h).outcome is Validity.INVALID


# --- bad input: one line naming where ---------------------------------------------------


def returns(f: str, value: str) -> str:
    """Two EDN lines: ``f`` invoked, then completed with ``value``."""
    invoke = f"{{:type :invoke, :f :{f}, :process 0}}\n"
    return invoke + f"{{:type :ok, :f :{f}, :value {value}, :process 0}}\n"


@pytest.mark.parametrize(
    ("model", "text", "message"),
    [
        ("set", '{"process": 0, "type": "invoke", "f": "write", "value": 1}\n',
         "h.jsonl:1: set model: operation 'write' is not one of add and read"),
        ("set", returns("read", "3"),
         "h.jsonl:2: set model: read must return a list of elements, not 3"),
        ("counter", '{:type :invoke, :f :add, :value "x", :process 0}\n',
         "h.jsonl:1: counter model: an add's value must be an integer, not 'x'"),
        ("counter", returns("read", "[1]"),
         "h.jsonl:2: counter model: a read's result must be an integer"),
        ("queue", returns("drain", "3"),
         "h.jsonl:2: queue model: drain must return a list of elements, not 3"),
        ("unique-ids", '{:type :invoke, :f :generate, :process [1]}\n',
         "h.jsonl:1: :process must be a number or keyword"),
        ("set", "add 1\n", "h.jsonl:1: not a Jepsen EDN or JSON Lines history"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_the_line(model: str, text: str, message: str) -> None:
    with pytest.raises(HistoryError) as caught:
        check_collection(parse_op_history(text, "h.jsonl"), model)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_edn_sets_vectors_keywords_and_the_nemesis() -> None:
    text = (
        "; a comment\n"
        "{:type :invoke, :f :add, :value :a, :process 0, :time 1000000000}\n"
        "{:type :info, :f :start, :value nil, :process :nemesis}\n"
        "{:type :ok, :f :add, :value :a, :process 0, :time 2000000000}\n"
        "{:type :invoke :f :read :process 1}\n"
        '{:type :ok :f :read :value #{:a [1 "x"]} :process 1}\n'
    )
    h = parse_op_history(text, "h.edn")
    assert [e.line for e in h] == [2, 4, 5, 6]
    assert h[0].time == 1.0 and h[3].value == (":a", (1, "x"))
    assert kinds(check_set(h)) == {"unexpected": [(1, "x")]}


def test_edn_strings_take_clojures_escapes() -> None:
    # \uXXXX (a surrogate pair is one character), \b and \f too, not just \n and \t:
    # an element written with them is the element the JSON Lines twin names.
    edn = r'"\u001b[2J \ud83d\ude00 \u00E9\b\f\n\t\\ \" \q"'
    h = parse_op_history(f"{{:type :invoke, :f :add, :value {edn}, :process 0}}\n", "h.edn")
    assert h[0].value == '\x1b[2J \U0001f600 \xe9\b\f\n\t\\ " q'
