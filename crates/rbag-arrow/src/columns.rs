//! A message type as Arrow columns, and the builders that fill them from decoded messages.
//!
//! The shape (docs/columnar.md):
//! - `log_time` first, as `timestamp[ns]`;
//! - nested messages are flattened into dotted names (`pose.position.x`), as rosbags-dataframe
//!   and `rbag echo --csv` name them;
//! - numbers and `bool` keep their type; `string` and `wstring` are `utf8`;
//! - `uint8[]` (image data, point clouds) is `binary`, `uint8[N]` `fixed_size_binary(N)`;
//! - other `T[N]` are `fixed_size_list<T>[N]`, `T[]` and `T[<=N]` are `list<T>`;
//! - arrays of messages are `list<struct<…>>`: inside a list, messages nest as structs, since a
//!   list's elements cannot be flattened into columns of the table;
//! - ROS 2's filler field of an empty message is left out, as `rbag.Msg` leaves it out.
//!
//! Bags hold no nulls, so no column is nullable.

use std::sync::Arc;

use arrow_array::{
    make_array, ArrayRef, BooleanArray, FixedSizeBinaryArray, FixedSizeListArray, ListArray, RecordBatch, StringArray,
    StructArray, TimestampNanosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, MutableBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit};
use rbag_bag::decode::{Array, FieldLayout, Kind, MessageRef, Prim, Prims, Schema, ValueRef, EMPTY_STRUCT_FIELD};

/// The name of the column of log times.
pub const LOG_TIME: &str = "log_time";

/// Why a value did not go into its column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A ROS 1 string that is not UTF-8 (Arrow's `utf8` columns hold text only).
    #[error("the string is not UTF-8")]
    NotUtf8,
    /// A column of one batch would pass Arrow's 2 GiB limit of 32-bit offsets.
    #[error("more than 2 GiB of strings or bytes in one batch")]
    TooLarge,
    /// The decoded value is not of the shape its schema promised (a bug, reported, not a panic).
    #[error("the value does not have the shape of its field's type")]
    Shape,
}

/// Selected columns that the type does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no column {column} (the columns are: {known})")]
pub struct NoColumn {
    /// The name asked for.
    pub column: String,
    /// The columns there are, comma-separated.
    pub known: String,
}

/// A column's builder: the buffers one batch's values go into.
enum Col {
    Bool(BooleanBufferBuilder),
    /// A number, as little-endian bytes (this is a little-endian machine's layout too).
    Num {
        prim: Prim,
        le: MutableBuffer,
    },
    Utf8(Bytes),
    Binary(Bytes),
    FixedBinary {
        size: usize,
        data: MutableBuffer,
        len: usize,
    },
    List {
        offsets: Vec<i32>,
        item: Box<Col>,
        field: FieldRef,
    },
    FixedList {
        size: usize,
        item: Box<Col>,
        field: FieldRef,
        len: usize,
    },
    Struct {
        fields: Vec<(usize, Col)>,
        arrow: Fields,
        len: usize,
    },
}

/// Variable-length values: their bytes end to end, and where each ends.
struct Bytes {
    offsets: Vec<i32>,
    data: MutableBuffer,
}

impl Bytes {
    fn new() -> Self {
        Bytes { offsets: vec![0], data: MutableBuffer::new(0) }
    }

    fn push(&mut self, v: &[u8]) -> Result<(), ValueError> {
        self.data.extend_from_slice(v);
        self.offsets.push(i32::try_from(self.data.len()).map_err(|_| ValueError::TooLarge)?);
        Ok(())
    }

    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer) {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let data = std::mem::replace(&mut self.data, MutableBuffer::new(0));
        (OffsetBuffer::new(ScalarBuffer::from(offsets)), data.into())
    }
}

fn prim_type(p: Prim) -> DataType {
    match p {
        Prim::Bool => DataType::Boolean,
        Prim::I8 => DataType::Int8,
        Prim::U8 => DataType::UInt8,
        Prim::I16 => DataType::Int16,
        Prim::U16 => DataType::UInt16,
        Prim::I32 => DataType::Int32,
        Prim::U32 => DataType::UInt32,
        Prim::I64 => DataType::Int64,
        Prim::U64 => DataType::UInt64,
        Prim::F32 => DataType::Float32,
        Prim::F64 => DataType::Float64,
    }
}

/// Whether a field is ROS 2's filler in a message type without fields.
fn is_filler(f: &FieldLayout, siblings: usize) -> bool {
    siblings == 1 && f.name == EMPTY_STRUCT_FIELD
}

