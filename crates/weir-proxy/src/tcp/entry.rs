//! A `mode tcp` client's task: the prologue (PROXY header, TLS), the
//! `tcp-request` phase, the server connection (with the client's first
//! bytes read meanwhile), forwarding, and the log line.

use super::rules::{self, admit, Decision, Subject};
use crate::conn::Conn;
use crate::connect::{self, Attempts};
use crate::http::rules::Vars;
use crate::log::LogRecord;
use crate::session::{finish, log_session, ms, secure, wall_now, Accepted};
use crate::state::{BackendRt, FrontendId, ServerId, Shared};
use crate::stats::Ctr;
use crate::term::{Cause, State, Term};
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_config::model::SpoeEvent;
use weir_rules::TcpRuleSet;

/// Serves one accepted `mode tcp` client until both sides are closed, then
/// logs it. Counters (`actconn`, frontend connections) were taken by the
/// acceptor and are released here.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub fn run(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
) -> impl std::future::Future<Output = ()> {
    // Not an `async fn`: its arguments would be stored twice in the
    // task (rustc keeps a copy of each); a block captures them once.
    async move {
        let accept_wall = wall_now();
        let started = crate::clock::now();
        let mut vars = Vars::new(&sh.proc_vars);
        let Some(initial) =
            rules::open(&sh, fe_idx, &client, &mut acc, &mut vars, accept_wall).await
        else {
            finish(&sh, fe_idx, &acc);
            return;
        };
        let Some((client, initial)) =
            Box::pin(secure(&sh, fe_idx, client, &acc, initial, accept_wall)).await
        else {
            finish(&sh, fe_idx, &acc);
            return;
        };
        if !admit(
            &sh,
            fe_idx,
            &client,
            &mut acc,
            &mut vars,
            TcpRuleSet::Session,
        ) {
            finish(&sh, fe_idx, &acc);
            return;
        }
        // SPOE engines' messages of the session's start, then of the
        // content rules' (the session waits for the agents).
        let fe_px = sh.proxy(sh.frontend(fe_idx).proxy);
        if !fe_px.spoe.is_empty() {
            let ctx = crate::http::rules::ExCtx {
                vars: Some(&vars),
                payload: Some((initial.as_slice(), true)),
                src: acc.peer,
                dst: acc.local,
                ..rules::l4_view(&sh, fe_idx, &client)
            };
            for ev in [SpoeEvent::ClientSession, SpoeEvent::FrontendTcpRequest] {
                Box::pin(crate::spoe::on_event(&sh, fe_px, ev, &ctx)).await;
            }
        }
        // `tcp-request content` rules, on the client's first bytes as
        // they come (up to `tcp-request inspect-delay`).
        let mut initial = initial;
        let d = Box::pin(inspect(
            &sh,
            fe_idx,
            &client,
            &mut acc,
            &mut vars,
            &mut initial,
        ))
        .await;
        if let Decision::Service(name) = &d {
            let rec = crate::session::record(&sh, fe_idx, &acc, accept_wall);
            Box::pin(lua_service(
                &sh, fe_idx, client, &acc, vars, initial, name, rec, started,
            ))
            .await;
            return;
        }
        // A refusal wins over a switch to HTTP (a backend in `mode http`).
        if matches!(d, Decision::Reject | Decision::Drop) {
            if d == Decision::Drop {
                client.set_reset_on_close();
            }
            let mut rec = crate::session::record(&sh, fe_idx, &acc, accept_wall);
            sh.frontend(fe_idx).counters.add(Ctr::ReqDenied, 1);
            // What was read counts on the entries tracked.
            vars.track
                .count(weir_stick::Event::BytesIn(initial.len() as u64));
            note_samples(&sh, fe_idx, &client, &acc, None, &vars, &mut rec);
            refused(&sh, fe_idx, &mut rec, &acc, started);
            return;
        }
        let switch = match d {
            Decision::SwitchHttp(p) => Some(p),
            _ if http_backend(&sh, fe_idx, &acc, &client, &initial, &vars) => Some(None),
            _ => None,
        };
        if let Some(proto) = switch {
            Box::pin(go_http(
                sh,
                fe_idx,
                client,
                acc,
                initial,
                accept_wall,
                vars,
                proto,
            ))
            .await;
            return;
        }
        // The session's details stay here, lent (not a second copy).
        run_tcp(
            sh.clone(),
            fe_idx,
            client,
            &acc,
            initial,
            accept_wall,
            started,
            vars,
        )
        .await;
    }
}

