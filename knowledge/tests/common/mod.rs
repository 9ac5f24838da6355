//! Items the knowledge suites share.

use aeterna_knowledge::{ItemType, KnowledgeItem};
use aeterna_memory::Layer;

/// A lesson of team `core`.
pub fn lesson(id: &str, body: &str) -> KnowledgeItem {
    KnowledgeItem::new(
        id,
        ItemType::Lesson,
        format!("Lesson {id}"),
        Layer::Team,
        Some("core".into()),
        body,
    )
}
