//! The locked-down environment of one callback: WASI context, output capture, memory limiter.
//!
//! WASI gets no preopened directories, no environment variables, no arguments, no stdin, no
//! sockets (TCP, UDP and name lookup are all denied), a small cap on random bytes per call, and
//! clocks rounded to the millisecond (enough to time things, too coarse for timing attacks).
//! `wasi:http` is linked (JavaScript runtimes import it for `fetch`) but its outgoing handler
//! refuses every request with `HTTP-request-denied`, so there is still no network.
//! Guest stdout, stderr and `host.log` go to `tracing`, attributed to the extension, up to a byte
//! and a record cap per callback; the rest is dropped, counted and summed up in one line.

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
use wasmtime_wasi_http::{RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks};
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
    pub(crate) http: WasiHttpCtx,
    pub(crate) refuse_http: RefuseHttp,
}

/// The `wasi:http` hooks: every outgoing request is denied before anything leaves the host.
pub(crate) struct RefuseHttp;

/// A future the `wasi:http` implementation awaits.
type HttpFuture<T> = Box<dyn Future<Output = wasmtime_wasi_http::Result<T>> + Send>;

impl WasiHttpHooks for RefuseHttp {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _response_done: HttpFuture<()>,
    ) -> HttpFuture<(http::Response<WasiBody>, HttpFuture<()>)> {
        Box::new(std::future::ready(Err(
            wasmtime_wasi_http::Error::HttpRequestDenied,
        )))
    }
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

/// Per-callback bounds on guest output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputCap {
    /// Bytes of stdout + stderr + `host.log` forwarded.
    pub(crate) bytes: usize,
    /// Log records emitted (lines of stdout or stderr, `host.log` calls), empty ones included.
    pub(crate) records: usize,
}

/// Bytes of the guest's latest stderr output kept for fault messages (a panic message, a
/// JavaScript or Python exception), whether or not they were forwarded.
const STDERR_TAIL_BYTES: usize = 1024;

/// Guest output of one callback, forwarded to `tracing` line by line within a byte and a record
/// budget. What goes over either is dropped, counted, and summed up in one line at the end.
pub(crate) struct OutputSink {
    extension: Arc<str>,
    inner: Mutex<SinkState>,
}

struct SinkState {
    bytes_left: usize,
    records_left: usize,
    dropped_bytes: u64,
    dropped_records: u64,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// The last bytes written to stderr, at most `STDERR_TAIL_BYTES`.
    stderr_tail: Vec<u8>,
}

/// What the cap dropped during one callback.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Dropped {
    pub(crate) bytes: u64,
    pub(crate) records: u64,
}

impl OutputSink {
    pub(crate) fn new(extension: Arc<str>, cap: OutputCap) -> Self {
        Self {
            extension,
            inner: Mutex::new(SinkState {
                bytes_left: cap.bytes,
                records_left: cap.records,
                dropped_bytes: 0,
                dropped_records: 0,
                stdout: Vec::new(),
                stderr: Vec::new(),
                stderr_tail: Vec::new(),
            }),
        }
    }

    /// What was dropped so far because a cap was reached.
    pub(crate) fn dropped(&self) -> Dropped {
        let state = self.inner.lock();
        Dropped {
            bytes: state.dropped_bytes,
            records: state.dropped_records,
        }
    }