/// Whether the backend the client goes to is an HTTP one (the client then
/// goes on in HTTP, as with haproxy's implicit upgrade).
fn http_backend(
    sh: &Shared,
    fe_idx: FrontendId,
    acc: &Accepted,
    client: &Conn,
    initial: &[u8],
    vars: &Vars,
) -> bool {
    if !sh.frontend(fe_idx).reaches_http {
        return false;
    }
    let l4 = crate::http::rules::L4Ctx {
        src: acc.peer,
        dst: acc.local,
        tls: client.tls_info(),
        payload: initial,
        vars: Some(vars),
        tables: &sh.tables,
        frontend: &sh.frontend(fe_idx).name,
    };
    sh.select_backend(fe_idx, &l4)
        .is_some_and(|b| sh.proxy(b.proxy).mode == weir_config::Mode::Http)
}

/// A `mode tcp` client going on in HTTP (`switch-mode http [proto …]`, or
/// an HTTP backend): its bytes so far are the start of its first request,
/// its variables carry over. `proto h2` serves HTTP/2 at once; otherwise
/// HTTP/1.1, or HTTP/2 from its preface unless `proto h1`. A `bind …
/// proto none` client is closed instead.
#[allow(clippy::too_many_arguments)]
async fn go_http(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
    vars: Vars,
    proto: Option<bool>,
) {
    if acc.bind.no_http {
        client.set_reset_on_close();
        finish(&sh, fe_idx, &acc);
        return;
    }
    acc.switched = Some(proto != Some(false));
    let h2 = proto == Some(true);
    let ex =
        crate::http::entry::exchanges(&sh, fe_idx, &client, &acc, initial, accept_wall, vars, h2);
    let asleep = Box::pin(ex).await;
    if !crate::http::entry::after(&sh, fe_idx, client, &acc, accept_wall, asleep) {
        finish(&sh, fe_idx, &acc);
    }
}

/// The frontend's `tcp-request content` rules. With `tcp-request
/// inspect-delay`, a rule whose condition could change with more of the
/// client's bytes waits for them (read into `initial`, which then goes to
/// the server first) until the delay ends, the buffer is full or the
/// client stops sending; then it is decided on what came.
async fn inspect(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &mut Accepted,
    vars: &mut Vars,
    initial: &mut Vec<u8>,
) -> Decision {
    let px = sh.proxy(sh.frontend(fe_idx).proxy);
    let content = &px.tcp.content;
    if content.is_empty() {
        return Decision::Go;
    }
    vars.rules_of(sh, px);
    let deadline = px.tcp.inspect_delay.map(|d| crate::clock::now() + d);
    let mut ended = false;
    let mut from = 0;
    loop {
        let fin = ended
            || initial.len() >= sh.bufsize
            || deadline.is_none_or(|d| crate::clock::now() >= d);
        let more = std::sync::atomic::AtomicBool::new(false);
        // HTTP fetches read a whole request head found in the payload, as
        // haproxy's do in `mode tcp`.
        let head = http_head(initial);
        let view = crate::http::rules::ExCtx {
            payload: Some((initial.as_slice(), fin)),
            more: Some(&more),
            req: head.as_ref(),
            ..rules::l4_view(sh, fe_idx, client)
        };
        let mut subj = Subject {
            resolve: None,
            lua: None,
            spoe: None,
            peer: &mut acc.peer,
            local: &mut acc.local,
            expect_proxy: None,
            vars,
        };
        match rules::run_resolving(sh, TcpRuleSet::Content, content, from, &view, &mut subj).await {
            Ok(d) => return d,
            Err(i) => from = i,
        }
        let read = read_more(client, initial, sh.bufsize);
        // (Without a delay the payload was final: no read comes here.)
        let Some(d) = deadline else {
            return Decision::Go;
        };
        // The client's end (or an error) makes the payload final; the
        // deadline too, on the next turn.
        if let Ok(Ok(0) | Err(_)) = tokio::time::timeout_at(d, read).await {
            ended = true;
        }
    }
}

