//! The cue index file: canonical, versioned, checksummed.
//!
//! Body (inside the [`crate::codec`] container, magic `CUEMIDX\0`, version 1):
//!
//! ```text
//! u32 dimensions
//!   per dimension: str name, u32 values
//!     per value (sorted by value): str value, bytes posting (portable roaring format)
//! bytes live rows (portable roaring format)
//! ```
//!
//! Each posting list is stored in the portable roaring serialization that CRoaring,
//! pyroaring and the Java library read. Values are written in sorted order and empty
//! lists are skipped, so two indexes holding the same postings serialize to the same
//! bytes whatever order they were built in.

use std::fs;
use std::io::Write;
use std::path::Path;

use roaring::RoaringBitmap;

use super::index::CueIndex;
use crate::codec::{self, Reader, Writer};
use crate::error::{CoreError, Result};

const MAGIC: &[u8; 8] = b"CUEMIDX\0";
const VERSION: u32 = 1;

fn write_bitmap(w: &mut Writer, bitmap: &RoaringBitmap) {
    w.nested(|buf| {
        bitmap
            .serialize_into(buf)
            .expect("writing to a Vec cannot fail")
    });
}

fn read_bitmap(r: &mut Reader<'_>) -> Result<RoaringBitmap> {
    let bytes = r.bytes()?;
    let bitmap = RoaringBitmap::deserialize_from(bytes)
        .map_err(|e| CoreError::Corrupt(format!("posting list: {e}")))?;
    if bitmap.serialized_size() != bytes.len() {
        return Err(CoreError::Corrupt("posting list has trailing bytes".into()));
    }
    Ok(bitmap)
}

impl CueIndex {
    /// The canonical file image of this index.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.dims.len() as u32);
        for dim in &self.dims {
            w.str(dim.name());
            let mut values: Vec<_> = dim.iter().collect();
            values.sort_unstable_by(|a, b| a.0.cmp(b.0));
            w.u32(values.len() as u32);
            for (value, posting) in values {
                w.str(value);
                write_bitmap(&mut w, posting);
            }
        }
        write_bitmap(&mut w, &self.live);
        codec::seal(MAGIC, VERSION, &w.into_inner())
    }

    /// Reads an index back; any damage is [`CoreError::Corrupt`], never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(codec::open(MAGIC, VERSION, bytes)?);
        let n_dims = r.count(4)?;
        let mut names = Vec::with_capacity(n_dims);
        let mut columns = Vec::with_capacity(n_dims);
        for _ in 0..n_dims {
            names.push(r.str()?.to_owned());
            let n_values = r.count(12)?;
            let mut column = Vec::with_capacity(n_values);
            for _ in 0..n_values {
                let value = r.str()?;
                if value.is_empty() {
                    return Err(CoreError::Corrupt("empty cue value".into()));
                }
                column.push((value, read_bitmap(&mut r)?));
            }
            columns.push(column);
        }
        let live = read_bitmap(&mut r)?;
        r.finish()?;
        let mut index = CueIndex::new(&names).map_err(|e| CoreError::Corrupt(e.to_string()))?;
        for (d, column) in columns.into_iter().enumerate() {
            let dim = &mut index.dims[d];
            for (value, posting) in column {
                if !posting.is_subset(&live) {
                    return Err(CoreError::Corrupt(format!(
                        "posting {value:?} holds rows that are not live"
                    )));
                }
                let id = dim.intern(value);
                if !dim.posting(value).expect("just interned").is_empty() {
                    return Err(CoreError::Corrupt(format!("value {value:?} appears twice")));
                }
                dim.set_posting(id, posting);
            }
        }
        index.live = live;
        Ok(index)
    }

    /// Writes the index to `path` atomically (temporary file, fsync, rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        write_atomic(path, &self.to_bytes())
    }

    /// Reads an index written by [`CueIndex::save`].
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_bytes(&fs::read(path)?)
    }
}

/// Replaces `path` with `bytes` so that readers see the old file or the new one, never a mix.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    {
        let mut f = fs::File::create(tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(tmp, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Make the rename itself durable; not every platform lets a directory be opened.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
