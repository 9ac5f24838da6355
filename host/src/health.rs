//! Quarantine: consecutive faults take an extension out of the chain for a cool-down.
//!
//! After `threshold` consecutive faults the extension is skipped until the cool-down ends. It
//! then gets one trial call: a success clears its record, while another fault quarantines it
//! again at once (the count is not reset by the quarantine itself, only by a success).

use std::time::{Duration, Instant};

use crate::config::QuarantineConfig;

#[derive(Debug, Default)]
pub(crate) struct Health {
    consecutive_faults: u32,
    quarantined_until: Option<Instant>,
}

impl Health {
    /// The time left in quarantine, if the extension is quarantined at `now`.
    pub(crate) fn quarantined(&self, now: Instant) -> Option<Duration> {
        self.quarantined_until
            .filter(|until| *until > now)
            .map(|until| until - now)
    }

    pub(crate) fn record_ok(&mut self) {
        self.consecutive_faults = 0;
        self.quarantined_until = None;
    }

    /// Records a fault; returns whether it put the extension in quarantine.
    pub(crate) fn record_fault(&mut self, now: Instant, config: &QuarantineConfig) -> bool {
        self.consecutive_faults = self.consecutive_faults.saturating_add(1);
        if self.consecutive_faults >= config.threshold {
            self.quarantined_until = Some(now + config.cooldown());
            return true;
        }
        false
    }

    pub(crate) fn consecutive_faults(&self) -> u32 {
        self.consecutive_faults
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: QuarantineConfig = QuarantineConfig {
        threshold: 3,
        cooldown_ms: 1000,
    };

    #[test]
    fn third_consecutive_fault_quarantines_until_the_cooldown_ends() {
        let mut health = Health::default();
        let now = Instant::now();
        assert!(!health.record_fault(now, &CONFIG));
        assert!(!health.record_fault(now, &CONFIG));
        assert!(health.quarantined(now).is_none());
        assert!(health.record_fault(now, &CONFIG));
        assert_eq!(health.quarantined(now), Some(Duration::from_secs(1)));
        assert!(
            health
                .quarantined(now + Duration::from_millis(999))
                .is_some()
        );
        assert!(health.quarantined(now + Duration::from_secs(1)).is_none());
    }

    #[test]
    fn a_success_resets_the_count() {
        let mut health = Health::default();
        let now = Instant::now();
        health.record_fault(now, &CONFIG);
        health.record_fault(now, &CONFIG);
        health.record_ok();
        assert!(!health.record_fault(now, &CONFIG));
        assert_eq!(health.consecutive_faults(), 1);
    }

    #[test]
    fn a_fault_on_the_trial_call_after_release_quarantines_again() {
        let mut health = Health::default();
        let now = Instant::now();
        for _ in 0..3 {
            health.record_fault(now, &CONFIG);
        }
        let later = now + Duration::from_secs(2);
        assert!(health.quarantined(later).is_none());
        assert!(health.record_fault(later, &CONFIG));
        assert!(health.quarantined(later).is_some());
    }
}
