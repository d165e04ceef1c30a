"""A client retrying a non-idempotent request after a timeout: a payment service.

The shop charges a card through the bank's line protocol (one JSON request,
one JSON reply, a fresh connection each) and gives up waiting after
`TIMEOUT`, then tries again. A reply that takes longer than the timeout (a
retransmission, a queue behind a burst: the latency tail) does not mean the
charge did not happen, so the buggy bank charges twice. The correct bank
remembers each request id and answers a retry with the first reply (an
idempotency key, as payment APIs have).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.quality.planted._defaults import options, run_world
from tests.quality.planted._net import until_hang_up

from seedbed import Simulation

PORT = 7000
TIMEOUT = 0.05  # seconds: fifty times the mean hop, a common client default on a LAN
CHARGES = 25
OPENING = 10_000


def bank(dedupe: bool) -> Any:
    async def main() -> None:
        balance = {"card": OPENING}
        replies: dict[str, dict[str, Any]] = {}

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                request = json.loads(line)
                if request["op"] == "balance":
                    reply: dict[str, Any] = {"balance": balance["card"]}
                elif dedupe and request["id"] in replies:
                    reply = replies[request["id"]]
                else:
                    balance["card"] -= request["amount"]
                    reply = replies[request["id"]] = {"ok": True, "balance": balance["card"]}
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()

        server = await asyncio.start_server(until_hang_up(handle), "0.0.0.0", PORT)
        await server.serve_forever()

    return main


async def call(request: dict[str, Any]) -> dict[str, Any]:
    """One request, retried on a fresh connection until a reply comes within TIMEOUT."""
    line = json.dumps(request).encode() + b"\n"
    while True:
        writer = None
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("bank", PORT), TIMEOUT)
            writer.write(line)
            reply = await asyncio.wait_for(reader.readline(), TIMEOUT)
            if reply:
                return dict(json.loads(reply))
        except (TimeoutError, ConnectionError):
            pass
        finally:
            if writer is not None:
                writer.close()
        await asyncio.sleep(0.01)


async def shop() -> int:
    charged = 0
    for number in range(CHARGES):
        amount = 10 + number
        await call({"op": "charge", "id": f"order-{number}", "amount": amount})
        charged += amount
    await asyncio.sleep(0.5)  # every retried request has reached the bank by now
    balance = (await call({"op": "balance", "id": "audit"}))["balance"]
    assert balance == OPENING - charged, f"charged {OPENING - balance}, meant {charged}"
    return int(balance)


def run(seed: int, buggy: bool) -> str | None:
    world = options()
    sim = Simulation(seed=seed, **world)
    sim.host("bank", bank(dedupe=not buggy))
    sim.client("shop", shop)
    return run_world(sim, max_time=60.0)
