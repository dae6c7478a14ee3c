//! Evaluating an expression tree on one message, with Python's meaning for the operations a
//! filter uses. The message is decoded only when `m` is first reached, as a view (no tree
//! built); every operation is charged to a per-message fuel budget, so that neither time nor
//! memory grows past [`Limits`](super::Limits) whatever the expression.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use rbag_msg::{ArrayRef, MessageRef, Prims, ValueRef};
use rbag_storage::Connection;
use regex::bytes::Regex;

use super::parser::{BinOp, Builtin, CmpOp, Kind, Lit, Node, UnOp};
use super::{Anchor, Expression};
use crate::decode::{DecodeError, Decoders};

/// A value while evaluating.
#[derive(Debug, Clone)]
pub(crate) enum Val<'d> {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    /// A Python `str`, as bytes (ROS 1 strings need not be UTF-8).
    Str(Cow<'d, [u8]>),
    /// A ROS 1 `time` (or `duration`), as genpy gives them: nanoseconds.
    Time {
        ns: i128,
        dur: bool,
    },
    Msg(MessageRef<'d>),
    Arr(ArrayRef<'d>),
    /// An array of primitives (`bytes` for `uint8[]`, a tuple for the others in genpy).
    Prims(Prims<'d>),
    List(Vec<Val<'d>>),
    /// The `re` module.
    Re,
}

/// What went wrong on a message.
#[derive(Debug)]
pub(crate) enum Fault {
    /// The message's type has no such field.
    Field { ty: String, field: String, fields: String },
    /// An operation on values of the wrong type (`'a' < 1`, `len(5)`).
    Type(String),
    /// An index past the end of an array or string.
    Index(String),
    /// A value an operation refuses (`1 / 0`, `int('x')`).
    Value(String),
    /// The expression needs more time or memory than a message may take.
    Limit(String),
    /// The message does not decode.
    Decode(DecodeError),
    /// A fault of a subexpression, which keeps its own position.
    Nested(Box<EvalFault>),
}

/// A fault and the part of the expression it happened in.
#[derive(Debug)]
pub(crate) struct EvalFault {
    pub(crate) fault: Fault,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

type R<T> = Result<T, Fault>;

/// The message, decoded on first use.
pub(crate) enum LazyM<'d> {
    Pending { decoders: &'d mut Decoders, connection: &'d Connection, log_time: u64, data: &'d [u8] },
    Ready(MessageRef<'d>),
    Absent,
}

/// Regular expressions built from patterns that are not literals, kept for the next messages.
#[derive(Default)]
pub(crate) struct RegexCache {
    map: HashMap<Anchor, HashMap<Vec<u8>, Regex>>,
    len: usize,
}

pub(crate) struct Eval<'e, 'd> {
    pub(crate) expr: &'e Expression,
    pub(crate) cache: &'e mut RegexCache,
    pub(crate) topic: &'d str,
    pub(crate) log_time: u64,
    pub(crate) m: LazyM<'d>,
    pub(crate) fuel: u64,
}

fn type_name(v: &Val) -> &'static str {
    match v {
        Val::None => "None",
        Val::Bool(_) => "bool",
        Val::Int(_) => "int",
        Val::Float(_) => "float",
        Val::Str(_) => "str",
        Val::Time { dur: false, .. } => "Time",
        Val::Time { dur: true, .. } => "Duration",
        Val::Msg(_) => "message",
        Val::Arr(_) | Val::List(_) => "list",
        Val::Prims(p) if p.prim == rbag_msg::schema::Prim::U8 => "bytes",
        Val::Prims(_) => "tuple",
        Val::Re => "module",
    }
}

const NS: i128 = 1_000_000_000;

/// A ROS 1 `time`/`duration` view as a value, else `None`.
fn time_of(m: &MessageRef) -> Option<Val<'static>> {
    let dur = match m.type_name() {
        "time" => false,
        "duration" => true,
        _ => return None,
    };
    let secs = m.get(0)?.scalar()?;
    let nsecs = m.get(1)?.scalar()?;
    let (s, n) = (int_of_scalar(&secs)?, int_of_scalar(&nsecs)?);
    Some(Val::Time { ns: s * NS + n, dur })
}

fn int_of_scalar(v: &rbag_msg::Value) -> Option<i128> {
    use rbag_msg::Value as V;
    Some(match *v {
        V::I8(x) => x.into(),
        V::U8(x) => x.into(),
        V::I16(x) => x.into(),
        V::U16(x) => x.into(),
        V::I32(x) => x.into(),
        V::U32(x) => x.into(),
        V::I64(x) => x.into(),
        V::U64(x) => x.into(),
        _ => return None,
    })
}

/// A decoded value as an evaluation value.
fn from_ref(v: ValueRef<'_>) -> Val<'_> {
    match v {
        ValueRef::Bool(b) => Val::Bool(b),
        ValueRef::I8(x) => Val::Int(x.into()),
        ValueRef::U8(x) => Val::Int(x.into()),
        ValueRef::I16(x) => Val::Int(x.into()),
        ValueRef::U16(x) => Val::Int(x.into()),
        ValueRef::I32(x) => Val::Int(x.into()),
        ValueRef::U32(x) => Val::Int(x.into()),
        ValueRef::I64(x) => Val::Int(x.into()),
        ValueRef::U64(x) => Val::Int(x.into()),
        ValueRef::F32(x) => Val::Float(x.into()),
        ValueRef::F64(x) => Val::Float(x),
        ValueRef::String(s) => Val::Str(Cow::Borrowed(s)),
        ValueRef::Prims(p) => Val::Prims(p),
        ValueRef::Array(a) => Val::Arr(a),
        ValueRef::Message(m) => time_of(&m).unwrap_or(Val::Msg(m)),
    }
}

/// Python's truth value.
pub(crate) fn truthy(v: &Val) -> bool {
    match v {
        Val::None => false,
        Val::Bool(b) => *b,
        Val::Int(i) => *i != 0,
        Val::Float(f) => *f != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::Time { ns, .. } => *ns != 0,
        Val::Msg(_) | Val::Re => true,
        Val::Arr(a) => !a.is_empty(),
        Val::Prims(p) => !p.is_empty(),
        Val::List(l) => !l.is_empty(),
    }
}

/// A number (bools are ints, as in Python).
#[derive(Clone, Copy)]
enum Num {
    I(i128),
    F(f64),
}

fn num(v: &Val) -> Option<Num> {
    match *v {
        Val::Bool(b) => Some(Num::I(b.into())),
        Val::Int(i) => Some(Num::I(i)),
        Val::Float(f) => Some(Num::F(f)),
        _ => None,
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(f) => f,
    }
}

fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => Some(x.cmp(&y)),
        (x, y) => as_f64(x).partial_cmp(&as_f64(y)),
    }
}

/// The text of a string for messages (lossy if it is not UTF-8).
fn show(s: &[u8]) -> String {
    let s = String::from_utf8_lossy(s);
    if s.chars().count() > 40 {
        format!("{:?}…", s.chars().take(40).collect::<String>())
    } else {
        format!("{s:?}")
    }
}

/// Python's `repr` of a float.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else if f == f.trunc() && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        let s = format!("{f:?}");
        // Rust writes 1e20 as `1e20`; Python as `1e+20`.
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    }
}

/// The number of characters of a Python str (code points; bytes if it is not UTF-8).
fn str_len(s: &[u8]) -> usize {
    match std::str::from_utf8(s) {
        Ok(t) => t.chars().count(),
        Err(_) => s.len(),
    }
}

/// A Python index into `len` items (negative from the end), if it is in range.
fn index_in(i: i128, len: usize) -> Option<usize> {
    let len = len as i128;
    let j = if i < 0 { i + len } else { i };
    (0..len).contains(&j).then_some(j as usize)
}

/// A Python slice `[lo:hi]` of `len` items, clamped.
fn slice_range(lo: Option<i128>, hi: Option<i128>, len: usize) -> (usize, usize) {
    let n = len as i128;
    let fix = |v: i128| if v < 0 { (v + n).max(0) } else { v.min(n) };
    let a = lo.map_or(0, fix);
    let b = hi.map_or(n, fix);
    (a as usize, b.max(a) as usize)
}

/// The character boundaries of a string (one per code point, plus the end).
fn char_bounds(s: &[u8]) -> Option<Vec<usize>> {
    let t = std::str::from_utf8(s).ok()?;
    Some(t.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len())).collect())
}

