//! Streaming chunked-body decoder: chunk sizes (extensions dropped), data,
//! trailers kept, strict about sizes and line endings.
// Indexing still to be made checked (`get`) here: every index follows a length check or a found position.
#![allow(clippy::indexing_slicing)]

use super::H1Error;

/// What the decoder found in the bytes it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkEvent {
    /// Body bytes at this range of the input.
    Data(std::ops::Range<usize>),
    /// A trailer field line (without CRLF).
    Trailer(Vec<u8>),
    /// The body is complete.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Size,
    Data(u64),
    DataCrlf,
    Trailers,
    Done,
}

/// Incremental decoder; feed it bytes as they come.
#[derive(Debug, Default)]
pub struct ChunkedDecoder {
    state: State,
}

/// Longest chunk-size line accepted (size, extensions and CRLF).
const MAX_SIZE_LINE: usize = 4096;

/// Whether the start of a chunk-size line, still without its CRLF, can
/// begin a valid one: hex digits up to the first `;`, space or CR (so that
/// a body that is not chunked at all is refused at once, not awaited).
fn size_prefix_ok(partial: &[u8]) -> bool {
    let digits = partial
        .iter()
        .position(|&b| matches!(b, b';' | b' ' | b'\t' | b'\r'))
        .unwrap_or(partial.len());
    digits <= 16
        && partial[..digits].iter().all(u8::is_ascii_hexdigit)
        && (digits > 0 || partial.is_empty())
}

impl ChunkedDecoder {
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes from `buf`; returns the events and the bytes consumed. Bytes
    /// not consumed (an incomplete line) must be given again with more.
    pub fn feed(&mut self, buf: &[u8]) -> Result<(Vec<ChunkEvent>, usize), H1Error> {
        let bad = |m| H1Error::BadRequest(m);
        let mut ev = Vec::new();
        let mut i = 0;
        loop {
            match self.state {
                State::Done => return Ok((ev, i)),
                State::Data(left) => {
                    if i == buf.len() {
                        return Ok((ev, i));
                    }
                    let n = (left as usize).min(buf.len() - i);
                    ev.push(ChunkEvent::Data(i..i + n));
                    i += n;
                    let left = left - n as u64;
                    self.state = if left == 0 {
                        State::DataCrlf
                    } else {
                        State::Data(left)
                    };
                }
                State::DataCrlf => {
                    if buf.len() - i < 2 {
                        return Ok((ev, i));
                    }
                    if &buf[i..i + 2] != b"\r\n" {
                        return Err(bad("missing CRLF after chunk data"));
                    }
                    i += 2;
                    self.state = State::Size;
                }
                State::Size | State::Trailers => {
                    let Some(eol) = buf[i..].windows(2).position(|w| w == b"\r\n") else {
                        if buf.len() - i > MAX_SIZE_LINE
                            || buf[i..].contains(&b'\n') && !buf[i..].contains(&b'\r')
                            || self.state == State::Size && !size_prefix_ok(&buf[i..])
                        {
                            return Err(bad("invalid chunk line"));
                        }
                        return Ok((ev, i));
                    };
                    let line = &buf[i..i + eol];
                    if line.len() > MAX_SIZE_LINE
                        || line.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0)
                    {
                        return Err(bad("invalid chunk line"));
                    }
                    i += eol + 2;
                    if self.state == State::Trailers {
                        if line.is_empty() {
                            self.state = State::Done;
                            ev.push(ChunkEvent::End);
                        } else {
                            if !line.contains(&b':') {
                                return Err(bad("invalid trailer field"));
                            }
                            ev.push(ChunkEvent::Trailer(line.to_vec()));
                        }
                        continue;
                    }
                    let size_part = line.split(|&b| b == b';').next().unwrap_or(b"");
                    let size_part = size_part.strip_suffix(b" ").unwrap_or(size_part);
                    if size_part.is_empty()
                        || size_part.len() > 16
                        || !size_part.iter().all(|b| b.is_ascii_hexdigit())
                    {
                        return Err(bad("invalid chunk size"));
                    }
                    let s =
                        std::str::from_utf8(size_part).map_err(|_| bad("invalid chunk size"))?;
                    let size =
                        u64::from_str_radix(s, 16).map_err(|_| bad("chunk size overflow"))?;
                    if size >> 62 != 0 {
                        return Err(bad("chunk size overflow"));
                    }
                    self.state = if size == 0 {
                        State::Trailers
                    } else {
                        State::Data(size)
                    };
                }
            }
        }
    }
}
