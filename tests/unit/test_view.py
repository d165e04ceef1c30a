"""`seedbed view`: annotations recorded outside the hash, the diagram's data, the command.

The world in `_viewworld` has a stream and datagrams through a partition, a
clog and a crash of the server, then an assertion fails: every kind of thing
the diagram draws.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _viewworld import HOSTILE, history_world, world
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
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("view") / "world.trace"
    world(2, path)
    return path


def notes_of(path: Path) -> list[list[object]]:
    lines = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return [line["note"] for line in lines if isinstance(line, dict) and "note" in line]


# -- annotations ---------------------------------------------------------------


@functools.cache
def world_hash() -> str:
    """The world's hash without a trace file: notes must leave it as it is."""
    unrecorded, _ = world(2, None)
    assert isinstance(unrecorded, str)
    return unrecorded


@functools.cache
def failing_forget_vote_seed() -> int:
    """The first seed at which the store's forgotten-vote bug is caught."""
    from examples.kvstore import scenarios

    return next(seed for seed in range(40) if scenarios.bug_forget_vote.execute(seed)[1])


def test_recording_a_trace_file_with_notes_leaves_the_hash_as_it_was(recorded: Path) -> None:
    unrecorded, error = world(2, None)
    assert unrecorded == world_hash()
    assert read_trace(recorded).end["hash"] == world_hash()
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
    replayed, error = world(2, None, replay=recorded)
    assert replayed == world_hash() and isinstance(error, seedbed.InvariantViolation)
    _, diverged = world(2, None, replay=recorded, rounds=19)
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
    # Placed at the exact time of the step that crashed and restarted it (the
    # trace's position markers): the timer's instant plus a few us of CPU.
    assert 400_000_000 <= d.times[crash[1]] < 400_100_000
    assert 450_000_000 <= d.times[crash[2]] < 450_100_000
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
    world(2, tmp_path / "h.trace", server="bad</script>", message=HOSTILE)
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
        (
            '{"seedbed": "0", "format": 2, "seed": 1, "options": {}}\n["time", "x"]\n{"end": 1}\n',
            "fields",
        ),
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
    seed = str(failing_forget_vote_seed())
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "view", "examples.kvstore.scenarios:bug_forget_vote",
         "--seed", seed, "-o", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the run failed: InvariantViolation" in done.stdout
    data = out.read_text(encoding="utf-8").split('id="trace-data">')[1].split("</script>")[0]
    assert "votes for one candidate" in json.loads(data)["failure"]["text"]


def test_a_failure_report_names_the_view_command_before_its_replay_command() -> None:
    from examples.kvstore import scenarios

    seed = failing_forget_vote_seed()
    _, error = scenarios.bug_forget_vote.execute(seed)
    assert error is not None
    lines = str(error).splitlines()
    target = f"examples.kvstore.scenarios:bug_forget_vote --seed {seed}"
    assert lines[-3:] == [
        f"  view:   seedbed view {target}",
        f"  shrink: seedbed shrink {target} --out shrunk.json",
        f"  replay: seedbed run {target}",
    ]
    assert seedbed.errors.view_command("seedbed.run(main, seed=1)") is None
    started_as_module = "/venv/bin/python -m seedbed run app:main --seed 3"
    assert seedbed.errors.view_command(started_as_module) == (
        "/venv/bin/python -m seedbed view app:main --seed 3"
    )
    assert seedbed.errors.view_command("uv run seedbed run app:main --seed 3") == (
        "uv run seedbed view app:main --seed 3"
    )


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


# -- history failures ----------------------------------------------------------------


def test_a_history_failure_blames_exactly_its_operations_with_the_explanation(
    tmp_path: Path,
) -> None:
    plain, error = history_world(1, None)
    traced, _ = history_world(1, tmp_path / "h.trace")
    assert plain == traced  # the check notes, like every note, are outside the hash
    assert isinstance(error, seedbed.InvariantViolation)
    d = build(tmp_path / "h.trace")
    assert [check["checker"] for check in d.checks] == ["transactions", "linearizability"]
    w, r = d.lanes.index("w"), d.lanes.index("r")
    by_check = {
        check["checker"]: sorted((d.ops[row][0], d.ops[row][3]) for row in check["ops"])
        for check in d.checks
    }
    # Two recorders use the same process names: each check blames its own.
    assert by_check == {
        "linearizability": [(w, "write"), (r, "read")],
        "transactions": [(w, "txn"), (r, "txn")],
    }
    blamed = {row for check in d.checks for row in check["ops"]}
    assert all((op[6] >= 0) == (row in blamed) for row, op in enumerate(d.ops))
    write_1 = next(op for op in d.ops if op[4].startswith("'p1' write(1)"))
    assert write_1[6] == -1  # a good operation is not blamed
    lin = d.checks[1]["text"]
    assert lin.startswith("not-linearizable\nthese operations cannot be ordered")
    assert " s)" not in lin.splitlines()[0]  # no wall-clock timing: the file is reproducible
    assert "G-single-realtime" in d.checks[0]["text"]


