//! The room rewrites have in a message, as haproxy's buffers leave it: a
//! message's first reads fill its buffer up to `bufsize - maxrewrite`
//! (head and body together, as haproxy's HTX blocks count them), and the
//! rewrites of its rules must fit in what is left. A rewrite that does not
//! fit fails: under `strict-mode on` (the default, again at each rule set)
//! the message fails with a 500; otherwise the rewrite is left out.

use weir_proto::h1::Header;

/// What a block costs beside its bytes in haproxy's HTX (its index entry).
const BLOCK: usize = 8;
/// A start line's fixed part.
const START_LINE: usize = 32;

/// A message's room and its rule set's mode.
#[derive(Debug, Clone, Copy)]
pub struct Room {
    left: i64,
    /// `strict-mode`: a rewrite that does not fit fails the message.
    pub strict: bool,
    /// Rewrites that did not fit (haproxy's `wrew`).
    failed: u32,
}

impl Room {
    /// The room of a message whose head costs `head` and with `body`
    /// bytes read behind it.
    pub fn new(g: &weir_config::Global, head: usize, body: usize) -> Room {
        let first_reads = g.bufsize.saturating_sub(g.rewrite_room());
        let held = head + body.min(first_reads.saturating_sub(head));
        Room {
            left: g.bufsize as i64 - held as i64,
            strict: true,
            failed: 0,
        }
    }

    /// Whether a rewrite could run out of room (its old state must be kept
    /// to be put back): one that may add `adds` bytes.
    pub fn tight(&self, adds: usize) -> bool {
        self.left < 4096 + adds as i64
    }

    /// Takes `grown` bytes (negative: frees them); false when they do not
    /// fit, and the rewrite is to be undone.
    /// The same room, its failures counted already.
    pub fn after_frontend(self) -> Room {
        Room { failed: 0, ..self }
    }

    /// The rewrites that did not fit.
    pub fn failed(&self) -> u32 {
        self.failed
    }

    pub fn take(&mut self, grown: i64) -> bool {
        if grown > self.left {
            self.failed += 1;
            return false;
        }
        self.left -= grown;
        true
    }
}

/// What a list of header fields costs.
pub fn fields(hs: &[Header]) -> usize {
    hs.iter()
        .map(|h| BLOCK + h.name_bytes().len() + h.value().len())
        .sum()
}

/// What a head costs: its start line, fields and end.
pub fn head(line: &[&str], hs: &[Header]) -> usize {
    BLOCK + START_LINE + line.iter().map(|p| p.len()).sum::<usize>() + fields(hs) + BLOCK
}
