//! Constant tables that kernels read from device memory, made once per key and kept for
//! the process (one cache per device, in its `Runtime`).
//!
//! A table is uploaded on a stream of its own and that stream is synchronized before the
//! table is handed out, so every kernel launched afterwards, on any stream, reads it whole;
//! it is never written again or freed while the process runs, so no launch has to be
//! ordered against it. The cache holds at most [`MAX_TABLES`] tables and
//! [`MAX_TABLE_BYTES`] bytes: past that, or where an upload fails, a new table is not made
//! (its caller runs its copy another way).

use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use foldhash::{HashMap, HashMapExt};
use std::sync::{Arc, Mutex};

/// The most tables one device keeps.
pub(crate) const MAX_TABLES: usize = 256;
/// The most bytes of tables one device keeps (16 MiB).
pub(crate) const MAX_TABLE_BYTES: usize = 16 << 20;
/// The most keys remembered as having no table (their makers are not asked again).
const MAX_KEYS_WITHOUT: usize = 4096;

/// The cache's own upload stream, made on first use.
fn ensure_stream(
    slot: &mut Option<Arc<CudaStream>>,
    ctx: &Arc<CudaContext>,
) -> std::result::Result<Arc<CudaStream>, cudarc::driver::DriverError> {
    if let Some(s) = slot {
        return Ok(s.clone());
    }
    let s = ctx.new_stream()?;
    *slot = Some(s.clone());
    Ok(s)
}

/// Whether a cache holding `tables` tables of `held` bytes takes one more of `bytes`
/// (empty tables are never made).
fn admits(tables: usize, held: usize, bytes: usize) -> bool {
    bytes > 0 && tables < MAX_TABLES && held.saturating_add(bytes) <= MAX_TABLE_BYTES
}

/// One uploaded table: its 32-bit words in device memory and a header its maker chose.
pub(crate) struct DeviceTable {
    /// Holds the memory for the process.
    _data: CudaSlice<u32>,
    ptr: u64,
    words: usize,
    header: [u32; 8],
}

impl DeviceTable {
    /// The device address of word 0.
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The table's length in 32-bit words.
    pub(crate) fn words(&self) -> usize {
        self.words
    }

    /// What the table's maker recorded beside it.
    pub(crate) fn header(&self) -> &[u32; 8] {
        &self.header
    }
}

/// What a table's maker hands back: its words and a header, or nothing (no table for that
/// key, remembered as such).
pub(crate) type Made = Option<(Vec<u32>, [u32; 8])>;

#[derive(Default)]
struct Tables {
    /// Keys with a table, and keys whose maker gave none (remembered up to
    /// [`MAX_KEYS_WITHOUT`]).
    by_key: HashMap<Vec<i64>, Option<Arc<DeviceTable>>>,
    /// Tables held, and their bytes.
    count: usize,
    bytes: usize,
    stream: Option<Arc<CudaStream>>,
}

/// A device's table cache. See the module docs.
pub(crate) struct DeviceTables {
    tables: Mutex<Tables>,
}

impl DeviceTables {
    pub(crate) fn new() -> Self {
        DeviceTables {
            tables: Mutex::new(Tables {
                by_key: HashMap::new(),
                count: 0,
                bytes: 0,
                stream: None,
            }),
        }
    }

    /// The table of `key`: the one made before, or `make`'s, uploaded now where `upload`
    /// allows (a caller whose stream is capturing a graph passes false: it takes only
    /// tables made already). `Ok(None)`: no table (`make` gave none, the cache is full,
    /// or an upload was not allowed).
    pub(crate) fn get(
        &self,
        op: &'static str,
        ctx: &Arc<CudaContext>,
        key: &[i64],
        upload: bool,
        make: impl FnOnce() -> Made,
    ) -> Result<Option<Arc<DeviceTable>>> {
        // Held while a table is made and uploaded: two threads never make the same one,
        // and a table handed out is never replaced.
        let mut t = self.tables.lock().map_err(|_| Error::Internal {
            op,
            what: "the device table lock was poisoned by a panic in another thread".into(),
        })?;
        if let Some(found) = t.by_key.get(key) {
            return Ok(found.clone());
        }
        if !upload || t.count >= MAX_TABLES {
            return Ok(None);
        }
        let Some((words, header)) = make() else {
            if t.by_key.len() - t.count < MAX_KEYS_WITHOUT {
                t.by_key.insert(key.to_vec(), None);
            }
            return Ok(None);
        };
        let bytes = words.len().saturating_mul(4);
        if !admits(t.count, t.bytes, bytes) {
            return Ok(None);
        }
        // A table that cannot be uploaded now (no memory for it, or a pageable upload that
        // another thread's graph capture forbids) is not made, nor remembered: its caller
        // runs the copy another way, and a later copy tries again. A sticky error of the
        // context reaches the caller through that other way's own launch.
        let Ok(stream) = ensure_stream(&mut t.stream, ctx) else {
            return Ok(None);
        };
        let Ok(data) = stream.clone_htod(&words) else {
            return Ok(None);
        };
        if stream.synchronize().is_err() {
            return Ok(None);
        }
        let ptr = {
            let (ptr, _sync) = data.device_ptr(&stream);
            ptr
        };
        let table = Arc::new(DeviceTable {
            _data: data,
            ptr,
            words: words.len(),
            header,
        });
        t.count += 1;
        t.bytes += bytes;
        t.by_key.insert(key.to_vec(), Some(table.clone()));
        Ok(Some(table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_stops_at_its_count_and_its_bytes() {
        assert!(admits(0, 0, 4));
        assert!(!admits(0, 0, 0), "an empty table");
        assert!(admits(MAX_TABLES - 1, 0, 4));
        assert!(!admits(MAX_TABLES, 0, 4));
        assert!(admits(1, MAX_TABLE_BYTES - 4, 4));
        assert!(!admits(1, MAX_TABLE_BYTES - 4, 8));
        assert!(!admits(1, usize::MAX, 4), "no wrap");
    }
}
