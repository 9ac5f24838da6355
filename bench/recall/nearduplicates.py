#!/usr/bin/env python3
"""Deterministic generator of the near-duplicate set: `data/near-duplicates.json`.

    python3 bench/recall/nearduplicates.py

Models a long-running memory in one scope where the same fact was saved many times in
slightly different words. 10,000 memories, all short notes of the kind a coding agent saves:

* 400 originals; 200 of them get 5-20 reworded copies each (another phrasing of the same fact,
  synonym swaps, reordered clauses, hedges such as "I think" or "note:", a detail dropped or
  added, casing and punctuation changes), written after the original and interleaved with
  other notes;
* the rest are unrelated notes in the same style: the same templates with other subjects
  (another service, environment or person), so they share most of the words.

Every fact has a subject (the template and its key slots, e.g. service + environment) that no
other fact shares, so a query naming the subject has exactly one right fact. Questions: 1-2
paraphrased queries per duplicated original; the label is the original's id, and its copies'
ids are listed as `copies`. Standard library only, one seeded `random.Random`.
"""

from __future__ import annotations

import json
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 4242
GENERATOR_VERSION = 1
TOTAL = 10_000
ORIGINALS = 400
DUPLICATED = 200

SERVICES = ["billing", "auth", "search", "checkout", "notifications", "inventory", "payments", "reporting", "gateway",
            "scheduler", "ingest", "media", "profile", "catalog", "shipping", "ledger", "analytics", "email", "webhooks",
            "exports", "pricing", "recommendations", "audit", "sessions", "uploads", "geo", "chat", "feeds", "orders",
            "returns", "loyalty", "tax", "identity", "metrics", "alerts", "invoicing", "onboarding", "fraud", "quotes",
            "booking", "reviews", "subscriptions", "wallet", "coupons", "tracking", "dispatch", "licensing", "sync"]
ENVS = [{"v": "staging", "abbr": "stg", "alt": "stage"}, {"v": "production", "abbr": "prd", "alt": "prod"},
        {"v": "dev", "abbr": "dev", "alt": "development"}, {"v": "QA", "abbr": "qa", "alt": "test"},
        {"v": "sandbox", "abbr": "sbx", "alt": "sandbox env"}, {"v": "preprod", "abbr": "pre", "alt": "pre-production"}]
PEOPLE = ["Ana", "Bilal", "Chidi", "Dana", "Eitan", "Fen", "Gosia", "Hamid", "Ines", "Jarek", "Kofi", "Lea", "Mateo",
          "Nour", "Oksana", "Pavel", "Quinn", "Rhea", "Sven", "Tamar", "Uma", "Vik", "Wen", "Xavi", "Yusra", "Zeke",
          "Amir", "Bea", "Cyril", "Dalia", "Emre", "Farid", "Greta", "Hugo", "Isla", "Joon", "Kasia", "Lior"]
DBS = ["Postgres 15", "Postgres 16", "MySQL 8", "MariaDB 10.11", "MongoDB 7", "CockroachDB 23", "ClickHouse", "SQL Server 2022"]
MIGRATORS = ["sqlx", "Flyway", "Alembic", "Liquibase", "goose", "Prisma migrate", "dbmate", "Atlas"]
CIS = ["GitHub Actions", "GitLab CI", "Buildkite", "CircleCI", "Jenkins", "Drone"]
CI_JOBS = ["integration", "e2e", "lint", "build", "unit", "docker"]
MERGES = [{"v": "squash", "alt": "squash-and-merge"}, {"v": "rebase", "alt": "rebase-and-merge"}, {"v": "merge-commit", "alt": "plain merge"}]
BRANCH_KINDS = ["feature", "hotfix", "release", "dependency-bump", "docs"]
REGIONS = ["eu-west-1", "us-east-1", "eu-central-1", "ap-southeast-2", "us-west-2", "eu-north-1"]
LEVELS = ["info", "warn", "debug", "error"]
QUEUES = ["orders.created", "invoices.pending", "emails.outbound", "images.resize", "events.raw", "payments.settled",
          "users.deleted", "reports.requested"]