/// Appends what the client sends next to `buf` (up to `cap` bytes in
/// all); 0 at its end.
async fn read_more(client: &Conn, buf: &mut Vec<u8>, cap: usize) -> std::io::Result<usize> {
    loop {
        std::future::poll_fn(|cx| client.poll_read_ready(cx)).await?;
        let at = buf.len();
        buf.resize(cap.max(at + 1), 0);
        let r = client.try_recv(buf.get_mut(at..).unwrap_or_default());
        buf.truncate(at + *r.as_ref().unwrap_or(&0));
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            r => return r,
        }
    }
}

/// Ends a session refused before any server (`PR`: no backend, or a
/// `tcp-request content` rule): counted, logged, let go.
/// `tcp-request content use-service lua.<name>`: the script answers the
/// client, then the session is logged (as haproxy logs an applet: no
/// queue, connected at once).
#[allow(clippy::too_many_arguments)]
async fn lua_service(
    sh: &Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    acc: &Accepted,
    vars: Vars,
    initial: Vec<u8>,
    name: &str,
    mut rec: LogRecord<'_>,
    started: Instant,
) {
    let st = crate::lua::TxnState {
        fe: Some(fe_idx),
        src: acc.peer,
        dst: acc.local,
        vars: Some(vars),
        ..Default::default()
    };
    let io = crate::conn_io::ConnIo::new(Box::new(client), Vec::new());
    let (st, sent) = crate::lua::tcp_service(sh, name, st, io, initial).await;
    rec.tw = 0;
    rec.tc = 0;
    rec.th = 0;
    rec.term = Term::NORMAL;
    rec.bytes_out = sent;
    rec.tt = ms(crate::clock::elapsed(started));
    // The log line's samples see the variables the script set.
    let fe_px = sh.proxy(sh.frontend(fe_idx).proxy);
    st.with_ctx(sh, |ctx| {
        crate::http::samples::log_samples(fe_px, &mut rec, ctx)
    });
    crate::stats::count(sh, fe_idx, None, None, &rec, false);
    log_session(sh, fe_idx, &rec);
    finish(sh, fe_idx, acc);
}

fn refused(
    sh: &Shared,
    fe_idx: FrontendId,
    rec: &mut LogRecord<'_>,
    acc: &Accepted,
    started: Instant,
) {
    rec.term = Term::new(Cause::Proxy, State::Request);
    rec.tt = ms(crate::clock::elapsed(started));
    crate::stats::count(sh, fe_idx, None, None, rec, false);
    log_session(sh, fe_idx, rec);
    finish(sh, fe_idx, acc);
}

