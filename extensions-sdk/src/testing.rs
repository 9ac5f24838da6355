//! An in-memory stand-in for the host, for native unit tests (`cargo test`).
//!
//! [`TestHost`] holds what the real host provides — config, session, tools, state, the log — and
//! runs your callbacks the way the host does:
//!
//! * each callback is a transaction: its state writes are committed only if it returns `Ok`;
//! * state has the host's quota semantics: 1 MiB of key + value bytes (configurable with
//!   [`TestHost::with_quota_bytes`]), least-recently-used keys evicted on a `set` past the quota
//!   (reads and writes both count as use), `quota-exceeded` for a single key + value larger than
//!   the quota, `invalid-key` for empty keys or keys over 1 KiB;
//! * the hook helpers ([`TestHost::plain_text`] and friends) call [`Extension::register`] first
//!   and refuse to call a hook the registration does not declare, as the host would never call
//!   it;
//! * [`TestHost::register`] runs as the host's load does: config is available, the session is
//!   empty, there are no tools, and touching state fails (the host traps).
//!
//! ```
//! use aeterna_extension_sdk::{state, testing::TestHost, ExtError};
//!
//! let host = TestHost::new();
//! host.call(|| state::set("kept", b"yes").map_err(ExtError::from)).unwrap();
//! let failed: Result<(), ExtError> = host.call(|| {
//!     state::set("dropped", b"no")?;
//!     Err(ExtError::invalid_input("changed my mind"))
//! });
//! assert!(failed.is_err());
//! assert_eq!(host.state("kept").as_deref(), Some(&b"yes"[..]));
//! assert_eq!(host.state("dropped"), None);
//! ```

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::sys::SetRefused;
use crate::{
    ExtError, Extension, Hook, LogLevel, Message, QuotaUsage, Registration, SessionInfo, Tag,
    ToolDefinition, state::StateError,
};

/// The host's default state quota: 1 MiB of key + value bytes per extension.
pub const DEFAULT_QUOTA_BYTES: u64 = 1 << 20;
/// The longest key the host accepts, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// One line the extension logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its severity.
    pub level: LogLevel,
    /// The text.
    pub message: String,
}

/// An in-memory host for native tests. See the [module docs](self).
pub struct TestHost {
    inner: RefCell<Inner>,
}

struct Inner {
    state: MemoryState,
    session: SessionInfo,
    tools: Vec<ToolDefinition>,
    config: Vec<(String, String)>,
    logs: Vec<LogRecord>,
}

impl Default for TestHost {
    fn default() -> Self {
        Self::new()
    }
}

impl TestHost {
    /// A host with no config, no tools, empty state, the default quota, and the session
    /// `test-tenant` / `test-session`.
    pub fn new() -> Self {
        TestHost {
            inner: RefCell::new(Inner {
                state: MemoryState::new(DEFAULT_QUOTA_BYTES),
                session: SessionInfo {
                    tenant_id: "test-tenant".to_owned(),
                    session_id: "test-session".to_owned(),
                    user_id: None,
                    project_id: None,
                },
                tools: Vec::new(),
                config: Vec::new(),
                logs: Vec::new(),
            }),
        }
    }

    /// Sets a `[config]` entry. Give non-string TOML values as the host does, as JSON text:
    /// `with_config("max_tokens", "2000")`, `with_config("rules", r#"["a","b"]"#)`.
    pub fn with_config(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        {
            let mut inner = self.inner.borrow_mut();
            let (key, value) = (key.into(), value.into());
            inner.config.retain(|(k, _)| *k != key);
            inner.config.push((key, value));
        }
        self
    }

    /// Sets the session the callbacks see.
    pub fn with_session(self, session: SessionInfo) -> Self {
        self.inner.borrow_mut().session = session;
        self
    }

    /// Sets the agent's tool list the callbacks see.
    pub fn with_tools(self, tools: Vec<ToolDefinition>) -> Self {
        self.inner.borrow_mut().tools = tools;
        self
    }

    /// Changes the state quota (the operator may configure it), keeping the current state.
    pub fn with_quota_bytes(self, quota_bytes: u64) -> Self {
        self.inner.borrow_mut().state.quota = quota_bytes;
        self
    }

    /// Runs `callback` as the host runs a callback: the SDK's imports reach this host, and state
    /// writes are committed only if it returns `Ok`.
    ///
    /// # Panics
    ///
    /// If called from inside another `call` on the same thread (callbacks do not nest).
    pub fn call<T>(&self, callback: impl FnOnce() -> Result<T, ExtError>) -> Result<T, ExtError> {
        self.run(callback, Mode::Callback)
    }

