//! Decoded messages as Python objects, and Python objects back into messages.
//!
//! A message becomes an `rbag.Msg`: attribute access by field name, `_type`, `to_dict()`, and a
//! YAML `repr` as `ros2 topic echo` prints it. Arrays of numbers are numpy arrays (`uint8[]`
//! and image data as `uint8`), strings are `str` (`bytes` when a ROS 1 string is not UTF-8),
//! arrays of strings or messages are lists.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use numpy::PyArray1;
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use rbag_bag::decode::{Array, Kind, MessageRef, Prim, PrimArray, Schema, Value, ValueRef};

/// A message type's name and field names, shared by its messages.
pub struct MsgType {
    name: Py<PyString>,
    fields: Py<PyTuple>,
    index: HashMap<String, usize>,
    /// Each field's type as a `.msg` file writes it (`float64[9]`, `uint8[]`, `std_msgs/Header`).
    slot_types: Py<PyTuple>,
    /// A ROS 2 message with no fields, which IDL gives one filler field: shown with none.
    empty: bool,
}

/// Whether a type is a ROS 2 message with no fields (IDL's one filler field).
fn is_empty_struct(layout: &rbag_bag::decode::MsgLayout) -> bool {
    layout.fields.len() == 1 && layout.fields[0].name == rbag_bag::decode::EMPTY_STRUCT_FIELD
}

/// A decoded message.
#[pyclass(module = "rbag", name = "Msg", frozen)]
pub struct Msg {
    ty: Arc<MsgType>,
    values: Box<[Py<PyAny>]>,
}

#[pymethods]
impl Msg {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        match self.ty.index.get(name) {
            Some(&i) => Ok(self.values[i].clone_ref(py)),
            None => {
                let fields = self.ty.fields.bind(py).iter().map(|f| f.to_string()).collect::<Vec<_>>();
                Err(PyAttributeError::new_err(format!(
                    "{} has no field {name:?} (it has: {})",
                    self.ty.name.bind(py),
                    fields.join(", ")
                )))
            }
        }
    }

    /// The message type's full name (`sensor_msgs/msg/Imu`, `sensor_msgs/Imu`).
    #[getter(_type)]
    fn type_name(&self, py: Python<'_>) -> Py<PyString> {
        self.ty.name.clone_ref(py)
    }

    /// Each field's type as a `.msg` file writes it (`float64[9]`, `uint8[]`,
    /// `std_msgs/Header`), as genpy's `_slot_types`.
    #[getter(_slot_types)]
    fn slot_types(&self, py: Python<'_>) -> Py<PyTuple> {
        self.ty.slot_types.clone_ref(py)
    }

    /// The field names, in definition order.
    #[getter(_fields)]
    fn fields(&self, py: Python<'_>) -> Py<PyTuple> {
        self.ty.fields.clone_ref(py)
    }

    fn __dir__(&self, py: Python<'_>) -> Py<PyTuple> {
        self.ty.fields.clone_ref(py)
    }

    /// The message as nested dicts (numpy arrays and lists stay as they are).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in self.ty.fields.bind(py).iter().zip(self.values.iter()) {
            d.set_item(name, plain(v.bind(py))?)?;
        }
        Ok(d)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Msg>() else { return Ok(false) };
        let other = other.get();
        if !self.ty.name.bind(py).as_any().eq(other.ty.name.bind(py))? || self.values.len() != other.values.len() {
            return Ok(false);
        }
        for (a, b) in self.values.iter().zip(other.values.iter()) {
            let (a, b) = (a.bind(py), b.bind(py));
            let same = if is_ndarray(a) || is_ndarray(b) { listed(a)?.eq(listed(b)?)? } else { a.eq(b)? };
            if !same {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn __len__(&self) -> usize {
        self.values.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut out = String::new();
        yaml_fields(py, self, 0, &mut out)?;
        Ok(out)
    }
}

fn is_ndarray(v: &Bound<'_, PyAny>) -> bool {
    v.hasattr("tolist").unwrap_or(false) && v.hasattr("dtype").unwrap_or(false)
}

/// A numpy array as a list (anything else as it is), for comparing.
fn listed<'py>(v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if is_ndarray(v) {
        v.call_method0("tolist")
    } else {
        Ok(v.clone())
    }
}

/// `v` with every `Msg` inside turned into a dict.
fn plain<'py>(v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(m) = v.cast::<Msg>() {
        return Ok(m.get().to_dict(v.py())?.into_any());
    }
    if let Ok(list) = v.cast::<PyList>() {
        let items = list.iter().map(|i| plain(&i)).collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(v.py(), items)?.into_any());
    }
    Ok(v.clone())
}

