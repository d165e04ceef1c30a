"""A QUIC client and server (aioquic, TLS 1.3 through `cryptography`/OpenSSL),
unchanged, in a Simulation: the case of C code drawing its own entropy.

Every choice seedbed makes is the same in two runs of one seed, but OpenSSL
draws the X25519 key share of each handshake itself, so the bytes on the
wire differ from process to process: the hashes must differ (a digest of
every delivered payload is folded) and `check-determinism` must name the
cause. The server's certificate is fixed here, so only the key shares vary.
aioquic is a test dependency (the dev group): importing this without it
raises ImportError, and the tests skip.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from typing import Any

from aioquic.asyncio import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import StreamDataReceived
from aioquic.tls import load_pem_private_key, load_pem_x509_certificates

import seedbed

CERTIFICATE = b"""\
-----BEGIN CERTIFICATE-----
MIIBJTCBzKADAgECAgEBMAoGCCqGSM49BAMCMBExDzANBgNVBAMMBnNlcnZlcjAe
Fw0yMDAxMDEwMDAwMDBaFw00MDAxMDEwMDAwMDBaMBExDzANBgNVBAMMBnNlcnZl
cjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPReV3Jol8Sm1P5UsfAEdJX8FUGh
47wVymBNMIfsIypo/S5VoAZqmzTqN0z+qgqMpN59WxhhhYtA3Z7We9LpY1ujFTAT
MBEGA1UdEQQKMAiCBnNlcnZlcjAKBggqhkjOPQQDAgNIADBFAiEAsSWp0fchwPlm
7G57FfRwCiSHVaJQYTm8ssTKHp14lkECIGsi+c1GqfS3q+fYAKQpizP4JHvmXsQt
nQ46EGvY0T7X
-----END CERTIFICATE-----
"""
PRIVATE_KEY = b"""\
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgcM+88WeOvyGrXrtP
e1WV4HbkCwD6rMDIH/oF275rLtuhRANCAAT0XldyaJfEptT+VLHwBHSV/BVBoeO8
FcpgTTCH7CMqaP0uVaAGaps06jdM/qoKjKTefVsYYYWLQN2e1nvS6WNb
-----END PRIVATE KEY-----
"""
PORT = 4433


class _Echo(QuicConnectionProtocol):
    def quic_event_received(self, event: Any) -> None:
        if isinstance(event, StreamDataReceived):
            data = event.data.upper()
            self._quic.send_stream_data(event.stream_id, data, end_stream=event.end_stream)
            self.transmit()


async def _server() -> None:
    config = QuicConfiguration(is_client=False, alpn_protocols=["echo"])
    config.certificate = load_pem_x509_certificates(CERTIFICATE)[0]
    config.private_key = load_pem_private_key(PRIVATE_KEY)
    await serve("0.0.0.0", PORT, configuration=config, create_protocol=_Echo)
    await asyncio.Event().wait()


async def _client() -> bytes:
    await asyncio.sleep(0.01)
    loop = asyncio.get_running_loop()
    config = QuicConfiguration(
        is_client=True, alpn_protocols=["echo"], verify_mode=ssl.CERT_NONE, server_name="server"
    )
    address = (await loop.getaddrinfo("server", PORT, type=socket.SOCK_DGRAM))[0][4]
    transport, protocol = await loop.create_datagram_endpoint(
        lambda: QuicConnectionProtocol(QuicConnection(configuration=config)),
        local_addr=("0.0.0.0", 0),
    )
    protocol.connect(address)
    await protocol.wait_connected()
    reader, writer = await protocol.create_stream()
    writer.write(b"hello quic")
    writer.write_eof()
    answer = await reader.read()
    protocol.close()
    await protocol.wait_closed()
    transport.close()
    return answer


def world(seed: int) -> seedbed.SimulationResult:
    """One QUIC exchange: a handshake, a stream echoed in upper case."""
    sim = seedbed.Simulation(seed=seed)
    sim.host("server", _server)
    sim.client("c1", _client)
    return sim.run(max_time=10.0)
