//! DLPack import: a producer's managed tensor becomes a view that owns it.

use crate::dtype::dtype_from_dlpack;
use crate::error::{invalid, Error, Result};
use crate::memory::span_at;
use crate::memory::MemoryKind;
use crate::pointer::{pointer_info, PointerKind};
use dlpark::ffi::{DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLTensor};
use dlpark::{AllocationDeleter, DlpackFlags, ManagedTensorBase};
use stridekit_layout::{Order, StridedLayout, MAX_NDIM};

/// A DLPack tensor handed over to stridekit: the versioned (1.x) or the legacy (0.x) ABI.
/// Dropping it calls the producer's deleter.
pub enum DlpackTensor {
    /// `DLManagedTensorVersioned` (DLPack 1.x).
    Versioned(dlpark::versioned::Dlpack),
    /// `DLManagedTensor` (DLPack 0.x).
    Legacy(dlpark::legacy::Dlpack),
}

impl From<dlpark::versioned::Dlpack> for DlpackTensor {
    fn from(t: dlpark::versioned::Dlpack) -> Self {
        DlpackTensor::Versioned(t)
    }
}

impl From<dlpark::legacy::Dlpack> for DlpackTensor {
    fn from(t: dlpark::legacy::Dlpack) -> Self {
        DlpackTensor::Legacy(t)
    }
}

impl DlpackTensor {
    /// Takes ownership of a producer's `DLManagedTensorVersioned`. A null pointer is an
    /// error; a major version other than 1 is an error after the producer's deleter has
    /// been called (as the DLPack specification requires).
    ///
    /// # Safety
    /// `ptr` is null or points to a live `DLManagedTensorVersioned` that the caller owns
    /// (nobody else will call its deleter), whose metadata stays unchanged while it is
    /// held, and whose deleter may be called once, from any thread.
    pub unsafe fn from_raw_versioned(ptr: *mut DLManagedTensorVersioned) -> Result<Self> {
        const OP: &str = "DlpackTensor::from_raw_versioned";
        if ptr.is_null() {
            return Err(invalid(OP, "the DLManagedTensorVersioned pointer is null"));
        }
        // SAFETY: non-null and live (caller); the version is the first field of every major version.
        let major = unsafe { (*ptr).version.major };
        // SAFETY: the caller's promise; dlpark calls the deleter itself when the major
        // version is not its own.
        match unsafe { dlpark::versioned::Dlpack::from_raw(ptr) } {
            Ok(t) => Ok(DlpackTensor::Versioned(t)),
            Err(_) => Err(invalid(
                OP,
                format!(
                    "the tensor declares DLPack major version {major}; stridekit reads major version {} (the producer's deleter has been called)",
                    dlpark::ffi::DLPACK_MAJOR_VERSION
                ),
            )),
        }
    }

    /// Takes ownership of a producer's legacy `DLManagedTensor`.
    ///
    /// # Safety
    /// As for [`from_raw_versioned`](Self::from_raw_versioned).
    pub unsafe fn from_raw_legacy(ptr: *mut DLManagedTensor) -> Result<Self> {
        const OP: &str = "DlpackTensor::from_raw_legacy";
        // SAFETY: the caller's promise; a legacy tensor has no version to check.
        unsafe { dlpark::legacy::Dlpack::from_raw(ptr) }
            .map(DlpackTensor::Legacy)
            .map_err(|_| invalid(OP, "the DLManagedTensor pointer is null"))
    }

    /// The flags (empty for a legacy tensor).
    pub fn flags(&self) -> DlpackFlags {
        match self {
            DlpackTensor::Versioned(t) => {
                // SAFETY: `t` owns a live managed tensor whose metadata does not change.
                unsafe { &*t.as_ptr() }.flags()
            }
            DlpackTensor::Legacy(_) => DlpackFlags::empty(),
        }
    }

    /// The declared DLPack version, `None` for a legacy tensor.
    pub fn version(&self) -> Option<(u32, u32)> {
        match self {
            DlpackTensor::Versioned(t) => {
                // SAFETY: as in `flags`.
                let v = unsafe { &*t.as_ptr() }.version;
                Some((v.major, v.minor))
            }
            DlpackTensor::Legacy(_) => None,
        }
    }

    pub(crate) fn tensor(&self) -> &DLTensor {
        match self {
            // SAFETY: each handle owns a live managed tensor whose metadata stays unchanged
            // while it is held (the constructors' contract).
            DlpackTensor::Versioned(t) => unsafe { t.tensor() },
            // SAFETY: as above.
            DlpackTensor::Legacy(t) => unsafe { t.tensor() },
        }
    }

