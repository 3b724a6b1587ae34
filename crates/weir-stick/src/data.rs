//! The data types a table stores (`store <type>,…`), with HAProxy's
//! numbering (the one the peers protocol and `show table` follow), and
//! the layout of an entry's values.

use crate::freq::FreqCtr;

/// A data type of HAProxy 2.6, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    ServerId,
    Gpt0,
    Gpc0,
    Gpc0Rate,
    ConnCnt,
    ConnRate,
    ConnCur,
    SessCnt,
    SessRate,
    HttpReqCnt,
    HttpReqRate,
    HttpErrCnt,
    HttpErrRate,
    BytesInCnt,
    BytesInRate,
    BytesOutCnt,
    BytesOutRate,
    Gpc1,
    Gpc1Rate,
    ServerKey,
    HttpFailCnt,
    HttpFailRate,
    Gpt,
    Gpc,
    GpcRate,
}

/// Every type, in HAProxy's order, with its name.
const TYPES: [(DataType, &str); 25] = [
    (DataType::ServerId, "server_id"),
    (DataType::Gpt0, "gpt0"),
    (DataType::Gpc0, "gpc0"),
    (DataType::Gpc0Rate, "gpc0_rate"),
    (DataType::ConnCnt, "conn_cnt"),
    (DataType::ConnRate, "conn_rate"),
    (DataType::ConnCur, "conn_cur"),
    (DataType::SessCnt, "sess_cnt"),
    (DataType::SessRate, "sess_rate"),
    (DataType::HttpReqCnt, "http_req_cnt"),
    (DataType::HttpReqRate, "http_req_rate"),
    (DataType::HttpErrCnt, "http_err_cnt"),
    (DataType::HttpErrRate, "http_err_rate"),
    (DataType::BytesInCnt, "bytes_in_cnt"),
    (DataType::BytesInRate, "bytes_in_rate"),
    (DataType::BytesOutCnt, "bytes_out_cnt"),
    (DataType::BytesOutRate, "bytes_out_rate"),
    (DataType::Gpc1, "gpc1"),
    (DataType::Gpc1Rate, "gpc1_rate"),
    (DataType::ServerKey, "server_key"),
    (DataType::HttpFailCnt, "http_fail_cnt"),
    (DataType::HttpFailRate, "http_fail_rate"),
    (DataType::Gpt, "gpt"),
    (DataType::Gpc, "gpc"),
    (DataType::GpcRate, "gpc_rate"),
];

/// The most elements of an array type (`gpc(100)`).
pub const MAX_ARRAY: usize = 100;

impl DataType {
    /// HAProxy's name.
    pub fn name(self) -> &'static str {
        TYPES
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("", |(_, n)| n)
    }

    /// The type named `name`.
    pub fn by_name(name: &str) -> Option<DataType> {
        TYPES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    /// HAProxy's number (the peers protocol's).
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Whether it is a frequency counter (it takes a period).
    pub fn is_rate(self) -> bool {
        use DataType::*;
        matches!(
            self,
            Gpc0Rate
                | ConnRate
                | SessRate
                | HttpReqRate
                | HttpErrRate
                | BytesInRate
                | BytesOutRate
                | Gpc1Rate
                | HttpFailRate
                | GpcRate
        )
    }

    /// Whether it is an array (`gpt(<n>)`, `gpc(<n>)`, `gpc_rate(<n>,…)`).
    pub fn is_array(self) -> bool {
        matches!(self, DataType::Gpt | DataType::Gpc | DataType::GpcRate)
    }

    /// Whether it counts in 64 bits (the byte counters).
    pub fn is_long(self) -> bool {
        matches!(self, DataType::BytesInCnt | DataType::BytesOutCnt)
    }
}

/// One `store` item: a type, its period (rates) and elements (arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreSpec {
    pub ty: DataType,
    pub period: u32,
    pub count: usize,
}

/// Parses a `store` item: `conn_rate(10s)`, `gpc(3)`, `gpc_rate(2,1m)`.
/// `ms` reads a duration in milliseconds.
pub fn parse_store(item: &str, ms: &dyn Fn(&str) -> Option<u32>) -> Result<StoreSpec, String> {
    let (name, args) = match item.split_once('(') {
        Some((n, rest)) => {
            let inner = rest
                .strip_suffix(')')
                .ok_or_else(|| format!("missing closing parenthesis in '{item}'"))?;
            (n, inner.split(',').map(str::trim).collect::<Vec<_>>())
        }
        None => (item, Vec::new()),
    };
    let ty = DataType::by_name(name).ok_or_else(|| format!("unknown data type '{name}'"))?;
    let count = |s: Option<&&str>| -> Result<usize, String> {
        let n: usize = s
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("data type '{name}' expects a number of elements"))?;
        if n == 0 || n > MAX_ARRAY {
            return Err(format!(
                "data type '{name}': the number of elements must be between 1 and {MAX_ARRAY}"
            ));
        }
        Ok(n)
    };
    let period = |s: Option<&&str>| -> Result<u32, String> {
        s.and_then(|s| ms(s))
            .ok_or_else(|| format!("data type '{name}' expects a period"))
    };
    let (count, period) = match (ty.is_array(), ty.is_rate()) {
        (true, true) => (count(args.first())?, period(args.get(1))?),
        (true, false) => (count(args.first())?, 0),
        (false, true) => (1, period(args.first())?),
        (false, false) if args.is_empty() => (1, 0),
        (false, false) => return Err(format!("data type '{name}' takes no argument")),
    };
    Ok(StoreSpec { ty, period, count })
}

