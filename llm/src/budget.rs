//! [`BudgetLedger`]: token accounting per tenant and role, against hourly and daily caps.
//!
//! Before a call, [`BudgetLedger::reserve`] sets aside the most the call can cost (the prompt
//! estimate plus `max_tokens`) and refuses when that could pass a cap, so concurrent calls
//! never overshoot together. After the call, [`Reservation::commit`] replaces the reservation
//! with what the provider reported. Windows are the UTC hour and the UTC day.
//!
//! With a database ([`BudgetLedger::with_store`]), usage is added to `llm_token_usage` per hour
//! (migration `0500_llm_token_usage`) by [`BudgetLedger::flush`], and a tenant's
//! usage is read back the first time it is needed after a start: caps hold across restarts.
//! On a database several instances share, it is read back again once [`SHARED_REFRESH`] has
//! passed, so each instance counts the others' usage too: together they overshoot a cap by at
//! most what they spend within one refresh and one flush.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aeterna_memory::storage::Database;
use aeterna_memory::{with_connection, with_pool};
use parking_lot::Mutex;

use crate::config::{BudgetConfig, Caps};
use crate::error::{ErrorKind, LlmError};
use crate::provider::Usage;
use crate::role::Role;

/// (tenant, role) pairs tracked at most. Tenants come from the server's configured tokens, so
/// this is far above any real deployment; past it, capped calls are refused.
const MAX_TRACKED: usize = 100_000;
/// Hours of usage kept in the database.
const RETENTION_HOURS: i64 = 35 * 24;
/// How old a shared database's usage may be before a capped call reads it again.
const SHARED_REFRESH: Duration = Duration::from_secs(1);

type Key = (String, Role);

/// Usage of one (tenant, role) in the current windows.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    hour: i64,
    hour_used: u64,
    day: i64,
    day_used: u64,
    /// Set aside by calls under way.
    reserved: u64,
    /// When the usage was last read from the database.
    loaded: Option<Instant>,
}

impl Window {
    fn roll(&mut self, hour: i64) {
        if self.hour != hour {
            self.hour = hour;
            self.hour_used = 0;
        }
        if self.day != hour.div_euclid(24) {
            self.day = hour.div_euclid(24);
            self.day_used = 0;
        }
    }
}

/// Usage not yet written to the database.
#[derive(Debug, Clone, Copy, Default)]
struct Delta {
    input: u64,
    output: u64,
    calls: u64,
}

struct Ledger {
    config: BudgetConfig,
    store: Option<Database>,
    windows: Mutex<HashMap<Key, Window>>,
    unflushed: Mutex<HashMap<(Key, i64), Delta>>,
    /// Serialises flushes, so a failed flush's deltas are put back before the next one runs.
    flush_lock: tokio::sync::Mutex<()>,
}

/// Cheap to clone.
#[derive(Clone)]
pub struct BudgetLedger {
    inner: Arc<Ledger>,
}

/// Tokens set aside for one call. [`commit`](Self::commit) it with the call's usage; dropping it
/// releases the tokens (the call failed before using any we know of).
#[must_use = "commit the call's usage"]
pub struct Reservation {
    ledger: Arc<Ledger>,
    key: Key,
    tokens: u64,
    tracked: bool,
    done: bool,
}

/// Which cap refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Hour,
    Day,
}

impl BudgetLedger {
    /// Usage kept in memory only (lost at restart).
    pub fn in_memory(config: BudgetConfig) -> Self {
        Self::build(config, None)
    }

    /// Usage persisted in the shared SQLite database.
    pub fn with_store(config: BudgetConfig, db: Database) -> Self {
        Self::build(config, Some(db))
    }

    fn build(config: BudgetConfig, store: Option<Database>) -> Self {
        BudgetLedger {
            inner: Arc::new(Ledger {
                config,
                store,
                windows: Mutex::new(HashMap::new()),
                unflushed: Mutex::new(HashMap::new()),
                flush_lock: tokio::sync::Mutex::new(()),
            }),
        }
    }

    pub fn caps(&self, tenant: &str, role: Role) -> Caps {
        self.inner.config.caps(tenant, role)
    }