impl Col {
    /// The builder of one element of `kind`, where messages are structs (inside lists).
    fn element(schema: &Schema, kind: &Kind) -> Col {
        match kind {
            Kind::Prim(Prim::Bool) => Col::Bool(BooleanBufferBuilder::new(0)),
            Kind::Prim(p) => Col::Num { prim: *p, le: MutableBuffer::new(0) },
            Kind::String { .. } => Col::Utf8(Bytes::new()),
            Kind::Msg(i) => {
                let layout = &schema.msgs[*i];
                let n = layout.fields.len();
                let fields: Vec<(usize, Col)> = layout
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| !is_filler(f, n))
                    .map(|(i, f)| (i, Col::field(schema, f)))
                    .collect();
                let arrow = layout
                    .fields
                    .iter()
                    .filter(|f| !is_filler(f, n))
                    .zip(&fields)
                    .map(|(f, (_, c))| Field::new(&f.name, c.data_type(), false))
                    .collect();
                Col::Struct { fields, arrow, len: 0 }
            }
        }
    }

    /// The builder of a field: an element, or an array of them.
    fn field(schema: &Schema, f: &FieldLayout) -> Col {
        let bytes = matches!(f.kind, Kind::Prim(Prim::U8));
        match f.array {
            Array::Single => Col::element(schema, &f.kind),
            Array::Fixed(size) if bytes && size > 0 => Col::FixedBinary { size, data: MutableBuffer::new(0), len: 0 },
            Array::Bounded(_) | Array::Unbounded if bytes => Col::Binary(Bytes::new()),
            Array::Fixed(size) => {
                let item = Col::element(schema, &f.kind);
                let field = Arc::new(Field::new("item", item.data_type(), false));
                Col::FixedList { size, item: Box::new(item), field, len: 0 }
            }
            Array::Bounded(_) | Array::Unbounded => {
                let item = Col::element(schema, &f.kind);
                let field = Arc::new(Field::new("item", item.data_type(), false));
                Col::List { offsets: vec![0], item: Box::new(item), field }
            }
        }
    }

    fn data_type(&self) -> DataType {
        match self {
            Col::Bool(_) => DataType::Boolean,
            Col::Num { prim, .. } => prim_type(*prim),
            Col::Utf8(_) => DataType::Utf8,
            Col::Binary(_) => DataType::Binary,
            Col::FixedBinary { size, .. } => DataType::FixedSizeBinary(*size as i32),
            Col::List { field, .. } => DataType::List(field.clone()),
            Col::FixedList { size, field, .. } => DataType::FixedSizeList(field.clone(), *size as i32),
            Col::Struct { arrow, .. } => DataType::Struct(arrow.clone()),
        }
    }

    fn push(&mut self, v: ValueRef<'_>) -> Result<(), ValueError> {
        match (self, v) {
            (Col::Bool(b), ValueRef::Bool(x)) => b.append(x),
            (Col::Num { prim, le }, v) => push_scalar(*prim, le, v)?,
            (Col::Utf8(b), ValueRef::String(s)) => {
                std::str::from_utf8(s).map_err(|_| ValueError::NotUtf8)?;
                b.push(s)?;
            }
            (Col::Binary(b), ValueRef::Prims(p)) => b.push(p.le)?,
            (Col::FixedBinary { size, data, len }, ValueRef::Prims(p)) if p.le.len() == *size => {
                data.extend_from_slice(p.le);
                *len += 1;
            }
            (Col::List { offsets, item, .. }, v) => {
                item.push_all(v)?;
                offsets.push(i32::try_from(item.len()).map_err(|_| ValueError::TooLarge)?);
            }
            (Col::FixedList { size, item, len, .. }, v) => {
                if item.push_all(v)? != *size {
                    return Err(ValueError::Shape);
                }
                *len += 1;
            }
            (Col::Struct { fields, len, .. }, ValueRef::Message(m)) => {
                push_fields(fields, m)?;
                *len += 1;
            }
            _ => return Err(ValueError::Shape),
        }
        Ok(())
    }

    /// Pushes every element of an array value; returns how many.
    fn push_all(&mut self, v: ValueRef<'_>) -> Result<usize, ValueError> {
        match v {
            ValueRef::Prims(p) => self.push_prims(p),
            ValueRef::Array(a) => {
                for x in a.iter() {
                    self.push(x)?;
                }
                Ok(a.len())
            }
            _ => Err(ValueError::Shape),
        }
    }

    fn push_prims(&mut self, p: Prims<'_>) -> Result<usize, ValueError> {
        match self {
            Col::Num { prim, le } if *prim == p.prim => le.extend_from_slice(p.le),
            Col::Bool(b) if p.prim == Prim::Bool => p.le.iter().for_each(|&x| b.append(x != 0)),
            _ => return Err(ValueError::Shape),
        }
        Ok(p.len())
    }

    /// Makes room for `n` more values, so that a batch's buffers are allocated once instead of
    /// regrown (and copied) as they fill. Variable-length data cannot be foreseen.
    fn reserve(&mut self, n: usize) {
        match self {
            Col::Bool(b) => b.reserve(n),
            Col::Num { prim, le } => le.reserve(n * prim.size()),
            Col::Utf8(b) | Col::Binary(b) => b.offsets.reserve(n),
            Col::FixedBinary { size, data, .. } => data.reserve(n * *size),
            Col::List { offsets, .. } => offsets.reserve(n),
            Col::FixedList { size, item, .. } => item.reserve(n * *size),
            Col::Struct { fields, .. } => fields.iter_mut().for_each(|(_, c)| c.reserve(n)),
        }
    }

    /// Values pushed since the last [`Col::finish`].
    fn len(&self) -> usize {
        match self {
            Col::Bool(b) => b.len(),
            Col::Num { prim, le } => le.len() / prim.size(),
            Col::Utf8(b) | Col::Binary(b) => b.offsets.len() - 1,
            Col::List { offsets, .. } => offsets.len() - 1,
            Col::FixedBinary { len, .. } | Col::FixedList { len, .. } | Col::Struct { len, .. } => *len,
        }
    }

    /// The values pushed so far as an array; the builder starts again empty.
    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let dt = self.data_type();
        Ok(match self {
            Col::Bool(b) => Arc::new(BooleanArray::new(b.finish(), None)),
            Col::Num { prim, le } => {
                let n = le.len() / prim.size();
                let buffer: Buffer = std::mem::replace(le, MutableBuffer::new(0)).into();
                make_array(ArrayData::builder(dt).len(n).add_buffer(buffer).build()?)
            }
            Col::Utf8(b) => {
                let (offsets, data) = b.take();
                Arc::new(StringArray::try_new(offsets, data, None)?)
            }
            Col::Binary(b) => {
                let (offsets, data) = b.take();
                Arc::new(arrow_array::BinaryArray::try_new(offsets, data, None)?)
            }
            Col::FixedBinary { size, data, len } => {
                *len = 0;
                let data = std::mem::replace(data, MutableBuffer::new(0));
                Arc::new(FixedSizeBinaryArray::try_new(*size as i32, data.into(), None)?)
            }
            Col::List { offsets, item, field } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                Arc::new(ListArray::try_new(field.clone(), offsets, item.finish()?, None)?)
            }
            Col::FixedList { size, item, field, len } => {
                let n = std::mem::take(len);
                Arc::new(FixedSizeListArray::try_new_with_length(field.clone(), *size as i32, item.finish()?, None, n)?)
            }
            Col::Struct { fields, arrow, len } => {
                let n = std::mem::take(len);
                let arrays = fields.iter_mut().map(|(_, c)| c.finish()).collect::<Result<Vec<_>, _>>()?;
                Arc::new(StructArray::try_new_with_length(arrow.clone(), arrays, None, n)?)
            }
        })
    }
}