    pub(crate) fn into_deleter(self) -> AllocationDeleter {
        match self {
            DlpackTensor::Versioned(t) => t.into_deleter(),
            DlpackTensor::Legacy(t) => t.into_deleter(),
        }
    }
}

/// Reads `n` values of a producer's metadata array.
fn read_array(
    op: &'static str,
    what: &str,
    ptr: *const i64,
    n: usize,
) -> Result<smallvec::SmallVec<[i64; 8]>> {
    if n == 0 {
        return Ok(smallvec::SmallVec::new());
    }
    if ptr.is_null() {
        return Err(invalid(
            op,
            format!("the tensor has {n} dimensions but its {what} pointer is null"),
        ));
    }
    // SAFETY: the producer's metadata holds `ndim` values at `ptr` for as long as the
    // tensor is held (DLPack contract, vouched for when the tensor was taken over).
    Ok(smallvec::SmallVec::from_slice(unsafe {
        std::slice::from_raw_parts(ptr, n)
    }))
}

fn device_name(t: DLDeviceType) -> String {
    let name = match t {
        DLDeviceType::CPU => "CPU",
        DLDeviceType::CUDA => "CUDA",
        DLDeviceType::CUDAHOST => "CUDA_HOST",
        DLDeviceType::CUDAMANAGED => "CUDA_MANAGED",
        DLDeviceType::ROCM => "ROCM",
        DLDeviceType::ROCMHOST => "ROCM_HOST",
        DLDeviceType::OPENCL => "OPENCL",
        DLDeviceType::VULKAN => "VULKAN",
        DLDeviceType::METAL => "METAL",
        DLDeviceType::ONEAPI => "ONEAPI",
        _ => "unknown",
    };
    format!("{} ({name})", t.0)
}

/// The memory kind and device of a tensor's data: the declared device type, checked
/// against what the driver says of the pointer.
fn locate(
    op: &'static str,
    dev: DLDevice,
    ptr: u64,
    empty: bool,
) -> Result<(MemoryKind, Option<usize>)> {
    let declared = match dev.device_type {
        DLDeviceType::CPU => MemoryKind::Host,
        DLDeviceType::CUDA => MemoryKind::Device,
        DLDeviceType::CUDAHOST => MemoryKind::PinnedHost,
        DLDeviceType::CUDAMANAGED => MemoryKind::Managed,
        other => {
            return Err(invalid(
                op,
                format!(
                    "device type {} is not one stridekit can reach; it takes CPU (1), CUDA (2), CUDA_HOST (3) and CUDA_MANAGED (13)",
                    device_name(other)
                ),
            ))
        }
    };
    if declared == MemoryKind::Device && dev.device_id < 0 {
        return Err(invalid(
            op,
            format!(
                "a CUDA tensor has device_id {}; it must be >= 0",
                dev.device_id
            ),
        ));
    }
    let declared_device = (declared == MemoryKind::Device).then_some(dev.device_id as usize);
    if empty {
        return Ok((declared, declared_device));
    }
    let info = match pointer_info(ptr) {
        Ok(info) => info,
        Err(Error::NoDriver { .. }) if declared == MemoryKind::Host => {
            return Ok((MemoryKind::Host, None))
        }
        Err(e) => return Err(e),
    };
    let contradiction = |what: &str| {
        invalid(
            op,
            format!(
                "the tensor declares device type {} (device_id {}) but the driver reports {what} at {ptr:#x}; the device type must describe the memory",
                device_name(dev.device_type),
                dev.device_id
            ),
        )
    };
    let found = match info.kind {
        PointerKind::Pageable => MemoryKind::Host,
        PointerKind::PinnedHost => MemoryKind::PinnedHost,
        PointerKind::Managed => MemoryKind::Managed,
        PointerKind::Device | PointerKind::Array => MemoryKind::Device,
    };
    let what = match found {
        MemoryKind::Host => "pageable host memory".to_string(),
        MemoryKind::PinnedHost => "pinned host memory".to_string(),
        MemoryKind::Managed => "managed memory".to_string(),
        MemoryKind::Device => format!("device memory of device {:?}", info.device),
    };
    match (declared, found) {
        // A CPU tensor may live in any host-readable memory; a CUDA tensor in managed memory
        // is what several frameworks export.
        (MemoryKind::Host, MemoryKind::Host | MemoryKind::PinnedHost | MemoryKind::Managed)
        | (MemoryKind::PinnedHost, MemoryKind::PinnedHost)
        | (MemoryKind::Managed, MemoryKind::Managed)
        | (MemoryKind::Device, MemoryKind::Managed) => Ok((found, info.device)),
        (MemoryKind::Device, MemoryKind::Device) => {
            if info.device != declared_device {
                Err(contradiction(&what))
            } else {
                Ok((found, info.device))
            }
        }
        _ => Err(contradiction(&what)),
    }
}

