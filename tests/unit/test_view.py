"""`seedbed view`: annotations recorded outside the hash, the diagram's data, the command.

The world in `_viewworld` has a stream and datagrams through a partition, a
clog and a crash of the server, then an assertion fails: every kind of thing
the diagram draws.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _viewworld import HOSTILE, world
from click.testing import CliRunner

import seedbed
from seedbed._core.tracefile import RecordedTrace, read_trace
from seedbed._view import build, write_view
from seedbed._view._page import embed_json
from seedbed.cli._view import view
from seedbed.errors import UsageError

# The world's hash at seed 3, computed on the commit before annotations existed
# (and equal with or without a trace file): notes must never move it. 3.12
# and later run this world differently from 3.11 (README: One trace across versions).
WORLD_HASHES = {
    (3, 11): "079c78671ce2a24d",
    (3, 12): "0d902494a154b15a",
    (3, 13): "0d902494a154b15a",
}
WORLD_HASH = WORLD_HASHES[sys.version_info[:2]]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("view") / "world.trace"
    world(3, path)
    return path


def notes_of(path: Path) -> list[list[object]]:
    lines = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return [line["note"] for line in lines if isinstance(line, dict) and "note" in line]


# -- annotations ---------------------------------------------------------------


def test_recording_a_trace_file_with_notes_leaves_the_hash_as_it_was(recorded: Path) -> None:
    unrecorded, error = world(3, None)
    assert unrecorded == WORLD_HASH
    assert read_trace(recorded).end["hash"] == WORLD_HASH
    assert isinstance(error, seedbed.InvariantViolation)
    kinds = {note[0] for note in notes_of(recorded)}
    assert {"seg", "chunk", "arrive", "dgram", "dgram.at", "stall", "op"} <= kinds


def test_a_scenario_seed_hashes_the_same_with_a_trace_file(tmp_path: Path) -> None:
    from examples.kvstore import scenarios

    plain, _ = scenarios.crash_recovery_wan.execute(0)  # a seed that passes: it has a hash
    traced, _ = scenarios.crash_recovery_wan.execute(0, trace=tmp_path / "kv.trace")
    assert plain is not None and traced is not None
    assert plain.trace_hash == traced.trace_hash
    assert notes_of(tmp_path / "kv.trace")


def test_notes_are_not_events_the_end_line_counts_and_replay_skips_them(recorded: Path) -> None:
    trace = read_trace(recorded)
    assert trace.end["end"] == len(trace.events)
    assert all(isinstance(event, tuple) and event[0] != "note" for event in trace.events)
    seen: list[object] = []
    reader = RecordedTrace(recorded)
    reader.on_note = seen.append
    while reader.next_event() is not None:
        pass
    reader.close()
    assert reader.defect is None and len(seen) == len(notes_of(recorded))


def test_a_trace_with_notes_replays_and_a_changed_run_is_still_caught(recorded: Path) -> None:
    replayed, error = world(3, None, replay=recorded)
    assert replayed == WORLD_HASH and isinstance(error, seedbed.InvariantViolation)
    _, diverged = world(3, None, replay=recorded, rounds=19)
    assert isinstance(diverged, seedbed.Nondeterminism)


def test_a_malformed_note_is_a_defect_naming_its_line(recorded: Path, tmp_path: Path) -> None:
    lines = recorded.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('{"note"'))
    lines[at] = '{"note": {"not": "an array"}}'
    bad = tmp_path / "bad.trace"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=rf"bad.trace:{at + 1}: an annotation's note"):
        read_trace(bad)


# -- the diagram's data ----------------------------------------------------------


def test_the_diagram_has_lanes_arrows_spans_operations_and_the_failure(recorded: Path) -> None:
    d = build(recorded)
    assert d.lanes == ["(world)", "srv", "cli"]
    srv, cli = 1, 2
    statuses = {arrow[5] for arrow in d.arrows}
    assert {"ok", "held", "dropped"} <= statuses
    assert any(a[1] == cli and a[3] == srv and "hello" in a[4] for a in d.arrows)
    assert all(a[0] <= a[2] for a in d.arrows)  # a delivery never comes before its send
    spans = {(lane, kind) for lane, _a, _b, kind, _t in d.spans}
    assert {(cli, "partition"), (srv, "partition"), (cli, "clog"), (srv, "crash")} <= spans
    crash = next(s for s in d.spans if s[3] == "crash")
    assert d.times[crash[1]] == 400_000_000 and d.times[crash[2]] == 450_000_000
    assert any(op[0] == cli and op[5] == "ok" and "echo(0)" in op[4] for op in d.ops)
    assert d.failure is not None and "the final check: ok" in d.failure["text"]
    assert d.points[-1][2] == "failure" or d.failure["pos"] >= d.points[-1][0] - 5


def test_a_trace_without_notes_still_gives_lanes_faults_and_the_failure(
    recorded: Path, tmp_path: Path
) -> None:
    lines = recorded.read_text(encoding="utf-8").splitlines()
    old = tmp_path / "old.trace"
    old.write_text("\n".join(x for x in lines if not x.startswith('{"note"')) + "\n")
    d = build(old)
    assert d.lanes == ["(world)", "srv", "cli"] and not d.arrows and not d.ops
    assert {span[3] for span in d.spans} == {"partition", "clog", "crash"}
    assert d.failure is not None


def test_the_embedded_json_cannot_end_its_script_or_open_a_comment() -> None:
    text = embed_json({"name": HOSTILE, "more": "</SCRIPT><!-- &amp;"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["name"] == HOSTILE


def test_a_hostile_page_holds_no_run_string_as_markup(tmp_path: Path) -> None:
    world(3, tmp_path / "h.trace", server="bad</script>", message=HOSTILE)
    write_view(tmp_path / "h.trace", tmp_path / "h.html")
    page = (tmp_path / "h.html").read_text(encoding="utf-8")
    assert "onerror" not in page.split('id="trace-data">')[0]
    assert page.count("</script>") == 2 and "<img" not in page
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", page)


# -- the command ------------------------------------------------------------------


def test_view_of_a_trace_writes_the_page_and_says_what_it_drew(
    recorded: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run.html"
    result = CliRunner().invoke(view, [str(recorded), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output and "3 lanes" in result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the file is empty"),
        ("not json\n", "not valid JSON"),
        ("[1, 2]\n", "not a seedbed trace header"),
        ('{"seedbed": "0", "seed": 1, "options": {}}\n["time", "x"]\n{"end": 1}\n', "fields"),
    ],
)
def test_view_of_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, content: str, expected: str
) -> None:
    bad = tmp_path / "bad.trace"
    bad.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(view, [str(bad), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and expected in result.output
    assert not (tmp_path / "x.html").exists()


def test_view_of_a_missing_file_or_target_or_bad_seed_is_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (
        [str(tmp_path / "missing.trace")],
        [str(tmp_path)],
        ["no_such_module_here:main", "--seed", "1"],
        ["examples.race:main", "--seed", "minus"],
        ["examples.race:main", "--seed", "1", "--strategy", "bogus"],
    ):
        result = runner.invoke(view, [*args, "-o", str(tmp_path / "x.html")])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith("error: ") and result.output.count("\n") == 1


def test_view_of_a_target_seed_runs_it_and_draws_the_failure(tmp_path: Path) -> None:
    out = tmp_path / "kv.html"
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "view", "examples.kvstore.scenarios:bug_forget_vote",
         "--seed", "6", "-o", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the run failed: InvariantViolation" in done.stdout
    data = out.read_text(encoding="utf-8").split('id="trace-data">')[1].split("</script>")[0]
    assert "votes for one candidate" in json.loads(data)["failure"]["text"]


def test_a_failure_report_names_the_view_command_before_its_replay_command() -> None:
    from examples.kvstore import scenarios

    _, error = scenarios.bug_forget_vote.execute(6)
    assert error is not None
    lines = str(error).splitlines()
    target = "examples.kvstore.scenarios:bug_forget_vote --seed 6"
    assert lines[-2:] == [f"  view:   seedbed view {target}", f"  replay: seedbed run {target}"]
    assert seedbed.errors.view_command("seedbed.run(main, seed=1)") is None


def test_a_trace_cut_short_is_drawn_up_to_the_cut_and_says_so(
    recorded: Path, tmp_path: Path
) -> None:
    lines = recorded.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.trace"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    d = build(cut)
    assert d.lanes == ["(world)", "srv", "cli"] and d.arrows
    assert d.meta["defect"] is not None and "incomplete" in d.meta["defect"]
    assert d.failure is None  # the failure came after the cut
    out = tmp_path / "cut.html"
    result = CliRunner().invoke(view, [str(cut), "-o", str(out)])
    assert result.exit_code == 2 and out.exists()
    assert "the page shows the run up to there" in result.output
