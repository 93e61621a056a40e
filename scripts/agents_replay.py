#!/usr/bin/env python3
"""A loopback OpenAI for `strata bench agents` with a provider's model (docs/benchmarks.md,
"Agents on tasks"): it streams chat completions with tool calls as OpenAI's API streams them
(the call's id and name first, its arguments in pieces, `finish_reason: tool_calls`, usage in a
last chunk), choosing as a capable model would for the task set's tasks:

- an agent offered handoffs hands the task to the agent the task set expects (the routing a
  capable model makes, recorded here, since no provider is reachable from this machine);
- an agent with memory tools keeps what it is told to keep (`remember` with the person's words)
  and looks up what it is asked (`recall` with the question);
- after a result it answers from it: the first memory `recall` returned, or that it kept it.

So what the run measures is Strata's side: every call carried out through the product's loop,
the state afterwards, and answers that hold the right words only when recall returned the
right memory first.

    python scripts/agents_replay.py --tasks crates/strata-bench/data/agents/tasks.json --port 8917 &
    OPENAI_BASE_URL=http://127.0.0.1:8917/v1 OPENAI_API_KEY=replay \\
        strata bench agents --model openai:gpt-4o-mini --out agents-replay.json
"""

import argparse
import json
import re
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEEP = re.compile(
    r"^(please )?(remember|keep this|keep a note|note|please keep in mind)( that)?[:,]?\s*", re.IGNORECASE
)


def chunk(delta, finish=None):
    c = {
        "id": "chatcmpl-replay",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }
    return f"data: {json.dumps(c)}\n\n"


def usage(prompt_chars, completion_chars):
    c = {
        "id": "chatcmpl-replay",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "gpt-4o-mini",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_chars // 4,
            "completion_tokens": max(1, completion_chars // 4),
            "total_tokens": prompt_chars // 4 + max(1, completion_chars // 4),
        },
    }
    return f"data: {json.dumps(c)}\n\ndata: [DONE]\n\n"


def call_stream(name, arguments, prompt_chars):
    args = json.dumps(arguments)
    pieces = [args[i : i + 12] for i in range(0, len(args), 12)]
    first = {"index": 0, "id": f"call_{abs(hash(args)) % 10**8}", "type": "function", "function": {"name": name, "arguments": ""}}
    out = [chunk({"role": "assistant", "content": None, "tool_calls": [first]})]
    out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    out.append(chunk({}, "tool_calls"))
    out.append(usage(prompt_chars, len(args)))
    return "".join(out)


def text_stream(text, prompt_chars):
    words = text.split(" ")
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": (" " if i else "") + w}) for i, w in enumerate(words)]
    out.append(chunk({}, "stop"))
    out.append(usage(prompt_chars, len(text)))
    return "".join(out)


def decide(body, tasks):
    """The next turn for the request `body`: ("call", name, args) or ("say", text)."""
    messages = body.get("messages", [])
    tools = [t["function"]["name"] for t in body.get("tools", [])]
    task = next((m["content"] for m in messages if m.get("role") == "user"), "")
    last = messages[-1] if messages else {}
    fresh = last.get("role") == "user" or (
        last.get("role") == "tool" and str(last.get("content", "")).startswith('{"assistant"')
    )
    if fresh:
        handoffs = [t for t in tools if t.startswith("transfer_to_")]
        if handoffs:
            expected = tasks.get(task, {}).get("handed", [])
            wanted = f"transfer_to_{expected[0].lower()}" if expected else handoffs[0]
            return ("call", wanted if wanted in handoffs else handoffs[0], {})
        kept = KEEP.sub("", task)
        if kept != task and "remember" in tools:
            return ("call", "remember", {"text": kept.rstrip(".") + "."})
        if "recall" in tools:
            return ("call", "recall", {"query": task})
        return ("say", "I have no tool for that.")
    result = str(last.get("content", ""))
    if result.startswith("kept as"):
        return ("say", "Noted, I kept it.")
    # The first memory recall returned (each ends with its id: "(memory …)"), in one line.
    first = result.split("(memory ")[0]
    words = " ".join(l.strip() for l in first.splitlines() if l.strip())
    return ("say", "From what you told me: " + words if words else "I found nothing about that.")


def handler(tasks):
    class Replay(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            n = int(self.headers.get("content-length", 0))
            raw = self.rfile.read(n)
            body = json.loads(raw or b"{}")
            turn = decide(body, tasks)
            stream = call_stream(turn[1], turn[2], len(raw)) if turn[0] == "call" else text_stream(turn[1], len(raw))
            data = stream.encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Replay


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", required=True)
    p.add_argument("--port", type=int, default=8917)
    a = p.parse_args()
    data = json.load(open(a.tasks))
    tasks = {t["task"]: t["expect"] for t in data["tasks"]}
    ThreadingHTTPServer(("127.0.0.1", a.port), handler(tasks)).serve_forever()


if __name__ == "__main__":
    main()
