//! Reading a bundle: zstd-decompressed lines of at most a limit (enforced while reading), the
//! check of the whole file import does before writing anything, and the items of a line.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Counts, FORMAT, Header, VERSION, base64};
use crate::error::{MemoryError, Result};
use crate::model::MemoryRecord;

/// Lines of a reader, each at most `limit` bytes: a longer one is an error as soon as `limit`
/// bytes of it were read, so nothing longer is ever buffered.
pub(crate) struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    number: u64,
    limit: usize,
}

#[derive(Debug)]
pub(crate) enum LineError {
    TooLong { line: u64, limit: usize },
    Io { line: u64, error: io::Error },
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R, limit: usize) -> Self {
        Lines {
            reader,
            buf: Vec::new(),
            number: 0,
            limit,
        }
    }

    /// The next line without its `\n` (or `\r\n`), with its number from 1.
    pub fn next_line(&mut self) -> std::result::Result<Option<(u64, &[u8])>, LineError> {
        self.buf.clear();
        let line = self.number + 1;
        let read = (&mut self.reader)
            .take(self.limit as u64 + 2)
            .read_until(b'\n', &mut self.buf)
            .map_err(|error| LineError::Io { line, error })?;
        if read == 0 {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        if self.buf.len() > self.limit {
            return Err(LineError::TooLong {
                line,
                limit: self.limit,
            });
        }
        self.number = line;
        // A long line's buffer is not kept for the short ones after it.
        if self.buf.capacity() > (1 << 20) && self.buf.len() < (1 << 16) {
            self.buf.shrink_to(1 << 16);
        }
        Ok(Some((line, &self.buf)))
    }
}

/// A file whose bytes read so far are counted (compressed bytes, for progress).
pub(crate) struct Counted {
    file: File,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

pub(crate) type BundleLines = Lines<BufReader<zstd::Decoder<'static, BufReader<Counted>>>>;

/// The lines of the bundle at `path`, with the count of compressed bytes read and the file's
/// size.
pub(crate) fn open(path: &Path, limit: usize) -> Result<(BundleLines, Arc<AtomicU64>, u64)> {
    let file = File::open(path).map_err(|error| {
        MemoryError::invalid(format!(
            "cannot open the bundle {}: {error}",
            path.display()
        ))
    })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let read = Arc::new(AtomicU64::new(0));
    let counted = Counted {
        file,
        read: read.clone(),
    };
    let decoder = zstd::Decoder::new(counted).map_err(|error| {
        MemoryError::invalid(format!(
            "cannot read the bundle {}: {error}",
            path.display()
        ))
    })?;
    Ok((
        Lines::new(BufReader::with_capacity(1 << 16, decoder), limit),
        read,
        size,
    ))
}

/// What a line error means for the bundle at `path`, `items` items into it.
pub(crate) fn line_error(path: &Path, error: LineError, items: u64) -> MemoryError {
    let path = path.display();
    MemoryError::invalid(match error {
        LineError::TooLong { line, limit } => format!(
            "line {line} of the bundle {path} is longer than the limit of {limit} bytes; the \
             bundle is corrupt (or was written with a larger limit)"
        ),
        LineError::Io { error, .. } if error.kind() == io::ErrorKind::UnexpectedEof => {
            incomplete(&path, items)
        }
        LineError::Io { line: 1, error } => {
            format!("{path} is not an aeterna bundle (a zstd-compressed JSON Lines file): {error}")
        }
        LineError::Io { line, error } => {
            format!("cannot read line {line} of the bundle {path}: {error}; the file is corrupt")
        }
    })
}

fn incomplete(path: &impl std::fmt::Display, items: u64) -> String {
    format!(
        "the bundle {path} is incomplete: it ends after {items} items without its end line \
         (the file was cut short, or its export did not finish); export it again"
    )
}

/// A serde_json error, described without quoting the data it failed on.
pub(crate) fn describe(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => &message[..at],
        None => &message,
    };
    if message.contains('"') {
        let what = match error.classify() {
            serde_json::error::Category::Io => "unreadable",
            serde_json::error::Category::Syntax => "invalid JSON",
            serde_json::error::Category::Data => "a value of the wrong type",
            serde_json::error::Category::Eof => "truncated JSON",
        };
        format!("{what} at column {}", error.column())
    } else {
        format!("{message} at column {}", error.column())
    }
}

