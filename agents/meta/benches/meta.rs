//! Meta-Agent benchmarks (a bench binary printing percentiles; `cargo bench -p aeterna-meta`):
//!
//! * `meta_loop_step` IMPROVE (client-driven) with 10k Hindsight signatures stored: a failing
//!   TEST report → signatures, Hindsight query, decision, trajectory event, notes, context,
//!   SQLite save (bar: p95 ≤ 20 ms);
//! * loop overhead per iteration (command-driven, trivial commands `true`/`false`): the wall
//!   time of a loop minus its commands' own run time (bar: ≤ 50 ms per iteration).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_context::{ContextArchitect, ContextConfig};
use aeterna_hindsight::{
    CaptureRequest, ErrorSignature, HindsightConfig, HindsightService, ResolveRequest, extract,
};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, MemoryConfig, MemoryService};
use aeterna_meta::{
    CommandConfig, CommandsRequest, LoopState, MetaConfig, MetaService, Phase, StartRequest,
    StepRequest,
};
use aeterna_notes::{NotesConfig, NotesService};
use tokio_util::sync::CancellationToken;

const STORED: usize = 10_000;
const SAMPLES: usize = 300;

const OUTPUTS: [&str; 6] = [
    "test_add (test_calc.CalcTest.test_add) ... FAIL\n\n======================================================================\nFAIL: test_add (test_calc.CalcTest.test_add)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/work/calc/test_calc.py\", line 8, in test_add\n    self.assertEqual(add(1, 2), 3)\nAssertionError: -1 != 3\n\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nFAILED (failures=1)\n",
    "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n  |\n3 |     \"x\"\n  |     ^^^ expected `u32`, found `&str`\n",
    "Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n    import requests\nModuleNotFoundError: No module named 'requests'\n",
    "error[E0382]: borrow of moved value: `v`\n --> src/main.rs:4:20\n",
    "TypeError: Cannot read properties of undefined (reading 'map')\n    at render (/app/src/list.js:12:18)\n",
    "./main.go:7:2: undefined: fmt.Printl\n",
];

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)];
    println!(
        "{label}: n={} p50={:.2?} p95={:.2?} p99={:.2?} max={:.2?}",
        samples.len(),
        at(0.50),
        at(0.95),
        at(0.99),
        samples[samples.len() - 1]
    );
}

fn synthetic(base: &[ErrorSignature]) -> Vec<ErrorSignature> {
    let words = [
        "value", "borrow", "module", "index", "parser", "token", "missing", "expected", "found",
        "closure", "lifetime", "import", "callback", "buffer", "overflow", "timeout",
    ];
    (0..STORED)
        .map(|i| {
            let mut s = base[i % base.len()].clone();
            if i % 4 != 0 {
                s.error_type = format!("{}-{}", s.error_type, i / base.len());
            }
            let a = words[(i * 7) % words.len()];
            let b = words[(i * 13 + 5) % words.len()];
            s.message_pattern = format!("{} {a} {b} variant{i}", s.message_pattern);
            s
        })
        .collect()
}

struct Agents {
    meta: Arc<MetaService>,
    notes: Arc<NotesService>,
}

async fn open(dir: &Path, root: &Path, who: &Identity) -> Agents {
    let memory = Arc::new(
        MemoryService::open_embedded(
            dir,
            MemoryConfig::default(),
            Arc::new(HashingEmbedder::default()),
        )
        .await
        .expect("memory"),
    );
    let hindsight = Arc::new(
        HindsightService::new(memory.clone(), HindsightConfig::default()).expect("hindsight"),
    );
    let mut base = Vec::new();
    for output in OUTPUTS {
        let captured = hindsight
            .capture(
                who,
                CaptureRequest {
                    error_text: output.into(),
                    layer: None,
                },
            )
            .await
            .expect("capture");
        for signature in captured.signatures {
            hindsight
                .resolve(
                    who,
                    ResolveRequest {
                        signature_id: Some(signature.signature_id),
                        description: format!("the fix for {}", signature.error_type),
                        ..ResolveRequest::default()
                    },
                )
                .await
                .expect("resolve");
        }
        base.extend(extract(output));
    }
    let started = Instant::now();
    for batch in synthetic(&base).chunks(500) {
        hindsight
            .capture_signatures(who, None, batch.to_vec())
            .await
            .expect("store");
    }
    println!("stored {STORED} signatures in {:?}", started.elapsed());
    let notes = NotesService::start(NotesConfig::default(), memory.clone()).expect("notes");
    let context = ContextArchitect::start(memory.clone(), ContextConfig::default()).expect("ctx");
    let mut commands = BTreeMap::new();
    for name in ["true", "false"] {
        commands.insert(
            name.to_owned(),
            CommandConfig {
                argv: vec![name.to_owned()],
            },
        );
    }
    let config = MetaConfig {
        max_active_loops_per_tenant: 10_000,
        allowed_roots: vec![root.to_owned()],
        commands,
        ..MetaConfig::default()
    };
    let meta =
        MetaService::start(config, memory, hindsight, notes.clone(), context, None).expect("meta");
    Agents { meta, notes }
}

