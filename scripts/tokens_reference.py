"""The reference side of `strata bench tokens`: the Python `tiktoken` package counting the same
texts, timed the way Strata times itself.

    python3 scripts/tokens_reference.py RANKS_DIR INPUT.json
RANKS_DIR holds `o200k_base.tiktoken` and `cl100k_base.tiktoken` (the files tiktoken-rs ships;
`tiktoken` would otherwise download them at first use, which cannot work offline). The
encodings are built with the patterns and special tokens `tiktoken` itself uses for them.
INPUT.json holds {"texts": [...]}; prints one JSON object in the shape of
strata_api::tokenbench::TokenRun.
"""
import json
import os
import sys
import time

import tiktoken
import tiktoken_ext.openai_public as public
from tiktoken.load import load_tiktoken_bpe

ranks_dir, input_path = sys.argv[1], sys.argv[2]
texts = json.load(open(input_path))["texts"]
long = "\n".join(texts)


def local_ranks(url, expected_hash=None):
    # The file of the same name in RANKS_DIR, checked against the hash tiktoken expects.
    return load_tiktoken_bpe(os.path.join(ranks_dir, url.rsplit("/", 1)[-1]), expected_hash=expected_hash)


public.load_tiktoken_bpe = local_ranks


def build(name):
    # tiktoken's own constructor for the encoding (pattern, special tokens, rank file hash).
    return tiktoken.Encoding(**getattr(public, name)())


def time_counts(enc, items, min_s=1.0):
    # Pass after pass for at least min_s seconds and 5 passes; the fastest pass's rate.
    best, passes, one_pass = 0.0, 0, 0
    start = time.perf_counter()
    while passes < 5 or time.perf_counter() - start < min_s:
        t0 = time.perf_counter()
        n = 0
        for t in items:
            n += len(enc.encode_ordinary(t))
        best = max(best, n / (time.perf_counter() - t0))
        one_pass, passes = n, passes + 1
    return one_pass, best


encodings = {}
for name in ("o200k_base", "cl100k_base"):
    enc = build(name)
    enc.encode_ordinary("warm up")
    short_tokens, short = time_counts(enc, texts)
    long_tokens, long_rate = time_counts(enc, [long])
    encodings[name] = {
        "short_tokens": short_tokens,
        "short_tokens_per_s": round(short, 1),
        "long_tokens": long_tokens,
        "long_tokens_per_s": round(long_rate, 1),
    }
print(json.dumps({"implementation": "tiktoken %s (Python)" % tiktoken.__version__, "encodings": encodings}))