impl<'e, 'd> Eval<'e, 'd> {
    fn spend(&mut self, units: usize) -> R<()> {
        let units = units as u64;
        if units > self.fuel {
            return Err(Fault::Limit(format!(
                "the expression needs more than {} units of work or memory on one message",
                self.expr.limits.fuel
            )));
        }
        self.fuel -= units;
        Ok(())
    }

    /// Refuses a string or list result larger than the limit, else charges it.
    fn sized(&mut self, bytes: usize, what: &str) -> R<()> {
        if bytes > self.expr.limits.max_value {
            return Err(Fault::Limit(format!("{what} larger than {} bytes", self.expr.limits.max_value)));
        }
        self.spend(bytes)
    }

    fn message(&mut self) -> R<MessageRef<'d>> {
        match std::mem::replace(&mut self.m, LazyM::Absent) {
            LazyM::Ready(m) => {
                self.m = LazyM::Ready(m);
                Ok(m)
            }
            LazyM::Pending { decoders, connection, log_time, data } => {
                let m = decoders.view(connection, log_time, data).map_err(Fault::Decode)?;
                self.m = LazyM::Ready(m);
                Ok(m)
            }
            LazyM::Absent => Err(Fault::Value("no message to read `m` from".into())),
        }
    }

    pub(crate) fn eval(&mut self, n: &Node) -> Result<Val<'d>, EvalFault> {
        self.node(n).map_err(|fault| match fault {
            Fault::Nested(inner) => *inner,
            fault => EvalFault { fault, start: n.start, end: n.end },
        })
    }

    /// Evaluates `n`; faults from inside keep their own position, faults of `n` itself get it.
    fn node(&mut self, n: &Node) -> R<Val<'d>> {
        self.spend(1)?;
        Ok(match &n.kind {
            Kind::Lit(l) => match l {
                Lit::None => Val::None,
                Lit::Bool(b) => Val::Bool(*b),
                Lit::Int(i) => Val::Int(*i),
                Lit::Float(f) => Val::Float(*f),
                Lit::Str(s) => {
                    self.spend(s.len())?;
                    Val::Str(Cow::Owned(s.clone()))
                }
            },
            Kind::Topic => Val::Str(Cow::Borrowed(self.topic.as_bytes())),
            Kind::T => Val::Time { ns: self.log_time.into(), dur: false },
            Kind::M => Val::Msg(self.message()?),
            Kind::Re => Val::Re,
            Kind::Attr(a, name) => {
                let v = self.sub(a)?;
                self.attr(v, name)?
            }
            Kind::Index(a, i) => {
                let v = self.sub(a)?;
                let i = self.sub(i)?;
                self.index(v, i)?
            }
            Kind::Slice(a, lo, hi) => {
                let v = self.sub(a)?;
                let lo = match lo {
                    Some(x) => Some(self.int_arg(x, "a slice bound")?),
                    None => None,
                };
                let hi = match hi {
                    Some(x) => Some(self.int_arg(x, "a slice bound")?),
                    None => None,
                };
                self.slice(v, lo, hi)?
            }
            Kind::Call(f, args) => self.call(*f, args)?,
            Kind::Method(obj, name, args) => {
                let o = self.sub(obj)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.sub(a)?);
                }
                self.method(o, name, vals)?
            }
            Kind::Unary(op, a) => {
                let v = self.sub(a)?;
                unary(*op, v)?
            }
            Kind::Bin(op, a, b) => {
                let x = self.sub(a)?;
                let y = self.sub(b)?;
                self.binary(*op, x, y)?
            }
            Kind::Cmp(first, rest) => {
                let mut left = self.sub(first)?;
                for (op, b) in rest {
                    let right = self.sub(b)?;
                    if !self.compare(*op, &left, &right)? {
                        return Ok(Val::Bool(false));
                    }
                    left = right;
                }
                Val::Bool(true)
            }
            Kind::And(a, b) => {
                let x = self.sub(a)?;
                if !truthy(&x) {
                    x
                } else {
                    self.sub(b)?
                }
            }
            Kind::Or(a, b) => {
                let x = self.sub(a)?;
                if truthy(&x) {
                    x
                } else {
                    self.sub(b)?
                }
            }
            Kind::Not(a) => Val::Bool(!truthy(&self.sub(a)?)),
            Kind::IfElse(c, a, b) => {
                if truthy(&self.sub(c)?) {
                    self.sub(a)?
                } else {
                    self.sub(b)?
                }
            }
            Kind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.sub(i)?);
                }
                self.spend(out.len() * std::mem::size_of::<Val>())?;
                Val::List(out)
            }
        })
    }

    /// A child node's value; a fault in it is re-raised as this node's unless it already has a
    /// position (see [`Eval::eval`]).
    fn sub(&mut self, n: &Node) -> R<Val<'d>> {
        match self.eval(n) {
            Ok(v) => Ok(v),
            Err(f) => Err(Fault::Nested(Box::new(f))),
        }
    }

    fn int_arg(&mut self, n: &Node, what: &str) -> R<i128> {
        match self.sub(n)? {
            Val::Int(i) => Ok(i),
            Val::Bool(b) => Ok(b.into()),
            v => Err(Fault::Type(format!("{what} must be an int, not {}", type_name(&v)))),
        }
    }

    fn attr(&mut self, v: Val<'d>, name: &str) -> R<Val<'d>> {
        match v {
            Val::Msg(m) => {
                if let Some(f) = m.field(name) {
                    return Ok(from_ref(f));
                }
                if name == "_type" {
                    return Ok(Val::Str(Cow::Owned(m.type_name().as_bytes().to_vec())));
                }
                let all = &m.layout().fields;
                let mut fields = all.iter().take(16).map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ");
                if all.len() > 16 {
                    fields.push_str(&format!(", … {} more", all.len() - 16));
                }
                Err(Fault::Field { ty: m.type_name().to_string(), field: name.to_string(), fields })
            }
            Val::Time { ns, .. } => match name {
                "secs" => Ok(Val::Int(ns.div_euclid(NS))),
                "nsecs" => Ok(Val::Int(ns.rem_euclid(NS))),
                _ => Err(Fault::Type(format!(
                    "a {} has no attribute {name} (it has secs, nsecs, to_sec(), to_nsec(), is_zero())",
                    type_name(&v)
                ))),
            },
            other => Err(Fault::Type(format!("a {} has no attribute {name}", type_name(&other)))),
        }
    }

    fn index(&mut self, v: Val<'d>, i: Val<'d>) -> R<Val<'d>> {
        let i = match i {
            Val::Int(i) => i,
            Val::Bool(b) => b.into(),
            other => {
                return Err(Fault::Type(format!("indices must be integers, not {}", type_name(&other))));
            }
        };
        let out_of_range = |len: usize| Fault::Index(format!("index {i} is out of range (the length is {len})"));
        match v {
            Val::Arr(a) => {
                index_in(i, a.len()).and_then(|j| a.get(j)).map(from_ref).ok_or_else(|| out_of_range(a.len()))
            }
            Val::Prims(p) => {
                index_in(i, p.len()).and_then(|j| p.get(j)).map(from_ref).ok_or_else(|| out_of_range(p.len()))
            }
            Val::List(mut l) => {
                let n = l.len();
                index_in(i, n).map(|j| l.swap_remove(j)).ok_or_else(|| out_of_range(n))
            }
            Val::Str(s) => match char_bounds(&s) {
                Some(b) => {
                    let n = b.len() - 1;
                    let j = index_in(i, n).ok_or_else(|| out_of_range(n))?;
                    Ok(Val::Str(Cow::Owned(s[b[j]..b[j + 1]].to_vec())))
                }
                None => {
                    let j = index_in(i, s.len()).ok_or_else(|| out_of_range(s.len()))?;
                    Ok(Val::Str(Cow::Owned(vec![s[j]])))
                }
            },
            other => Err(Fault::Type(format!("a {} cannot be indexed", type_name(&other)))),
        }
    }

    fn slice(&mut self, v: Val<'d>, lo: Option<i128>, hi: Option<i128>) -> R<Val<'d>> {
        match v {
            Val::Prims(p) => {
                let (a, b) = slice_range(lo, hi, p.len());
                let n = p.prim.size();
                Ok(Val::Prims(Prims { prim: p.prim, le: &p.le[a * n..b * n] }))
            }
            Val::Arr(arr) => {
                let (a, b) = slice_range(lo, hi, arr.len());
                self.spend((b - a) * std::mem::size_of::<Val>())?;
                Ok(Val::List((a..b).filter_map(|j| arr.get(j)).map(from_ref).collect()))
            }
            Val::List(mut l) => {
                let (a, b) = slice_range(lo, hi, l.len());
                l.truncate(b);
                l.drain(..a);
                Ok(Val::List(l))
            }
            Val::Str(s) => {
                let out = match char_bounds(&s) {
                    Some(bounds) => {
                        let (a, b) = slice_range(lo, hi, bounds.len() - 1);
                        s[bounds[a]..bounds[b]].to_vec()
                    }
                    None => {
                        let (a, b) = slice_range(lo, hi, s.len());
                        s[a..b].to_vec()
                    }
                };
                self.spend(out.len())?;
                Ok(Val::Str(Cow::Owned(out)))
            }
            other => Err(Fault::Type(format!("a {} cannot be sliced", type_name(&other)))),
        }
    }

    /// The items of an iterable, charged to the budget.
    fn items(&mut self, v: Val<'d>) -> R<Vec<Val<'d>>> {
        let n = match &v {
            Val::Arr(a) => a.len(),
            Val::Prims(p) => p.len(),
            Val::List(l) => l.len(),
            Val::Str(s) => s.len(),
            other => return Err(Fault::Type(format!("a {} is not iterable", type_name(other)))),
        };
        self.spend(n.saturating_mul(std::mem::size_of::<Val>()))?;
        Ok(match v {
            Val::Arr(a) => a.iter().map(from_ref).collect(),
            Val::Prims(p) => p.iter().map(from_ref).collect(),
            Val::List(l) => l,
            Val::Str(s) => match std::str::from_utf8(&s) {
                Ok(t) => t.chars().map(|c| Val::Str(Cow::Owned(c.to_string().into_bytes()))).collect(),
                Err(_) => s.iter().map(|&b| Val::Str(Cow::Owned(vec![b]))).collect(),
            },
            _ => Vec::new(),
        })
    }

    fn call(&mut self, f: Builtin, args: &[Node]) -> R<Val<'d>> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.sub(a)?);
        }
        let name = format!("{f:?}").to_lowercase();
        let arity = |n: std::ops::RangeInclusive<usize>| -> R<()> {
            if n.contains(&vals.len()) {
                Ok(())
            } else if n.start() == n.end() {
                Err(Fault::Type(format!("{name}() takes {} argument(s), {} given", n.start(), vals.len())))
            } else {
                Err(Fault::Type(format!("{name}() takes {} to {} arguments, {} given", n.start(), n.end(), vals.len())))
            }
        };
        match f {
            Builtin::Len => {
                arity(1..=1)?;
                let n = match &vals[0] {
                    Val::Str(s) => str_len(s),
                    Val::Arr(a) => a.len(),
                    Val::Prims(p) => p.len(),
                    Val::List(l) => l.len(),
                    other => return Err(Fault::Type(format!("a {} has no len()", type_name(other)))),
                };
                Ok(Val::Int(n as i128))
            }
            Builtin::Abs => {
                arity(1..=1)?;
                match num(&vals[0]) {
                    Some(Num::I(i)) => Ok(Val::Int(i.checked_abs().ok_or_else(overflow)?)),
                    Some(Num::F(x)) => Ok(Val::Float(x.abs())),
                    None => match vals[0] {
                        Val::Time { ns, dur: true } => Ok(Val::Time { ns: ns.abs(), dur: true }),
                        ref other => Err(Fault::Type(format!("bad operand type for abs(): {}", type_name(other)))),
                    },
                }
            }
            Builtin::Min | Builtin::Max => {
                if vals.is_empty() {
                    return Err(Fault::Type(format!("{name}() expected at least 1 argument, got 0")));
                }
                let items = if vals.len() == 1 { self.items(vals.remove(0))? } else { vals };
                let mut best: Option<Val<'d>> = None;
                for v in items {
                    best = Some(match best {
                        None => v,
                        Some(b) => {
                            let better = if f == Builtin::Min {
                                self.compare(CmpOp::Lt, &v, &b)?
                            } else {
                                self.compare(CmpOp::Gt, &v, &b)?
                            };
                            if better {
                                v
                            } else {
                                b
                            }
                        }
                    });
                }
                best.ok_or_else(|| Fault::Value(format!("{name}() arg is an empty sequence")))
            }
            Builtin::Int => {
                arity(1..=1)?;
                match &vals[0] {
                    Val::Bool(b) => Ok(Val::Int((*b).into())),
                    Val::Int(i) => Ok(Val::Int(*i)),
                    Val::Float(x) if x.is_finite() && x.abs() < 1.7e38 => Ok(Val::Int(x.trunc() as i128)),
                    Val::Float(x) => Err(Fault::Value(format!("cannot convert float {} to integer", float_text(*x)))),
                    Val::Str(s) => {
                        let t = String::from_utf8_lossy(s);
                        let t = t.trim().replace('_', "");
                        t.parse::<i128>()
                            .map(Val::Int)
                            .map_err(|_| Fault::Value(format!("invalid literal for int() with base 10: {}", show(s))))
                    }
                    other => Err(Fault::Type(format!(
                        "int() argument must be a string or a number, not {}",
                        type_name(other)
                    ))),
                }
            }
            Builtin::Float => {
                arity(1..=1)?;
                match &vals[0] {
                    Val::Str(s) => {
                        let t = String::from_utf8_lossy(s);
                        let t = t.trim().to_ascii_lowercase();
                        let t = t.strip_prefix('+').unwrap_or(&t);
                        let v = match t {
                            "inf" | "infinity" => Some(f64::INFINITY),
                            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
                            "nan" | "-nan" => Some(f64::NAN),
                            _ => t.parse::<f64>().ok(),
                        };
                        v.map(Val::Float)
                            .ok_or_else(|| Fault::Value(format!("could not convert string to float: {}", show(s))))
                    }
                    other => match num(other) {
                        Some(n) => Ok(Val::Float(as_f64(n))),
                        None => Err(Fault::Type(format!(
                            "float() argument must be a string or a number, not {}",
                            type_name(other)
                        ))),
                    },
                }
            }
            Builtin::Str => {
                arity(1..=1)?;
                let s = match &vals[0] {
                    Val::None => "None".to_string(),
                    Val::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                    Val::Int(i) => i.to_string(),
                    Val::Float(x) => float_text(*x),
                    Val::Str(s) => return Ok(Val::Str(s.clone())),
                    Val::Time { ns, .. } => ns.to_string(),
                    other => return Err(Fault::Type(format!("str() of a {} is not supported", type_name(other)))),
                };
                Ok(Val::Str(Cow::Owned(s.into_bytes())))
            }
            Builtin::Bool => {
                arity(0..=1)?;
                Ok(Val::Bool(vals.first().is_some_and(truthy)))
            }
            Builtin::Round => {
                arity(1..=2)?;
                let digits = match vals.get(1) {
                    None | Some(Val::None) => None,
                    Some(Val::Int(d)) => Some(*d),
                    Some(other) => {
                        return Err(Fault::Type(format!("round() digits must be an int, not {}", type_name(other))))
                    }
                };
                match (num(&vals[0]), digits) {
                    (Some(Num::I(i)), _) => Ok(Val::Int(i)),
                    (Some(Num::F(x)), None) if x.is_finite() && x.abs() < 1.7e38 => {
                        Ok(Val::Int(x.round_ties_even() as i128))
                    }
                    (Some(Num::F(x)), None) => {
                        Err(Fault::Value(format!("cannot round {} to an integer", float_text(x))))
                    }
                    (Some(Num::F(x)), Some(d)) => {
                        let d = d.clamp(-308, 308) as i32;
                        let p = 10f64.powi(d);
                        let r = (x * p).round_ties_even() / p;
                        Ok(Val::Float(if r.is_finite() { r } else { x }))
                    }
                    (None, _) => Err(Fault::Type(format!("type {} cannot be rounded", type_name(&vals[0])))),
                }
            }
            Builtin::Sum => {
                arity(1..=2)?;
                let start = vals.get(1).cloned().unwrap_or(Val::Int(0));
                let items = self.items(vals.swap_remove(0))?;
                let mut acc = start;
                for v in items {
                    acc = self.binary(BinOp::Add, acc, v)?;
                }
                Ok(acc)
            }
            Builtin::Any | Builtin::All => {
                arity(1..=1)?;
                let items = self.items(vals.remove(0))?;
                let want = f == Builtin::Any;
                Ok(Val::Bool(if want { items.iter().any(truthy) } else { items.iter().all(truthy) }))
            }
            Builtin::Import => {
                arity(1..=1)?;
                match &vals[0] {
                    Val::Str(s) if &s[..] == b"re" => Ok(Val::Re),
                    Val::Str(s) => Err(Fault::Value(format!("only the re module can be imported, not {}", show(s)))),
                    other => Err(Fault::Type(format!("__import__() argument must be a str, not {}", type_name(other)))),
                }
            }
        }
    }

    /// Whether the pattern matches `hay`. Regexes are used in place, not cloned (a clone of a
    /// `regex::Regex` gets a new cache pool).
    fn is_match(&mut self, pattern: &[u8], anchor: Anchor, hay: &[u8]) -> R<bool> {
        self.spend(hay.len())?;
        let expr = self.expr;
        if let Some(r) = expr.regexes.get(&anchor).and_then(|m| m.get(pattern)) {
            return Ok(r.is_match(hay));
        }
        if let Some(r) = self.cache.map.get(&anchor).and_then(|m| m.get(pattern)) {
            return Ok(r.is_match(hay));
        }
        self.spend(pattern.len() * 64)?;
        let r = super::build_regex(pattern, anchor, &expr.limits).map_err(Fault::Value)?;
        let hit = r.is_match(hay);
        if self.cache.len >= 64 {
            self.cache.map.clear();
            self.cache.len = 0;
        }
        self.cache.len += 1;
        self.cache.map.entry(anchor).or_default().insert(pattern.to_vec(), r);
        Ok(hit)
    }

    /// Whether `hay` contains `needle`, in linear time.
    fn contains(&mut self, hay: &[u8], needle: &[u8]) -> R<bool> {
        if needle.is_empty() {
            return Ok(true);
        }
        match (std::str::from_utf8(hay), std::str::from_utf8(needle)) {
            (Ok(h), Ok(n)) => Ok(h.contains(n)),
            // Bytes that are not UTF-8: the regex crate's substring search.
            _ => self.is_match(needle, Anchor::Literal, hay),
        }
    }

    fn method(&mut self, obj: Val<'d>, name: &str, args: Vec<Val<'d>>) -> R<Val<'d>> {
        let argc = |n: usize| -> R<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(Fault::Type(format!("{name}() takes {n} argument(s), {} given", args.len())))
            }
        };
        match obj {
            Val::Re => {
                let anchor = match name {
                    "match" => Anchor::Start,
                    "search" => Anchor::None,
                    "fullmatch" => Anchor::Both,
                    _ => {
                        return Err(Fault::Type(format!(
                            "re.{name} is not supported (re.match, re.search and re.fullmatch are)"
                        )))
                    }
                };
                argc(2)?;
                let (Val::Str(p), Val::Str(s)) = (&args[0], &args[1]) else {
                    return Err(Fault::Type(format!(
                        "re.{name}() takes a pattern and a str, not {} and {}",
                        type_name(&args[0]),
                        type_name(&args[1])
                    )));
                };
                Ok(if self.is_match(p, anchor, s)? { Val::Bool(true) } else { Val::None })
            }
            Val::Time { ns, dur } => {
                argc(0)?;
                match name {
                    "to_sec" => Ok(Val::Float(ns.div_euclid(NS) as f64 + ns.rem_euclid(NS) as f64 / 1e9)),
                    "to_nsec" => Ok(Val::Int(ns)),
                    "is_zero" => Ok(Val::Bool(ns == 0)),
                    _ => Err(Fault::Type(format!(
                        "a {} has no method {name} (it has to_sec(), to_nsec(), is_zero())",
                        if dur { "Duration" } else { "Time" }
                    ))),
                }
            }
            Val::Str(s) => self.str_method(s, name, args),
            Val::Arr(_) | Val::Prims(_) | Val::List(_) if matches!(name, "count" | "index") => {
                argc(1)?;
                let want = &args[0];
                let items = self.items(obj)?;
                let mut count = 0;
                for (i, v) in items.iter().enumerate() {
                    if self.equal(v, want)? {
                        if name == "index" {
                            return Ok(Val::Int(i as i128));
                        }
                        count += 1;
                    }
                }
                if name == "index" {
                    return Err(Fault::Value("index(x): x not in the list".into()));
                }
                Ok(Val::Int(count))
            }
            other => Err(Fault::Type(format!("a {} has no method {name}", type_name(&other)))),
        }
    }

    fn str_method(&mut self, s: Cow<'d, [u8]>, name: &str, args: Vec<Val<'d>>) -> R<Val<'d>> {
        let str_arg = |i: usize| -> R<&[u8]> {
            match args.get(i) {
                Some(Val::Str(a)) => Ok(a),
                Some(other) => Err(Fault::Type(format!("{name}() argument must be a str, not {}", type_name(other)))),
                None => Err(Fault::Type(format!("{name}() takes at least {} argument(s)", i + 1))),
            }
        };
        let max = |n: usize| -> R<()> {
            if args.len() > n {
                return Err(Fault::Type(format!("{name}() takes at most {n} argument(s), {} given", args.len())));
            }
            Ok(())
        };
        self.spend(s.len())?;
        match name {
            "startswith" | "endswith" => {
                max(1)?;
                let affixes: Vec<&[u8]> = match args.first() {
                    Some(Val::Str(a)) => vec![a],
                    Some(Val::List(l)) => l
                        .iter()
                        .map(|v| match v {
                            Val::Str(a) => Ok(&a[..]),
                            other => Err(Fault::Type(format!("{name}() takes str items, not {}", type_name(other)))),
                        })
                        .collect::<R<_>>()?,
                    Some(other) => {
                        return Err(Fault::Type(format!("{name}() argument must be a str or a tuple of str, not {}", type_name(other))))
                    }
                    None => return Err(Fault::Type(format!("{name}() takes 1 argument, 0 given"))),
                };
                let hit = affixes.iter().any(|a| if name == "startswith" { s.starts_with(a) } else { s.ends_with(a) });
                Ok(Val::Bool(hit))
            }
            "lower" | "upper" => {
                max(0)?;
                let t = String::from_utf8_lossy(&s);
                let out = if name == "lower" { t.to_lowercase() } else { t.to_uppercase() };
                self.sized(out.len(), "a string")?;
                Ok(Val::Str(Cow::Owned(out.into_bytes())))
            }
            "strip" | "lstrip" | "rstrip" => {
                max(1)?;
                let set: Vec<u8> = match args.first() {
                    None | Some(Val::None) => b" \t\n\r\x0b\x0c".to_vec(),
                    Some(_) => str_arg(0)?.to_vec(),
                };
                let mut a = 0;
                let mut b = s.len();
                if name != "rstrip" {
                    while a < b && set.contains(&s[a]) {
                        a += 1;
                    }
                }
                if name != "lstrip" {
                    while b > a && set.contains(&s[b - 1]) {
                        b -= 1;
                    }
                }
                Ok(Val::Str(match s {
                    Cow::Borrowed(x) => Cow::Borrowed(&x[a..b]),
                    Cow::Owned(x) => Cow::Owned(x[a..b].to_vec()),
                }))
            }
            "find" | "count" => {
                max(1)?;
                let needle = str_arg(0)?;
                self.spend(needle.len())?;
                let (hay, pat) = (String::from_utf8_lossy(&s), String::from_utf8_lossy(needle));
                if name == "count" {
                    let n = if pat.is_empty() { hay.chars().count() + 1 } else { hay.matches(&*pat).count() };
                    return Ok(Val::Int(n as i128));
                }
                Ok(Val::Int(match hay.find(&*pat) {
                    Some(i) => hay[..i].chars().count() as i128,
                    None => -1,
                }))
            }
            "split" => {
                max(1)?;
                let t = String::from_utf8_lossy(&s).into_owned();
                let parts: Vec<String> = match args.first() {
                    None | Some(Val::None) => t.split_whitespace().map(str::to_string).collect(),
                    Some(_) => {
                        let sep = String::from_utf8_lossy(str_arg(0)?).into_owned();
                        if sep.is_empty() {
                            return Err(Fault::Value("empty separator".into()));
                        }
                        t.split(&*sep).map(str::to_string).collect()
                    }
                };
                self.sized(t.len() + parts.len() * std::mem::size_of::<Val>(), "a list")?;
                Ok(Val::List(parts.into_iter().map(|p| Val::Str(Cow::Owned(p.into_bytes()))).collect()))
            }
            "replace" => {
                max(2)?;
                let (old, new) = (str_arg(0)?, str_arg(1)?);
                let t = String::from_utf8_lossy(&s);
                let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
                let n = if old.is_empty() { t.chars().count() + 1 } else { t.matches(&*old).count() };
                let size = t.len().saturating_add(n.saturating_mul(new.len()));
                self.sized(size, "a string")?;
                Ok(Val::Str(Cow::Owned(t.replace(&*old, &new).into_bytes())))
            }
            "isdigit" | "isalpha" | "isalnum" | "isspace" | "islower" | "isupper" => {
                max(0)?;
                let t = String::from_utf8_lossy(&s);
                let all = |f: fn(char) -> bool| !t.is_empty() && t.chars().all(f);
                Ok(Val::Bool(match name {
                    "isdigit" => all(|c| c.is_numeric()),
                    "isalpha" => all(char::is_alphabetic),
                    "isalnum" => all(char::is_alphanumeric),
                    "isspace" => all(char::is_whitespace),
                    "islower" => t.chars().any(char::is_lowercase) && !t.chars().any(char::is_uppercase),
                    _ => t.chars().any(char::is_uppercase) && !t.chars().any(char::is_lowercase),
                }))
            }
            _ => Err(Fault::Type(format!(
                "a str has no method {name} (there are startswith, endswith, lower, upper, strip, lstrip, rstrip, find, count, split, replace, isdigit, isalpha, isalnum, isspace, islower, isupper)"
            ))),
        }
    }

    fn binary(&mut self, op: BinOp, x: Val<'d>, y: Val<'d>) -> R<Val<'d>> {
        if let (Some(a), Some(b)) = (num(&x), num(&y)) {
            return arith(op, a, b);
        }
        let mismatch = |x: &Val, y: &Val| {
            Fault::Type(format!("unsupported operand types for {}: {} and {}", op_text(op), type_name(x), type_name(y)))
        };
        match (op, &x, &y) {
            (BinOp::Add, Val::Str(a), Val::Str(b)) => {
                self.sized(a.len() + b.len(), "a string")?;
                let mut out = a.to_vec();
                out.extend_from_slice(b);
                Ok(Val::Str(Cow::Owned(out)))
            }
            (BinOp::Mul, Val::Str(s), n) | (BinOp::Mul, n, Val::Str(s)) if num(n).is_some() => {
                let Some(Num::I(k)) = num(n) else {
                    return Err(Fault::Type("a str can only be repeated an int number of times".into()));
                };
                let k = k.max(0);
                let size = (s.len() as i128).saturating_mul(k);
                if size > self.expr.limits.max_value as i128 {
                    return Err(Fault::Limit(format!(
                        "a string larger than {} bytes ({} × {k})",
                        self.expr.limits.max_value,
                        s.len()
                    )));
                }
                self.sized(size as usize, "a string")?;
                Ok(Val::Str(Cow::Owned(s.repeat(k as usize))))
            }
            (BinOp::Add, Val::List(_) | Val::Arr(_), Val::List(_) | Val::Arr(_)) => {
                let mut a = self.items(x)?;
                let b = self.items(y)?;
                self.sized((a.len() + b.len()) * std::mem::size_of::<Val>(), "a list")?;
                a.extend(b);
                Ok(Val::List(a))
            }
            (BinOp::Mod, Val::Str(_), _) => Err(Fault::Type("string formatting with % is not supported".into())),
            (BinOp::Add | BinOp::Sub, Val::Time { ns: a, dur: da }, Val::Time { ns: b, dur: db }) => {
                let (a, b, da, db) = (*a, *b, *da, *db);
                match (op, da, db) {
                    (BinOp::Add, false, true) | (BinOp::Add, true, false) => Ok(Val::Time { ns: a + b, dur: false }),
                    (BinOp::Add, true, true) => Ok(Val::Time { ns: a + b, dur: true }),
                    (BinOp::Sub, false, false) => Ok(Val::Time { ns: a - b, dur: true }),
                    (BinOp::Sub, false, true) => Ok(Val::Time { ns: a - b, dur: false }),
                    (BinOp::Sub, true, true) => Ok(Val::Time { ns: a - b, dur: true }),
                    _ => Err(mismatch(&x, &y)),
                }
            }
            _ => Err(mismatch(&x, &y)),
        }
    }

    /// Python's `==`.
    fn equal(&mut self, x: &Val<'d>, y: &Val<'d>) -> R<bool> {
        self.spend(1)?;
        if let (Some(a), Some(b)) = (num(x), num(y)) {
            return Ok(cmp_num(a, b) == Some(Ordering::Equal));
        }
        Ok(match (x, y) {
            (Val::None, Val::None) => true,
            (Val::Str(a), Val::Str(b)) => {
                self.spend(a.len().min(b.len()))?;
                a == b
            }
            (Val::Time { ns: a, dur: da }, Val::Time { ns: b, dur: db }) => a == b && da == db,
            (Val::Msg(a), Val::Msg(b)) => {
                if a.type_name() != b.type_name() {
                    return Ok(false);
                }
                for ((_, u), (_, v)) in a.fields().zip(b.fields()) {
                    if !self.equal(&from_ref(u), &from_ref(v))? {
                        return Ok(false);
                    }
                }
                true
            }
            (Val::Prims(a), Val::Prims(b)) if a.prim == b.prim => {
                self.spend(a.le.len())?;
                a.le == b.le
            }
            (Val::Arr(_) | Val::Prims(_) | Val::List(_), Val::Arr(_) | Val::Prims(_) | Val::List(_)) => {
                let a = self.items(x.clone())?;
                let b = self.items(y.clone())?;
                if a.len() != b.len() {
                    return Ok(false);
                }
                for (u, v) in a.iter().zip(&b) {
                    if !self.equal(u, v)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Val::Re, Val::Re) => true,
            _ => false,
        })
    }

    /// Python's ordering, for `<`, `min` and `max`.
    fn order(&mut self, x: &Val<'d>, y: &Val<'d>, op: CmpOp) -> R<Option<Ordering>> {
        if let (Some(a), Some(b)) = (num(x), num(y)) {
            return Ok(cmp_num(a, b));
        }
        match (x, y) {
            (Val::Str(a), Val::Str(b)) => {
                self.spend(a.len().min(b.len()))?;
                Ok(Some(a.cmp(b)))
            }
            (Val::Time { ns: a, dur: da }, Val::Time { ns: b, dur: db }) if da == db => Ok(Some(a.cmp(b))),
            _ => {
                let hint = if matches!(x, Val::Time { .. }) || matches!(y, Val::Time { .. }) {
                    " (compare t.to_sec() or t.to_nsec() with numbers)"
                } else {
                    ""
                };
                Err(Fault::Type(format!(
                    "'{}' is not supported between {} and {}{hint}",
                    cmp_text(op),
                    type_name(x),
                    type_name(y)
                )))
            }
        }
    }

    fn compare(&mut self, op: CmpOp, x: &Val<'d>, y: &Val<'d>) -> R<bool> {
        Ok(match op {
            CmpOp::Eq => self.equal(x, y)?,
            CmpOp::Ne => !self.equal(x, y)?,
            CmpOp::Lt => self.order(x, y, op)? == Some(Ordering::Less),
            CmpOp::Le => matches!(self.order(x, y, op)?, Some(Ordering::Less | Ordering::Equal)),
            CmpOp::Gt => self.order(x, y, op)? == Some(Ordering::Greater),
            CmpOp::Ge => matches!(self.order(x, y, op)?, Some(Ordering::Greater | Ordering::Equal)),
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (x, y) {
                    (Val::None, Val::None) => true,
                    (Val::Bool(a), Val::Bool(b)) => a == b,
                    (Val::None, _) | (_, Val::None) | (Val::Bool(_), _) | (_, Val::Bool(_)) => false,
                    _ => {
                        return Err(Fault::Type(
                            "`is` compares only with None, True and False (use == for values)".into(),
                        ))
                    }
                };
                same == (op == CmpOp::Is)
            }
            CmpOp::In | CmpOp::NotIn => {
                let found = match (x, y) {
                    (Val::Str(a), Val::Str(b)) => {
                        self.spend(a.len() + b.len())?;
                        self.contains(b, a)?
                    }
                    (_, Val::Str(_)) => {
                        return Err(Fault::Type(format!("'in <str>' requires a str on the left, not {}", type_name(x))))
                    }
                    (_, Val::Arr(_) | Val::Prims(_) | Val::List(_)) => {
                        let items = self.items(y.clone())?;
                        let mut found = false;
                        for v in &items {
                            if self.equal(x, v)? {
                                found = true;
                                break;
                            }
                        }
                        found
                    }
                    _ => return Err(Fault::Type(format!("a {} does not support `in`", type_name(y)))),
                };
                found == (op == CmpOp::In)
            }
        })
    }
}