/// YAML as `ros2 topic echo` prints a message: `field: value`, nested messages indented, arrays
/// as `- item` lines.
fn yaml_fields(py: Python<'_>, m: &Msg, indent: usize, out: &mut String) -> PyResult<()> {
    for (name, v) in m.ty.fields.bind(py).iter().zip(m.values.iter()) {
        let v = v.bind(py);
        let pad = " ".repeat(indent);
        if let Ok(inner) = v.cast::<Msg>() {
            let _ = writeln!(out, "{pad}{name}:");
            yaml_fields(py, inner.get(), indent + 2, out)?;
        } else if is_ndarray(v) || v.cast::<PyList>().is_ok() {
            let items = if is_ndarray(v) { v.call_method0("tolist")? } else { v.clone() };
            let items = items.cast::<PyList>()?.clone();
            if items.is_empty() {
                let _ = writeln!(out, "{pad}{name}: []");
                continue;
            }
            let _ = writeln!(out, "{pad}{name}:");
            for item in items.iter() {
                if let Ok(inner) = item.cast::<Msg>() {
                    let mut nested = String::new();
                    yaml_fields(py, inner.get(), indent + 2, &mut nested)?;
                    let nested = nested.trim_start();
                    let _ = write!(out, "{pad}- {nested}");
                } else {
                    let _ = writeln!(out, "{pad}- {}", scalar_text(&item)?);
                }
            }
        } else {
            let _ = writeln!(out, "{pad}{name}: {}", scalar_text(v)?);
        }
    }
    Ok(())
}

fn scalar_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        let s = s.to_cow()?;
        let plain = !s.is_empty() && !s.contains([':', '#', '\n', '\'', '"']) && s.trim() == s;
        return Ok(if plain { s.to_string() } else { format!("'{}'", s.replace('\'', "''")) });
    }
    if v.cast::<PyBool>().is_ok() {
        return Ok(if v.is_truthy()? { "true" } else { "false" }.into());
    }
    Ok(v.str()?.to_string())
}

/// Converts decoded messages into Python objects, caching each type's names.
#[derive(Default)]
pub struct Converter {
    /// Per connection (keyed by bag and id), per type index of its schema.
    types: HashMap<u64, Vec<Option<Arc<MsgType>>>>,
}

impl Converter {
    /// The Python form of `m`, a message of connection `conn`.
    pub fn message(&mut self, py: Python<'_>, conn: u64, m: MessageRef<'_>) -> PyResult<Py<PyAny>> {
        let ty = self.msg_type(py, conn, m)?;
        let values = match ty.empty {
            true => Vec::new(),
            false => m.fields().map(|(_, v)| self.value(py, conn, v)).collect::<PyResult<Vec<_>>>()?,
        };
        Ok(Py::new(py, Msg { ty, values: values.into_boxed_slice() })?.into_any())
    }

    fn msg_type(&mut self, py: Python<'_>, conn: u64, m: MessageRef<'_>) -> PyResult<Arc<MsgType>> {
        let slots = self.types.entry(conn).or_default();
        let i = m.type_index();
        if slots.len() <= i {
            slots.resize(m.schema().msgs.len().max(i + 1), None);
        }
        if let Some(t) = &slots[i] {
            return Ok(t.clone());
        }
        let layout = m.layout();
        let empty = is_empty_struct(layout);
        let fields = if empty { &[][..] } else { &layout.fields[..] };
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        let slot_types: Vec<String> = fields.iter().map(slot_type).collect();
        let t = Arc::new(MsgType {
            name: PyString::intern(py, &layout.name).unbind(),
            fields: PyTuple::new(py, names.iter().map(|n| PyString::intern(py, n)))?.unbind(),
            index: names.iter().enumerate().map(|(i, n)| (n.to_string(), i)).collect(),
            slot_types: PyTuple::new(py, slot_types)?.unbind(),
            empty,
        });
        slots[i] = Some(t.clone());
        Ok(t)
    }

    fn value(&mut self, py: Python<'_>, conn: u64, v: ValueRef<'_>) -> PyResult<Py<PyAny>> {
        if let Some(x) = scalar_or_string(py, v) {
            return x;
        }
        Ok(match v {
            ValueRef::Prims(p) => prims(py, p.prim, p.le)?,
            ValueRef::Array(a) => {
                let items = a.iter().map(|v| self.value(py, conn, v)).collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, items)?.into_any().unbind()
            }
            ValueRef::Message(m) => self.message(py, conn, m)?,
            _ => unreachable!("scalars and strings are converted above"),
        })
    }
}

