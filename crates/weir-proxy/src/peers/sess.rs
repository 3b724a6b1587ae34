//! One peers session's protocol state: the tables each side defined,
//! what was pushed and acknowledged, and the messages it answers.

use std::collections::HashMap;

use super::{Section, BATCH};
use crate::state::peering::TableView;
use weir_stick::peers::{
    decode_update, encode_ack, encode_int, encode_update, frame, msg, Dict, Message, TableDef,
};

/// A remote table as its definition said, and the local table it is.
pub(super) struct RemoteTable {
    def: TableDef,
    local: usize,
}

/// What a session knows of each side.
pub(super) struct Sess<'a> {
    sec: &'a Section,
    pub(super) out: Vec<u8>,
    /// Per local table: defined on this session, last update sent.
    defined: Vec<bool>,
    sent: Vec<u32>,
    /// The local table updates last went for.
    current_out: Option<usize>,
    remote: HashMap<u64, RemoteTable>,
    current_in: Option<u64>,
    last_in: Option<u32>,
    acks: HashMap<u64, u32>,
    tx_dict: Dict,
    rx_dict: Dict,
    /// Per local table, for `show peers`: the last of our updates the
    /// peer acknowledged, the last of its updates received.
    acked: Vec<u32>,
    got: Vec<u32>,
    /// The local table of the last update received.
    last_in_table: Option<usize>,
    /// Heartbeats received; the session ended on a protocol error.
    pub(super) rx_hbt: u64,
    pub(super) proto_err: bool,
}

