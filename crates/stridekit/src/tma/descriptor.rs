//! `TensorMapDescriptor`: a validated `CUtensorMap` built from a view, usable as a kernel
//! argument.

use super::options::{Im2colOptions, Im2colWideOptions, TensorMapDataType, TiledOptions};
use super::validate::{encode, Encoding, Kind, Source};
use crate::driver::tensor_map::{self as tm, EncodeArrays, EncodeCommon, Im2colShape};
use crate::driver::{check, require_symbol, types::CUtensorMap};
use crate::error::{invalid, Result};
use crate::runtime::Runtime;
use crate::view::access::Access;
use crate::view::{StridedMemoryView, StridedMemoryViewBase};
use cudarc::driver::{DeviceRepr, LaunchArgs, PushKernelArg};
use std::marker::PhantomData;
use stridekit_layout::StridedLayout;

/// The 128-byte, 64-byte aligned driver object, passed to kernels by value.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct RawTensorMap(CUtensorMap);

// SAFETY: a plain 128-byte C struct (`CUtensorMap`, align >= 64) that kernels take by
// value as `const __grid_constant__ CUtensorMap`.
unsafe impl DeviceRepr for RawTensorMap {}

/// A TMA tensor map (`CUtensorMap`) describing a view, for Hopper and newer GPUs.
///
/// Built from a device-accessible [`StridedMemoryView`] whose shape, box and strides are
/// given in the view's (row-major) order; stridekit reverses them for the driver and
/// checks every rule of the driver's encode call first, naming the value and the rule.
/// The descriptor borrows the view it was built from for `'a` (and so the view's memory,
/// whether the view borrows it or owns it), knows its device, and is a kernel
/// argument: push it into cudarc's launch builder and declare the parameter as
/// `const __grid_constant__ CUtensorMap`.
///
/// In the kernel, coordinates are innermost-first and the innermost start coordinate of
/// a tiled load must be a multiple of [`inner_coordinate_multiple`](Self::inner_coordinate_multiple)
/// elements (16 bytes); tiles may otherwise start anywhere, negative coordinates and
/// tiles crossing the edge included (those elements read the out-of-bounds fill).
///
/// ```no_run
/// use stridekit::cudarc::driver::PushKernelArg;
/// use stridekit::tma::{Swizzle, TiledOptions};
/// use stridekit::{Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout, StridedMemoryView, DType};
/// let dev = Device::open(0)?;
/// let stream = dev.new_stream()?;
/// let buf = DeviceMemoryResource::new(&dev)?.allocate(1024 * 1024 * 4, &stream)?;
/// let layout = StridedLayout::dense(&[1024, 1024], 4, Order::C)?;
/// let view = StridedMemoryView::from_buffer(&buf, layout, Some(DType::F32))?;
/// let tmap = view.as_tensor_map(&TiledOptions::new(&[64, 32]).swizzle(Swizzle::B128))?;
/// // let mut launch = stream.launch_builder(&kernel); launch.arg(&tmap);
/// # Ok::<(), stridekit::Error>(())
/// ```
#[derive(Clone)]
pub struct TensorMapDescriptor<'a> {
    raw: RawTensorMap,
    device: usize,
    encoding: Encoding,
    layout: StridedLayout,
    _memory: PhantomData<&'a ()>,
}

impl std::fmt::Debug for TensorMapDescriptor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorMapDescriptor")
            .field("device", &self.device)
            .field("address", &format_args!("{:#x}", self.encoding.address))
            .field("data_type", &self.encoding.data_type)
            .field("layout", &self.layout)
            .finish()
    }
}

/// The device of a view that TMA can read, or why not.
fn device_of(op: &'static str, view: &StridedMemoryView<'_>) -> Result<usize> {
    if !view.is_device_accessible() {
        return Err(invalid(
            op,
            format!(
                "the view is {:?} memory, which the GPU cannot read; TMA needs device, managed or pinned memory",
                view.kind()
            ),
        ));
    }
    view.device_ordinal().ok_or_else(|| {
        invalid(
            op,
            format!(
                "the view's {:?} memory at {:#x} belongs to no known device; wrap it with Buffer::from_handle so the driver reports its device",
                view.kind(),
                view.ptr()
            ),
        )
    })
}