/// A field's type as a `.msg` file writes it (`float64[9]`, `uint8[]`, `std_msgs/Header`), as
/// genpy's `_slot_types` give it.
pub fn slot_type(f: &rbag_bag::decode::FieldLayout) -> String {
    match f.array {
        Array::Single => f.type_name.clone(),
        Array::Fixed(n) => format!("{}[{n}]", f.type_name),
        Array::Bounded(n) => format!("{}[<={n}]", f.type_name),
        Array::Unbounded => format!("{}[]", f.type_name),
    }
}

/// A scalar as `int`/`float`/`bool`, a string as `str` (`bytes` when a ROS 1 string is not
/// UTF-8); `None` for arrays and messages, which each shape builds its own way.
pub fn scalar_or_string(py: Python<'_>, v: ValueRef<'_>) -> Option<PyResult<Py<PyAny>>> {
    fn int<'py, T: pyo3::IntoPyObjectExt<'py>>(py: Python<'py>, x: T) -> PyResult<Py<PyAny>> {
        x.into_py_any(py)
    }
    Some(match v {
        ValueRef::Bool(b) => Ok(PyBool::new(py, b).to_owned().into_any().unbind()),
        ValueRef::I8(x) => int(py, x),
        ValueRef::U8(x) => int(py, x),
        ValueRef::I16(x) => int(py, x),
        ValueRef::U16(x) => int(py, x),
        ValueRef::I32(x) => int(py, x),
        ValueRef::U32(x) => int(py, x),
        ValueRef::I64(x) => int(py, x),
        ValueRef::U64(x) => int(py, x),
        ValueRef::F32(x) => Ok(PyFloat::new(py, f64::from(x)).into_any().unbind()),
        ValueRef::F64(x) => Ok(PyFloat::new(py, x).into_any().unbind()),
        ValueRef::String(s) => Ok(match std::str::from_utf8(s) {
            Ok(s) => PyString::new(py, s).into_any().unbind(),
            Err(_) => PyBytes::new(py, s).into_any().unbind(),
        }),
        ValueRef::Prims(_) | ValueRef::Array(_) | ValueRef::Message(_) => return None,
    })
}

/// A numpy array of little-endian primitives (copied: the bytes belong to the decoder).
fn prims(py: Python<'_>, prim: Prim, le: &[u8]) -> PyResult<Py<PyAny>> {
    macro_rules! array {
        ($t:ty) => {{
            let v: Vec<$t> = le
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|b| <$t>::from_le_bytes(b.try_into().expect("chunks_exact gives whole elements")))
                .collect();
            PyArray1::from_vec(py, v).into_any().unbind()
        }};
    }
    Ok(match prim {
        Prim::Bool => PyArray1::from_vec(py, le.iter().map(|b| *b != 0).collect::<Vec<bool>>()).into_any().unbind(),
        Prim::U8 => PyArray1::from_slice(py, le).into_any().unbind(),
        Prim::I8 => array!(i8),
        Prim::I16 => array!(i16),
        Prim::U16 => array!(u16),
        Prim::I32 => array!(i32),
        Prim::U32 => array!(u32),
        Prim::I64 => array!(i64),
        Prim::U64 => array!(u64),
        Prim::F32 => array!(f32),
        Prim::F64 => array!(f64),
    })
}

/// A message of type `ty` (an index into `schema.msgs`) from a Python object: an `rbag.Msg`, a
/// dict, or any object with the fields as attributes. Every field must be given.
pub fn to_value(schema: &Schema, ty: usize, obj: &Bound<'_, PyAny>, path: &str) -> PyResult<Value<'static>> {
    let layout = &schema.msgs[ty];
    if is_empty_struct(layout) {
        return Ok(Value::Message(vec![Value::U8(0)]));
    }
    let mut fields = Vec::with_capacity(layout.fields.len());
    for f in &layout.fields {
        let here = if path.is_empty() { f.name.clone() } else { format!("{path}.{}", f.name) };
        let v = field_of(obj, &f.name)
            .map_err(|_| PyValueError::new_err(format!("{}: no field {here:?} in the value given", layout.name)))?;
        fields.push(match f.array {
            Array::Single => single(schema, &f.kind, &v, &here)?,
            Array::Fixed(n) => {
                let a = many(schema, &f.kind, &v, &here)?;
                let len = match &a {
                    Value::Prims(p) => p.len(),
                    Value::Array(items) => items.len(),
                    _ => 0,
                };
                if len != n {
                    return Err(PyValueError::new_err(format!("{here}: {len} elements, the type fixes {n}")));
                }
                a
            }
            Array::Bounded(_) | Array::Unbounded => many(schema, &f.kind, &v, &here)?,
        });
    }
    Ok(Value::Message(fields))
}

fn field_of<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    match obj.cast::<PyDict>() {
        Ok(d) => d.get_item(name)?.ok_or_else(|| PyAttributeError::new_err(name.to_string())),
        Err(_) => obj.getattr(name),
    }
}

