//! `NcclComm`: a rank of an NCCL communicator (feature `nccl`). NCCL is loaded at run
//! time; a missing or too old library is [`Error::Unsupported`](crate::Error), and a
//! transfer NCCL fails aborts the communicator, so that its peers get errors instead of
//! waiting forever.

use super::comm::{wire::Wire, Communicator};
use crate::device::Device;
use crate::driver::nccl::{self as raw, Direction, UNIQUE_ID_BYTES};
use crate::error::{invalid, report_drop_failure, Error, Result};
use crate::runtime::Runtime;
use cudarc::driver::CudaStream;
use std::cell::Cell;
use std::sync::Arc;

/// The name of an NCCL communicator: 128 bytes one rank makes ([`UniqueId::new`]) and
/// every rank joins with, carried between processes and hosts by whatever the program
/// has: a launcher, MPI, a file, or an environment variable ([`to_hex`](Self::to_hex),
/// [`from_env`](Self::from_env)).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId([u8; UNIQUE_ID_BYTES]);

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId({}…)", &self.to_hex()[..16])
    }
}

impl UniqueId {
    /// A new id from NCCL (it names this host's bootstrap address).
    pub fn new() -> Result<Self> {
        raw::unique_id("dist::UniqueId::new").map(UniqueId)
    }

    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.0
    }

    /// An id from its 128 bytes (as another rank's [`as_bytes`](Self::as_bytes) gave).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let b: [u8; UNIQUE_ID_BYTES] = bytes.try_into().map_err(|_| {
            invalid(
                "dist::UniqueId::from_bytes",
                format!(
                    "an NCCL unique id is {UNIQUE_ID_BYTES} bytes, not {}",
                    bytes.len()
                ),
            )
        })?;
        Ok(UniqueId(b))
    }

    /// The id as 256 lowercase hex digits (for an environment variable or a file).
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// An id from [`to_hex`](Self::to_hex)'s digits.
    pub fn from_hex(text: &str) -> Result<Self> {
        const OP: &str = "dist::UniqueId::from_hex";
        let t = text.trim();
        if t.len() != 2 * UNIQUE_ID_BYTES || !t.is_ascii() {
            return Err(invalid(
                OP,
                format!(
                    "an NCCL unique id is {} hex digits, not {} characters",
                    2 * UNIQUE_ID_BYTES,
                    t.len()
                ),
            ));
        }
        let mut out = [0u8; UNIQUE_ID_BYTES];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|_| {
                invalid(
                    OP,
                    format!(
                        "{:?} at position {} is not hex",
                        &t[2 * i..2 * i + 2],
                        2 * i
                    ),
                )
            })?;
        }
        Ok(UniqueId(out))
    }

    /// The id held, as hex digits, in the environment variable `var`.
    pub fn from_env(var: &str) -> Result<Self> {
        let v = std::env::var(var).map_err(|_| {
            invalid(
                "dist::UniqueId::from_env",
                format!("the environment variable {var} is not set (or not Unicode)"),
            )
        })?;
        Self::from_hex(&v)
    }
}

/// One rank of an NCCL communicator, on one device. Transfers through it are NCCL
/// sends and receives of bytes on the caller's stream; see [`dist`](super).
pub struct NcclComm {
    raw: Cell<raw::Comm>,
    rank: usize,
    size: usize,
    device: usize,
}

// SAFETY: an NCCL communicator may be used from any thread, one at a time; `NcclComm`
// is not `Sync`, so it is.
unsafe impl Send for NcclComm {}

/// The loaded NCCL's version as (major, minor, patch), or why NCCL cannot be used.
pub fn nccl_version() -> Result<(u32, u32, u32)> {
    let v = raw::ensure("dist::nccl_version")? as u32;
    Ok((v / 10000, (v % 10000) / 100, v % 100))
}

impl NcclComm {
    /// Joins the communicator `id` of `size` ranks as `rank`, on `device`. Blocks until
    /// every rank has joined.
    pub fn init(device: &Device, id: &UniqueId, rank: usize, size: usize) -> Result<Self> {
        const OP: &str = "dist::NcclComm::init";
        let n = i32::try_from(size)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                invalid(
                    OP,
                    format!("{size} ranks; a communicator has 1 to 2^31 - 1"),
                )
            })?;
        if rank >= size {
            return Err(invalid(
                OP,
                format!("rank {rank} is not below the size {size}"),
            ));
        }
        raw::ensure(OP)?;
        Runtime::get(OP, device.ordinal())?.bind(OP)?;
        // SAFETY: the device's context is current on this thread (bind above).
        let comm = unsafe { raw::init_rank(OP, n, &id.0, rank as i32)? };
        Ok(NcclComm {
            raw: Cell::new(comm),
            rank,
            size,
            device: device.ordinal(),
        })
    }

    /// A communicator of this rank alone (its sends go to itself): for running
    /// distributed code on one GPU.
    pub fn single(device: &Device) -> Result<Self> {
        Self::init(device, &UniqueId::new()?, 0, 1)
    }

    fn live(&self, op: &'static str) -> Result<raw::Comm> {
        let c = self.raw.get();
        if c.is_null() {
            Err(invalid(
                op,
                "the NCCL communicator was aborted after a failed transfer; make a new one",
            ))
        } else {
            Ok(c)
        }
    }

    /// One send or receive through NCCL.
    ///
    /// # Safety
    /// As for [`Wire::send_bytes`] and [`Wire::recv_bytes`].
    unsafe fn transfer(
        &self,
        op: &'static str,
        direction: Direction,
        ptr: u64,
        len: usize,
        peer: usize,
        stream: &CudaStream,
    ) -> Result<()> {
        let c = self.live(op)?;
        // SAFETY: a live communicator; peer < size <= i32::MAX (checked by the callers
        // and at init); the span and stream are the caller's promise.
        unsafe { raw::transfer(op, c, direction, ptr, len, peer as i32, stream.cu_stream()) }
    }
}

