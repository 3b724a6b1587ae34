//! Reason phrases and HAProxy's default error page sentences.

/// Status, reason and the sentence of HAProxy's page for it.
pub const PAGES: &[(u16, &str, &str)] = &[
    (200, "OK", "Service ready."),
    (400, "Bad request", "Your browser sent an invalid request."),
    (
        401,
        "Unauthorized",
        "You need a valid user and password to access this content.",
    ),
    (
        403,
        "Forbidden",
        "Request forbidden by administrative rules.",
    ),
    (404, "Not Found", "The resource could not be found."),
    (
        405,
        "Method Not Allowed",
        "A request was made of a resource using a request method not supported by that resource",
    ),
    (
        407,
        "Unauthorized",
        "You need a valid user and password to access this content.",
    ),
    (
        408,
        "Request Time-out",
        "Your browser didn't send a complete request in time.",
    ),
    (
        410,
        "Gone",
        "The resource is no longer available and will not be returned.",
    ),
    (
        413,
        "Payload Too Large",
        "The request entity exceeds the maximum allowed.",
    ),
    (414, "Request-URI Too Long", "The request URI is too long."),
    (
        422,
        "Unprocessable Content",
        "The server cannot process the contained instructions.",
    ),
    (425, "Too Early", "Your browser sent early data."),
    (
        429,
        "Too Many Requests",
        "You have sent too many requests in a given amount of time.",
    ),
    (
        431,
        "Request Header Fields Too Large",
        "Your browser sent a request header section that is too large.",
    ),
    (
        500,
        "Internal Server Error",
        "An internal server error occurred.",
    ),
    (
        501,
        "Not Implemented",
        ".The server does not support the functionality required to fulfill the request.",
    ),
    (
        502,
        "Bad Gateway",
        "The server returned an invalid or incomplete response.",
    ),
    (
        503,
        "Service Unavailable",
        "No server is available to handle this request.",
    ),
    (
        504,
        "Gateway Time-out",
        "The server didn't respond in time.",
    ),
];

/// The reason phrases haproxy 2.6 writes in the responses it generates
/// (`return`, `set-status` without a reason, `http-error`), as observed
/// for every status from 200 to 599; a status not listed takes its class's
/// word ([`generated_reason`]).
const GENERATED: &[(u16, &str)] = &[
    (100, "Continue"),
    (101, "Switching Protocols"),
    (200, "OK"),
    (201, "Created"),
    (202, "Accepted"),
    (203, "Non-Authoritative Information"),
    (204, "No Content"),
    (205, "Reset Content"),
    (206, "Partial Content"),
    (207, "Multi-Status"),
    (210, "Content Different"),
    (226, "IM Used"),
    (300, "Multiple Choices"),
    (301, "Moved Permanently"),
    (302, "Moved Temporarily"),
    (303, "See Other"),
    (304, "Not Modified"),
    (305, "Use Proxy"),
    (307, "Temporary Redirect"),
    (308, "Permanent Redirect"),
    (310, "Too many Redirects"),
    (400, "Bad Request"),
    (401, "Unauthorized"),
    (402, "Payment Required"),
    (403, "Forbidden"),
    (404, "Not Found"),
    (405, "Method Not Allowed"),
    (406, "Not Acceptable"),
    (407, "Proxy Authentication Required"),
    (408, "Request Time-out"),
    (409, "Conflict"),
    (410, "Gone"),
    (411, "Length Required"),
    (412, "Precondition Failed"),
    (413, "Request Entity Too Large"),
    (414, "Request-URI Too Long"),
    (415, "Unsupported Media Type"),
    (416, "Requested range unsatisfiable"),
    (417, "Expectation failed"),
    (418, "I'm a teapot"),
    (421, "Misdirected Request"),
    (422, "Unprocessable Content"),
    (423, "Locked"),
    (424, "Method failure"),
    (425, "Too Early"),
    (426, "Upgrade Required"),
    (428, "Precondition Required"),
    (429, "Too Many Requests"),
    (431, "Request Header Fields Too Large"),
    (449, "Retry With"),
    (450, "Blocked by Windows Parental Controls"),
    (451, "Unavailable For Legal Reasons"),
    (456, "Unrecoverable Error"),
    (499, "client has closed connection"),
    (500, "Internal Server Error"),
    (501, "Not Implemented"),
    (502, "Bad Gateway or Proxy Error"),
    (503, "Service Unavailable"),
    (504, "Gateway Time-out"),
    (505, "HTTP Version not supported"),
    (506, "Variant also negotiate"),
    (507, "Insufficient storage"),
    (508, "Loop detected"),
    (509, "Bandwidth Limit Exceeded"),
    (510, "Not extended"),
    (511, "Network authentication required"),
    (520, "Web server is returning an unknown error"),
];

/// The reason phrase of a response weir generates (not an error page,
/// whose phrases are [`reason`]'s), as haproxy 2.6 writes it.
pub fn generated_reason(status: u16) -> &'static str {
    if let Some((_, r)) = GENERATED.iter().find(|(s, _)| *s == status) {
        return r;
    }
    match status / 100 {
        2 => "Success",
        3 => "Redirection",
        4 => "Client Error",
        5 => "Server Error",
        _ => "Other",
    }
}

/// The reason phrase weir uses for a status it generates.
pub fn reason(status: u16) -> &'static str {
    if let Some((_, r, _)) = PAGES.iter().find(|(s, _, _)| *s == status) {
        return r;
    }
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        _ => "Other",
    }
}
