"""The fuzz tier: every reader and every config, fed what users (and disks) produce.

Each property says: the input is either accepted or refused with the
documented error type (`UsageError`, of which `HistoryError` is one), never
anything else: no `ValueError` from a 5,000-digit integer, no
`RecursionError` from deep nesting, no `TypeError` from a dict where a number
was expected. Budgets are fixed and small (derandomized, so CI runs the
same examples every time); raise `SEEDBED_FUZZ_EXAMPLES` for a longer hunt.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seedbed
from seedbed import UsageError
from seedbed._core.tracefile import read_trace
from seedbed.check import (
    COLLECTION_MODELS,
    MODELS,
    check_collection,
    linearizable,
    parse_history,
    parse_op_history,
)
from seedbed.check._history import Event, History

EXAMPLES = int(os.environ.get("SEEDBED_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# -- values that break naive readers -------------------------------------------

huge_ints = st.integers(4290, 6000).map(lambda digits: 10**digits - 1)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    huge_ints,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def _deep(depth: int, open_: str, close: str) -> str:
    return open_ * depth + close * depth


deep_json = st.integers(500, 5000).map(lambda n: _deep(n, "[", "]"))


def _json_text(value: Any) -> str:
    """JSON text, huge integers included (the writer may print what a reader refuses)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.dumps(value)
    finally:
        sys.set_int_max_str_digits(limit)


json_lines = st.one_of(json_values.map(_json_text), deep_json, st.text(max_size=40))

# -- trace files -----------------------------------------------------------------

headers = st.fixed_dictionaries(
    {"seedbed": st.just("0.1.0"), "seed": st.one_of(st.integers(-5, 2**66), huge_ints, scalars)},
    optional={"options": st.one_of(st.just({}), json_values)},
)


@st.composite
def trace_files(draw: st.DrawFn) -> str:
    header = draw(headers)
    lines = [_json_text(header)]
    lines += draw(st.lists(json_lines, max_size=6))
    if draw(st.booleans()):
        lines.append(_json_text({"end": draw(st.integers(0, 8)), "hash": "0" * 16}))
    return "\n".join(lines) + "\n"


@FUZZ
@given(text=trace_files())
def test_trace_reader_accepts_or_refuses_in_one_line(tmp_path_factory: Any, text: str) -> None:
    path = Path(tmp_path_factory.mktemp("trace")) / "t.jsonl"
    path.write_text(text)
    try:
        read_trace(path)
    except UsageError as exc:
        assert "\n" not in str(exc)


# -- histories -------------------------------------------------------------------

event_objects = st.fixed_dictionaries(
    {
        "process": st.one_of(st.integers(0, 3), scalars, json_values),
        "type": st.sampled_from(["invoke", "ok", "fail", "info", "bogus"]),
        "f": st.sampled_from(["read", "write", "cas", "get", "put", "append"]),
        "value": json_values,
    },
    optional={"time": scalars},
)
edn_lines = st.one_of(
    st.builds(
        "{{:process {}, :type :{}, :f :{}, :key {}, :value {}}}".format,
        st.sampled_from(["0", "1", "{}", "[1 2]", "99999999999999999999" * 300]),
        st.sampled_from(["invoke", "ok", "fail", "info"]),
        st.sampled_from(["get", "put", "read"]),
        st.sampled_from(['"k"', "{:a 1}", "[1 [2]]", "1", _deep(3000, "[", "]")]),
        st.sampled_from(["nil", '"v"', "{[1] 2}", "{{:a 1} 2}", "9" * 5000, _deep(3000, "[", "]")]),
    ),
    st.text(max_size=30).map(lambda t: "{:" + t),
)
jepsen_lines = st.builds(
    "INFO  jepsen.util - {}\t:{}\t:{}\t{}".format,
    st.sampled_from(["0", "1", "9" * 5000]),
    st.sampled_from(["invoke", "ok", "fail", "info"]),
    st.sampled_from(["read", "write", "cas"]),
    st.sampled_from(["nil", "1", "[1 2]", "9" * 5000, "[9 " + "9" * 5000 + "]", ":timed-out"]),
)


