//! DNS-rebinding protection for every route that serves data: the `Host` the client addressed
//! and, when a browser sends one, the page's `Origin` must be on the configured lists.
//!
//! A local server is reachable from any web page the user opens. A page cannot choose the
//! `Origin` its browser sends, and after a DNS rebinding its requests still carry the
//! attacker's name in `Host`; refusing both closes the hole without hindering non-browser
//! clients, which send no `Origin`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::error::reject;
use crate::config::Config;

/// The `Host` and `Origin` values a server accepts, parsed once from the configuration.
#[derive(Debug, Clone)]
pub struct RequestGuard {
    hosts: Option<Vec<HostPattern>>,
    origins: Option<Vec<OriginPattern>>,
}

#[derive(Debug, Clone, PartialEq)]
struct HostPattern {
    host: String,
    /// `None` matches any port.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq)]
struct OriginPattern {
    scheme: String,
    host: String,
    /// `None` matches any port.
    port: Option<u16>,
}

/// The loopback origins accepted when `http.allowed_origins` is empty.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

impl RequestGuard {
    /// The policy of `config.http`; fails on an entry that is not a host or an origin.
    pub fn from_config(config: &Config) -> anyhow::Result<Self> {
        let hosts = if config.http.allowed_hosts.iter().any(|host| host == "*") {
            None
        } else {
            let names = if config.http.allowed_hosts.is_empty() {
                default_hosts(config)
            } else {
                config.http.allowed_hosts.clone()
            };
            let parsed = names
                .iter()
                .enumerate()
                .map(|(index, name)| {
                    parse_host(name).ok_or_else(|| {
                        anyhow::anyhow!(
                            "invalid configuration: http.allowed_hosts[{index}] = {name:?} is not \
                             a host name or `host:port`"
                        )
                    })
                })
                .collect::<anyhow::Result<_>>()?;
            Some(parsed)
        };
        let origins = if config
            .http
            .allowed_origins
            .iter()
            .any(|origin| origin == "*")
        {
            None
        } else {
            let configured = &config.http.allowed_origins;
            let parsed = if configured.is_empty() {
                LOOPBACK_ORIGINS
                    .iter()
                    .filter_map(|origin| parse_origin(origin))
                    .collect()
            } else {
                configured
                    .iter()
                    .enumerate()
                    .map(|(index, origin)| {
                        parse_origin(origin).ok_or_else(|| {
                            anyhow::anyhow!(
                                "invalid configuration: http.allowed_origins[{index}] = \
                                 {origin:?} is not an origin such as `https://app.example.com` \
                                 or `http://localhost:*`"
                            )
                        })
                    })
                    .collect::<anyhow::Result<_>>()?
            };
            Some(parsed)
        };
        Ok(RequestGuard { hosts, origins })
    }

    /// `Ok` when the request may be served, else what to tell the client.
    pub fn check(&self, headers: &HeaderMap, authority: Option<&str>) -> Result<(), String> {
        if let Some(allowed) = &self.hosts {
            let presented = headers
                .get(header::HOST)
                .and_then(|value| value.to_str().ok())
                .or(authority);
            let Some(presented) = presented else {
                return Err("the request has no Host header".into());
            };
            let accepted = parse_host(presented)
                .is_some_and(|host| allowed.iter().any(|pattern| pattern.matches(&host)));
            if !accepted {
                return Err(format!(
                    "Host {presented:?} is not served here (DNS-rebinding protection); if this \
                     server is meant to be reached under that name, add it to \
                     http.allowed_hosts"
                ));
            }
        }
        if let Some(allowed) = &self.origins
            && let Some(origin) = headers.get(header::ORIGIN)
        {
            let origin = origin.to_str().unwrap_or("<not text>");
            let accepted = parse_origin(origin)
                .is_some_and(|origin| allowed.iter().any(|pattern| pattern.matches(&origin)));
            if !accepted {
                return Err(format!(
                    "Origin {origin:?} may not call this server (browser pages need to be \
                     listed in http.allowed_origins)"
                ));
            }
        }
        Ok(())
    }
}

/// Middleware: refuses a request whose `Host` or `Origin` is not accepted, with 403.
pub async fn check_host_and_origin(
    State(guard): State<Arc<RequestGuard>>,
    request: Request,
    next: Next,
) -> Response {
    match guard.check(
        request.headers(),
        request.uri().authority().map(|a| a.as_str()),
    ) {
        Ok(()) => next.run(request).await,
        Err(message) => {
            tracing::info!(path = %request.uri().path(), %message, "refused a request");
            reject(
                request.uri().path(),
                StatusCode::FORBIDDEN,
                "forbidden",
                message,
            )
        }
    }
}

/// The loopback names, plus the listen address when it is a specific non-loopback one.
fn default_hosts(config: &Config) -> Vec<String> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()];
    let ip = config.listen.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(match ip {
            std::net::IpAddr::V4(v4) => v4.to_string(),
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        });
    }
    hosts
}

impl HostPattern {
    fn matches(&self, presented: &HostPattern) -> bool {
        self.host == presented.host && (self.port.is_none() || self.port == presented.port)
    }
}

