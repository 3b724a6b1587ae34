//! systemd's readiness protocol (`-Ws`): state lines sent as datagrams to
//! `$NOTIFY_SOCKET` (a path, or an abstract name after `@`).

use std::os::unix::net::UnixDatagram;

/// Where to notify, read once (and removed from the environment so that
/// workers and programs do not see it).
pub struct Notifier {
    path: Option<String>,
}

impl Notifier {
    pub fn from_env(enabled: bool) -> Notifier {
        let path = std::env::var("NOTIFY_SOCKET").ok().filter(|_| enabled);
        std::env::remove_var("NOTIFY_SOCKET");
        Notifier { path }
    }

    /// Sends `state` (`READY=1`, `RELOADING=1`, `STOPPING=1`, `STATUS=…`).
    pub fn send(&self, state: &str) {
        let Some(path) = &self.path else {
            return;
        };
        let Ok(sock) = UnixDatagram::unbound() else {
            return;
        };
        let _ = match path.strip_prefix('@') {
            Some(name) => {
                use std::os::linux::net::SocketAddrExt;
                std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                    .and_then(|a| sock.send_to_addr(state.as_bytes(), &a))
            }
            None => sock.send_to(state.as_bytes(), path),
        };
    }
}