@st.composite
def history_texts(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["jsonl", "edn", "jepsen"]))
    if kind == "jsonl":
        lines = draw(st.lists(st.one_of(event_objects.map(_json_text), json_lines), max_size=8))
    elif kind == "edn":
        lines = draw(st.lists(edn_lines, max_size=8))
    else:
        lines = draw(st.lists(jepsen_lines, max_size=8))
    return "\n".join(lines) + "\n"


def _check_all_models(history: History) -> None:
    for name in sorted(MODELS):
        try:
            verdict = linearizable(history, MODELS[name](), timeout=2)
        except UsageError as exc:  # ModelError: the history does not fit the model
            assert "\n" not in str(exc)
        else:
            assert str(verdict.outcome)


@FUZZ
@given(text=history_texts())
def test_history_parsers_and_checker_accept_or_refuse(text: str) -> None:
    try:
        history = parse_history(text, "fuzz.jsonl")
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    _check_all_models(history)


@FUZZ
@given(
    values=st.lists(
        st.tuples(
            st.sampled_from(["read", "write", "cas", "get", "put"]), json_values, json_values
        ),
        max_size=5,
    )
)
def test_checker_takes_any_value_a_recorder_holds(values: list[tuple[str, Any, Any]]) -> None:
    """Values recorded in memory (dicts, lists...) check without a TypeError."""
    events = []
    for process, (f, argument, result) in enumerate(values):
        events.append(Event(process, "invoke", f, argument))
        events.append(Event(process, "ok", f, result))
    _check_all_models(History(events, "<recorder>"))


# -- the collection checkers' histories (set, queue, counter, unique ids) --------

COLLECTION_FUNCTIONS = ["add", "read", "enqueue", "dequeue", "drain", "generate", "txn"]
op_values = st.sampled_from(
    ["nil", "1", "-3", "1.5", "true", ":k", '"s"', "#{}", "#{1 2}", "#{1 1}", "[1 [2]]",
     "{:a 1}", "{[1] 2}", "#{#{1}}", "9" * 5000, _deep(3000, "[", "]"), _deep(3000, "#{", "}")]
)  # fmt: skip
op_edn_lines = st.one_of(
    st.builds(
        "{{:type :{}, :f :{}, :value {}, :process {}}}".format,
        st.sampled_from(["invoke", "ok", "fail", "info", "bogus"]),
        st.sampled_from(COLLECTION_FUNCTIONS),
        op_values,
        st.sampled_from(["0", "1", ":nemesis", "[1]", "{}", '"p"', "nil"]),
    ),
    st.text(max_size=30).map(lambda t: "{:" + t),
    st.text(max_size=30),
)
op_event_objects = st.fixed_dictionaries(
    {
        "process": st.one_of(st.integers(0, 3), scalars),
        "type": st.sampled_from(["invoke", "ok", "fail", "info"]),
        "f": st.sampled_from(COLLECTION_FUNCTIONS),
        "value": json_values,
    }
)