    /// Sets aside `tokens` for a call of `tenant` in `role`, or refuses with
    /// [`ErrorKind::BudgetExhausted`] (naming `provider`, whose call is skipped).
    pub async fn reserve(
        &self,
        provider: &str,
        tenant: &str,
        role: Role,
        tokens: u64,
    ) -> Result<Reservation, LlmError> {
        self.reserve_at(provider, tenant, role, tokens, current_hour())
            .await
    }

    async fn reserve_at(
        &self,
        provider: &str,
        tenant: &str,
        role: Role,
        tokens: u64,
        hour: i64,
    ) -> Result<Reservation, LlmError> {
        let caps = self.caps(tenant, role);
        let key: Key = (tenant.to_owned(), role);
        let capped = caps.hourly_tokens.is_some() || caps.daily_tokens.is_some();
        if capped {
            self.load(provider, &key, hour).await?;
        }
        let refuse = |period: Period, used: u64, cap: u64| {
            let (window, key_name) = match period {
                Period::Hour => ("this hour", "hourly_tokens"),
                Period::Day => ("today (UTC)", "daily_tokens"),
            };
            LlmError::new(
                provider,
                ErrorKind::BudgetExhausted,
                format!(
                    "tenant {tenant:?} has used {used} of its {cap} {role} tokens {window} \
                     (llm.budgets {key_name}); this call could need {tokens} more"
                ),
            )
            .not_retryable()
        };
        let mut windows = self.inner.windows.lock();
        let tracked_count = windows.len();
        let window = match windows.get_mut(&key) {
            Some(window) => Some(window),
            None if tracked_count < MAX_TRACKED => Some(windows.entry(key.clone()).or_default()),
            None => None,
        };
        let Some(window) = window else {
            if capped {
                return Err(LlmError::new(
                    provider,
                    ErrorKind::BudgetExhausted,
                    format!(
                        "the budget ledger tracks at most {MAX_TRACKED} tenant and role pairs and \
                         is full; tenant {tenant:?} cannot be checked against its cap"
                    ),
                )
                .not_retryable());
            }
            return Ok(Reservation {
                ledger: self.inner.clone(),
                key,
                tokens: 0,
                tracked: false,
                done: false,
            });
        };
        window.roll(hour);
        if let Some(cap) = caps.hourly_tokens
            && window.hour_used + window.reserved + tokens > cap
        {
            return Err(refuse(Period::Hour, window.hour_used, cap));
        }
        if let Some(cap) = caps.daily_tokens
            && window.day_used + window.reserved + tokens > cap
        {
            return Err(refuse(Period::Day, window.day_used, cap));
        }
        window.reserved += tokens;
        Ok(Reservation {
            ledger: self.inner.clone(),
            key,
            tokens,
            tracked: true,
            done: false,
        })
    }

    /// Reads the current day's usage of `key` from the database: once per start, and again
    /// after [`SHARED_REFRESH`] when other instances write to the same database.
    async fn load(&self, provider: &str, key: &Key, hour: i64) -> Result<(), LlmError> {
        let Some(db) = &self.inner.store else {
            return Ok(());
        };
        let shared = db.shared();
        if let Some(window) = self.inner.windows.lock().get(key)
            && (!shared
                || window
                    .loaded
                    .is_some_and(|at| at.elapsed() < SHARED_REFRESH))
        {
            return Ok(());
        }
        let day_start = hour.div_euclid(24) * 24;
        let rows: Vec<(i64, i64)> = with_pool!(db, |pool| {
            sqlx::query_as(
                "SELECT hour, input_tokens + output_tokens FROM llm_token_usage \
                 WHERE tenant_id = $1 AND role = $2 AND hour >= $3 AND hour <= $4",
            )
            .bind(&key.0)
            .bind(key.1.as_str())
            .bind(day_start)
            .bind(hour)
            .fetch_all(pool)
            .await
        })
        .map_err(|error| {
            LlmError::new(
                provider,
                ErrorKind::BudgetExhausted,
                format!(
                    "cannot read the token usage of tenant {:?} to check its budget: {error}",
                    key.0
                ),
            )
            .not_retryable()
        })?;
        let mut stored = Window {
            hour,
            day: hour.div_euclid(24),
            loaded: Some(Instant::now()),
            ..Window::default()
        };
        for (row_hour, tokens) in rows {
            let tokens = u64::try_from(tokens).unwrap_or_default();
            stored.day_used += tokens;
            if row_hour == hour {
                stored.hour_used += tokens;
            }
        }
        let mut windows = self.inner.windows.lock();
        match windows.get_mut(key) {
            // Another instance's usage may have arrived: the database's figures plus what this
            // process used and has not written yet, keeping its reservations.
            Some(window) if shared => {
                for ((unflushed_key, unflushed_hour), delta) in self.inner.unflushed.lock().iter() {
                    if unflushed_key == key && unflushed_hour.div_euclid(24) == stored.day {
                        let tokens = delta.input + delta.output;
                        stored.day_used += tokens;
                        if *unflushed_hour == hour {
                            stored.hour_used += tokens;
                        }
                    }
                }
                *window = Window {
                    reserved: window.reserved,
                    ..stored
                };
            }
            // Usage recorded meanwhile by this process is not in the database yet: keep it.
            Some(_) => {}
            None => {
                windows.insert(key.clone(), stored);
            }
        }
        Ok(())
    }

