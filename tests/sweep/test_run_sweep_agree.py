"""`run` and `sweep` agree on every seed's outcome, whatever the result object does
(issue 27 item 7): a result whose `repr` raised passed under `run` and was
recorded as "worker killed by SIGKILL" under `sweep`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sweep._cli import records, seedbed

HOSTILE = """
class Hostile:
    def __repr__(self):
        raise RuntimeError("no repr")
    def __str__(self):
        raise RuntimeError("no str")
    def __eq__(self, other):
        raise RuntimeError("no eq")
    def __hash__(self):
        raise RuntimeError("no hash")

class Key:
    def __hash__(self):
        return 1
    def __repr__(self):
        raise ValueError("no key repr")

async def main():
    import asyncio
    seed = asyncio.get_running_loop().run_context().seed
    shapes = [Hostile(), [Hostile(), 1], {"k": Hostile()}, {Key(): 1}, (Hostile(),)]
    if seed == 5:
        raise AssertionError("seed five fails")
    return shapes[seed % len(shapes)]
"""


def test_run_and_sweep_agree_on_results_with_hostile_methods(tmp_path: Path) -> None:
    program = tmp_path / "hostile.py"
    program.write_text(HOSTILE)
    target = f"{program}:main"
    done = seedbed("sweep", target, "--seeds", "6", "--jobs", "1", "--out", str(tmp_path / "o"))
    assert "killed" not in done.stdout + done.stderr, done.stdout
    swept = {r["seed"]: r for r in records(tmp_path / "o" / "results.jsonl") if r["kind"] == "seed"}
    assert sorted(swept) == list(range(6))
    for seed, record in swept.items():
        ran = seedbed("run", target, "--seed", str(seed), "--json")
        outcome = json.loads(ran.stdout)
        assert record["status"] == ("pass" if ran.returncode == 0 else "fail"), (seed, ran.stderr)
        assert record["trace_hash"] == outcome["trace_hash"]
    assert [swept[s]["status"] for s in range(6)] == ["pass"] * 5 + ["fail"]
