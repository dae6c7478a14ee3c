//! The partition planner for Python (`rbag.plan`; `rbag.dask` and `rbag.ray` build on it).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{guard, OrPy};

/// Partitions of about ``target_bytes`` for reading ``topics`` (all when ``None``) from
/// ``bags`` (paths or URLs) between ``start`` and ``end`` (ns, end exclusive), as dicts;
/// ``rbag.plan`` wraps them in ``rbag.Partition``.
#[pyfunction]
#[pyo3(signature = (bags, topics, start, end, target_bytes))]
pub fn _plan<'py>(
    py: Python<'py>,
    bags: Vec<String>,
    topics: Option<Vec<String>>,
    start: Option<u64>,
    end: Option<u64>,
    target_bytes: u64,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    guard(|| {
        let options = rbag_fleet::plan::PlanOptions { topics: topics.unwrap_or_default(), start, end, target_bytes };
        let parts = py.detach(|| rbag_fleet::plan::plan(&bags, &options)).or_py()?;
        parts
            .into_iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("bag", p.bag)?;
                d.set_item("topic", p.topic)?;
                d.set_item("start", p.start)?;
                d.set_item("end", p.end)?;
                d.set_item("messages", p.messages)?;
                d.set_item("bytes", p.bytes)?;
                d.set_item("index", p.index)?;
                Ok(d)
            })
            .collect()
    })
}
