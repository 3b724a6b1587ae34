//! The master's table of processes (workers and programs), and what it
//! says about them: `show proc`, exit lines, the master's exit code.

use std::time::Duration;

/// What a child process is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Worker,
    /// A `program` section's command, by name.
    Program(String),
}

/// Where a child stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Started by a reload, not ready yet.
    Starting,
    /// The process serving now (a worker), or running (a program).
    Current,
    /// Told to leave by a reload, still finishing.
    Old,
}

/// One child of the master.
#[derive(Debug, Clone)]
pub struct Child {
    pub pid: i32,
    pub kind: Kind,
    pub stage: Stage,
    /// Reloads this process lived through.
    pub reloads: u32,
    /// Seconds since the master started, when it started.
    pub started: Duration,
}

/// Every child of the master, in start order.
#[derive(Debug, Default)]
pub struct Table {
    pub children: Vec<Child>,
    /// Reloads asked, and how many of them failed.
    pub reloads: u32,
    pub failed: u32,
    /// The last reload failed (the master CLI's prompt says so).
    pub last_failed: bool,
}

impl Table {
    pub fn get(&self, pid: i32) -> Option<&Child> {
        self.children.iter().find(|c| c.pid == pid)
    }

    pub fn get_mut(&mut self, pid: i32) -> Option<&mut Child> {
        self.children.iter_mut().find(|c| c.pid == pid)
    }

    pub fn remove(&mut self, pid: i32) -> Option<Child> {
        let i = self.children.iter().position(|c| c.pid == pid)?;
        Some(self.children.remove(i))
    }

    /// The newest worker not told to leave (`@1`): one starting after a
    /// reload, else the one serving.
    pub fn newest_worker(&self) -> Option<i32> {
        self.workers()
            .filter(|c| c.stage != Stage::Old)
            .last()
            .map(|c| c.pid)
    }

    /// The worker serving now.
    pub fn current_worker(&self) -> Option<i32> {
        self.workers()
            .find(|c| c.stage == Stage::Current)
            .map(|c| c.pid)
    }

    pub fn workers(&self) -> impl Iterator<Item = &Child> {
        self.children.iter().filter(|c| c.kind == Kind::Worker)
    }

    /// Every child lives through one more reload.
    pub fn count_reload(&mut self) {
        self.reloads += 1;
        for c in &mut self.children {
            c.reloads += 1;
        }
    }

    /// Old workers that lived through more than `max` reloads.
    pub fn over_max_reloads(&self, max: u32) -> Vec<i32> {
        self.workers()
            .filter(|c| c.stage == Stage::Old && c.reloads > max)
            .map(|c| c.pid)
            .collect()
    }
}

fn uptime(d: Duration) -> String {
    let s = d.as_secs();
    format!(
        "{}d{:02}h{:02}m{:02}s",
        s / 86400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

fn row(pid: &str, kind: &str, reloads: &str, up: &str, version: &str) -> String {
    format!("{pid:<15} {kind:<15} {reloads:<15} {up:<15} {version:<15}\n")
}

/// `show proc`, as haproxy's master CLI prints it; `now`: seconds since
/// the master started.
pub fn show_proc(t: &Table, master: i32, now: Duration, version: &str) -> String {
    let mut out = row("#<PID>", "<type>", "<reloads>", "<uptime>", "<version>");
    out += &row(
        &master.to_string(),
        "master",
        &format!("{} [failed: {}]", t.reloads, t.failed),
        &uptime(now),
        version,
    );
    let line = |c: &Child, kind: &str, version: &str| {
        row(
            &c.pid.to_string(),
            kind,
            &c.reloads.to_string(),
            &uptime(now.saturating_sub(c.started)),
            version,
        )
    };
    out += "# workers\n";
    for c in t.workers().filter(|c| c.stage != Stage::Old) {
        out += &line(c, "worker", version);
    }
    let old: Vec<&Child> = t.workers().filter(|c| c.stage == Stage::Old).collect();
    if !old.is_empty() {
        out += "# old workers\n";
        for c in old {
            out += &line(c, "worker", version);
        }
    }
    let programs: Vec<&Child> = t
        .children
        .iter()
        .filter(|c| matches!(c.kind, Kind::Program(_)))
        .collect();
    if !programs.is_empty() {
        out += "# programs\n";
        for c in programs {
            if let Kind::Program(name) = &c.kind {
                out += &line(c, name, "-");
            }
        }
    }
    out + "\n"
}

/// A child's exit status as haproxy reports it: the exit code, or 128 +
/// the signal that killed it.
pub fn status_code(code: Option<i32>, signal: Option<i32>) -> i32 {
    match (code, signal) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => 255,
    }
}

/// The words after an exit code: "Exit", or the signal's name for codes
/// above 128.
pub fn reason(status: i32) -> &'static str {
    if status < 128 {
        return "Exit";
    }
    match status - 128 {
        1 => "Hangup",
        2 => "Interrupt",
        3 => "Quit",
        4 => "Illegal instruction",
        6 => "Aborted",
        7 => "Bus error",
        8 => "Floating point exception",
        9 => "Killed",
        10 => "User defined signal 1",
        11 => "Segmentation fault",
        12 => "User defined signal 2",
        13 => "Broken pipe",
        14 => "Alarm clock",
        15 => "Terminated",
        _ => "Unknown signal",
    }
}

/// A status that means a child failed (exit-on-failure): not a clean exit,
/// nor the SIGINT or SIGTERM a stop sends.
pub fn is_failure(status: i32) -> bool {
    !matches!(status, 0 | 130 | 143)
}

/// Whether a status becomes the master's exit code (the first one that is
/// not 0 nor a SIGTERM's does).
pub fn reported(status: i32) -> bool {
    !matches!(status, 0 | 143)
}

#[cfg(test)]
#[path = "procs_tests.rs"]
mod tests;
