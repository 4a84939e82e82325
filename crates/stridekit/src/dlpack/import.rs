//! DLPack import: a producer's managed tensor becomes a view that owns it.

use crate::dtype::dtype_from_dlpack;
use crate::error::{invalid, Error, Result};
use crate::memory::MemoryKind;
use crate::memory::{check_element_alignment, span_base};
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

    /// The tensor's descriptor (its shape and strides arrays valid while this is held).
    pub fn tensor(&self) -> &DLTensor {
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

/// The `n` values of a producer's metadata array, borrowed for as long as the tensor is.
fn read_array<'a>(op: &'static str, what: &str, ptr: *const i64, n: usize) -> Result<&'a [i64]> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(invalid(
            op,
            format!("the tensor has {n} dimensions but its {what} pointer is null"),
        ));
    }
    // SAFETY: the producer's metadata holds `ndim` values at `ptr` for as long as the
    // tensor is held (DLPack contract, vouched for when the tensor was taken over), which
    // the caller's borrow of the tensor spans.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
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

/// What a `DLTensor` describes, checked as importing it as a view checks it, short of
/// building its layout (an import builds that from these): dtype, first-element address,
/// the bytes its elements reach, and the memory's kind and device.
#[derive(Debug, Clone, Copy)]
pub struct TensorFacts {
    /// The dtype (`None`: a whole-byte type stridekit has no [`DType`](crate::DType) for).
    pub dtype: Option<crate::DType>,
    /// Bytes per element.
    pub itemsize: usize,
    /// Address of element (0, ..., 0).
    pub first: u64,
    /// The lowest byte any element reaches.
    pub base: u64,
    /// Bytes from `base` to one past the highest byte any element reaches.
    pub size: usize,
    /// Elements.
    pub volume: usize,
    /// The memory's kind. For a non-empty tensor of a CUDA device type (CUDA, CUDA_HOST,
    /// CUDA_MANAGED) this and `device` are its declaration, which a view checks against
    /// the driver before the memory is first used; other tensors were checked now.
    pub kind: MemoryKind,
    /// The device of device memory.
    pub device: Option<usize>,
    /// The lowest element offset (elements, from element 0).
    min_offset: i64,
    /// The kind and device are the declaration, not yet checked against the driver.
    deferred: bool,
}

impl TensorFacts {
    /// The device ordinal a view of the tensor reports (`StridedMemoryView::device_id`).
    pub fn device_id(&self) -> i32 {
        self.kind.device_id(self.device)
    }

    /// Whether kernels can reach the memory.
    pub fn is_device_accessible(&self) -> bool {
        self.kind.is_device_accessible()
    }
}

/// Checks `dl` as importing it as a view does
/// ([`StridedMemoryView::from_dlpack`](crate::StridedMemoryView::from_dlpack): every field,
/// the span its elements reach, the memory's kind and device) without building its layout,
/// for fronts that make the view only when it is first used. Errors name `op`.
pub fn check_dltensor(op: &'static str, dl: &DLTensor) -> Result<TensorFacts> {
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
    let (volume, min_offset, max_offset) = if dl.strides.is_null() {
        let dense = StridedLayout::dense(shape, itemsize, Order::C)?;
        (dense.volume(), dense.min_offset(), dense.max_offset())
    } else {
        let strides = read_array(op, "strides", dl.strides, nd)?;
        StridedLayout::offset_range(shape, strides, itemsize, 0)?
    };
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
    // The base is the lowest byte any element reaches (negative strides reach below the
    // first element).
    let (lo, size) = stridekit_layout::byte_span_of(volume, min_offset, max_offset, itemsize);
    let base = span_base(op, first, volume, lo, size)?;
    let empty = volume == 0;
    let deferred = !empty
        && matches!(
            dl.device.device_type,
            DLDeviceType::CUDA | DLDeviceType::CUDAHOST | DLDeviceType::CUDAMANAGED
        );
    // With `empty`, `locate` checks only the declaration itself (a known device type, a
    // device id >= 0) and asks the driver nothing.
    let (kind, device) = locate(op, dl.device, base, empty || deferred)?;
    check_element_alignment(op, base, volume, kind, itemsize)?;
    Ok(TensorFacts {
        dtype,
        itemsize,
        first,
        base,
        size,
        volume,
        kind,
        device,
        min_offset,
        deferred,
    })
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

/// Checks and describes the memory of `dl` ([`check_dltensor`]), its layout built once,
/// with its lowest element at offset 0. A non-empty tensor on a CUDA device type gets
/// its declared kind and device and a [`Claim`] to check at first use.
pub(crate) fn describe_memory(op: &'static str, dl: &DLTensor) -> Result<Described> {
    let f = check_dltensor(op, dl)?;
    let nd = dl.ndim as usize;
    let shape = read_array(op, "shape", dl.shape, nd)?;
    let layout = if dl.strides.is_null() {
        StridedLayout::dense(shape, f.itemsize, Order::C)?
    } else {
        let strides = read_array(op, "strides", dl.strides, nd)?;
        // Element 0 sits `-min_offset` elements above the lowest (the span check refused
        // a lowest offset as far down as i64::MIN).
        let offset = f
            .min_offset
            .checked_neg()
            .ok_or_else(|| invalid(op, "the tensor's lowest element offset has no negation"))?;
        StridedLayout::with_offset(shape, strides, f.itemsize, offset)?
    };
    let claim = f.deferred.then(|| Claim {
        device: dl.device,
        checked: Default::default(),
    });
    Ok(Described {
        base: f.base,
        size: f.size,
        kind: f.kind,
        device: f.device,
        layout,
        dtype: f.dtype,
        claim,
    })
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
