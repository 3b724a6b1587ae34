//! Termination states: how a session ended, as the two letters of HAProxy's
//! logs (the cause, then the state the session was in).

use std::fmt;

/// A session's termination state (`%ts`, the `--`, `SC`, `cD` … of logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    pub cause: Cause,
    pub state: State,
}

/// The first letter: what ended the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Cause {
    /// `-`: it ended normally.
    Normal = b'-',
    /// `C`: the client aborted, or an error on its side.
    Client = b'C',
    /// `S`: the server aborted or refused, or an error on its side.
    Server = b'S',
    /// `P`: the proxy refused (a rule, an invalid message).
    Proxy = b'P',
    /// `L`: answered locally (stats page, redirect, `return`).
    Local = b'L',
    /// `R`: a resource ran out.
    Resource = b'R',
    /// `I`: an internal error.
    Internal = b'I',
    /// `D`: killed because its server went down.
    Down = b'D',
    /// `K`: killed by the administrator or a hard stop.
    Killed = b'K',
    /// `c`: the client timed out.
    ClientTimeout = b'c',
    /// `s`: the server timed out.
    ServerTimeout = b's',
}

/// The second letter: where the session was when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// `-`: after the end of the transfer (a normal end).
    Done = b'-',
    /// `R`: waiting for the request.
    Request = b'R',
    /// `Q`: queued, waiting for a server.
    Queue = b'Q',
    /// `C`: connecting to the server.
    Connect = b'C',
    /// `H`: waiting for the response's headers.
    Headers = b'H',
    /// `D`: transferring data.
    Data = b'D',
    /// `L`: sending the last data, closing.
    Closing = b'L',
    /// `T`: tarpitted.
    Tarpit = b'T',
}

impl Term {
    /// `--`: a normal end.
    pub const NORMAL: Term = Term::new(Cause::Normal, State::Done);

    pub const fn new(cause: Cause, state: State) -> Term {
        Term { cause, state }
    }
    /// The two letters as logged.
    pub fn bytes(self) -> [u8; 2] {
        [self.cause as u8, self.state as u8]
    }
    /// `--`.
    pub fn is_normal(self) -> bool {
        self == Term::NORMAL
    }
    /// The client left or timed out (`C` or `c`).
    pub fn client_side(self) -> bool {
        matches!(self.cause, Cause::Client | Cause::ClientTimeout)
    }
    /// The server failed or timed out (`S` or `s`).
    pub fn server_side(self) -> bool {
        matches!(self.cause, Cause::Server | Cause::ServerTimeout)
    }
}

impl Default for Term {
    fn default() -> Term {
        Term::NORMAL
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b] = self.bytes();
        write!(f, "{}{}", a as char, b as char)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_as_logged() {
        assert_eq!(Term::NORMAL.to_string(), "--");
        assert_eq!(Term::new(Cause::Server, State::Connect).to_string(), "SC");
        assert_eq!(Term::new(Cause::ClientTimeout, State::Data).bytes(), *b"cD");
        assert!(Term::new(Cause::ServerTimeout, State::Headers).server_side());
        assert!(!Term::new(Cause::Proxy, State::Request).client_side());
    }
}

/// A client connection that failed before any request (its PROXY header,
/// its TLS handshake), as HAProxy numbers and words it: `fc_err`,
/// `fc_err_str`, and the message of the line logged for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnError {
    pub code: i64,
    pub text: &'static str,
}

impl ConnError {
    const fn new(code: i64, text: &'static str) -> ConnError {
        ConnError { code, text }
    }
    pub const PRX_EMPTY: ConnError = ConnError::new(
        11,
        "Connection closed while waiting for PROXY protocol header",
    );
    pub const PRX_ABORT: ConnError = ConnError::new(
        12,
        "Connection error while waiting for PROXY protocol header",
    );
    pub const PRX_TIMEOUT: ConnError =
        ConnError::new(13, "Timeout while waiting for PROXY protocol header");
    pub const PRX_TRUNCATED: ConnError =
        ConnError::new(14, "Truncated PROXY protocol header received");
    pub const PRX_NOT_HDR: ConnError = ConnError::new(
        15,
        "Received something which does not look like a PROXY protocol header",
    );
    pub const PRX_BAD_HDR: ConnError =
        ConnError::new(16, "Received an invalid PROXY protocol header");
    pub const PRX_BAD_PROTO: ConnError = ConnError::new(
        17,
        "Received an unhandled protocol in the PROXY protocol header",
    );
    pub const CIP_EMPTY: ConnError = ConnError::new(
        18,
        "Connection closed while waiting for NetScaler Client IP header",
    );
    pub const CIP_ABORT: ConnError = ConnError::new(
        19,
        "Connection error while waiting for NetScaler Client IP header",
    );
    pub const CIP_TIMEOUT: ConnError =
        ConnError::new(20, "Timeout while waiting for a NetScaler Client IP header");
    pub const CIP_TRUNCATED: ConnError =
        ConnError::new(21, "Truncated NetScaler Client IP header received");
    pub const CIP_BAD_MAGIC: ConnError =
        ConnError::new(22, "Received an invalid NetScaler Client IP magic number");
    pub const CIP_BAD_PROTO: ConnError = ConnError::new(
        23,
        "Received an unhandled protocol in the NetScaler Client IP header",
    );
    pub const SSL_EMPTY: ConnError = ConnError::new(24, "Connection closed during SSL handshake");
    pub const SSL_TIMEOUT: ConnError = ConnError::new(26, "Timeout during SSL handshake");
    pub const SSL_HANDSHAKE: ConnError = ConnError::new(34, "SSL handshake failure");

    /// A PROXY header refused.
    pub fn of_proxy(e: &weir_proto::proxy_protocol::ProxyError) -> ConnError {
        use weir_proto::proxy_protocol::ProxyError;
        match e {
            ProxyError::NotProxy => ConnError::PRX_NOT_HDR,
            ProxyError::UnknownProto => ConnError::PRX_BAD_PROTO,
            ProxyError::TooLong | ProxyError::BadV1(_) | ProxyError::BadV2(_) => {
                ConnError::PRX_BAD_HDR
            }
        }
    }

    /// A NetScaler Client IP header refused.
    pub fn of_cip(e: weir_proto::netscaler::CipError) -> ConnError {
        match e {
            weir_proto::netscaler::CipError::BadMagic => ConnError::CIP_BAD_MAGIC,
            weir_proto::netscaler::CipError::BadProto => ConnError::CIP_BAD_PROTO,
        }
    }

    /// Whether the connection timed out (its handshake time is unknown).
    pub fn timed_out(self) -> bool {
        [Self::PRX_TIMEOUT, Self::CIP_TIMEOUT, Self::SSL_TIMEOUT].contains(&self)
    }
}
