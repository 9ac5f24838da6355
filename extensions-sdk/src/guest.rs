//! Adapts an [`Extension`] to the generated `Guest` trait, which is what the component exports.

use std::marker::PhantomData;

use crate::bindings::Guest;
use crate::{Attribute, ExtError, Extension, Message, Registration, Tag};

/// The type [`export_extension!`](crate::export_extension) exports: `Exports<YourExtension>`.
pub struct Exports<E>(PhantomData<E>);

impl<E: Extension> Guest for Exports<E> {
    fn register() -> Registration {
        E::register()
    }

    fn on_input_messages(messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        E::on_input_messages(messages)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        E::on_plain_text(text)
    }

    fn on_tag(
        tag: String,
        attributes: Vec<Attribute>,
        content: String,
    ) -> Result<String, ExtError> {
        E::on_tag(Tag {
            name: tag,
            attributes,
            content,
        })
    }

    fn on_llm_output(text: String) -> Result<String, ExtError> {
        E::on_llm_output(text)
    }
}
