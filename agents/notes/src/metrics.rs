//! The agent's counters as Prometheus metrics, read from [`NotesService::snapshot`] at each
//! scrape (a `prometheus-client` collector), so the atomics stay the one source of truth.
//!
//! Under the registry's prefix (`aeterna_notes_…`): `events_accepted_total`,
//! `events_filtered_total`, `events_dropped_total` (queue full), `events_written_total`,
//! `batches_written_total`, `write_failures_total`, `events_lost_total`, `events_spilled_total`,
//! `secrets_redacted_total`, `notes_created_total`, `notes_deduplicated_total`,
//! `events_distilled_total`, `events_declined_total` (not worth a note),
//! `distill_failures_total`; gauges `queue_depth`,
//! `queue_capacity`, `events_pending` and `store_failing` (1 while writes fail).

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::service::NotesService;

#[derive(Debug)]
struct NotesCollector(Arc<NotesService>);

impl NotesService {
    /// Adds the agent's metrics to `registry`, under the `notes` prefix.
    pub fn register_metrics(self: &Arc<Self>, registry: &mut Registry) {
        registry
            .sub_registry_with_prefix("notes")
            .register_collector(Box::new(NotesCollector(self.clone())));
    }
}

impl Collector for NotesCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let snapshot = self.0.snapshot();
        let (capture, distill) = (&snapshot.capture, &snapshot.distill);
        let counters: [(&str, &str, u64); 14] = [
            (
                "events_accepted",
                "Trajectory events accepted into the capture queue",
                capture.accepted,
            ),
            (
                "events_filtered",
                "Events left out by the capture mode",
                capture.filtered,
            ),
            (
                "events_dropped",
                "Events refused because the capture queue was full",
                capture.dropped_full,
            ),
            ("events_written", "Events stored", capture.written),
            ("batches_written", "Batches stored", capture.batches),
            (
                "write_failures",
                "Failed batch writes (each is retried)",
                capture.write_failures,
            ),
            (
                "events_lost",
                "Accepted events not stored because the store failed past the shutdown drain",
                capture.lost,
            ),
            (
                "events_spilled",
                "Accepted events written to the spill file at shutdown, stored at the next start",
                capture.spilled,
            ),
            (
                "secrets_redacted",
                "Secrets replaced before storage",
                capture.redactions,
            ),
            ("notes_created", "Notes stored", distill.notes_created),
            (
                "notes_deduplicated",
                "Distillations whose note already existed",
                distill.notes_deduplicated,
            ),
            (
                "events_distilled",
                "Events covered by notes",
                distill.events_distilled,
            ),
            (
                "events_declined",
                "Events a distiller found not worth a note (no note written)",
                distill.events_declined,
            ),
            (
                "distill_failures",
                "Distillations that failed (events stay pending)",
                distill.failures,
            ),
        ];
        for (name, help, value) in counters {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(
                name,
                help,
                None,
                counter.metric_type(),
            )?)?;
        }
        let gauges: [(&str, &str, u64); 4] = [
            ("queue_depth", "Events in the capture queue", capture.depth),
            (
                "queue_capacity",
                "Events the capture queue holds",
                capture.capacity,
            ),
            (
                "events_pending",
                "Accepted events not yet stored",
                capture.pending,
            ),
            (
                "store_failing",
                "1 while trajectory writes fail",
                u64::from(capture.store_failing),
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}
