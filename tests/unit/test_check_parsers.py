"""Reading foreign history formats, and saying exactly where one is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedbed.check import (
    HistoryError,
    detect_format,
    parse_history,
    parse_jepsen_log,
    parse_kv_log,
    read_history,
)

JEPSEN = (
    "INFO  jepsen.util - 3\t:invoke\t:cas\t[3 0]\n"
    "INFO  jepsen.util - 1   :invoke :read   nil\n"  # some lines use spaces
    "INFO  jepsen.util - 3\t:fail\t:cas\t[3 0]\n"
    "INFO  jepsen.util - 1\t:ok\t:read\t4\n"
    "INFO  jepsen.util - 2\t:invoke\t:write\t4\n"
    "INFO  jepsen.util - 2\t:info\t:write\t:timed-out\n"
    "INFO  jepsen.util - 5\t:invoke\t:read\tnil\n"
    "INFO  jepsen.util - 5\t:fail\t:read\t:timed-out\n"
    "INFO  jepsen.util - 6\t:invoke\t:cas\t[0 1]\n"
    "INFO  jepsen.util - 6\t:ok\t:cas\t[0 1]\n"
)
KV = (
    '{:process 0, :type :invoke, :f :append, :key "4", :value "x 0 1 y"}\n'
    '{:process 0, :type :ok, :f :append, :key "4", :value "x 0 1 y"}\n'
    '{:process 1, :type :invoke, :f :get, :key "4", :value nil}\n'
    '{:value "say \\"hi\\"", :key "4", :f :get, :type :ok, :process 1}\n'
)


def test_jepsen_log_events() -> None:
    h = parse_jepsen_log(JEPSEN, "etcd.log")
    assert [(e.process, e.type, e.f, e.value) for e in h] == [
        (3, "invoke", "cas", (3, 0)),
        (1, "invoke", "read", None),
        (3, "ok", "cas", False),  # a failed cas is a compare that saw another value
        (1, "ok", "read", 4),
        (2, "invoke", "write", 4),
        (2, "info", "write", "timed-out"),
        (5, "invoke", "read", None),
        (5, "fail", "read", "timed-out"),
        (6, "invoke", "cas", (0, 1)),
        (6, "ok", "cas", True),
    ]
    assert [e.line for e in h][:3] == [1, 2, 3]


def test_kv_log_events_including_the_general_edn_reader() -> None:
    h = parse_kv_log(KV, "c.txt")
    assert [(e.process, e.type, e.f, e.value) for e in h] == [
        (0, "invoke", "append", ("4", "x 0 1 y")),
        (0, "ok", "append", ("4", "x 0 1 y")),
        (1, "invoke", "get", ("4", None)),
        (1, "ok", "get", ("4", 'say "hi"')),
    ]


def test_format_is_recognized_from_content() -> None:
    assert detect_format(JEPSEN) == "jepsen"
    assert detect_format("\n" + KV) == "edn"
    assert detect_format('{"process": 0, "type": "invoke", "f": "read"}') == "jsonl"
    assert detect_format("   \n") == "empty"
    assert len(parse_history("")) == 0
    assert parse_history(KV)[0].f == "append"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("INFO  jepsen.util - 1\t:invoke\t:read\tnil\nhello\n", 2, "not a Jepsen log event"),
        ("INFO  jepsen.util - 1\t:invoke\t:write\t{1}\n", 1, "cannot read value"),
        ("INFO  jepsen.util - 1\t:begin\t:read\tnil\n", 1, "unknown event type"),
        ("INFO  jepsen.util - 1\t:ok\t:read\t3\n", 1, "no open invocation"),
        ('{:process 0, :type :invoke, :f :get, :key "1", :value nil}\n{:process 0\n', 2,
         "unterminated"),
        ('{:process 0, :type :invoke, :f :get}\n', 1, "missing :key"),
        ('{:process 0, :type :begin, :f :get, :key "1"}\n', 1, "unknown :type"),
        ('{:process 0, :type :ok, :f :get, :key "1"} {}\n', 1, "exactly one"),
        ("hello\n", 1, "unrecognized history format"),
    ],
)  # fmt: skip
def test_bad_input_names_file_and_line_in_one_line(text: str, line: int, reason: str) -> None:
    with pytest.raises(HistoryError) as info:
        parse_history(text, "f.log")
    assert str(info.value).startswith(f"f.log:{line}: ")
    assert reason in str(info.value)
    assert "\n" not in str(info.value)
    assert info.value.line == line


def test_unreadable_files_are_history_errors(tmp_path: Path) -> None:
    binary = tmp_path / "b.log"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(HistoryError, match=r"b\.log: not UTF-8"):
        read_history(binary)
    with pytest.raises(HistoryError, match=r"missing\.log"):
        read_history(tmp_path / "missing.log")