    /// Calls [`Extension::register`] as the host does at load time, and checks the registration
    /// the way the host will.
    ///
    /// # Panics
    ///
    /// If the registration would be refused by the host: an invalid id, no hooks, tags without
    /// the `tag` hook (or the reverse), an invalid tag name, or a tool with an empty name or an
    /// input schema that is not a JSON Schema.
    pub fn register<E: Extension>(&self) -> Registration {
        let registration = self
            .run(|| Ok(E::register()), Mode::Register)
            .expect("register cannot fail");
        if let Err(problem) = check_registration(&registration) {
            panic!("the host would refuse this registration: {problem}");
        }
        registration
    }

    /// Runs [`Extension::on_input_messages`] (after checking the hook is declared).
    pub fn input_messages<E: Extension>(
        &self,
        messages: Vec<Message>,
    ) -> Result<Vec<Message>, ExtError> {
        self.expect_hook::<E>(Hook::InputMessages, "on_input_messages");
        self.call(|| E::on_input_messages(messages))
    }

    /// Runs [`Extension::on_plain_text`] (after checking the hook is declared).
    pub fn plain_text<E: Extension>(&self, text: impl Into<String>) -> Result<String, ExtError> {
        self.expect_hook::<E>(Hook::PlainText, "on_plain_text");
        let text = text.into();
        self.call(|| E::on_plain_text(text))
    }

    /// Runs [`Extension::on_tag`] (after checking the tag name is declared).
    pub fn tag<E: Extension>(&self, tag: Tag) -> Result<String, ExtError> {
        let registration = self.expect_hook::<E>(Hook::Tag, "on_tag");
        assert!(
            registration.tags.contains(&tag.name),
            "`{}` does not declare the tag `{}` (it declares {:?}); the host would never hand \
             it to on_tag",
            registration.id,
            tag.name,
            registration.tags
        );
        self.call(|| E::on_tag(tag))
    }

    /// Runs [`Extension::on_llm_output`] (after checking the hook is declared).
    pub fn llm_output<E: Extension>(&self, text: impl Into<String>) -> Result<String, ExtError> {
        self.expect_hook::<E>(Hook::LlmOutput, "on_llm_output");
        let text = text.into();
        self.call(|| E::on_llm_output(text))
    }

    /// The committed bytes under `key` (without counting as a use for eviction).
    pub fn state(&self, key: &str) -> Option<Vec<u8>> {
        self.inner.borrow().state.peek(key).map(<[u8]>::to_vec)
    }

