//! The one error type of the CUDA crate.

use cudarc::driver::DriverError;
use stridekit_layout::LayoutError;

/// Everything stridekit's CUDA layer can fail with. Each message names the operation,
/// the offending value and the rule or driver status.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver library could be loaded on this machine.
    #[error("{op}: no CUDA driver (libcuda) could be loaded; GPU features need an NVIDIA driver")]
    NoDriver {
        /// The operation that needed the driver.
        op: &'static str,
    },
    /// The driver is there but no device of that ordinal is.
    #[error("{op}: no CUDA device with ordinal {ordinal}; {count} device(s) are visible")]
    NoDevice {
        /// The operation.
        op: &'static str,
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },
    /// A driver call returned an error status.
    #[error("{op}: driver call {call} failed: {source}")]
    Driver {
        /// The operation.
        op: &'static str,
        /// The driver entry point.
        call: &'static str,
        /// The driver's status.
        #[source]
        source: DriverError,
    },
    /// The driver or the device cannot do this (a missing entry point, a missing capability).
    #[error("{op}: not supported here: {reason}")]
    Unsupported {
        /// The operation.
        op: &'static str,
        /// Why, with the value that decided it.
        reason: String,
    },
    /// An argument broke a rule we can check before calling the driver.
    #[error("{op}: {rule}")]
    Invalid {
        /// The operation.
        op: &'static str,
        /// The value and the rule it breaks.
        rule: String,
    },
    /// An element type whose bytes cannot be viewed or copied as they are: Python objects
    /// or other pointers (copying them would copy references without counting them), or
    /// a byte order other than this machine's (reading it would give wrong values).
    #[error("{op}: {rule}")]
    ElementType {
        /// The operation.
        op: &'static str,
        /// The type, and why it cannot be viewed.
        rule: String,
    },
    /// stridekit's own state is unusable: a lock poisoned by a panic in another thread.
    #[error("{op}: internal state unusable: {what}")]
    Internal {
        /// The operation.
        op: &'static str,
        /// What broke.
        what: String,
    },
    /// A copy between two known, different dtypes without a request for the bits: copies
    /// never convert or reinterpret. Each front names its own way to ask for the bits
    /// (this message names Rust's).
    #[error("{op}: the source is {src:?} and the destination {dst:?}; a copy never converts or reinterprets elements, so the dtypes must match (copy_bits_from, or CopyOptions {{ bits: true }}, copies the bytes as they are)")]
    DtypeMismatch {
        /// The operation.
        op: &'static str,
        /// The source's dtype.
        src: crate::DType,
        /// The destination's dtype.
        dst: crate::DType,
    },
    /// Memory could not be had: the system (or the driver) refused an allocation.
    #[error("{op}: could not allocate {bytes} bytes; the memory is not available")]
    OutOfMemory {
        /// The operation.
        op: &'static str,
        /// Bytes asked for (saturated at `usize::MAX`).
        bytes: usize,
    },
    /// An NCCL call returned an error status (a failed transfer aborts its communicator).
    #[error("{op}: NCCL call {call} failed with status {code}: {message}")]
    Nccl {
        /// The operation.
        op: &'static str,
        /// The NCCL entry point.
        call: &'static str,
        /// NCCL's status (`ncclResult_t`).
        code: u32,
        /// NCCL's words for it.
        message: String,
    },
    /// A layout was rejected.
    #[error(transparent)]
    Layout(#[from] LayoutError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps a cudarc `DriverError` with the operation and call.
pub(crate) fn driver(op: &'static str, call: &'static str) -> impl FnOnce(DriverError) -> Error {
    move |source| Error::Driver { op, call, source }
}

pub(crate) fn invalid(op: &'static str, rule: impl Into<String>) -> Error {
    Error::Invalid {
        op,
        rule: rule.into(),
    }
}

/// Reports a failure that a `Drop` cannot return (a free the driver refused): on
/// standard error, so that it is seen rather than lost.
pub(crate) fn report_drop_failure(what: &str, why: &str) {
    eprintln!("stridekit: could not {what}: {why}; the memory stays allocated");
}
