"""The command line: run a replica, or talk to a running group.

From the repository's root:

    PEERS=n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003
    python -m examples.kvstore serve --id n1 --peers $PEERS --data /tmp/kv/n1   # and n2, n3
    python -m examples.kvstore client --peers $PEERS put greeting hello
    python -m examples.kvstore client --peers $PEERS append log entry-1
    python -m examples.kvstore client --peers $PEERS get greeting
    python -m examples.kvstore client --peers $PEERS txn 'r x' 'r y' 'append x 1' 'put y 2'

Bad arguments exit 2 with one line; a client whose operation got no answer
exits 3 (its outcome is unknown); an aborted transaction exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence

from examples.kvstore.client import Client, Unavailable
from examples.kvstore.server import serve
from examples.kvstore.transport import parse_peers


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        peers = parse_peers(args.peers)
    except ValueError as exc:
        parser.error(f"--peers: {exc}")
    if args.command == "serve":
        if args.id not in peers:
            parser.error(f"--id {args.id!r} is not one of --peers ({', '.join(peers)})")
        logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {args.id} %(message)s")
        try:
            asyncio.run(serve(args.id, peers, args.data, bind=args.bind))
        except KeyboardInterrupt:
            return 0
        return 0
    try:
        return asyncio.run(_client(peers, args.operation, args.args, args.timeout))
    except ValueError as exc:
        parser.error(str(exc))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m examples.kvstore",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    server = commands.add_parser("serve", help="run one replica")
    server.add_argument("--id", required=True, help="this replica's name in --peers")
    server.add_argument("--peers", required=True, help="NAME=HOST:PORT,... for every replica")
    server.add_argument("--data", required=True, help="directory for this replica's files")
    server.add_argument("--bind", default=None, help="address to listen on (default: its own)")
    client = commands.add_parser("client", help="one operation against the group")
    client.add_argument("--peers", required=True, help="NAME=HOST:PORT,... for every replica")
    client.add_argument("--timeout", type=float, default=5.0, help="seconds before giving up")
    client.add_argument("operation", choices=["get", "put", "append", "txn"])
    client.add_argument(
        "args",
        nargs="*",
        help="get KEY | put KEY VALUE | append KEY VALUE | "
        "txn 'r KEY' 'append KEY VALUE' 'put KEY VALUE' ...",
    )
    return parser


async def _client(
    peers: dict[str, tuple[str, int]], op: str, args: list[str], timeout: float
) -> int:
    client = Client(peers, deadline=timeout)
    needed = {"get": 1, "put": 2, "append": 2}
    if op in needed and len(args) != needed[op]:
        raise ValueError(f"{op} takes {needed[op]} argument(s), got {len(args)}")
    try:
        if op == "get":
            print(json.dumps(await client.get(args[0])))
        elif op in ("put", "append"):
            await getattr(client, op)(args[0], args[1])
            print("ok")
        else:
            return await _transaction(client, args)
    except Unavailable as exc:
        print(f"unknown outcome: {exc}", file=sys.stderr)
        return 3
    finally:
        client.close()
    return 0


async def _transaction(client: Client, steps: list[str]) -> int:
    parsed = [step.split() for step in steps]
    for step in parsed:
        if not (
            step
            and (
                (step[0] == "r" and len(step) == 2)
                or (step[0] in ("put", "append") and len(step) == 3)
            )
        ):
            raise ValueError(
                f"bad transaction step {' '.join(step)!r}: "
                "use 'r KEY', 'put KEY VALUE' or 'append KEY VALUE'"
            )
    txn = client.begin()
    reads = {}
    for step in parsed:
        if step[0] == "r":
            reads[step[1]] = await txn.get(step[1])
        elif step[0] == "put":
            txn.put(step[1], step[2])
        else:
            txn.append(step[1], step[2])
    committed = await txn.commit()
    print(json.dumps({"committed": committed, "reads": reads, "index": txn.index}))
    return 0 if committed else 1


if __name__ == "__main__":
    sys.exit(main())
