"""The reference side of `strata bench embed`: the same model, texts, batch sizes and calls as
Strata, timed the way Strata times itself, on one of two engines.

    python3 scripts/embed_reference.py MODEL_DIR INPUT.json
        sentence-transformers on CPU torch, loading MODEL_DIR (threads: torch's default for
        this machine, all cores, as a user of the library would get);
    python3 scripts/embed_reference.py --onnx MODEL.onnx MODEL_DIR INPUT.json
        ONNX Runtime (CPU) on MODEL.onnx, with MODEL_DIR's tokenizer.json, one thread per core;
        mean pooling over the attention mask and L2 normalization as sentence-transformers
        does for this model (what fastembed does too).

INPUT.json holds {"texts": [...], "queries": [...], "batches": [...]}. Prints one JSON object in
the shape of strata_bench::embedbench::EmbedFigures, plus "vectors": every text's vector, embedded
in untimed calls of 64 after the timing, for the agreement with Strata's.
"""
import json
import os
import sys
import time

import numpy as np

# Longest input in tokens, as Strata's MiniLm (and sentence-transformers' config for the model).
MAX_TOKENS = 256


def sentence_transformers_engine(model_dir):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    model.max_seq_length = MAX_TOKENS

    def encode(texts):
        return model.encode(texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True)

    name = (
        f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__} CPU, "
        f"{torch.get_num_threads()} threads"
    )
    return name, encode


def onnx_runtime_engine(onnx_path, model_dir):
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    threads = os.cpu_count() or 1
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    output = session.get_outputs()[0].name

    def encode(texts):
        encodings = tokenizer.encode_batch(texts)
        cols = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), cols), dtype=np.int64)
        mask = np.zeros((len(texts), cols), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run([output], feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        mean = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return mean / np.clip(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12, None)

    label = os.path.join(os.path.basename(os.path.dirname(os.path.abspath(onnx_path))), os.path.basename(onnx_path))
    size = os.path.getsize(onnx_path) / 1e6
    return f"ONNX Runtime {ort.__version__} CPU, {label} ({size:.0f} MB), {threads} threads", encode


def main(argv):
    onnx_path = None
    if argv[:1] == ["--onnx"]:
        onnx_path, argv = argv[1], argv[2:]
    model_dir, input_path = argv
    job = json.load(open(input_path))
    texts, queries = job["texts"], job["queries"]
    if onnx_path:
        name, encode = onnx_runtime_engine(onnx_path, model_dir)
    else:
        name, encode = sentence_transformers_engine(model_dir)
    encode(texts[:16])  # warm-up

    per_second = {}
    for b in job["batches"]:
        # Batch 1 is slow: a fifth of the texts is enough to time it.
        n = -(-len(texts) // 5) if b == 1 else len(texts)
        start = time.perf_counter()
        for i in range(0, n, b):
            encode(texts[i : i + b])
        per_second[str(b)] = round(n / (time.perf_counter() - start), 1)

    lat = []
    for q in queries:
        start = time.perf_counter()
        encode([q])
        lat.append((time.perf_counter() - start) * 1000.0)
    lat.sort()

    def pct(p):
        return round(lat[min(int(len(lat) * p), len(lat) - 1)], 1) if lat else 0.0

    vectors = np.concatenate([encode(texts[i : i + 64]) for i in range(0, len(texts), 64)]) if texts else []
    print(
        json.dumps(
            {
                "implementation": name,
                "per_second": per_second,
                "query_p50_ms": pct(0.5),
                "query_p95_ms": pct(0.95),
                "vectors": [[round(float(x), 7) for x in v] for v in vectors],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
