#!/usr/bin/env python3
"""A loopback embedding server for the plugin registry's tests: it answers as Ollama's API
(`GET /api/tags`, `POST /api/embed`) and as an OpenAI-compatible server (`GET /v1/models`,
`POST /v1/embeddings`) do, with the shapes those APIs return, so that Strata's embedders at an
endpoint are tried end to end without a model server on the machine.

Each text's vector is its words (longer than two letters, lower-cased) hashed into signed
buckets, not normalized (Strata normalizes what an endpoint returns): texts that share words
point the same way. Ollama's vectors have `--ollama-dim` dimensions, OpenAI's `--openai-dim`,
so that the two are different models to the store. `GET /count` says how many texts each API
embedded, which is how a test shows that switching back to an embedder embeds nothing.

    python scripts/embeddings_replay.py --port 8918 --serves nomic-embed-text text-embedding-3-small
"""

import argparse
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[a-z0-9]{3,}")


def vector(text, dim):
    v = [0.0] * dim
    for w in WORD.findall(text.lower()):
        h = hashlib.sha256(w.encode()).digest()
        v[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    if not any(v):
        v[0] = 1.0
    return [x * 3.0 for x in v]


def handler(args, counts, lock):
    class Replay(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/api/tags":
                self.reply(200, {"models": [{"name": m + ":latest", "model": m + ":latest"} for m in args.serves]})
            elif self.path == "/v1/models":
                self.reply(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in args.serves]})
            elif self.path == "/count":
                with lock:
                    self.reply(200, dict(counts))
            else:
                self.reply(404, {"error": "not found"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            model, texts = body.get("model", ""), body.get("input", [])
            texts = [texts] if isinstance(texts, str) else texts
            if model.removesuffix(":latest") not in args.serves:
                self.reply(404, {"error": {"message": f"model '{model}' not found"}})
                return
            api = "ollama" if self.path == "/api/embed" else "openai" if self.path == "/v1/embeddings" else None
            if api is None:
                self.reply(404, {"error": "not found"})
                return
            with lock:
                counts[api] += len(texts)
            dim = args.ollama_dim if api == "ollama" else args.openai_dim
            vectors = [vector(t, dim) for t in texts]
            if api == "ollama":
                self.reply(200, {"model": model, "embeddings": vectors})
            else:
                data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
                self.reply(200, {"object": "list", "data": data[::-1], "model": model})

    return Replay


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8918)
    p.add_argument("--serves", nargs="+", default=["nomic-embed-text", "text-embedding-3-small"])
    p.add_argument("--ollama-dim", type=int, default=48)
    p.add_argument("--openai-dim", type=int, default=64)
    a = p.parse_args()
    counts, lock = {"ollama": 0, "openai": 0}, threading.Lock()
    ThreadingHTTPServer(("127.0.0.1", a.port), handler(a, counts, lock)).serve_forever()


if __name__ == "__main__":
    main()
