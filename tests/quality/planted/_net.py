"""What every small server here does with a connection the client gave up on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def until_hang_up(handler: Handler) -> Handler:
    """`handler`, ended quietly when the client resets the connection (it timed
    out and closed with a request unread: there is nobody left to answer) or
    an I/O error ends the request (the connection is closed unanswered)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handler(reader, writer)
        except OSError:  # ConnectionError included
            pass
        finally:
            writer.close()

    return handle
