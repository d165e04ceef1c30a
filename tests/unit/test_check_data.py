"""Verdicts on real histories recorded by other people's harnesses.

The data lives outside the repository, in ../shared/data/linearizability
(Porcupine's test data: Jepsen etcd logs and kv logs, with the verdicts the
Porcupine suite asserts). It is never copied here; without it these skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seedbed.check import Model, Outcome, cas_register, kv, linearizable, read_history
from seedbed.check._witness import unorderable

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "linearizability"
MISSING = f"linearizability data not found at {DATA} (it is not part of the repository)"
# Not a speed target (bench/linearizability.py has those): a guard against hangs.
GENEROUS_TIMEOUT = 120.0


def verdicts() -> list[tuple[str, bool]]:
    table = DATA / "verdicts.tsv"
    if not table.is_file():
        return []
    rows = [line.split("\t") for line in table.read_text().splitlines()[1:] if line.strip()]
    return [(name, flag.strip() == "true") for name, flag in rows]


def model_for(name: str) -> Model:
    return cas_register() if name.startswith("etcd/") else kv()


NO_DATA = [pytest.param("", True, marks=pytest.mark.skip(reason=MISSING))]


@pytest.mark.parametrize(("name", "expected"), verdicts() or NO_DATA)
def test_published_verdicts(name: str, expected: bool) -> None:
    history = read_history(DATA / name)
    verdict = linearizable(history, model_for(name), timeout=GENEROUS_TIMEOUT, witness=False)
    assert verdict.outcome is not Outcome.UNKNOWN, f"{name} undecided"
    assert bool(verdict) is expected, f"{name}: {verdict.outcome}"


# The etcd logs that are linearizable, all others not: the verdicts of the
# checker before its search learned to skip pointless and twin steps (commit
# d03f78c), which agree with Porcupine's on the 50 logs it asserts. The
# refinements must change how fast a verdict comes, never which.
EMPTY_ETCD = frozenset((95,))
LINEARIZABLE_ETCD = frozenset(
    (2, 5, 7, 18, 25, 31, 38, 45, 48, 49, 51, 53, 56, 67, 75, 76, 80, 87, 92, 95, 98, 100, 101, 102)
)


def test_every_etcd_log_gets_the_verdict_it_always_had() -> None:
    if not DATA.is_dir():
        pytest.skip(MISSING)
    logs = sorted((DATA / "etcd").glob("*.log"))
    assert len(logs) == 103
    for number, log in enumerate(logs):
        assert log.name == f"etcd_{number:03d}.log"
        history = read_history(log)
        verdict = linearizable(
            history, cas_register(), timeout=GENEROUS_TIMEOUT, witness=False, allow_empty=True
        )
        assert verdict.outcome is not Outcome.UNKNOWN, f"{log.name} undecided"
        assert bool(verdict) is (number in LINEARIZABLE_ETCD), f"{log.name}: {verdict.outcome}"
        if number in EMPTY_ETCD:  # Jepsen's log of a cluster that never started: no evidence
            assert linearizable(history, cas_register()).outcome is Outcome.VACUOUS
        else:
            assert linearizable(history, cas_register()).outcome is not Outcome.VACUOUS


@pytest.mark.parametrize("name", ["etcd/etcd_000.log", "kv/c10-bad.txt"])
def test_witness_on_real_failures_is_unorderable_and_one_minimal(name: str) -> None:
    if not (DATA / name).is_file():
        pytest.skip(MISSING)
    history = read_history(DATA / name)
    model = model_for(name)
    verdict = linearizable(history, model, timeout=GENEROUS_TIMEOUT)
    assert not verdict and verdict.witness_minimal
    assert 0 < len(verdict.witness) < len(history.operations())
    part = [op for op in history.operations() if op.status != "fail"]
    if verdict.part is not None:
        part = [op for op in part if op.value[0] == verdict.part]
    witness = list(verdict.witness)
    assert unorderable(part, model, witness, None)
    for drop in witness:
        assert not unorderable(part, model, [op for op in witness if op is not drop], None)
