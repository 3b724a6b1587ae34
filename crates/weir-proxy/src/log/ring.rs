//! A `ring` section's buffer: the lines its `log ring@…` targets write,
//! kept until each of its servers took them (without servers, the latest
//! `size` bytes); the process layer's senders read it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use weir_config::LogFormatKind;

/// One ring.
#[derive(Debug)]
pub struct Ring {
    pub name: String,
    pub format: LogFormatKind,
    pub maxlen: usize,
    size: usize,
    q: Mutex<Queue>,
    /// Woken by each line written.
    pub wake: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Queue {
    /// Lines by number, oldest first.
    lines: VecDeque<(u64, Arc<[u8]>)>,
    bytes: usize,
    next: u64,
    /// Each server's next line.
    readers: Vec<u64>,
    /// Lines refused for want of room.
    dropped: u64,
}

impl Ring {
    /// A ring for `servers` readers.
    pub fn new(r: &weir_config::Ring) -> Ring {
        Ring {
            name: r.name.clone(),
            format: r.format,
            maxlen: r.maxlen,
            size: r.size,
            q: Mutex::new(Queue {
                readers: vec![0; r.servers.len()],
                ..Queue::default()
            }),
            wake: tokio::sync::Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.q.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a line. With servers, a full ring refuses it (the slowest
    /// server holds the oldest lines); without, the oldest lines go.
    pub fn push(&self, line: &[u8]) {
        let mut q = self.lock();
        if line.len() > self.size {
            q.dropped += 1;
            return;
        }
        while q.bytes + line.len() > self.size {
            if !q.readers.is_empty() {
                q.dropped += 1;
                return;
            }
            match q.lines.pop_front() {
                Some((_, l)) => q.bytes -= l.len(),
                None => break,
            }
        }
        let n = q.next;
        q.next += 1;
        q.bytes += line.len();
        q.lines.push_back((n, line.into()));
        drop(q);
        self.wake.notify_waiters();
    }

    /// Up to `max` lines reader `r` has not taken yet, with their numbers.
    pub fn unread(&self, r: usize, max: usize) -> Vec<(u64, Arc<[u8]>)> {
        let q = self.lock();
        let from = q.readers.get(r).copied().unwrap_or(u64::MAX);
        q.lines
            .iter()
            .filter(|(n, _)| *n >= from)
            .take(max)
            .cloned()
            .collect()
    }

    /// Reader `r` took every line up to number `n`; lines every reader
    /// took leave the ring.
    pub fn taken(&self, r: usize, n: u64) {
        let mut q = self.lock();
        if let Some(c) = q.readers.get_mut(r) {
            *c = (*c).max(n + 1);
        }
        let low = q.readers.iter().copied().min().unwrap_or(0);
        while q.lines.front().is_some_and(|(n, _)| *n < low) {
            if let Some((_, l)) = q.lines.pop_front() {
                q.bytes -= l.len();
            }
        }
    }

    /// Lines refused so far.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }
}
