#!/usr/bin/env python3
"""Switching embedders on a store of N memories (docs/benchmarks.md, "Switching embedders"):
the store is filled from the LoCoMo development split's turns (repeated with a counter past
its ~3,000 turns), embedded with an endpoint's model (`scripts/embeddings_replay.py` answering
as Ollama's API), then `strata plugins use` moves search to a second endpoint model, to the
on-device model, and back to the first: each switch timed as the person runs it (the CLI, the
release build). Switching back embeds nothing: its time is opening the embedder and rebuilding
the search index from the vectors kept.

    python scripts/plugins_switch_bench.py --strata target/release/strata --memories 20000
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def turns(path):
    for conv in json.load(open(path)):
        c = conv["conversation"]
        for k, v in c.items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    yield f'{t["speaker"]}: {t["text"]}'


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--strata", required=True)
    p.add_argument("--memories", type=int, default=20000)
    p.add_argument("--locomo", default=os.path.join(HERE, "../../shared/bench/locomo/locomo-dev.json"))
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="strata-switch-")
    env = dict(os.environ, STRATA_DB=f"{work}/strata.db", STRATA_SETTINGS=f"{work}/settings.json",
               STRATA_MCP_CONFIG=f"{work}/mcp.json")
    open(f"{work}/settings.json", "w").write('{"extraction": {"after_exchanges": false}}')
    texts = list(turns(a.locomo))
    seed = {"semantic": {f"turn-{i}": {"said": f"{texts[i % len(texts)]} (#{i // len(texts)})"}
                         for i in range(a.memories)}, "episodic": [], "procedural": {}}
    json.dump(seed, open(f"{work}/seed.json", "w"))
    port = free_port()
    replay = subprocess.Popen([sys.executable, os.path.join(HERE, "embeddings_replay.py"), "--port", str(port),
                               "--ollama-dim", "384", "--openai-dim", "768"])
    try:
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            time.sleep(0.1)

        def run(*args):
            t = time.perf_counter()
            out = subprocess.run([a.strata, *args], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"strata {' '.join(args)}: {out.stderr}")
            return time.perf_counter() - t, out.stdout.strip()

        print("import", *run("import", f"{work}/seed.json", "--format", "seed"), sep="\t")
        run("plugins", "add", "nomic", "--kind", "embedder", "--provider", "ollama",
            "--url", f"http://127.0.0.1:{port}", "--model", "nomic-embed-text")
        run("plugins", "add", "small", "--kind", "embedder", "--provider", "openai-compatible",
            "--url", f"http://127.0.0.1:{port}/v1", "--model", "text-embedding-3-small")
        for name in ["nomic", "small", "on-device", "nomic", "on-device"]:
            took, said = run("plugins", "use", name)
            print(f"use {name}", f"{took:.1f} s", said, sep="\t")
        took, _ = run("recall", "Where did Caroline go hiking?")
        print("recall (on-device)", f"{took:.2f} s", sep="\t")
    finally:
        replay.kill()


if __name__ == "__main__":
    main()
