//! `rbag._rbag`, the native half of the `rbag` Python package: the rosbag API of `rbag-bag`,
//! and nothing below it, for Python.
//!
//! Every entry point runs its Rust work inside `errors::guard`, so a panic becomes
//! `rbag.InternalError` instead of crossing into the interpreter, and reads release the GIL
//! while storage is read and decompressed.

use pyo3::prelude::*;

mod columnar;
mod data;
mod errors;
mod fleet;
mod genpy;
mod reader;
mod value;
mod writer;

#[pymodule]
fn _rbag(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::install(m)?;
    // Readers open URLs (s3://, gs://, az://, http(s)://) wherever they open paths.
    rbag_remote::register();
    m.add_class::<reader::Reader>()?;
    m.add_class::<reader::Messages>()?;
    m.add_class::<reader::Message>()?;
    m.add_class::<reader::Connection>()?;
    m.add_class::<reader::Topic>()?;
    m.add_class::<value::Msg>()?;
    m.add_class::<writer::Writer>()?;
    m.add_function(wrap_pyfunction!(fleet::_plan, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
