#!/usr/bin/env python3
"""Deterministic generator of the conversational-memory recall sets.

Run from the repository root:

    python3 bench/recall/generate.py [--check] [--show N]

It writes `bench/recall/data/dev.json` and `bench/recall/data/test.json` from the content
libraries `frames_dev.py` and `frames_test.py` (disjoint topics, templates, vocabulary and
names) and prints statistics for both. Only the Python standard library is used, and every
random choice comes from one seeded `random.Random` per split, so a run is reproducible
byte for byte.

How a conversation is built (see README.md for the reasoning):

1. Two speakers who know each other, each with a few named people in their life (partner,
   sibling, friend, boss, child), 15-25 sessions dated over 8-14 months.
2. Frame instances: a frame is a kind of life event with slots; an instance fills the slots
   and places its steps (announcement, update, outcome) in sessions of one owner. Some frames
   are given to both speakers (`speaker` questions), some recur for one owner at different
   times (time-phrase questions), some change a value later (`update` questions).
3. Each step is rendered from one of the frame's first-person forms; steps with an
   elliptical question are rendered as a prompt by the other speaker and a short reply.
4. Candidate questions come from the frames' third-person question templates; a sample with
   the target category mix is kept, and its evidence turns are the turns of the steps used.
5. Each session is filled with greetings, reactions, small talk and topical distractors
   (lines that reuse the frames' words in unrelated contexts) around its evidence beats.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import importlib  # noqa: E402

GENERATOR_VERSION = 1

SPLITS = {
    "dev": {"module": "frames_dev", "seed": 20240611, "conversations": 6, "prefix": "d"},
    "test": {"module": "frames_test", "seed": 1234, "conversations": 12, "prefix": "t"},
}

# Share of questions per category (the brief's mix).
CATEGORY_MIX = {
    "single-hop": 0.40,
    "multi-hop": 0.15,
    "temporal": 0.20,
    "speaker": 0.10,
    "elliptical": 0.10,
    "update": 0.05,
}
QUESTIONS_PER_CONVERSATION = (100, 112)

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

STOPWORDS = set("""
a an the and or but if then so of to in on at for with about from by as into onto off over
under up down out again once only than too very just also still even more most much many some
any all both each few other such own same no nor not yes is are was were be been being am do
does did doing done have has had having i me my mine myself we us our ours you your yours he
him his himself she her hers herself they them their theirs it its itself this that these
those there here what which who whom whose when where why how can could will would shall
should may might must s t d ll m re ve don didn doesn isn wasn aren weren won wouldn couldn
shouldn haven hasn hadn ain o y get got go going went come came one two lot oh ok okay yeah
""".split())


# --------------------------------------------------------------------------------------------
# Templates

ALT = re.compile(r"\[([^\[\]]*\|[^\[\]]*)\]")  # [a|b|c]: one alternative at random
TOKEN = re.compile(r"\{([*@]?[A-Za-z_][A-Za-z_0-9]*)(?:\.([A-Za-z_]+))?\}")
PRONOUNS = {
    "f": {"he": "she", "him": "her", "his": "her", "hers": "hers", "himself": "herself", "aunt": "auntie"},
    "m": {"he": "he", "him": "him", "his": "his", "hers": "his", "himself": "himself", "aunt": "uncle"},
}


def as_value(item) -> dict:
    return item if isinstance(item, dict) else {"v": item}


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def fmt_date(day: dt.date) -> str:
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


class Renderer:
    """Fills `{token}` / `{token.attr}` placeholders.

    * `{N}` the owner's name, `{O}` the other speaker's (for a filler line: the addressee),
      `{he} {him} {his} {himself}` (and capitalised `{He}`...) the owner's pronouns;
    * `{partner} {sib} {friend} {boss} {kid}` the owner's people, with `.rel` (sister,
      husband...) and `.he/.him/.his`;
    * `{slot}` / `{slot.attr}` the instance's slot values;
    * `{*pool}` / `{*pool.attr}` a fresh value of a pool (one draw per pool per line) that no
      instance of the conversation uses; `{@}` a fresh first name;
    * `{ago}` a time expression whose date offset the caller records; `{T}` a time phrase.
    """

    def __init__(self, conv: "ConvBuilder", values: dict, extra: dict | None = None):
        self.conv = conv
        self.values = values
        self.extra = extra or {}
        self.fresh: dict[str, dict] = {}

    def __call__(self, template: str) -> str:
        template = ALT.sub(lambda m: self.conv.rng.choice(m.group(1).split("|")), template)
        out = re.sub(r"  +", " ", TOKEN.sub(self._sub, template)).strip()
        # a slot value that starts a sentence ("... Me. the RSPCA branch ...") gets a capital
        return re.sub(r"([.!?] )([a-z])(?=[a-z])", lambda m: m.group(1) + m.group(2).upper(), out)

    def _sub(self, m: re.Match) -> str:
        key, attr = m.group(1), m.group(2)
        low = key[:1].lower() + key[1:]
        capital = key[:1].isupper() and key not in ("N", "O", "T")
        if key in self.extra and attr is None:
            return self.extra[key]
        if key == "@":
            return self.conv.fresh_name()
        if key.startswith("*"):
            pool = key[1:]
            if pool not in self.fresh:
                self.fresh[pool] = self.conv.fresh_value(pool)
            val = self.fresh[pool]
        elif low in self.values:
            val = self.values[low]
        else:
            raise KeyError(f"unknown placeholder {{{m.group(0)[1:-1]}}}")
        if attr is None:
            out = val["v"]
        else:
            if attr not in val:
                raise KeyError(f"value {val['v']!r} has no attribute {attr!r} ({m.group(0)})")
            out = val[attr]
        return cap(out) if capital else out


# --------------------------------------------------------------------------------------------
# Conversation building


class Instance:
    def __init__(self, frame: dict, owner: int, values: dict):
        self.frame = frame
        self.owner = owner
        self.values = values  # slot -> value dict
        self.sessions: dict[str, int] = {}  # step key -> session index
        self.pair: set[str] = set()  # steps rendered as prompt + reply
        self.turns: dict[str, list] = {}  # step key -> [(speaker index, text, is_evidence)]
        self.dates: dict[str, dt.date] = {}  # step key -> event date
        self.shared = False  # the other speaker has an instance of the same frame
        self.group: list["Instance"] | None = None  # repeat instances of one owner

    @property
    def fid(self) -> str:
        return self.frame["id"]

    def step(self, key: str) -> dict:
        for s in self.frame["steps"]:
            if s["k"] == key:
                return s
        raise KeyError(f"frame {self.fid} has no step {key!r}")


class ConvBuilder:
    def __init__(self, mod, rng: random.Random, cid: str, speaker_names: list[tuple]):
        self.mod = mod
        self.rng = rng
        self.cid = cid
        self.used_names = {n for n, _ in speaker_names}
        self.used_values: dict[str, set[str]] = defaultdict(set)
        self.speakers = []
        for name, gender in speaker_names:
            self.speakers.append({"name": name, "gender": gender})
        for sp in self.speakers:
            sp["people"] = self._people(sp)
        self.instances: list[Instance] = []

    # names and values -------------------------------------------------------------------
    def _draw_name(self, gender: str | None = None, reserve: bool = True) -> tuple[str, str]:
        pool = [(n, g) for n, g in self.mod.NAMES if n not in self.used_names and (gender is None or g == gender)]
        name, g = self.rng.choice(pool)
        if reserve:
            self.used_names.add(name)
        return name, g

    def fresh_name(self) -> str:
        """A name for a passer-by in a filler line: not one of the conversation's people."""
        return self._draw_name(reserve=False)[0]

    def _person(self, gender: str, rel: str) -> dict:
        name, g = self._draw_name(gender)
        p = {"v": name, "rel": rel}
        p.update(PRONOUNS[g])
        return p

    def _people(self, sp: dict) -> dict:
        rng = self.rng
        pg = ("m" if sp["gender"] == "f" else "f") if rng.random() < 0.8 else sp["gender"]
        partner_rel = {"f": rng.choice(["girlfriend", "wife", "partner"]),
                       "m": rng.choice(["boyfriend", "husband", "partner"])}[pg]
        sg = rng.choice("fm")
        kg = rng.choice("fm")
        return {
            "partner": self._person(pg, partner_rel),
            "sib": self._person(sg, "sister" if sg == "f" else "brother"),
            "friend": self._person(rng.choice("fm"), "friend"),
            "boss": self._person(rng.choice("fm"), "boss"),
            "kid": self._person(kg, "daughter" if kg == "f" else "son"),
        }

    def fresh_value(self, pool_name: str) -> dict:
        pool = self.mod.POOLS[pool_name]
        options = [as_value(x) for x in pool if as_value(x)["v"] not in self.used_values[pool_name]]
        if not options:
            raise ValueError(f"pool {pool_name} exhausted in {self.cid}")
        return self.rng.choice(options)

    def take_value(self, pool_name: str) -> dict:
        val = self.fresh_value(pool_name)
        self.used_values[pool_name].add(val["v"])
        return val

    def owner_values(self, owner: int) -> dict:
        sp = self.speakers[owner]
        other = self.speakers[1 - owner]
        vals = {"n": {"v": sp["name"]}, "o": {"v": other["name"]}}
        for k, v in PRONOUNS[sp["gender"]].items():
            vals[k] = {"v": v}
        vals.update(sp["people"])
        return vals

    def new_instance(self, frame: dict, owner: int) -> Instance:
        values = self.owner_values(owner)
        for slot, pool in frame.get("slots", {}).items():
            if pool == "@name":
                name, g = self._draw_name()
                v = {"v": name}
                v.update(PRONOUNS[g])
                values[slot] = v
            else:
                values[slot] = self.take_value(pool)
        inst = Instance(frame, owner, values)
        self.instances.append(inst)
        return inst


