#!/usr/bin/env python3
"""Drives a running Chute daemon's status API with concurrent clients on its Unix socket, as people with the web page
open and scripts polling it would, and prints the latency of each kind of request.

    python3 Benchmarks/api-load.py SOCKET STOP_FILE [CLIENTS] [PAUSE]

CLIENTS (default 50) tasks each loop over the read endpoints (status, jobs, the history, rules, health, one job's
detail) with PAUSE seconds between requests (default 1: a dashboard refreshing every second; the web page itself
reloads at most twice a second, and only while jobs end), one connection per request. Five of them instead hold the
event stream open, one of which reads it only a kilobyte a second (a slow client). Bounded: every client stops when
STOP_FILE exists, after 3,000 requests, or after 600 s, whichever comes first. Only the socket given is spoken to.
"""

import asyncio
import json
import os
import resource
import sys
import time

REQUESTS_PER_CLIENT = 3000
TIME_LIMIT = 600.0
ENDPOINTS = [
    "/api/status",
    "/api/jobs?limit=50",
    "/api/jobs?state=finished&limit=20&offset=100",
    "/api/jobs?state=completed&text=r1-0&limit=20",
    "/api/rules",
    "/api/health",
]


async def request(socket_path, path):
    """One GET on a new connection; returns (status, body bytes)."""
    reader, writer = await asyncio.open_unix_connection(socket_path)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: chute\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    if b"transfer-encoding: chunked" in head.lower():
        body = dechunk(body)
    return status, body


def dechunk(body):
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return bytes(out)


def stopped(stop_file, started):
    return os.path.exists(stop_file) or time.monotonic() - started > TIME_LIMIT


async def poller(number, socket_path, stop_file, started, pause, latencies, errors, job_ids):
    for count in range(REQUESTS_PER_CLIENT):
        if stopped(stop_file, started):
            return
        path = ENDPOINTS[(number + count) % len(ENDPOINTS)]
        if path == "/api/health" and job_ids:
            path = f"/api/jobs/{job_ids[(number + count) % len(job_ids)]}"
        kind = path.split("?")[0] if not path.startswith("/api/jobs/") else "/api/jobs/ID"
        begin = time.monotonic()
        try:
            status, body = await request(socket_path, path)
        except OSError as error:
            errors[f"{kind}: {error.__class__.__name__}"] = errors.get(f"{kind}: {error.__class__.__name__}", 0) + 1
            await asyncio.sleep(pause)
            continue
        latencies.setdefault(kind, []).append(time.monotonic() - begin)
        if status != 200:
            errors[f"{kind}: HTTP {status}"] = errors.get(f"{kind}: HTTP {status}", 0) + 1
        elif path.startswith("/api/jobs?") and len(job_ids) < 200:
            for job in json.loads(body).get("jobs", []):
                if job.get("id") and job.get("state") in ("completed", "failed"):
                    job_ids.append(job["id"])
        await asyncio.sleep(pause)


async def subscriber(socket_path, stop_file, started, slow, received):
    """Holds /api/events open; a slow one reads a kilobyte a second."""
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1024)
    writer.write(b"GET /api/events HTTP/1.1\r\nHost: chute\r\nAccept: text/event-stream\r\n\r\n")
    await writer.drain()
    try:
        while not stopped(stop_file, started):
            try:
                chunk = await asyncio.wait_for(reader.read(1024 if slow else 65536), timeout=1)
            except asyncio.TimeoutError:
                continue
            if not chunk:
                break
            received[0] += len(chunk)
            if slow:
                await asyncio.sleep(1)
    finally:
        writer.close()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def main():
    socket_path, stop_file = sys.argv[1], sys.argv[2]
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    pause = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    subscribers = min(5, clients)
    latencies, errors, job_ids, received = {}, {}, [], [0]
    started = time.monotonic()
    tasks = [subscriber(socket_path, stop_file, started, number == 0, received) for number in range(subscribers)]
    tasks += [
        poller(number, socket_path, stop_file, started, pause, latencies, errors, job_ids)
        for number in range(clients - subscribers)
    ]
    await asyncio.gather(*tasks)
    wall = time.monotonic() - started
    every = [value for values in latencies.values() for value in values]
    print(f"api load: {clients} clients ({clients - subscribers} polling every {pause:g} s, {subscribers} on the "
          f"event stream, one of them reading 1 KB/s) for {wall:.1f} s")
    if every:
        print(f"  requests {len(every)} ({len(every) / wall:.0f}/s), errors {sum(errors.values())}; "
              f"latency p50 {percentile(every, 0.5) * 1000:.1f} ms, p99 {percentile(every, 0.99) * 1000:.1f} ms, "
              f"max {max(every) * 1000:.1f} ms")
    for kind, values in sorted(latencies.items()):
        print(f"    {kind:<14} {len(values):6d} requests  p50 {percentile(values, 0.5) * 1000:7.1f} ms  "
              f"p99 {percentile(values, 0.99) * 1000:7.1f} ms")
    for what, count in sorted(errors.items()):
        print(f"    error {what}: {count}")
    print(f"  event streams read {received[0]} bytes")
    # On a two-core machine this process competes with the soak it measures: its own CPU time says how much.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"  this load generator used {usage.ru_utime + usage.ru_stime:.2f} CPU-s")


asyncio.run(main())