/// The dtype, element layout and first-element address a `DLTensor` describes, checked.
fn describe(op: &'static str, dl: &DLTensor) -> Result<(Option<crate::DType>, StridedLayout, u64)> {
    if dl.ndim < 0 || dl.ndim as usize > MAX_NDIM {
        return Err(invalid(
            op,
            format!(
                "the tensor has ndim {}; it must be in [0, {MAX_NDIM}]",
                dl.ndim
            ),
        ));
    }
    let nd = dl.ndim as usize;
    let (dtype, itemsize) = dtype_from_dlpack(op, dl.dtype)?;
    let shape = read_array(op, "shape", dl.shape, nd)?;
    let layout = if dl.strides.is_null() {
        StridedLayout::dense(&shape, itemsize, Order::C)?
    } else {
        StridedLayout::new(
            &shape,
            &read_array(op, "strides", dl.strides, nd)?,
            itemsize,
        )?
    };
    let volume = layout.volume();
    if dl.data.is_null() && volume > 0 {
        return Err(invalid(
            op,
            format!("the tensor has {volume} elements but a null data pointer"),
        ));
    }
    let first = (dl.data as u64)
        .checked_add(dl.byte_offset)
        .ok_or_else(|| {
            invalid(
                op,
                format!(
                    "data {:p} + byte_offset {} overflows the address space",
                    dl.data, dl.byte_offset
                ),
            )
        })?;
    // Layouts address bytes with signed 64-bit offsets, and no process maps memory at or
    // above 2^63: a first element there is a corrupt byte_offset, not memory.
    if first > i64::MAX as u64 {
        return Err(invalid(
            op,
            format!(
                "data {:p} + byte_offset {} = {first:#x} lies beyond the highest address a layout can reach ({:#x})",
                dl.data,
                dl.byte_offset,
                i64::MAX
            ),
        ));
    }
    Ok((dtype, layout, first))
}

/// What a `DLTensor` describes, checked: the lowest byte its elements reach, the bytes
/// from there, the memory's kind and device, the layout moved to that base, and the dtype.
/// `claim` is set when the kind and device are the tensor's declaration, not yet checked
/// against the driver (see [`Claim`]).
pub(crate) struct Described {
    pub base: u64,
    pub size: usize,
    pub kind: MemoryKind,
    pub device: Option<usize>,
    pub layout: StridedLayout,
    pub dtype: Option<crate::DType>,
    pub claim: Option<Claim>,
}

/// A CUDA device type's declaration of where a tensor's memory is, taken at its word when
/// the view is made and checked against the driver before the memory is first used (a
/// copy, a host read, a descriptor): asking the driver about a pointer costs more than the
/// rest of making a view, and views are often made only to read their shape. A view whose
/// declaration is false fails its first use with the same error an eager check gives.
#[derive(Debug)]
pub(crate) struct Claim {
    device: DLDevice,
    checked: std::sync::atomic::AtomicBool,
}

impl Claim {
    /// Checks the declaration once (later calls return at once when it held).
    pub(crate) fn check(&self, op: &'static str, base: u64) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.checked.load(Ordering::Acquire) {
            return Ok(());
        }
        locate(op, self.device, base, false)?;
        self.checked.store(true, Ordering::Release);
        Ok(())
    }
}

/// Checks and describes the memory of `dl`. A non-empty tensor on a CUDA device type
/// (CUDA, CUDA_HOST, CUDA_MANAGED) gets its declared kind and device and a [`Claim`] to
/// check at first use; other tensors are checked against the driver now.
pub(crate) fn describe_memory(op: &'static str, dl: &DLTensor) -> Result<Described> {
    let (dtype, layout, first) = describe(op, dl)?;
    // The base is the lowest byte any element reaches (negative strides reach below the
    // first element).
    let (base, size, layout) = span_at(op, first, layout)?;
    let empty = layout.volume() == 0;
    let deferred = !empty
        && matches!(
            dl.device.device_type,
            DLDeviceType::CUDA | DLDeviceType::CUDAHOST | DLDeviceType::CUDAMANAGED
        );
    // With `empty`, `locate` checks only the declaration itself (a known device type, a
    // device id >= 0) and asks the driver nothing.
    let (kind, device) = locate(op, dl.device, base, empty || deferred)?;
    let claim = deferred.then(|| Claim {
        device: dl.device,
        checked: Default::default(),
    });
    Ok(Described {
        base,
        size,
        kind,
        device,
        layout,
        dtype,
        claim,
    })
}