impl Communicator for NcclComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn device(&self) -> usize {
        self.device
    }
}

impl Wire for NcclComm {
    fn check_usable(&self, op: &'static str) -> Result<()> {
        let c = self.live(op)?;
        // SAFETY: a live communicator.
        unsafe { raw::async_error(op, c) }.map_err(|e| self.fail(op, e))
    }

    fn group_start(&self, op: &'static str) -> Result<()> {
        self.live(op)?;
        raw::group_start(op)
    }

    fn group_end(&self, op: &'static str) -> Result<()> {
        let c = self.live(op)?;
        raw::group_end(op, c)
    }

    unsafe fn send_bytes(
        &self,
        op: &'static str,
        ptr: u64,
        len: usize,
        peer: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        // SAFETY: the caller's promise (the trait's contract).
        unsafe { self.transfer(op, Direction::Send, ptr, len, peer, stream) }
    }

    unsafe fn recv_bytes(
        &self,
        op: &'static str,
        ptr: u64,
        len: usize,
        peer: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        // SAFETY: the caller's promise (the trait's contract).
        unsafe { self.transfer(op, Direction::Recv, ptr, len, peer, stream) }
    }

    fn fail(&self, op: &'static str, error: Error) -> Error {
        let c = self.raw.replace(std::ptr::null_mut());
        if !c.is_null() {
            // SAFETY: a live communicator, never used again (the handle is cleared).
            if let Err(e) = unsafe { raw::abort(op, c) } {
                report_drop_failure("abort an NCCL communicator", &e.to_string());
            }
        }
        error
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        let c = self.raw.replace(std::ptr::null_mut());
        if c.is_null() {
            return;
        }
        // SAFETY: a live communicator, used by nothing afterwards.
        if let Err(e) = unsafe { raw::destroy("dist::NcclComm::drop", c) } {
            eprintln!("stridekit: could not finalize an NCCL communicator: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_hex_and_bad_text_is_refused() {
        let mut b = [0u8; UNIQUE_ID_BYTES];
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i * 37 + 11) as u8;
        }
        let id = UniqueId::from_bytes(&b).unwrap();
        assert_eq!(UniqueId::from_hex(&id.to_hex()).unwrap(), id);
        assert_eq!(
            UniqueId::from_hex(&format!(" {}\n", id.to_hex())).unwrap(),
            id
        );
        assert!(UniqueId::from_bytes(&b[..127]).is_err());
        let e = UniqueId::from_hex("abc").unwrap_err().to_string();
        assert!(e.contains("256 hex digits, not 3"), "{e}");
        let mut bad = id.to_hex();
        bad.replace_range(10..12, "zz");
        assert!(UniqueId::from_hex(&bad)
            .unwrap_err()
            .to_string()
            .contains("\"zz\" at position 10"));
        let e = UniqueId::from_env("STRIDEKIT_TEST_SURELY_UNSET")
            .unwrap_err()
            .to_string();
        assert!(e.contains("STRIDEKIT_TEST_SURELY_UNSET is not set"), "{e}");
    }

    #[test]
    fn a_machine_without_nccl_gets_an_error_not_a_panic() {
        // Where NCCL loads, this is its version; where it does not (CI), every entry
        // point answers Unsupported naming the library.
        match nccl_version() {
            Ok((major, minor, _)) => assert!((major, minor) >= (2, 18)),
            Err(e) => {
                assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
                assert!(e.to_string().contains("libnccl"), "{e}");
                let e = UniqueId::new().unwrap_err();
                assert!(e.to_string().contains("libnccl"), "{e}");
            }
        }
    }
}

#[cfg(test)]
mod gpu_tests {
    use super::*;
    use crate::memory::MemoryResource;

    /// An NCCL call NCCL itself refuses (a send to a rank the communicator does not
    /// have, which the public API checks before NCCL sees it) comes back as
    /// `Error::Nccl` with NCCL's words, and the communicator is aborted: later calls
    /// fail at once instead of waiting.
    #[test]
    #[ignore = "needs a CUDA device and NCCL"]
    fn an_nccl_failure_is_an_error_and_aborts_the_communicator() {
        let dev = Device::open(0).unwrap();
        let comm = NcclComm::single(&dev).unwrap();
        let s = dev.new_stream().unwrap();
        let buf = crate::memory::DeviceMemoryResource::new(&dev)
            .unwrap()
            .allocate(64, &s)
            .unwrap();
        comm.group_start("test").unwrap();
        // SAFETY: 64 bytes of this device's memory, alive past the synchronize below.
        let sent = unsafe { comm.send_bytes("test", buf.ptr(), 64, 3, &s) };
        let ended = comm.group_end("test");
        let e = comm.fail("test", sent.and(ended).unwrap_err());
        assert!(
            matches!(&e, Error::Nccl { code, .. } if *code != 0),
            "{e:?}"
        );
        let again = comm.check_usable("test").unwrap_err().to_string();
        assert!(again.contains("aborted"), "{again}");
        let b = crate::dist::Batch::new(&comm)
            .run(&s)
            .unwrap_err()
            .to_string();
        assert!(b.contains("aborted"), "{b}");
        s.synchronize().unwrap();
    }
}
