"""Transactional checking: each anomaly class shown alone, Elle's files, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from seedbed.check import (
    History,
    HistoryError,
    Recorder,
    check_transactions,
    parse_txn_history,
    read_txn_history,
)
from seedbed.check._history import Event
from seedbed.check._txn_history import read_edn_line
from seedbed.check._txn_infer import RW, WW
from seedbed.cli._check import check_history

ELLE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "elle"

Spec = tuple[Any, str, list[Any], list[Any] | None]


def history(*txns: Spec, sequential: bool = True) -> History:
    """Transactions (process, status, invoked mops, completed mops), one after another.

    With ``sequential=False`` every transaction is invoked before any completes,
    so there is no real-time order between them.
    """
    invokes = [Event(p, "invoke", "txn", tuple(map(tuple, mops))) for p, _, mops, _ in txns]
    ends = [
        Event(p, status, "txn", None if done is None else tuple(map(tuple, done)))  # type: ignore[arg-type]
        for p, status, _, done in txns
    ]
    if sequential:
        events = [e for pair in zip(invokes, ends, strict=True) for e in pair]
    else:
        events = invokes + ends
    return History(events)


def ok(p: Any, *mops: list[Any]) -> Spec:
    invoked = [[f, k, None if f == "r" else v] for f, k, v in mops]
    return (p, "ok", invoked, list(mops))


def failed(p: Any, *mops: list[Any]) -> Spec:
    return (p, "fail", list(mops), list(mops))


def names(h: History, model: str = "list-append", **options: Any) -> set[str]:
    options.setdefault("realtime", False)
    options.setdefault("process", False)
    return set(check_transactions(h, model, **options).anomaly_names())  # type: ignore[arg-type]


# --- one history per class, showing it and only it ------------------------------


def test_g0_write_cycle() -> None:
    h = history(
        ok(1, ["append", "x", 1], ["append", "y", 1]),
        ok(2, ["append", "x", 2], ["append", "y", 2]),
        ok(3, ["r", "x", [1, 2]], ["r", "y", [2, 1]]),
        sequential=False,
    )
    assert names(h) == {"G0"}
    verdict = check_transactions(h, consistency="read-uncommitted", realtime=False)
    assert not verdict
    assert verdict.models["read-uncommitted"] == "ruled-out"


def test_edges_are_explained_from_the_version_orders() -> None:
    """Each ww and rw edge names the version it follows: read, first, or unread
    (an append no read shows goes after the longest read's last element)."""
    h = history(
        ok(1, ["append", "x", 1], ["append", "y", 1]),
        ok(2, ["append", "x", 2], ["append", "y", 2]),
        ok(3, ["r", "x", [1, 2]], ["r", "y", [2, 1]]),
        ok(4, ["r", "x", []], ["append", "x", 3]),
        sequential=False,
    )
    verdict = check_transactions(h, realtime=False, process=False)
    inference = verdict.inference
    assert inference is not None
    steps = {step for anomaly in verdict.anomalies for step in anomaly.steps}
    assert "T0 -ww-> T1: on key 'x', T1 wrote 2 right after T0's 1" in steps
    assert "T1 -ww-> T0: on key 'y', T0 wrote 1 right after T1's 2" in steps
    assert inference.explain(1, 3, WW) == "T1 -ww-> T3: on key 'x', T3 wrote 3 right after T1's 2"
    assert inference.explain(3, 0, RW) == (
        "T3 -rw-> T0: T3 read key 'x' = [], without T0's append of 1, "
        "which became its first element"
    )
    assert inference.succ[3] == {0: RW}  # one rw edge; a self-edge (its own append) is not kept


def test_g1c_circular_information_flow() -> None:
    h = history(
        ok(1, ["append", "x", 1], ["r", "y", [1]]),
        ok(2, ["append", "y", 1], ["r", "x", [1]]),
        sequential=False,
    )
    assert names(h) == {"G1c"}
    verdict = check_transactions(h, consistency="read-committed", realtime=False)
    assert verdict.models == {
        "strict-serializable": "ruled-out",
        "serializable": "ruled-out",
        "strong-snapshot-isolation": "ruled-out",
        "snapshot-isolation": "ruled-out",
        "repeatable-read": "ruled-out",
        "read-committed": "ruled-out",
        "read-uncommitted": "ok",
    }


def test_g_single_read_skew() -> None:
    h = history(
        ok(1, ["r", "y", []], ["r", "z", [1]]),
        ok(2, ["append", "y", 1], ["append", "z", 1]),
        sequential=False,
    )
    assert names(h) == {"G-single"}
    verdict = check_transactions(h, realtime=False, consistency="snapshot-isolation")
    assert verdict.models["snapshot-isolation"] == "ruled-out"
    assert verdict.models["read-committed"] == "ok"
    cycle = next(a for a in verdict.anomalies if a.name == "G-single")
    assert sorted(cycle.txns) == [0, 1]
    assert any("-rw->" in step and "without T1's append of 1" in step for step in cycle.steps)


def test_g2_item_write_skew_is_allowed_by_snapshot_isolation() -> None:
    h = history(
        ok(1, ["r", "x", []], ["append", "y", 1]),
        ok(2, ["r", "y", []], ["append", "x", 1]),
        sequential=False,
    )
    assert names(h) == {"G2-item"}
    verdict = check_transactions(h, realtime=False, consistency="snapshot-isolation")
    assert verdict
    assert verdict.models["serializable"] == "ruled-out"
    assert verdict.models["repeatable-read"] == "ruled-out"


def test_g_nonadjacent_is_refused_by_snapshot_isolation() -> None:
    h = history(
        ok(1, ["r", "a", []], ["r", "d", [1]]),
        ok(2, ["append", "a", 1], ["append", "b", 1]),
        ok(3, ["r", "b", [1]], ["r", "c", []]),
        ok(4, ["append", "c", 1], ["append", "d", 1]),
        sequential=False,
    )
    assert names(h) == {"G-nonadjacent"}
    verdict = check_transactions(h, realtime=False, consistency="snapshot-isolation")
    assert verdict.models["snapshot-isolation"] == "ruled-out"


def test_g_single_realtime_only_with_realtime_edges() -> None:
    h = history(ok(1, ["append", "x", 1]), ok(2, ["r", "x", []]))
    assert names(h) == set()
    assert names(h, realtime=True) == {"G-single-realtime"}
    verdict = check_transactions(h, consistency=["serializable", "strong-snapshot-isolation"])
    assert verdict.models["serializable"] == "ok"
    assert verdict.models["strong-snapshot-isolation"] == "ruled-out"
    assert not verdict


def test_g_single_process_when_one_client_misses_its_own_write() -> None:
    h = history(ok(1, ["append", "x", 1]), ok(1, ["r", "x", []]))
    assert names(h, process=True) == {"G-single-process"}
    assert names(h, process=True, realtime=True) == {"G-single-process"}


def test_g0_and_g1c_realtime() -> None:
    # T1 appended 2 and completed; T2, begun later, appended 1, which reads place first.
    g0 = history(ok(1, ["append", "x", 2]), ok(2, ["append", "x", 1]), ok(3, ["r", "x", [1, 2]]))
    assert names(g0) == set()
    assert names(g0, realtime=True) == {"G0-realtime"}
    # T1 read the 1 that T2 appended only after T1 had completed.
    g1c = history(ok(1, ["r", "x", [1]]), ok(2, ["append", "x", 1]))
    assert names(g1c) == set()
    assert names(g1c, realtime=True) == {"G1c-realtime"}


def test_g1a_aborted_read() -> None:
    h = history(failed(1, ["append", "x", 1]), ok(2, ["r", "x", [1]]))
    assert names(h) == {"G1a"}


def test_g1b_intermediate_read_also_misses_the_later_append() -> None:
    # T1 -wr-> T2 (saw 1) and T2 -rw-> T1 (missed 2): an intermediate read is
    # a G-single too, in list-append, and no history can show one without the other.
    h = history(ok(1, ["append", "x", 1], ["append", "x", 2]), ok(2, ["r", "x", [1]]))
    assert names(h) == {"G1b", "G-single"}


def test_dirty_update_shows_with_the_aborted_read_that_reveals_it() -> None:
    h = history(failed(1, ["append", "x", 1]), ok(2, ["append", "x", 2]), ok(3, ["r", "x", [1, 2]]))
    assert names(h) == {"G1a", "dirty-update"}


def test_garbage_duplicate_incompatible_internal_future() -> None:
    assert names(history(ok(1, ["r", "x", [9]]))) == {"garbage-read"}
    dup = history(ok(1, ["append", "x", 1]), ok(2, ["r", "x", [1, 1]]))
    assert names(dup) == {"duplicate-append"}
    incompatible = history(
        ok(1, ["append", "x", 1]),
        ok(2, ["append", "x", 2]),
        ok(3, ["r", "x", [1, 2]]),
        ok(4, ["r", "x", [2, 1]]),
    )
    assert names(incompatible) == {"incompatible-order"}
    internal = history(ok(1, ["append", "x", 1], ["r", "x", []]))
    assert names(internal) == {"internal"}
    verdict = check_transactions(internal, realtime=False)
    assert verdict.models["read-committed"] == "ok"
    assert verdict.models["snapshot-isolation"] == "ruled-out"
    assert names(history(ok(1, ["r", "x", [1]], ["append", "x", 1]))) == {"future-read"}


def test_own_appends_out_of_order() -> None:
    h = history(ok(1, ["append", "x", 1], ["append", "x", 2]), ok(2, ["r", "x", [2, 1]]))
    assert "incompatible-order" in names(h)


def test_valid_history_with_unknown_and_failed_transactions() -> None:
    h = history(
        ok(1, ["append", "x", 1]),
        (2, "info", [["append", "x", 2]], None),
        failed(3, ["append", "y", 7]),
        ok(4, ["r", "x", [1, 2]], ["r", "y", []]),
        (5, "info", [["append", "x", 3]], None),
    )
    verdict = check_transactions(h)
    assert verdict, verdict.explain()
    assert verdict.anomalies == ()
    assert set(verdict.models.values()) == {"ok"}


# --- rw-register ---------------------------------------------------------------------


def test_rw_register_anomalies() -> None:
    g_single = history(
        ok(1, ["r", "x", None], ["r", "y", 1]),
        ok(2, ["w", "x", 1], ["w", "y", 1]),
        sequential=False,
    )
    assert names(g_single, "rw-register") == {"G-single"}
    aborted = history(failed(1, ["w", "x", 1]), ok(2, ["r", "x", 1]))
    assert names(aborted, "rw-register") == {"G1a"}
    assert names(history(ok(1, ["r", "x", 5])), "rw-register") == {"garbage-read"}
    lost_update = history(
        ok(1, ["r", "x", None], ["w", "x", 1]),
        ok(2, ["r", "x", None], ["w", "x", 2]),
        ok(3, ["r", "x", 1]),
        sequential=False,
    )
    assert names(lost_update, "rw-register") == {"G2-item"}
    valid = history(ok(1, ["w", "x", 1]), ok(2, ["r", "x", 1], ["w", "x", 2]), ok(3, ["r", "x", 2]))
    assert check_transactions(valid, "rw-register")


def test_rw_register_cyclic_versions_and_internal() -> None:
    cyclic = history(
        ok(1, ["r", "x", 1], ["w", "x", 2]),
        ok(2, ["r", "x", 2], ["w", "x", 1]),
        sequential=False,
    )
    assert "cyclic-versions" in names(cyclic, "rw-register")
    internal = history(ok(1, ["w", "x", 1], ["r", "x", None]))
    assert names(internal, "rw-register") == {"internal"}


def test_rw_register_refuses_appends() -> None:
    with pytest.raises(HistoryError, match="not allowed in rw-register"):
        check_transactions(history(ok(1, ["append", "x", 1])), "rw-register")


# --- recording, parsing, bad input ----------------------------------------------------


def test_recorder_history_round_trips_through_json_lines() -> None:
    ticks = iter(range(100))
    recorder = Recorder(clock=lambda: float(next(ticks)))
    recorder.invoke("c1", "txn", [("append", "x", 1)])
    recorder.invoke("c2", "txn", [("r", "x", None)])
    recorder.ok("c1", [("append", "x", 1)])
    recorder.ok("c2", [("r", "x", [])])
    recorder.invoke("c2", "txn", [("r", "x", None)])
    recorder.ok("c2", [("r", "x", [])])
    verdict = check_transactions(recorder.history)
    assert verdict.anomaly_names() == ["G-single-realtime"]
    text = recorder.history.to_jsonl()
    again = check_transactions(parse_txn_history(text, "list-append"))
    assert again.anomaly_names() == ["G-single-realtime"]
    assert again.transactions == 3


def test_edn_with_comments_commas_and_missing_fields() -> None:
    text = """; a comment
{:index 0 :type :invoke, :value [[:append :k "a b"] [:r :k nil]]}

{:index 1, :type :ok :value [[:append :k "a b"] [:r :k ["a b"]]]} ; trailing
"""
    txns = parse_txn_history(text, "list-append")
    assert txns.txns[0].mops == (("append", ":k", "a b"), ("r", ":k", ("a b",)))
    assert txns.txns[0].process is None
    assert check_transactions(txns)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{:type :invoke, :value [[:append 1 1]]}\n{:type :ok}\n", "must be a list"),
        ("{:type :invoke, :value [[:cas 1 1]]}\n", "not allowed in list-append"),
        ("{:type :invoke, :value [[:append 1 1] [:append 1 1]]}\n", "more than once"),
        ("{:type :invoke, :value [[:append 1 1]]\n", "unclosed"),
        ("{:type :ok, :f :read, :value 1}\n", ":f :txn"),
        ("{:type :invoke :value [[:r 1 " + "9" * 5000 + "]]}\n", "number"),
    ],
)
def test_bad_input_names_the_line(text: str, message: str) -> None:
    with pytest.raises(HistoryError, match=message) as info:
        check_transactions(parse_txn_history(text, "list-append", "h.edn"))
    assert str(info.value).startswith("h.edn")


