"""Benchmark telic_actors on asyncio and trio and print the results as JSON.

Measures the throughput of one mailbox (raw ``tell`` → ``on_message``), the round-trip latency
of ``ask`` (median and p95), and the memory held per idle actor (tracemalloc over 1,000 idle
actors). Run: ``python benchmarks/actors.py [--messages N] [--asks N] [--actors N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import anyio

from telic_actors import Actor, Ask, open_runtime


@dataclass(frozen=True, slots=True)
class Tick:
    pass


@dataclass(frozen=True, slots=True)
class Count(Ask[int]):
    pass


TICK = Tick()
COUNT = Count()


class Counter(Actor[Tick | Count]):
    def __init__(self) -> None:
        self.count = 0

    async def on_message(self, message: Tick | Count) -> object:
        if isinstance(message, Tick):
            self.count += 1
            return None
        return self.count


async def throughput(messages: int, capacity: int) -> dict[str, float]:
    """Messages per second from one sender through one mailbox into one actor."""
    async with open_runtime() as runtime:
        ref = runtime.spawn(Counter, mailbox_capacity=capacity)
        await ref.ask(COUNT)  # started
        started = time.perf_counter()
        for _ in range(messages):
            await ref.tell(TICK)
        handled = await ref.ask(COUNT)
        elapsed = time.perf_counter() - started
    assert handled == messages
    return {"messages": messages, "seconds": elapsed, "messages_per_second": messages / elapsed}


async def ask_latency(asks: int) -> dict[str, float]:
    """Round-trip time of sequential asks to one idle actor, in microseconds."""
    samples: list[float] = []
    async with open_runtime() as runtime:
        ref = runtime.spawn(Counter)
        for _ in range(min(asks // 10, 1_000)):  # warm up
            await ref.ask(COUNT)
        for _ in range(asks):
            started = time.perf_counter()
            await ref.ask(COUNT)
            samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return {
        "asks": asks,
        "median_us": statistics.median(samples),
        "p95_us": samples[int(len(samples) * 0.95) - 1],
        "max_us": samples[-1],
    }


async def idle_memory(actors: int) -> dict[str, float]:
    """Bytes allocated (tracemalloc) per spawned, started and idle actor."""
    async with open_runtime() as runtime:
        first = runtime.spawn(Counter)
        await first.ask(COUNT)  # the runtime's own allocations happen before the baseline
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            refs = [runtime.spawn(Counter) for _ in range(actors)]
            for ref in refs:
                await ref.ask(COUNT)  # every actor has started and is waiting on its mailbox
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return {"actors": actors, "bytes_total": grown, "bytes_per_actor": grown / actors}


async def run_all(options: argparse.Namespace) -> dict[str, Any]:
    return {
        "tell_throughput": await throughput(options.messages, options.capacity),
        "ask_round_trip": await ask_latency(options.asks),
        "idle_actor_memory": await idle_memory(options.actors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--capacity", type=int, default=64, help="mailbox capacity")
    parser.add_argument("--asks", type=int, default=10_000)
    parser.add_argument("--actors", type=int, default=1_000)
    parser.add_argument("--backend", action="append", choices=["asyncio", "trio"])
    options = parser.parse_args()
    results: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "anyio": version("anyio"),
        "trio": version("trio"),
        "backends": {},
    }
    for backend in options.backend or ["asyncio", "trio"]:
        results["backends"][backend] = anyio.run(run_all, options, backend=backend)
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
