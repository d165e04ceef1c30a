"""A NATS core broker: subjects with wildcards, queue groups, request/reply, over streams.

It speaks the NATS client protocol (INFO, CONNECT, PING/PONG, SUB, UNSUB,
PUB, HPUB; MSG and HMSG back) on the simulated network, so an unmodified
`nats-py` client connects to it. Core NATS is at-most-once: a message goes
to the subscriptions whose subject matches when it arrives, and is lost if
the broker crashes or a subscriber is gone. Each queue group gets one copy,
for the member the seed chooses ("services nats NODE: queue group Q"); a
request that no subscription matches is answered with the 503 "no
responders" status, as nats-server does for clients that ask for headers.

Fault model: a crash loses every subscription and message in flight;
partitions and latency reach the connections; each read from a connection
waits a drawn service time; with buggify on, a subscriber may be cut off as
a slow consumer (nats-server closes such a connection), losing what it was
sent. JetStream is not served: its API requests get "no responders".
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from seedbed._core.entropy import Stream
from seedbed.faults import buggify

READ_SIZE = 64 * 1024
MAX_PAYLOAD = 1024 * 1024
NO_RESPONDERS = b"NATS/1.0 503\r\n\r\n"


def matches(pattern: list[bytes], subject: list[bytes]) -> bool:
    """Whether `subject`'s tokens match `pattern`'s (`*` one token, `>` the rest)."""
    for index, token in enumerate(pattern):
        if token == b">":
            return len(subject) > index
        if index >= len(subject) or (token != b"*" and token != subject[index]):
            return False
    return len(pattern) == len(subject)


@dataclass
class Subscription:
    client: Client
    sid: bytes
    pattern: list[bytes]
    queue: bytes | None
    remaining: int | None = None  # UNSUB sid max: messages left before it ends


@dataclass
class Broker:
    """Every subscription, in the order they were made (which fixes delivery order)."""

    stream: Stream
    label: str
    subscriptions: list[Subscription] = field(default_factory=list)
    clients: list[Client] = field(default_factory=list)

    def publish(self, sender: Client, subject: bytes, reply: bytes | None, data: bytes,
                header_size: int) -> None:  # fmt: skip
        tokens = subject.split(b".")
        plain: list[Subscription] = []
        groups: dict[bytes, list[Subscription]] = {}
        for sub in self.subscriptions:
            if matches(sub.pattern, tokens):
                if sub.queue is None:
                    plain.append(sub)
                else:
                    groups.setdefault(sub.queue, []).append(sub)
        chosen = [
            self.stream.choice(members, f"{self.label}: queue group {queue.decode()}")
            for queue, members in groups.items()
        ]
        targets = plain + chosen
        for sub in targets:
            self._deliver(sub, subject, reply, data, header_size)
        if not targets and reply is not None and sender.no_responders:
            for sub in list(self.subscriptions):
                if sub.client is sender and matches(sub.pattern, reply.split(b".")):
                    self._deliver(sub, reply, None, NO_RESPONDERS, len(NO_RESPONDERS))

    def _deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, data: bytes,
                 header_size: int) -> None:  # fmt: skip
        client = sub.client
        if buggify(f"{self.label}: a slow consumer is cut off"):
            client.send(b"-ERR 'Slow Consumer Detected'\r\n")
            client.close()
            return
        middle = sub.sid + (b" " + reply if reply else b"")
        if header_size:
            client.send(b"HMSG %s %s %d %d\r\n%s\r\n" % (subject, middle, header_size, len(data),
                                                          data))  # fmt: skip
        else:
            client.send(b"MSG %s %s %d\r\n%s\r\n" % (subject, middle, len(data), data))
        if sub.remaining is not None:
            sub.remaining -= 1
            if sub.remaining <= 0:
                self.unsubscribe(client, sub.sid, None)

    def subscribe(self, client: Client, subject: bytes, queue: bytes | None, sid: bytes) -> None:
        self.subscriptions.append(Subscription(client, sid, subject.split(b"."), queue))

    def unsubscribe(self, client: Client, sid: bytes, limit: int | None) -> None:
        for sub in self.subscriptions:
            if sub.client is client and sub.sid == sid:
                if limit is None or limit <= 0:
                    self.subscriptions.remove(sub)
                else:
                    sub.remaining = limit
                return

    def forget(self, client: Client) -> None:
        self.subscriptions = [sub for sub in self.subscriptions if sub.client is not client]
        if client in self.clients:
            self.clients.remove(client)


class Client:
    """One connection: parses the client's operations, writes what the broker sends."""

    def __init__(self, broker: Broker, writer: asyncio.StreamWriter) -> None:
        self.broker = broker
        self.writer = writer
        self.verbose = False
        self.no_responders = False
        self.buffer = b""

    def send(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    def close(self) -> None:
        self.writer.close()
        self.broker.forget(self)

    def feed(self, data: bytes) -> None:
        """Run every whole operation in what has arrived; keep a partial one."""
        self.buffer += data
        while not self.writer.is_closing():
            line_end = self.buffer.find(b"\r\n")
            if line_end < 0:
                return
            line = self.buffer[:line_end]
            op, _, rest = line.partition(b" ")
            op = op.upper()
            if op in (b"PUB", b"HPUB"):
                if not self._publish(op, rest.split(), line_end + 2):
                    return  # the payload has not all arrived
                continue
            self.buffer = self.buffer[line_end + 2 :]
            self._control(op, rest)

    def _control(self, op: bytes, rest: bytes) -> None:
        args = rest.split()
        if op == b"PING":
            self.send(b"PONG\r\n")
        elif op == b"PONG":
            pass
        elif op == b"CONNECT":
            options = json.loads(rest or b"{}")
            self.verbose = bool(options.get("verbose"))
            self.no_responders = bool(options.get("headers") and options.get("no_responders"))
            self._ok()
        elif op == b"SUB" and len(args) in (2, 3):
            queue = args[1] if len(args) == 3 else None
            self.broker.subscribe(self, args[0], queue, args[-1])
            self._ok()
        elif op == b"UNSUB" and len(args) in (1, 2):
            self.broker.unsubscribe(self, args[0], int(args[1]) if len(args) == 2 else None)
            self._ok()
        else:
            self.send(b"-ERR 'Unknown Protocol Operation'\r\n")
            self.close()

    def _publish(self, op: bytes, args: list[bytes], start: int) -> bool:
        sizes = 2 if op == b"HPUB" else 1
        if len(args) not in (1 + sizes, 2 + sizes) or not all(a.isdigit() for a in args[-sizes:]):
            self.send(b"-ERR 'Unknown Protocol Operation'\r\n")
            self.close()
            return True
        total = int(args[-1])
        header_size = int(args[-2]) if op == b"HPUB" else 0
        if total > MAX_PAYLOAD:
            self.send(b"-ERR 'Maximum Payload Violation'\r\n")
            self.close()
            return True
        if len(self.buffer) < start + total + 2:
            return False
        data = self.buffer[start : start + total]
        self.buffer = self.buffer[start + total + 2 :]
        reply = args[1] if len(args) == 2 + sizes else None
        self.broker.publish(self, args[0], reply, data, header_size)
        self._ok()
        return True

    def _ok(self) -> None:
        if self.verbose:
            self.send(b"+OK\r\n")
