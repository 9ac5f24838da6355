//! The locked-down environment of one callback: WASI context, output capture, memory limiter.
//!
//! WASI gets no preopened directories, no environment variables, no arguments, no stdin, no
//! sockets (TCP, UDP and name lookup are all denied), a small cap on random bytes per call, and
//! clocks rounded to the millisecond (enough to time things, too coarse for timing attacks).
//! Guest stdout, stderr and `host.log` go to `tracing`, attributed to the extension, up to a byte
//! cap per callback; the rest is dropped and counted.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder};
use wasmtime_wasi_io::bytes::Bytes;

/// Largest `get-random-bytes` request served (the WASI default is 64 MiB of host memory).
const MAX_RANDOM_BYTES: u64 = 64 * 1024;

/// Builds the WASI context of one callback.
pub(crate) fn wasi_context(output: &Arc<OutputSink>) -> WasiCtx {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(GuestOutput {
            sink: output.clone(),
            stream: Stream::Stdout,
        })
        .stderr(GuestOutput {
            sink: output.clone(),
            stream: Stream::Stderr,
        })
        .wall_clock(CoarseWallClock)
        .monotonic_clock(CoarseMonotonicClock {
            start: Instant::now(),
        })
        .max_random_size(MAX_RANDOM_BYTES)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    builder.build()
}

/// What a Store carries for WASI.
pub(crate) struct WasiState {
    pub(crate) ctx: WasiCtx,
    pub(crate) table: ResourceTable,
}

/// Refuses linear memory growth past the extension's cap and remembers that it did, so that the
/// trap that usually follows is reported as `memory-limit` rather than a plain trap.
pub(crate) struct MemoryLimiter {
    max_bytes: usize,
    pub(crate) refused: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            refused: false,
        }
    }
}

/// Table growth is bounded by the pool's element count; this is the ceiling without the pool.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.refused = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[derive(Debug, Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
    Log,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
            Stream::Log => "log",
        }
    }
}

/// Guest output of one callback, forwarded to `tracing` line by line within a byte budget.
pub(crate) struct OutputSink {
    extension: Arc<str>,
    inner: Mutex<SinkState>,
}

struct SinkState {
    remaining: usize,
    dropped: u64,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl OutputSink {
    pub(crate) fn new(extension: Arc<str>, cap_bytes: usize) -> Self {
        Self {
            extension,
            inner: Mutex::new(SinkState {
                remaining: cap_bytes,
                dropped: 0,
                stdout: Vec::new(),
                stderr: Vec::new(),
            }),
        }
    }

    /// Bytes dropped so far because the cap was reached.
    pub(crate) fn dropped(&self) -> u64 {
        self.inner.lock().dropped
    }

    /// Emits `host.log` output. Counts against the same budget as stdout and stderr.
    pub(crate) fn log(&self, level: tracing::Level, message: &str) {
        let accepted = {
            let mut state = self.inner.lock();
            let take = state.admit(message.len());
            // Cut on a char boundary at or below the admitted length.
            let mut cut = take;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            state.dropped += (take - cut) as u64;
            state.remaining += take - cut;
            &message[..cut]
        };
        if !accepted.is_empty() || message.is_empty() {
            emit(&self.extension, Stream::Log, level, accepted);
        }
    }

    fn write(&self, stream: Stream, bytes: &[u8]) {
        let mut lines = Vec::new();
        {
            let mut state = self.inner.lock();
            let take = state.admit(bytes.len());
            let buffer = match stream {
                Stream::Stderr => &mut state.stderr,
                _ => &mut state.stdout,
            };
            buffer.extend_from_slice(&bytes[..take]);
            while let Some(newline) = buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=newline).collect();
                lines.push(line);
            }
        }
        for line in lines {
            let text = String::from_utf8_lossy(&line);
            emit(
                &self.extension,
                stream,
                level_of(stream),
                text.trim_end_matches(['\n', '\r']),
            );
        }
    }

    /// Emits unterminated lines and reports dropped bytes. Called when the callback ends.
    pub(crate) fn finish(&self) {
        let (stdout, stderr, dropped) = {
            let mut state = self.inner.lock();
            (
                std::mem::take(&mut state.stdout),
                std::mem::take(&mut state.stderr),
                state.dropped,
            )
        };
        for (stream, rest) in [(Stream::Stdout, stdout), (Stream::Stderr, stderr)] {
            if !rest.is_empty() {
                emit(
                    &self.extension,
                    stream,
                    level_of(stream),
                    &String::from_utf8_lossy(&rest),
                );
            }
        }
        if dropped > 0 {
            tracing::warn!(
                target: "aeterna_host::guest",
                extension = &*self.extension,
                dropped_bytes = dropped,
                "guest output over the per-callback cap was dropped"
            );
        }
    }
}