def test_a_history_checked_outside_a_run_or_read_from_a_file_still_checks(
    tmp_path: Path,
) -> None:
    from seedbed.check import Recorder, linearizable, parse_jsonl, register

    recorder = Recorder(clock=lambda: 0.0)
    with recorder.operation("p", "write", 1) as op:
        op.ok(1)
    with recorder.operation("p", "read") as op:
        op.ok(0)
    assert not linearizable(recorder.history, register(0))  # no loop: no notes, no error
    assert not linearizable(parse_jsonl(recorder.history.to_jsonl()), register(0))


def test_two_runs_of_a_history_failure_write_the_same_trace_file(tmp_path: Path) -> None:
    history_world(1, tmp_path / "a.trace")
    history_world(1, tmp_path / "b.trace")
    assert (tmp_path / "a.trace").read_bytes() == (tmp_path / "b.trace").read_bytes()


def test_the_page_holds_the_diagram_spooled_and_encoded_as_the_script_decodes_it(
    recorded: Path, tmp_path: Path
) -> None:
    kept = build(recorded)  # the columns as lists
    write_view(recorded, tmp_path / "w.html")  # the columns spooled to disk and encoded
    page = (tmp_path / "w.html").read_text(encoding="utf-8")
    data = json.loads(page.split('id="trace-data">')[1].split("</script>")[0])
    times, now = [], 0
    for delta in data["dtimes"]:
        now += delta
        times.append(now)
    points, pos = [], 0
    for step, lane, kind, text in data["points"]:
        pos += step
        points.append(
            [pos, lane, data["kinds"][kind], data["texts"][text] if isinstance(text, int) else text]
        )
    assert times == kept.times and points == kept.points and data["arrows"] == kept.arrows
    assert len(data["texts"]) < len(points)  # repeated texts are held once
    assert data["ops"] == kept.ops and data["lanes"] == kept.lanes


def test_view_refuses_to_write_over_a_symlink_or_a_fifo_and_leaves_them_be(
    recorded: Path, tmp_path: Path
) -> None:
    import os
    import stat

    kept = tmp_path / "kept.txt"
    kept.write_text("mine")
    link = tmp_path / "link.html"
    link.symlink_to(kept)
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    for target, kind in ((link, "a symlink"), (fifo, "a FIFO")):
        result = CliRunner().invoke(view, [str(recorded), "-o", str(target)])
        assert result.exit_code == 2 and kind in result.output, result.output
        assert result.output.count("\n") == 1
    assert link.is_symlink() and kept.read_text() == "mine"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_refused_history_whose_values_cannot_be_shown_still_gets_its_verdict(
    tmp_path: Path,
) -> None:
    import asyncio

    from seedbed.check import Recorder, linearizable, register

    async def main() -> bool:
        recorder = Recorder()
        with recorder.operation("p", "write", 1) as op:
            await asyncio.sleep(0.01)
            op.ok(1)
        with recorder.operation("p", "read") as op:
            await asyncio.sleep(0.01)
            op.ok(10**5000)  # its repr raises: past the interpreter's digit limit
        return bool(linearizable(recorder.history, register(0)))

    trace = tmp_path / "huge.trace"
    assert seedbed.run(main, seed=1, trace=trace).value is False
    (check,) = build(trace).checks
    assert "the history was refused (its explanation failed" in check["text"]


def _chatty(seed: int, trace: Path | None) -> str:
    """Two nodes exchanging a message every 10 ms for a second over links that
    stall often: their episodes hold traffic the view must shade."""
    import asyncio

    sim = seedbed.Simulation(
        seed=seed, trace=trace, network=seedbed.NetworkConfig(stall_per_second=5.0)
    )

    async def server() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)
                await writer.drain()

        await asyncio.start_server(echo, "srv", 9000)
        await asyncio.sleep(2)

    async def client() -> None:
        await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection("srv", 9000)
        for number in range(100):
            writer.write(f"{number}\n".encode())
            await reader.readline()
            await asyncio.sleep(0.01)
        writer.close()

    sim.host("srv", server)
    sim.client("cli", client)
    return sim.run(max_time=5).trace_hash


def test_a_link_stall_that_held_traffic_is_shaded_on_both_ends_until_it_ends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stalls.trace"
    assert _chatty(1, path) == _chatty(1, None)  # the notes stay outside the hash
    d = build(path)
    stalls = [span for span in d.spans if span[3] == "link_stall"]
    assert stalls, "no stall episode was drawn"
    assert {d.lanes[span[0]] for span in stalls} == {"srv", "cli"}
    for _lane, start, end, _kind, text in stalls:
        assert text in ("srv>cli", "cli>srv") and start <= end
        assert d.times[start] <= d.times[end] <= 5_000_000_000
    lasting = [f for f in d.faults if f[2] == "link_stall"]
    assert lasting and all(0 < f[1] - f[0] <= 250_000_000 for f in lasting)
