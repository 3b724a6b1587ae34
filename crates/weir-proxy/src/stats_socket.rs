//! The `stats socket` listener. It is bound and accepts connections; its
//! commands (the runtime API) come with the observability work, so every
//! command gets HAProxy's "Unknown command" answer for now.

use crate::listen::Listener;
use crate::state::Shared;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const UNKNOWN: &str = "Unknown command. Please enter one of the following commands only :\n  help           : this message\n  prompt         : toggle interactive mode with prompt\n  quit           : disconnect\n\n";

pub async fn serve(sh: Arc<Shared>, l: Listener) {
    let mut stop = sh.stopping.subscribe();
    match l {
        Listener::Unix(l) => {
            let Ok(l) = tokio::net::UnixListener::from_std(l) else {
                return;
            };
            loop {
                tokio::select! {
                    r = l.accept() => if let Ok((mut s, _)) = r {
                        tokio::spawn(async move {
                            let mut buf = [0u8; 1024];
                            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.read(&mut buf)).await;
                            let _ = s.write_all(UNKNOWN.as_bytes()).await;
                        });
                    },
                    _ = stop.wait_for(|v| *v) => return,
                }
            }
        }
        Listener::Tcp(l) => {
            let Ok(l) = tokio::net::TcpListener::from_std(l) else {
                return;
            };
            loop {
                tokio::select! {
                    r = l.accept() => if let Ok((mut s, _)) = r {
                        tokio::spawn(async move {
                            let mut buf = [0u8; 1024];
                            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.read(&mut buf)).await;
                            let _ = s.write_all(UNKNOWN.as_bytes()).await;
                        });
                    },
                    _ = stop.wait_for(|v| *v) => return,
                }
            }
        }
    }
}
