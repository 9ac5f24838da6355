//! The optional `<name>.toml` manifest beside `<name>.wasm`.
//!
//! ```toml
//! id = "redactor"          # overrides the registered id
//! priority = 50            # overrides the registered priority
//! enabled = true
//! timeout_ms = 1000        # limits may only be lowered below the operator's
//! fuel = 100000000
//! fuel_per_input_byte = 1000
//! memory_mb = 32
//! failure = "closed"       # "open" (default): the chain continues past a fault
//!
//! [config]                 # read by the guest through `host.config`
//! mode = "strict"          # strings as they are
//! max = 3                  # other values as JSON text: "3"
//! ```
//!
//! Unknown keys are errors, so a typo never silently does nothing.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Limits;

/// What happens to a chain when this extension faults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailurePolicy {
    /// The chain continues with the value from before this extension.
    #[default]
    Open,
    /// The chain stops with an error.
    Closed,
}

/// A parsed manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub id: Option<String>,
    pub priority: Option<i32>,
    pub enabled: Option<bool>,
    pub timeout_ms: Option<u64>,
    pub fuel: Option<u64>,
    pub fuel_per_input_byte: Option<u64>,
    pub memory_mb: Option<u64>,
    pub failure: Option<FailurePolicy>,
    pub config: Option<toml::Table>,
}

impl Manifest {
    /// The manifest path for `wasm`: the same path with a `.toml` extension.
    pub fn path_for(wasm: &Path) -> PathBuf {
        wasm.with_extension("toml")
    }

    /// Reads the manifest beside `wasm`, if there is one.
    pub fn load_beside(wasm: &Path) -> Result<Option<(PathBuf, Manifest)>, (PathBuf, String)> {
        let path = Self::path_for(wasm);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err((path, format!("cannot read it: {error}"))),
        };
        match Self::parse(&text) {
            Ok(manifest) => Ok(Some((path, manifest))),
            Err(message) => Err((path, message)),
        }
    }

    /// Parses manifest text; the error explains what is wrong (unknown key, wrong type, line).
    pub fn parse(text: &str) -> Result<Manifest, String> {
        toml::from_str(text).map_err(|error| error.to_string().trim_end().to_owned())
    }

    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    pub fn failure(&self) -> FailurePolicy {
        self.failure.unwrap_or_default()
    }

    /// The operator's limits, lowered where the manifest asks. Asking for more than the operator
    /// allows is an error: only the operator may raise a limit.
    pub fn effective_limits(&self, operator: &Limits) -> Result<Limits, String> {
        fn lower(field: &str, asked: Option<u64>, allowed: u64, unit: &str) -> Result<u64, String> {
            match asked {
                None => Ok(allowed),
                Some(0) if field != "fuel_per_input_byte" => {
                    Err(format!("`{field}` must be at least 1"))
                }
                Some(asked) if asked > allowed => Err(format!(
                    "`{field} = {asked}` exceeds the operator's limit of {allowed}{unit}; a \
                     manifest may only lower limits"
                )),
                Some(asked) => Ok(asked),
            }
        }
        Ok(Limits {
            timeout_ms: lower("timeout_ms", self.timeout_ms, operator.timeout_ms, " ms")?,
            fuel: lower("fuel", self.fuel, operator.fuel, "")?,
            fuel_per_input_byte: lower(
                "fuel_per_input_byte",
                self.fuel_per_input_byte,
                operator.fuel_per_input_byte,
                "",
            )?,
            memory_mb: lower("memory_mb", self.memory_mb, operator.memory_mb, " MiB")?,
        })
    }

    /// The `[config]` table as the guest sees it: strings as they are, other values as JSON.
    pub fn config_pairs(&self) -> Vec<(String, String)> {
        let Some(table) = &self.config else {
            return Vec::new();
        };
        table
            .iter()
            .map(|(key, value)| {
                let rendered = match value {
                    toml::Value::String(text) => text.clone(),
                    other => toml_to_json(other).to_string(),
                };
                (key.clone(), rendered)
            })
            .collect()
    }
}

