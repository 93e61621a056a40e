"""Exports the embedding model Strata has on disk to ONNX (f32), for ONNX Runtime and fastembed.

    python3 scripts/export_onnx.py MODEL_DIR OUT.onnx [OUT_INT8.onnx]
MODEL_DIR holds config.json, model.safetensors and tokenizer.json (the folder scripts/setup
fills); nothing is fetched from a hub. Needs torch (CPU), transformers, onnx and onnxscript
(torch's exporter); onnxruntime and tokenizers, if installed, check the file against torch on
two sentences, and onnxruntime's dynamic quantization writes OUT_INT8.onnx (int8 weights) if
it is named. The graph takes
input_ids, attention_mask and token_type_ids (int64, batch × sequence) and gives
last_hidden_state (batch × sequence × 384): pooling and normalization stay outside, as in the
exports fastembed and sentence-transformers' ONNX backend use.
"""
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch  # noqa: E402
from transformers import AutoModel  # noqa: E402

NAMES = ["input_ids", "attention_mask", "token_type_ids"]


class Hidden(torch.nn.Module):
    """The encoder with last_hidden_state as its only output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state


def main(model_dir, out, int8=None):
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    wrapped = Hidden(model)
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    example = (ids, mask, torch.zeros_like(ids))
    axes = {n: {0: "batch", 1: "sequence"} for n in NAMES}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(
            wrapped,
            example,
            out,
            input_names=NAMES,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=True,
            optimize=True,
            external_data=False,
        )
    check(model, model_dir, out)
    if int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(out, int8, weight_type=QuantType.QInt8)
        check(model, model_dir, int8)


def check(model, model_dir, out):
    try:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError:
        return
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_padding()
    enc = tok.encode_batch(["A man is eating food.", "What is the name of Ana's cat, the grey kitten called Pixel?"])
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    got = ort.InferenceSession(out, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    with torch.no_grad():
        want = model(**{k: torch.from_numpy(v) for k, v in feed.items()}).last_hidden_state.numpy()
    diff = float(np.abs((got - want) * mask[:, :, None]).max())

    def pooled(h):
        mean = (h * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return mean / np.linalg.norm(mean, axis=1, keepdims=True)

    cosine = float((pooled(got) * pooled(want)).sum(axis=1).min())
    print(
        f"{out}: {os.path.getsize(out) / 1e6:.1f} MB; ONNX Runtime vs torch: largest difference of a hidden "
        f"value {diff:.2e}, lowest cosine of the sentence vectors {cosine:.6f}"
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
