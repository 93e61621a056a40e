"""Calibrates Strata's local estimate of Anthropic token counts (strata-tokens, approx.rs).

Anthropic's current tokenizer is not public; the one it did publish (npm
`@anthropic-ai/tokenizer`, made for its earlier models) is the reference here. The script
compares that tokenizer's counts with cl100k_base's on LoCoMo turns and the seed documents'
paragraphs, and reports, for a few factors, how far `ceil(cl100k × factor)` is from it.

    npm pack @anthropic-ai/tokenizer && tar xzf anthropic-ai-tokenizer-*.tgz
    python3 scripts/calibrate_anthropic_estimate.py package/claude.json CL100K_RANKS LOCOMO.json SEEDS_DIR
CL100K_RANKS is the cl100k_base.tiktoken file tiktoken-rs ships (pip install tiktoken first).
"""
import base64
import glob
import json
import math
import statistics
import sys

import tiktoken
import tiktoken_ext.openai_public as public
from tiktoken.load import load_tiktoken_bpe

claude_json, cl100k_ranks, locomo, seeds = sys.argv[1:5]

spec = json.load(open(claude_json))
ranks = {}
for line in spec["bpe_ranks"].split("\n"):
    if line:
        _, offset, *tokens = line.split(" ")  # "! <first rank> <base64 token> ..."
        for i, t in enumerate(tokens):
            ranks[base64.b64decode(t)] = int(offset) + i
claude = tiktoken.Encoding("claude", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens=spec["special_tokens"])
public.load_tiktoken_bpe = lambda url, expected_hash=None: load_tiktoken_bpe(cl100k_ranks, expected_hash=expected_hash)
cl100k = tiktoken.Encoding(**public.cl100k_base())

texts = []
for sample in json.load(open(locomo)):
    for key, turns in sample["conversation"].items():
        if key.startswith("session_") and isinstance(turns, list):
            texts += [t["speaker"] + ": " + t["text"] for t in turns]
for path in sorted(glob.glob(seeds + "/*")):
    texts += [p for p in open(path).read().split("\n\n") if p.strip()]

pairs = [(len(claude.encode_ordinary(t)), len(cl100k.encode_ordinary(t))) for t in texts]
pairs = [(a, b) for a, b in pairs if a > 0]
ratios = sorted(a / b for a, b in pairs if b >= 5)
print("%d texts; Claude / cl100k overall %.3f, median %.3f, 95th percentile %.3f" % (
    len(pairs), sum(a for a, _ in pairs) / sum(b for _, b in pairs), statistics.median(ratios),
    ratios[len(ratios) * 19 // 20]))
for factor in (1.0, 1.05, 1.10, 1.15):
    errors = sorted((math.ceil(b * factor) - a) / a for a, b in pairs)
    under = sum(e < 0 for e in errors) / len(errors)
    print("factor %.2f: mean error %+.1f%%, under-counts %.1f%% of texts, worst under-count %.0f%%" % (
        factor, 100 * sum(errors) / len(errors), 100 * under, 100 * errors[0]))
