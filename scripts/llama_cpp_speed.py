#!/usr/bin/env python3
"""llama.cpp's speed on the prompts of `strata bench chat`, the reference of issue 38.

Runs the same GGUF file through xllamacpp (a prebuilt CPU llama.cpp on PyPI) with the same
system and user messages as `crates/strata-bench/src/chatbench.rs`, greedy, the same number of
tokens, on the thread count given (the same for the prompt and for generation), and prints one
line per prompt with llama.cpp's own timings.

    python3 -m venv /tmp/ll && /tmp/ll/bin/pip install xllamacpp
    /tmp/ll/bin/python scripts/llama_cpp_speed.py --model FILE.gguf --threads 2 [--json]

A warm-up answer runs first (the weights paged in, as the bench does); the prompt cache is
off, so each prompt is read whole.
"""

import argparse
import json
import time

import xllamacpp as xl

SYSTEM = "You are a helpful assistant."
HISTORY = (
    "Tea reached Europe in the seventeenth century through Dutch and Portuguese traders; "
    "in Britain it became a national habit, first among the wealthy and then everyone. "
)
PROMPTS = [
    "Write a short story about a cat who sails around the world.",
    f"{HISTORY * 10}\nWrite a story that continues this history.",
    f"{HISTORY * 15}\nWrite a story that continues this history.",
]


def server(model: str, threads: int) -> xl.Server:
    params = xl.CommonParams()
    params.model.path = model
    params.n_ctx = 2048
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.cache_prompt = False
    params.n_gpu_layers = 0
    return xl.Server(params)


def ask(srv: xl.Server, user: str, tokens: int) -> dict:
    body = {
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        "max_tokens": tokens,
        "temperature": 0.0,
        "cache_prompt": False,
    }
    out = srv.handle_chat_completions(body)
    if isinstance(out, str):
        out = json.loads(out)
    if "error" in out:
        raise SystemExit(f"llama.cpp refused the request: {out['error']}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the GGUF file")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = ap.parse_args()
    started = time.monotonic()
    srv = server(args.model, args.threads)
    load_ms = (time.monotonic() - started) * 1000
    ask(srv, PROMPTS[0], 2)
    rows = []
    for p in PROMPTS:
        t = ask(srv, p, args.tokens)["timings"]
        rows.append(
            {
                "prompt_tokens": t["prompt_n"],
                "prompt_tokens_per_s": round(t["prompt_per_second"], 1),
                "prompt_ms": round(t["prompt_ms"], 1),
                "generated_tokens": t["predicted_n"],
                "generated_tokens_per_s": round(t["predicted_per_second"], 1),
            }
        )
    if args.json:
        print(json.dumps({"llama_cpp": xl.__version__ if hasattr(xl, "__version__") else "", "threads": args.threads,
                          "load_ms": round(load_ms), "runs": rows}))
        return
    print(f"llama.cpp (xllamacpp), {args.threads} threads, loaded in {load_ms:.0f} ms")
    print("PROMPT TOKENS  PROMPT TOK/S  PROMPT MS  GENERATED  GENERATED TOK/S")
    for r in rows:
        print(f"{r['prompt_tokens']:<14} {r['prompt_tokens_per_s']:<13} {r['prompt_ms']:<10} "
              f"{r['generated_tokens']:<10} {r['generated_tokens_per_s']}")


if __name__ == "__main__":
    main()