impl<'a> TensorMapDescriptor<'a> {
    /// The descriptor of `view`, for a lifetime the public constructors tie to a borrow.
    fn build<'x>(view: &StridedMemoryView<'_>, kind: Kind<'_>) -> Result<TensorMapDescriptor<'x>> {
        let op = kind.op();
        view.check_claim(op)?;
        let device = device_of(op, view)?;
        let cc = Runtime::get(op, device)?.compute_capability(op)?;
        let encoding = encode(
            Source {
                layout: view.layout(),
                base: view.ptr(),
                dtype: view.dtype(),
                cc,
            },
            kind,
        )?;
        let raw = with_context(op, device, || encode_with_driver(&encoding, kind))?;
        Ok(TensorMapDescriptor {
            raw,
            device,
            encoding,
            layout: view.layout().clone(),
            _memory: PhantomData,
        })
    }

    /// A tiled tensor map (rank 1 to 5): each load moves one box of `options.box_dim`.
    pub fn tiled(view: &'a StridedMemoryView<'_>, options: &TiledOptions) -> Result<Self> {
        Self::build(view, Kind::Tiled(options))
    }

    /// An im2col tensor map over an N(D)(H)WC view (rank 3 to 5).
    pub fn im2col(view: &'a StridedMemoryView<'_>, options: &Im2colOptions) -> Result<Self> {
        Self::build(view, Kind::Im2col(options))
    }

    /// An im2col-wide tensor map (compute capability 10.0+ and a CUDA 12.8+ driver);
    /// elsewhere it answers [`Error::Unsupported`](crate::Error::Unsupported).
    pub fn im2col_wide(
        view: &'a StridedMemoryView<'_>,
        options: &Im2colWideOptions,
    ) -> Result<Self> {
        Self::build(view, Kind::Im2colWide(options))
    }

    /// Re-points the descriptor at `view`, which must have the same shape, strides and
    /// itemsize, live on the same device, and meet the same alignment rules.
    pub fn replace_address(&mut self, view: &'a StridedMemoryView<'_>) -> Result<()> {
        const OP: &str = "TensorMapDescriptor::replace_address";
        view.check_claim(OP)?;
        let device = device_of(OP, view)?;
        if device != self.device {
            return Err(invalid(
                OP,
                format!(
                    "the view is on device {device} but the descriptor was built for device {}",
                    self.device
                ),
            ));
        }
        let (l, m) = (view.layout(), &self.layout);
        if l.shape() != m.shape() || l.strides() != m.strides() || l.itemsize() != m.itemsize() {
            return Err(invalid(
                OP,
                format!(
                    "the view has shape {:?}, strides {:?} and itemsize {}, the descriptor shape {:?}, strides {:?} and itemsize {}; they must match",
                    l.shape(), l.strides(), l.itemsize(), m.shape(), m.strides(), m.itemsize()
                ),
            ));
        }
        let isz = l.itemsize() as i64;
        let address = view
            .ptr()
            .checked_add_signed(l.slice_offset() * isz)
            .ok_or_else(|| {
                invalid(
                    OP,
                    "the view's first element lies outside the address space",
                )
            })?;
        let align = if self.encoding.common.interleave == super::Interleave::B32 {
            32
        } else {
            16
        };
        if address % align != 0 {
            return Err(invalid(
                OP,
                format!(
                    "the view's first element is at {address:#x}, {} bytes past a {align}-byte boundary; the global address must be {align}-byte aligned (cuTensorMapReplaceAddress: globalAddress)",
                    address % align
                ),
            ));
        }
        require_symbol(OP, "cuTensorMapReplaceAddress")?;
        let raw = &mut self.raw.0;
        with_context(OP, device, || {
            // SAFETY: `raw` is a tensor map the driver encoded; the address is aligned and
            // points at memory with the descriptor's shape and strides (checked above).
            check(OP, "cuTensorMapReplaceAddress", unsafe {
                tm::replace_address(raw, address)
            })
        })?;
        self.encoding.address = address;
        Ok(())
    }

    /// The device the descriptor's memory is on.
    pub fn device_ordinal(&self) -> usize {
        self.device
    }

    /// The address of the first element.
    pub fn address(&self) -> u64 {
        self.encoding.address
    }

    /// The element type TMA moves.
    pub fn data_type(&self) -> TensorMapDataType {
        self.encoding.data_type
    }