/// One stored value's place: its type, the element of an array and the
/// period of a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub ty: DataType,
    pub idx: usize,
    pub period: u32,
}

/// The values an entry of a table holds, in HAProxy's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    cols: Vec<Column>,
    /// Where each type's first column is.
    first: [Option<usize>; TYPES.len()],
}

impl Schema {
    /// The layout for these `store` items. A type given twice, or an
    /// array with its legacy counterpart (`gpc` and `gpc0`), is refused.
    pub fn new(specs: &[StoreSpec]) -> Result<Schema, String> {
        let mut specs = specs.to_vec();
        specs.sort_by_key(|s| s.ty);
        let mut cols = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            if specs.get(i + 1).is_some_and(|n| n.ty == s.ty) {
                return Err(format!("data type '{}' stored twice", s.ty.name()));
            }
            for idx in 0..s.count {
                cols.push(Column {
                    ty: s.ty,
                    idx,
                    period: s.period,
                });
            }
        }
        let has = |t: DataType| cols.iter().any(|c| c.ty == t);
        for (arr, legacy) in [
            (DataType::Gpt, [DataType::Gpt0, DataType::Gpt0]),
            (DataType::Gpc, [DataType::Gpc0, DataType::Gpc1]),
            (DataType::GpcRate, [DataType::Gpc0Rate, DataType::Gpc1Rate]),
        ] {
            if has(arr) && legacy.iter().any(|&l| has(l)) {
                return Err(format!(
                    "data type '{}' cannot be stored beside '{}'",
                    arr.name(),
                    legacy[0].name()
                ));
            }
        }
        let mut first = [None; TYPES.len()];
        for (i, c) in cols.iter().enumerate() {
            if let Some(f) = first.get_mut(usize::from(c.ty.id())) {
                f.get_or_insert(i);
            }
        }
        Ok(Schema { cols, first })
    }

    /// The columns, in order.
    pub fn columns(&self) -> &[Column] {
        &self.cols
    }

    /// Adds `server_id` (and, with `key`, `server_key`) when missing: the
    /// types `stick` rules store.
    pub fn with_server(&self, key: bool) -> Schema {
        let mut specs: Vec<StoreSpec> = Vec::new();
        for c in &self.cols {
            if c.idx == 0 {
                let count = self.cols.iter().filter(|d| d.ty == c.ty).count();
                specs.push(StoreSpec {
                    ty: c.ty,
                    period: c.period,
                    count,
                });
            }
        }
        for (t, want) in [(DataType::ServerId, true), (DataType::ServerKey, key)] {
            if want && !specs.iter().any(|s| s.ty == t) {
                specs.push(StoreSpec {
                    ty: t,
                    period: 0,
                    count: 1,
                });
            }
        }
        Schema::new(&specs).unwrap_or_else(|_| self.clone())
    }

    /// Where `ty`'s element `idx` is.
    pub fn find(&self, ty: DataType, idx: usize) -> Option<usize> {
        let at = self.first.get(usize::from(ty.id())).copied().flatten()? + idx;
        self.cols
            .get(at)
            .is_some_and(|c| c.ty == ty && c.idx == idx)
            .then_some(at)
    }

    /// The column at `at`.
    pub fn column(&self, at: usize) -> Option<&Column> {
        self.cols.get(at)
    }

    /// Where general purpose counter `idx` (`gpc0`, `gpc(n)`) is, from the
    /// array or from the legacy type.
    pub fn gpc(&self, idx: usize) -> Option<usize> {
        self.legacy(DataType::Gpc, [DataType::Gpc0, DataType::Gpc1], idx)
    }

    /// Where the rate of general purpose counter `idx` is.
    pub fn gpc_rate(&self, idx: usize) -> Option<usize> {
        self.legacy(
            DataType::GpcRate,
            [DataType::Gpc0Rate, DataType::Gpc1Rate],
            idx,
        )
    }

    /// Where general purpose tag `idx` (`gpt0`, `gpt(n)`) is.
    pub fn gpt(&self, idx: usize) -> Option<usize> {
        self.find(DataType::Gpt, idx)
            .or_else(|| (idx == 0).then(|| self.find(DataType::Gpt0, 0)).flatten())
    }

    fn legacy(&self, arr: DataType, old: [DataType; 2], idx: usize) -> Option<usize> {
        self.find(arr, idx)
            .or_else(|| old.get(idx).and_then(|&t| self.find(t, 0)))
    }

    /// Each column's empty value.
    pub fn empty(&self) -> Vec<Value> {
        self.cols
            .iter()
            .map(|c| match c.ty {
                DataType::ServerKey => Value::Text(None),
                t if t.is_rate() => Value::Freq(FreqCtr::default()),
                _ => Value::Count(0),
            })
            .collect()
    }
}

/// One stored value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A counter or tag (32 bits in HAProxy, 64 for the byte counters).
    Count(u64),
    Freq(FreqCtr),
    /// `server_key`: the server's name or address.
    Text(Option<Box<str>>),
}

/// Splits a `store` list at its commas outside parentheses.
pub fn split_store(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.extend(list.get(start..i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.extend(list.get(start..));
    out.retain(|s| !s.is_empty());
    out
}