impl SinkState {
    /// Takes up to `len` bytes from the budget; the rest is counted as dropped.
    fn admit(&mut self, len: usize) -> usize {
        let take = len.min(self.remaining);
        self.remaining -= take;
        self.dropped += (len - take) as u64;
        take
    }
}

fn level_of(stream: Stream) -> tracing::Level {
    match stream {
        Stream::Stderr => tracing::Level::WARN,
        _ => tracing::Level::INFO,
    }
}

fn emit(extension: &str, stream: Stream, level: tracing::Level, text: &str) {
    let stream = stream.name();
    macro_rules! at {
        ($level:ident) => {
            tracing::$level!(target: "aeterna_host::guest", extension, stream, "{text}")
        };
    }
    match level {
        tracing::Level::TRACE => at!(trace),
        tracing::Level::DEBUG => at!(debug),
        tracing::Level::INFO => at!(info),
        tracing::Level::WARN => at!(warn),
        tracing::Level::ERROR => at!(error),
    }
}

/// A guest's stdout or stderr. Writes never fail and never block: past the cap they are dropped,
/// so a chatty guest is not turned into a faulting one.
struct GuestOutput {
    sink: Arc<OutputSink>,
    stream: Stream,
}

/// Readiness reported to the guest; any amount is accepted (and possibly dropped).
const WRITE_BUDGET: usize = 64 * 1024;

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(GuestOutput {
            sink: self.sink.clone(),
            stream: self.stream,
        })
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(GuestOutput {
            sink: self.sink.clone(),
            stream: self.stream,
        })
    }
}

#[async_trait::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.sink.write(self.stream, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_BUDGET)
    }
}

impl tokio::io::AsyncWrite for GuestOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.sink.write(self.stream, buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

const CLOCK_RESOLUTION: Duration = Duration::from_millis(1);

fn round_down(duration: Duration) -> Duration {
    Duration::from_millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

struct CoarseWallClock;

impl HostWallClock for CoarseWallClock {
    fn resolution(&self) -> Duration {
        CLOCK_RESOLUTION
    }

    fn now(&self) -> Duration {
        round_down(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        )
    }
}

struct CoarseMonotonicClock {
    start: Instant,
}

impl HostMonotonicClock for CoarseMonotonicClock {
    fn resolution(&self) -> u64 {
        CLOCK_RESOLUTION.as_nanos() as u64
    }

    fn now(&self) -> u64 {
        u64::try_from(round_down(self.start.elapsed()).as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_over_the_cap_is_dropped_and_counted() {
        let sink = OutputSink::new(Arc::from("ext"), 10);
        sink.write(Stream::Stdout, b"hello\nworld\n");
        assert_eq!(sink.dropped(), 2);
        sink.log(tracing::Level::INFO, "more");
        assert_eq!(sink.dropped(), 6);
        sink.finish();
    }

    #[test]
    fn log_cuts_on_char_boundaries() {
        let sink = OutputSink::new(Arc::from("ext"), 3);
        sink.log(tracing::Level::INFO, "éé"); // 4 bytes; 3 admitted, cut back to 2
        assert_eq!(sink.dropped(), 2);
        sink.log(tracing::Level::INFO, "a");
        assert_eq!(
            sink.dropped(),
            2,
            "the byte given back to the budget is usable"
        );
    }

    #[test]
    fn memory_limiter_refuses_and_remembers() {
        let mut limiter = MemoryLimiter::new(1024);
        assert!(limiter.memory_growing(0, 1024, None).unwrap());
        assert!(!limiter.refused);
        assert!(!limiter.memory_growing(1024, 2048, None).unwrap());
        assert!(limiter.refused);
    }
}
