//! Ordering resolutions by how reliably they worked.
//!
//! The raw success rate rewards luck: one success in one try is 100%. Resolutions are ranked by
//! the lower bound of the Wilson score interval instead (95% confidence), which is close to the
//! success rate when there is plenty of evidence and pessimistic when there is little, so one
//! lucky success (0.21) ranks below 19 successes in 20 applications (0.76).

/// z for a two-sided 95% confidence interval.
const Z: f64 = 1.959_963_984_540_054;

/// The lower bound of the Wilson score interval for `successes` out of `applications`; 0 when
/// nothing was applied yet.
pub fn wilson_lower_bound(successes: u64, applications: u64) -> f64 {
    if applications == 0 {
        return 0.0;
    }
    let n = applications as f64;
    let p = (successes.min(applications) as f64) / n;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let margin = Z * ((p * (1.0 - p) + z2 / (4.0 * n)) / n).sqrt();
    ((centre - margin) / (1.0 + z2 / n)).max(0.0)
}

/// The success rate, 0 when nothing was applied yet.
pub fn success_rate(successes: u64, applications: u64) -> f64 {
    if applications == 0 {
        0.0
    } else {
        successes.min(applications) as f64 / applications as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lucky_success_ranks_below_nineteen_of_twenty() {
        let lucky = wilson_lower_bound(1, 1);
        let proven = wilson_lower_bound(19, 20);
        assert!(lucky < proven, "{lucky} vs {proven}");
        assert!((lucky - 0.2065).abs() < 1e-3, "{lucky}");
        assert!((proven - 0.7639).abs() < 1e-3, "{proven}");
    }

    #[test]
    fn the_bound_grows_with_evidence_and_stays_below_the_rate() {
        let mut previous = 0.0;
        for n in [1, 2, 5, 10, 100, 1000] {
            let bound = wilson_lower_bound(n, n);
            assert!(bound > previous && bound < 1.0, "{n}: {bound}");
            previous = bound;
        }
        assert!(wilson_lower_bound(80, 100) < success_rate(80, 100));
    }

    #[test]
    fn nothing_applied_is_zero_and_failures_only_is_zero() {
        assert_eq!(wilson_lower_bound(0, 0), 0.0);
        assert_eq!(wilson_lower_bound(0, 10), 0.0);
        assert_eq!(success_rate(0, 0), 0.0);
        assert_eq!(success_rate(3, 4), 0.75);
    }
}
