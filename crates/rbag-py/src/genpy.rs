//! Messages shaped as genpy makes them, built here rather than from `rbag.Msg` in Python, for
//! `rbag.compat.rosbag`: instances of per-type classes with `__slots__` (made by a Python
//! factory the compat module passes in), `bytes` for `uint8[]`/`char[]`, tuples for other
//! arrays of numbers, lists for arrays of strings and messages, and `Time`/`Duration` objects
//! for ROS 1's `time`/`duration`.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use rbag_bag::decode::{MessageRef, Prim, ValueRef};

use crate::value::{scalar_or_string, slot_type};

/// A message type's class and its field names.
struct Class {
    class: Py<PyAny>,
    fields: Vec<Py<PyString>>,
}

/// Builds genpy-shaped messages, caching each type's class.
pub struct Genpy {
    /// `(type, fields, slot_types, md5) -> class`, from the compat module.
    make_class: Py<PyAny>,
    time: Py<PyAny>,
    duration: Py<PyAny>,
    /// `object.__new__`: an instance without running a Python `__init__`.
    new: Py<PyAny>,
    secs: Py<PyString>,
    nsecs: Py<PyString>,
    /// Per connection key and type index.
    classes: HashMap<(u64, usize), Class>,
}

impl Genpy {
    /// A builder with the compat module's class factory and its `Time`/`Duration` classes.
    pub fn new(py: Python<'_>, make_class: Py<PyAny>, time: Py<PyAny>, duration: Py<PyAny>) -> PyResult<Genpy> {
        Ok(Genpy {
            make_class,
            time,
            duration,
            new: py.import("builtins")?.getattr("object")?.getattr("__new__")?.unbind(),
            secs: PyString::intern(py, "secs").unbind(),
            nsecs: PyString::intern(py, "nsecs").unbind(),
            classes: HashMap::new(),
        })
    }

    /// The genpy-shaped form of `m`, a message of connection `conn` whose MD5 sum is `md5`.
    pub fn message(&mut self, py: Python<'_>, conn: u64, md5: &str, m: MessageRef<'_>) -> PyResult<Py<PyAny>> {
        let key = (conn, m.type_index());
        if !self.classes.contains_key(&key) {
            let layout = m.layout();
            let names: Vec<&str> = layout.fields.iter().map(|f| f.name.as_str()).collect();
            let slot_types: Vec<String> = layout.fields.iter().map(slot_type).collect();
            let md5 = if m.type_index() == m.schema().root { md5 } else { "" };
            let args = (layout.name.as_str(), PyTuple::new(py, &names)?, PyTuple::new(py, slot_types)?, md5);
            let class = self.make_class.call1(py, args)?;
            let fields = names.iter().map(|n| PyString::intern(py, n).unbind()).collect();
            self.classes.insert(key, Class { class, fields });
        }
        let obj = {
            let class = &self.classes[&key].class;
            self.new.call1(py, (class.clone_ref(py),))?
        };
        for (i, (_, v)) in m.fields().enumerate() {
            let value = self.value(py, conn, v)?;
            let name = self.classes[&key].fields[i].clone_ref(py);
            obj.setattr(py, name, value)?;
        }
        Ok(obj)
    }

    fn value(&mut self, py: Python<'_>, conn: u64, v: ValueRef<'_>) -> PyResult<Py<PyAny>> {
        if let Some(x) = scalar_or_string(py, v) {
            return x;
        }
        Ok(match v {
            // genpy reads uint8[] and char[] as bytes, every other array of numbers as a tuple.
            ValueRef::Prims(p) if p.prim == Prim::U8 => PyBytes::new(py, p.le).into_any().unbind(),
            ValueRef::Prims(p) => {
                let items = p.iter().map(|v| self.value(py, conn, v)).collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?.into_any().unbind()
            }
            ValueRef::Array(a) => {
                let items = a.iter().map(|v| self.value(py, conn, v)).collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, items)?.into_any().unbind()
            }
            ValueRef::Message(m) => match m.type_name() {
                "time" | "duration" => self.time(py, m)?,
                _ => self.message(py, conn, "", m)?,
            },
            _ => unreachable!("scalars and strings are converted above"),
        })
    }

    /// ROS 1's `time`/`duration` as the compat module's `Time`/`Duration`.
    fn time(&mut self, py: Python<'_>, m: MessageRef<'_>) -> PyResult<Py<PyAny>> {
        let class = if m.type_name() == "time" { &self.time } else { &self.duration };
        let obj = self.new.call1(py, (class.clone_ref(py),))?;
        let part = |i: usize| -> PyResult<Py<PyAny>> {
            match m.get(i) {
                Some(ValueRef::U32(x)) => Ok(x.into_pyobject(py)?.into_any().unbind()),
                Some(ValueRef::I32(x)) => Ok(x.into_pyobject(py)?.into_any().unbind()),
                _ => Err(pyo3::exceptions::PyValueError::new_err(format!("{}: not secs/nsecs", m.type_name()))),
            }
        };
        obj.setattr(py, self.secs.clone_ref(py), part(0)?)?;
        obj.setattr(py, self.nsecs.clone_ref(py), part(1)?)?;
        Ok(obj)
    }
}
