"""Quantiles of one hop's latency under each model, from the network's own sampler.

    uv run python bench/latency.py [--hops N]

Prints a Markdown table (p50, p90, p99, p99.9, max, in milliseconds) for the
default exponential model and for swarm's profiles with and without the
"tail" model, each over N hops of one link per seed and 20 seeds (so the
per-link scales vary). The README's fault-profile section quotes it.
"""

from __future__ import annotations

import argparse

from seedbed._core import Entropy, Trace
from seedbed.net import NetworkConfig
from seedbed.net._links import Links
from seedbed.scenario._scenario import LATENCY_PROFILES, tail_config


def sample(config: NetworkConfig, hops: int, seeds: int = 20) -> list[int]:
    out: list[int] = []
    for seed in range(seeds):
        trace = Trace()
        links = Links(Entropy(seed, trace).stream("net"), trace, config, lambda: ["a", "b"])
        link = links.get("a", "b")
        out.extend(links.latency_ns(link) for _ in range(hops))
    return sorted(out)


def row(name: str, config: NetworkConfig, hops: int) -> str:
    values = sample(config, hops)
    picks = [values[min(len(values) - 1, int(q * len(values)))] for q in (0.5, 0.9, 0.99, 0.999)]
    cells = [f"{ns / 1e6:.3g}" for ns in (*picks, values[-1])]
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hops", type=int, default=5000)
    hops = parser.parse_args().hops
    print("| model | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms |")
    print("|---|---|---|---|---|---|")
    print(row("exponential, `NetworkConfig()`", NetworkConfig(), hops))
    for name in sorted(LATENCY_PROFILES):
        low, mean, high = LATENCY_PROFILES[name]
        plain = NetworkConfig(latency_min=low, latency_mean=mean, latency_max=high)
        print(row(f"exponential, swarm {name}", plain, hops))
        for probability in (0.02, 0.06):
            print(row(f"tail, swarm {name}, p={probability}", tail_config(name, probability), hops))


if __name__ == "__main__":
    main()