def make_dates(rng: random.Random, n: int) -> list[dt.datetime]:
    span = rng.randint(245, 420)
    gaps = [max(1.0, rng.lognormvariate(2.2, 0.75)) for _ in range(n - 1)]
    scale = span / sum(gaps)
    days = [max(1, round(g * scale)) for g in gaps]
    latest_start = dt.date(2025, 12, 31) - dt.timedelta(days=sum(days))
    first = dt.date(2021, 1, 4)
    start = first + dt.timedelta(days=rng.randint(0, (latest_start - first).days))
    out = []
    day = start
    for i in range(n):
        if i:
            day = day + dt.timedelta(days=days[i - 1])
        slot = rng.choices(["morning", "lunch", "afternoon", "evening", "late"], [0.18, 0.17, 0.17, 0.36, 0.12])[0]
        hour = {"morning": (7, 10), "lunch": (12, 13), "afternoon": (14, 17), "evening": (18, 21), "late": (22, 23)}[slot]
        t = dt.time(rng.randint(*hour), rng.randint(0, 59))
        out.append(dt.datetime.combine(day, t))
    return out


def part_of_day(when: dt.datetime) -> str:
    h = when.hour
    return "morning" if h < 12 else "afternoon" if h < 18 else "evening"


def season_of(day: dt.date) -> str | None:
    return {3: "spring", 4: "spring", 5: "spring", 6: "summer", 7: "summer", 8: "summer",
            9: "autumn", 10: "autumn", 11: "autumn"}.get(day.month)


