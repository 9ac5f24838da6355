#!/usr/bin/env python3
"""Fits the weights of `memory_search`'s final score (`memory/src/retrieval/weights.rs`).

    target/py-venv/bin/python bench/recall/fit.py [--aeterna-bin target/debug/aeterna]
        [--rounds 2] [--write]

The score of a candidate is `σ(bias + Σ weightᵢ · signalᵢ)` (`memory/src/retrieval/rank.rs`).
The weights are fitted on the **dev** splits only — the conversational dev set and the
near-duplicate notes (technical memories) — never on the test split:

1. Start the real server with the current weights, store the dev memories, and ask every dev
   question with `limit: 100, explain: true`: each hit comes back with its signals. A hit is
   positive when it is evidence for the question (for a near-duplicate query: the original or
   one of its copies).
2. **Ranking**: the weights maximise the listwise likelihood of the positives within each
   question's candidates (a softmax over the candidates; L2 penalty 0.01), which is what the
   order of the hits depends on.
3. **Calibration**: one more logistic regression of the labels on that logit gives the scale
   and the bias (Platt scaling), so the score is the estimated probability that the hit is
   evidence and `min_score` means the same for every query. It is fitted on the hits a user
   reads (each query's best 10) with the two sets weighing the same: calibrated on all 100
   candidates of conversational questions alone, where a topical turn is usually not the
   evidence, a knowledge-base memory that plainly answers its question scored under 0.1.
4. The `neighbour` signal is the first-pass score of a neighbour, so it depends on the weights:
   the fit is repeated `--rounds` times with the server running the previous round's weights.

Each round prints the dev recall@5 / recall@10 the weights give when the returned candidates
are re-ranked (an estimate; `run.py` measures the real thing) and the log-loss. `--write`
rewrites `weights.rs`; then rebuild and run `run.py --split test` for the numbers to report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import numpy as np

import run

SIGNALS = ["semantic", "lexical", "fused", "coverage", "proximity", "interaction", "entity",
           "speaker", "time", "brevity", "neighbour"]
WEIGHTS_RS = run.ROOT / "memory" / "src" / "retrieval" / "weights.rs"
LIMIT = 100
# Candidates per query the score is calibrated on: the hits a user reads.
CALIBRATION_DEPTH = 10


def current_weights() -> dict:
    text = WEIGHTS_RS.read_text()
    out = {}
    for name in ["bias"] + SIGNALS:
        for line in text.splitlines():
            line = line.strip()
            if line.startswith(name + ":"):
                out[name] = float(line.split(":")[1].strip().rstrip(","))
    return out


def config_for(weights: dict) -> str:
    lines = ["[memory.retrieval.weights]"] + [f"{k} = {v:.6f}" for k, v in weights.items()]
    return "\n".join(lines) + "\n"


async def collect(server, conversations, nd, concurrency=8):
    """Every dev question's hits with their signals and labels: a list of (X, y) per query."""
    queries = []
    async with run.Session(server, concurrency) as session:
        await asyncio.gather(run.ingest_near_duplicates(session, nd),
                             *(run.ingest_conversation(session, c) for c in conversations))

        async def ask(query, project, positives, key):
            hits = await session.search({"query": query, "layers": ["project"], "project_id": project,
                                         "limit": LIMIT, "explain": True})
            x = np.array([[h["explain"]["signals"][s] for s in SIGNALS] for h in hits], dtype=float)
            ids = [run.meta_of(h).get(key) for h in hits]
            y = np.array([1.0 if i in positives else 0.0 for i in ids])
            return {"x": x.reshape(-1, len(SIGNALS)), "y": y, "n_pos": len(positives), "set": key}

        tasks = [ask(q["question"], c["id"], set(q["evidence"]), "turn") for c in conversations for q in c["questions"]]
        tasks += [ask(q["query"], "near-duplicates", {q["original"], *q.get("copies", [])}, "memory")
                  for q in nd["questions"]]
        queries = await asyncio.gather(*tasks)
    return list(queries)


def listwise(queries, l2=0.01, iterations=300):
    """Weights maximising Σ_q log(Σ_pos e^z / Σ_all e^z), by gradient ascent with Adam."""
    w = np.zeros(len(SIGNALS))
    usable = [q for q in queries if q["y"].sum() > 0 and len(q["y"]) > 1]
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for step in range(1, iterations + 1):
        grad = -l2 * w
        for q in usable:
            z = q["x"] @ w
            p = np.exp(z - z.max())
            p_all = p / p.sum()
            pos = q["y"] > 0
            p_pos = p[pos] / p[pos].sum()
            grad += q["x"][pos].T @ p_pos - q["x"].T @ p_all
        grad /= len(usable)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        w += 0.05 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return w


