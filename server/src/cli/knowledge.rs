//! `aeterna knowledge …`: the knowledge repository from the command line (see the
//! `aeterna-knowledge` crate). `export` writes what is in force into AGENTS.md, CLAUDE.md or
//! Agent Skills folders (`--check` for CI); `import` commits what a repository already has
//! (instructions files, rules, ADRs); `list` and `history` read the repository.

use std::path::PathBuf;
use std::process::ExitCode;

use aeterna_knowledge::export::{self, ExportOptions, Format};
use aeterna_knowledge::import::{self, Target};
use aeterna_knowledge::{Author, Change, KnowledgeRepo, Limits};
use aeterna_memory::Layer;
use anyhow::Context;

#[derive(Debug, clap::Subcommand)]
pub enum KnowledgeCommand {
    /// Write the items in force into the files agents read: a section of AGENTS.md or
    /// CLAUDE.md between markers, or one SKILL.md folder per pattern and lesson.
    Export(ExportArgs),
    /// Commit what a repository already has (AGENTS.md, CLAUDE.md, .claude/rules,
    /// .cursor/rules, docs/adr) as knowledge items.
    Import(ImportArgs),
    /// List the items on the branch, and the files that are not valid items.
    List(RepoArgs),
    /// The commits that changed one item, newest first.
    History(HistoryArgs),
}

/// Which knowledge repository, and which branch of it.
#[derive(Debug, Clone, clap::Args)]
pub struct RepoArgs {
    /// The knowledge repository (`import` creates it when missing).
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,
    /// The branch read (the protected branch).
    #[arg(long, value_name = "NAME", default_value = "main")]
    pub branch: String,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// agents-md (DIR/AGENTS.md), claude-md (DIR/CLAUDE.md) or skills (DIR/<name>/SKILL.md,
    /// such as .claude/skills).
    #[arg(long)]
    pub format: Format,
    /// Where the files go.
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
    /// The largest AGENTS.md / CLAUDE.md written, the text outside the section included.
    #[arg(long, value_name = "BYTES", default_value_t = ExportOptions::default().max_bytes)]
    pub max_bytes: usize,
    /// Write nothing; exit 1 when the files are not what an export would write.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The checked-out repository whose files are imported.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub from: PathBuf,
    /// The layer the items belong to: team, org, project or company.
    #[arg(long, default_value = "team")]
    pub layer: Layer,
    /// The layer's scope id (the team id for `team`); none for `company`.
    #[arg(long, value_name = "ID")]
    pub scope: Option<String>,
    /// The commit's author, `Name <email>`.
    #[arg(
        long,
        value_name = "AUTHOR",
        default_value = "Aeterna <aeterna@localhost>"
    )]
    pub author: String,
    /// Say what would be imported; commit nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The item's id.
    pub id: String,
}

pub fn run(command: KnowledgeCommand) -> anyhow::Result<ExitCode> {
    match command {
        KnowledgeCommand::Export(args) => run_export(args),
        KnowledgeCommand::Import(args) => run_import(args),
        KnowledgeCommand::List(args) => run_list(args),
        KnowledgeCommand::History(args) => run_history(args),
    }
}

/// The repository `args` names, which must exist (a mistyped path is not a new repository).
fn open(args: &RepoArgs) -> anyhow::Result<KnowledgeRepo> {
    Ok(KnowledgeRepo::open(
        &args.repo,
        &args.branch,
        Limits::default(),
    )?)
}

/// The repository `args` names, created when missing (the first import).
fn open_or_init(args: &RepoArgs) -> anyhow::Result<KnowledgeRepo> {
    KnowledgeRepo::open_or_init(&args.repo, &args.branch, Limits::default())
        .with_context(|| format!("knowledge repository {}", args.repo.display()))
}

fn run_export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let repo = open(&args.repo)?;
    let snapshot = repo.snapshot()?;
    for problem in &snapshot.problems {
        eprintln!("skipped {}: {}", problem.path, problem.message);
    }
    let items: Vec<_> = snapshot
        .entries
        .into_iter()
        .map(|entry| entry.item)
        .collect();
    let options = ExportOptions {
        max_bytes: args.max_bytes,
    };
    let plan = export::plan(args.format, &items, &args.to, &options)?;
    for reason in &plan.left_out {
        eprintln!("left out {reason}");
    }
    if args.check {
        if plan.is_current() {
            println!("up to date");
            return Ok(ExitCode::SUCCESS);
        }
        for change in &plan.changes {
            println!("stale: {}", change.path.display());
        }
        eprintln!("the exported files are stale; run the same command without --check");
        return Ok(ExitCode::FAILURE);
    }
    plan.apply()?;
    for change in &plan.changes {
        let verb = if change.contents.is_some() {
            "wrote"
        } else {
            "removed"
        };
        println!("{verb} {}", change.path.display());
    }
    if plan.is_current() {
        println!("up to date");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let author = parse_author(&args.author)?;
    let repo = open_or_init(&args.repo)?;
    let target = Target {
        layer: args.layer,
        scope: args.scope,
    };
    let imported = import::scan(&args.from, &target, repo.limits())?;
    for reason in &imported.skipped {
        eprintln!("skipped {reason}");
    }
    for item in &imported.items {
        println!(
            "{} {} ({})",
            item.front.kind,
            item.id(),
            item.front.sources[0].id
        );
    }
    if args.dry_run || imported.items.is_empty() {
        println!("{} item(s) found; nothing committed", imported.items.len());
        return Ok(ExitCode::SUCCESS);
    }
    let count = imported.items.len();
    let message = format!(
        "import: {count} item(s) from {} (aeterna knowledge import)",
        args.from.display()
    );
    let before = repo.tip(repo.branch())?;
    let change = Change {
        put: imported.items,
        remove: Vec::new(),
    };
    let commit = repo.commit(&args.repo.branch, &change, &author, &message)?;
    if before.as_deref() == Some(commit.as_str()) {
        println!("{count} item(s), already in the repository; nothing committed");
    } else {
        println!(
            "committed {count} item(s) to {} as {commit}",
            args.repo.branch
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn run_list(args: RepoArgs) -> anyhow::Result<ExitCode> {
    let repo = open(&args)?;
    let snapshot = repo.snapshot()?;
    for entry in &snapshot.entries {
        let front = &entry.item.front;
        println!(
            "{}\t{}\t{}\t{}",
            front.id,
            front.kind,
            front.status.as_str(),
            front.title
        );
    }
    for problem in &snapshot.problems {
        eprintln!("not an item: {}: {}", problem.path, problem.message);
    }
    Ok(ExitCode::SUCCESS)
}

fn run_history(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let repo = open(&args.repo)?;
    for revision in repo.history(&args.id)? {
        let what = if revision.removed { " (removed)" } else { "" };
        println!(
            "{} {} {}{what}: {}",
            &revision.commit[..12],
            revision.time,
            revision.author,
            revision.message.lines().next().unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `Name <email>` as an [`Author`].
fn parse_author(text: &str) -> anyhow::Result<Author> {
    let parsed = text
        .trim()
        .strip_suffix('>')
        .and_then(|rest| rest.split_once('<'))
        .map(|(name, email)| (name.trim(), email.trim()))
        .filter(|(name, email)| !name.is_empty() && email.contains('@'));
    let Some((name, email)) = parsed else {
        anyhow::bail!("--author `{text}`: write it as `Name <email>`");
    };
    Ok(Author {
        name: name.to_owned(),
        email: email.to_owned(),
    })
}