def ago_choice(rng: random.Random, when: dt.datetime) -> tuple[str, int]:
    options = [("yesterday", -1), ("last night", -1), ("today", 0)]
    if when.hour >= 12:
        options += [("this morning", 0), ("earlier today", 0)]
    k = rng.randint(2, 5)
    options.append((f"on {WEEKDAYS[(when.date() - dt.timedelta(days=k)).weekday()]}", -k))
    return rng.choice(options)


# --------------------------------------------------------------------------------------------
# Planning


def frame_kinds(frame: dict) -> set[str]:
    kinds = {q["c"] for q in frame.get("qs", [])}
    if frame.get("repeat"):
        kinds.add("repeat")
    return kinds


def plan_conversation(conv: ConvBuilder, n_sessions: int):
    rng, mod = conv.rng, conv.mod
    frames = list(mod.FRAMES)
    rng.shuffle(frames)
    repeat = [f for f in frames if f.get("repeat")]
    update = [f for f in frames if "now" in frame_kinds(f) and not f.get("repeat")]
    plain = [f for f in frames if not f.get("repeat") and f not in update]
    load = [0] * n_sessions

    def place(inst: Instance, start_range: tuple[int, int] | None = None, avoid: set[int] = frozenset()) -> bool:
        steps = inst.frame["steps"]
        for _ in range(60):
            lo, hi = start_range or (0, n_sessions - 1)
            cands = [s for s in range(lo, hi + 1) if s not in avoid and load[s] < 5]
            if not cands:
                return False
            weights = [1.0 / (1 + load[s]) ** 2 for s in cands]
            s = rng.choices(cands, weights)[0]
            chosen = [s]
            ok = True
            for st in steps[1:]:
                g = st.get("gap", [1, 4])
                s = s + rng.randint(g[0], g[1])
                if s >= n_sessions or load[s] >= 5:
                    ok = False
                    break
                chosen.append(s)
            if ok:
                for st, si in zip(steps, chosen):
                    inst.sessions[st["k"]] = si
                for si in set(chosen):
                    load[si] += 1
                return True
        return False

    def drop(inst: Instance):
        conv.instances.remove(inst)

    used_frames: set[str] = set()
    # Recurring frames: 2-3 instances of one owner far apart (sometimes both owners).
    for frame in repeat[: rng.choice([2, 3])]:
        owners = [rng.randint(0, 1)]
        if rng.random() < 0.3:
            owners.append(1 - owners[0])
        for owner in owners:
            group = []
            count = rng.choice([2, 3, 3])
            bounds = [round(i * n_sessions / count) for i in range(count + 1)]
            for i in range(count):
                inst = conv.new_instance(frame, owner)
                if place(inst, (bounds[i], max(bounds[i], bounds[i + 1] - 1 - (len(frame["steps"]) - 1)))):
                    group.append(inst)
                else:
                    drop(inst)
            for inst in group:
                inst.group = group
            if len(owners) == 2:
                for inst in group:
                    inst.shared = True
        used_frames.add(frame["id"])
    # Facts that change: 2 update frames.
    for frame in update[: rng.choice([2, 3, 3])]:
        inst = conv.new_instance(frame, rng.randint(0, 1))
        if not place(inst, (0, n_sessions // 2)):
            drop(inst)
        used_frames.add(frame["id"])
    # Shared frames: both speakers, different values.
    shared_frames = [f for f in plain if f.get("shareable", True)][:4]
    for frame in shared_frames:
        pair = []
        for owner in (0, 1):
            inst = conv.new_instance(frame, owner)
            if place(inst):
                pair.append(inst)
            else:
                drop(inst)
        for inst in pair:
            inst.shared = len(pair) == 2
        used_frames.add(frame["id"])
    # Single-owner frames until the sessions are reasonably full.
    rest = [f for f in plain if f["id"] not in used_frames]
    target_steps = int(n_sessions * 3.4)
    for frame in rest:
        if sum(len(i.frame["steps"]) for i in conv.instances) >= target_steps:
            break
        inst = conv.new_instance(frame, rng.randint(0, 1))
        if not place(inst):
            drop(inst)


def realise_steps(conv: ConvBuilder, dates: list[dt.datetime]):
    rng = conv.rng
    for inst in conv.instances:
        ell_steps = {q["ev"][0] for q in inst.frame.get("qs", []) if q["c"] == "ell"}
        for st in inst.frame["steps"]:
            k = st["k"]
            when = dates[inst.sessions[k]]
            pair_forms = st.get("pair", [])
            use_pair = bool(pair_forms) and (
                (k in ell_steps and rng.random() < 0.75) or (k not in ell_steps and rng.random() < 0.15))
            ago, offset = ago_choice(rng, when)
            render = Renderer(conv, inst.values, {"ago": ago})
            owner, other = inst.owner, 1 - inst.owner
            turns = []
            text_all = ""
            if not use_pair or st.get("lead"):
                # a statement; with `lead`, a prompt and reply about one aspect of it follow
                form = rng.choice(st["say"])
                items = [form] if isinstance(form, str) else form
                for item in items:
                    if item.startswith("~"):
                        leadins = conv.mod.FILLER.get("leadin", [])
                        lead = rng.choice(leadins) if leadins and rng.random() < 0.5 else item[1:]
                        turns.append((owner, render(lead), False))
                    elif item.startswith(">"):
                        turns.append((other, render(item[1:]), False))
                    else:
                        turns.append((owner, render(item), "say"))
                text_all = "".join(items)
            if use_pair:
                prompt, reply = rng.choice(pair_forms)
                turns.append((other, render(prompt), "pair"))
                turns.append((owner, render(reply), "pair"))
                inst.pair.add(k)
                text_all += prompt + reply
            inst.turns[k] = [(s, cap(t), e) for s, t, e in turns]
            inst.dates[k] = when.date() + dt.timedelta(days=offset if "{ago}" in text_all else 0)


# --------------------------------------------------------------------------------------------
# Questions


class Candidate:
    def __init__(self, category, kind, text, answer, refs, inst):
        self.category = category
        self.kind = kind
        self.text = text
        self.answer = answer
        self.refs = refs  # [(instance, step key)]
        self.inst = inst


def time_phrases(day: dt.date, other_days: list[dt.date]) -> list[str]:
    out = [f"on {fmt_date(day)}"]
    if not any((d.year, d.month) == (day.year, day.month) for d in other_days):
        out.append(f"in {MONTHS[day.month - 1]} {day.year}")
        out.append(f"in {MONTHS[day.month - 1]} {day.year}")
    season = season_of(day)
    if season and not any(season_of(d) == season and d.year == day.year for d in other_days):
        out.append(f"in the {season} of {day.year}")
    return out


DROPPED: Counter = Counter()  # (frame, kind) of candidates whose answer their evidence does not state


def evidence_turns(inst: Instance, key: str, elliptical: bool) -> list[int]:
    """Indices of a step's turns that are evidence for a question: the prompt and reply for
    an elliptical question, otherwise the statement (or the prompt and reply that replaced it)."""
    flags = [e for _sp, _t, e in inst.turns[key]]
    want = "pair" if (elliptical and "pair" in flags) or "say" not in flags else "say"
    return [i for i, e in enumerate(flags) if e == want]


def supported(conv: ConvBuilder, answer_template: str, values: dict, refs: list) -> bool:
    """Every slot value named in the answer appears in the evidence turns."""
    text = " ".join(inst.turns[key][i][1] for inst, key, ell in refs for i in evidence_turns(inst, key, ell)).lower()
    for m in TOKEN.finditer(answer_template):
        key, attr = m.group(1), m.group(2)
        low = key[:1].lower() + key[1:]
        if low not in values:
            continue
        vd = values[low]
        val = vd["v"] if attr is None else vd[attr]
        # a short reply or prompt of the pool value paraphrases it (elliptical forms)
        said = [val] + ([vd["reply"]] if attr is None and "reply" in vd else []) + ([vd["prompt"]] if attr is None and "prompt" in vd else [])
        if not any(x.lower() in text for x in said):
            return False
    return True


def candidates_for(conv: ConvBuilder, inst: Instance) -> list[Candidate]:
    rng = conv.rng
    out = []
    frame = inst.frame
    for q in frame.get("qs", []):
        c = q["c"]
        if c == "ell" and q["ev"][0] not in inst.pair:
            continue
        ask = rng.choice(q["ask"])
        render = Renderer(conv, inst.values)
        refs = [(inst, k, c == "ell") for k in q["ev"]]
        if c == "when":
            day = inst.dates[q["ev"][0]]
            out.append(Candidate("temporal", "when", render(ask), fmt_date(day), refs, inst))
            continue
        if not supported(conv, q["a"], inst.values, refs):
            DROPPED[(frame["id"], c)] += 1
            continue
        answer = render(q["a"])
        category = {"single": "single-hop", "multi": "multi-hop", "ell": "elliptical",
                    "now": "update", "before": "update"}[c]
        if c == "single" and inst.shared:
            category = "speaker"
        if c == "single" and any(all(e != "say" for _s, _t, e in inst.turns[k]) for k in q["ev"]):
            category = "elliptical"
        out.append(Candidate(category, c, render(ask), answer, refs, inst))
    # Time-phrase questions for recurring frames.
    tq = frame.get("tq")
    if tq and inst.group and len(inst.group) >= 2:
        k = tq["ev"][0]
        day = inst.dates[k]
        others = [o.dates[k] for o in inst.group if o is not inst]
        phrases = time_phrases(day, others)
        # Relative to another life event of the same owner.
        for anchor in conv.instances:
            if anchor.owner != inst.owner or anchor.frame is frame or "anchor" not in anchor.frame:
                continue
            a_key = anchor.frame["steps"][0]["k"]
            a_day = anchor.dates[a_key]
            days = [o.dates[k] for o in inst.group]
            before = [d for d in days if d < a_day]
            after = [d for d in days if d > a_day]
            phrase = Renderer(conv, anchor.values)(anchor.frame["anchor"])
            if day in before and len(before) == 1:
                out.append(("rel", f"before {phrase}", anchor, a_key))
            if day in after and len(after) == 1:
                out.append(("rel", f"after {phrase}", anchor, a_key))
        rel = [x for x in out if isinstance(x, tuple)]
        out = [x for x in out if not isinstance(x, tuple)]
        if rel and rng.random() < 0.45:
            _, phrase, anchor, a_key = rng.choice(rel)
            refs = [(inst, kk, False) for kk in tq["ev"]] + [(anchor, a_key, False)]
            kind = "tq-relative"
        else:
            phrase = rng.choice(phrases)
            refs = [(inst, kk, False) for kk in tq["ev"]]
            kind = "tq-date" if phrase.startswith("on ") else "tq-season" if "of" in phrase else "tq-month"
        render = Renderer(conv, inst.values, {"T": phrase})
        if not supported(conv, tq["a"], inst.values, refs):
            DROPPED[(frame["id"], "tq")] += 1
            return out
        out.append(Candidate("temporal", kind, cap(render(rng.choice(tq["ask"]))), render(tq["a"]), refs, inst))
    return out


def aggregate_candidates(conv: ConvBuilder) -> list[Candidate]:
    rng = conv.rng
    out = []
    seen = set()
    for inst in conv.instances:
        if not inst.group or id(inst.group) in seen or len(inst.group) < 2:
            continue
        seen.add(id(inst.group))
        agg = inst.frame.get("agg")
        if not agg:
            continue
        render = Renderer(conv, inst.values)
        items = [Renderer(conv, o.values)(agg["item"]) for o in sorted(inst.group, key=lambda o: min(o.sessions.values()))]
        answer = ", ".join(items[:-1]) + " and " + items[-1]
        refs = [(o, k, False) for o in inst.group for k in agg["ev"]]
        out.append(Candidate("multi-hop", "aggregate", render(rng.choice(agg["ask"])), answer, refs, inst))
    return out


def select_questions(rng: random.Random, cands: list[Candidate], total: int) -> list[Candidate]:
    by_cat: dict[str, list[Candidate]] = defaultdict(list)
    seen_text = set()
    for c in cands:
        if c.text.lower() in seen_text:
            continue
        seen_text.add(c.text.lower())
        by_cat[c.category].append(c)
    targets = {cat: round(total * share) for cat, share in CATEGORY_MIX.items()}
    chosen = []
    spare = 0
    for cat, n in targets.items():
        pool = by_cat.get(cat, [])
        rng.shuffle(pool)
        # Spread over instances: at most one question per instance first, then the rest.
        first, second = [], []
        taken_inst = set()
        for c in pool:
            (second if id(c.inst) in taken_inst else first).append(c)
            taken_inst.add(id(c.inst))
        ordered = first + second
        chosen.extend(ordered[:n])
        spare += max(0, n - len(ordered))
        by_cat[cat] = ordered[n:]
    # categories short of candidates leave room: fill it from single-hop first, then evenly
    # from multi-hop and temporal
    take = by_cat.get("single-hop", [])[:spare]
    chosen.extend(take)
    spare -= len(take)
    rest = [by_cat.get("multi-hop", []), by_cat.get("temporal", [])]
    i = 0
    while spare > 0 and any(rest):
        if rest[i % 2]:
            chosen.append(rest[i % 2].pop(0))
            spare -= 1
        i += 1
    return chosen


# --------------------------------------------------------------------------------------------
# Sessions


def render_filler(conv: ConvBuilder, template: str, speaker: int) -> str:
    vals = conv.owner_values(speaker)
    # Filler never names the speakers' people: their names may be answers.
    for k in ("partner", "sib", "friend", "boss", "kid"):
        vals.pop(k, None)
    return cap(Renderer(conv, vals)(template))


def assemble_session(conv: ConvBuilder, when: dt.datetime, beats: list[list], noise_frames: list[dict]) -> list[dict]:
    """Returns [{"speaker": index, "text": str, "ref": (instance, step, turn index) | None}]."""
    rng, mod = conv.rng, conv.mod
    F = mod.FILLER
    target = rng.randint(14, 30)
    chunks = []  # each a list of (speaker or None, template or text, ref, rendered?)
    for beat in beats:
        inst, key = beat
        chunk = []
        owner, other = inst.owner, 1 - inst.owner
        first_speaker = inst.turns[key][0][0]
        if rng.random() < 0.3 and first_speaker == owner:
            later = key != inst.frame["steps"][0]["k"]
            topical = inst.frame.get("cue", []) if later else []
            cue = topical if topical and rng.random() < 0.6 else F["cue"]
            chunk.append((other, cue, None, False))
        for i, (sp, text, _ev) in enumerate(inst.turns[key]):
            chunk.append((sp, text, (inst, key, i), True))
        mood = inst.step(key).get("mood", "+")
        if rng.random() < 0.65:
            chunk.append((other, F["react_" + {"+": "pos", "-": "neg", "0": "neutral"}[mood]], None, False))
            if rng.random() < 0.3:
                chunk.append((owner, F["ack"], None, False))
        chunks.append(("beat", chunk, len(chunks)))
    fixed = sum(len(c[1]) for c in chunks)
    opening = []
    if rng.random() < 0.88:
        part = part_of_day(when)
        opening.append((None, F["greet"][part] + F["greet"]["any"], None, False))
        if rng.random() < 0.75:
            opening.append(("next", F["greet_reply"], None, False))
    closing = []
    if rng.random() < 0.8:
        closing.append((None, F["close"], None, False))
        if rng.random() < 0.7:
            closing.append(("next", F["close_reply"], None, False))
    # at most 30 turns: long sessions of news lose their goodbye, then their hello
    if fixed + len(opening) + len(closing) > 28:
        closing = []
    if fixed + len(opening) > 28:
        opening = opening[:1] if fixed < 30 else []
    room = max(min(3, 30 - fixed - len(opening) - len(closing)), target - fixed - len(opening) - len(closing))
    while room > 0:
        r = rng.random()
        if r < 0.42 and noise_frames:
            frame = rng.choice(noise_frames)
            chunk = [(None, frame["noise"], None, False)]
            if rng.random() < 0.45:
                chunk.append(("next", F["react_neutral"] if rng.random() < 0.85 else F["backchannel"], None, False))
        else:
            ex = rng.choice(F["smalltalk"])
            # a line of an exchange only re-rolls its own alternatives: the next line answers it
            chunk = [(None if i == 0 else "next", [line], None, False) for i, line in enumerate(ex)]
        chunk = chunk[:room]
        room -= len(chunk)
        chunks.append(("fill", chunk))
    rng.shuffle(chunks)
    # Beats keep their planned order (steps of one instance in step order).
    positions = [i for i, c in enumerate(chunks) if c[0] == "beat"]
    in_order = [c for c in chunks if c[0] == "beat"]
    in_order.sort(key=lambda c: c[2])
    for i, c in zip(positions, in_order):
        chunks[i] = c
    chunks = [(kind, c) for kind, c, *_ in chunks]
    sequence = opening + [item for _, c in chunks for item in c] + closing
    out = []
    prev = rng.randint(0, 1)
    for n, (sp, text, ref, rendered) in enumerate(sequence):
        if sp is None:
            sp = rng.randint(0, 1) if n == 0 else (1 - prev) if rng.random() < 0.88 else prev
        elif sp == "next":
            sp = 1 - prev
        if rendered:
            text = finish(conv, text)
            if text.lower() in conv.seen:
                text = finish(conv, text, force_decoration=True)
            conv.seen.add(text.lower())
        else:
            text = unique_filler(conv, text, sp)
        out.append({"speaker": sp, "text": text, "ref": ref})
        prev = sp
    return out


def finish(conv: ConvBuilder, text: str, force_decoration: bool = False) -> str:
    rng = conv.rng
    text = decorate(rng, text, conv.mod.FILLER, force_decoration, conv.keep_caps)
    return casual(rng, maybe_typo(rng, text, conv.protected))


def unique_filler(conv: ConvBuilder, options: list[str], speaker: int) -> str:
    """A filler line no earlier turn of the split has used, if the library allows: re-roll
    the template's alternatives, then other templates of its kind, then add a marker."""
    rng = conv.rng
    template = rng.choice(options)
    text = ""
    for attempt in range(14):
        if attempt >= 4 and len(options) > 1:
            template = rng.choice(options)
        text = finish(conv, render_filler(conv, template, speaker), force_decoration=attempt >= 10)
        if text.lower() not in conv.seen:
            break
    conv.seen.add(text.lower())
    return text


def maybe_typo(rng: random.Random, text: str, protected: set[str]) -> str:
    if rng.random() > 0.035:
        return text
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha() and w.lower() not in protected]
    if not idx:
        return text
    i = rng.choice(idx)
    w = words[i]
    j = rng.randint(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


INTERJECTIONS = {"ha", "haha", "hah", "lol", "oh", "ooh", "ah", "um", "hmm", "yes", "no", "yay", "wait", "hey",
                 "hi", "ugh", "wow", "so", "ok", "okay", "right", "well", "anyway", "honestly", "also", "look"}


def decorate(rng: random.Random, text: str, F: dict, force: bool = False, keep: set[str] = frozenset()) -> str:
    """Discourse markers added to any turn (evidence or not) with the same probability.
    `keep`: lower-cased words that stay capitalised (names, slot values)."""
    first = text.split(" ", 1)[0]
    bare = first.lower().strip(",.!?:")
    if (force or rng.random() < 0.13) and text[:1].isalpha() and bare not in INTERJECTIONS:
        if not re.match(r"I\b|I'", first) and bare not in keep:
            text = text[:1].lower() + text[1:]
        text = rng.choice(F["prefix"]) + text
    if rng.random() < 0.15:
        text = text.rstrip(".") + rng.choice(F["suffix"])
    return text


def casual(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.06 and text[:1].isupper() and not text.startswith(("I ", "I'")):
        text = text[:1].lower() + text[1:]
    elif r < 0.1 and text.endswith("."):
        text = text[:-1]
    return text


# --------------------------------------------------------------------------------------------
# A conversation, end to end


def build_conversation(mod, rng: random.Random, cid: str, speaker_names: list[tuple], seen: set[str]) -> dict:
    conv = ConvBuilder(mod, rng, cid, speaker_names)
    conv.seen = seen  # texts of the split so far, lower-cased
    conv.protected = set()
    conv.keep_caps = {part.lower() for n, _ in mod.NAMES for part in re.split(r"[-\s]", n)}
    conv.relationship = rng.choice(mod.RELATIONSHIPS)
    n_sessions = rng.randint(15, 25)
    dates = make_dates(rng, n_sessions)
    plan_conversation(conv, n_sessions)
    realise_steps(conv, dates)

    cands = []
    for inst in conv.instances:
        cands.extend(candidates_for(conv, inst))
    cands.extend(aggregate_candidates(conv))
    total = rng.randint(*QUESTIONS_PER_CONVERSATION)
    chosen = select_questions(rng, cands, total)

    # Topical distractors: the conversation's frames and a few others.
    present = {i.fid: i.frame for i in conv.instances}
    others = [f for f in mod.FRAMES if f["id"] not in present]
    rng.shuffle(others)
    noise_frames = [f for f in list(present.values()) + others[:6] if f.get("noise")]

    sessions = []
    turn_ids: dict[tuple, str] = {}
    protected = conv.protected
    for inst in conv.instances:
        for k, v in inst.values.items():
            if len(k) > 1 or k in ("n", "o"):
                protected.update(w.lower() for w in re.findall(r"[A-Za-z]+", v["v"]))
                conv.keep_caps.update(w.lower() for w in re.findall(r"[A-Z][A-Za-z]*", v["v"]) if w.lower() not in STOPWORDS)
    for si, when in enumerate(dates):
        beats = [(inst, st["k"]) for inst in conv.instances for st in inst.frame["steps"] if inst.sessions[st["k"]] == si]
        rng.shuffle(beats)
        beats = order_steps(beats)
        turns = assemble_session(conv, when, beats, noise_frames)
        sid = f"s{si + 1}"
        out_turns = []
        for n, t in enumerate(turns, 1):
            tid = f"{cid}:{sid}:{n}"
            text = t["text"]
            conv.seen.add(text.lower())
            out_turns.append({"id": tid, "speaker": conv.speakers[t["speaker"]]["name"], "text": text})
            if t["ref"] is not None:
                inst, key, i = t["ref"]
                turn_ids[(id(inst), key, i)] = tid
        sessions.append({"id": sid, "date": when.strftime("%Y-%m-%dT%H:%M:00"), "turns": out_turns})

    questions = []
    for n, c in enumerate(sorted(chosen, key=lambda c: (min(c.inst.sessions.values()), c.text)), 1):
        evidence = []
        for inst, key, ell in c.refs:
            for i in evidence_turns(inst, key, ell):
                evidence.append(turn_ids[(id(inst), key, i)])
        evidence = sorted(set(evidence), key=turn_order)
        questions.append({
            "id": f"{cid}:q{n}", "question": c.text, "answer": c.answer, "category": c.category,
            "evidence": evidence, "kind": c.kind, "frame": c.inst.fid,
        })
    return {
        "id": cid,
        "speakers": [s["name"] for s in conv.speakers],
        "relationship": conv.relationship,
        "sessions": sessions,
        "questions": questions,
    }


def order_steps(beats):
    """Beats of one instance in one session keep their step order."""
    out = list(beats)
    by_inst = defaultdict(list)
    for i, b in enumerate(out):
        by_inst[id(b[0])].append(i)
    for positions in by_inst.values():
        if len(positions) > 1:
            items = sorted((out[p] for p in positions), key=lambda b: [s["k"] for s in b[0].frame["steps"]].index(b[1]))
            for p, b in zip(positions, items):
                out[p] = b
    return out


def turn_order(tid: str):
    _, s, n = tid.split(":")
    return (int(s[1:]), int(n))


def build_split(name: str) -> dict:
    cfg = SPLITS[name]
    mod = importlib.import_module(cfg["module"])
    rng = random.Random(cfg["seed"])
    validate_module(mod)
    names = list(mod.NAMES)
    rng.shuffle(names)
    conversations = []
    speaker_pool = names[:]
    seen: set[str] = set()
    for i in range(cfg["conversations"]):
        a = speaker_pool.pop()
        b = speaker_pool.pop()
        cid = f"{cfg['prefix']}{i + 1:02d}"
        # build with its own rng derived from the split seed, so one conversation's change
        # does not reshuffle all the others
        crng = random.Random(f"{cfg['seed']}:{cid}")
        conv = build_conversation(mod, crng, cid, [a, b], seen)
        conversations.append(conv)
    return {"split": name, "generator_version": GENERATOR_VERSION, "seed": cfg["seed"], "conversations": conversations}


# --------------------------------------------------------------------------------------------
# Validation of a content library


def validate_module(mod):
    ids = set()
    for f in mod.FRAMES:
        assert f["id"] not in ids, f"duplicate frame id {f['id']}"
        ids.add(f["id"])
        keys = [s["k"] for s in f["steps"]]
        for slot, pool in f.get("slots", {}).items():
            assert pool == "@name" or pool in mod.POOLS, f"{f['id']}: unknown pool {pool}"
        for q in f.get("qs", []):
            for k in q["ev"]:
                assert k in keys, f"{f['id']}: question refers to unknown step {k}"
            if q["c"] == "ell":
                assert f["steps"][keys.index(q["ev"][0])].get("pair"), f"{f['id']}: ell question on a step without pairs"
        if f.get("repeat"):
            assert f.get("tq"), f"{f['id']}: recurring frame without time questions"


def check_templates(mod):
    """Renders every template of every frame with sample values (catches unknown slots)."""
    rng = random.Random(0)
    problems = []
    for f in mod.FRAMES:
        names = list(mod.NAMES)
        conv = ConvBuilder(mod, rng, "chk", [names[0], names[1]])
        inst = conv.new_instance(f, 0)
        r = Renderer(conv, inst.values, {"ago": "yesterday", "T": "in May 2023"})
        texts = []
        for s in f["steps"]:
            for form in s["say"]:
                texts.extend([form] if isinstance(form, str) else [x.lstrip("~>") for x in form])
            for p in s.get("pair", []):
                texts.extend(p)
        for q in f.get("qs", []):
            texts.extend(q["ask"])
            texts.append(q.get("a", ""))
        for key in ("tq", "agg"):
            if f.get(key):
                texts.extend(f[key]["ask"])
                texts.append(f[key].get("a", f[key].get("item", "")))
        for t in f.get("noise", []) + f.get("cue", []):
            try:
                render_filler(conv, t, 0)
            except (KeyError, ValueError) as e:
                problems.append(f"{f['id']} (noise/cue): {e} in {t!r}")
        if f.get("anchor"):
            texts.append(f["anchor"])
        for t in texts:
            try:
                r(t)
            except (KeyError, ValueError) as e:
                problems.append(f"{f['id']}: {e} in {t!r}")
    for key, lines in mod.FILLER.items():
        items = lines if isinstance(lines, list) else [x for v in lines.values() for x in v]
        conv = ConvBuilder(mod, rng, "chk", [mod.NAMES[0], mod.NAMES[1]])
        for item in items:
            for t in ([item] if isinstance(item, str) else item):
                try:
                    render_filler(conv, t, 0)
                except (KeyError, ValueError) as e:
                    problems.append(f"FILLER[{key}]: {e} in {t!r}")
    return problems


# --------------------------------------------------------------------------------------------
# Statistics


def stem(word: str) -> str:
    for suf in ("ing", "ed", "es", "s", "ly", "er"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)]
    return word


def content_words(text: str, names: set[str]) -> set[str]:
    words = re.findall(r"[a-z]+", text.lower().replace("’", "'"))
    return {stem(w) for w in words if w not in STOPWORDS and w not in names and len(w) > 1}


def statistics(data: dict, mod) -> dict:
    names = {part.lower() for n, _ in mod.NAMES for part in re.split(r"[-\s]", n)}
    cats = Counter()
    kinds = Counter()
    n_turns = 0
    n_sessions = []
    turns_per_session = []
    ev_ids = set()
    overlap = 0
    overlap_by_cat = Counter()
    n_q = 0
    ev_len, non_len = [], []
    ev_digit = non_digit = 0
    texts = Counter()
    leaks = []
    first_turn_ev = 0
    first_turns = 0
    span_days = []
    ev_per_q = []
    for conv in data["conversations"]:
        by_id = {}
        n_sessions.append(len(conv["sessions"]))
        d0 = dt.datetime.fromisoformat(conv["sessions"][0]["date"])
        d1 = dt.datetime.fromisoformat(conv["sessions"][-1]["date"])
        span_days.append((d1 - d0).days)
        for s in conv["sessions"]:
            turns_per_session.append(len(s["turns"]))
            for t in s["turns"]:
                by_id[t["id"]] = t
                texts[t["text"].lower()] += 1
        n_turns += len(by_id)
        conv_ev = set()
        for q in conv["questions"]:
            conv_ev.update(q["evidence"])
        ev_ids |= conv_ev
        for s in conv["sessions"]:
            first_turns += 1
            if s["turns"][0]["id"] in conv_ev:
                first_turn_ev += 1
        for tid, t in by_id.items():
            wc = len(t["text"].split())
            has_digit = any(ch.isdigit() for ch in t["text"])
            if tid in conv_ev:
                ev_len.append(wc)
                ev_digit += has_digit
            else:
                non_len.append(wc)
                non_digit += has_digit
        conv_names = {n.lower() for n in names}
        for q in conv["questions"]:
            n_q += 1
            cats[q["category"]] += 1
            kinds[q["kind"]] += 1
            ev_per_q.append(len(q["evidence"]))
            qw = content_words(q["question"], conv_names)
            ew = set()
            for tid in q["evidence"]:
                ew |= content_words(by_id[tid]["text"], conv_names)
            if qw & ew:
                overlap += 1
                overlap_by_cat[q["category"]] += 1
            if q["kind"] not in ("when",) and not q["kind"].startswith("tq") and q["kind"] != "aggregate":
                ans = q["answer"].lower()
                pat = re.compile(r"\b" + re.escape(ans) + r"\b")
                ev = set(q["evidence"])
                for tid, t in by_id.items():
                    if tid not in ev and pat.search(t["text"].lower()):
                        leaks.append((q["id"], q["question"], q["answer"], tid, t["text"]))
    dup_turns = sum(c - 1 for c in texts.values() if c > 1)  # copies beyond the first
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
    return {
        "conversations": len(data["conversations"]),
        "sessions": sum(n_sessions),
        "sessions_per_conversation": (min(n_sessions), max(n_sessions)),
        "turns_per_session": (min(turns_per_session), max(turns_per_session), round(mean(turns_per_session), 1)),
        "span_days": (min(span_days), max(span_days)),
        "turns": n_turns,
        "questions": n_q,
        "categories": dict(cats),
        "kinds": dict(kinds),
        "evidence_turns_per_question": round(mean(ev_per_q), 2),
        "non_evidence_share": round(1 - len(ev_ids) / n_turns, 3),
        "overlap_share": round(overlap / n_q, 3),
        "overlap_by_category": {c: round(overlap_by_cat[c] / cats[c], 2) for c in cats},
        "mean_words_evidence": round(mean(ev_len), 1),
        "mean_words_other": round(mean(non_len), 1),
        "words_per_turn_range": (min(ev_len + non_len), max(ev_len + non_len)),
        "share_turns_under_3_words": round(sum(1 for n in ev_len + non_len if n < 3) / n_turns, 3),
        "digit_share_evidence": round(ev_digit / max(1, len(ev_len)), 3),
        "digit_share_other": round(non_digit / max(1, len(non_len)), 3),
        "duplicate_turn_share": round(dup_turns / n_turns, 4),
        "evidence_first_turn_share": round(first_turn_ev / first_turns, 3),
        "answer_leaks": len(leaks),
        "_leaks": leaks,
    }


def print_stats(name: str, st: dict):
    print(f"== {name}")
    for k, v in st.items():
        if k.startswith("_"):
            continue
        print(f"  {k}: {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "data"))
    ap.add_argument("--show", type=int, default=0, help="print N random questions with evidence per split")
    ap.add_argument("--leaks", type=int, default=5, help="print up to N answer leaks per split")
    ap.add_argument("--splits", default="dev,test")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.splits.split(","):
        mod = importlib.import_module(SPLITS[name]["module"])
        problems = check_templates(mod)
        if problems:
            print("\n".join(problems[:40]), file=sys.stderr)
            sys.exit(f"{len(problems)} template problems in {mod.__name__}")
        data = build_split(name)
        path = os.path.join(args.out, f"{name}.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=0, separators=(",", ":"))
            fh.write("\n")
        st = statistics(data, mod)
        st["dropped_unsupported"] = sum(DROPPED.values())
        if DROPPED:
            print("  dropped (answer not in evidence):", dict(DROPPED.most_common(12)))
        DROPPED.clear()
        print_stats(f"{name} ({os.path.relpath(path)}, {os.path.getsize(path) / 1e6:.2f} MB)", st)
        for leak in st["_leaks"][: args.leaks]:
            print("  LEAK", leak)
        if args.show:
            show(data, args.show, random.Random(7))


def show(data: dict, n: int, rng: random.Random):
    allq = [(c, q) for c in data["conversations"] for q in c["questions"]]
    for conv, q in rng.sample(allq, min(n, len(allq))):
        by_id = {t["id"]: (s["date"], t) for s in conv["sessions"] for t in s["turns"]}
        print(f"\n[{q['category']}/{q['kind']}/{q['frame']}] {q['question']}  ->  {q['answer']}")
        for tid in q["evidence"]:
            date, t = by_id[tid]
            print(f"    {tid} ({date[:10]}) {t['speaker']}: {t['text']}")


if __name__ == "__main__":
    main()
