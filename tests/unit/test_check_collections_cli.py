"""``seedbed check-history --model set|queue|counter|unique-ids``, and ``--allow-empty`` for all.

The histories are the kind a Jepsen test or a seedbed Recorder leaves:
Jepsen EDN (sets as ``#{...}``, the nemesis's lines among the clients') and
seedbed JSON Lines. Each refused one has a correct twin that passes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedbed.cli._check import check_history


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(check_history, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout, result.stderr


def edn(*ops: tuple[int, str, str, str]) -> str:
    return "".join(
        f"{{:type :{kind}, :f :{f}, :value {value}, :process {p}, :time {i * 1000}, :index {i}}}\n"
        for i, (p, kind, f, value) in enumerate(ops)
    )


def jsonl(*ops: tuple[int, str, str, object]) -> str:
    return "".join(
        json.dumps({"process": p, "type": kind, "f": f, "value": value}) + "\n"
        for p, kind, f, value in ops
    )


NEMESIS = '{:type :info, :f :start, :value [:isolated {"n1" #{"n2"}}], :process :nemesis}\n'


def set_history(last_read: str) -> str:
    return edn(
        (0, "invoke", "add", "0"), (0, "ok", "add", "0"),
        (1, "invoke", "add", "1"), (1, "ok", "add", "1"),
        (2, "invoke", "read", "nil"), (2, "ok", "read", "#{0 1}"),
    ) + NEMESIS + edn(
        (0, "invoke", "add", "2"), (0, "info", "add", ":timeout"),
        (2, "invoke", "read", "nil"), (2, "ok", "read", last_read),
    )  # fmt: skip


def queue_history(dequeued: list[object]) -> str:
    rows: list[tuple[int, str, str, object]] = []
    for element in ("a", "b", "c"):
        rows += [(0, "invoke", "enqueue", element), (0, "ok", "enqueue", element)]
    for element in dequeued:
        rows += [(1, "invoke", "dequeue", None), (1, "ok", "dequeue", element)]
    rows += [(1, "invoke", "dequeue", None), (1, "ok", "dequeue", None)]  # empty now
    return jsonl(*rows)


@pytest.fixture
def write(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def test_a_set_that_lost_an_acknowledged_add_exits_1_and_its_twin_0(write) -> None:  # type: ignore[no-untyped-def]
    lost = write("lost.edn", set_history("#{0}"))
    kept = write("kept.edn", set_history("#{1 0}"))
    code, out, err = run(lost, "--model", "set", "--explain")
    assert (code, err) == (1, "")
    assert out.startswith(f"{lost}: invalid [lost]: adds 3, acknowledged 2,")
    assert "lost: element 1: its add (#1) was acknowledged and read #2 saw it last" in out
    assert "#1 p1 add(1) -> ok (lines 3-4)" in out and "read() -> ok (0,) (lines 10-11)" in out
    code, out, _ = run(kept, "--model", "set", "--explain")
    assert code == 0 and out.startswith(f"{kept}: valid: adds 3, acknowledged 2, reads 2, stable 2")
    assert "never-read (not an error): element 2: its add's outcome is unknown" in out


def test_a_queue_that_dequeued_one_element_twice_and_another_never_exits_1(write) -> None:  # type: ignore[no-untyped-def]
    bad = write("bad.jsonl", queue_history(["a", "b", "a"]))
    good = write("good.jsonl", queue_history(["b", "a", "c"]))
    code, out, _ = run(bad, good, "--model", "queue", "--json")
    assert code == 1
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["verdict"] for row in rows] == ["invalid", "valid"]
    assert rows[0]["refuted_by"] == ["lost", "duplicated"]
    assert [(f["kind"], f["subject"]) for f in rows[0]["findings"]] == [
        ("lost", "c"),
        ("duplicated", "a"),
    ]
    assert rows[0]["counts"]["lost"] == 1 and rows[1]["counts"]["dequeued"] == 3
    assert run(good, "--model", "queue")[0] == 0


def test_a_history_where_no_add_and_no_read_succeeded_exits_1_in_one_line(write) -> None:  # type: ignore[no-untyped-def]
    nothing = write("nothing.edn", edn(
        (0, "invoke", "add", "1"), (0, "info", "add", ":timeout"),
        (1, "invoke", "read", "nil"), (1, "fail", "read", ":unavailable"),
    ))  # fmt: skip
    code, out, err = run(nothing, "--model", "set")
    assert (code, err) == (1, "")
    assert out.count("\n") == 1
    assert out.startswith(
        f"{nothing}: cannot show the set property: no add and no read succeeded "
        "(--allow-empty accepts it) ("
    )
    assert run(nothing, "--model", "set", "--allow-empty")[0] == 0


@pytest.mark.parametrize(
    ("model", "text", "says"),
    [
        ("register", jsonl((0, "invoke", "write", 1), (0, "ok", "write", 1),
                           (1, "invoke", "read", None), (1, "info", "read", None)),
         "cannot show linearizability: no read succeeded"),
        ("cas-register", "INFO  jepsen.util - 0\t:invoke\t:write\t1\n"
                         "INFO  jepsen.util - 0\t:ok\t:write\t1\n",
         "cannot show linearizability: no read or compare-and-set succeeded"),
        ("list-append", edn((0, "invoke", "txn", "[[:append 1 1]]"),
                            (0, "ok", "txn", "[[:append 1 1]]")),
         "cannot show strict-serializable: no committed transaction read a key"),
        ("counter", jsonl((0, "invoke", "add", 1), (0, "fail", "add", None),
                          (1, "invoke", "read", None), (1, "ok", "read", 0)),
         "cannot show the counter property: no add was acknowledged"),
        ("unique-ids", jsonl((0, "invoke", "generate", None), (0, "info", "generate", None)),
         "cannot show the unique-ids property: no generate succeeded"),
    ],
)  # fmt: skip
def test_every_model_refuses_a_history_that_cannot_show_its_property(
    write,
    model: str,
    text: str,
    says: str,  # type: ignore[no-untyped-def]
) -> None:
    path = write("h.txt", text)
    code, out, _ = run(path, "--model", model)
    assert code == 1 and out.startswith(f"{path}: {says}") and out.count("\n") == 1
    assert run(path, "--model", model, "--allow-empty")[0] == 0
    code, out, _ = run(path, "--model", model, "--json")
    assert code == 1 and json.loads(out)["verdict"] == "vacuous"


@pytest.mark.parametrize("model", ["register", "list-append", "set", "unique-ids"])
def test_an_empty_file_is_bad_input_unless_empty_is_allowed(write, model: str) -> None:  # type: ignore[no-untyped-def]
    path = write("empty.jsonl", "\n")
    code, _, err = run(path, "--model", model)
    assert code == 2 and "nothing to check" in err and err.count("\n") == 1
    assert run(path, "--model", model, "--allow-empty")[0] == 0


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{:type :invoke, :f :add, :value 1, :process 0}\n{:type :ok, :f :add :value}\n',
         "h.txt:2: EDN map with an odd number of forms"),
        ('{"process": 0, "type": "invoke", "f": "add", "value": 1}\n{"process": 0, "type": "ok"',
         "h.txt:2: invalid JSON"),
        ("{:type :invoke, :f :pop, :process 0}\n",
         "h.txt:1: set model: operation 'pop' is not one of add and read (is --model right?)"),
        ("{:type :invoke, :f :add, :value " + "[" * 5000 + "]" * 5000 + ", :process 0}\n",
         "h.txt:1:"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_one_line_and_no_traceback(write, text: str, where: str) -> None:  # type: ignore[no-untyped-def]
    path = write("h.txt", text)
    code, out, err = run(path, "--model", "set")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path[: -len('h.txt')]}{where}") and err.count("\n") == 1