@st.composite
def op_history_texts(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        lines = draw(st.lists(op_edn_lines, max_size=10))
    else:
        lines = draw(st.lists(st.one_of(op_event_objects.map(_json_text), json_lines), max_size=10))
    return "\n".join(lines) + "\n"


def _check_all_collections(history: History) -> None:
    for model in COLLECTION_MODELS:
        try:
            verdict = check_collection(history, model)
        except UsageError as exc:  # the history does not fit the model: one line
            assert "\n" not in str(exc)
        else:
            assert str(verdict.outcome) in ("valid", "invalid", "vacuous")
            assert verdict.explain() and json.dumps(verdict.to_json())


@FUZZ
@given(text=op_history_texts())
def test_collection_readers_and_checkers_accept_or_refuse(text: str) -> None:
    try:
        history = parse_op_history(text, "fuzz.edn")
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    _check_all_collections(history)


@FUZZ
@given(
    values=st.lists(
        st.tuples(
            st.sampled_from(COLLECTION_FUNCTIONS),
            st.one_of(json_values, st.sets(st.integers(0, 3)), st.just(10**5000)),
            st.one_of(json_values, st.sets(st.text(max_size=2)), st.just([10**5000])),
        ),
        max_size=6,
    )
)
def test_collection_checkers_take_any_value_a_recorder_holds(
    values: list[tuple[str, Any, Any]],
) -> None:
    """Values recorded in memory (sets, dicts, huge ints) check or refuse in one line."""
    events = []
    for process, (f, argument, result) in enumerate(values):
        events.append(Event(process, "invoke", f, argument))
        events.append(Event(process, "ok", f, result))
    _check_all_collections(History(events, "<recorder>"))


# -- configs -------------------------------------------------------------------

setting_values = st.one_of(
    scalars,
    st.just(1e300),
    st.just(10**400),
    st.just(-1),
    st.just("1"),
    st.just([1]),
    st.just({"a": 1}),
    st.floats(0, 2e9),
    st.integers(0, 2**70),
)
CONFIGS = [seedbed.LoopConfig, seedbed.NetworkConfig, seedbed.DiskConfig, seedbed.ClockConfig]


@st.composite
def config_kwargs(draw: st.DrawFn) -> tuple[type, dict[str, Any]]:
    config = draw(st.sampled_from(CONFIGS))
    names = [field for field in config.__dataclass_fields__]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    return config, {name: draw(setting_values) for name in chosen}


@FUZZ
@given(case=config_kwargs())
def test_every_config_accepts_a_runnable_value_or_refuses_in_one_line(
    case: tuple[type, dict[str, Any]],
) -> None:
    config, kwargs = case
    try:
        built = config(**kwargs)
    except UsageError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 300
        return
    _run_briefly(built)


def _run_briefly(config: Any) -> None:
    """An accepted config must run: a client that sleeps, connects and writes a file."""
    import asyncio

    async def server() -> None:
        await asyncio.start_server(lambda r, w: None, port=9)
        await asyncio.Event().wait()

    async def client() -> str:
        await asyncio.sleep(0.5)
        try:
            await asyncio.wait_for(asyncio.open_connection("n1", 9), 5)
            await seedbed.fs.write_file("/x", b"data")
        except OSError:
            pass
        return "done"

    options: dict[str, Any] = {}
    if isinstance(config, seedbed.LoopConfig):
        options = {k: v for k, v in config.__dict__.items() if k != "max_time"}
        options["max_steps"] = None
    else:
        kind = {
            seedbed.NetworkConfig: "network",
            seedbed.DiskConfig: "disk",
            seedbed.ClockConfig: "clock",
        }[type(config)]
        options = {kind: config}
    sim = seedbed.Simulation(seed=1, **options)
    sim.host("n1", server)
    sim.client("c1", client)
    try:
        sim.run(max_time=60)
    except seedbed.SimulationFailure:
        pass  # a budget or deadlock is an answer; a crash would not be


# -- results files (sweep --resume and report) -----------------------------------

result_fields = ("status", "error_type", "message", "bucket", "location", "replay", "steps",
                 "virtual_time", "wall_time", "faults", "assertions", "profile", "trace_hash",
                 "result_digest", "output")  # fmt: skip
good_values = {
    "status": st.sampled_from(["pass", "fail", "crash", "timeout"]),
    "wall_time": st.floats(0, 10),
    "faults": st.just({"crash": {"injected": 2, "effective": 1}}),
}


@st.composite
def result_records(draw: st.DrawFn) -> str:
    record: dict[str, Any] = {"kind": "seed", "seed": draw(st.one_of(st.integers(0, 9), scalars))}
    for name in result_fields:
        choice = draw(st.integers(0, 3))
        if choice == 1:
            record[name] = draw(good_values.get(name, st.text(max_size=6)))
        elif choice == 2:
            record[name] = draw(json_values)
    return _json_text(record)


@st.composite
def results_files(draw: st.DrawFn) -> str:
    header = {
        "kind": "header",
        "version": 1,
        "target": draw(st.one_of(st.just("m:f"), scalars)),
        "options": draw(st.one_of(st.just({}), json_values)),
        "seeds": draw(scalars),
    }
    lines = [_json_text(header)] if draw(st.booleans()) else []
    lines += draw(st.lists(st.one_of(result_records(), json_lines), max_size=6))
    return "\n".join(lines) + "\n"


def check_sweep_results(path: Path) -> None:
    """What `seedbed sweep --resume` does with a results file before and after running."""
    from seedbed._harness.sweeps._results import check_resumable, read_results
    from seedbed._harness.sweeps._summary import summarize

    results = read_results(path)
    summarize(list(results.seeds.values()))
    check_resumable(path, results, {"target": "m:f", "options": {}})


def check_report(path: Path) -> None:
    """What `seedbed report` does: fold the file and render the page."""
    from seedbed._harness.report._aggregate import read_results
    from seedbed._harness.report._page import render

    render(read_results(path), generated_by="fuzz")


@FUZZ
@given(text=results_files())
def test_results_readers_accept_or_refuse_in_one_line(tmp_path_factory: Any, text: str) -> None:
    from seedbed._harness.report import ResultsError

    path = Path(tmp_path_factory.mktemp("results")) / "results.jsonl"
    path.write_text(text)
    for reader in (check_sweep_results, check_report):
        try:
            reader(path)
        except (UsageError, ResultsError) as exc:
            assert "\n" not in str(exc)


# -- explore's folder (explore --resume and report) ------------------------------

STEADY = f"{Path(__file__).parents[1] / 'unit' / '_explore_targets.py'}:steady"


@pytest.fixture(scope="module")
def a_search(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real search's folder: the log and corpus that damaged copies start from."""
    from seedbed._harness.search import ExploreSpec, explore

    out = tmp_path_factory.mktemp("search") / "out"
    explore(ExploreSpec(STEADY, out, seed=1, runs=12))
    return out


@st.composite
def damaged(draw: st.DrawFn, rows: list[bytes]) -> bytes:
    """A log (or a corpus file) with one to three lines damaged: bytes put in
    (invalid UTF-8 among them), cut, or the line replaced by another."""
    rows = list(rows)
    for _ in range(draw(st.integers(1, 3))):
        number = draw(st.integers(0, len(rows) - 1))
        row = rows[number]
        how = draw(st.sampled_from(["bytes", "cut", "line"]))
        if how == "bytes":
            at = draw(st.integers(0, len(row)))
            rows[number] = row[:at] + draw(st.binary(min_size=1, max_size=4)) + row[at:]
        elif how == "cut":
            rows[number] = row[: draw(st.integers(0, len(row)))]
        else:
            rows[number] = draw(json_lines).encode("utf-8", "surrogatepass")
    return b"\n".join(rows)


def _resume_and_report(out: Path) -> None:
    """What `explore --resume` reads before its first run, then what `report` reads."""
    from seedbed._harness.report import ResultsError
    from seedbed._harness.report._search import read_searches, render_search
    from seedbed._harness.search import ExploreSpec
    from seedbed._harness.search._engine import _plan_of, _source, replayed

    spec = ExploreSpec(STEADY, out, seed=1, runs=24, resume=True)
    for reader in ("resume", "report"):
        try:
            if reader == "report":
                render_search(*read_searches(out), generated_by="fuzz")
                continue
            search, snapshot = replayed(spec)
            for index in range(search.state.runs, search.state.runs + 8):
                _source(_plan_of(spec, index, snapshot), snapshot)
        except (UsageError, ResultsError) as exc:
            assert "\n" not in str(exc)


def _copy(search: Path, into: Path, *, corpus: bool = False) -> Path:
    """A folder with the search's log, and its corpus: copied to be damaged, else linked."""
    out = into / "out"
    out.mkdir()
    if corpus:
        (out / "corpus").mkdir()
        for path in (search / "corpus").iterdir():
            (out / "corpus" / path.name).write_bytes(path.read_bytes())
    else:
        (out / "corpus").symlink_to(search / "corpus")
    (out / "explore.jsonl").write_bytes((search / "explore.jsonl").read_bytes())
    return out


# Every field a reader of the log knows, and values of every type for it.
KNOWN_FIELDS = ["kind", "index", "plan", "status", "steps", "new", "features", "declared",
                "improved", "entry", "failure_file", "bucket", "message", "replay", "order",
                "at", "when", "stopped", "runs", "ran", "seconds", "budget", "target", "seed",
                "options", "version", "batch"]  # fmt: skip
# Values of every type, each wrong for some field: a huge int (10**400 cannot be a
# float), nesting, a list where a path belongs, a pair that is not two counts...
WRONG = [7, -1, 2.5, 10**30, 10**400, True, "x", [1], ["a", 2], [[0, "n"]], [[-1, 1]],
         {"a": 1}, {"max x": "y"}, {"max x": 10**400}, [0.5], [None], [10**400]]  # fmt: skip


def _with_field(rows: list[bytes], field: str, value: Any, pick: int) -> bytes:
    """The log with `field` set to `value` on a line that holds it (the `pick`th)."""
    rows = list(rows)
    lines = [n for n, row in enumerate(rows) if row.strip()]
    holding = [n for n in lines if f'"{field}": '.encode() in rows[n]] or lines
    number = holding[pick % len(holding)]
    line = json.loads(rows[number])
    line[field] = value
    rows[number] = _json_text(line).encode()
    return b"\n".join(rows)


def test_explore_readers_refuse_every_wrong_type_of_every_field(
    tmp_path: Path, a_search: Path
) -> None:
    """Exhaustive where sampling is not: each field a reader knows, each wrong value."""
    rows = (a_search / "explore.jsonl").read_bytes().split(b"\n")
    out = _copy(a_search, tmp_path)
    for number, (field, value) in enumerate(
        (field, value) for field in KNOWN_FIELDS for value in WRONG
    ):
        (out / "explore.jsonl").write_bytes(_with_field(rows, field, value, number))
        _resume_and_report(out)


PER_FIELD = settings(FUZZ, max_examples=max(3, EXAMPLES // 20))


@pytest.mark.parametrize("field", KNOWN_FIELDS)
@PER_FIELD
@given(value=json_values, pick=st.integers(0, 100))
def test_explore_readers_refuse_a_field_of_any_value_in_one_line(
    tmp_path_factory: Any, a_search: Path, field: str, value: Any, pick: int
) -> None:
    rows = (a_search / "explore.jsonl").read_bytes().split(b"\n")
    out = _copy(a_search, Path(tmp_path_factory.mktemp("field")))
    (out / "explore.jsonl").write_bytes(_with_field(rows, field, value, pick))
    _resume_and_report(out)


@FUZZ
@given(data=st.data())
def test_explore_readers_accept_or_refuse_a_damaged_log_in_one_line(
    tmp_path_factory: Any, a_search: Path, data: st.DataObject
) -> None:
    rows = (a_search / "explore.jsonl").read_bytes().split(b"\n")
    out = _copy(a_search, Path(tmp_path_factory.mktemp("log")))
    (out / "explore.jsonl").write_bytes(data.draw(damaged(rows)))
    _resume_and_report(out)


@FUZZ
@given(data=st.data())
def test_explore_resume_accepts_or_refuses_a_damaged_corpus_file_in_one_line(
    tmp_path_factory: Any, a_search: Path, data: st.DataObject
) -> None:
    out = _copy(a_search, Path(tmp_path_factory.mktemp("entry")), corpus=True)
    entry = data.draw(st.sampled_from(sorted((out / "corpus").iterdir())))
    entry.write_bytes(data.draw(damaged(entry.read_bytes().split(b"\n"))))
    _resume_and_report(out)