fn overflow() -> Fault {
    Fault::Limit("an integer result beyond ±2**127".into())
}

fn op_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "**",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
    }
}

fn cmp_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        _ => "==",
    }
}

fn unary<'d>(op: UnOp, v: Val<'d>) -> R<Val<'d>> {
    match (op, num(&v), &v) {
        (UnOp::Neg, Some(Num::I(i)), _) => Ok(Val::Int(i.checked_neg().ok_or_else(overflow)?)),
        (UnOp::Neg, Some(Num::F(x)), _) => Ok(Val::Float(-x)),
        (UnOp::Pos, Some(Num::I(i)), _) => Ok(Val::Int(i)),
        (UnOp::Pos, Some(Num::F(x)), _) => Ok(Val::Float(x)),
        (UnOp::Invert, Some(Num::I(i)), _) => Ok(Val::Int(!i)),
        (UnOp::Neg, None, Val::Time { ns, dur: true }) => Ok(Val::Time { ns: -ns, dur: true }),
        _ => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Pos => "+",
                UnOp::Invert => "~",
            };
            Err(Fault::Type(format!("bad operand type for unary {sym}: {}", type_name(&v))))
        }
    }
}

/// Arithmetic on numbers, as Python does it: exact on ints (an error past ±2**127), true
/// division to float, floor division and modulo rounding towards negative infinity.
fn arith<'d>(op: BinOp, a: Num, b: Num) -> R<Val<'d>> {
    let zero = || Fault::Value("division by zero".into());
    if let (Num::I(x), Num::I(y)) = (a, b) {
        return Ok(match op {
            BinOp::Add => Val::Int(x.checked_add(y).ok_or_else(overflow)?),
            BinOp::Sub => Val::Int(x.checked_sub(y).ok_or_else(overflow)?),
            BinOp::Mul => Val::Int(x.checked_mul(y).ok_or_else(overflow)?),
            BinOp::Div => {
                if y == 0 {
                    return Err(zero());
                }
                Val::Float(x as f64 / y as f64)
            }
            BinOp::FloorDiv => {
                if y == 0 {
                    return Err(zero());
                }
                Val::Int(
                    x.checked_div_euclid(y)
                        .map(|q| if y < 0 && x.rem_euclid(y) != 0 { q - 1 } else { q })
                        .ok_or_else(overflow)?,
                )
            }
            BinOp::Mod => {
                if y == 0 {
                    return Err(zero());
                }
                let r = x.checked_rem(y).ok_or_else(overflow)?;
                Val::Int(if r != 0 && (r < 0) != (y < 0) { r + y } else { r })
            }
            BinOp::Pow => {
                if y < 0 {
                    Val::Float((x as f64).powf(y as f64))
                } else {
                    let e = u32::try_from(y).map_err(|_| overflow())?;
                    Val::Int(x.checked_pow(e).ok_or_else(overflow)?)
                }
            }
            BinOp::BitAnd => Val::Int(x & y),
            BinOp::BitOr => Val::Int(x | y),
            BinOp::BitXor => Val::Int(x ^ y),
            BinOp::Shl => {
                let s = u32::try_from(y).map_err(|_| Fault::Value("negative or huge shift count".into()))?;
                let r = x.checked_shl(s).filter(|r| r >> s == x).ok_or_else(overflow)?;
                Val::Int(r)
            }
            BinOp::Shr => {
                let s = u32::try_from(y).map_err(|_| Fault::Value("negative shift count".into()))?;
                Val::Int(x >> s.min(127))
            }
        });
    }
    let (x, y) = (as_f64(a), as_f64(b));
    Ok(Val::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(zero());
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(zero());
            }
            (x / y).floor()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return Err(zero());
            }
            let r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) {
                r + y
            } else {
                r
            }
        }
        BinOp::Pow => x.powf(y),
        _ => return Err(Fault::Type(format!("unsupported operand type(s) for {}: float", op_text(op)))),
    }))
}
