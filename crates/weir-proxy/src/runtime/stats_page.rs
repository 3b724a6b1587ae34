//! The stats page of a `mode http` proxy with `stats enable` (or any
//! `stats uri|auth|realm|refresh|admin` line): requests under `stats uri`
//! get the HTML page or its CSV (`;csv`), behind `stats auth` when set;
//! with `stats admin if <cond>` holding, a POSTed form changes servers
//! through the runtime API's commands and redirects to the page with the
//! outcome (`;st=DONE` …).

use crate::http::io::Buf;
use crate::http::peer::Peer;
use crate::http::rules::{local_headers, ExCtx, Local};
use crate::http::service::{Answer, StatsRequest};
use crate::state::Shared;
use crate::term::{Cause, State, Term};
use weir_admin::cli::{AdminState, Command, ServerRef, StatFilter};
use weir_admin::page::{self, PageAction, PageForm, PageInfo, PageRequest};
use weir_config::{Proxy, StatsAction, StatsPage};
use weir_proto::h1::{Framing, RequestHead};

/// Largest admin form body taken.
const MAX_FORM: u64 = 16 * 1024;

fn respond(status: u16, ctype: Option<&str>, extra: &[(String, Vec<u8>)], body: &[u8]) -> Local {
    let mut bytes = local_headers(status, ctype, body.len(), extra);
    bytes.extend_from_slice(body);
    Local {
        bytes,
        status,
        term: Term::new(Cause::Local, State::Request),
        keep: true,
    }
}

/// A 401 asking for Basic credentials in `realm`.
fn challenge(realm: &str) -> Local {
    let realm = format!("Basic realm=\"{}\"", realm.replace('"', "'"));
    let body = b"<html><body><h1>401 Unauthorized</h1>\nYou need a valid user and password to access this content.\n</body></html>\n";
    let extra = [("www-authenticate".to_string(), realm.into_bytes())];
    respond(401, Some("text/html"), &extra, body)
}

fn redirect(uri: &str, code: &str) -> Local {
    respond(
        303,
        None,
        &[("location".into(), format!("{uri};st={code}").into_bytes())],
        b"",
    )
}

