//! The socket options rules ask for the client's connection (`set-mark`,
//! `set-tos`, and `set-nice`, accepted): their values as parsed (pure).

/// `set-mark` and `set-tos`: an option of the client's socket (the
/// netfilter mark, the IP TOS or IPv6 traffic class of what goes to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SockOpt {
    Mark(u32),
    Tos(u32),
}

/// `set-mark <mark>`, `set-tos <tos>` (decimal, or hexadecimal after
/// `0x`), and `set-nice <nice>` (`None`: accepted, it changes nothing in
/// weir, whose tasks have no priorities).
pub fn parse_sockopt(name: &str, args: &[String]) -> Result<Option<SockOpt>, String> {
    let bad = || format!("'{name}' expects one integer");
    let [v] = args else { return Err(bad()) };
    let v = v.as_str();
    let value = || match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).map_err(|_| bad()),
        None => v.parse().map_err(|_| bad()),
    };
    match name {
        "set-mark" => value().map(|v| Some(SockOpt::Mark(v))),
        "set-tos" => value().map(|v| Some(SockOpt::Tos(v))),
        _ if v.parse::<i32>().is_ok_and(|n| (-1024..=1024).contains(&n)) => Ok(None),
        _ => Err(format!("'{name}' expects an integer from -1024 to 1024")),
    }
}