async fn improve_step(agents: &Agents, who: &Identity) {
    let mut samples = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES + 20 {
        let started = agents
            .meta
            .start_loop(
                who,
                StartRequest {
                    task: "make the calculator's tests pass".into(),
                    ..StartRequest::default()
                },
            )
            .await
            .expect("start");
        let id = started.record.loop_id;
        let request = StepRequest {
            loop_id: id,
            phase: Phase::Test,
            success: false,
            output: OUTPUTS[i % OUTPUTS.len()].into(),
            duration_ms: 30,
            failing_tests: Vec::new(),
            notes: None,
            tokens_used: 0,
        };
        let timer = Instant::now();
        let answer = agents.meta.step(who, request).await.expect("step");
        let elapsed = timer.elapsed();
        assert!(answer.record.last_improve.is_some());
        if i >= 20 {
            samples.push(elapsed);
        }
        agents.meta.cancel(who, id).await.expect("cancel");
    }
    percentiles(
        "meta_loop_step IMPROVE (client-driven, 10k signatures stored)",
        samples,
    );
}

async fn loop_overhead(agents: &Agents, who: &Identity, root: &Path, test: &str, runs: usize) {
    let mut per_iteration = Vec::with_capacity(runs);
    let mut state = None;
    for _ in 0..runs {
        let timer = Instant::now();
        let started = agents
            .meta
            .start_loop(
                who,
                StartRequest {
                    task: "trivial commands".into(),
                    commands: Some(CommandsRequest {
                        build: Some("true".into()),
                        test: test.into(),
                        working_dir: root.display().to_string(),
                    }),
                    ..StartRequest::default()
                },
            )
            .await
            .expect("start");
        let id = started.record.loop_id;
        let record = loop {
            let record = agents
                .meta
                .wait(
                    who,
                    id,
                    Duration::from_secs(10),
                    &CancellationToken::new(),
                    |_| async {},
                )
                .await
                .expect("wait");
            if record.state.is_final() {
                break record;
            }
        };
        let wall = timer.elapsed();
        // The commands' own time: BUILD and TEST of the last iteration, as measured by the
        // runner (spawn to exit), times the iterations.
        let command_ms = record.last_build.as_ref().map_or(0, |b| b.duration_ms)
            + record.last_test.as_ref().map_or(0, |t| t.duration_ms);
        let commands = Duration::from_millis(command_ms * u64::from(record.iteration));
        per_iteration.push(wall.saturating_sub(commands) / record.iteration);
        state = Some((record.state, record.iteration));
    }
    let (state, iterations) = state.unwrap();
    percentiles(
        &format!(
            "loop overhead per iteration (build `true`, test `{test}`: {} after {iterations} iteration(s))",
            state.as_str()
        ),
        per_iteration,
    );
    assert!(matches!(state, LoopState::Succeeded | LoopState::Escalated));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let who = Identity {
        tenant_id: "bench".into(),
        project_id: Some("calc".into()),
        ..Identity::default()
    };
    runtime.block_on(async {
        let agents = open(data.path(), root.path(), &who).await;
        improve_step(&agents, &who).await;
        loop_overhead(&agents, &who, root.path(), "true", 50).await;
        loop_overhead(&agents, &who, root.path(), "false", 30).await;
        agents.meta.shutdown().await;
        agents.notes.shutdown().await;
    });
}