impl<'a> Sess<'a> {
    pub(super) fn new(sec: &'a Section) -> Sess<'a> {
        Sess {
            sec,
            out: Vec::new(),
            defined: vec![false; sec.tables.len()],
            sent: vec![0; sec.tables.len()],
            current_out: None,
            remote: HashMap::new(),
            current_in: None,
            last_in: None,
            acks: HashMap::new(),
            tx_dict: Dict::default(),
            rx_dict: Dict::default(),
            acked: vec![0; sec.tables.len()],
            got: vec![0; sec.tables.len()],
            last_in_table: None,
            rx_hbt: 0,
            proto_err: false,
        }
    }

    /// What `show peers` tells of each shared table on this session.
    pub(super) fn tables(&self) -> Vec<TableView> {
        (0..self.sec.tables.len())
            .map(|i| {
                let remote = self.remote.values().find(|r| r.local == i);
                TableView {
                    remote_id: remote.map_or(0, |r| r.def.id),
                    remote_data: remote.map_or(0, |r| r.def.types),
                    last_acked: self.acked.get(i).copied().unwrap_or(0),
                    last_pushed: self.sent.get(i).copied().unwrap_or(0),
                    last_get: self.got.get(i).copied().unwrap_or(0),
                }
            })
            .collect()
    }

    /// The local tables of the last update received and sent.
    pub(super) fn last_tables(&self) -> (Option<usize>, Option<usize>) {
        (self.last_in_table, self.current_out)
    }

    /// Handles the whole messages in `buf`; false: the session ends.
    pub(super) fn read(&mut self, buf: &mut Vec<u8>) -> bool {
        let mut used = 0;
        loop {
            let rest = buf.get(used..).unwrap_or_default();
            match Message::parse(rest) {
                Ok(Some((m, n))) => {
                    // (A peer's error message is its own, not a fault.)
                    let theirs = m.class == msg::ERROR;
                    if !self.handle(m) {
                        self.proto_err = !theirs;
                        return false;
                    }
                    used += n;
                }
                Ok(None) => break,
                Err(_) => {
                    frame(msg::ERROR, 0, &[], &mut self.out);
                    self.proto_err = true;
                    return false;
                }
            }
        }
        buf.drain(..used);
        for (t, u) in self.acks.drain() {
            frame(msg::TABLE, msg::ACK, &encode_ack(t, u), &mut self.out);
        }
        true
    }

    fn handle(&mut self, m: Message<'_>) -> bool {
        match (m.class, m.kind) {
            (msg::CONTROL, msg::RESYNC_REQUEST) => {
                self.push_all();
                frame(msg::CONTROL, msg::RESYNC_FINISHED, &[], &mut self.out);
            }
            (msg::CONTROL, msg::RESYNC_FINISHED | msg::RESYNC_PARTIAL) => {
                if m.kind == msg::RESYNC_FINISHED {
                    self.sec
                        .board
                        .synced
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                frame(msg::CONTROL, msg::RESYNC_CONFIRM, &[], &mut self.out);
            }
            (msg::CONTROL, msg::HEARTBEAT) => self.rx_hbt += 1,
            (msg::CONTROL, _) => {}
            (msg::ERROR, _) => return false,
            (msg::TABLE, msg::DEFINE) => {
                let Ok(def) = TableDef::decode(m.data) else {
                    return false;
                };
                let local = self
                    .sec
                    .tables
                    .iter()
                    .position(|t| t.wire == def.name && def.keys_fit(t.table.def().key));
                self.current_in = Some(def.id);
                self.last_in = None;
                match local {
                    // (A peer defines each of its tables once a session.)
                    Some(_) if self.remote.len() >= 4 * self.sec.tables.len() + 16 => {
                        frame(msg::ERROR, 0, &[], &mut self.out);
                        return false;
                    }
                    Some(local) => {
                        self.remote.insert(def.id, RemoteTable { def, local });
                    }
                    None => {
                        self.remote.remove(&def.id);
                    }
                }
            }
            (msg::TABLE, msg::SWITCH) => {
                let id = weir_stick::peers::decode_int(m.data)
                    .ok()
                    .flatten()
                    .map(|(v, _)| v);
                self.current_in = id;
                self.last_in = None;
            }
            (
                msg::TABLE,
                msg::UPDATE | msg::INC_UPDATE | msg::UPDATE_TIMED | msg::INC_UPDATE_TIMED,
            ) => {
                let Some(id) = self.current_in else {
                    return true;
                };
                let Some(rt) = self.remote.get(&id) else {
                    return true;
                };
                let Some(local) = self.sec.tables.get(rt.local) else {
                    return true;
                };
                let key = local.table.def().key;
                let Ok(u) = decode_update(m.kind, m.data, &rt.def, key, &mut self.rx_dict) else {
                    return false;
                };
                let n =
                    u.id.unwrap_or_else(|| self.last_in.map_or(1, |l| l.wrapping_add(1)));
                self.last_in = Some(n);
                local.table.apply_remote(&u.key, &u.values);
                self.acks.insert(id, n);
                let i = rt.local;
                if let Some(g) = self.got.get_mut(i) {
                    *g = n;
                }
                self.last_in_table = Some(i);
            }
            (msg::TABLE, msg::ACK) => {
                // Our number for the table is its place plus one.
                if let Ok((id, n)) = weir_stick::peers::decode_ack(m.data) {
                    let i = usize::try_from(id).unwrap_or(0).wrapping_sub(1);
                    if let Some(a) = self.acked.get_mut(i) {
                        *a = n;
                    }
                }
            }
            (msg::TABLE, _) => {}
            _ => {}
        }
        true
    }

    /// Defines local table `i` on this session (once), or switches to it.
    fn select(&mut self, i: usize) {
        if self.current_out == Some(i) {
            return;
        }
        let Some(t) = self.sec.tables.get(i) else {
            return;
        };
        let id = i as u64 + 1;
        if self.defined.get(i).copied().unwrap_or(false) {
            let mut d = Vec::new();
            encode_int(id, &mut d);
            frame(msg::TABLE, msg::SWITCH, &d, &mut self.out);
        } else {
            let td = t.table.def();
            let def = TableDef::of(id, &t.wire, td.key, &td.schema, td.expire);
            frame(
                msg::TABLE,
                msg::DEFINE,
                &def.encode(&td.schema),
                &mut self.out,
            );
            if let Some(d) = self.defined.get_mut(i) {
                *d = true;
            }
        }
        self.current_out = Some(i);
    }

    fn update(&mut self, i: usize, n: u32, e: &weir_stick::Entry) {
        let Some(t) = self.sec.tables.get(i) else {
            return;
        };
        let td = t.table.def();
        let def = TableDef::of(i as u64 + 1, &t.wire, td.key, &td.schema, td.expire);
        let vals = t.table.values_of(e);
        let data = encode_update(
            Some(n),
            e.key(),
            &def,
            &td.schema,
            &vals,
            t.table.now(),
            &mut self.tx_dict,
        );
        frame(msg::TABLE, msg::UPDATE, &data, &mut self.out);
    }

    /// Local changes since the last push, each table in turn.
    pub(super) fn push(&mut self) {
        for i in 0..self.sec.tables.len() {
            let Some(t) = self.sec.tables.get(i) else {
                continue;
            };
            let after = self.sent.get(i).copied().unwrap_or(0);
            let ups = t.table.updates_after(after, BATCH);
            if ups.is_empty() {
                continue;
            }
            self.select(i);
            for (n, e) in &ups {
                self.update(i, *n, e);
            }
            if let (Some(s), Some((n, _))) = (self.sent.get_mut(i), ups.last()) {
                *s = *n;
            }
        }
    }

    /// Every entry of every shared table (a peer asked to resynchronise).
    pub(super) fn push_all(&mut self) {
        for i in 0..self.sec.tables.len() {
            let Some(t) = self.sec.tables.get(i) else {
                continue;
            };
            let all = t.table.entries();
            let last = t.table.last_update();
            self.select(i);
            for e in &all {
                self.update(i, last, e);
            }
            if let Some(s) = self.sent.get_mut(i) {
                *s = (*s).max(last);
            }
        }
    }
}
