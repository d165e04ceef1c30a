"""Benchmark: the mutation score of the example store's scenarios, with cosmic-ray.

cosmic-ray plants one small change (an operator, a constant, a comparison,
a deleted statement...) in one of the store's modules at a time and runs a
test command; a mutant is killed when the command fails. The command here
is a short sweep: a few seeds of a few scenarios, stopping at the first
failing run, so a kill means the scenarios' oracles saw the bug.

Why cosmic-ray and not mutmut: cosmic-ray runs any test command against a
module with exactly one mutation written into it, and the code then runs
as written. mutmut 3 rewrites every function into a trampoline that picks
the active mutant at each call, which runs the whole store through an
extra indirection at every call (a simulation makes millions) and
needs pytest as the runner; a seed sweep is neither.

The store is copied to a temporary folder first: cosmic-ray edits the
files it mutates in place, and the work tree must never hold a mutant.

    PYTHONHASHSEED=0 uv run --group bench python bench/mutation.py --sample 40
    PYTHONHASHSEED=0 uv run --group bench python bench/mutation.py --modules machine,raftlog

`--heldout` runs instead the hand-written held-out set of
`bench/mutants_heldout.py` (19 realistic mutants and 3 harmless controls),
each in its own process under a budget of every scenario (swarm for
`--swarm-seeds`, the others for `--named-seeds` each), stopping at the
first failing run, and prints the kill rate and any control killed:

    PYTHONHASHSEED=0 nice uv run python bench/mutation.py --heldout --named-seeds 20

It reports; it never gates. A mutant that does not change behaviour (an
equivalent one) survives whatever the oracles do, so 100% is not the goal:
read the survivors.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = "machine,raftlog,raft,storage,client,server,transport"
# scenario:seeds, run in this order; one failing run kills the mutant.
SWEEP = "happy_path:2,crash_recovery:3,stale_leader:3,contention:2,disk_faults:2"

SWEEP_SCRIPT = '''\
"""The test command: exit 1 at the first failing run of the sweep, 0 if all pass."""
import sys
from examples.kvstore import scenarios
for item in sys.argv[1].split(","):
    name, seeds = item.split(":")
    for seed in range(int(seeds)):
        _, error = getattr(scenarios, name).execute(seed)
        if error is not None:
            print(f"killed by {name} seed {seed}: {str(error).splitlines()[0][:200]}")
            sys.exit(1)
'''


def _tool(name: str) -> str:
    """A console script of this interpreter's environment (cosmic-ray's, say)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise SystemExit(f"{name} not found: install the bench group (uv run --group bench ...)")
    return str(path)


def _config(work: Path, modules: list[str], sweep: str, timeout: float) -> Path:
    paths = ", ".join(f'"{work}/examples/kvstore/{module}.py"' for module in modules)
    command = f"{sys.executable} {work}/sweep.py {sweep}"
    config = work / "cosmic-ray.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = [{paths}]\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n',
        encoding="utf-8",
    )
    return config


