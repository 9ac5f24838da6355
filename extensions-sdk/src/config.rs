//! The `[config]` table of the extension's manifest.
//!
//! Strings arrive as they are; every other TOML value arrives as JSON text: `max_tokens = 2000`
//! gives `"2000"`, `rules = ["a", "b"]` gives `["a","b"]`. Read scalars with [`get`] or
//! [`parse`], structured values with [`json`], and "one string or a list of strings" with
//! [`list`].

use std::fmt;
use std::str::FromStr;

use serde::de::DeserializeOwned;

use crate::{ExtError, sys};

/// A config value that could not be read as the requested type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The config key.
    pub key: String,
    /// The value as given.
    pub value: String,
    /// What was expected, and what went wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "config key `{}` = `{}`: {}; fix the extension's manifest",
            self.key, self.value, self.message
        )
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for ExtError {
    fn from(error: ConfigError) -> Self {
        ExtError::new("invalid-config", error.to_string())
    }
}

/// Every `(key, value)` pair of the `[config]` table.
pub fn all() -> Vec<(String, String)> {
    sys::config()
}

/// The value under `key`, if any.
pub fn get(key: &str) -> Option<String> {
    sys::config()
        .into_iter()
        .find_map(|(k, v)| (k == key).then_some(v))
}

/// The value under `key` parsed with [`FromStr`] (numbers, booleans, …); `Ok(None)` if absent.
pub fn parse<T>(key: &str) -> Result<Option<T>, ConfigError>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    let Some(value) = get(key) else {
        return Ok(None);
    };
    match value.trim().parse::<T>() {
        Ok(parsed) => Ok(Some(parsed)),
        Err(error) => Err(ConfigError {
            key: key.to_owned(),
            message: format!("expected {}: {error}", std::any::type_name::<T>()),
            value,
        }),
    }
}

/// Like [`parse`], with a default for an absent key.
pub fn parse_or<T>(key: &str, default: T) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    Ok(parse(key)?.unwrap_or(default))
}

/// The value under `key` decoded from JSON (arrays and tables); `Ok(None)` if absent.
pub fn json<T: DeserializeOwned>(key: &str) -> Result<Option<T>, ConfigError> {
    let Some(value) = get(key) else {
        return Ok(None);
    };
    match serde_json::from_str(&value) {
        Ok(parsed) => Ok(Some(parsed)),
        Err(error) => Err(ConfigError {
            key: key.to_owned(),
            message: format!("expected JSON for {}: {error}", std::any::type_name::<T>()),
            value,
        }),
    }
}

/// A list of strings: a TOML array of strings, or a single string as a one-item list. Empty if
/// absent.
///
/// A TOML array of non-strings or a TOML table is an error. (A string that happens to be valid
/// JSON for an array or an object reads the same as one, and is refused too.)
pub fn list(key: &str) -> Result<Vec<String>, ConfigError> {
    let Some(value) = get(key) else {
        return Ok(Vec::new());
    };
    if value.trim_start().starts_with(['[', '{']) {
        if let Ok(items) = serde_json::from_str::<Vec<String>>(&value) {
            return Ok(items);
        }
        if serde_json::from_str::<serde_json::Value>(&value).is_ok() {
            return Err(ConfigError {
                key: key.to_owned(),
                message: "expected a string or a list of strings".to_owned(),
                value,
            });
        }
    }
    Ok(vec![value])
}
