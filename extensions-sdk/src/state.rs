//! Key-value state, private to this extension and scoped to the current (tenant, session).
//!
//! * **Quota.** Keys plus values may use 1 MiB per extension (host policy). A [`set`] that would
//!   go past it evicts this extension's least-recently-used keys; a single key and value larger
//!   than the whole quota is refused with [`StateError::QuotaExceeded`].
//! * **Keys** are non-empty and at most 1 KiB ([`StateError::InvalidKey`] otherwise).
//! * **Transactions.** Writes become visible to later callbacks only if the current callback
//!   returns `Ok`; reads within the callback see its own writes.
//!
//! Values are bytes; [`get_json`], [`set_json`] and [`update_json`] store any serde type as JSON.

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::sys::{self, SetRefused};
use crate::{ExtError, QuotaUsage};

/// Why a state operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// The key and value together exceed the whole quota; no eviction could make room.
    QuotaExceeded {
        /// The key that was refused.
        key: String,
        /// Bytes the write needed (key + value).
        needed_bytes: u64,
        /// Usage when the write was refused.
        usage: QuotaUsage,
    },
    /// The key is empty or longer than 1 KiB.
    InvalidKey {
        /// The key that was refused (cut to 64 bytes).
        key: String,
        /// The host's reason.
        reason: String,
    },
    /// The stored value is not valid JSON for the requested type.
    Decode {
        /// The key read.
        key: String,
        /// What serde reported.
        message: String,
    },
    /// The value could not be serialised to JSON.
    Encode {
        /// The key written.
        key: String,
        /// What serde reported.
        message: String,
    },
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::QuotaExceeded {
                key,
                needed_bytes,
                usage,
            } => write!(
                f,
                "state key `{key}`: {needed_bytes} bytes of key and value exceed the whole quota \
                 of {} bytes; store less per key",
                usage.quota_bytes
            ),
            StateError::InvalidKey { key, reason } => {
                write!(f, "state key `{key}` is invalid: {reason}")
            }
            StateError::Decode { key, message } => {
                write!(
                    f,
                    "state key `{key}` does not hold the expected JSON: {message}"
                )
            }
            StateError::Encode { key, message } => {
                write!(
                    f,
                    "state key `{key}`: value cannot be encoded as JSON: {message}"
                )
            }
        }
    }
}

impl std::error::Error for StateError {}

impl From<StateError> for ExtError {
    fn from(error: StateError) -> Self {
        let code = match &error {
            StateError::QuotaExceeded { .. } => "quota-exceeded",
            StateError::InvalidKey { .. } => "invalid-key",
            StateError::Decode { .. } | StateError::Encode { .. } => "invalid-state",
        };
        ExtError::new(code, error.to_string())
    }
}

fn shown_key(key: &str) -> String {
    let mut end = key.len().min(64);
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    key[..end].to_owned()
}

/// The raw bytes under `key`, if any.
pub fn get(key: &str) -> Option<Vec<u8>> {
    sys::state_get(key)
}

/// Stores `value` under `key`, evicting this extension's least-recently-used keys if the quota
/// requires it.
pub fn set(key: &str, value: impl AsRef<[u8]>) -> Result<(), StateError> {
    let value = value.as_ref();
    sys::state_set(key, value).map_err(|refused| refused.into_error(key, value.len()))
}

impl SetRefused {
    pub(crate) fn into_error(self, key: &str, value_len: usize) -> StateError {
        match self {
            SetRefused::QuotaExceeded(usage) => StateError::QuotaExceeded {
                key: shown_key(key),
                needed_bytes: (key.len() + value_len) as u64,
                usage,
            },
            SetRefused::InvalidKey(reason) => StateError::InvalidKey {
                key: shown_key(key),
                reason,
            },
        }
    }
}

/// Removes `key`; returns whether it existed.
pub fn delete(key: &str) -> bool {
    sys::state_delete(key)
}

/// All keys, in no particular order.
pub fn keys() -> Vec<String> {
    sys::state_keys()
}

/// Removes every key of this extension (in this scope).
pub fn clear() {
    sys::state_clear()
}

/// Current usage against the quota.
pub fn usage() -> QuotaUsage {
    sys::state_usage()
}

/// The JSON value under `key`, decoded as `T`; `Ok(None)` if the key is absent.
pub fn get_json<T: DeserializeOwned>(key: &str) -> Result<Option<T>, StateError> {
    match get(key) {
        None => Ok(None),
        Some(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|error| StateError::Decode {
                    key: shown_key(key),
                    message: error.to_string(),
                })
        }
    }
}

/// Stores `value` as JSON under `key` (see [`set`]).
pub fn set_json<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<(), StateError> {
    let bytes = serde_json::to_vec(value).map_err(|error| StateError::Encode {
        key: shown_key(key),
        message: error.to_string(),
    })?;
    set(key, bytes)
}

/// Reads the JSON value under `key` (or `T::default()`), lets `update` change it, stores it back
/// and returns what `update` returned.
///
/// ```
/// # use aeterna_extension_sdk::{state, testing::TestHost, ExtError};
/// # let host = TestHost::new();
/// # host.call(|| {
/// let seen = state::update_json("seen", |n: &mut u32| {
///     *n += 1;
///     *n
/// })?;
/// # assert_eq!(seen, 1);
/// # Ok::<_, ExtError>(())
/// # }).unwrap();
/// ```
pub fn update_json<T, R>(key: &str, update: impl FnOnce(&mut T) -> R) -> Result<R, StateError>
where
    T: Serialize + DeserializeOwned + Default,
{
    let mut value = get_json::<T>(key)?.unwrap_or_default();
    let result = update(&mut value);
    set_json(key, &value)?;
    Ok(result)
}