    /// Tokens used by `tenant` in `role` this hour and today (UTC), as far as this process
    /// knows (after the first call of the pair since start, including earlier runs).
    pub fn used(&self, tenant: &str, role: Role) -> (u64, u64) {
        let hour = current_hour();
        let windows = self.inner.windows.lock();
        match windows.get(&(tenant.to_owned(), role)) {
            Some(window) => {
                let mut window = *window;
                window.roll(hour);
                (window.hour_used, window.day_used)
            }
            None => (0, 0),
        }
    }

    /// Writes the usage recorded since the last flush to the database (no-op without one).
    pub async fn flush(&self) -> anyhow::Result<()> {
        let Some(db) = &self.inner.store else {
            return Ok(());
        };
        let _serial = self.inner.flush_lock.lock().await;
        let batch: Vec<((Key, i64), Delta)> = self.inner.unflushed.lock().drain().collect();
        if batch.is_empty() {
            return Ok(());
        }
        let result = write_batch(db, &batch).await;
        if result.is_err() {
            // Put it back, added to whatever arrived meanwhile.
            let mut unflushed = self.inner.unflushed.lock();
            for (key, delta) in batch {
                let entry = unflushed.entry(key).or_default();
                entry.input += delta.input;
                entry.output += delta.output;
                entry.calls += delta.calls;
            }
        }
        result
    }
}

async fn write_batch(db: &Database, batch: &[((Key, i64), Delta)]) -> anyhow::Result<()> {
    let oldest = current_hour() - RETENTION_HOURS;
    let mut tenants: Vec<&str> = batch.iter().map(|(((t, _), _), _)| t.as_str()).collect();
    tenants.sort_unstable();
    tenants.dedup();
    let mut tx = db.begin_write().await?;
    for (((tenant, role), hour), delta) in batch {
        with_connection!(&mut tx, |conn| {
            sqlx::query(
                "INSERT INTO llm_token_usage \
                     (tenant_id, role, hour, input_tokens, output_tokens, calls) \
                 VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (tenant_id, role, hour) DO UPDATE SET \
                     input_tokens = llm_token_usage.input_tokens + excluded.input_tokens, \
                     output_tokens = llm_token_usage.output_tokens + excluded.output_tokens, \
                     calls = llm_token_usage.calls + excluded.calls",
            )
            .bind(tenant)
            .bind(role.as_str())
            .bind(hour)
            .bind(i64::try_from(delta.input).unwrap_or(i64::MAX))
            .bind(i64::try_from(delta.output).unwrap_or(i64::MAX))
            .bind(i64::try_from(delta.calls).unwrap_or(i64::MAX))
            .execute(conn)
            .await
            .map(drop)
        })?;
    }
    for tenant in &tenants {
        with_connection!(&mut tx, |conn| {
            sqlx::query("DELETE FROM llm_token_usage WHERE tenant_id = $1 AND hour < $2")
                .bind(tenant)
                .bind(oldest)
                .execute(conn)
                .await
                .map(drop)
        })?;
    }
    tx.commit().await?;
    Ok(())
}

