#!/usr/bin/env python3
"""Sends photos through a running Chute daemon's `POST /api/convert` on its loopback TCP address from concurrent
clients, as scripts that convert over HTTP would, and times each request.

    python3 Benchmarks/upload-load.py PORT TOKEN_FILE RULE WIDTH CLIENTS PHOTO...

CLIENTS threads each take the next photo not yet sent and POST it (one connection per request, the bearer token read
from TOKEN_FILE), until every photo has gone. An answer counts as converted when it is 200 and its body is a whole
JPEG WIDTH pixels wide; anything else is an error, named on stderr. A 429 (the daemon's `maxUploads` or `maxQueued`)
is sent again after its Retry-After, at most 20 times per photo, and counted. Bounded: a request gives up after
120 s, and the clients stop taking photos after 600 s. Only 127.0.0.1 is spoken to.

Prints one line for Benchmarks/upload.sh: the wall time (from the first request to the last answer) in seconds, the
photos converted, the errors, the 429s, the p50, p99 and largest latency in milliseconds (of converted photos, each
from its request's connect to the last byte of its answer), and the CPU seconds this process used.
"""

import http.client
import os
import resource
import sys
import threading
import time
import urllib.parse

REQUEST_TIMEOUT = 120.0
TIME_LIMIT = 600.0
RETRIES = 20


def jpeg_width(data):
    """The width in a JPEG's frame header, or None when data is not a whole JPEG."""
    if not (data.startswith(b"\xff\xd8") and data.endswith(b"\xff\xd9")):
        return None
    at = 2
    while at + 9 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        # Start of frame: C0 to CF but for DHT (C4), JPG (C8) and DAC (CC).
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[at + 7:at + 9], "big")
        at += 2 + int.from_bytes(data[at + 2:at + 4], "big")
    return None


def convert(port, token, rule, name, body):
    """One POST /api/convert on a new connection; returns (status, Retry-After or None, answer body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    try:
        query = urllib.parse.urlencode({"rule": rule, "name": name})
        connection.request("POST", f"/api/convert?{query}", body=body, headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/octet-stream",
        })
        answer = connection.getresponse()
        return answer.status, answer.getheader("Retry-After"), answer.read()
    finally:
        connection.close()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    port, token_file, rule = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    width, clients, paths = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]
    with open(token_file) as file:
        token = file.read().strip()
    # Read before the clock starts: the benchmark times the daemon, not this disk.
    photos = []
    for path in paths:
        with open(path, "rb") as file:
            photos.append((os.path.basename(path), file.read()))
    lock = threading.Lock()
    pending = iter(photos)
    latencies, errors, refused = [], [], [0]
    started = time.monotonic()

    def client():
        while time.monotonic() - started < TIME_LIMIT:
            with lock:
                photo = next(pending, None)
            if photo is None:
                return
            name, body = photo
            for _ in range(RETRIES + 1):
                begin = time.monotonic()
                try:
                    status, retry_after, data = convert(port, token, rule, name, body)
                except OSError as error:
                    status, retry_after, data = 0, None, repr(error).encode()
                elapsed = time.monotonic() - begin
                if status != 429:
                    break
                with lock:
                    refused[0] += 1
                time.sleep(min(float(retry_after or 1), 5))
            with lock:
                if status == 200 and jpeg_width(data) == width:
                    latencies.append(elapsed)
                else:
                    errors.append(f"{name}: HTTP {status}, {len(data)} bytes: {data[:200]!r}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    unsent = len(photos) - len(latencies) - len(errors)
    if unsent:
        errors.append(f"{unsent} photos not sent within {TIME_LIMIT:g} s")
    for error in errors[:10]:
        print(f"upload-load: {error}", file=sys.stderr)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    milliseconds = [value * 1000 for value in latencies] or [0]
    print(f"{wall:.3f} {len(latencies)} {len(photos) - len(latencies)} {refused[0]} "
          f"{percentile(milliseconds, 0.5):.1f} {percentile(milliseconds, 0.99):.1f} {max(milliseconds):.1f} "
          f"{usage.ru_utime + usage.ru_stime:.2f}")


main()