    /// The granularity, in elements, of the innermost start coordinate a kernel may pass
    /// to a tiled load: the inner coordinate times the element size must be a multiple
    /// of 16 bytes. This is a rule of the load instruction, not of the descriptor, so no
    /// encode call can check it; on an H100 a load that breaks it traps with
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION`, which ends the context.
    pub fn inner_coordinate_multiple(&self) -> usize {
        (16 / self.encoding.data_type.size()).max(1)
    }

    /// The layout of the view it describes.
    pub fn layout(&self) -> &StridedLayout {
        &self.layout
    }

    /// The 128 bytes of the driver's `CUtensorMap`.
    pub fn as_raw(&self) -> &CUtensorMap {
        &self.raw.0
    }

    /// The same descriptor with its borrow of the view's memory dropped: for fronts that
    /// keep the memory alive by other means (a Python object, a C handle).
    ///
    /// # Safety
    /// The memory the descriptor points at must stay allocated, and not be reused, for as
    /// long as any kernel can use the returned descriptor.
    pub unsafe fn detach(self) -> TensorMapDescriptor<'static> {
        TensorMapDescriptor {
            raw: self.raw,
            device: self.device,
            encoding: self.encoding,
            layout: self.layout,
            _memory: PhantomData,
        }
    }
}

/// Runs `call` with a current context: binds the device's primary context first when the
/// calling thread has none (the driver's encode calls need one), so that no call fails
/// and is retried (a failed call is an API error to compute-sanitizer).
fn with_context<T>(
    op: &'static str,
    device: usize,
    mut call: impl FnMut() -> Result<T>,
) -> Result<T> {
    Runtime::get(op, device)?.bind_if_none(op)?;
    call()
}

fn encode_with_driver(e: &Encoding, kind: Kind<'_>) -> Result<RawTensorMap> {
    let op = kind.op();
    let mut map = CUtensorMap { opaque: [0; 16] };
    let c = &e.common;
    let rank = e.rank;
    let common = EncodeCommon {
        data_type: e.data_type.to_cu(),
        rank: rank as u32,
        address: e.address,
        interleave: c.interleave.to_cu(),
        swizzle: c.swizzle.to_cu(),
        l2_promotion: c.l2_promotion.to_cu(),
        oob_fill: c.oob_fill.to_cu(),
    };
    let arrays = EncodeArrays {
        global_dim: &e.global_dim[..rank],
        global_strides: &e.global_strides[..rank.saturating_sub(1)],
        element_strides: &e.element_strides[..rank],
    };
    let shape = Im2colShape {
        lower_corner: &e.lower_corner,
        upper_corner: &e.upper_corner,
        channels_per_pixel: e.channels_per_pixel,
        pixels_per_column: e.pixels_per_column,
    };
    match kind {
        Kind::Tiled(_) => {
            require_symbol(op, "cuTensorMapEncodeTiled")?;
            // SAFETY: the entry point exists; the arrays hold `rank` (strides rank - 1)
            // entries; every value was validated against the documented rules; a context
            // is current (with_context).
            check(op, "cuTensorMapEncodeTiled", unsafe {
                tm::encode_tiled(&mut map, &common, arrays, &e.box_dim[..rank])
            })?;
        }
        Kind::Im2col(_) => {
            require_symbol(op, "cuTensorMapEncodeIm2col")?;
            // SAFETY: as above; the corner arrays hold 3 entries (rank - 2 used).
            check(op, "cuTensorMapEncodeIm2col", unsafe {
                tm::encode_im2col(&mut map, &common, arrays, shape)
            })?;
        }
        Kind::Im2colWide(_) => {
            require_symbol(op, "cuTensorMapEncodeIm2colWide")?;
            // SAFETY: as above.
            check(op, "cuTensorMapEncodeIm2colWide", unsafe {
                tm::encode_im2col_wide(&mut map, &common, arrays, shape, e.wide_mode.to_cu())
            })?;
        }
    }
    Ok(RawTensorMap(map))
}

// A descriptor goes into a launch as its 128-byte `CUtensorMap`, by value.
// SAFETY: pushes a pointer to the `RawTensorMap` inside the descriptor, which the borrow
// `'b` keeps alive for as long as the launch builder.
unsafe impl<'a, 'b: 'a, 'c> PushKernelArg<&'b TensorMapDescriptor<'c>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b TensorMapDescriptor<'c>) -> &mut Self {
        self.arg(&arg.raw)
    }
}

impl<A: Access> StridedMemoryViewBase<'_, A> {
    /// A tiled TMA descriptor of this view: the short path to
    /// [`TensorMapDescriptor::tiled`]. It borrows the view, so it cannot outlive the
    /// memory (a kernel that writes through it needs a writable view's borrow to last).
    pub fn as_tensor_map(&self, options: &TiledOptions) -> Result<TensorMapDescriptor<'_>> {
        TensorMapDescriptor::build(&self.as_view(), Kind::Tiled(options))
    }
}