/// The `mode tcp` part of a session: server connection, forwarding, log.
#[allow(clippy::too_many_arguments, clippy::manual_async_fn)] // see inside
fn run_tcp(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    acc: &Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
    started: Instant,
    mut vars: Vars,
) -> impl std::future::Future<Output = ()> + use<'_> {
    // Not an `async fn`: its arguments would be stored twice in every
    // session's task (rustc keeps a copy of each); a block captures them
    // once.
    async move {
        let mut initial = initial;
        let fe = sh.frontend(fe_idx);
        let mut rec = crate::session::record(&sh, fe_idx, acc, accept_wall);
        let l4 = crate::http::rules::L4Ctx {
            src: acc.peer,
            dst: acc.local,
            tls: client.tls_info(),
            payload: &initial,
            vars: Some(&vars),
            tables: &sh.tables,
            frontend: &fe.name,
        };
        let Some(be) = sh.select_backend(fe_idx, &l4).cloned() else {
            note_samples(&sh, fe_idx, &client, acc, None, &vars, &mut rec);
            refused(&sh, fe_idx, &mut rec, acc, started);
            return;
        };
        let be_px = sh.proxy(be.proxy);
        rec.backend = &be.name;
        crate::sessions::set_target(acc.reg, be.proxy, None);
        let force = crate::connect::force_persist(be_px, &l4);
        let used = crate::connect::use_server(&be, be_px, &l4, force);
        let mut stick = crate::sticky::on_request(&sh, &be, be_px, &l4, force, used.is_some());
        let rdp = rdp_persist(&be, be_px, &initial, force);
        let mut attempts = Attempts {
            persist_to: used.or(rdp).or(stick.server).map(|i| (i, force)),
            ..Attempts::default()
        };
        let key = balance_key(be_px, acc, &l4, &initial);
        note_unique_id(&sh, fe_idx, &client, acc, &be, &vars, &mut rec);
        // A block: what connecting needs is not kept in the state that
        // forwards for the session's whole life.
        let (connected, client_eof) = {
            let sni = be.snis(&l4);
            let watch = Watch {
                client: &client,
                initial: &mut initial,
                abortonclose: sh.proxy(fe.proxy).options.abortonclose || be_px.options.abortonclose,
            };
            let id = rec.unique_id.as_deref().map(str::as_bytes);
            Box::pin(connect_watching(
                &sh,
                &be,
                acc,
                (&key, id),
                &sni,
                watch,
                &mut attempts,
            ))
            .await
        };
        attempts.note(&mut rec, 0);
        vars.unique_id.clone_from(&rec.unique_id);
        let end = Ended {
            sh: &sh,
            fe_idx,
            be: &be,
            acc,
            started,
        };
        let conn = match connected {
            Ok(c) => {
                rec.tc = attempts.tc.map_or(-1, ms);
                c
            }
            Err(fail) => {
                rec.term = fail.term();
                rec.server = be.server_name(attempts.last_srv);
                note_counts(&sh, fe_idx, &be, &mut rec);
                note_samples(&sh, fe_idx, &client, acc, Some(&be), &vars, &mut rec);
                end.log(&mut rec, attempts.last_srv);
                return;
            }
        };
        let srv = be.server(conn.srv);
        stick.store(&be, conn.srv);
        crate::sessions::set_target(acc.reg, be.proxy, Some(conn.srv));
        rec.server = Some(&srv.name);
        rec.server_addr = conn.server_addr;
        rec.source_addr = conn.source_addr;
        note_counts(&sh, fe_idx, &be, &mut rec);
        rec.srvconn = srv.cur_conns.load(Ordering::Relaxed);
        // `tcp-response content` rules: decided once the server is
        // connected, before anything of its is forwarded (on its first
        // bytes under `tcp-response inspect-delay`).
        let here = Here {
            sh: &sh,
            fe_idx,
            be: &be,
            acc,
            client: &client,
        };
        let (d, early) = Box::pin(response_rules(
            here,
            &conn.conn,
            &mut initial,
            client_eof,
            &mut vars,
        ))
        .await;
        note_samples(&sh, fe_idx, &client, acc, Some(&be), &vars, &mut rec);
        if matches!(d, Decision::Reject | Decision::Drop) {
            conn.conn.set_reset_on_close();
            if d == Decision::Drop {
                client.set_reset_on_close();
            }
            rec.term = Term::new(Cause::Proxy, State::Data);
            fe.counters.add(Ctr::RespDenied, 1);
            end.log(&mut rec, Some(conn.srv));
            return;
        }
        if sh.proxy(fe.proxy).options.logasap {
            // Logged now, connected; its end writes no second line.
            rec.tt = ms(crate::clock::elapsed(started));
            rec.early = true;
            log_session(&sh, fe_idx, &rec);
        }
        // What the rules asked of the client's socket.
        crate::conn::apply_sockopts(client.tcp(), &mut vars.sockopts);
        let mut link = link_of(&be, conn.srv, started, accept_wall, &rec);
        if !vars.track.is_empty() {
            link.track = Some(Box::new(std::mem::take(&mut vars.track)));
        }
        if !rec.samples.is_empty() || rec.unique_id.is_some() {
            link.logged = Some(Box::new(super::Logged {
                samples: std::mem::take(&mut rec.samples),
                unique_id: rec.unique_id.take(),
            }));
        }
        drop(rec);
        let start = super::Start::New {
            initial,
            client_eof,
            early,
        };
        super::forward(&sh, fe_idx, client, conn.conn, acc, link, start).await;
    }
}

