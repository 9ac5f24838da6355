//! Write [Aeterna](https://github.com/aeterna-dev/aeterna) extensions in Rust.
//!
//! An extension is a WebAssembly component, built for `wasm32-wasip2`, that transforms what flows
//! between the user, the tools and the LLM. This crate gives you:
//!
//! * the [`Extension`] trait: implement [`Extension::register`] and the hooks you declare; every
//!   other hook is a pass-through;
//! * one macro, [`export_extension!`], that turns your type into the component's exports;
//! * typed access to what the host offers: [`state`] (JSON or raw bytes, under a 1 MiB quota),
//!   [`config`] (the manifest's `[config]` table), [`host::session`], [`host::tools`], and log
//!   macros ([`info!`], [`warn!`], …);
//! * [`testing::TestHost`] (native targets only): an in-memory host so that `cargo test` exercises
//!   your callbacks with the same state semantics as the real one.
//!
//! # Example
//!
//! A complete extension that shouts tool output and counts how often it did so:
//!
//! ```
//! use aeterna_extension_sdk::{export_extension, info, state, config, Extension, ExtError, Hook,
//!     Registration};
//!
//! pub struct Shout;
//!
//! impl Extension for Shout {
//!     fn register() -> Registration {
//!         Registration::new("shout", env!("CARGO_PKG_VERSION"))
//!             .with_priority(10)
//!             .with_hook(Hook::PlainText)
//!     }
//!
//!     fn on_plain_text(text: String) -> Result<String, ExtError> {
//!         // `[config] suffix = "!"` in the manifest; absent means "".
//!         let suffix = config::get("suffix").unwrap_or_default();
//!         let shouted: u64 = state::update_json("shouted", |n: &mut u64| {
//!             *n += 1;
//!             *n
//!         })?;
//!         info!("shouted {shouted} times in this session");
//!         Ok(format!("{}{suffix}", text.to_uppercase()))
//!     }
//! }
//!
//! export_extension!(Shout);
//!
//! // Native unit test against the in-memory host:
//! # fn main() {
//! use aeterna_extension_sdk::testing::TestHost;
//!
//! let host = TestHost::new().with_config("suffix", "!");
//! assert_eq!(host.plain_text::<Shout>("build ok").unwrap(), "BUILD OK!");
//! assert_eq!(host.plain_text::<Shout>("tests ok").unwrap(), "TESTS OK!");
//! assert_eq!(host.state_json::<u64>("shouted"), Some(2));
//! assert!(host.logs().iter().any(|l| l.message == "shouted 2 times in this session"));
//! # }
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2` (with `crate-type = ["cdylib",
//! "rlib"]`); the `.wasm` file is the component the host loads.
//!
//! # The execution model, briefly
//!
//! The host calls [`Extension::register`] once when it loads the component, then only the hooks
//! the registration declares, each in a **fresh instance**: nothing survives in memory between
//! callbacks (the trait's functions take no `self` for that reason). Keep what must persist in
//! [`state`]. State writes are transactional: they are committed only when the callback returns
//! `Ok`. The limits (time, fuel, memory, state quota) are documented in the WIT contract,
//! `wit/extension.wit`.

pub mod config;
mod guest;
pub mod host;
pub mod log;
pub mod state;
mod sys;
mod types;

#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

pub use types::Tag;

/// Bindings generated from `wit/extension.wit`. Prefer the re-exports at the crate root; these are
/// public so that [`export_extension!`] can reach them from your crate.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "extension",
        pub_export_macro: true,
        default_bindings_module: "aeterna_extension_sdk::bindings",
        additional_derives: [PartialEq, Eq],
    });
}

pub use bindings::aeterna::extension::host::{LogLevel, SessionInfo};
pub use bindings::aeterna::extension::state::QuotaUsage;
pub use bindings::aeterna::extension::types::{
    Attribute, ExtError, Hook, Message, Registration, ToolConfig, ToolDefinition,
};

/// An Aeterna extension: a registration plus the hooks it handles.
///
/// Every hook defaults to a pass-through, so implement only those you declare in
/// [`Extension::register`] (the host never calls the others). Functions take no `self`: each
/// callback runs in a fresh instance, so keep what must persist in [`state`].
///
/// Returning `Err` records a fault for this extension: with `failure = "open"` (the default) the
/// host continues the chain with the previous value; with `failure = "closed"` the chain stops.
/// Either way, the callback's state writes are discarded.
pub trait Extension {
    /// Declares the extension: its id, version, priority, hooks, tags, prompt additions and tool
    /// changes. Called once at load; must be cheap and free of side effects.
    fn register() -> Registration;

    /// Transforms the messages about to be sent to the LLM.
    fn on_input_messages(messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        Ok(messages)
    }

    /// Transforms plain text, such as a tool's output, before the LLM sees it.
    fn on_plain_text(text: String) -> Result<String, ExtError> {
        Ok(text)
    }

    /// Replaces a `<tag …>content</tag>` block found in LLM output with the returned text. The
    /// default gives the block back unchanged ([`Tag::to_source`]).
    fn on_tag(tag: Tag) -> Result<String, ExtError> {
        Ok(tag.to_source())
    }

    /// Transforms the LLM's output (after its tag blocks went through [`Extension::on_tag`]).
    fn on_llm_output(text: String) -> Result<String, ExtError> {
        Ok(text)
    }
}

/// Exports a type implementing [`Extension`] as the component's `register` and hooks.
///
/// Use it once, in the crate built as the `cdylib`:
///
/// ```
/// # use aeterna_extension_sdk::{Extension, Hook, Registration};
/// struct Noop;
/// impl Extension for Noop {
///     fn register() -> Registration {
///         Registration::new("noop", "0.1.0").with_hook(Hook::PlainText)
///     }
/// }
/// aeterna_extension_sdk::export_extension!(Noop);
/// ```
///
/// On `wasm32` it emits the component exports; on other targets (your `cargo test` build) it only
/// checks that the type implements [`Extension`].
#[macro_export]
macro_rules! export_extension {
    ($ty:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __AeternaExtensionExports = $crate::__private::Exports<$ty>;
    $crate::bindings::export!(__AeternaExtensionExports with_types_in $crate::bindings);
        };
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = $crate::__private::assert_extension::<$ty>();
    };
}

#[doc(hidden)]
pub mod __private {
    pub use crate::guest::Exports;

    /// Compile-time check used by [`export_extension!`](crate::export_extension) off wasm.
    pub const fn assert_extension<E: crate::Extension>() {}
}
