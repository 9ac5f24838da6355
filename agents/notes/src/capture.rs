//! Capture modes: which events are kept, per tenant or project.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::config::CaptureConfig;

/// The `N` of a plain `sampled` mode.
pub const DEFAULT_SAMPLE_EVERY: u32 = 10;

/// Which events a tenant or project keeps. Written as a string in the configuration: `all`,
/// `errors_only`, `disabled`, `sampled` (1 in 10) or `sampled:N`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum CaptureMode {
    /// Every event.
    #[default]
    All,
    /// One event in `every`, chosen at random so periodic workloads are not aliased.
    Sampled { every: u32 },
    /// Only failed tool calls.
    ErrorsOnly,
    /// Nothing.
    Disabled,
}

impl fmt::Display for CaptureMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureMode::All => f.write_str("all"),
            CaptureMode::Sampled { every } => write!(f, "sampled:{every}"),
            CaptureMode::ErrorsOnly => f.write_str("errors_only"),
            CaptureMode::Disabled => f.write_str("disabled"),
        }
    }
}

impl FromStr for CaptureMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        match text {
            "all" => return Ok(CaptureMode::All),
            "errors_only" => return Ok(CaptureMode::ErrorsOnly),
            "disabled" => return Ok(CaptureMode::Disabled),
            "sampled" => {
                return Ok(CaptureMode::Sampled {
                    every: DEFAULT_SAMPLE_EVERY,
                });
            }
            _ => {}
        }
        if let Some(every) = text.strip_prefix("sampled:") {
            return match every.trim().parse::<u32>() {
                Ok(every) if every >= 1 => Ok(CaptureMode::Sampled { every }),
                _ => Err(format!(
                    "capture mode `{text}`: N in `sampled:N` must be a whole number of at least 1"
                )),
            };
        }
        Err(format!(
            "unknown capture mode `{text}`; expected all, errors_only, disabled, sampled or sampled:N"
        ))
    }
}

impl TryFrom<String> for CaptureMode {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<CaptureMode> for String {
    fn from(mode: CaptureMode) -> Self {
        mode.to_string()
    }
}

/// The string form serde reads and writes (see [`fmt::Display`]); `sampled` alone is accepted
/// on input, and is written back as `sampled:10`.
impl schemars::JsonSchema for CaptureMode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CaptureMode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^(all|errors_only|disabled|sampled(:[0-9]+)?)$",
            "description": "Which events are kept: `all`, `errors_only` (failed calls only), \
                `disabled` (none) or `sampled:N` (one event in N, chosen at random).",
        })
    }
}

/// Why an event was or was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Keep,
    /// Left out by the mode (not sampled, not an error, or capture disabled). Not an error.
    Filtered,
}

/// Resolves the mode of a tenant or project and applies it to events.
pub struct CapturePolicy {
    config: CaptureConfig,
    sampler: Sampler,
}

impl CapturePolicy {
    pub fn new(config: CaptureConfig) -> Self {
        Self::with_sampler(config, Sampler::from_entropy())
    }

    /// A policy whose sampling sequence is fixed by `sampler` (for reproducible tests).
    pub fn with_sampler(config: CaptureConfig, sampler: Sampler) -> Self {
        CapturePolicy { config, sampler }
    }

    /// The mode for `tenant` and, when known, `project`: a project rule, then a tenant rule,
    /// then the default.
    pub fn mode_for(&self, tenant: &str, project: Option<&str>) -> CaptureMode {
        if let Some(project) = project
            && !self.config.projects.is_empty()
            && let Some(mode) = self.config.projects.get(&format!("{tenant}/{project}"))
        {
            return *mode;
        }
        self.config
            .tenants
            .get(tenant)
            .copied()
            .unwrap_or(self.config.mode)
    }

    /// Applies `mode` to one event that succeeded or not.
    pub fn decide(&self, mode: CaptureMode, success: bool) -> Verdict {
        let keep = match mode {
            CaptureMode::All => true,
            CaptureMode::Disabled => false,
            CaptureMode::ErrorsOnly => !success,
            CaptureMode::Sampled { every } => self.sampler.one_in(every),
        };
        if keep {
            Verdict::Keep
        } else {
            Verdict::Filtered
        }
    }
}

/// A lock-free pseudo-random "1 in N" decision: SplitMix64 over an atomic counter. Good enough
/// statistically for sampling, and a few nanoseconds per call.
pub struct Sampler {
    state: AtomicU64,
}

impl Sampler {
    /// A sampler with a fixed seed: the same seed gives the same decisions.
    pub fn seeded(seed: u64) -> Self {
        Sampler {
            state: AtomicU64::new(seed),
        }
    }

    /// A sampler seeded from the clock and the process id.
    pub fn from_entropy() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        Self::seeded(nanos ^ (u64::from(std::process::id()) << 32))
    }

    /// True with probability 1/`every` (always for 0 or 1).
    pub fn one_in(&self, every: u32) -> bool {
        if every <= 1 {
            return true;
        }
        let state = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        splitmix64(state).is_multiple_of(u64::from(every))
    }
}

fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(config: CaptureConfig) -> CapturePolicy {
        CapturePolicy::with_sampler(config, Sampler::seeded(42))
    }

    #[test]
    fn modes_round_trip_through_their_string_form() {
        for mode in [
            CaptureMode::All,
            CaptureMode::ErrorsOnly,
            CaptureMode::Disabled,
            CaptureMode::Sampled { every: 7 },
        ] {
            assert_eq!(mode.to_string().parse::<CaptureMode>(), Ok(mode));
        }
        assert!(
            "sampled:0"
                .parse::<CaptureMode>()
                .unwrap_err()
                .contains("at least 1")
        );
        assert!("sampled:x".parse::<CaptureMode>().is_err());
    }

    #[test]
    fn the_schema_pattern_matches_every_serialised_mode() {
        let schema = schemars::schema_for!(CaptureMode);
        let pattern = schema
            .get("pattern")
            .and_then(|p| p.as_str())
            .expect("pattern");
        let pattern = regex::Regex::new(pattern).expect("a valid regex");
        for mode in [
            CaptureMode::All,
            CaptureMode::ErrorsOnly,
            CaptureMode::Disabled,
            CaptureMode::Sampled { every: 1 },
            CaptureMode::Sampled { every: u32::MAX },
        ] {
            let json = serde_json::to_value(mode).unwrap();
            let text = json.as_str().expect("a string");
            assert!(pattern.is_match(text), "{text}");
        }
        assert!(!pattern.is_match("sampled:"));
        assert!(!pattern.is_match("everything"));
    }

    #[test]
    fn all_keeps_everything_and_disabled_nothing() {
        let policy = policy(CaptureConfig::default());
        for success in [true, false] {
            assert_eq!(policy.decide(CaptureMode::All, success), Verdict::Keep);
            assert_eq!(
                policy.decide(CaptureMode::Disabled, success),
                Verdict::Filtered
            );
        }
    }

    #[test]
    fn errors_only_keeps_failures_only() {
        let policy = policy(CaptureConfig::default());
        assert_eq!(policy.decide(CaptureMode::ErrorsOnly, false), Verdict::Keep);
        assert_eq!(
            policy.decide(CaptureMode::ErrorsOnly, true),
            Verdict::Filtered
        );
    }

    #[test]
    fn sampling_keeps_one_in_n_within_tolerance() {
        let policy = policy(CaptureConfig::default());
        for every in [2u32, 10, 50] {
            let trials = 200_000u32;
            let kept = (0..trials)
                .filter(|_| policy.decide(CaptureMode::Sampled { every }, true) == Verdict::Keep)
                .count() as f64;
            let expected = f64::from(trials) / f64::from(every);
            // Binomial standard deviation; 5 sigma makes a flaky failure practically impossible
            // while still catching an off-by-one rate (1 in N±1 is > 5 sigma away for these N).
            let sigma = (expected * (1.0 - 1.0 / f64::from(every))).sqrt();
            assert!(
                (kept - expected).abs() <= 5.0 * sigma,
                "1 in {every}: kept {kept}, expected {expected} ± {}",
                5.0 * sigma
            );
        }
    }

    #[test]
    fn sampling_is_not_aliased_by_periodic_input() {
        // Every 10th event fails; a counter-based "every 10th" sampler would keep only failures
        // or none of them. A random sampler keeps about 10% of each kind.
        let policy = policy(CaptureConfig::default());
        let mode = CaptureMode::Sampled { every: 10 };
        let (mut failures_kept, mut successes_kept) = (0u32, 0u32);
        for index in 0..100_000u32 {
            let success = index % 10 != 0;
            if policy.decide(mode, success) == Verdict::Keep {
                if success {
                    successes_kept += 1
                } else {
                    failures_kept += 1
                }
            }
        }
        assert!(
            (800..=1200).contains(&failures_kept),
            "failures kept: {failures_kept}"
        );
        assert!(
            (8_400..=9_600).contains(&successes_kept),
            "successes kept: {successes_kept}"
        );
    }

    #[test]
    fn project_rule_beats_tenant_rule_beats_default() {
        let mut config = CaptureConfig {
            mode: CaptureMode::ErrorsOnly,
            ..Default::default()
        };
        config
            .tenants
            .insert("acme".into(), CaptureMode::Sampled { every: 3 });
        config
            .projects
            .insert("acme/web".into(), CaptureMode::Disabled);
        let policy = policy(config);
        assert_eq!(policy.mode_for("acme", Some("web")), CaptureMode::Disabled);
        assert_eq!(
            policy.mode_for("acme", Some("api")),
            CaptureMode::Sampled { every: 3 }
        );
        assert_eq!(
            policy.mode_for("acme", None),
            CaptureMode::Sampled { every: 3 }
        );
        assert_eq!(
            policy.mode_for("other", Some("web")),
            CaptureMode::ErrorsOnly
        );
    }

    #[test]
    fn seeded_samplers_are_reproducible() {
        let a = Sampler::seeded(7);
        let b = Sampler::seeded(7);
        let first: Vec<bool> = (0..64).map(|_| a.one_in(3)).collect();
        let second: Vec<bool> = (0..64).map(|_| b.one_in(3)).collect();
        assert_eq!(first, second);
    }
}