def _sample(session: Path, count: int, seed: int) -> tuple[int, int]:
    """Keep `count` mutants drawn with `seed` (0: all), skip the rest; (all, kept)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        items = sorted(db.pending_work_items, key=lambda item: item.job_id)
        if not count or count >= len(items):
            return len(items), len(items)
        keep = {item.job_id for item in random.Random(seed).sample(items, count)}
        skipped = [item.job_id for item in items if item.job_id not in keep]
        db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        return len(items), count


def _results(session: Path) -> list[tuple[str, str, str]]:
    """(outcome, where, what) of every mutant run: outcome killed, survived or incompetent."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome

    rows = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            mutation = item.mutations[0]
            where = f"{Path(mutation.module_path).name}:{mutation.start_pos[0]}"
            what = f"{mutation.operator_name.split('/')[-1]} #{mutation.occurrence}"
            outcome = str(result.test_outcome.value if result.test_outcome else "incompetent")
            rows.append((outcome, where, what))
    return sorted(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", default=MODULES, help="store modules to mutate, by name")
    parser.add_argument("--sweep", default=SWEEP, help="scenario:seeds,... (the test command)")
    parser.add_argument("--sample", type=int, default=0, help="mutants to run (0: all)")
    parser.add_argument("--sample-seed", type=int, default=0, help="which sample")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant")
    parser.add_argument("--heldout", action="store_true", help="the held-out hand-written set")
    parser.add_argument("--swarm-seeds", type=int, default=50, help="--heldout: swarm's seeds")
    parser.add_argument("--named-seeds", type=int, default=20, help="--heldout: other scenarios'")
    parser.add_argument("--set", default="heldout", choices=("heldout", "round3"),
                        help="--heldout: the held-out set, or issue 45's kinds")  # fmt: skip
    parser.add_argument("--only", default="", help="--heldout: these mutants, by name")
    parser.add_argument("--scenarios", default="", help="--heldout: only these, by name")
    args = parser.parse_args()
    if args.heldout:
        _heldout(
            args.swarm_seeds, args.named_seeds, args.only, args.scenarios, args.timeout, args.set
        )
        return
    modules = [name.strip() for name in args.modules.split(",") if name.strip()]
    for module in modules:
        if not (ROOT / "examples" / "kvstore" / f"{module}.py").exists():
            raise SystemExit(f"--modules: no module examples/kvstore/{module}.py")
    with tempfile.TemporaryDirectory(prefix="kvstore-mutants-") as folder:
        work = Path(folder)
        shutil.copytree(ROOT / "examples", work / "examples")
        (work / "sweep.py").write_text(SWEEP_SCRIPT, encoding="utf-8")
        config, session = _config(work, modules, args.sweep, args.timeout), work / "session.sqlite"
        baseline = subprocess.run(
            [sys.executable, str(work / "sweep.py"), args.sweep], cwd=work, check=False
        )
        if baseline.returncode != 0:
            raise SystemExit("the unmutated store fails the sweep: fix that first")
        subprocess.run([_tool("cosmic-ray"), "init", str(config), str(session)], cwd=work,
                       check=True)  # fmt: skip
        total, kept = _sample(session, args.sample, args.sample_seed)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([_tool("cosmic-ray"), "exec", str(config), str(session)], cwd=work,
                       check=True)  # fmt: skip
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rows = _results(session)
    _report(rows, total, kept, wall, cpu, modules, args.sweep)


def _heldout(
    swarm: int, named: int, only: str, scenarios: str, timeout: float, which: str = "heldout"
) -> None:
    """Sweep each held-out mutant and control in a process of its own; print the score."""
    import json

    sys.path.insert(0, str(ROOT / "bench"))
    from mutants_heldout import CONTROLS, HELDOUT
    from mutants_round3 import ROUND_THREE

    if which == "round3":
        HELDOUT = ROUND_THREE  # the set scored below

    chosen = [name for name in only.split(",") if name]
    mutants = [m for m in HELDOUT + CONTROLS if not chosen or m.name in chosen]
    print(f"budget: swarm {swarm} seeds, the other scenarios {named} each, first failure kills"
          + (f" (only {scenarios})" if scenarios else ""))  # fmt: skip
    results = {}
    for mutant in mutants:
        command = [sys.executable, str(ROOT / "bench" / "mutants_heldout.py"), mutant.name,
                   str(swarm), str(named), scenarios]  # fmt: skip
        try:
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                  timeout=timeout, check=False)  # fmt: skip
            row = json.loads(done.stdout.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:  # undecided: not a kill, and said so, never "survived"
            row = {"killed_by": None, "why": f"stopped after {timeout:.0f}s wall (raise --timeout)",
                   "runs": 0, "cpu": 0, "undecided": True}  # fmt: skip
        except (IndexError, json.JSONDecodeError):
            row = {"killed_by": "crashed", "why": done.stderr[-160:], "runs": 0, "cpu": 0}
        results[mutant.name] = row
        verdict = f"killed by {row['killed_by']}" if row["killed_by"] else "SURVIVED"
        verdict = "UNDECIDED" if row.get("undecided") else verdict
        print(f"  {mutant.name}: {verdict} ({row['runs']} runs, {row['cpu']}s CPU)"
              + (f": {row['why']}" if row.get("why") else ""), flush=True)  # fmt: skip
    real = [m.name for m in mutants if m in HELDOUT]
    killed = [name for name in real if results[name]["killed_by"]]
    false_alarms = [m.name for m in mutants if m in CONTROLS and results[m.name]["killed_by"]]
    print(f"held-out kill rate: {len(killed)}/{len(real)} ({len(killed) / max(1, len(real)):.0%})")
    print(f"controls killed (false alarms): {len(false_alarms)} {false_alarms or ''}")
    undecided = [name for name, row in results.items() if row.get("undecided")]
    if undecided:
        print(f"undecided (timed out, counted as not killed): {', '.join(undecided)}")


def _report(
    rows: list[tuple[str, str, str]],
    total: int,
    kept: int,
    wall: float,
    cpu: float,
    modules: list[str],
    sweep: str,
) -> None:
    killed = sum(1 for row in rows if row[0] == "killed")
    survived = [row for row in rows if row[0] == "survived"]
    incompetent = sum(1 for row in rows if row[0] == "incompetent")
    ran = max(1, len(rows))
    score = killed / max(1, killed + len(survived))
    print(f"modules: {', '.join(modules)}; sweep: {sweep}")
    print(f"mutants: {total} generated, {kept} run, {len(rows)} finished")
    print(f"mutation score: {score:.1%} ({killed} killed, {len(survived)} survived, "
          f"{incompetent} incompetent: timed out or would not run)")  # fmt: skip
    print(f"seconds per mutant: {wall / ran:.1f} wall, {cpu / ran:.1f} CPU")
    if survived:
        print("survivors:")
        for _, where, what in survived:
            print(f"  {where} {what}")


if __name__ == "__main__":
    main()