impl OriginPattern {
    fn matches(&self, presented: &OriginPattern) -> bool {
        self.scheme == presented.scheme
            && self.host == presented.host
            && (self.port.is_none() || self.port == presented.port)
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address, lower-cased.
fn parse_host(text: &str) -> Option<HostPattern> {
    let text = text.trim().to_ascii_lowercase();
    if text.is_empty() {
        return None;
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?.parse().ok()?),
        };
        (format!("[{inside}]"), port)
    } else if text.matches(':').count() > 1 {
        // A bare IPv6 address, as written in configuration.
        (format!("[{text}]"), None)
    } else if let Some((host, port)) = text.split_once(':') {
        (host.to_owned(), Some(port.parse().ok()?))
    } else {
        (text, None)
    };
    let valid = host.len() <= 255
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'[' | b']' | b':')
        });
    valid.then_some(HostPattern { host, port })
}

/// `scheme://host[:port]`; a `:*` port matches any port. The default port of the scheme
/// stands in when a presented origin names none.
fn parse_origin(text: &str) -> Option<OriginPattern> {
    let text = text.trim().to_ascii_lowercase();
    let (scheme, rest) = text.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    {
        return None;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (authority, any_port) = match rest.strip_suffix(":*") {
        Some(authority) => (authority, true),
        None => (rest, false),
    };
    let mut host = parse_host(authority)?;
    if any_port {
        host.port = None;
    } else if host.port.is_none() {
        host.port = match scheme {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
    }
    Some(OriginPattern {
        scheme: scheme.to_owned(),
        host: host.host,
        port: host.port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard(edit: impl FnOnce(&mut Config)) -> RequestGuard {
        let mut config = Config::default();
        edit(&mut config);
        RequestGuard::from_config(&config).expect("valid guard")
    }

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).expect("host"));
        if let Some(origin) = origin {
            headers.insert(
                header::ORIGIN,
                HeaderValue::from_str(origin).expect("origin"),
            );
        }
        headers
    }

    #[test]
    fn loopback_hosts_and_pages_pass_by_default_and_others_do_not() {
        let guard = guard(|_| {});
        for host in ["localhost:7878", "127.0.0.1:1", "[::1]:7878", "LOCALHOST"] {
            assert!(guard.check(&headers(host, None), None).is_ok(), "{host}");
        }
        assert!(
            guard
                .check(
                    &headers("127.0.0.1:7878", Some("http://127.0.0.1:7878")),
                    None
                )
                .is_ok()
        );
        assert!(
            guard
                .check(&headers("localhost", Some("https://localhost")), None)
                .is_ok()
        );
        let refused = guard
            .check(&headers("attacker.example:7878", None), None)
            .unwrap_err();
        assert!(refused.contains("http.allowed_hosts"), "{refused}");
        let refused = guard
            .check(
                &headers("127.0.0.1:7878", Some("https://evil.example")),
                None,
            )
            .unwrap_err();
        assert!(refused.contains("http.allowed_origins"), "{refused}");
        assert!(
            guard
                .check(&headers("127.0.0.1", Some("null")), None)
                .is_err()
        );
        assert!(guard.check(&HeaderMap::new(), None).is_err());
        assert!(
            guard
                .check(&HeaderMap::new(), Some("localhost:7878"))
                .is_ok(),
            "HTTP/2 requests carry the authority in the URI"
        );
    }

    #[test]
    fn configured_lists_replace_the_defaults_and_ports_are_honoured() {
        let guard = guard(|config| {
            config.http.allowed_hosts = vec!["memory.example.com:8443".into()];
            config.http.allowed_origins = vec!["https://app.example.com".into()];
        });
        assert!(
            guard
                .check(
                    &headers(
                        "memory.example.com:8443",
                        Some("https://app.example.com:443")
                    ),
                    None
                )
                .is_ok()
        );
        assert!(
            guard
                .check(&headers("memory.example.com:9000", None), None)
                .is_err()
        );
        assert!(guard.check(&headers("localhost", None), None).is_err());
        assert!(
            guard
                .check(
                    &headers(
                        "memory.example.com:8443",
                        Some("https://app.example.com:444")
                    ),
                    None
                )
                .is_err()
        );
        let open = self::guard(|config| {
            config.http.allowed_hosts = vec!["*".into()];
            config.http.allowed_origins = vec!["*".into()];
        });
        assert!(
            open.check(&headers("anything:1", Some("https://x.example")), None)
                .is_ok()
        );
    }

    #[test]
    fn a_specific_listen_address_is_accepted_as_host() {
        let guard = guard(|config| config.listen = "10.1.2.3:7878".parse().expect("addr"));
        assert!(guard.check(&headers("10.1.2.3:7878", None), None).is_ok());
        assert!(guard.check(&headers("10.1.2.4:7878", None), None).is_err());
    }

    #[test]
    fn malformed_entries_are_configuration_errors() {
        let mut config = Config::default();
        config.http.allowed_origins = vec!["app.example.com".into()];
        let error = RequestGuard::from_config(&config).unwrap_err().to_string();
        assert!(error.contains("http.allowed_origins[0]"), "{error}");
        let mut config = Config::default();
        config.http.allowed_hosts = vec!["bad host".into()];
        let error = RequestGuard::from_config(&config).unwrap_err().to_string();
        assert!(error.contains("http.allowed_hosts[0]"), "{error}");
    }
}
