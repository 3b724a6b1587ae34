//! A `mode http` client's task, from accept to close: the prologue (PROXY
//! header, TLS), then HTTP/2 or HTTP/1 exchanges, the client sleeping in
//! the lot ([`super::lot`]) between them.

use super::peer::Peer;
use super::rules::Vars;
use crate::conn::Conn;
use crate::session::{finish, secure, wall_now, Accepted};
use crate::state::{FrontendId, Shared};
use crate::tcp::rules::{admit, open};
use std::sync::Arc;
use std::time::Duration;
use weir_rules::TcpRuleSet;

/// Serves one accepted `mode http` client (see [`crate::http::serve`]).
/// A task of its own, so that an idle keep-alive client carries none of
/// the `mode tcp` session state.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub fn run_http(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
) -> impl std::future::Future<Output = ()> {
    // Not an `async fn`: its arguments would be stored twice in the
    // task (rustc keeps a copy of each); a block captures them once.
    async move {
        let accept_wall = wall_now();
        let mut vars = Vars::new(&sh.proc_vars);
        let initial = open(&sh, fe_idx, &client, &mut acc, &mut vars, accept_wall).await;
        if let Some(initial) = initial.filter(|_| {
            admit(
                &sh,
                fe_idx,
                &client,
                &mut acc,
                &mut vars,
                TcpRuleSet::Session,
            )
        }) {
            let h2 = acc.bind.h2;
            let a = exchanges(&sh, fe_idx, &client, &acc, initial, accept_wall, vars, h2).await;
            if after(&sh, fe_idx, client, &acc, accept_wall, a) {
                return;
            }
        }
        finish(&sh, fe_idx, &acc);
    }
}

/// Takes over a sleeping `mode http` client ([`super::lot`]) where
/// its session stopped.
#[allow(clippy::manual_async_fn)] // as `run_http`
pub(crate) fn wake_http(
    sh: Arc<Shared>,
    s: super::lot::Sleeper,
) -> impl std::future::Future<Output = ()> {
    async move {
        let super::lot::Sleeper {
            sock,
            fe_idx,
            acc,
            accept_wall,
            asleep,
        } = s;
        // Registering again only fails when the system is out of memory:
        // the client is closed then.
        if let Ok(client) = sock.into_conn() {
            if let Some(a) =
                super::wake(&sh, fe_idx, Peer::Conn(&client), &acc, accept_wall, asleep).await
            {
                if super::lot::sleep(&sh, fe_idx, client, acc.clone(), accept_wall, a) {
                    return;
                }
            } else {
                client.close_notify();
            }
        }
        finish(&sh, fe_idx, &acc);
    }
}

/// Serves one accepted `mode http` client of a `bind … ssl` line: the
/// handshake, the exchanges, close_notify. A task type of its own, so that
/// neither kind of client carries room for the other's path.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub fn run_https(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
) -> impl std::future::Future<Output = ()> {
    // Not an `async fn`: its arguments would be stored twice in the
    // task (rustc keeps a copy of each); a block captures them once.
    async move {
        let accept_wall = wall_now();
        let mut vars = Vars::new(&sh.proc_vars);
        let initial = open(&sh, fe_idx, &client, &mut acc, &mut vars, accept_wall).await;
        if let Some(initial) = initial {
            let secured = Box::pin(secure(&sh, fe_idx, client, &acc, initial, accept_wall))
                .await
                .filter(|(client, _)| {
                    admit(
                        &sh,
                        fe_idx,
                        client,
                        &mut acc,
                        &mut vars,
                        TcpRuleSet::Session,
                    )
                });
            if let Some((client, initial)) = secured {
                let alpn_h2 = client.tls_info().and_then(|t| t.alpn.as_deref()) == Some("h2");
                let h2 = alpn_h2 || acc.bind.h2;
                let a = exchanges(&sh, fe_idx, &client, &acc, initial, accept_wall, vars, h2).await;
                if after(&sh, fe_idx, client, &acc, accept_wall, a) {
                    return;
                }
            }
        }
        finish(&sh, fe_idx, &acc);
    }
}

/// The exchanges of an admitted client, over HTTP/2 (`h2`) or HTTP/1.1;
/// the client borrowed, not moved in (moved, the connection was stored
/// twice in the task: 0.7 KB more per idle HTTP/2 client over TLS). What
/// a client that may sleep needs, when it goes idle ([`after`]).
#[allow(clippy::too_many_arguments, clippy::manual_async_fn)] // as `run_http`
pub(crate) fn exchanges<'a>(
    sh: &'a Arc<Shared>,
    fe_idx: FrontendId,
    client: &'a Conn,
    acc: &'a Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
    vars: Vars,
    h2: bool,
) -> impl std::future::Future<Output = Option<super::Asleep>> + 'a {
    async move {
        // A hard stop is watched inside (only while it matters).
        if h2 {
            // Boxed in one statement: a future held in a local across the
            // await would be stored in this task too (3 KB per client).
            let serve = Box::pin(crate::h2::serve(
                sh,
                fe_idx,
                client,
                acc,
                initial,
                accept_wall,
                vars,
            ));
            serve.await;
            return None;
        }
        // Boxed too: an HTTP/2 client's task does not carry HTTP/1.1's
        // state (650 bytes) inline.
        let peer = Peer::Conn(client);
        let serve = Box::pin(super::serve(
            sh,
            fe_idx,
            peer,
            acc,
            initial,
            accept_wall,
            vars,
        ));
        serve.await
    }
}

/// After the exchanges: an idle client goes to sleep in the lot (true:
/// its session lives on there; one that cannot sleep was closed by the
/// lot), another is closed (with close_notify under TLS).
pub(crate) fn after(
    sh: &Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    acc: &Accepted,
    accept_wall: Duration,
    asleep: Option<super::Asleep>,
) -> bool {
    match asleep {
        Some(a) => super::lot::sleep(sh, fe_idx, client, acc.clone(), accept_wall, a),
        None => {
            client.close_notify();
            false
        }
    }
}
