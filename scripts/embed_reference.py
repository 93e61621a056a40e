"""The reference side of `strata bench embed`: sentence-transformers on CPU torch, same model
files, same texts, same batch sizes, timed the way Strata times itself.

    python3 scripts/embed_reference.py MODEL_DIR INPUT.json
INPUT.json holds {"texts": [...], "queries": [...], "batches": [...]}; prints one JSON object
in the shape of strata_api::embedbench::EmbedFigures. Threads: torch's default for this
machine (all cores), as a user of the library would get.
"""
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

model_dir, input_path = sys.argv[1], sys.argv[2]
job = json.load(open(input_path))
texts, queries = job["texts"], job["queries"]
model = SentenceTransformer(model_dir, device="cpu")
model.encode(texts[:16], batch_size=16, normalize_embeddings=True)  # warm-up

per_second = {}
for b in job["batches"]:
    n = -(-len(texts) // 5) if b == 1 else len(texts)
    start = time.perf_counter()
    # b texts per call, as Strata is called (encode sorts by length within what it is given).
    for i in range(0, n, b):
        model.encode(texts[i : i + b], batch_size=b, normalize_embeddings=True)
    per_second[str(b)] = round(n / (time.perf_counter() - start), 1)

lat = []
for q in queries:
    start = time.perf_counter()
    model.encode([q], normalize_embeddings=True)
    lat.append((time.perf_counter() - start) * 1000.0)
lat.sort()


def pct(p):
    return round(lat[min(int(len(lat) * p), len(lat) - 1)], 1) if lat else 0.0


name = f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__} CPU, {torch.get_num_threads()} threads"
print(json.dumps({"implementation": name, "per_second": per_second, "query_p50_ms": pct(0.5), "query_p95_ms": pct(0.95)}))