def test_map_values_are_checked_like_any_other_value() -> None:
    text = (
        "{:type :invoke, :value [[:append 1 {:a 1}] [:r 1 nil]], :process 0}\n"
        "{:type :ok, :value [[:append 1 {:a 1}] [:r 1 [{:a 1}]]], :process 0}\n"
        "{:type :invoke, :value [[:r 1 nil]], :process 1}\n"
        "{:type :ok, :value [[:r 1 [{:a 2}]]], :process 1}\n"
    )
    verdict = check_transactions(parse_txn_history(text, "list-append", "h.edn"))
    assert not verdict  # {:a 2} was never appended: a garbage read, found like any other


def test_deep_nesting_does_not_recurse() -> None:
    value = read_edn_line("[" * 100_000 + "]" * 100_000, "x", 1)
    assert isinstance(value, tuple)


# --- Elle's histories, with the results its README states ------------------------------


def elle(name: str) -> Path:
    path = ELLE / name
    if not path.exists():
        pytest.skip(
            f"Elle's test histories are not at {path}: they are not part of the "
            "repository (copy Elle's histories/ folder there to run these)"
        )
    return path


def test_paper_example_is_g_single() -> None:
    h = read_txn_history(elle("paper-example.edn"), "list-append")
    verdict = check_transactions(h, realtime=False, process=False, consistency="serializable")
    assert not verdict
    assert "G-single" in verdict.anomaly_names()
    cycle = next(a for a in verdict.anomalies if a.name == "G-single")
    # index 2 -wr-> index 4 -ww-> index 6 -rw-> index 2, as the paper draws it
    assert sorted(cycle.txns) == [1, 2, 3]
    kinds = sorted(step.split(" ")[1] for step in cycle.steps)
    assert kinds == ["-rw->", "-wr->", "-ww->"]