def platt(queries, w):
    """Scale a and bias b of σ(a·z + b) by weighted logistic regression (Newton's method with
    step halving, which cannot diverge) over what a user sees: each query's best
    `CALIBRATION_DEPTH` candidates, each set of queries weighing the same in total (so the
    conversational set's many negatives do not make every score a conversational one)."""
    zs, ys, weights = [], [], []
    sets = sorted({q["set"] for q in queries})
    for name in sets:
        shown = []
        for q in queries:
            if q["set"] != name or not len(q["y"]):
                continue
            z = q["x"] @ w
            top = np.argsort(-z, kind="stable")[:CALIBRATION_DEPTH]
            shown.append((z[top], q["y"][top]))
        total = sum(len(z) for z, _ in shown)
        for z, y in shown:
            zs.append(z)
            ys.append(y)
            weights.append(np.full(len(z), 1.0 / (total * len(sets))))
    z, y, weight = np.concatenate(zs), np.concatenate(ys), np.concatenate(weights)

    def loss(ab):
        t = ab[0] * z + ab[1]
        # log(1 + e^t) - y t, computed without overflow
        return float(np.sum(weight * (np.logaddexp(0, t) - y * t)))

    rate = float(np.sum(weight * y))
    ab = np.array([1.0, float(np.log(rate / (1 - rate)) - np.sum(weight * z))])
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(ab[0] * z + ab[1], -50, 50)))
        g = np.array([np.sum(weight * (p - y) * z), np.sum(weight * (p - y))])
        s = weight * p * (1 - p)
        h = np.array([[np.sum(s * z * z), np.sum(s * z)], [np.sum(s * z), np.sum(s)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(h, g)
        current = loss(ab)
        while loss(ab - step) > current and np.abs(step).max() > 1e-12:
            step /= 2
        ab = ab - step
        if np.abs(step).max() < 1e-9:
            break
    return ab[0], ab[1], loss(ab)


def reranked_recall(queries, w, key):
    rows = {"r5": [], "r10": []}
    for q in queries:
        if q["set"] != key:
            continue
        order = np.argsort(-(q["x"] @ w), kind="stable") if len(q["y"]) else []
        y = q["y"][order] if len(q["y"]) else q["y"]
        for k, name in ((5, "r5"), (10, "r10")):
            rows[name].append(y[:k].sum() / max(q["n_pos"], 1))
    return {k: float(np.mean(v)) for k, v in rows.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aeterna-bin")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="rewrite memory/src/retrieval/weights.rs")
    args = parser.parse_args()
    binary = run.find_binary(args.aeterna_bin)
    dev = json.loads((run.HERE / "data" / "dev.json").read_text())["conversations"]
    nd = json.loads((run.HERE / "data" / "near-duplicates.json").read_text())
    weights = current_weights()
    for round_ in range(1, args.rounds + 1):
        with run.Server(binary, config_for(weights), f"fit round {round_}") as server:
            queries = asyncio.run(collect(server, dev, nd))
        before = np.array([weights[s] for s in SIGNALS])
        w = listwise(queries)
        a, b, loss = platt(queries, w)
        fitted = {"bias": float(b), **{s: float(a * wi) for s, wi in zip(SIGNALS, w)}}
        print(f"round {round_}: {sum(len(q['y']) for q in queries)} candidates of {len(queries)} queries; "
              f"log-loss {loss:.4f}", file=sys.stderr)
        for key in ("turn", "memory"):
            print(f"  {key:7s} re-ranked recall: before {reranked_recall(queries, before, key)}, "
                  f"after {reranked_recall(queries, np.array([fitted[s] for s in SIGNALS]), key)}", file=sys.stderr)
        print("  weights: " + ", ".join(f"{k} {v:.3f}" for k, v in fitted.items()), file=sys.stderr)
        weights = fitted
    body = "\n".join(f"    {k}: {v:.4f}," for k, v in weights.items())
    print(f"pub const FITTED: SignalWeights = SignalWeights {{\n{body}\n}};")
    if args.write:
        text = WEIGHTS_RS.read_text()
        start = text.index("pub const FITTED")
        WEIGHTS_RS.write_text(text[:start] + f"pub const FITTED: SignalWeights = SignalWeights {{\n{body}\n}};\n")
        print(f"wrote {WEIGHTS_RS.relative_to(run.ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