fn push_fields(fields: &mut [(usize, Col)], m: MessageRef<'_>) -> Result<(), ValueError> {
    for (i, c) in fields {
        c.push(m.get(*i).ok_or(ValueError::Shape)?)?;
    }
    Ok(())
}

fn push_scalar(prim: Prim, le: &mut MutableBuffer, v: ValueRef<'_>) -> Result<(), ValueError> {
    match (prim, v) {
        (Prim::I8, ValueRef::I8(x)) => le.push(x),
        (Prim::U8, ValueRef::U8(x)) => le.push(x),
        (Prim::I16, ValueRef::I16(x)) => le.push(x),
        (Prim::U16, ValueRef::U16(x)) => le.push(x),
        (Prim::I32, ValueRef::I32(x)) => le.push(x),
        (Prim::U32, ValueRef::U32(x)) => le.push(x),
        (Prim::I64, ValueRef::I64(x)) => le.push(x),
        (Prim::U64, ValueRef::U64(x)) => le.push(x),
        (Prim::F32, ValueRef::F32(x)) => le.push(x),
        (Prim::F64, ValueRef::F64(x)) => le.push(x),
        _ => return Err(ValueError::Shape),
    }
    Ok(())
}

/// Which fields of a message go where: a column, or a nested message flattened further.
struct Plan(Vec<(usize, Node)>);

enum Node {
    Column(usize),
    Nested(Plan),
}

/// One topic's columns, filled a message at a time and taken a batch at a time.
pub struct Columns {
    plan: Plan,
    cols: Vec<Col>,
    names: Vec<String>,
    times: Vec<i64>,
    schema: SchemaRef,
}

