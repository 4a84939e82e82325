//! ndarray and stridekit: arrays of any strides as views, a copy between two layouts, and
//! a host view read back as an array in place. `cargo run --example interop_ndarray
//! --features ndarray` (no GPU needed).

#[cfg(feature = "ndarray")]
fn main() -> Result<(), stridekit::Error> {
    use ndarray::{s, Array2};
    use stridekit::{StridedMemoryView, StridedMemoryViewMut};

    let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as i32);
    // A flipped, transposed view of `a` into an array of another layout.
    let mut out = Array2::<i32>::zeros((4, 3));
    StridedMemoryViewMut::from_array_mut(out.view_mut())?.copy_from(
        &StridedMemoryView::from_array(a.slice(s![..;-1, ..]).t())?,
        None,
    )?;
    println!("a:\n{a}\na[::-1].T copied:\n{out}");
    assert_eq!(out, a.slice(s![..;-1, ..]).t());

    // A strided host view seen as an ndarray view, without a copy.
    let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let v = StridedMemoryView::from_slice(&data, &[3, 4])?;
    let every_other = v.view(v.layout().sliced(stridekit::s![.., ..;2])?, None)?;
    println!(
        "columns 0 and 2 as an array:\n{}",
        every_other.as_array::<f32>()?
    );
    Ok(())
}

#[cfg(not(feature = "ndarray"))]
fn main() {
    println!("run with --features ndarray");
}
