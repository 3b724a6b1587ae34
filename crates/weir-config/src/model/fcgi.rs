//! `fcgi-app` sections (manual §10): what weir tells a FastCGI Responder
//! application about each request a `use-fcgi-app` backend sends it.

use crate::diag::Loc;
use crate::model::LogTarget;

/// One `fcgi-app <name>` section.
#[derive(Debug, Clone)]
pub struct FcgiApp {
    pub name: String,
    pub loc: Loc,
    /// `docroot`: `DOCUMENT_ROOT`, and the start of `SCRIPT_FILENAME` and
    /// `PATH_TRANSLATED` (mandatory).
    pub docroot: Option<String>,
    /// `index`: appended to a path that ends with `/` for `SCRIPT_NAME`.
    pub index: Option<String>,
    /// `path-info`: the script name (first capture) and path info (second)
    /// of the URL-decoded path.
    pub path_info: Option<regex::bytes::Regex>,
    /// `set-param` rules, in order.
    pub set_params: Vec<FcgiParam>,
    /// `pass-header` rules: request fields passed although weir leaves
    /// them out by default (names in lower case).
    pub pass_headers: Vec<(String, Option<weir_rules::Cond>)>,
    /// `log-stderr`: where the application's `FCGI_STDERR` lines go
    /// (`global`: the global targets).
    pub log_stderr: Vec<LogTarget>,
    pub log_stderr_global: bool,
    /// `option keep-conn` (on by default): the application is asked to
    /// keep the connection.
    pub keep_conn: bool,
    /// `option get-values`, `option mpxs-conns`, `option max-reqs`.
    pub get_values: bool,
    pub mpxs_conns: bool,
    pub max_reqs: u32,
    /// The section's own ACLs.
    pub acls: Vec<(String, Vec<weir_rules::Acl>)>,
}

impl FcgiApp {
    pub fn new(name: &str, loc: &Loc) -> FcgiApp {
        FcgiApp {
            name: name.to_string(),
            loc: loc.clone(),
            docroot: None,
            index: None,
            path_info: None,
            set_params: Vec::new(),
            pass_headers: Vec::new(),
            log_stderr: Vec::new(),
            log_stderr_global: false,
            keep_conn: true,
            get_values: false,
            mpxs_conns: false,
            max_reqs: 1,
            acls: Vec::new(),
        }
    }
}

/// `set-param <name> <fmt> [if|unless <cond>]`: the name in upper case,
/// as haproxy sends it.
#[derive(Debug, Clone)]
pub struct FcgiParam {
    pub name: String,
    pub value: weir_rules::Fmt,
    pub cond: Option<weir_rules::Cond>,
}