/// The result of reading a whole bundle without writing anything.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub header: Header,
    /// Items between the header and the end line.
    pub items: u64,
    pub counts: Counts,
}

#[derive(Deserialize)]
struct KindOnly<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    table: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct End {
    counts: Counts,
}

/// Reads every line of the bundle at `path`: the header is one this build reads, every line
/// is JSON with a known kind and at most `limit` bytes, the end line is last and counts the
/// items before it.
pub(crate) fn check(path: &Path, limit: usize, read: &AtomicU64) -> Result<Checked> {
    let (mut lines, counted, _) = open(path, limit)?;
    let shown = path.display();
    let first = lines
        .next_line()
        .map_err(|error| line_error(path, error, 0))?;
    let Some((_, first)) = first else {
        return Err(MemoryError::invalid(format!(
            "the bundle {shown} is empty: not an aeterna bundle"
        )));
    };
    let header = header(path, first)?;
    let mut items = 0u64;
    let mut end: Option<Counts> = None;
    loop {
        read.store(counted.load(Ordering::Relaxed), Ordering::Relaxed);
        let next = lines
            .next_line()
            .map_err(|error| line_error(path, error, items))?;
        let Some((number, line)) = next else { break };
        if end.is_some() {
            return Err(MemoryError::invalid(format!(
                "line {number} of the bundle {shown} comes after its end line; the file is corrupt"
            )));
        }
        let kind: KindOnly<'_> = serde_json::from_slice(line).map_err(|error| {
            MemoryError::invalid(format!(
                "line {number} of the bundle {shown} is corrupt: {}",
                describe(&error)
            ))
        })?;
        match kind.kind.as_ref() {
            "memory" => items += 1,
            "row" => {
                let known = kind
                    .table
                    .as_deref()
                    .is_some_and(|table| super::AGENT_TABLES.contains(&table));
                if !known {
                    return Err(MemoryError::invalid(format!(
                        "line {number} of the bundle {shown} is a row of a table aeterna does \
                         not keep"
                    )));
                }
                items += 1;
            }
            "end" => {
                let trailer: End = serde_json::from_slice(line).map_err(|error| {
                    MemoryError::invalid(format!(
                        "line {number} of the bundle {shown} (its end line) is corrupt: {}",
                        describe(&error)
                    ))
                })?;
                end = Some(trailer.counts);
            }
            other => {
                return Err(MemoryError::invalid(format!(
                    "line {number} of the bundle {shown} has an unknown kind `{}`; expected \
                     memory, row or end",
                    other.chars().take(32).collect::<String>()
                )));
            }
        }
    }
    let Some(counts) = end else {
        return Err(MemoryError::invalid(incomplete(&shown, items)));
    };
    let counted: u64 = counts.values().sum();
    if counted != items {
        return Err(MemoryError::invalid(format!(
            "the bundle {shown} is damaged: its end line counts {counted} items, it holds {items}"
        )));
    }
    Ok(Checked {
        header,
        items,
        counts,
    })
}

fn header(path: &Path, line: &[u8]) -> Result<Header> {
    let shown = path.display();
    let not_a_bundle = || {
        MemoryError::invalid(format!(
            "{shown} is not an aeterna bundle: its first line has no \"format\": \"{FORMAT}\""
        ))
    };
    let value: Value = serde_json::from_slice(line).map_err(|_| not_a_bundle())?;
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(not_a_bundle());
    }
    match value.get("version").and_then(Value::as_u64) {
        Some(version) if version > u64::from(VERSION) => {
            return Err(MemoryError::invalid(format!(
                "the bundle {shown} is version {version}; this aeterna ({}) reads bundles up to \
                 version {VERSION}: import it with a newer aeterna",
                env!("CARGO_PKG_VERSION")
            )));
        }
        Some(1..) => {}
        _ => {
            return Err(MemoryError::invalid(format!(
                "the header of the bundle {shown} has no valid \"version\" (1 to {VERSION})"
            )));
        }
    }
    let header: Header = serde_json::from_value(value).map_err(|error| {
        MemoryError::invalid(format!(
            "the header of the bundle {shown} is invalid: {}",
            describe(&error)
        ))
    })?;
    if header.tenant_id.trim().is_empty() {
        return Err(MemoryError::invalid(format!(
            "the header of the bundle {shown} names no tenant_id"
        )));
    }
    Ok(header)
}

