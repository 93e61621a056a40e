"""Recall round trips through `strata mcp`, timed by the official MCP Python SDK as the client.

    mcp_bench.py QUESTIONS_JSON STRATA_BIN DB_PATH HTTP_URL TOKEN

QUESTIONS_JSON is a list of questions. Run by `strata bench mcp`, which fills the database and
starts the HTTP server; prints one JSON object:
  {"stdio": {...}, "http": {...}, "stdio_4_clients": {...}, "http_4_clients": {...}}
each with the calls made, p50/p95 latency in ms (one call at a time, after a warm-up pass over
the same questions) and, for four clients at once, calls per second.
"""

import asyncio
import json
import sys
import time

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

USER = "bench"


def percentile(ms, p):
    ms = sorted(ms)
    return round(ms[min(int(len(ms) * p), len(ms) - 1)], 2)


def connect(kind, name, args):
    info = Implementation(name=name, version="1.0")
    if kind == "stdio":
        bin_path, db = args
        params = StdioServerParameters(command=bin_path, args=["--user", USER, "mcp"], env={"STRATA_DB": db})
        return Client(params, client_info=info)
    url, token = args
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http), client_info=info)


async def ask_all(client, questions):
    """Each question once, one at a time; the latency of each call in ms."""
    ms = []
    for q in questions:
        t = time.perf_counter()
        r = await client.call_tool("recall", {"query": q, "limit": 10})
        ms.append((time.perf_counter() - t) * 1000)
        if r.is_error:
            raise SystemExit(f"recall failed: {r.content}")
        if not r.structured_content["results"]:
            raise SystemExit(f"recall found nothing for {q!r}: is the database filled for user {USER}?")
    return ms


async def one_client(kind, args, questions):
    async with connect(kind, "bench-client", args) as client:
        await ask_all(client, questions)  # warm-up: model, caches, connection
        ms = await ask_all(client, questions)
    return {"calls": len(ms), "p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95)}


async def four_clients(kind, args, questions):
    """Four clients asking at once (each its own connection, and over stdio its own server
    process on the same database); timed from when all four are connected and warm."""
    start = asyncio.Barrier(5)

    async def run(i):
        async with connect(kind, f"bench-client-{i}", args) as client:
            await ask_all(client, questions[:20])  # warm-up
            await start.wait()
            return await ask_all(client, questions)

    tasks = [asyncio.create_task(run(i)) for i in range(4)]
    await start.wait()
    t = time.perf_counter()
    results = await asyncio.gather(*tasks)
    wall = time.perf_counter() - t
    ms = [x for r in results for x in r]
    return {
        "calls": len(ms),
        "calls_per_s": round(len(ms) / wall, 1),
        "p50_ms": percentile(ms, 0.5),
        "p95_ms": percentile(ms, 0.95),
    }


async def main():
    questions = json.load(open(sys.argv[1]))
    stdio_args = (sys.argv[2], sys.argv[3])
    http_args = (sys.argv[4], sys.argv[5])
    out = {}
    out["stdio"] = await one_client("stdio", stdio_args, questions)
    out["http"] = await one_client("http", http_args, questions)
    out["stdio_4_clients"] = await four_clients("stdio", stdio_args, questions)
    out["http_4_clients"] = await four_clients("http", http_args, questions)
    print(json.dumps(out))


asyncio.run(main())
