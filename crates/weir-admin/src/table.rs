//! `show table`, `clear table` and `set table` (management guide §9.3):
//! their words, HAProxy's messages for bad ones, and the header line.

/// What the command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableAct {
    Show,
    Clear,
    Set,
}

/// A comparison of a `data.<type> <op> <value>` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Le,
    Ge,
    Lt,
    Gt,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "le" => Op::Le,
            "ge" => Op::Ge,
            "lt" => Op::Lt,
            "gt" => Op::Gt,
            _ => return None,
        })
    }

    /// Whether `v op against` holds.
    pub fn holds(self, v: i64, against: i64) -> bool {
        match self {
            Op::Eq => v == against,
            Op::Ne => v != against,
            Op::Le => v <= against,
            Op::Ge => v >= against,
            Op::Lt => v < against,
            Op::Gt => v > against,
        }
    }
}

/// A `data.<type> <op> <value>` filter (the type as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub data: String,
    pub op: Op,
    pub value: i64,
}

/// One table command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCmd {
    pub act: TableAct,
    /// `None`: `show table` of every table.
    pub table: Option<String>,
    pub key: Option<String>,
    pub filters: Vec<Filter>,
    /// `set table`'s `data.<type> <value>` pairs, as written.
    pub data: Vec<(String, String)>,
}

/// The most filters one command takes (haproxy's `STKTABLE_FILTER_LEN`).
const MAX_FILTERS: usize = 4;

/// Parses the words after `show|clear|set table`.
pub fn parse(act: TableAct, words: &[&str]) -> Result<TableCmd, String> {
    let Some((table, mut rest)) = words.split_first() else {
        if act == TableAct::Show {
            return Ok(TableCmd {
                act,
                table: None,
                key: None,
                filters: Vec::new(),
                data: Vec::new(),
            });
        }
        return Err(
            "Required arguments: <table> \"data.<store_data_type>\" <operator> <value> or <table> key <key>"
                .into(),
        );
    };
    let mut cmd = TableCmd {
        act,
        table: Some(table.to_string()),
        key: None,
        filters: Vec::new(),
        data: Vec::new(),
    };
    while let Some((w, more)) = rest.split_first() {
        rest = more;
        if *w == "key" {
            let (k, more) = rest.split_first().ok_or("Key value expected")?;
            cmd.key = Some(k.to_string());
            rest = more;
        } else if let Some(d) = w.strip_prefix("data.") {
            if act == TableAct::Set {
                let (v, more) = rest
                    .split_first()
                    .ok_or("\"data.<type>\" followed by a value expected")?;
                cmd.data.push((d.to_string(), v.to_string()));
                rest = more;
                continue;
            }
            let n = cmd.filters.len() + 1;
            if n > MAX_FILTERS {
                return Err(format!("Filter entry #{n}: too many filters"));
            }
            let op = rest.first().and_then(|o| Op::parse(o)).ok_or_else(|| {
                format!("Filter entry #{n}: Require and operator among \"eq\", \"ne\", \"le\", \"ge\", \"lt\", \"gt\"")
            })?;
            let value = rest.get(1).and_then(|v| v.parse().ok()).ok_or_else(|| {
                format!("Filter entry #{n}: Require a valid integer value to compare against")
            })?;
            if weir_stick::DataType::by_name(d.split('(').next().unwrap_or(d)).is_none()
                && !is_array_elem(d)
            {
                return Err(format!("Filter entry #{n}: Unknown data type"));
            }
            cmd.filters.push(Filter {
                data: d.to_string(),
                op,
                value,
            });
            rest = rest.get(2..).unwrap_or_default();
        } else if act == TableAct::Set && cmd.key.is_some() {
            return Err("\"data.<type>\" followed by a value expected".into());
        } else {
            return Err("Optional argument only supports \"data.<store_data_type>\" <operator> <value> and key <key>".into());
        }
    }
    Ok(cmd)
}

/// Whether `d` names an element of an array type (`gpc3`, `gpt12`,
/// `gpc2_rate`).
pub fn is_array_elem(d: &str) -> bool {
    let d = d.strip_suffix("_rate").unwrap_or(d);
    ["gpc", "gpt"].iter().any(|p| {
        d.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A table's header line.
pub fn header(name: &str, ty: &str, size: usize, used: usize) -> String {
    format!("# table: {name}, type: {ty}, size:{size}, used:{used}\n")
}