/// One item of a bundle.
#[derive(Debug)]
pub(crate) enum Item {
    Memory {
        record: Box<MemoryRecord>,
        /// The stored vector's bytes (little-endian f32s), when the bundle has one.
        vector: Option<Vec<u8>>,
    },
    Row {
        table: String,
        row: Map<String, Value>,
    },
    End,
}

#[derive(Deserialize)]
struct ItemLine {
    kind: String,
    record: Option<MemoryRecord>,
    vector: Option<String>,
    table: Option<String>,
    row: Option<Map<String, Value>>,
}

/// The item of line `number` of the bundle `path`.
pub(crate) fn item(path: &Path, number: u64, line: &[u8]) -> Result<Item> {
    let fail = |what: String| {
        MemoryError::invalid(format!(
            "line {number} of the bundle {}: {what}",
            path.display()
        ))
    };
    let parsed: ItemLine = serde_json::from_slice(line).map_err(|error| fail(describe(&error)))?;
    match parsed.kind.as_str() {
        "memory" => {
            let record = parsed
                .record
                .ok_or_else(|| fail("a memory item without its \"record\"".into()))?;
            if record.content.is_none() {
                return Err(fail("the memory's record has no \"content\"".into()));
            }
            let vector = parsed
                .vector
                .map(|text| base64::decode(&text))
                .transpose()
                .map_err(|error| fail(format!("the memory's \"vector\": {error}")))?;
            Ok(Item::Memory {
                record: Box::new(record),
                vector,
            })
        }
        "row" => Ok(Item::Row {
            table: parsed
                .table
                .ok_or_else(|| fail("a row item without its \"table\"".into()))?,
            row: parsed
                .row
                .ok_or_else(|| fail("a row item without its \"row\"".into()))?,
        }),
        "end" => Ok(Item::End),
        _ => Err(fail("an unknown kind".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &[u8], limit: usize) -> Vec<std::result::Result<(u64, Vec<u8>), String>> {
        let mut lines = Lines::new(text, limit);
        let mut out = Vec::new();
        loop {
            match lines.next_line() {
                Ok(Some((n, line))) => out.push(Ok((n, line.to_vec()))),
                Ok(None) => return out,
                Err(error) => {
                    out.push(Err(format!("{error:?}")));
                    return out;
                }
            }
        }
    }

    #[test]
    fn lines_are_bounded_while_reading() {
        assert_eq!(
            lines_of(b"ab\r\ncd\nef", 2),
            vec![
                Ok((1, b"ab".to_vec())),
                Ok((2, b"cd".to_vec())),
                Ok((3, b"ef".to_vec()))
            ]
        );
        let out = lines_of(b"ab\nabc\nx\n", 2);
        assert_eq!(out[0], Ok((1, b"ab".to_vec())));
        assert_eq!(out[1], Err("TooLong { line: 2, limit: 2 }".into()));
        assert_eq!(
            lines_of(b"abc", 2),
            vec![Err("TooLong { line: 1, limit: 2 }".into())]
        );
    }

    #[test]
    fn json_errors_do_not_quote_the_data() {
        let error = serde_json::from_str::<u32>("\"my secret\"").unwrap_err();
        let text = describe(&error);
        assert!(!text.contains("secret"), "{text}");
        let error = serde_json::from_str::<Value>("{\"a\": tru").unwrap_err();
        assert!(describe(&error).contains("column"), "{}", describe(&error));
    }
}
