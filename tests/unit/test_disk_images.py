"""A world's disks saved at the end of a run and loaded at the start of another (issue 48)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seedbed import Scenario, Simulation, UsageError
from seedbed.fs._image import ImageError

REPO = Path(__file__).resolve().parents[2]


async def writer() -> None:
    os.makedirs("/srv/app", exist_ok=True)
    with open("/srv/app/kept", "w") as f:
        f.write("fsynced")
        f.flush()
        os.fsync(f.fileno())
    with open("/srv/app/volatile", "w") as f:
        f.write("never fsynced")
    await asyncio.sleep(100)


async def reader() -> dict[str, str]:
    found = {}
    for name in sorted(os.listdir("/srv/app")) if os.path.isdir("/srv/app") else []:
        with open(f"/srv/app/{name}") as f:
            found[name] = f.read()
    return found


def first_run(folder: Path, state: str = "synced", seed: int = 1) -> None:
    sim = Simulation(seed=seed)
    sim.host("n1", writer)
    sim.run(max_time=1.0)
    sim.save_disks(folder, state=state)


def second_run(folder: Path, seed: int = 2) -> dict[str, str]:
    sim = Simulation(seed=seed, disks=folder)
    sim.client("n1", reader)
    return sim.run(max_time=1.0).values["n1"]  # type: ignore[no-any-return]


def test_a_synced_image_holds_what_was_durable_and_a_new_world_starts_on_it(
    tmp_path: Path,
) -> None:
    first_run(tmp_path / "disks")
    assert second_run(tmp_path / "disks") == {"kept": "fsynced"}
    assert not os.path.exists("/srv/app/kept")
    manifest = json.loads((tmp_path / "disks" / "seedbed-disks.json").read_text())
    assert manifest["format"] == "seedbed-disks" and manifest["version"] == 1
    assert [node["name"] for node in manifest["nodes"]] == ["n1"]


def test_a_crashed_image_keeps_tears_or_loses_the_unsynced_file_as_the_seed_draws(
    tmp_path: Path,
) -> None:
    outcomes = set()
    for seed in range(8):
        folder = tmp_path / f"disks{seed}"
        first_run(folder, "crashed", seed)
        outcomes.add(second_run(folder).get("volatile"))
    assert None in outcomes  # its name was never synced: gone in every seed
    assert outcomes == {None}
    with pytest.raises(UsageError, match="once the run has ended"):
        Simulation(seed=0).save_disks(tmp_path / "early", state="crashed")


def test_loading_is_part_of_the_run_so_two_images_hash_differently(tmp_path: Path) -> None:
    first_run(tmp_path / "a", seed=1)
    first_run(tmp_path / "b", seed=1)
    json_a = (tmp_path / "a" / "0" / "tree.json").read_text()
    (tmp_path / "b" / "0" / "blobs" / "0").write_bytes(b"FSYNCED")  # edited by hand
    sim = Simulation(seed=2, disks=tmp_path / "a")
    sim.client("n1", reader)
    hashes = {sim.run(max_time=1.0).trace_hash, sim.run_context().seed}
    with pytest.raises(ImageError, match="differ from what the image recorded"):
        Simulation(seed=2, disks=tmp_path / "b")
    assert json_a == (tmp_path / "b" / "0" / "tree.json").read_text()
    assert len(hashes) == 2


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda d: (d / "seedbed-disks.json").unlink(), "not a folder of saved disks"),
        (
            lambda d: (d / "seedbed-disks.json").write_text(
                '{"format": "seedbed-disks", "version": 9, "nodes": []}'
            ),
            "format version 9",
        ),
        (lambda d: (d / "0" / "tree.json").write_text("{not json"), "tree.json"),
        (lambda d: (d / "0" / "blobs" / "0").unlink(), "is missing"),
        (lambda d: (d / "seedbed-disks.json").write_bytes(b"\xff\xfe"), "seedbed-disks.json"),
    ],
    ids=["no-manifest", "newer-format", "bad-tree", "missing-blob", "not-utf8"],
)
def test_a_damaged_image_is_refused_in_one_line(tmp_path: Path, damage, says) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "disks"
    first_run(folder)
    damage(folder)
    with pytest.raises(UsageError) as caught:
        Simulation(seed=0, disks=folder)
    message = str(caught.value)
    assert says in message and "\n" not in message


def test_saving_never_replaces_a_folder_that_is_not_an_image(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("precious")
    with pytest.raises(UsageError, match="not a seedbed disk image"):
        first_run(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "precious"
    first_run(tmp_path / "image")
    first_run(tmp_path / "image", seed=5)  # an image is replaced whole
    assert json.loads((tmp_path / "image" / "seedbed-disks.json").read_text())["seed"] == 5


def test_an_image_of_a_node_the_world_lacks_is_refused(tmp_path: Path) -> None:
    first_run(tmp_path / "disks")
    sim = Simulation(seed=0, disks=tmp_path / "disks")
    sim.client("other", reader)
    with pytest.raises(UsageError, match="node 'n1', which this world does not have"):
        sim.run(max_time=1.0)


def test_a_relative_data_folder_loads_under_the_new_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def write_relative() -> None:
        os.makedirs("state", exist_ok=True)
        with open("state/v", "w") as f:
            f.write("1")
            f.flush()
            os.fsync(f.fileno())

    async def read_relative() -> str:
        with open("state/v") as f:
            return f.read()

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    monkeypatch.chdir(tmp_path / "old")
    sim = Simulation(seed=0)
    sim.client("n1", write_relative)
    sim.run(max_time=1.0)
    sim.save_disks(tmp_path / "disks")
    monkeypatch.chdir(tmp_path / "new")
    sim = Simulation(seed=0, disks=tmp_path / "disks")
    sim.client("n1", read_relative)
    assert sim.run(max_time=1.0).values == {"n1": "1"}


def seedbed_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args], cwd=REPO, capture_output=True, text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"}, check=False,
    )  # fmt: skip


def test_a_run_saves_disks_and_the_next_run_loads_them(tmp_path: Path) -> None:
    from examples import plainlog

    from seedbed._harness.targets import run_target
    from seedbed.world._disks import saving

    folder = tmp_path / "disks"
    with saving(folder):  # what --save-disks does around the run
        assert run_target(plainlog.plainlog_fixed, 1).error is None
    fresh, loaded = (run_target(plainlog.plainlog_fixed, 2, disks=d) for d in (None, folder))
    assert loaded.trace_hash != fresh.trace_hash  # it started on the saved log and snapshot
    failed = next(
        o for s in range(10) if (o := run_target(plainlog.plainlog, s, disks=folder)).error
    )
    assert failed.replay.endswith(f"--load-disks {folder}")  # replayed on the same disks
    bad = seedbed_cli("run", "examples.plainlog:plainlog", "--seed", "3",
                      "--load-disks", str(tmp_path))  # fmt: skip
    assert bad.returncode == 2 and "not a folder of saved disks" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_scenario_takes_saved_disks_as_a_world_option(tmp_path: Path) -> None:
    first_run(tmp_path / "disks")
    seen: dict[str, object] = {}

    def setup(sim: Simulation) -> None:
        async def main() -> None:
            seen.update(await reader())

        sim.client("n1", main)

    Scenario("on saved disks", setup, duration=1.0, disks=tmp_path / "disks").run(seed=0)
    assert seen == {"kept": "fsynced"}
