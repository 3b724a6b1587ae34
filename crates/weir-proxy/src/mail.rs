//! Email alerts (`email-alert`, `mailers`): a backend's server state
//! changes mailed over SMTP to each mailer of its section, one mail at a
//! time per mailer and in order, with HAProxy's dialogue (HELO, MAIL FROM,
//! RCPT TO, DATA with `From`, `To`, `Date` and a `[HAProxy Alert]`
//! subject, QUIT), each within `timeout mail`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Mails waiting for one mailer before new ones are dropped.
const QUEUE: usize = 64;

/// What every mail of a backend carries.
#[derive(Debug)]
struct Envelope {
    from: String,
    to: String,
    helo: String,
}

/// One mailer: its address and the mails waiting for it (the sender
/// task starts with the first).
#[derive(Debug)]
struct Mailer {
    addr: SocketAddr,
    timeout: Duration,
    queue: Mutex<Option<mpsc::Sender<String>>>,
}

/// A backend's email alerts.
#[derive(Debug)]
pub struct Alerts {
    env: Arc<Envelope>,
    /// The highest syslog level mailed.
    level: u8,
    mailers: Vec<Mailer>,
}

impl Alerts {
    /// The alerts `px` asks for (`None` without `email-alert`);
    /// `hostname` gives the HELO name unless `email-alert myhostname`.
    pub fn new(
        cfg: &weir_config::Config,
        px: &weir_config::Proxy,
        hostname: impl FnOnce() -> String,
    ) -> Option<Alerts> {
        let e = &px.email_alert;
        let (from, to, name) = (e.from.as_ref()?, e.to.as_ref()?, e.mailers.as_ref()?);
        let sec = cfg.mailers.iter().find(|m| m.name == *name)?;
        Some(Alerts {
            env: Arc::new(Envelope {
                from: from.clone(),
                to: to.clone(),
                helo: e.myhostname.clone().unwrap_or_else(hostname),
            }),
            level: e.level.unwrap_or(crate::log::level::ALERT),
            mailers: sec
                .mailers
                .iter()
                .map(|(_, addr)| Mailer {
                    addr: *addr,
                    timeout: sec.timeout,
                    queue: Mutex::new(None),
                })
                .collect(),
        })
    }

    /// Mails `msg` (a state line of level `level`) to every mailer, when
    /// its level is mailed.
    pub fn send(&self, level: u8, msg: &str) {
        if level > self.level {
            return;
        }
        let text = msg.trim_end_matches('.').to_string();
        for m in &self.mailers {
            let mut q = m.queue.lock().unwrap_or_else(|e| e.into_inner());
            if q.is_none() {
                let Ok(rt) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                let (tx, rx) = mpsc::channel(QUEUE);
                rt.spawn(deliver(m.addr, m.timeout, self.env.clone(), rx));
                *q = Some(tx);
            }
            if let Some(tx) = q.as_ref() {
                // A full queue drops the mail: the mailer is not keeping up.
                let _ = tx.try_send(text.clone());
            }
        }
    }
}

/// Sends a mailer's mails one after the other.
async fn deliver(
    addr: SocketAddr,
    timeout: Duration,
    env: Arc<Envelope>,
    mut rx: mpsc::Receiver<String>,
) {
    while let Some(msg) = rx.recv().await {
        let mail = message(&env, &msg, crate::clock::wall().as_secs() as i64);
        if let Ok(Err(e)) | Err(e) = tokio::time::timeout(timeout, smtp(addr, &env, &mail))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))
        {
            crate::log::console("WARNING", &format!("email alert to {addr} failed: {e}"));
        }
    }
}

/// The mail's data: headers, then the state line, dot-stuffed.
fn message(env: &Envelope, msg: &str, now: i64) -> String {
    let body = if msg.starts_with('.') {
        format!(".{msg}")
    } else {
        msg.to_string()
    };
    format!(
        "From: {}\r\nTo: {}\r\nDate: {}\r\nSubject: [HAProxy Alert] {msg}\r\n\r\n{body}\r\n\r\n.\r\n",
        env.from,
        env.to,
        rfc2822(now)
    )
}

/// `Fri, 27 Nov 2026 08:10:19 +0000 (UTC)`.
fn rfc2822(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    let days = secs.div_euclid(86_400);
    let (y, m, d) = weir_rules::textconv::civil_from_days(days);
    let rem = secs.rem_euclid(86_400);
    let wd = DAYS
        .get(days.rem_euclid(7) as usize)
        .copied()
        .unwrap_or("Thu");
    let mon = weir_proto::syslog::MONTHS
        .get((m as usize + 11) % 12)
        .copied()
        .unwrap_or("Jan");
    format!(
        "{wd}, {d:02} {mon} {y} {:02}:{:02}:{:02} +0000 (UTC)",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One SMTP exchange: each command's reply must be the one expected.
async fn smtp(addr: SocketAddr, env: &Envelope, mail: &str) -> std::io::Result<()> {
    let s = TcpStream::connect(addr).await?;
    let (r, mut w) = s.into_split();
    let mut r = BufReader::new(r);
    expect(&mut r, 220).await?;
    let steps: [(String, u16); 4] = [
        (format!("HELO {}\r\n", env.helo), 250),
        (format!("MAIL FROM:<{}>\r\n", env.from), 250),
        (format!("RCPT TO:<{}>\r\n", env.to), 250),
        ("DATA\r\n".into(), 354),
    ];
    for (cmd, code) in steps {
        w.write_all(cmd.as_bytes()).await?;
        expect(&mut r, code).await?;
    }
    w.write_all(mail.as_bytes()).await?;
    expect(&mut r, 250).await?;
    w.write_all(b"QUIT\r\n").await?;
    expect(&mut r, 221).await
}

/// Reads a reply (its `NNN-` lines, then `NNN `): an error unless `code`.
async fn expect(
    r: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    code: u16,
) -> std::io::Result<()> {
    loop {
        let mut line = String::new();
        // A reply line is short: a longer one is not SMTP.
        let n = (&mut *r).take(1024).read_line(&mut line).await?;
        if n == 0 || !line.ends_with('\n') {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let got = line.get(..3).and_then(|c| c.parse::<u16>().ok());
        if line.as_bytes().get(3) == Some(&b'-') {
            continue;
        }
        return match got {
            Some(c) if c == code => Ok(()),
            _ => Err(std::io::Error::other(format!(
                "expected {code}, got '{}'",
                line.trim_end()
            ))),
        };
    }
}

#[cfg(test)]
#[path = "mail_tests.rs"]
mod tests;
