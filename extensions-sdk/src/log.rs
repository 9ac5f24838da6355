//! Logging to the host log, attributed to this extension.
//!
//! Use the macros: [`trace!`](crate::trace), [`debug!`](crate::debug), [`info!`](crate::info),
//! [`warn!`](crate::warn) and [`error!`](crate::error); they take `format!` arguments. Log lines
//! count against the output cap per callback (64 KiB and 1 024 records), so log summaries, not
//! payloads.

use crate::{LogLevel, sys};

/// Writes one line to the host log.
pub fn write(level: LogLevel, message: &str) {
    sys::log(level, message)
}

/// Logs at `trace` level: `trace!("x = {x}")`.
#[macro_export]
macro_rules! trace {
    ($($arg:tt)+) => {
        $crate::log::write($crate::LogLevel::Trace, &::std::format!($($arg)+))
    };
}

/// Logs at `debug` level: `debug!("x = {x}")`.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)+) => {
        $crate::log::write($crate::LogLevel::Debug, &::std::format!($($arg)+))
    };
}

/// Logs at `info` level: `info!("x = {x}")`.
#[macro_export]
macro_rules! info {
    ($($arg:tt)+) => {
        $crate::log::write($crate::LogLevel::Info, &::std::format!($($arg)+))
    };
}

/// Logs at `warn` level: `warn!("x = {x}")`.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)+) => {
        $crate::log::write($crate::LogLevel::Warn, &::std::format!($($arg)+))
    };
}

/// Logs at `error` level: `error!("x = {x}")`.
#[macro_export]
macro_rules! error {
    ($($arg:tt)+) => {
        $crate::log::write($crate::LogLevel::Error, &::std::format!($($arg)+))
    };
}
