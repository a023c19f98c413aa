//! numpy and pyroaring at the boundary: typed extraction, zero-copy results.

use std::borrow::Cow;

use numpy::ndarray::Array2;
use numpy::{
    Element, IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt};
use roaring::RoaringBitmap;

use super::errors::{invalid_argument, to_py, type_error};
use crate::error::CoreError;

/// Rows and their scores (best first where ranked) as numpy arrays.
pub type RowsScores<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<f32>>);

fn describe(obj: &Bound<'_, PyAny>) -> String {
    match obj.getattr("dtype") {
        Ok(dtype) => format!(
            "an array of dtype {dtype} and {} dimension(s)",
            obj.getattr("ndim")
                .map(|n| n.to_string())
                .unwrap_or_default()
        ),
        Err(_) => obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default(),
    }
}

/// A count (`k`, `pool`, `limit`) from Python: the one check of it, so Python keeps none.
///
/// A bool or anything not a Python int is a `CueTypeError`; an int below 1 is an
/// `InvalidArgumentError`; an int above 2**32 - 1 (even one past `i64`) is capped there,
/// more rows than any home holds.
pub fn count(value: &Bound<'_, PyAny>, name: &str) -> PyResult<usize> {
    let py = value.py();
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return Err(type_error(
            py,
            format!("{name} must be an int, got {}", value.get_type().name()?),
        ));
    }
    let positive = match value.extract::<i64>() {
        Ok(n) => n >= 1,
        // Past i64 either way: its sign decides.
        Err(_) => value.gt(0)?,
    };
    if !positive {
        // As `f"{value}"` would print it (an int subclass may format itself).
        let shown = value.call_method1("__format__", ("",))?;
        return Err(invalid_argument(
            py,
            format!("{name} must be at least 1, got {shown}"),
        ));
    }
    // Positive here, so only past u64 does the extraction fail.
    let n = value.extract::<u64>().unwrap_or(u64::MAX);
    Ok(n.min(u64::from(u32::MAX)) as usize)
}

/// [`count`] for Python: `_scalars.count` hands it a Python int (numpy's integers turned
/// into one), so a count's range has one rule, this one.
#[pyfunction]
#[pyo3(name = "count")]
pub fn count_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<usize> {
    count(value, name)
}

/// `k` as a `#[pyo3(from_py_with)]` extractor: [`count`] named `k`.
pub fn count_k(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    count(value, "k")
}

/// `pool` as a `#[pyo3(from_py_with)]` extractor: [`count`] named `pool`.
pub fn count_pool(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    count(value, "pool")
}

/// `limit` as a `#[pyo3(from_py_with)]` extractor: [`count`] named `limit`.
pub fn count_limit(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    count(value, "limit")
}

/// A 1-D numpy array of exactly `T`, or a typed error naming `what`.
pub fn array1<'py, T: Element>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    dtype: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    obj.extract::<PyReadonlyArray1<'py, T>>().map_err(|_| {
        type_error(
            obj.py(),
            format!(
                "{what} must be a 1-D numpy {dtype} array, got {}",
                describe(obj)
            ),
        )
    })
}

/// A 2-D numpy array of exactly `T`, or a typed error naming `what`.
pub fn array2<'py, T: Element>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    dtype: &str,
) -> PyResult<PyReadonlyArray2<'py, T>> {
    obj.extract::<PyReadonlyArray2<'py, T>>().map_err(|_| {
        type_error(
            obj.py(),
            format!(
                "{what} must be a 2-D numpy {dtype} array, got {}",
                describe(obj)
            ),
        )
    })
}

/// The array's elements in logical order, borrowed when contiguous.
pub fn slice1<'a, T: Element + Copy>(a: &'a PyReadonlyArray1<'_, T>) -> Cow<'a, [T]> {
    match a.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(a.as_array().iter().copied().collect()),
    }
}

/// Row-major elements of a 2-D array, borrowed when C-contiguous.
pub fn slice2<'a, T: Element + Copy>(a: &'a PyReadonlyArray2<'_, T>) -> Cow<'a, [T]> {
    match a.as_slice() {
        Ok(s) if a.is_c_contiguous() => Cow::Borrowed(s),
        _ => Cow::Owned(a.as_array().iter().copied().collect()),
    }
}

/// Hands a `Vec` to numpy without copying.
pub fn vec1<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    v.into_pyarray(py)
}

/// Hands a row-major `Vec` to numpy as `rows x cols` without copying.
pub fn vec2<'py, T: Element>(py: Python<'py>, v: Vec<T>, cols: usize) -> Bound<'py, PyArray2<T>> {
    let rows = v.len().checked_div(cols).unwrap_or(0);
    Array2::from_shape_vec((rows, cols), v)
        .expect("length is rows * cols")
        .into_pyarray(py)
}

/// A bitmap as a `pyroaring.BitMap`, through the portable format.
pub fn to_pyroaring<'py>(py: Python<'py>, bitmap: &RoaringBitmap) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(bitmap.serialized_size());
    bitmap
        .serialize_into(&mut bytes)
        .expect("writing to a Vec cannot fail");
    py.import("pyroaring")?
        .getattr("BitMap")?
        .call_method1("deserialize", (PyBytes::new(py, &bytes),))
}

/// Rows given as a numpy uint32 array or as any pyroaring bitmap.
pub enum Rows<'py> {
    Array(PyReadonlyArray1<'py, u32>),
    Bitmap(RoaringBitmap),
}

impl Rows<'_> {
    pub fn extract<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Rows<'py>> {
        let py = obj.py();
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, u32>>() {
            return Ok(Rows::Array(a));
        }
        let is_bitmap = py
            .import("pyroaring")
            .and_then(|m| m.getattr("AbstractBitMap"))
            .and_then(|cls| obj.is_instance(&cls))
            .unwrap_or(false);
        if is_bitmap {
            let data = obj.call_method0("serialize")?;
            let bytes = data.cast::<PyBytes>()?.as_bytes();
            let bitmap = RoaringBitmap::deserialize_from(bytes).map_err(|e| {
                to_py(
                    py,
                    CoreError::Corrupt(format!("bitmap from pyroaring: {e}")),
                )
            })?;
            return Ok(Rows::Bitmap(bitmap));
        }
        Err(type_error(
            py,
            format!(
                "{what} must be a numpy uint32 array or a pyroaring bitmap, got {}",
                describe(obj)
            ),
        ))
    }

    /// The rows as a bitmap (a row named twice is one row).
    pub fn into_bitmap(self) -> RoaringBitmap {
        match self {
            Rows::Array(a) => slice1(&a).iter().copied().collect(),
            Rows::Bitmap(b) => b,
        }
    }
}
