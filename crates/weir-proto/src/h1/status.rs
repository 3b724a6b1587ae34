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