def test_si_without_g_single() -> None:
    h = read_txn_history(elle("si-without-g-single.edn"), "list-append")
    verdict = check_transactions(
        h, realtime=False, consistency=["snapshot-isolation", "repeatable-read"]
    )
    assert verdict.anomaly_names() == ["G2-item"]
    assert verdict.models["snapshot-isolation"] == "ok"
    assert verdict.models["repeatable-read"] == "ruled-out"
    with_realtime = check_transactions(h)
    assert "G-single-realtime" in with_realtime.anomaly_names()
    assert with_realtime.models["snapshot-isolation"] == "ok"
    # Asked about repeatable read, the verdict lists only what bears on it (as
    # Elle does); the realtime anomaly is still there on request.
    repeatable = check_transactions(h, consistency="repeatable-read")
    assert repeatable.anomaly_names() == ["G2-item"]
    assert "G-single-realtime" in repeatable.anomaly_names(every=True)
    assert "G-single-realtime" in repeatable.to_json()["all_anomalies"]
    assert repeatable.to_json()["anomalies"] == ["G2-item"]


def test_huge_scc() -> None:
    h = read_txn_history(elle("huge-scc.edn"), "list-append")
    verdict = check_transactions(h, consistency="strong-snapshot-isolation")
    assert not verdict
    # Only what bears on strong SI: G2-item-realtime (write skew) is allowed there.
    assert "G-single-realtime" in verdict.anomaly_names()
    assert "G2-item-realtime" not in verdict.anomaly_names()
    assert {"G2-item-realtime", "G-single-realtime"} <= set(verdict.anomaly_names(every=True))
    assert verdict.models["strict-serializable"] == "ruled-out"
    assert verdict.models["serializable"] == "ok"
    # Without time to extract a cycle, its existence is still proved from the component.
    rushed = check_transactions(h, consistency="strong-snapshot-isolation", search_seconds=0)
    proof = next(a for a in rushed.anomalies if a.name == "G-single-realtime")
    assert proof.proved_only
    assert rushed.models["strong-snapshot-isolation"] == "ruled-out"
    assert check_transactions(h, realtime=False, process=False, consistency="serializable")


