"""A bounded load test of a team's store on loopback (issue 41): two `strata mcp --http`
servers and one `strata serve` over one PostgreSQL database, 32 clients at once for a set time
(the official MCP Python SDK's clients doing mixed remember / recall / update / forget, and the
official OpenAI SDK's asking the proxy), optionally one MCP server killed with SIGKILL midway.
Afterwards every acknowledged write is checked against the store.

    python scripts/load_test.py --strata target/release/strata --db postgres://… \
        [--seconds 60] [--clients 32] [--openai 4] [--kill-at 30]

Prints one JSON object: throughput, latency by operation, errors by kind, and the check.
"""

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import httpx2
import openai
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

TOKEN = "load-test-token"


STARTED = []


def start(strata, db, args, banner):
    """A server process and the URL its banner names."""
    # At "info" a server says when it did not keep an answer (see `check`).
    env = dict(os.environ, STRATA_DB=db, STRATA_LOG="warn,strata_api=info")
    p = subprocess.Popen([strata, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    STARTED.append(p)
    said = []
    while True:
        line = p.stderr.readline()
        said.append(line)
        if not line:
            for q in STARTED:
                q.kill()
            sys.stderr.write("".join(said))
            sys.stderr.write(f"{args[0]} stopped before it served\n")
            os._exit(1)
        if banner in line:
            url = re.search(r"http://\S+", line).group(0)
            break
    # Keep reading its standard error (so that it never blocks on a full pipe), kept.
    p.said = said
    asyncio.get_running_loop().run_in_executor(None, lambda: [said.append(line) for line in p.stderr])
    return p, url


class Tally:
    def __init__(self):
        self.latency = {}
        self.errors = {}

    def took(self, op, seconds):
        self.latency.setdefault(op, []).append(seconds * 1000)

    def failed(self, kind):
        self.errors[kind] = self.errors.get(kind, 0) + 1


def kind_of(e):
    """An exception as an error kind: an HTTP status (5xx is what must not happen) or a name."""
    text = repr(e)
    m = re.search(r"\b([45]\d\d)\b", text)
    if isinstance(e, httpx2.HTTPStatusError):
        return f"http_{e.response.status_code}"
    if m and "status" in text.lower():
        return f"http_{m.group(1)}"
    return type(e).__name__


async def mcp_client(n, urls, deadline, tally, state):
    """One MCP client: mixed operations on its own notes, moving to the other server when one
    goes away."""
    rng = random.Random(n)
    name = f"client-{n:02d}"
    mine = {}  # id -> the text last acknowledged
    at = n % len(urls)
    counter = 0
    while time.monotonic() < deadline:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        try:
            async with Client(streamable_http_client(urls[at], http_client=http),
                              client_info=Implementation(name=name, version="1")) as client:
                while time.monotonic() < deadline:
                    roll = rng.random()
                    op = "remember" if roll < 0.4 or not mine else "recall" if roll < 0.7 else \
                        "update" if roll < 0.85 else "forget"
                    started = time.monotonic()
                    target = rng.choice(list(mine)) if op in ("update", "forget") else None
                    try:
                        if op == "remember":
                            counter += 1
                            text = f"{name} note {counter}"
                            r = await client.call_tool("remember", {"type": "episodic", "text": text})
                            if not r.is_error:
                                mine[r.structured_content["id"]] = text
                                state["added"][r.structured_content["id"]] = text
                        elif op == "recall":
                            r = await client.call_tool("recall", {"query": f"{name} note {rng.randint(1, counter or 1)}", "limit": 5})
                        elif op == "update":
                            counter += 1
                            text = f"{name} note {counter} (changed)"
                            state["uncertain"].add(target)
                            r = await client.call_tool("update", {"id": target, "text": text})
                            if not r.is_error:
                                mine[target] = text
                                state["added"][target] = text
                                state["uncertain"].discard(target)
                        else:
                            state["uncertain"].add(target)
                            r = await client.call_tool("forget", {"id": target, "confirm": True})
                            if not r.is_error:
                                del mine[target]
                                state["added"].pop(target, None)
                                state["forgotten"].add(target)
                                state["uncertain"].discard(target)
                        if r.is_error:
                            tally.failed(f"tool_error_{op}")
                        else:
                            tally.took(op, time.monotonic() - started)
                    except BaseException as e:
                        if op == "remember":
                            state["in_flight_adds"] += 1
                        raise
        except BaseException as e:  # the server went away: go on with the other one
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            tally.failed(kind_of(e))
            at = (at + 1) % len(urls)
            await asyncio.sleep(0.2)


async def openai_client(n, url, deadline, tally, state):
    """One OpenAI SDK client asking the proxy; each answered turn is remembered by it."""
    client = openai.AsyncOpenAI(base_url=url, api_key=TOKEN, max_retries=0, timeout=120)
    i = 0
    while time.monotonic() < deadline:
        i += 1
        question = f"openai-{n} asks question {i}"
        started = time.monotonic()
        try:
            r = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": question}], max_tokens=1)
            tally.took("chat", time.monotonic() - started)
            # An empty answer is not remembered (there is no exchange to keep).
            if (r.choices[0].message.content or "").strip():
                state["asked"].append(question)
            else:
                state["empty_answers"] += 1
        except openai.APIStatusError as e:
            tally.failed(f"http_{e.status_code}")
        except openai.APIError as e:
            tally.failed(type(e).__name__)


def percentiles(ms):
    ms = sorted(ms)
    at = lambda p: round(ms[min(len(ms) - 1, int(len(ms) * p))], 1) if ms else None
    return {"count": len(ms), "p50_ms": at(0.5), "p95_ms": at(0.95)}


def listed(strata, db):
    """Every memory of the store, by id: its text (a turn's, or an exchange's question)."""
    out, cursor = {}, None
    while True:
        args = [strata, "--db", db, "list", "--limit", "1000", "--json"] + (["--cursor", cursor] if cursor else [])
        page = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        for m in page["items"]:
            body = m["body"]
            out[m["id"]] = body.get("text") or body.get("query") or ""
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def check(strata, db, state, proxy_said):
    """Every acknowledged write against the store. An answer that drew on a memory forgotten
    while it was made is, by design, not kept (the proxy says so at "info")."""
    stored = listed(strata, db)
    sure = {i: t for i, t in state["added"].items() if i not in state["uncertain"]}
    lost = [i for i, t in sure.items() if stored.get(i) != t]
    revived = [i for i in state["forgotten"] if i in stored]
    texts = [t for t in stored.values() if " note " in t]
    duplicated = len(texts) - len(set(texts))
    asked = set(state["asked"])
    unrecorded = [q for q in asked if q not in stored.values()]
    withheld = sum("an answer was not recorded" in line for line in proxy_said)
    beyond = len([t for t in texts]) - len(sure) - len([i for i in state["uncertain"] if i in stored])
    return {
        "acknowledged_live": len(sure),
        "acknowledged_forgotten": len(state["forgotten"]),
        "uncertain": len(state["uncertain"]),
        "lost": len(lost),
        "forgotten_but_present": len(revived),
        "duplicated": duplicated,
        "answers_asked": len(asked),
        "answers_unrecorded": len(unrecorded),
        "empty_answers": state["empty_answers"],
        "answers_withheld_for_a_forgotten_memory": withheld,
        "unacknowledged_but_stored": beyond,
        "in_flight_adds": state["in_flight_adds"],
        "ok": not lost and not revived and duplicated == 0 and len(unrecorded) == withheld
        and beyond <= state["in_flight_adds"],
    }


async def main():
    a = argparse.ArgumentParser()
    a.add_argument("--strata", required=True)
    a.add_argument("--db", required=True)
    a.add_argument("--seconds", type=float, default=60)
    a.add_argument("--clients", type=int, default=32)
    a.add_argument("--openai", type=int, default=4)
    a.add_argument("--kill-at", type=float, default=None)
    args = a.parse_args()
    mcp_args = ["mcp", "--http", "127.0.0.1:0", "--token", TOKEN]
    first, url1 = start(args.strata, args.db, mcp_args, "MCP server")
    second, url2 = start(args.strata, args.db, mcp_args, "MCP server")
    proxy, purl = start(args.strata, args.db, ["serve", "--port", "0", "--token", TOKEN], "memory proxy")
    tally, state = Tally(), {"added": {}, "forgotten": set(), "uncertain": set(), "asked": [], "in_flight_adds": 0, "empty_answers": 0}
    started = time.monotonic()
    deadline = started + args.seconds
    tasks = [mcp_client(n, [url1, url2], deadline, tally, state) for n in range(args.clients - args.openai)]
    tasks += [openai_client(n, purl, deadline, tally, state) for n in range(args.openai)]

    async def killer():
        if args.kill_at is not None:
            await asyncio.sleep(args.kill_at)
            first.send_signal(signal.SIGKILL)

    await asyncio.gather(*tasks, killer())
    elapsed = time.monotonic() - started
    for p in (first, second, proxy):
        p.send_signal(signal.SIGKILL)
        p.wait()
    done = sum(len(v) for v in tally.latency.values())
    report = {
        "seconds": round(elapsed, 1),
        "clients": args.clients,
        "killed_at": args.kill_at,
        "operations": done,
        "per_second": round(done / elapsed, 1),
        "latency": {op: percentiles(ms) for op, ms in sorted(tally.latency.items())},
        "errors": tally.errors,
        "server_errors": sum(v for k, v in tally.errors.items() if k.startswith("http_5")),
        "check": check(args.strata, args.db, state, proxy.said),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
