"""The echo world the tests and `bench/sweep.py` share: a server echoing lines back,
clients sending it lines over fresh connections through whatever faults strike.

One definition, parameterised by what the users differ in: how many rounds a
client makes, how many lines it sends per connection, how long it waits for
an answer and pauses between rounds, and what it notes after each round (the
scenario modules put their `seedbed.sometimes`/`reachable` calls there, so
the assertion locations stay in the module that names the scenario).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

# After each round: (round index, lines answered, or None if the connection failed).
Note = Callable[[int, int | None], None]


def echo_server(port: int) -> Callable[[], Awaitable[None]]:
    """A node's main: echo every line of every connection until the peer closes it."""

    async def server() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)
                await writer.drain()
            writer.close()

        listener = await asyncio.start_server(handle, "0.0.0.0", port)
        await listener.serve_forever()

    return server


def echo_client(
    port: int,
    *,
    rounds: int,
    lines: int = 1,
    timeout: float,
    pause: float,
    note: Note | None = None,
) -> Callable[[], Awaitable[int]]:
    """A client's main: `rounds` connections to "server", `lines` lines each.

    Returns how many lines were answered; a refused, reset or timed-out
    connection ends its round (the faults decide which rounds fail).
    """

    async def client() -> int:
        answered = 0
        for index in range(rounds):
            got = 0
            outcome: int | None = None
            try:
                reader, writer = await asyncio.open_connection("server", port)
                for i in range(lines):
                    writer.write(f"{i}\n".encode())
                    if await asyncio.wait_for(reader.readline(), timeout=timeout):
                        got += 1
                writer.close()
                outcome = got
            except (OSError, TimeoutError):
                pass  # the lines answered before the failure still count
            answered += got
            if note is not None:
                note(index, outcome)
            await asyncio.sleep(pause)
        return answered

    return client
