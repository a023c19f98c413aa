//! numpy and pyroaring at the boundary: typed extraction, zero-copy results.

use std::borrow::Cow;

use numpy::ndarray::Array2;
use numpy::{Element, IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use roaring::RoaringBitmap;

use super::errors::{to_py, type_error};
use crate::error::CoreError;

fn describe(obj: &Bound<'_, PyAny>) -> String {
    match obj.getattr("dtype") {
        Ok(dtype) => format!("an array of dtype {dtype} and {} dimension(s)", obj.getattr("ndim").map(|n| n.to_string()).unwrap_or_default()),
        Err(_) => format!("{}", obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()),
    }
}

/// A 1-D numpy array of exactly `T`, or a typed error naming `what`.
pub fn array1<'py, T: Element>(obj: &Bound<'py, PyAny>, what: &str, dtype: &str) -> PyResult<PyReadonlyArray1<'py, T>> {
    obj.extract::<PyReadonlyArray1<'py, T>>()
        .map_err(|_| type_error(obj.py(), format!("{what} must be a 1-D numpy {dtype} array, got {}", describe(obj))))
}

/// A 2-D numpy array of exactly `T`, or a typed error naming `what`.
pub fn array2<'py, T: Element>(obj: &Bound<'py, PyAny>, what: &str, dtype: &str) -> PyResult<PyReadonlyArray2<'py, T>> {
    obj.extract::<PyReadonlyArray2<'py, T>>()
        .map_err(|_| type_error(obj.py(), format!("{what} must be a 2-D numpy {dtype} array, got {}", describe(obj))))
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
    let rows = if cols == 0 { 0 } else { v.len() / cols };
    Array2::from_shape_vec((rows, cols), v).expect("length is rows * cols").into_pyarray(py)
}

/// A bitmap as a `pyroaring.BitMap`, through the portable format.
pub fn to_pyroaring<'py>(py: Python<'py>, bitmap: &RoaringBitmap) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(bitmap.serialized_size());
    bitmap.serialize_into(&mut bytes).expect("writing to a Vec cannot fail");
    py.import("pyroaring")?.getattr("BitMap")?.call_method1("deserialize", (PyBytes::new(py, &bytes),))
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
            let bitmap = RoaringBitmap::deserialize_from(bytes).map_err(|e| to_py(py, CoreError::Corrupt(format!("bitmap from pyroaring: {e}"))))?;
            return Ok(Rows::Bitmap(bitmap));
        }
        Err(type_error(py, format!("{what} must be a numpy uint32 array or a pyroaring bitmap, got {}", describe(obj))))
    }

    /// The rows as a bitmap (a row named twice is one row).
    pub fn into_bitmap(self) -> RoaringBitmap {
        match self {
            Rows::Array(a) => slice1(&a).iter().copied().collect(),
            Rows::Bitmap(b) => b,
        }
    }
}