/// What the balancer hashes for a `mode tcp` session: the key `balance
/// hash` or `balance rdp-cookie` names (empty when absent: round robin),
/// else the client's address (`balance source`).
fn balance_key(
    px: &weir_config::Proxy,
    acc: &Accepted,
    l4: &crate::http::rules::L4Ctx<'_>,
    initial: &[u8],
) -> Vec<u8> {
    use weir_config::BalanceKey;
    match &px.balance_key {
        Some(BalanceKey::RdpCookie(name)) => {
            match weir_rules::payload::rdp_cookie(initial, Some(name)) {
                weir_rules::payload::Rdp::Found(v) => v.to_vec(),
                _ => Vec::new(),
            }
        }
        Some(BalanceKey::Hash(e)) => e.eval(l4).map(|s| s.to_bytes()).unwrap_or_default(),
        _ => match acc.peer.map(|p| p.ip()) {
            Some(IpAddr::V4(a)) => a.octets().to_vec(),
            Some(IpAddr::V6(a)) => a.octets().to_vec(),
            None => Vec::new(),
        },
    }
}

/// `persist rdp-cookie`: the server whose IPv4 address and port the
/// client's `msts` cookie names, when it is up (or persistence is
/// forced).
fn rdp_persist(
    be: &BackendRt,
    px: &weir_config::Proxy,
    initial: &[u8],
    force: bool,
) -> Option<ServerId> {
    use weir_rules::payload::{rdp_cookie, rdp_msts, Rdp};
    let name = px.persist_rdp_cookie.as_deref()?;
    let Rdp::Found(v) = rdp_cookie(initial, Some(name)) else {
        return None;
    };
    let want = rdp_msts(v)?;
    let named = |s: &crate::state::ServerRt| match s.target() {
        crate::state::ServerTarget::Inet { addr, port } => {
            addr.ip() == std::net::IpAddr::V4(*want.ip())
                && matches!(port, weir_config::addr::PortSpec::Fixed(p) if p == want.port())
        }
        crate::state::ServerTarget::Unix(_) => false,
    };
    let (id, _) = be.servers().find(|(_, s)| named(s))?;
    (force || be.set().is_up(id.index())).then_some(id)
}

/// What the log line's and the unique id's `%[…]` samples of a `mode
/// tcp` session see: its addresses, TLS, backend, server and variables.
fn log_view<'a>(
    sh: &'a Shared,
    fe_idx: FrontendId,
    client: &'a Conn,
    acc: &'a Accepted,
    be: Option<&'a BackendRt>,
    vars: &'a Vars,
    srv: Option<&'a str>,
) -> crate::http::rules::ExCtx<'a> {
    crate::http::rules::ExCtx {
        be,
        src: acc.peer,
        dst: acc.local,
        srv,
        vars: Some(vars),
        acc: Some(acc),
        tls: client.tls_info(),
        ..crate::http::rules::ExCtx::bare(sh, fe_idx)
    }
}