fn type_error(path: &str, want: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let got = got.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    PyTypeError::new_err(format!("{path}: expected {want}, got {got}"))
}

fn single(schema: &Schema, kind: &Kind, v: &Bound<'_, PyAny>, path: &str) -> PyResult<Value<'static>> {
    Ok(match kind {
        Kind::Msg(i) => to_value(schema, *i, v, path)?,
        Kind::String { .. } => Value::String(
            match v.cast::<PyString>() {
                Ok(s) => s.to_cow()?.as_bytes().to_vec(),
                Err(_) => v.cast::<PyBytes>().map_err(|_| type_error(path, "str", v))?.as_bytes().to_vec(),
            }
            .into(),
        ),
        Kind::Prim(p) => scalar(*p, v, path)?,
    })
}

fn scalar(p: Prim, v: &Bound<'_, PyAny>, path: &str) -> PyResult<Value<'static>> {
    let int = |v: &Bound<'_, PyAny>| -> PyResult<i128> {
        if v.cast::<PyFloat>().is_ok() {
            return Err(type_error(path, "an integer", v));
        }
        v.extract::<i128>().map_err(|_| type_error(path, "an integer", v))
    };
    let range = |x: i128| PyValueError::new_err(format!("{path}: {x} is out of range for {}", p.name()));
    Ok(match p {
        Prim::Bool => Value::Bool(v.is_truthy()?),
        Prim::F32 => Value::F32(v.extract::<f64>().map_err(|_| type_error(path, "a number", v))? as f32),
        Prim::F64 => Value::F64(v.extract::<f64>().map_err(|_| type_error(path, "a number", v))?),
        _ => {
            let x = int(v)?;
            macro_rules! fit {
                ($t:ty, $variant:ident) => {
                    Value::$variant(<$t>::try_from(x).map_err(|_| range(x))?)
                };
            }
            match p {
                Prim::I8 => fit!(i8, I8),
                Prim::U8 => fit!(u8, U8),
                Prim::I16 => fit!(i16, I16),
                Prim::U16 => fit!(u16, U16),
                Prim::I32 => fit!(i32, I32),
                Prim::U32 => fit!(u32, U32),
                Prim::I64 => fit!(i64, I64),
                _ => fit!(u64, U64),
            }
        }
    })
}

fn many(schema: &Schema, kind: &Kind, v: &Bound<'_, PyAny>, path: &str) -> PyResult<Value<'static>> {
    if let Kind::Prim(p) = kind {
        let p = *p;
        if matches!(p, Prim::U8 | Prim::I8) {
            if let Ok(b) = v.cast::<PyBytes>() {
                return Ok(Value::Prims(PrimArray { prim: p, le: b.as_bytes().to_vec().into() }));
            }
        }
        // numpy arrays and other sequences alike: element by element, checked.
        let items: Vec<Bound<'_, PyAny>> = if is_ndarray(v) {
            v.call_method0("tolist")?.try_iter()?.collect::<PyResult<_>>()?
        } else {
            v.try_iter().map_err(|_| type_error(path, "a sequence", v))?.collect::<PyResult<_>>()?
        };
        let mut le = Vec::with_capacity(items.len() * p.size());
        for (i, item) in items.iter().enumerate() {
            let x = scalar(p, item, &format!("{path}[{i}]"))?;
            push_le(&x, &mut le);
        }
        return Ok(Value::Prims(PrimArray { prim: p, le: le.into() }));
    }
    let items = v.try_iter().map_err(|_| type_error(path, "a sequence", v))?;
    let mut out = Vec::new();
    for (i, item) in items.enumerate() {
        out.push(single(schema, kind, &item?, &format!("{path}[{i}]"))?);
    }
    Ok(Value::Array(out))
}

/// Appends a scalar's little-endian bytes.
fn push_le(v: &Value<'_>, out: &mut Vec<u8>) {
    match v {
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U8(x) => out.push(*x),
        Value::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::String(_) | Value::Prims(_) | Value::Array(_) | Value::Message(_) => {}
    }
}