impl Reservation {
    /// Replaces the reservation with the call's usage.
    pub fn commit(mut self, usage: &Usage) {
        self.finish(Some(usage), current_hour());
    }

    fn finish(&mut self, usage: Option<&Usage>, hour: i64) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        if self.tracked {
            let mut windows = self.ledger.windows.lock();
            if let Some(window) = windows.get_mut(&self.key) {
                window.reserved = window.reserved.saturating_sub(self.tokens);
                if let Some(usage) = usage {
                    window.roll(hour);
                    window.hour_used += usage.total();
                    window.day_used += usage.total();
                }
            }
        }
        if let Some(usage) = usage
            && self.ledger.store.is_some()
        {
            let mut unflushed = self.ledger.unflushed.lock();
            let delta = unflushed.entry((self.key.clone(), hour)).or_default();
            delta.input += usage.input_tokens;
            delta.output += usage.output_tokens;
            delta.calls += 1;
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.finish(None, current_hour());
    }
}

fn current_hour() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| (d.as_secs() / 3600) as i64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(total: u64) -> Usage {
        Usage {
            input_tokens: total / 2,
            output_tokens: total - total / 2,
            reported: true,
        }
    }

    fn ledger(hourly: Option<u64>, daily: Option<u64>) -> BudgetLedger {
        BudgetLedger::in_memory(BudgetConfig {
            hourly_tokens: hourly,
            daily_tokens: daily,
            ..BudgetConfig::default()
        })
    }

    #[tokio::test]
    async fn reservations_count_until_committed_with_real_usage() {
        let ledger = ledger(Some(1_000), None);
        let hour = 480_000;
        let first = ledger
            .reserve_at("p", "acme", Role::Distill, 600, hour)
            .await
            .unwrap();
        // 600 set aside: another 600 could pass the cap together with it.
        let refused = ledger
            .reserve_at("p", "acme", Role::Distill, 600, hour)
            .await
            .err()
            .unwrap();
        assert_eq!(refused.kind, ErrorKind::BudgetExhausted);
        assert!(refused.message.contains("\"acme\""), "{}", refused.message);
        let mut first = first;
        first.finish(Some(&usage(150)), hour);
        // Only what was used counts now.
        let second = ledger
            .reserve_at("p", "acme", Role::Distill, 800, hour)
            .await
            .unwrap();
        drop(second);
        // Other tenants and roles have their own windows.
        let other_tenant = ledger
            .reserve_at("p", "other", Role::Distill, 1_000, hour)
            .await;
        let other_role = ledger
            .reserve_at("p", "acme", Role::Summarize, 1_000, hour)
            .await;
        assert!(other_tenant.is_ok() && other_role.is_ok());
    }

    #[tokio::test]
    async fn the_hour_resets_but_the_day_does_not() {
        let ledger = ledger(Some(100), Some(250));
        let day_start = 24 * 20_000;
        for hour in [day_start, day_start + 1] {
            let mut reservation = ledger
                .reserve_at("p", "acme", Role::Summarize, 90, hour)
                .await
                .unwrap();
            reservation.finish(Some(&usage(90)), hour);
        }
        let refused = ledger
            .reserve_at("p", "acme", Role::Summarize, 90, day_start + 2)
            .await
            .err()
            .unwrap();
        assert!(refused.message.contains("today"), "{}", refused.message);
        let next_day = ledger
            .reserve_at("p", "acme", Role::Summarize, 90, day_start + 24)
            .await;
        assert!(next_day.is_ok(), "a new day");
    }

    #[tokio::test]
    async fn a_zero_cap_refuses_and_no_cap_allows_anything() {
        let zero = ledger(Some(0), None);
        assert!(zero.reserve("p", "a", Role::Analyze, 1).await.is_err());
        let unlimited = ledger(None, None);
        let reservation = unlimited
            .reserve("p", "a", Role::Analyze, u64::MAX / 4)
            .await
            .unwrap();
        reservation.commit(&usage(10));
    }
}