    /// The committed JSON under `key`, decoded as `T`.
    ///
    /// # Panics
    ///
    /// If the value is not valid JSON for `T` (a test failure worth seeing).
    pub fn state_json<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let bytes = self.state(key)?;
        match serde_json::from_slice(&bytes) {
            Ok(value) => Some(value),
            Err(error) => panic!(
                "state key `{key}` does not hold JSON for {}: {error}; it holds {:?}",
                std::any::type_name::<T>(),
                String::from_utf8_lossy(&bytes)
            ),
        }
    }

    /// The committed keys, sorted.
    pub fn state_keys(&self) -> Vec<String> {
        let mut keys = self.inner.borrow().state.keys();
        keys.sort();
        keys
    }

    /// Committed usage against the quota.
    pub fn usage(&self) -> QuotaUsage {
        self.inner.borrow().state.usage()
    }

    /// Seeds state outside any callback, with the same rules as a callback's `set`.
    pub fn set_state(&self, key: &str, value: impl AsRef<[u8]>) -> Result<(), StateError> {
        let value = value.as_ref();
        self.inner
            .borrow_mut()
            .state
            .set(key, value)
            .map_err(|refused| refused.into_error(key, value.len()))
    }

    /// Seeds state with JSON outside any callback (see [`TestHost::set_state`]).
    pub fn set_state_json<T: Serialize + ?Sized>(
        &self,
        key: &str,
        value: &T,
    ) -> Result<(), StateError> {
        let bytes = serde_json::to_vec(value).map_err(|error| StateError::Encode {
            key: key.to_owned(),
            message: error.to_string(),
        })?;
        self.set_state(key, bytes)
    }

    /// Every line logged so far, oldest first (lines logged by failed callbacks included).
    pub fn logs(&self) -> Vec<LogRecord> {
        self.inner.borrow().logs.clone()
    }

    /// Returns and forgets the lines logged so far.
    pub fn take_logs(&self) -> Vec<LogRecord> {
        std::mem::take(&mut self.inner.borrow_mut().logs)
    }

    fn expect_hook<E: Extension>(&self, hook: Hook, method: &str) -> Registration {
        let registration = self.register::<E>();
        assert!(
            registration.handles(hook),
            "`{}` does not declare the {} hook in register() (it declares {:?}); the host would \
             never call {method}",
            registration.id,
            hook.as_str(),
            registration
                .hooks
                .iter()
                .map(|h| h.as_str())
                .collect::<Vec<_>>()
        );
        registration
    }

    fn run<T>(
        &self,
        callback: impl FnOnce() -> Result<T, ExtError>,
        mode: Mode,
    ) -> Result<T, ExtError> {
        let active = {
            let inner = self.inner.borrow();
            match mode {
                Mode::Callback => Active {
                    state: Some(inner.state.clone()),
                    session: inner.session.clone(),
                    tools: inner.tools.clone(),
                    config: inner.config.clone(),
                    logs: Vec::new(),
                },
                // As in the host: register() runs outside any session, without state.
                Mode::Register => Active {
                    state: None,
                    session: SessionInfo {
                        tenant_id: String::new(),
                        session_id: String::new(),
                        user_id: None,
                        project_id: None,
                    },
                    tools: Vec::new(),
                    config: inner.config.clone(),
                    logs: Vec::new(),
                },
            }
        };
        ACTIVE.with(|slot| {
            let mut slot = slot.borrow_mut();
            assert!(
                slot.is_none(),
                "TestHost::call inside another callback: host callbacks do not nest"
            );
            *slot = Some(active);
        });
        // Uninstalls the callback's context even if the callback panics.
        struct Uninstall;
        impl Drop for Uninstall {
            fn drop(&mut self) {
                ACTIVE.with(|slot| slot.borrow_mut().take());
            }
        }
        let guard = Uninstall;
        let result = callback();
        let active = ACTIVE
            .with(|slot| slot.borrow_mut().take())
            .expect("the callback's context is installed until it returns");
        drop(guard);

        let mut inner = self.inner.borrow_mut();
        inner.logs.extend(active.logs);
        if let (Ok(_), Some(state)) = (&result, active.state) {
            inner.state = state;
        }
        result
    }
}

enum Mode {
    /// A hook: state available, committed if the callback returns `Ok`.
    Callback,
    /// `register()`: no session, no tools, no state.
    Register,
}

/// What a running callback sees through the SDK's imports.
pub(crate) struct Active {
    /// `None` during `register()`.
    state: Option<MemoryState>,
    pub(crate) session: SessionInfo,
    pub(crate) tools: Vec<ToolDefinition>,
    pub(crate) config: Vec<(String, String)>,
    logs: Vec<LogRecord>,
}

impl Active {
    pub(crate) fn state(&mut self) -> &mut MemoryState {
        self.state.as_mut().expect(
            "`state` is not available during register(): the host traps (registration must be \
             side-effect free)",
        )
    }

