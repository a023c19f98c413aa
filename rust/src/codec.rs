//! Versioned, checksummed container for the core's index files.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! magic    8 bytes   identifies the structure ("CUEMIDX\0", "CUEMSAL\0")
//! version  u32       format version of that structure
//! length   u64       number of body bytes
//! body     length    structure-specific
//! crc32    u32       CRC-32 (IEEE) of the body
//! ```
//!
//! [`Reader`] never panics on hostile input: every read is bounds-checked and a
//! short or inconsistent buffer becomes [`CoreError::Corrupt`].

use crate::error::{CoreError, Result};

const HEADER: usize = 8 + 4 + 8;
const TRAILER: usize = 4;

/// Wraps a body in the container.
pub fn seal(magic: &[u8; 8], version: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body.len() + TRAILER);
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    out
}

/// Checks magic, version, length and checksum; returns the body.
pub fn open<'a>(magic: &[u8; 8], version: u32, bytes: &'a [u8]) -> Result<&'a [u8]> {
    if bytes.len() < HEADER + TRAILER {
        return Err(CoreError::Corrupt(format!(
            "{} bytes is shorter than any index file",
            bytes.len()
        )));
    }
    if &bytes[..8] != magic {
        return Err(CoreError::Corrupt(
            "wrong magic: not this kind of cuemem index file".into(),
        ));
    }
    let found = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if found != version {
        return Err(CoreError::UnsupportedVersion {
            found,
            supported: version,
        });
    }
    let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let expected = (bytes.len() - HEADER - TRAILER) as u64;
    if len != expected {
        return Err(CoreError::Corrupt(format!(
            "body length {len} but file holds {expected} (truncated or padded)"
        )));
    }
    let body = &bytes[HEADER..bytes.len() - TRAILER];
    let crc = u32::from_le_bytes(bytes[bytes.len() - TRAILER..].try_into().expect("4 bytes"));
    if crc32fast::hash(body) != crc {
        return Err(CoreError::Corrupt("checksum mismatch".into()));
    }
    Ok(body)
}

/// Appends primitive values to a body.
#[derive(Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
    pub fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    /// Gives a writer for a length-prefixed run filled by `fill`.
    pub fn nested(&mut self, fill: impl FnOnce(&mut Vec<u8>)) {
        let at = self.buf.len();
        self.u64(0);
        fill(&mut self.buf);
        let len = (self.buf.len() - at - 8) as u64;
        self.buf[at..at + 8].copy_from_slice(&len.to_le_bytes());
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads primitive values back, bounds-checked.
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, at: 0 }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| {
                CoreError::Corrupt(format!(
                    "needs {n} bytes at offset {}, body has {}",
                    self.at,
                    self.buf.len()
                ))
            })?;
        let out = &self.buf[self.at..end];
        self.at = end;
        Ok(out)
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// A count that must fit in what is left of the body at `min_each` bytes apiece.
    pub fn count(&mut self, min_each: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_each.max(1)) > self.remaining() {
            return Err(CoreError::Corrupt(format!(
                "count {n} exceeds the remaining {} bytes",
                self.remaining()
            )));
        }
        Ok(n)
    }
    pub fn str(&mut self) -> Result<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?)
            .map_err(|_| CoreError::Corrupt("a name is not UTF-8".into()))
    }
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u64()?;
        let n = usize::try_from(n).map_err(|_| CoreError::Corrupt("length overflows".into()))?;
        self.take(n)
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.at
    }
    pub fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(CoreError::Corrupt(format!(
                "{} trailing bytes in body",
                self.remaining()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_then_open_round_trips() {
        let sealed = seal(b"TESTMAG\0", 3, b"hello");
        assert_eq!(open(b"TESTMAG\0", 3, &sealed).unwrap(), b"hello");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let sealed = seal(b"TESTMAG\0", 1, b"some body bytes");
        for cut in 0..sealed.len() {
            assert!(
                open(b"TESTMAG\0", 1, &sealed[..cut]).is_err(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn flipped_bit_fails_checksum() {
        let mut sealed = seal(b"TESTMAG\0", 1, b"some body bytes");
        sealed[HEADER + 2] ^= 0x10;
        assert!(matches!(
            open(b"TESTMAG\0", 1, &sealed),
            Err(CoreError::Corrupt(_))
        ));
    }

    #[test]
    fn other_version_is_reported() {
        let sealed = seal(b"TESTMAG\0", 2, b"x");
        assert!(matches!(
            open(b"TESTMAG\0", 1, &sealed),
            Err(CoreError::UnsupportedVersion {
                found: 2,
                supported: 1
            })
        ));
    }

    #[test]
    fn reader_rejects_oversized_counts() {
        let mut w = Writer::default();
        w.u32(1_000_000);
        let body = w.into_inner();
        assert!(Reader::new(&body).count(8).is_err());
    }
}
