"""Writes the reference the chat models' forward is checked against: an independent forward in
NumPy over the same GGUF file, its weights read and dequantized by the `gguf` package (llama.cpp's
own Python reader), computed in float64.

    python3 -m pip install gguf numpy
    python3 scripts/gguf_reference.py > crates/strata-models/tests/models/gguf_reference.rs

For each model and token sequence it records, after every token, the log-probability of the next
token of the sequence and the two tokens the reference ranks first. Strata's forward re-quantizes
the weights to its own int8 blocks and rounds activations to int8, so the test allows a stated
tolerance (see crates/strata-models/tests/models/numpy.rs). The token ids are Strata's own
prompts (its tokenizers have their own reference tests); the files are those scripts/setup
fetched, from the same folder Strata uses, so nothing is downloaded here.
"""
import os
import sys

import numpy as np
from importlib.metadata import version

from gguf import GGUFReader
from gguf.quants import dequantize

MODELS = os.environ.get("STRATA_MODELS") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "strata", "models"
)

# (constant name, file under the models folder). The token ids are given as arguments, one
# comma-separated list per model in this order: the whole exchange Strata's template writes for
# "What is the capital of France?" (numpy.rs prints them when they change).
CASES = [
    ("SMOLLM2", "smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf"),
    ("QWEN2", "qwen2.5-coder-0.5b-instruct/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
]


def field(reader, key):
    f = reader.fields[key]
    return f.contents()


def weights(reader):
    out = {}
    for t in reader.tensors:
        w = dequantize(t.data, t.tensor_type).astype(np.float32)
        # gguf lists dimensions innermost first; NumPy wants them outermost first.
        out[t.name] = w.reshape([int(d) for d in reversed(t.shape)])
    return out


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rotate(x, positions, theta, halves):
    """Rotary embedding over the last axis of x (tokens, heads, dim): llama.cpp's NEOX mode
    (pairs i and i + dim/2) for Qwen2, its normal mode (adjacent pairs) for llama files, whose q
    and k rows the converter permuted to match."""
    d = x.shape[-1]
    freqs = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = positions[:, None] * freqs[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    if halves:
        a, b = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def forward(path, ids):
    r = GGUFReader(path)
    arch = field(r, "general.architecture")
    layers = int(field(r, f"{arch}.block_count"))
    heads = int(field(r, f"{arch}.attention.head_count"))
    kv_heads = int(field(r, f"{arch}.attention.head_count_kv"))
    eps = float(field(r, f"{arch}.attention.layer_norm_rms_epsilon"))
    theta = float(field(r, f"{arch}.rope.freq_base"))
    w = weights(r)
    n = len(ids)
    x = w["token_embd.weight"][ids].astype(np.float64)
    hd = x.shape[1] // heads
    positions = np.arange(n, dtype=np.float64)
    mask = np.triu(np.full((n, n), -np.inf), 1)
    halves = arch == "qwen2"

    def linear(h, name):
        y = h @ w[name + ".weight"].T.astype(np.float64)
        return y + w[name + ".bias"] if name + ".bias" in w else y

    for i in range(layers):
        p = f"blk.{i}."
        h = rms_norm(x, w[p + "attn_norm.weight"], eps)
        q = rotate(linear(h, p + "attn_q").reshape(n, heads, hd), positions, theta, halves)
        k = rotate(linear(h, p + "attn_k").reshape(n, kv_heads, hd), positions, theta, halves)
        v = linear(h, p + "attn_v").reshape(n, kv_heads, hd)
        group = heads // kv_heads
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(hd) + mask
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        att = np.einsum("hqk,khd->qhd", scores, v).reshape(n, heads * hd)
        x = x + linear(att, p + "attn_output")
        h = rms_norm(x, w[p + "ffn_norm.weight"], eps)
        gate = linear(h, p + "ffn_gate")
        x = x + linear(gate / (1 + np.exp(-gate)) * linear(h, p + "ffn_up"), p + "ffn_down")
    x = rms_norm(x, w["output_norm.weight"], eps)
    out = w.get("output.weight", w["token_embd.weight"])
    logits = x @ out.T.astype(np.float64)
    m = logits.max(axis=-1, keepdims=True)
    return logits - m - np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))


def main():
    if len(sys.argv) != 1 + len(CASES):
        sys.exit("give each model's token ids (comma-separated): " + ", ".join(c[0] for c in CASES))
    print("// Generated by scripts/gguf_reference.py: a float64 NumPy forward over the GGUF files,")
    print(f"// dequantized by gguf {version('gguf')} (numpy {np.__version__}). Do not edit.")
    print("// Per position: (the next token's log-probability, the top token, its log-probability,")
    print("// the second token, its log-probability).")
    print("#![allow(clippy::unreadable_literal)]")
    for (name, file), arg in zip(CASES, sys.argv[1:]):
        ids = [int(a) for a in arg.strip("[] ").split(",")]
        lp = forward(os.path.join(MODELS, file), ids)
        print(f"pub const {name}_IDS: [u32; {len(ids)}] = {ids};")
        print(f"pub const {name}: [(f64, u32, f64, u32, f64); {len(ids) - 1}] = [")
        for pos in range(len(ids) - 1):
            row = lp[pos]
            first, second = np.argsort(-row)[:2]
            print(f"    ({row[ids[pos + 1]]:.4f}, {first}, {row[first]:.4f}, {second}, {row[second]:.4f}),")
        print("];")


if __name__ == "__main__":
    main()