/// The log format's `%[…]` samples of a `mode tcp` session, on what its
/// rules saw and set (haproxy takes them as it logs; weir once the
/// session is connected, or as it ends before that).
fn note_samples(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &Accepted,
    be: Option<&BackendRt>,
    vars: &Vars,
    rec: &mut LogRecord<'_>,
) {
    let fe_px = sh.proxy(sh.frontend(fe_idx).proxy);
    if fe_px.log_format.is_none() {
        return;
    }
    let view = log_view(sh, fe_idx, client, acc, be, vars, rec.server);
    crate::http::samples::log_samples(fe_px, rec, &view);
}

/// The session's `unique-id-format` value (`%ID`, the `unique-id` fetch,
/// a PROXY v2 header's TLV), made once its backend is known.
fn note_unique_id(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &Accepted,
    be: &BackendRt,
    vars: &Vars,
    rec: &mut LogRecord<'_>,
) {
    let fe_px = sh.proxy(sh.frontend(fe_idx).proxy);
    let Some(f) = &fe_px.http.unique_id_format else {
        return;
    };
    let view = log_view(sh, fe_idx, client, acc, Some(be), vars, None);
    rec.unique_id = Some(crate::http::samples::unique_id(f, rec, &view));
}

/// How a session that ends before forwarding is accounted.
struct Ended<'a> {
    sh: &'a Shared,
    fe_idx: FrontendId,
    be: &'a BackendRt,
    acc: &'a Accepted,
    started: Instant,
}

impl Ended<'_> {
    /// Counts, logs and ends the session (on server `srv`, if any).
    fn log(&self, rec: &mut LogRecord<'_>, srv: Option<ServerId>) {
        rec.tt = ms(crate::clock::elapsed(self.started));
        crate::stats::count(self.sh, self.fe_idx, Some(self.be), srv, rec, false);
        log_session(self.sh, self.fe_idx, rec);
        finish(self.sh, self.fe_idx, self.acc);
    }
}

/// The connection counts of the log line, as they are now.
fn note_counts(sh: &Shared, fe_idx: FrontendId, be: &BackendRt, rec: &mut LogRecord<'_>) {
    rec.actconn = sh.actconn.load(Ordering::Relaxed);
    rec.feconn = sh.frontend(fe_idx).conns.load(Ordering::Relaxed);
    rec.beconn = be.conns.load(Ordering::Relaxed);
}

/// The client, watched while its server connection is made.
struct Watch<'a> {
    client: &'a Conn,
    /// Client bytes read meanwhile (up to a buffer).
    initial: &'a mut Vec<u8>,
    /// `option abortonclose`: a client that leaves aborts the attempt.
    abortonclose: bool,
}

/// Connects to a server of `be` while reading the client's first bytes,
/// so that a client that leaves is noticed: with `option abortonclose` it
/// aborts the attempt (`CQ`/`CC`), otherwise its FIN is passed on once
/// connected, as HAProxy does (the second value: the client already
/// closed its side).
async fn connect_watching(
    sh: &Shared,
    be: &BackendRt,
    acc: &Accepted,
    (key, unique_id): (&[u8], Option<&[u8]>),
    sni: &[Option<String>],
    w: Watch<'_>,
    attempts: &mut Attempts,
) -> (Result<connect::Connected, connect::ConnectFail>, bool) {
    use connect::ConnectFail;
    let be_px = sh.proxy(be.proxy);
    let (mut left_early, mut client_eof) = (false, false);
    // A block: the attempt borrows `attempts` until it ends.
    let r = {
        let mut no_reuse = |_| None;
        let pp = connect::ProxySource {
            src: acc.peer,
            dst: acc.local,
            authority: acc.authority(w.client.tls_info()),
            unique_id,
            tls: w.client.tls_info(),
        };
        let attempt = connect::connect::<Conn>(
            be,
            be_px,
            key,
            acc.local,
            attempts,
            &mut no_reuse,
            sni,
            &pp,
            false,
        );
        tokio::pin!(attempt);
        let mut watching = true;
        let abort = ConnectFail::ClientAbort { queued: false };
        loop {
            tokio::select! {
                r = &mut attempt => break r,
                _ = crate::sessions::killed(sh, acc.reg) => break Err(ConnectFail::Killed),
                ev = read_early(w.client, w.initial, sh.bufsize), if watching => match ev {
                    Early::More => {}
                    Early::Full => watching = false,
                    Early::Eof if w.abortonclose => {
                        left_early = true;
                        break Err(abort);
                    }
                    Early::Eof => {
                        client_eof = true;
                        watching = false;
                    }
                    Early::Error => {
                        left_early = true;
                        break Err(abort);
                    }
                },
            }
        }
    };
    let r = match r {
        Err(ConnectFail::ClientAbort { .. }) if left_early => Err(ConnectFail::ClientAbort {
            queued: attempts.last_srv.is_none(),
        }),
        r => r,
    };
    (r, client_eof)
}