    pub(crate) fn log(&mut self, level: LogLevel, message: &str) {
        // Visible with `cargo test -- --nocapture`, like the host's log.
        eprintln!("[extension {level:?}] {message}");
        self.logs.push(LogRecord {
            level,
            message: message.to_owned(),
        });
    }
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// Runs `f` on the current callback's context.
///
/// # Panics
///
/// Outside [`TestHost::call`] (or a hook helper): off wasm, the imports have no host otherwise.
pub(crate) fn with_active<R>(import: &str, f: impl FnOnce(&mut Active) -> R) -> R {
    ACTIVE.with(|slot| {
        let mut slot = slot.borrow_mut();
        let Some(active) = slot.as_mut() else {
            panic!(
                "aeterna_extension_sdk: `{import}` was called outside a host callback. In native \
                 tests, run the callback through `testing::TestHost` (`host.call(|| …)` or \
                 `host.plain_text::<MyExtension>(…)`)"
            );
        };
        f(active)
    })
}

/// Checks a registration the way the host does when it loads a component (`aeterna-host`'s
/// loader), so that a registration the host would refuse fails the author's tests first.
fn check_registration(registration: &Registration) -> Result<(), String> {
    let id = &registration.id;
    let id_byte = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let valid_id = !id.is_empty()
        && id.len() <= 64
        && id_byte(id.as_bytes()[0])
        && id
            .bytes()
            .skip(1)
            .all(|b| id_byte(b) || b"._-".contains(&b));
    if !valid_id {
        return Err(format!(
            "id `{id}` must match [a-z0-9][a-z0-9._-]* and be at most 64 bytes"
        ));
    }
    if registration.hooks.is_empty() {
        return Err(format!(
            "`{id}` declares no hooks: an extension must handle at least one"
        ));
    }
    if registration.tags.is_empty() == registration.handles(Hook::Tag) {
        return Err(format!(
            "`{id}` declares tags {:?} and hooks {:?}: tags need the tag hook and the tag hook \
             needs tags (use Registration::with_tag)",
            registration.tags,
            registration
                .hooks
                .iter()
                .map(|h| h.as_str())
                .collect::<Vec<_>>()
        ));
    }
    let tag_byte = |b: u8| b.is_ascii_alphanumeric() || b"_.:-".contains(&b);
    if let Some(bad) = registration.tags.iter().find(|tag| {
        tag.is_empty()
            || tag.len() > 64
            || !(tag.as_bytes()[0].is_ascii_alphabetic() || tag.as_bytes()[0] == b'_')
            || !tag.bytes().all(tag_byte)
    }) {
        return Err(format!(
            "`{id}`: tag name {bad:?} must match [A-Za-z_][A-Za-z0-9_.:-]* (at most 64 bytes)"
        ));
    }
    let tools = &registration.tool_config;
    for tool in tools.add.iter().chain(&tools.override_) {
        if tool.name.is_empty() {
            return Err(format!("`{id}`: a tool has an empty name"));
        }
        match serde_json::from_str::<serde_json::Value>(&tool.input_schema) {
            Ok(serde_json::Value::Object(_) | serde_json::Value::Bool(_)) => {}
            Ok(_) => {
                return Err(format!(
                    "`{id}`: the input schema of tool `{}` must be a JSON Schema (an object or \
                     a boolean)",
                    tool.name
                ));
            }
            Err(error) => {
                return Err(format!(
                    "`{id}`: the input schema of tool `{}` is not JSON: {error}",
                    tool.name
                ));
            }
        }
    }
    if tools.remove.iter().any(String::is_empty) {
        return Err(format!("`{id}`: tool-config.remove contains an empty name"));
    }
    Ok(())
}

/// State with the host's quota and eviction rules.
#[derive(Clone)]
pub(crate) struct MemoryState {
    entries: HashMap<String, Entry>,
    used_bytes: u64,
    quota: u64,
    clock: u64,
}

#[derive(Clone)]
struct Entry {
    value: Vec<u8>,
    last_used: u64,
}

impl Entry {
    fn size(&self, key: &str) -> u64 {
        (key.len() + self.value.len()) as u64
    }
}

impl MemoryState {
    fn new(quota: u64) -> Self {
        MemoryState {
            entries: HashMap::new(),
            used_bytes: 0,
            quota,
            clock: 0,
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn peek(&self, key: &str) -> Option<&[u8]> {
        self.entries.get(key).map(|entry| entry.value.as_slice())
    }

    pub(crate) fn get(&mut self, key: &str) -> Option<Vec<u8>> {
        let now = self.tick();
        let entry = self.entries.get_mut(key)?;
        entry.last_used = now;
        Some(entry.value.clone())
    }

    pub(crate) fn set(&mut self, key: &str, value: &[u8]) -> Result<(), SetRefused> {
        if key.is_empty() {
            return Err(SetRefused::InvalidKey("the key is empty".to_owned()));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(SetRefused::InvalidKey(format!(
                "the key is {} bytes long; at most {MAX_KEY_BYTES} are allowed",
                key.len()
            )));
        }
        let needed = (key.len() + value.len()) as u64;
        if needed > self.quota {
            return Err(SetRefused::QuotaExceeded(self.usage()));
        }
        if let Some(old) = self.entries.remove(key) {
            self.used_bytes -= old.size(key);
        }
        while self.used_bytes + needed > self.quota {
            let lru = self
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(k, _)| k.clone())
                .expect("used bytes above zero means some key is stored");
            self.delete(&lru);
        }
        let last_used = self.tick();
        self.used_bytes += needed;
        self.entries.insert(
            key.to_owned(),
            Entry {
                value: value.to_vec(),
                last_used,
            },
        );
        Ok(())
    }

    pub(crate) fn delete(&mut self, key: &str) -> bool {
        match self.entries.remove(key) {
            Some(entry) => {
                self.used_bytes -= entry.size(key);
                true
            }
            None => false,
        }
    }

    pub(crate) fn keys(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.used_bytes = 0;
    }

    pub(crate) fn usage(&self) -> QuotaUsage {
        QuotaUsage {
            used_bytes: self.used_bytes,
            quota_bytes: self.quota,
            keys: self.entries.len() as u32,
        }
    }
}
