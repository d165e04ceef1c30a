"""Large linearizable register histories, generated (never committed).

`generate(path, megabytes)` writes a JSON Lines history of about that size:
rounds of overlapping operations by 8 processes, each round's writes and
reads completed in an order that a register allows, so the verdict is known
(linearizable) and the checker must walk the whole history to give it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path


def generate(path: Path, megabytes: float, processes: int = 8, seed: int = 1) -> int:
    """Write the history; return its number of operations."""
    rng = random.Random(seed)
    target = int(megabytes * 1e6)
    value = size = ops = 0
    with path.open("w", encoding="utf-8") as out:
        while size < target:
            batch = rng.sample(range(processes), rng.randint(1, processes))
            kinds = ["write" if rng.random() < 0.5 else "read" for _ in batch]
            lines = []
            for process, f in zip(batch, kinds, strict=True):
                argument = None
                if f == "write":
                    value += 1
                    argument = value
                lines.append({"process": process, "type": "invoke", "f": f, "value": argument})
            current = value - kinds.count("write")
            for invoke in lines[: len(batch)]:
                if invoke["f"] == "write":
                    current = invoke["value"]
                result = invoke["value"] if invoke["f"] == "write" else current
                lines.append({**invoke, "type": "ok", "value": result})
            for obj in lines:
                text = json.dumps(obj) + "\n"
                size += len(text)
                out.write(text)
            ops += len(batch)
    return ops