/// Where a session's rules run: its frontend, backend and client.
#[derive(Clone, Copy)]
struct Here<'a> {
    sh: &'a Shared,
    fe_idx: FrontendId,
    be: &'a BackendRt,
    acc: &'a Accepted,
    client: &'a Conn,
}

/// The backend's `tcp-response content` rules. With `tcp-response
/// inspect-delay`, the client's bytes read so far go to the server, and a
/// rule whose condition could change with more of the server's bytes
/// waits for them (until the delay ends, the buffer is full or the server
/// stops sending); what was read goes to the client first.
async fn response_rules(
    h: Here<'_>,
    server: &Conn,
    initial: &mut Vec<u8>,
    client_eof: bool,
    vars: &mut Vars,
) -> (Decision, super::Early) {
    let be_px = h.sh.proxy(h.be.proxy);
    let rules = &be_px.tcp.response;
    vars.rules_of(h.sh, be_px);
    let mut early = super::Early {
        client_eof,
        ..super::Early::default()
    };
    let Some(delay) = be_px
        .tcp
        .response_inspect_delay
        .filter(|_| !rules.is_empty())
    else {
        let view = rules::l4_view_in(h.sh, h.fe_idx, h.client, Some(h.be));
        return (
            rules::response(rules, &view, h.acc.peer, h.acc.local, vars),
            early,
        );
    };
    let deadline = crate::clock::now() + delay;
    // Set once the delay ran out (not read again from the clock, which a
    // task sees once per poll).
    let mut expired = false;
    let mut from = 0;
    loop {
        // The client's bytes go on to the server meanwhile (the server
        // may be waiting for them before it answers); what did not go
        // stays in `initial` for the forwarding.
        match send_until(server, initial, deadline).await {
            Ok(n) => early.sent += n,
            Err(_) => return (Decision::Go, early),
        }
        let fin = expired || early.server_eof || early.reply.len() >= h.sh.bufsize;
        let more = std::sync::atomic::AtomicBool::new(false);
        let view = crate::http::rules::ExCtx {
            res_payload: Some((early.reply.as_slice(), fin)),
            more: Some(&more),
            ..rules::l4_view_in(h.sh, h.fe_idx, h.client, Some(h.be))
        };
        let (mut peer, mut local) = (h.acc.peer, h.acc.local);
        let mut subj = Subject {
            resolve: None,
            lua: None,
            spoe: None,
            peer: &mut peer,
            local: &mut local,
            expect_proxy: None,
            vars,
        };
        match rules::run_from(TcpRuleSet::Response, rules, from, &view, &mut subj) {
            Ok(d) => return (d, early),
            Err(i) => from = i,
        }
        // (The client is read only while what it sent went on: at most a
        // buffer of it waits here.)
        let take_client = !early.client_eof && initial.is_empty();
        tokio::select! {
            r = read_more(server, &mut early.reply, h.sh.bufsize) => {
                if let Ok(0) | Err(_) = r {
                    early.server_eof = true;
                }
            }
            r = read_more(h.client, initial, h.sh.bufsize), if take_client => {
                if let Ok(0) | Err(_) = r {
                    early.client_eof = true;
                }
            }
            () = tokio::time::sleep_until(deadline) => expired = true,
        }
    }
}

