//! Durable team knowledge as reviewed files in git.
//!
//! Decisions (ADRs), policies, patterns, specs, and the lessons and notes the agents learn are
//! [`KnowledgeItem`]s: Markdown files with YAML front matter ([`item`]) that a person can review
//! in a pull request. A [`KnowledgeRepo`] ([`repo`]) keeps them in a git repository, one commit
//! per write, reads at the tip of a protected branch, and proposals on branches of their own.
//! [`import`] turns what teams already wrote (AGENTS.md, CLAUDE.md, rules, ADRs) into items;
//! [`export`] puts what is in force into the files agents already read: `AGENTS.md`,
//! `CLAUDE.md` and Agent Skills folders; [`sync`] keeps memory in line with the branch, so
//! search, context assembly and Hindsight find what the repository holds, and
//! [`KnowledgeService`] runs it for the repositories of `[knowledge]`. The other way,
//! [`capture`] turns what the agents learn (promoted fixes, distilled notes) into proposals
//! for review, by each repository's rules.
//!
//! Start reading at [`item::KnowledgeItem::parse`] and [`repo::KnowledgeRepo::commit`].

pub mod capture;
pub mod config;
pub mod error;
pub mod export;
pub mod import;
pub mod item;
pub mod repo;
pub mod service;
pub mod sync;
pub mod tools;

pub use config::{CaptureRules, KnowledgeConfig, RepositoryConfig};
pub use error::{KnowledgeError, Result};
pub use item::{FrontMatter, ItemType, KnowledgeItem, Source, Status};
pub use repo::{Author, Change, KnowledgeRepo, Limits, Snapshot};
pub use service::{KnowledgeService, RepositoryStatus};