/// The stats page as the HTTP layer's service (see `http::service`).
pub(super) fn serve(r: StatsRequest<'_>) -> Answer<'_> {
    Box::pin(answer(
        r.sh, r.client, r.cbuf, r.used, r.req, r.px, r.page, r.ctx,
    ))
}

/// Answers a request for the page; returns the answer and how many bytes
/// of `cbuf` the request took (head and form body).
#[allow(clippy::too_many_arguments)]
async fn answer(
    sh: &Shared,
    client: Peer<'_>,
    cbuf: &mut Buf,
    used: usize,
    req: &RequestHead,
    px: &Proxy,
    page: &StatsPage,
    ctx: &ExCtx<'_>,
) -> (Local, usize) {
    // `stats http-request`: the first rule whose condition holds.
    let hit = page
        .rules
        .iter()
        .find(|r| r.cond.as_ref().is_none_or(|c| c.eval(ctx)));
    match hit.map(|r| &r.action) {
        Some(StatsAction::Deny) => {
            let bytes = crate::http::errors::page(403, false);
            let denied = Local {
                bytes,
                status: 403,
                term: Term::new(Cause::Proxy, State::Request),
                keep: false,
            };
            return (denied, used);
        }
        Some(StatsAction::Auth(realm)) => {
            return (challenge(realm.as_deref().unwrap_or(&page.realm)), used);
        }
        Some(StatsAction::Allow) | None => {}
    }
    if !page.auth.is_empty() {
        let creds = req
            .headers
            .iter()
            .find(|h| h.is("authorization"))
            .and_then(|h| weir_rules::auth::basic_credentials(h.value()));
        let ok = creds.is_some_and(|(u, p)| page.auth.iter().any(|(au, ap)| *au == u && *ap == p));
        if !ok {
            return (challenge(&page.realm), used);
        }
    }
    let admin = page.admin.iter().any(|c| c.eval(ctx));
    if req.method == "POST" {
        let Framing::ContentLength(n) = req.framing else {
            return (redirect(&page.uri, "ERRP"), used);
        };
        if !admin {
            return (redirect(&page.uri, "DENY"), used);
        }
        if n > MAX_FORM {
            return (redirect(&page.uri, "ERRP"), used);
        }
        let n = n as usize;
        // Bounded even when no timeout is configured.
        let fe_t = &sh.proxy(sh.frontend(ctx.fe_idx).proxy).timeouts;
        let t = fe_t
            .http_request
            .or(fe_t.client)
            .or(Some(std::time::Duration::from_secs(10)));
        while cbuf.bytes().len() < used + n {
            match crate::http::io::timed(t, cbuf.fill(client, sh.bufsize)).await {
                Some(Ok(k)) if k > 0 => {}
                _ => return (redirect(&page.uri, "ERRP"), cbuf.bytes().len()),
            }
        }
        let code = match PageForm::parse(cbuf.bytes().get(used..used + n).unwrap_or_default()) {
            Ok(f) => apply(sh, &f),
            Err(code) => code,
        };
        return (redirect(&page.uri, code), used + n);
    }
    let rest = &req.uri[page.uri.len()..];
    let preq = PageRequest::parse(rest);
    let rows: Vec<_> = super::stat_rows(
        sh,
        &StatFilter {
            up: preq.up,
            ..StatFilter::default()
        },
    )
    .into_iter()
    .filter(|r| {
        let name = r.get("pxname").unwrap_or("");
        let configured = page.scope.is_empty()
            || page
                .scope
                .iter()
                .any(|s| s == name || (s == "." && name == px.name));
        configured && preq.in_scope(name)
    })
    .collect();
    if preq.json {
        let body = weir_admin::typed::stat_json(&rows);
        return (
            respond(200, Some("application/json"), &[], body.as_bytes()),
            used,
        );
    }
    if preq.csv {
        let body = weir_admin::stat::csv(&rows);
        return (respond(200, Some("text/plain"), &[], body.as_bytes()), used);
    }
    let notice = preq.status.as_deref().and_then(|st| {
        page::OUTCOMES
            .iter()
            .find(|(c, _)| *c == st)
            .map(|(_, text)| *text)
    });
    let info = PageInfo {
        uri: page.uri.clone(),
        pid: std::process::id(),
        version: if page.hide_version {
            String::new()
        } else {
            env!("CARGO_PKG_VERSION").into()
        },
        process: page::process_lines(|f| super::info_field(sh, f)),
        refresh_secs: page.refresh.map(|d| d.as_secs().max(1)),
        show_legends: page.show_legends,
        admin,
        notice,
        node: page.show_node.as_ref().map(|n| {
            if n.is_empty() {
                sh.cfg
                    .global
                    .node
                    .clone()
                    .unwrap_or_else(|| sh.hostname.clone())
            } else {
                n.clone()
            }
        }),
        desc: page
            .show_desc
            .as_ref()
            .map(|d| {
                if d.is_empty() {
                    sh.cfg.global.description.clone().unwrap_or_default()
                } else {
                    d.clone()
                }
            })
            .filter(|d| !d.is_empty()),
    };
    let body = page::html(&info, &rows, &preq);
    let extra = [("cache-control".to_string(), b"no-cache".to_vec())];
    (
        respond(200, Some("text/html"), &extra, body.as_bytes()),
        used,
    )
}

/// Runs a form's action on each checked server: `DONE`, or `PART` when
/// some server was not found.
fn apply(sh: &Shared, f: &PageForm) -> &'static str {
    let backend = match f.backend.strip_prefix('#') {
        Some(id) => sh
            .backends
            .iter()
            .find(|b| {
                let px = sh.proxy(b.proxy);
                Some(px.uid) == id.parse().ok()
            })
            .map(|b| b.name.clone()),
        None => Some(f.backend.clone()),
    };
    let Some(backend) = backend else {
        return "ERRP";
    };
    let mut failed = 0;
    for s in &f.servers {
        let r = ServerRef {
            backend: backend.clone(),
            server: s.clone(),
        };
        let cmd = match f.action {
            PageAction::Ready => Command::SetState(r, AdminState::Ready),
            PageAction::Drain => Command::SetState(r, AdminState::Drain),
            PageAction::Maint => Command::SetState(r, AdminState::Maint),
            PageAction::DisableHealth => Command::DisableHealth(r),
            PageAction::EnableHealth => Command::EnableHealth(r),
        };
        if !super::run(sh, &cmd).is_empty() {
            failed += 1;
        }
    }
    match failed {
        0 => "DONE",
        n if n == f.servers.len() => "ERRP",
        _ => "PART",
    }
}