impl Columns {
    /// The columns of `schema`'s root type; with `select`, only those named (a nested
    /// message's name, such as `pose`, selects every column under it), in the type's order.
    pub fn new(schema: &Schema, select: Option<&[String]>) -> Result<Columns, NoColumn> {
        let mut all = Vec::new();
        leaves(schema, schema.root, "", &mut all);
        if let Some(select) = select {
            for s in select {
                if !all.iter().any(|name| selects(s, name)) {
                    let known = all.join(", ");
                    return Err(NoColumn { column: s.clone(), known });
                }
            }
        }
        let keep = |name: &str| select.is_none_or(|s| s.iter().any(|s| selects(s, name)));
        let mut cols = Vec::new();
        let mut names = Vec::new();
        let plan = plan(schema, schema.root, "", &keep, &mut cols, &mut names);
        let mut fields = vec![Field::new(LOG_TIME, DataType::Timestamp(TimeUnit::Nanosecond, None), false)];
        fields.extend(names.iter().zip(&cols).map(|(n, c)| Field::new(n, c.data_type(), false)));
        Ok(Columns { plan, cols, names, times: Vec::new(), schema: Arc::new(ArrowSchema::new(fields)) })
    }

    /// The table's schema: `log_time`, then the columns.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The columns' names (without `log_time`), in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Rows pushed since the last [`Columns::finish`].
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether no row is waiting.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Makes room for `rows` more rows.
    pub fn reserve(&mut self, rows: usize) {
        self.times.reserve(rows);
        self.cols.iter_mut().for_each(|c| c.reserve(rows));
    }

    /// Adds one message as a row. On an error the builders hold part of the row: the batch is
    /// not usable, and the caller stops.
    pub fn push(&mut self, log_time: u64, m: MessageRef<'_>) -> Result<(), (String, ValueError)> {
        push_plan(&self.plan, m, &mut self.cols, &self.names)?;
        self.times.push(i64::try_from(log_time).unwrap_or(i64::MAX));
        Ok(())
    }

    /// The rows pushed so far as a batch; the builders start again empty.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.cols.len() + 1);
        arrays.push(Arc::new(TimestampNanosecondArray::from(std::mem::take(&mut self.times))));
        for c in &mut self.cols {
            arrays.push(c.finish()?);
        }
        RecordBatch::try_new(self.schema.clone(), arrays)
    }
}

/// Whether selecting `s` keeps column `name`: the name itself, or a message above it.
fn selects(s: &str, name: &str) -> bool {
    name == s || name.strip_prefix(s).is_some_and(|rest| rest.starts_with('.'))
}

fn dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Every column name of message type `ty`, flattened.
fn leaves(schema: &Schema, ty: usize, prefix: &str, out: &mut Vec<String>) {
    let fields = &schema.msgs[ty].fields;
    for f in fields.iter().filter(|f| !is_filler(f, fields.len())) {
        let name = dotted(prefix, &f.name);
        match (&f.kind, f.array) {
            (Kind::Msg(i), Array::Single) => leaves(schema, *i, &name, out),
            _ => out.push(name),
        }
    }
}

fn plan(
    schema: &Schema,
    ty: usize,
    prefix: &str,
    keep: &dyn Fn(&str) -> bool,
    cols: &mut Vec<Col>,
    names: &mut Vec<String>,
) -> Plan {
    let fields = &schema.msgs[ty].fields;
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate().filter(|(_, f)| !is_filler(f, fields.len())) {
        let name = dotted(prefix, &f.name);
        match (&f.kind, f.array) {
            (Kind::Msg(m), Array::Single) => {
                let nested = plan(schema, *m, &name, keep, cols, names);
                if !nested.0.is_empty() {
                    out.push((i, Node::Nested(nested)));
                }
            }
            _ if keep(&name) => {
                out.push((i, Node::Column(cols.len())));
                cols.push(Col::field(schema, f));
                names.push(name);
            }
            _ => {}
        }
    }
    Plan(out)
}

fn push_plan(plan: &Plan, m: MessageRef<'_>, cols: &mut [Col], names: &[String]) -> Result<(), (String, ValueError)> {
    for (i, node) in &plan.0 {
        let v = m.get(*i);
        match node {
            Node::Column(c) => match v {
                Some(v) => cols[*c].push(v).map_err(|e| (names[*c].clone(), e))?,
                None => return Err((names[*c].clone(), ValueError::Shape)),
            },
            Node::Nested(p) => match v.and_then(|v| v.as_message()) {
                Some(inner) => push_plan(p, inner, cols, names)?,
                None => return Err((String::new(), ValueError::Shape)),
            },
        }
    }
    Ok(())
}
