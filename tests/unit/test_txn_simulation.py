"""Transaction histories recorded inside a simulation, checked afterwards.

A toy store runs each transaction's micro-operations one at a time with a
random (virtual) delay between them. Without isolation, concurrent clients
interleave inside each other's transactions and the checker finds the
anomalies; holding a lock for the whole transaction makes every history
strictly serializable. Same seed, same history, same verdict.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import seedbed
from seedbed.check import Recorder, check_transactions

KEYS = ("a", "b", "c")


def workload(isolated: bool) -> Any:
    async def main() -> str:
        store: dict[str, list[int]] = {}
        lock = asyncio.Lock()
        recorder = Recorder()
        counter = iter(range(1, 10_000))

        async def transaction(mops: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
            done = []
            for f, key, value in mops:
                await asyncio.sleep(random.random() / 100)
                if f == "append":
                    store[key] = [*store.get(key, []), value]
                    done.append((f, key, value))
                else:
                    done.append((f, key, tuple(store.get(key, []))))
            return done

        async def client(name: str) -> None:
            for _ in range(15):
                mops = [
                    ("append", random.choice(KEYS), next(counter))
                    if random.random() < 0.5
                    else ("r", random.choice(KEYS), None)
                    for _ in range(3)
                ]
                recorder.invoke(name, "txn", tuple(mops))
                if isolated:
                    async with lock:
                        done = await transaction(mops)
                else:
                    done = await transaction(mops)
                recorder.ok(name, tuple(done))

        await asyncio.gather(*(client(f"c{i}") for i in range(4)))
        return recorder.history.to_jsonl()

    return main


def verdict_of(isolated: bool, seed: int) -> Any:
    from seedbed.check import parse_txn_history

    text = seedbed.run(workload(isolated), seed=seed).value
    return check_transactions(parse_txn_history(text, "list-append"))


def test_isolated_store_is_strict_serializable() -> None:
    for seed in range(3):
        verdict = verdict_of(True, seed)
        assert verdict, verdict.explain()
        assert verdict.transactions == 60


def test_unisolated_store_shows_anomalies_the_same_way_every_time() -> None:
    verdict = verdict_of(False, 1)
    assert not verdict
    assert verdict.models["serializable"] == "ruled-out"
    again = verdict_of(False, 1)
    assert again.anomaly_names() == verdict.anomaly_names()
    assert [a.text for a in again.anomalies] == [a.text for a in verdict.anomalies]
