//! tracekit's live source: sessions read from an LTTng relay (`lttng-relayd`, or `tracekit
//! relay`) while they are recorded, through LTTng's live viewer protocol.
//!
//! A [`LiveSource`] stands where [`pipeline::FileSource`] stands: `net://RELAY[:PORT]/host/
//! HOST/SESSION` is read as the trace files of that session would be, and its events are
//! pushed into the same sinks (the printer, the analyses, the latency tracker) in time order
//! across streams, as they arrive. [`list_sessions`] answers `net://RELAY[:PORT]`.
//!
//! Order: an event is given out only once every stream of the session either has an event
//! after it or has told (an index's end time, or the live timer's inactivity beacon) that it
//! is quiet through its time, so the order is that of the trace files, only later.
//!
//! With [`LiveOptions::sync`] and several hosts, times are put on one time line by the clock
//! sync of the TCP packets received so far (`sync::live`), and an event waits until every
//! stream is received [`LiveOptions::sync_delay`] past it (see `LiveSource`'s read). A
//! [`Mirror`] keeps a local copy of what is received, for readers that need files.

#![deny(missing_docs)]

mod conn;
pub mod mirror;
mod source;

use std::io;

pub use mirror::Mirror;
pub use relay_proto::viewer::SessionInfo;
pub use source::{LiveOptions, LiveSource};

/// The live port `lttng-relayd` listens on by default.
pub const DEFAULT_PORT: u16 = 5344;

/// Errors of the live source; each names the relay and what was being done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not `net://HOST[:PORT][/host/HOSTNAME/SESSION]`.
    #[error("bad live URL {url:?}: {why}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The relay could not be reached.
    #[error("cannot connect to the relay at {addr}: {source}")]
    Connect {
        /// `host:port`.
        addr: String,
        /// Why.
        source: io::Error,
    },
    /// Reading or writing the connection failed.
    #[error("relay {addr}: {what}: {source}")]
    Io {
        /// `host:port`.
        addr: String,
        /// What was being done.
        what: String,
        /// Why it failed.
        source: io::Error,
    },
    /// The relay's reply is not what the protocol allows (truncated, out of bounds, unknown
    /// status): the connection is given up.
    #[error("relay {addr}: {what}: {why}")]
    Protocol {
        /// `host:port`.
        addr: String,
        /// The reply (which command's).
        what: String,
        /// What is wrong with it.
        why: String,
    },
    /// The relay refused a command.
    #[error("relay {addr}: {what} refused: {why}")]
    Refused {
        /// `host:port`.
        addr: String,
        /// The command.
        what: &'static str,
        /// The relay's reason.
        why: String,
    },
    /// No session of that host and name is on the relay.
    #[error("relay {addr}: no live session {session:?} of host {host:?} (its sessions: {list})")]
    NoSession {
        /// `host:port`.
        addr: String,
        /// The traced host asked for.
        host: String,
        /// The session name asked for.
        session: String,
        /// The sessions the relay has, as `HOST/NAME`.
        list: String,
    },
    /// A trace's metadata could not be read.
    #[error("relay {addr}: metadata of trace {trace:?}: {source}")]
    Metadata {
        /// `host:port`.
        addr: String,
        /// The trace's path on the relay.
        trace: String,
        /// Why.
        source: ctf::Error,
    },
    /// The local copy of the traces ([`Mirror`]) could not be written.
    #[error("live mirror {}: {source}", path.display())]
    Mirror {
        /// The file or directory.
        path: std::path::PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The session's metadata did not come in time.
    #[error("relay {addr}: no metadata for trace {trace:?} after {secs} s")]
    NoMetadata {
        /// `host:port`.
        addr: String,
        /// The trace's path on the relay.
        trace: String,
        /// How long it was waited for.
        secs: u64,
    },
}

/// A parsed `net://` URL, as babeltrace2's `lttng-live` source takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// The relay's host (an IPv6 address without its brackets).
    pub relay: String,
    /// Its live port.
    pub port: u16,
    /// The traced host and session name, when the URL names a session.
    pub session: Option<(String, String)>,
}