/// Writes `buf` to `server` until `deadline`: what went is taken off
/// `buf` and counted; what the server did not take in time stays.
async fn send_until(
    server: &Conn,
    buf: &mut Vec<u8>,
    deadline: tokio::time::Instant,
) -> std::io::Result<u64> {
    let mut sent = 0;
    while sent < buf.len() {
        let ready = std::future::poll_fn(|cx| server.poll_write_ready(cx));
        match tokio::time::timeout_at(deadline, ready).await {
            Err(_) => break,
            Ok(r) => r?,
        }
        match server.try_send(buf.get(sent..).unwrap_or_default()) {
            Ok(n) => sent += n,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if sent > 0 {
        // Under TLS, what the TLS layer holds goes now (or with the
        // forwarding).
        let _ = tokio::time::timeout_at(deadline, crate::conn::flush(server)).await;
    }
    buf.drain(..sent);
    Ok(sent as u64)
}

/// What the forwarding keeps of the connect phase, for the log line.
fn link_of(
    be: &Arc<BackendRt>,
    srv: ServerId,
    started: Instant,
    accept_wall: Duration,
    rec: &LogRecord<'_>,
) -> super::Link {
    super::Link {
        be: be.clone(),
        srv,
        started,
        accept_wall,
        tw: rec.tw,
        tc: rec.tc,
        retries: rec.retries,
        redispatched: rec.redispatched,
        srv_retries: rec.srv_retries,
        failed_srv: rec.failed_srv,
        srv_queue: rec.srv_queue,
        be_queue: rec.be_queue,
        server_addr: rec.server_addr,
        source_addr: rec.source_addr,
        actconn: rec.actconn,
        feconn: rec.feconn,
        beconn: rec.beconn,
        srvconn: rec.srvconn,
        track: None,
        logged: None,
    }
}

/// The HTTP/1 request head at the start of `payload`, when it is whole
/// and valid.
fn http_head(payload: &[u8]) -> Option<weir_proto::h1::RequestHead> {
    if payload.is_empty() || !payload.first().is_some_and(u8::is_ascii_uppercase) {
        return None;
    }
    let limits = weir_proto::h1::Limits::default();
    weir_proto::h1::parse_request(payload, &limits)
        .ok()
        .flatten()
        .map(|(h, _)| h)
}

/// What reading the client during the connect phase found.
enum Early {
    More,
    Full,
    Eof,
    Error,
}

/// Reads client bytes into `buf` (up to `cap`) while the server connection
/// is being made. Nothing is allocated until the client has sent something.
async fn read_early(client: &Conn, buf: &mut Vec<u8>, cap: usize) -> Early {
    if buf.len() >= cap {
        return Early::Full;
    }
    if std::future::poll_fn(|cx| client.poll_read_ready(cx))
        .await
        .is_err()
    {
        return Early::Error;
    }
    let have = buf.len();
    buf.resize(cap, 0);
    let r = client.try_read(buf.get_mut(have..).unwrap_or_default());
    let got = *r.as_ref().unwrap_or(&0);
    buf.truncate(have + got);
    if buf.is_empty() {
        // Readiness can be spurious: hold no memory for a client that has
        // sent nothing (idle connections are a headline figure).
        *buf = Vec::new();
    }
    match r {
        Ok(0) => Early::Eof,
        Ok(_) if buf.len() >= cap => Early::Full,
        Ok(_) => Early::More,
        Err(e)
            if e.kind() == std::io::ErrorKind::WouldBlock
                || e.kind() == std::io::ErrorKind::Interrupted =>
        {
            Early::More
        }
        Err(_) => Early::Error,
    }
}
