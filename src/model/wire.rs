//! The protobuf wire format, walked over a file with positioned reads.
//!
//! A model can be gigabytes of weights around kilobytes of graph. Decoding
//! it as one message needs it all in memory, and a memory map of it kills
//! the process with SIGBUS when an exporter truncates the file while it is
//! read. So the reader walks fields instead: it reads a tag and a length,
//! descends into the messages that matter (graphs, nodes, attributes that
//! hold subgraphs), decodes small ones whole, and steps over everything
//! else (tensor payloads) by moving its position, never reading a byte of
//! them. A field that runs past the end of its message or of the file is an
//! error, never a panic.

use std::io;

/// Bytes that can be read at an offset: a file, or a slice in memory.
pub(crate) trait Source {
    fn len(&self) -> u64;
    /// Fills as much of `buf` as there is from `offset` on; returns how much.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl Source for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        crate::host::read_at_most(self, buf, offset)
    }
}

impl Source for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(<[u8]>::len(self));
        let n = buf.len().min(<[u8]>::len(self) - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

/// Why a message could not be walked.
#[derive(Debug)]
pub(crate) enum WireError {
    Io(io::Error),
    /// The bytes are not a well-formed message here.
    Malformed(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::Malformed(why) => f.write_str(why),
        }
    }
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

fn malformed(why: impl Into<String>) -> WireError {
    WireError::Malformed(why.into())
}

/// One field of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Varint(u64),
    Fixed64,
    Fixed32,
    /// A length-delimited field: where its bytes start, and how many.
    Bytes {
        offset: u64,
        len: u64,
    },
}

/// How much is read from the source at a time.
const WINDOW: usize = 64 * 1024;

/// A cursor over a source, reading ahead a window at a time.
pub(crate) struct Reader<'s> {
    source: &'s dyn Source,
    len: u64,
    window: Vec<u8>,
    window_at: u64,
}

impl<'s> Reader<'s> {
    pub(crate) fn new(source: &'s dyn Source) -> Self {
        Self { len: source.len(), source, window: Vec::new(), window_at: 0 }
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    fn byte(&mut self, at: u64) -> Result<u8, WireError> {
        let rel = at.wrapping_sub(self.window_at);
        if at < self.window_at || rel >= self.window.len() as u64 {
            self.window.resize(WINDOW, 0);
            let n = self.source.read_at(at, &mut self.window)?;
            self.window.truncate(n);
            self.window_at = at;
            if n == 0 {
                return Err(malformed("the file ends in the middle of a field"));
            }
        }
        Ok(self.window[(at - self.window_at) as usize])
    }

    /// The varint at `at`, and the offset after it.
    fn varint(&mut self, mut at: u64) -> Result<(u64, u64), WireError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte(at)?;
            at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok((value, at));
            }
        }
        Err(malformed("a varint longer than ten bytes"))
    }

    /// Calls `f` with each field of the message in `[start, end)`.
    pub(crate) fn fields(
        &mut self,
        start: u64,
        end: u64,
        mut f: impl FnMut(&mut Self, u32, Value) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        if end > self.len {
            return Err(malformed("a message runs past the end of the file"));
        }
        let mut at = start;
        while at < end {
            let (key, next) = self.varint(at)?;
            let tag = u32::try_from(key >> 3).map_err(|_| malformed("a field number out of range"))?;
            if tag == 0 {
                return Err(malformed("field number 0"));
            }
            let (value, next) = match key & 7 {
                0 => {
                    let (v, n) = self.varint(next)?;
                    (Value::Varint(v), n)
                }
                1 => (Value::Fixed64, next + 8),
                2 => {
                    let (len, n) = self.varint(next)?;
                    let stop = n.checked_add(len).ok_or_else(|| malformed("a length out of range"))?;
                    (Value::Bytes { offset: n, len }, stop)
                }
                5 => (Value::Fixed32, next + 4),
                w => return Err(malformed(format!("wire type {w}, which no ONNX field has"))),
            };
            if next > end {
                return Err(malformed("a field runs past the end of its message"));
            }
            f(self, tag, value)?;
            at = next;
        }
        Ok(())
    }

    /// The bytes of a length-delimited field, when it is at most `cap` long.
    pub(crate) fn bytes(&mut self, offset: u64, len: u64, cap: u64) -> Result<Vec<u8>, WireError> {
        if len > cap {
            return Err(malformed(format!("a {len}-byte field where at most {cap} are expected")));
        }
        // Names and small messages come from the window, as varints do: a
        // read per name would cost a system call per node and initializer.
        if len <= WINDOW as u64 {
            let held =
                |r: &Self| offset >= r.window_at && offset + len <= r.window_at + r.window.len() as u64;
            if !held(self) {
                self.window.resize(WINDOW, 0);
                let n = self.source.read_at(offset, &mut self.window)?;
                self.window.truncate(n);
                self.window_at = offset;
            }
            if held(self) {
                let start = (offset - self.window_at) as usize;
                return Ok(self.window[start..start + len as usize].to_vec());
            }
        }
        let mut buf = vec![0u8; len as usize];
        let n = self.source.read_at(offset, &mut buf)?;
        if (n as u64) < len {
            return Err(malformed("the file ends in the middle of a field"));
        }
        Ok(buf)
    }

    /// A string field (names, op types, domains), lossily decoded.
    pub(crate) fn string(&mut self, offset: u64, len: u64) -> Result<String, WireError> {
        Ok(String::from_utf8_lossy(&self.bytes(offset, len, MAX_STRING)?).into_owned())
    }

    /// The varints of a packed repeated field (`dims`), each as a signed value.
    pub(crate) fn packed(&mut self, offset: u64, len: u64) -> Result<Vec<i64>, WireError> {
        let mut out = Vec::new();
        let mut at = offset;
        while at < offset + len {
            let (v, next) = self.varint(at)?;
            out.push(v as i64);
            at = next;
        }
        Ok(out)
    }
}

/// The longest string field read (a name, a domain, a location).
pub(crate) const MAX_STRING: u64 = 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_and_long_ones_stepped_over() {
        // field 1 varint 150; field 2 bytes "hi"; field 3 bytes of 300 zeros.
        let mut msg = vec![0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1a, 0xac, 0x02];
        msg.extend(std::iter::repeat_n(0u8, 300));
        let src: &[u8] = &msg;
        let mut r = Reader::new(&src);
        let mut seen = Vec::new();
        r.fields(0, msg.len() as u64, |r, tag, v| {
            match (tag, v) {
                (2, Value::Bytes { offset, len }) => seen.push(r.string(offset, len)?),
                (t, v) => seen.push(format!("{t}:{v:?}")),
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["1:Varint(150)", "hi", "3:Bytes { offset: 10, len: 300 }"]);
    }

    #[test]
    fn a_field_past_the_end_is_an_error() {
        let msg = [0x12u8, 0x05, b'h'];
        let src: &[u8] = &msg;
        let mut r = Reader::new(&src);
        assert!(r.fields(0, 3, |_, _, _| Ok(())).is_err());
        assert!(r.fields(0, 4, |_, _, _| Ok(())).is_err());
    }
}