# --- command line ---------------------------------------------------------------------


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(check_history, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout, result.stderr


def test_cli_exit_codes_json_and_explain(tmp_path: Path) -> None:
    good = tmp_path / "good.edn"
    good.write_text(
        "{:process 0 :type :invoke :f :txn :value [[:append 1 1]]}\n"
        "{:process 0 :type :ok :f :txn :value [[:append 1 1]]}\n"
        "{:process 1 :type :invoke :f :txn :value [[:r 1 nil]]}\n"
        "{:process 1 :type :ok :f :txn :value [[:r 1 [1]]]}\n"
    )
    bad = tmp_path / "bad.edn"
    bad.write_text(
        "{:process 0 :type :invoke :f :txn :value [[:append 1 1]]}\n"
        "{:process 0 :type :ok :f :txn :value [[:append 1 1]]}\n"
        "{:process 1 :type :invoke :f :txn :value [[:r 1 nil]]}\n"
        "{:process 1 :type :ok :f :txn :value [[:r 1 []]]}\n"
    )
    broken = tmp_path / "broken.edn"
    broken.write_text("{:process 0 :type :ok :f :txn :value [[:r 1 []]]}\n")
    assert run(str(good), "--model", "list-append")[0] == 0
    code, out, _ = run(str(good), str(bad), "--model", "list-append", "--explain")
    assert code == 1
    assert "invalid for strict-serializable [G-single-realtime]" in out
    assert "-realtime->" in out and "ruled out: strict-serializable" in out
    code, out, _ = run(
        str(bad), "--model", "list-append", "--consistency", "serializable", "--json"
    )
    assert code == 0
    obj = json.loads(out)
    assert obj["verdict"] == "valid" and obj["models"]["strict-serializable"] == "ruled-out"
    code, _, err = run(str(broken), str(good), "--model", "list-append")
    assert code == 2
    assert "broken.edn:1" in err and "Traceback" not in err
    code, _, err = run(str(good), "--model", "register", "--consistency", "serializable")
    assert code == 2 and "--consistency applies to" in err


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "check-histories.md"


def test_the_guides_worked_example_prints_what_it_shows(tmp_path: Path) -> None:
    """docs/how-to/check-histories.md writes skew.edn with a here-document, runs
    one command, and shows its output: the command prints exactly that."""
    text = GUIDE.read_text()
    section = text[text.index("## Transactions") :]
    blocks = section.split("```")
    script, shown = blocks[1], blocks[3]
    history_text = script[script.index("<<'EOF'\n") + 8 : script.index("\nEOF\n")]
    path = tmp_path / "skew.edn"
    path.write_text(history_text + "\n")
    command = script[script.index("\nEOF\n") + 5 :].split("#")[0]
    args = command.split()[2:]
    assert args[0] == "skew.edn"
    code, out, _ = run(str(path), *args[1:])
    assert code == 1
    expected = [line.replace("skew.edn", str(path), 1) for line in shown.splitlines()[1:]]
    mask = re.compile(r"\(\d+\.\d+ s\)")
    assert [mask.sub("(s)", line) for line in out.splitlines()] == [
        mask.sub("(s)", line) for line in expected
    ]


def test_out_of_time_still_decides_what_components_prove(tmp_path: Path) -> None:
    h = history(
        ok(1, ["r", "x", []], ["append", "y", 1]),
        ok(2, ["r", "y", []], ["append", "x", 1]),
        sequential=False,
    )
    verdict = check_transactions(h, consistency="snapshot-isolation", timeout=0)
    assert verdict.outcome == "unknown"
    assert verdict.anomaly_names() == ["G2"]
    assert verdict.models["serializable"] == "ruled-out"
    assert "G-nonadjacent" in verdict.undecided
    path = tmp_path / "skew.jsonl"
    path.write_text(h.to_jsonl())
    flags = ("--model", "list-append", "--timeout", "0")
    assert run(str(path), *flags, "--consistency", "snapshot-isolation")[0] == 3
    assert run(str(path), *flags, "--consistency", "serializable")[0] == 1


def test_twelve_thousand_transaction_cycle_needs_no_recursion() -> None:
    n = 12_000
    chain = [ok(0, ["append", "x", 1])]
    chain += [ok(0, ["append", f"k{i}", 1]) for i in range(1, n - 1)]
    chain.append(ok(0, ["r", "x", []]))
    verdict = check_transactions(history(*chain), search_seconds=120)
    assert verdict.anomaly_names() == ["G-single-process"]
    cycle = verdict.anomalies[0]
    assert len(cycle.steps) == n and not cycle.proved_only


def test_components_too_big_for_bit_sets_are_searched_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import seedbed.check._txn_cycles as cycles

    monkeypatch.setattr(cycles, "MAX_REACH", 1)
    skew = history(
        ok(1, ["r", "y", []], ["r", "z", [1]]),
        ok(2, ["append", "y", 1], ["append", "z", 1]),
        sequential=False,
    )
    assert names(skew) == {"G-single"}
    write_skew = history(
        ok(1, ["r", "x", []], ["append", "y", 1]),
        ok(2, ["r", "y", []], ["append", "x", 1]),
        sequential=False,
    )
    assert names(write_skew) == {"G2-item"}