fn toml_to_json(value: &toml::Value) -> serde_json::Value {
    use serde_json::Value as Json;
    match value {
        toml::Value::String(text) => Json::String(text.clone()),
        toml::Value::Integer(number) => Json::from(*number),
        // JSON has no NaN or infinity; they become strings rather than silently null.
        toml::Value::Float(number) => serde_json::Number::from_f64(*number)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(number.to_string())),
        toml::Value::Boolean(flag) => Json::Bool(*flag),
        toml::Value::Datetime(datetime) => Json::String(datetime.to_string()),
        toml::Value::Array(items) => Json::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => Json::Object(
            table
                .iter()
                .map(|(key, value)| (key.clone(), toml_to_json(value)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let manifest = Manifest::parse(
            r#"
            id = "x"
            priority = -3
            enabled = false
            timeout_ms = 100
            fuel = 5
            memory_mb = 8
            failure = "closed"
            [config]
            mode = "loop"
            "#,
        )
        .unwrap();
        assert_eq!(manifest.id.as_deref(), Some("x"));
        assert_eq!(manifest.priority, Some(-3));
        assert!(!manifest.enabled());
        assert_eq!(manifest.failure(), FailurePolicy::Closed);
        assert_eq!(
            manifest.config_pairs(),
            [("mode".to_owned(), "loop".to_owned())]
        );
    }

    #[test]
    fn empty_manifest_means_defaults() {
        let manifest = Manifest::parse("").unwrap();
        assert!(manifest.enabled());
        assert_eq!(manifest.failure(), FailurePolicy::Open);
        assert_eq!(
            manifest.effective_limits(&Limits::default()).unwrap(),
            Limits::default()
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let error = Manifest::parse("timeout = 5").unwrap_err();
        assert!(error.contains("unknown field `timeout`"), "{error}");
        let error = Manifest::parse("failure = \"sometimes\"").unwrap_err();
        assert!(error.contains("sometimes"), "{error}");
        assert!(Manifest::parse("priority = \"high\"").is_err());
    }

    #[test]
    fn config_values_other_than_strings_are_json() {
        let manifest = Manifest::parse(
            r#"
            [config]
            n = 3
            f = 1.5
            b = true
            list = [1, "two"]
            nested = { k = "v" }
            when = 1979-05-27T07:32:00Z
            "#,
        )
        .unwrap();
        let pairs: std::collections::HashMap<_, _> = manifest.config_pairs().into_iter().collect();
        assert_eq!(pairs["n"], "3");
        assert_eq!(pairs["f"], "1.5");
        assert_eq!(pairs["b"], "true");
        assert_eq!(pairs["list"], r#"[1,"two"]"#);
        assert_eq!(pairs["nested"], r#"{"k":"v"}"#);
        assert_eq!(pairs["when"], r#""1979-05-27T07:32:00Z""#);
    }

    #[test]
    fn limits_may_only_be_lowered() {
        let operator = Limits {
            timeout_ms: 1000,
            fuel: 100,
            fuel_per_input_byte: 10,
            memory_mb: 64,
        };
        let lowered = Manifest {
            timeout_ms: Some(10),
            memory_mb: Some(8),
            ..Default::default()
        };
        assert_eq!(
            lowered.effective_limits(&operator).unwrap(),
            Limits {
                timeout_ms: 10,
                fuel: 100,
                fuel_per_input_byte: 10,
                memory_mb: 8
            }
        );
        let raised = Manifest {
            fuel: Some(101),
            ..Default::default()
        };
        let error = raised.effective_limits(&operator).unwrap_err();
        assert!(
            error.contains("exceeds the operator's limit of 100"),
            "{error}"
        );
        let zero = Manifest {
            timeout_ms: Some(0),
            ..Default::default()
        };
        assert!(zero.effective_limits(&operator).is_err());
    }
}
