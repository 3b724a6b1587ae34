//! The `stats socket` listener. It is bound and accepts connections; its
//! commands (the runtime API) come with the observability work, so every
//! command gets HAProxy's "Unknown command" answer for now.

use crate::listen::Listener;
use crate::state::Shared;
use crate::worker::{accept, AnyListener};
use std::sync::Arc;
use std::time::Duration;

const UNKNOWN: &str = "Unknown command. Please enter one of the following commands only :\n  help           : this message\n  prompt         : toggle interactive mode with prompt\n  quit           : disconnect\n\n";

/// Answers each connection until soft stop. A client that sends nothing is
/// dropped after 10 s; nothing it does can block the workers.
pub async fn serve(sh: Arc<Shared>, l: Listener) {
    let mut stop = sh.stopping.subscribe();
    let Ok(l) = AnyListener::register(l) else {
        return;
    };
    loop {
        tokio::select! {
            r = accept(&l) => if let Ok((c, _, _)) = r {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = tokio::time::timeout(Duration::from_secs(10), c.read(&mut buf)).await;
                    let _ = tokio::time::timeout(Duration::from_secs(10), c.send_all(UNKNOWN.as_bytes())).await;
                });
            },
            _ = stop.wait_for(|v| *v) => return,
        }
    }
}