    /// The guest's latest stderr output (lossy UTF-8, trimmed), if it wrote any.
    pub(crate) fn stderr_tail(&self) -> Option<String> {
        let state = self.inner.lock();
        let text = String::from_utf8_lossy(&state.stderr_tail);
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// Emits one `host.log` record. Counts against the same budgets as stdout and stderr; an
    /// empty message still takes a record.
    pub(crate) fn log(&self, level: tracing::Level, message: &str) {
        let accepted = {
            let mut state = self.inner.lock();
            // A message with no byte left to forward is dropped whole, record and all.
            let out_of_bytes = !message.is_empty() && state.bytes_left == 0;
            if out_of_bytes {
                state.dropped_records += 1;
            }
            if out_of_bytes || !state.take_record() {
                state.dropped_bytes += message.len() as u64;
                return;
            }
            let take = state.admit(message.len());
            // Cut on a char boundary at or below the admitted length.
            let mut cut = take;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            state.dropped_bytes += (take - cut) as u64;
            state.bytes_left += take - cut;
            &message[..cut]
        };
        emit(&self.extension, Stream::Log, level, accepted);
    }

    fn write(&self, stream: Stream, bytes: &[u8]) {
        let mut lines = Vec::new();
        {
            let mut state = self.inner.lock();
            if let Stream::Stderr = stream {
                state.remember_stderr(bytes);
            }
            let take = state.admit(bytes.len());
            // Lines cut off by the byte cap are dropped records too.
            let cut_lines = bytes[take..].iter().filter(|&&b| b == b'\n').count();
            state.dropped_records += cut_lines as u64;
            let buffer = match stream {
                Stream::Stderr => &mut state.stderr,
                _ => &mut state.stdout,
            };
            buffer.extend_from_slice(&bytes[..take]);
            let mut complete = Vec::new();
            while let Some(newline) = buffer.iter().position(|&b| b == b'\n') {
                complete.push(buffer.drain(..=newline).collect::<Vec<u8>>());
            }
            for line in complete {
                if state.take_record() {
                    lines.push(line);
                } else {
                    state.dropped_bytes += line.len() as u64;
                }
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

    /// Emits unterminated lines and sums up what was dropped. Called when the callback ends.
    pub(crate) fn finish(&self) {
        let mut rests = Vec::new();
        let dropped = {
            let mut state = self.inner.lock();
            for stream in [Stream::Stdout, Stream::Stderr] {
                let rest = std::mem::take(match stream {
                    Stream::Stderr => &mut state.stderr,
                    _ => &mut state.stdout,
                });
                if rest.is_empty() {
                    continue;
                }
                if state.take_record() {
                    rests.push((stream, rest));
                } else {
                    state.dropped_bytes += rest.len() as u64;
                }
            }
            Dropped {
                bytes: state.dropped_bytes,
                records: state.dropped_records,
            }
        };
        for (stream, rest) in rests {
            emit(
                &self.extension,
                stream,
                level_of(stream),
                &String::from_utf8_lossy(&rest),
            );
        }
        if dropped != Dropped::default() {
            tracing::warn!(
                target: "aeterna_host::guest",
                extension = &*self.extension,
                dropped_bytes = dropped.bytes,
                dropped_records = dropped.records,
                "guest output over the per-callback cap was dropped"
            );
        }
    }
}

impl SinkState {
    /// Takes up to `len` bytes from the budget; the rest is counted as dropped.
    fn admit(&mut self, len: usize) -> usize {
        let take = len.min(self.bytes_left);
        self.bytes_left -= take;
        self.dropped_bytes += (len - take) as u64;
        take
    }

    /// Takes one record from the budget, or counts it as dropped.
    fn take_record(&mut self) -> bool {
        if self.records_left == 0 {
            self.dropped_records += 1;
            return false;
        }
        self.records_left -= 1;
        true
    }

    fn remember_stderr(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let keep = STDERR_TAIL_BYTES - bytes.len();
        let drop = self.stderr_tail.len().saturating_sub(keep);
        self.stderr_tail.drain(..drop);
        self.stderr_tail.extend_from_slice(bytes);
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

    fn sink(bytes: usize, records: usize) -> OutputSink {
        OutputSink::new(Arc::from("ext"), OutputCap { bytes, records })
    }

    #[test]
    fn output_over_the_byte_cap_is_dropped_and_counted() {
        let sink = sink(10, 100);
        sink.write(Stream::Stdout, b"hello\nworld\n");
        assert_eq!(
            sink.dropped(),
            Dropped {
                bytes: 2,
                records: 1
            },
            "the line whose end was cut is a dropped record"
        );
        sink.log(tracing::Level::INFO, "more");
        assert_eq!(sink.dropped().bytes, 6);
        assert_eq!(
            sink.dropped().records,
            2,
            "no byte left: the whole record goes"
        );
        sink.finish();
    }

    #[test]
    fn log_cuts_on_char_boundaries() {
        let sink = sink(3, 100);
        sink.log(tracing::Level::INFO, "éé"); // 4 bytes; 3 admitted, cut back to 2
        assert_eq!(sink.dropped().bytes, 2);
        sink.log(tracing::Level::INFO, "a");
        assert_eq!(
            sink.dropped().bytes,
            2,
            "the byte given back to the budget is usable"
        );
    }

    #[test]
    fn every_record_counts_even_an_empty_one() {
        let sink = sink(1024, 3);
        for _ in 0..10 {
            sink.log(tracing::Level::ERROR, "");
        }
        assert_eq!(
            sink.dropped(),
            Dropped {
                bytes: 0,
                records: 7
            }
        );
        sink.write(Stream::Stdout, b"x\ny\n");
        assert_eq!(
            sink.dropped(),
            Dropped {
                bytes: 4,
                records: 9
            }
        );
    }

    #[test]
    fn an_unterminated_line_at_the_end_needs_a_record_too() {
        let sink = sink(1024, 1);
        sink.write(Stream::Stdout, b"a\nrest");
        sink.finish();
        assert_eq!(
            sink.dropped(),
            Dropped {
                bytes: 4,
                records: 1
            }
        );
    }

    #[test]
    fn the_stderr_tail_keeps_the_latest_bytes_even_past_the_cap() {
        let sink = sink(4, 1);
        assert_eq!(sink.stderr_tail(), None);
        sink.write(Stream::Stderr, &vec![b'x'; 5000]);
        sink.write(Stream::Stderr, b"panicked at src/lib.rs:1: boom\n");
        let tail = sink.stderr_tail().unwrap();
        assert!(tail.ends_with("xpanicked at src/lib.rs:1: boom"), "{tail}");
        assert_eq!(tail.len(), STDERR_TAIL_BYTES - 1, "trimmed newline");
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