WHATS = ["user avatars", "invoice PDFs", "nightly exports", "raw event logs", "thumbnails", "audit trails", "backups"]
CACHED = ["session tokens", "exchange rates", "feature flags", "product listings", "search suggestions", "user permissions"]
TTLS = ["5 minutes", "30 seconds", "1 hour", "24 hours", "10 minutes", "15 minutes"]
TEAMS = ["platform", "payments", "growth", "data", "infra", "mobile", "web", "security", "SRE", "search"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
METRICS = [{"v": "p99 latency", "unit": "ms", "thr": ["800", "1200", "500", "2000"]},
           {"v": "error rate", "unit": "%", "thr": ["2", "5", "1", "0.5"]},
           {"v": "queue depth", "unit": " messages", "thr": ["10000", "5000", "50000"]},
           {"v": "CPU", "unit": "%", "thr": ["85", "90", "75"]}]
TOOLS = ["cargo", "npm", "pnpm", "poetry", "terraform", "helm", "docker compose", "kubectl", "gradle", "go"]
ERRORS = {"cargo": ["linker `cc` not found", "failed to select a version for the requirement", "could not compile due to previous error"],
          "npm": ["ERESOLVE unable to resolve dependency tree", "EACCES permission denied", "ENOSPC"],
          "pnpm": ["ERR_PNPM_OUTDATED_LOCKFILE", "ERR_PNPM_PEER_DEP_ISSUES"],
          "poetry": ["SolverProblemError", "The lock file is not up to date"],
          "terraform": ["Error acquiring the state lock", "Provider produced inconsistent final plan"],
          "helm": ["UPGRADE FAILED: another operation is in progress", "rendered manifests contain a resource that already exists"],
          "docker compose": ["port is already allocated", "no space left on device"],
          "kubectl": ["error: You must be logged in to the server", "ImagePullBackOff"],
          "gradle": ["Could not resolve all dependencies", "Daemon disappeared unexpectedly"],
          "go": ["missing go.sum entry", "module declares its path as"]}
FIXES = ["delete the lock and rerun", "clear the cache directory first", "bump the lockfile in a separate PR",
         "run it with the VPN on", "restart the daemon", "pin the previous minor version", "ask in #infra before retrying",
         "re-login with the SSO helper", "prune old images", "set the env var from the README"]
RUNTIMES = [("Rust", ["1.78", "1.80", "1.82"], "cargo"), ("Node", ["18", "20", "22"], "pnpm"), ("Node", ["20", "22"], "npm"),
            ("Python", ["3.11", "3.12"], "poetry"), ("Python", ["3.10", "3.12"], "uv"), ("Go", ["1.21", "1.22"], "go modules"),
            ("Java", ["17", "21"], "Gradle"), ("Kotlin", ["1.9", "2.0"], "Gradle")]
CONVENTIONS = [{"v": "early returns over nested ifs", "topic": "control flow"},
               {"v": "no abbreviations in public names", "topic": "naming"},
               {"v": "one assertion per test", "topic": "tests"},
               {"v": "errors wrapped with context", "topic": "errors"},
               {"v": "explicit types on public functions", "topic": "types"},
               {"v": "comments that say why, not what", "topic": "comments"},
               {"v": "small PRs under 400 lines", "topic": "PR size"},
               {"v": "conventional commit messages", "topic": "commit messages"}]
LANGS = ["Rust", "TypeScript", "Python", "Go", "Kotlin"]
VAULTS = ["Vault", "AWS Secrets Manager", "1Password", "SOPS files", "GCP Secret Manager"]
PATHS = ["migrations/", "infra/terraform/", "src/auth/", "api/proto/", ".github/workflows/", "docs/adr/", "charts/",
         "src/billing/", "scripts/release/", "config/prod/", "src/payments/", "deploy/k8s/", "sdk/", "db/schema/"]


def repos() -> list[str]:
    return [f"{s}-{kind}" for s in SERVICES for kind in ("api", "web", "worker")]


REPOS = repos()

# A template: `key` names the slots that make its subject; every other slot is drawn freely.
# `forms` are phrasings of the fact (copies use the others); `((...))` is a detail a copy may
# drop; `extra` are details a copy may add; `queries` paraphrase a question about it.
TEMPLATES = [
    dict(id="db", key=["service", "env"], slots={"db": DBS, "host": "host", "mig": MIGRATORS},
         forms=["The {env} database for {service} is {db} on {host}((; migrations run with {mig} at deploy))",
                "{service} {env} DB: {db}, host {host}((, migrated by {mig} during deploys))",
                "((Migrations for {service} in {env} go through {mig} at deploy time; ))the database is {db} on {host}",
                "{service}'s {env.alt} database runs {db} on {host}((; {mig} applies migrations when deploying))"],
         extra=["don't run migrations by hand", "the replica is read-only", "backups are nightly"],
         queries=["which database engine and host does {service} use in {env.alt}", "where does the {service} {env} data live and what runs its schema changes",
                  "{service} {env.alt} db server?"]),
    dict(id="merge", key=["person", "bkind"], slots={"merge": MERGES},
         forms=["{person} prefers {merge} merges for {bkind} branches", "For {bkind} branches, {person} wants {merge.alt}",
                "{person} likes {bkind} PRs merged with {merge}((, not the other options))", "Use {merge} when merging {person}'s {bkind} branches"],
         extra=["it keeps history readable", "she said so in the last retro", "applies to all repos"],
         queries=["how should {bkind} pull requests be merged for {person}", "what merge strategy does {person} want on {bkind} work"]),
    dict(id="port", key=["service", "env"], slots={"port": [str(p) for p in range(3000, 9100, 7)]},
         forms=["{service} listens on port {port} in {env}", "In {env}, the {service} service binds to :{port}",
                "Port for {service} ({env.alt}) is {port}", "{service}@{env}: port {port}((, behind the internal load balancer))"],
         extra=["the health check is on the same port", "it is not exposed publicly"],
         queries=["what port does {service} bind in {env.alt}", "{service} {env} port number"]),
    dict(id="ci", key=["service"], slots={"ci": CIS, "job": CI_JOBS, "mins": ["6", "9", "12", "15", "22", "31"]},
         forms=["{service}'s CI runs on {ci}((; the {job} job takes about {mins} minutes))", "CI for {service} is {ci}, and the {job} job needs ~{mins} min",
                "((The {job} job is the slow one at {mins} minutes. )){service} builds on {ci}", "{service} uses {ci} for CI((, {job} stage ≈ {mins} minutes))"],
         extra=["the cache is keyed on the lockfile", "flaky tests are retried once"],
         queries=["what CI system builds {service} and how long is its slowest job", "which pipeline provider does {service} use"]),
    dict(id="owner", key=["service"], slots={"person": PEOPLE, "team": TEAMS},
         forms=["{person} owns the {service} service((; page them first for incidents))", "Owner of {service}: {person} ({team} team)",
                "Talk to {person} about anything in {service}((, they're the first contact on incidents))", "{service} belongs to the {team} team, {person} is the owner"],
         extra=["backup owner is their lead", "they're in the Lisbon office"],
         queries=["who is responsible for {service}", "who should I contact first when {service} breaks"]),
    dict(id="timeout", key=["service", "service2"], slots={"ms": ["250", "500", "800", "1000", "2000", "3000", "5000"], "n": ["2", "3", "5", "no"]},
         forms=["Requests from {service} to {service2} time out after {ms} ms((, retried {n} times))", "{service} -> {service2}: {ms}ms timeout, {n} retries",
                "((With {n} retries, )){service} gives up on {service2} after {ms} ms", "The {service} client for {service2} has a {ms} ms deadline((; {n} retries))"],
         extra=["backoff is exponential", "set in the shared client config"],
         queries=["how long does {service} wait for {service2} before giving up", "timeout and retry policy for calls from {service} to {service2}"]),
    dict(id="flag", key=["service", "feature"], slots={"env": ENVS, "owner": PEOPLE},
         forms=["The {service}.{feature} feature flag is on in {env} only((, owned by {owner}))", "{feature} in {service} is gated by a flag, enabled just in {env}",
                "Flag {service}.{feature}: {env} only((; ask {owner} before flipping it))", "Only {env} has {feature} switched on for {service}"],
         extra=["it defaults to off", "the flag is read at startup"],
         queries=["where is the {feature} flag for {service} enabled", "in which environment is {service}'s {feature} turned on"]),
    dict(id="cron", key=["service", "job"], slots={"when": [{"v": "every night at 02:00 UTC", "cron": "0 2 * * *"}, {"v": "hourly", "cron": "0 * * * *"},
                                                          {"v": "every 15 minutes", "cron": "*/15 * * * *"}, {"v": "on Sundays at 04:30", "cron": "30 4 * * 0"},
                                                          {"v": "on weekdays at 06:00", "cron": "0 6 * * 1-5"}]},
         forms=["The {job} job for {service} runs {when}((, cron `{when.cron}`))", "{service} {job}: scheduled {when}",
                "((Cron `{when.cron}`: )){service}'s {job} runs {when}", "We run {service}'s {job} {when}"],
         extra=["it is idempotent", "failures alert the owner"],
         queries=["when does {service}'s {job} job run", "schedule of the {job} task in {service}"]),
    dict(id="bucket", key=["service", "what"], slots={"region": REGIONS, "bucket": "bucket"},
         forms=["{service} stores {what} in the S3 bucket {bucket}((, region {region}))", "{What} for {service} live in s3://{bucket} ({region})",
                "((In {region}, ))the {bucket} bucket holds {service}'s {what}", "Bucket for {service} {what}: {bucket}"],
         extra=["objects expire after 90 days", "versioning is on"],
         queries=["where does {service} keep its {what}", "which S3 location has the {what} of {service}"]),
    dict(id="precommit", key=["repo"], slots={"cmd": ["make lint", "just check", "npm run lint", "cargo clippy -- -D warnings", "pre-commit run -a", "ruff check ."],
                                              "tool": ["clippy", "eslint", "ruff", "golangci-lint", "ktlint", "mypy"]},
         forms=["In the {repo} repo, run `{cmd}` before pushing((; CI fails on {tool} warnings))", "{repo}: `{cmd}` before every push, {tool} warnings break CI",
                "((CI in {repo} treats {tool} warnings as errors, so ))run `{cmd}` first", "Before pushing to {repo}, `{cmd}`((. {tool} is strict there))"],
         extra=["the hook is optional but saves a CI round", "formatting is checked too"],
         queries=["what should I run before pushing to {repo}", "which check command does {repo} expect locally"]),
    dict(id="pin", key=["repo", "tool"], slots={"ver": ["1.4.2", "2.0.1", "0.9.7", "3.1.0", "5.2.3", "1.12.0"],
                                                "why": ["the next version breaks the build", "the licence changed in the next major", "newer ones need glibc 2.35",
                                                        "the resolver regressed after that release", "the plugin API changed"]},
         forms=["{repo} pins {tool} to {ver} because {why}", "{tool} is pinned at {ver} in {repo}((; {why}))",
                "((Because {why}, )){repo} stays on {tool} {ver}", "Keep {tool} at {ver} for {repo}((, since {why}))"],
         extra=["revisit next quarter", "there's an issue tracking it"],
         queries=["which version of {tool} does {repo} lock and why", "why is {tool} held back in {repo}"]),
    dict(id="loglevel", key=["service", "env"], slots={"level": LEVELS, "var": ["RUST_LOG", "LOG_LEVEL", "DEBUG", "APP_LOG"]},
         forms=["{service} logs at {level} in {env}((; set {var}=debug for more))", "Log level for {service} ({env.alt}) is {level}",
                "((Use {var}=debug to see more. )){service} in {env} logs at {level}", "{env} {service}: default log level {level}"],
         extra=["logs ship to Loki", "debug is too noisy for prod"],
         queries=["how verbose are {service}'s logs in {env.alt}", "default log level of {service} on {env}"]),
    dict(id="queue", key=["service", "queue"], slots={"n": ["2", "4", "8", "16", "32"], "dlq": "dlq"},
         forms=["{service} consumes {queue} with {n} workers((; dead letters go to {dlq}))", "The {queue} queue is read by {service} ({n} workers)",
                "(({dlq} gets the dead letters. )){service} runs {n} consumers on {queue}", "{n} {service} workers process {queue}"],
         extra=["messages are acked after commit", "ordering is per key"],
         queries=["how many consumers does {service} run for {queue}", "who processes the {queue} messages and with how many workers"]),
    dict(id="oncall", key=["team"], slots={"day": WEEKDAYS, "person": PEOPLE},
         forms=["The {team} on-call rotates every {day}((; escalation goes to {person}))", "{team} on-call handover is on {day}, escalate to {person}",
                "((Escalations for {team} go to {person}. ))The rota changes on {day}s", "{team} team: on-call swaps {day}, {person} is the escalation point"],
         extra=["handover notes go in the channel", "weekends count double"],
         queries=["when does the {team} on-call rotation change", "who do {team} escalate to and when is handover"]),
    dict(id="alert", key=["service", "metric"], slots={"mins": ["5", "10", "15", "3"]},
         forms=["{service} pages when {metric} exceeds {thr}{metric.unit} for {mins} minutes", "Alert: {service} {metric} > {thr}{metric.unit} for {mins}m pages on-call",
                "On-call gets paged if {service}'s {metric} stays above {thr}{metric.unit} ((for {mins} minutes))", "{service} paging threshold for {metric}: {thr}{metric.unit}((, sustained {mins} min))"],
         extra=["the warning threshold is lower", "tuned after the March incident"],
         queries=["what {metric} level makes {service} page someone", "paging rule for {service} {metric}"]),
    dict(id="testdeps", key=["service"], slots={"dep": ["Postgres and Redis", "a local Kafka", "the S3 mock (MinIO)", "Elasticsearch", "the auth stub", "RabbitMQ"],
                                                "cmd": ["docker compose up -d", "make deps", "just services", "./scripts/dev-up.sh"]},
         forms=["Integration tests for {service} need {dep} running((: `{cmd}`))", "{service} integration tests depend on {dep} (`{cmd}`)",
                "((Start things with `{cmd}`: )){service}'s integration suite needs {dep}", "To run {service} integration tests, bring up {dep} first"],
         extra=["unit tests need nothing", "takes about a minute to start"],
         queries=["what do I need running locally for {service}'s integration tests", "dependencies of the {service} integration suite"]),
    dict(id="convention", key=["person", "conv"], slots={"lang": LANGS},
         forms=["{person} wants {conv} in {lang} code", "In {lang} reviews, {person} asks for {conv}",
                "{person}'s review rule ({conv.topic}): {conv}((, at least in {lang}))", "Expect {person} to insist on {conv}((, especially in {lang}))"],
         extra=["it's in the style guide now", "she'll block the PR otherwise"],
         queries=["what does {person} expect about {conv.topic} in code review", "{person}'s preference on {conv.topic}"]),
    dict(id="release", key=["repo"], slots={"day": WEEKDAYS, "branch": ["main", "release", "trunk", "stable"],
                                            "tag": ["vX.Y.Z", "YYYY.MM.DD", "release-N", "X.Y.Z-rc.N"]},
         forms=["{repo} releases are cut on {day} from {branch}((; tags look like {tag}))", "Release day for {repo} is {day}, off {branch}, tagged {tag}",
                "((Tags follow {tag}. )){repo} ships from {branch} every {day}", "{repo}: {day} releases from {branch}"],
         extra=["freeze the day before", "changelog is generated"],
         queries=["when and from which branch is {repo} released", "{repo} release schedule"]),
    dict(id="secrets", key=["service", "env"], slots={"vault": VAULTS},
         forms=["The {service} {env} secrets live in {vault}((, under {service}/{env.abbr}))", "{service} ({env.alt}) secrets: {vault}",
                "((Path {service}/{env.abbr}: )){vault} holds the {env} secrets for {service}", "Find {service}'s {env} credentials in {vault}"],
         extra=["rotate them every 90 days", "never commit the .env file"],
         queries=["where are {service}'s {env.alt} credentials stored", "secret store for {service} on {env}"]),
    dict(id="apiver", key=["service"], slots={"ver": ["v2", "v3", "v4"], "date": ["30 June", "1 September", "31 December", "15 March"]},
         forms=["{service}'s public API is {ver}((; the previous version is removed on {date}))", "Current {service} API version: {ver}, old one goes away {date}",
                "((The old {service} API dies on {date}. ))Clients should use {ver}", "{service} API: {ver} is current((, deprecation of the last one ends {date}))"],
         extra=["the SDK already defaults to it", "sunset headers are set"],
         queries=["which API version should clients of {service} use", "when does {service}'s old API disappear"]),
    dict(id="cache", key=["service", "cached"], slots={"ttl": TTLS},
         forms=["{service} caches {cached} in Redis for {ttl}", "{Cached} are cached by {service} (Redis, TTL {ttl})",
                "TTL for {service}'s cached {cached}: {ttl}", "((Redis holds them. )){service} keeps {cached} for {ttl}"],
         extra=["flush with the admin endpoint", "keys are prefixed by tenant"],
         queries=["how long does {service} keep {cached} cached", "cache lifetime for {cached} in {service}"]),
    dict(id="runtime", key=["repo"], slots={"rt": "runtime"},
         forms=["{repo} builds with {rt}", "Toolchain for {repo}: {rt}", "{repo} is on {rt}((, see the toolchain file))", "Use {rt} to build {repo}"],
         extra=["the Dockerfile matches", "upgrades go through the platform team"],
         queries=["what language version and package manager does {repo} use", "{repo} toolchain"]),
    dict(id="replicas", key=["service", "env"], slots={"region": REGIONS, "n": ["2", "3", "4", "6", "8", "12"]},
         forms=["{service} in {env} runs {n} replicas in {region}", "{env} {service}: {region}, {n} pods",
                "((Region {region}. )){service} has {n} replicas on {env}", "We deploy {n} copies of {service} to {region} for {env}"],
         extra=["HPA can add more", "one per zone"],
         queries=["how many instances of {service} run in {env.alt} and where", "{service} {env} deployment size and region"]),
    dict(id="workaround", key=["tool", "err"], slots={"fix": FIXES},
         forms=["When {tool} fails with `{err}`, {fix}", "{tool} error `{err}`: {fix}",
                "((Known issue: )){fix} if {tool} says `{err}`", "Fix for `{err}` from {tool}: {fix}"],
         extra=["happens after a rebase", "mostly on CI runners"],
         queries=["what to do when {tool} reports {err}", "workaround for the {tool} `{err}` error"]),
    dict(id="reviewer", key=["path"], slots={"person": PEOPLE},
         forms=["Changes under {path} need a review from {person}", "{person} must approve anything touching {path}",
                "CODEOWNERS: {path} -> {person}", "((Heads-up: )){path} edits require {person}'s review"],
         extra=["even one-liners", "tag them in the PR description"],
         queries=["who has to review edits to {path}", "required approver for {path}"]),
    dict(id="ratelimit", key=["service"], slots={"n": ["50", "100", "600", "1000", "20", "300"], "unit": ["second", "minute", "hour"]},
         forms=["{service} rate-limits clients to {n} requests per {unit}", "Rate limit on {service}: {n}/{unit} per client",
                "((Per client, )){service} allows {n} requests each {unit}", "{service} throttles at {n} req/{unit}"],
         extra=["bursts are allowed", "internal callers are exempt"],
         queries=["how many requests can a client make to {service}", "{service} throttling limit"]),
]

SYNONYMS = [("database", "DB"), ("DB", "database"), ("runs", "executes"), ("prefers", "likes"), ("wants", "asks for"),
            ("production", "prod"), ("staging", "stage"), ("minutes", "min"), ("requests", "reqs"), ("service", "svc"),
            ("needs", "requires"), ("lives", "is kept"), ("stores", "keeps"), ("every", "each"), ("review", "approval"),
            ("pages", "alerts"), ("on-call", "oncall"), ("releases", "deploys"), ("builds with", "uses"), ("time out", "timeout")]
HEDGES = ["I think ", "Note: ", "note: ", "FYI ", "Reminder: ", "As far as I know, ", "(again) ", "Confirmed: ", "TIL ",
          "Still true: ", "Re-noting: ", "IIRC "]
TAILS = [" (checked today)", " iirc", ", as of last sprint", " — double-checked", " (per the runbook)", " again", " btw", "!"]

ALT = re.compile(r"\[([^\[\]]*\|[^\[\]]*)\]")
TOKEN = re.compile(r"\{([A-Za-z_0-9]+)(?:\.([a-z]+))?\}")


def v(x):
    return x if isinstance(x, dict) else {"v": x}


def render(template: str, vals: dict, drop_optional: bool) -> str:
    template = re.sub(r"\(\((.*?)\)\)", "" if drop_optional else r"\1", template)

    def sub(m):
        key, attr = m.group(1), m.group(2)
        low = key[:1].lower() + key[1:]
        val = vals[low]
        out = val["v"] if attr is None else val[attr]
        return out[:1].upper() + out[1:] if key[:1].isupper() else out

    out = TOKEN.sub(sub, template)
    return re.sub(r"\s+([;,.])", r"\1", re.sub(r"  +", " ", out)).strip()


def key_space(t: dict) -> list[tuple]:
    pools = {"service": SERVICES, "env": [e["v"] for e in ENVS], "person": PEOPLE, "bkind": BRANCH_KINDS,
             "service2": SERVICES, "feature": ["dark-mode", "bulk-export", "new-checkout", "smart-retry", "v2-search", "sso",
                                               "beta-dashboard", "async-invoices", "geo-fencing", "push-digest"],
             "job": ["cleanup", "reindex", "digest", "reconcile", "backup", "rollup", "sync", "purge"],
             "what": WHATS, "repo": REPOS, "tool": TOOLS, "queue": QUEUES, "team": TEAMS, "metric": [m["v"] for m in METRICS],
             "conv": [c["v"] for c in CONVENTIONS], "cached": CACHED, "path": PATHS}
    combos = [()]
    for k in t["key"]:
        if t["id"] == "workaround" and k == "err":
            combos = [c + (e,) for c in combos for e in ERRORS[c[0]]]
            continue
        if t["id"] == "pin" and k == "tool":
            combos = [c + (x,) for c in combos for x in TOOLS[:6]]
            continue
        combos = [c + (x,) for c in combos for x in pools[k] if not (k == "service2" and x == c[0])]
    return combos


def fill(t: dict, key: tuple, rng: random.Random) -> dict:
    vals = {}
    for k, x in zip(t["key"], key):
        if k == "env":
            vals[k] = next(e for e in ENVS if e["v"] == x)
        elif k == "metric":
            vals[k] = next(m for m in METRICS if m["v"] == x)
        elif k == "conv":
            vals[k] = next(c for c in CONVENTIONS if c["v"] == x)
        else:
            vals[k] = v(x)
    for k, pool in t["slots"].items():
        if pool == "host":
            vals[k] = v(f"{rng.choice(['db', 'pg', 'sql', 'data'])}-{vals['env']['abbr']}-{rng.randint(1, 9)}")
        elif pool == "bucket":
            vals[k] = v(f"{rng.choice(['acme', 'corp', 'app'])}-{vals['service']['v']}-{re.sub(r'[^a-z]+', '-', vals['what']['v'])}-{rng.randint(10, 99)}")
        elif pool == "dlq":
            vals[k] = v(f"{vals['queue']['v']}.dlq")
        elif pool == "runtime":
            lang, vers, pm = rng.choice(RUNTIMES)
            vals[k] = v(f"{lang} {rng.choice(vers)} and {pm}")
        else:
            vals[k] = v(rng.choice(pool))
    if t["id"] == "alert":
        vals["thr"] = v(rng.choice(vals["metric"]["thr"]))
    return vals


def reword(t: dict, vals: dict, original: str, rng: random.Random, seen: set[str]) -> str:
    for _ in range(50):
        form = rng.choice(t["forms"])
        text = render(form, vals, drop_optional=rng.random() < 0.35)
        ops = rng.sample(["synonym", "hedge", "tail", "case", "punct", "extra", "synonym2"], k=rng.randint(1, 3))
        for op in ops:
            if op.startswith("synonym"):
                options = [(a, b) for a, b in SYNONYMS if re.search(r"\b" + re.escape(a) + r"\b", text)]
                if options:
                    a, b = rng.choice(options)
                    text = re.sub(r"\b" + re.escape(a) + r"\b", b, text, count=1)
            elif op == "hedge":
                text = rng.choice(HEDGES) + (text[:1].lower() + text[1:] if not text[:2].isupper() else text)
            elif op == "tail":
                text = text.rstrip(".") + rng.choice(TAILS)
            elif op == "case":
                text = text.lower() if rng.random() < 0.6 else text[:1].upper() + text[1:]
            elif op == "punct":
                text = text.replace("; ", rng.choice([". ", " - ", ", ", " — "])).replace(": ", rng.choice([" = ", ": ", " - "]), 1)
                if not text.endswith((".", "!", ")")) and rng.random() < 0.5:
                    text += "."
            elif op == "extra":
                text = text.rstrip(".") + rng.choice(["; ", ". ", " — ", ", "]) + rng.choice(t["extra"])
        if text != original and text.lower() not in seen:
            return text
    return text + " (dup)"


def main():
    rng = random.Random(SEED)
    facts = []  # (template, key)
    spaces = {t["id"]: key_space(t) for t in TEMPLATES}
    for space in spaces.values():
        rng.shuffle(space)
    n_facts_needed = None
    # copies: 5-20 for each duplicated original
    copies_per = [rng.randint(5, 20) for _ in range(DUPLICATED)]
    n_facts_needed = TOTAL - sum(copies_per)
    # draw facts round-robin over templates, so each template's subjects stay unique
    ids_in_order = [t["id"] for t in TEMPLATES]
    by_id = {t["id"]: t for t in TEMPLATES}
    while len(facts) < n_facts_needed:
        progressed = False
        for tid in ids_in_order:
            if spaces[tid] and len(facts) < n_facts_needed:
                facts.append((by_id[tid], spaces[tid].pop()))
                progressed = True
        if not progressed:
            raise SystemExit(f"only {len(facts)} distinct subjects; add templates or keys")
    rng.shuffle(facts)
    originals = facts[:ORIGINALS]
    others = facts[ORIGINALS:]
    seen: set[str] = set()
    items = []  # dicts with text, role, sort key
    for i, (t, key) in enumerate(originals):
        vals = fill(t, key, rng)
        text = render(t["forms"][0] if rng.random() < 0.5 else rng.choice(t["forms"]), vals, drop_optional=False)
        seen.add(text.lower())
        item = {"text": text, "role": "original", "template": t["id"], "order": rng.uniform(0.0, 0.55), "vals": vals, "t": t, "copies": []}
        items.append(item)
        if i < DUPLICATED:
            for _ in range(copies_per[i]):
                ctext = reword(t, vals, text, rng, seen)
                seen.add(ctext.lower())
                copy = {"text": ctext, "role": "copy", "template": t["id"], "order": rng.uniform(item["order"] + 1e-6, 1.0), "of": item}
                item["copies"].append(copy)
                items.append(copy)
    for t, key in others:
        vals = fill(t, key, rng)
        form = rng.choice(t["forms"])
        text = render(form, vals, drop_optional=rng.random() < 0.3)
        if rng.random() < 0.15:
            text = rng.choice(HEDGES) + text[:1].lower() + text[1:]
        if text.lower() in seen:
            text = text + " " + rng.choice(["(noted)", "(fyi)", "(from standup)"])
        seen.add(text.lower())
        items.append({"text": text, "role": "other", "template": t["id"], "order": rng.random()})
    items.sort(key=lambda x: x["order"])
    used_ids = set()
    for n, item in enumerate(items):
        item["written"] = n
        while True:
            mid = f"nd-{rng.getrandbits(32):08x}"
            if mid not in used_ids:
                used_ids.add(mid)
                break
        item["id"] = mid
    questions = []
    originals_items = [x for x in items if x["role"] == "original" and x["copies"]]
    originals_items.sort(key=lambda x: x["written"])
    for item in originals_items:
        t, vals = item["t"], item["vals"]
        for qt in rng.sample(t["queries"], k=min(len(t["queries"]), rng.choice([1, 2]))):
            q = render(qt, vals, drop_optional=False)
            questions.append({"id": f"ndq{len(questions) + 1:03d}", "query": q[:1].upper() + q[1:] + ("?" if not q.endswith("?") else ""),
                              "original": item["id"], "copies": [c["id"] for c in item["copies"]], "template": t["id"]})
    out = {
        "generator_version": GENERATOR_VERSION, "seed": SEED,
        "memories": [{"id": x["id"], "text": x["text"], "written": x["written"], "role": x["role"],
                      **({"copy_of": x["of"]["id"]} if x["role"] == "copy" else {})} for x in items],
        "questions": questions,
    }
    path = os.path.join(HERE, "data", "near-duplicates.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False, indent=0, separators=(",", ":"))
        fh.write("\n")
    roles = {r: sum(1 for x in items if x["role"] == r) for r in ("original", "copy", "other")}
    print(f"{os.path.relpath(path)}: {len(items)} memories {roles}, {len(questions)} questions, "
          f"{len(set(x['text'].lower() for x in items))} distinct texts, {os.path.getsize(path) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