impl Url {
    /// Whether `s` is meant as a live URL (`net://`, `net4://`, `net6://`).
    pub fn is_live(s: &str) -> bool {
        ["net://", "net4://", "net6://"]
            .iter()
            .any(|p| s.starts_with(p))
    }

    /// Parses `net[4|6]://HOST[:PORT][/host/HOSTNAME/SESSION]`.
    pub fn parse(s: &str) -> Result<Url, Error> {
        let bad = |why: &str| Error::Url {
            url: s.to_owned(),
            why: why.to_owned(),
        };
        let rest = ["net://", "net4://", "net6://"]
            .iter()
            .find_map(|p| s.strip_prefix(p))
            .ok_or_else(|| bad("it must start with net://, net4:// or net6://"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (relay, port) = if let Some(v6) = authority.strip_prefix('[') {
            let end = v6
                .find(']')
                .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
            let port = v6[end + 1..].strip_prefix(':');
            if port.is_none() && !v6[end + 1..].is_empty() {
                return Err(bad("only :PORT may follow the IPv6 address"));
            }
            (&v6[..end], port)
        } else {
            match authority.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if relay.is_empty() {
            return Err(bad("the relay's host is missing"));
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| bad(&format!("bad port {p:?}")))?,
        };
        let path = path.trim_end_matches('/');
        let session = if path.is_empty() {
            None
        } else {
            let parts: Vec<&str> = path[1..].splitn(3, '/').collect();
            match parts.as_slice() {
                ["host", host, name] if !host.is_empty() && !name.is_empty() => {
                    Some(((*host).to_owned(), (*name).to_owned()))
                }
                _ => return Err(bad("the path must be /host/HOSTNAME/SESSION")),
            }
        };
        Ok(Url {
            relay: relay.to_owned(),
            port,
            session,
        })
    }
}

impl std::fmt::Display for Url {
    /// `net://RELAY[:PORT][/host/H/S]`, the port left out when it is the default.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.relay.contains(':') {
            write!(f, "net://[{}]", self.relay)?;
        } else {
            write!(f, "net://{}", self.relay)?;
        }
        if self.port != DEFAULT_PORT {
            write!(f, ":{}", self.port)?;
        }
        if let Some((h, s)) = &self.session {
            write!(f, "/host/{h}/{s}")?;
        }
        Ok(())
    }
}

/// The sessions of the relay `url` names (its path, if any, is not used).
pub fn list_sessions(url: &Url) -> Result<Vec<SessionInfo>, Error> {
    conn::Conn::open(&url.relay, url.port)?.list_sessions()
}

/// The session list as babeltrace2 prints it for `net://RELAY`: one line per session,
/// `net://RELAY/host/HOST/NAME (timer = µs, N stream(s), M client(s) connected)`.
pub fn format_sessions(url: &Url, sessions: &[SessionInfo]) -> String {
    let relay = if url.relay.contains(':') {
        format!("[{}]", url.relay)
    } else {
        url.relay.clone()
    };
    let port = if url.port == DEFAULT_PORT {
        String::new()
    } else {
        format!(":{}", url.port)
    };
    let mut out = String::new();
    for s in sessions {
        out.push_str(&format!(
            "net://{relay}{port}/host/{}/{} (timer = {}, {} stream(s), {} client(s) connected)\n",
            s.hostname, s.session_name, s.live_timer, s.streams, s.clients
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("net://127.0.0.1/host/box/s").unwrap();
        assert_eq!(u.relay, "127.0.0.1");
        assert_eq!(u.port, DEFAULT_PORT);
        assert_eq!(u.session, Some(("box".into(), "s".into())));
        assert_eq!(u.to_string(), "net://127.0.0.1/host/box/s");
        let u = Url::parse("net6://[::1]:15344").unwrap();
        assert_eq!(u.to_string(), "net://[::1]:15344");
        assert_eq!((u.relay.as_str(), u.port, u.session), ("::1", 15344, None));
        for bad in [
            "file:///x",
            "net://",
            "net://h:0",
            "net://h:99999",
            "net://h/host/x",
            "net://h/session/x/y",
            "net://[::1",
        ] {
            let e = Url::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }
}
