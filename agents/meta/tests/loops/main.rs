//! Integration tests of the Meta-Agent over the real agents (memory, Hindsight, notes, context)
//! on real SQLite in temporary data dirs, running real `python3 -m unittest` projects the tests
//! write: command-driven success and escalation, learning through Hindsight and notes, the
//! TEST timeout and cancellation killing the whole process group, restarts, bad input and
//! tenancy.

mod client;
mod command;
mod lifecycle;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_context::{ContextArchitect, ContextConfig};
use aeterna_hindsight::{HindsightConfig, HindsightService};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Claim, Grants, Identity, MemoryConfig, MemoryService};
use aeterna_meta::{CommandConfig, LoopRecord, MetaConfig, MetaService};
use aeterna_notes::{NotesConfig, NotesService};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Every agent over one data dir.
pub struct Agents {
    pub memory: Arc<MemoryService>,
    pub hindsight: Arc<HindsightService>,
    pub notes: Arc<NotesService>,
    pub meta: Arc<MetaService>,
}

impl Agents {
    pub async fn open(dir: &Path, config: MetaConfig) -> Agents {
        let memory = aeterna_testkit::profile::open_memory(
            dir,
            MemoryConfig::default(),
            Arc::new(HashingEmbedder::default()),
        )
        .await
        .expect("open memory");
        let memory = Arc::new(memory);
        let hindsight = Arc::new(
            HindsightService::new(memory.clone(), HindsightConfig::default())
                .expect("start hindsight"),
        );
        let mut notes_config = NotesConfig::default();
        notes_config.distill.threshold = 0;
        let notes = NotesService::start(notes_config, memory.clone()).expect("start notes");
        let context =
            ContextArchitect::start(memory.clone(), ContextConfig::default()).expect("context");
        let meta = MetaService::start(
            config,
            memory.clone(),
            hindsight.clone(),
            notes.clone(),
            context,
            None,
        )
        .expect("start meta");
        Agents {
            memory,
            hindsight,
            notes,
            meta,
        }
    }

    /// The server's shutdown order: loops, trajectories, memory.
    pub async fn close(self) {
        self.meta.shutdown().await;
        self.notes.shutdown().await;
        self.memory.flush().await.expect("flush memory");
    }
}

pub fn alice() -> Identity {
    Identity {
        tenant_id: "acme".into(),
        user_id: Some("alice".into()),
        project_id: Some("calc".into()),
        ..Identity::default()
    }
}

pub fn mallory() -> Identity {
    Identity {
        tenant_id: "evil".into(),
        project_id: Some("calc".into()),
        ..Identity::default()
    }
}

/// The operator's configuration: the allowed commands, rooted at `root`.
pub fn config(root: &Path) -> MetaConfig {
    let mut commands = BTreeMap::new();
    let mut add = |name: &str, argv: &[&str]| {
        commands.insert(
            name.to_owned(),
            CommandConfig {
                argv: argv.iter().map(|a| a.to_string()).collect(),
            },
        );
    };
    add("py-test", &["python3", "-m", "unittest", "-v", "test_calc"]);
    add("py-build", &["python3", "gate.py"]);
    add("py-hang", &["python3", "-m", "unittest", "-v", "test_hang"]);
    add("true", &["true"]);
    MetaConfig {
        allowed_roots: vec![root.to_owned()],
        commands,
        ..MetaConfig::default()
    }
}

/// A tiny Python project: `calc.add` subtracts (the bug), a unittest that catches it, a
/// `gate.py` build step that waits for `go-<n>` before its n-th run (so a test can change
/// the code between iterations), and a test that hangs after recording its processes.
pub fn python_project(root: &Path) -> PathBuf {
    let dir = root.join("calc");
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "calc.py", BUGGY);
    write(
        &dir,
        "test_calc.py",
        "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n\nif __name__ == \
         \"__main__\":\n    unittest.main()\n",
    );
    write(
        &dir,
        "gate.py",
        "import os, time\nn = len(open('builds.log').read().splitlines()) + 1 if \
         os.path.exists('builds.log') else 1\nopen('builds.log', 'a').write('build\\n')\n\
         deadline = time.time() + 60\nwhile not os.path.exists('go-%d' % n) and time.time() < \
         deadline:\n    time.sleep(0.02)\nprint('built', n)\n",
    );
    write(
        &dir,
        "test_hang.py",
        "import os, subprocess, time, unittest\n\n\nclass HangTest(unittest.TestCase):\n    \
         def test_hangs(self):\n        child = subprocess.Popen(['sleep', '300'])\n        \
         with open('pids.tmp', 'w') as f:\n            f.write('%d %d %d' % (os.getpid(), \
         os.getpgid(0), child.pid))\n        os.rename('pids.tmp', 'pids')\n        \
         time.sleep(300)\n",
    );
    dir
}

pub const BUGGY: &str = "def add(a, b):\n    return a - b\n";
/// A different size from [`BUGGY`], so Python never takes the stale bytecode for it.
pub const FIXED: &str = "def add(a, b):\n    return a + b  # fixed\n";

pub fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// The real output of the project's failing test run.
pub fn failing_output(dir: &Path) -> String {
    let out = std::process::Command::new("python3")
        .args(["-m", "unittest", "-v", "test_calc"])
        .current_dir(dir)
        .output()
        .expect("python3");
    assert!(!out.status.success(), "the buggy project fails its test");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Waits (through `MetaService::wait`) until `done` holds for the loop, for at most 90 s.
pub async fn wait_until(
    meta: &MetaService,
    who: &Identity,
    id: Uuid,
    done: impl Fn(&LoopRecord) -> bool,
) -> LoopRecord {
    let started = Instant::now();
    loop {
        let record = meta.status(who, id).await.expect("status");
        if done(&record) {
            return record;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the loop never reached the expected state: {record:#?}"
        );
        let _ = meta
            .wait(
                who,
                id,
                Duration::from_millis(200),
                &CancellationToken::new(),
                |_| async {},
            )
            .await;
    }
}

pub async fn wait_final(meta: &MetaService, who: &Identity, id: Uuid) -> LoopRecord {
    wait_until(meta, who, id, |r| r.state.is_final()).await
}

/// Waits for `path` to appear (for at most 30 s).
pub async fn wait_for_file(path: &Path) -> String {
    let started = Instant::now();
    while !path.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::read_to_string(path).unwrap()
}

/// Processes alive in process group `pgid` (zombies are dead: only their exit status is left).
pub fn alive_in_group(pgid: i32) -> Vec<i32> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            alive.push(pid);
        }
    }
    alive
}

/// Waits (at most 10 s) for every process of the group to be gone.
pub async fn group_gone(pgid: i32) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if alive_in_group(pgid).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
