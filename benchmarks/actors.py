"""Benchmark telic_actors on asyncio and trio and print the results as JSON.

Measures the throughput of one mailbox (raw ``tell`` → ``on_message``), the throughput of
validated packets through one 8 KiB-bounded mailbox (each message measured at the sender and its
packet re-validated and hash-checked by the actor), the round-trip latency of ``ask`` (median and
p95), the memory held per idle actor (tracemalloc over 1,000 idle actors) and per idle
``telic.roles.RunActor``.
Run: ``python benchmarks/actors.py [--messages N] [--packets N] [--asks N] [--actors N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from telic_actors import Actor, Ask, open_runtime
from telic_packets import Packet, canonical_json, verify_packet_hash
from telic_packets.conformance import load_table


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


@dataclass(frozen=True, slots=True)
class Wire:
    packet: dict[str, Any]


class Validator(Actor[Wire | Count]):
    def __init__(self) -> None:
        self.count = 0

    async def on_message(self, message: Wire | Count) -> object:
        if isinstance(message, Wire):
            packet = Packet.from_wire(message.packet)
            assert verify_packet_hash(packet)
            self.count += 1
            return None
        return self.count


def _sample_packet() -> dict[str, Any]:
    for row in load_table()["rows"]:
        spec = row["input"]
        if spec["op"] == "validate" and spec["model"] == "Packet" and row["expected"]["valid"]:
            value: dict[str, Any] = spec["value"]
            if verify_packet_hash(value):
                return value
    raise LookupError("the conformance table has no valid packet")


def _size(message: Wire | Count) -> int:
    return len(canonical_json(message.packet)) if isinstance(message, Wire) else 2


async def packet_throughput(messages: int, capacity: int) -> dict[str, float]:
    """Validated packets per second: sized at the sender (≤ 8 KiB), validated by the actor."""
    wire = Wire(_sample_packet())
    async with open_runtime() as runtime:
        ref = runtime.spawn(
            Validator, mailbox_capacity=capacity, max_message_bytes=8192, size_of=_size
        )
        await ref.ask(COUNT)
        started = time.perf_counter()
        for _ in range(messages):
            await ref.tell(wire)
        handled = await ref.ask(COUNT)
        elapsed = time.perf_counter() - started
    assert handled == messages
    return {
        "messages": messages,
        "packet_bytes": len(canonical_json(wire.packet)),
        "seconds": elapsed,
        "packets_per_second": messages / elapsed,
    }


async def idle_run_actor_memory(actors: int) -> dict[str, float]:
    """Bytes allocated per started, idle ``RunActor`` (its slot included) over one service."""
    from telic.ledger import open_ledger
    from telic.roles import open_service
    from telic.roles._run import RunActor, RunSlot

    scratch = Path(tempfile.mkdtemp(prefix="telic-benchmark-"))
    async with (
        open_ledger("memory://") as ledger,
        open_service(
            ledger=ledger, repository_root=str(scratch / "repo"), state_dir=str(scratch / "state")
        ) as service,
    ):
        deps = service._deps
        runs = service._runs
        warm = RunSlot("warm")
        runs.spawn(lambda: RunActor(warm, deps), name="warm")
        await anyio.lowlevel.checkpoint()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            slots = [RunSlot(f"run-{n}") for n in range(actors)]
            refs = [
                runs.spawn(lambda slot=slot: RunActor(slot, deps), name=slot.run_id)
                for slot in slots
            ]
            for _ in range(10):
                await anyio.lowlevel.checkpoint()  # every actor starts and waits on its mailbox
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        assert all(ref.is_alive for ref in refs)
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return {"actors": actors, "bytes_total": grown, "bytes_per_actor": grown / actors}


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
        "validated_packet_throughput": await packet_throughput(options.packets, options.capacity),
        "ask_round_trip": await ask_latency(options.asks),
        "idle_actor_memory": await idle_memory(options.actors),
        "idle_run_actor_memory": await idle_run_actor_memory(options.actors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--packets", type=int, default=20_000)
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
