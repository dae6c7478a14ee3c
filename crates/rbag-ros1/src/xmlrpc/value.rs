//! XML-RPC values: a pull parser on quick-xml, and a writer.
//!
//! An untyped `<value>text</value>` is a string (roscpp sends strings that way), and an empty
//! `<value></value>` or `<value/>` is the empty string.

use quick_xml::events::{BytesRef, Event};
use quick_xml::Reader;

use super::Error;

/// Nesting deeper than this is refused: ROS parameters are a few levels deep.
const MAX_DEPTH: usize = 64;

/// One XML-RPC value. Struct members keep their order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `<i4>`/`<int>`.
    Int(i32),
    /// `<boolean>`.
    Bool(bool),
    /// `<string>` (or untyped text).
    Str(String),
    /// `<double>`.
    Double(f64),
    /// The base64 text as sent; ROS never decodes it.
    Base64(String),
    /// `<dateTime.iso8601>`, as sent.
    DateTime(String),
    /// `<array>`.
    Array(Vec<Value>),
    /// `<struct>`, members in order.
    Struct(Vec<(String, Value)>),
    /// `<nil/>`.
    Nil,
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_i32(&self) -> Option<i32> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is a double or an integer.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Double(d) => Some(*d),
            Value::Int(i) => Some(f64::from(*i)),
            _ => None,
        }
    }

    /// The members, if this is a struct.
    pub fn as_struct(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Struct(m) => Some(m),
            _ => None,
        }
    }

    /// The last member named `name`, if this is a struct that has one (a duplicated name
    /// means the last, as Python's `dict` reads it).
    pub fn member(&self, name: &str) -> Option<&Value> {
        self.as_struct()?.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Self {
        Value::Int(i)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Self {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

/// A parsed XML-RPC body.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A `methodCall`.
    Call {
        /// The method name.
        method: String,
        /// Its parameters.
        params: Vec<Value>,
    },
    /// A `methodResponse` with a value.
    Response(Value),
    /// The fault value: a struct with `faultCode` and `faultString`.
    Fault(Value),
}

type R<T> = Result<T, Error>;

fn bad<T>(msg: impl Into<String>) -> R<T> {
    Err(Error::Parse(msg.into()))
}

fn xml_err(e: impl std::fmt::Display) -> Error {
    Error::Parse(e.to_string())
}

struct Parser<'a> {
    r: Reader<&'a [u8]>,
    depth: usize,
}

fn push_ref(s: &mut String, r: BytesRef<'_>) -> R<()> {
    if let Some(c) = r.resolve_char_ref().map_err(xml_err)? {
        s.push(c);
        return Ok(());
    }
    match &*r.into_inner() {
        "lt" => s.push('<'),
        "gt" => s.push('>'),
        "amp" => s.push('&'),
        "quot" => s.push('"'),
        "apos" => s.push('\''),
        n => return bad(format!("unknown entity &{n};")),
    }
    Ok(())
}

/// Only the four XML whitespace characters separate markup (not Unicode spaces).
fn is_xml_space(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

fn name_of(e: &Event<'_>) -> String {
    match e {
        Event::Start(s) | Event::Empty(s) => format!("<{}>", s.name().as_ref()),
        Event::End(s) => format!("</{}>", s.name().as_ref()),
        Event::Eof => "the end of the body".into(),
        Event::Text(_) | Event::GeneralRef(_) | Event::CData(_) => "text".into(),
        _ => "markup".into(),
    }
}

impl<'a> Parser<'a> {
    fn raw(&mut self) -> R<Event<'a>> {
        self.r.read_event().map_err(|e| Error::Parse(format!("at byte {}: {e}", self.r.buffer_position())))
    }

    /// The next event that is not a declaration, comment or whitespace.
    fn next(&mut self) -> R<Event<'a>> {
        loop {
            match self.raw()? {
                Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => continue,
                Event::Text(t) if is_xml_space(&t) => continue,
                e => return Ok(e),
            }
        }
    }

    /// Text up to the closing tag, entities resolved.
    fn text_until_end(&mut self) -> R<String> {
        let mut s = String::new();
        loop {
            match self.raw()? {
                Event::Text(t) => s.push_str(&t.xml10_content()),
                Event::GeneralRef(r) => push_ref(&mut s, r)?,
                Event::CData(t) => s.push_str(&t.xml10_content()),
                Event::Comment(_) => {}
                Event::End(_) => return Ok(s),
                e => return bad(format!("expected text, found {}", name_of(&e))),
            }
        }
    }

    fn start(&mut self, name: &str) -> R<()> {
        match self.next()? {
            Event::Start(s) if s.name().as_ref() == name => Ok(()),
            e => bad(format!("expected <{name}>, found {}", name_of(&e))),
        }
    }

    fn end(&mut self) -> R<()> {
        match self.next()? {
            Event::End(_) => Ok(()),
            e => bad(format!("expected a closing tag, found {}", name_of(&e))),
        }
    }

    /// The inside of `<value>`, through its closing tag. Text with no type element is an
    /// untyped string, kept as sent (spaces included); text beside a type element is refused.
    fn value_body(&mut self) -> R<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return bad(format!("values nested deeper than {MAX_DEPTH}"));
        }
        let mut untyped = String::new();
        let mixed = |untyped: &str| -> R<()> {
            if is_xml_space(untyped) {
                Ok(())
            } else {
                bad(format!("text {:?} beside a typed value", truncated(untyped)))
            }
        };
        let v = loop {
            match self.raw()? {
                Event::Text(t) => untyped.push_str(&t.xml10_content()),
                Event::GeneralRef(r) => push_ref(&mut untyped, r)?,
                Event::CData(t) => untyped.push_str(&t.xml10_content()),
                Event::Comment(_) => {}
                Event::End(_) => break Value::Str(untyped),
                Event::Empty(s) => {
                    mixed(&untyped)?;
                    let v = match s.name().as_ref() {
                        "nil" => Value::Nil,
                        "string" => Value::Str(String::new()),
                        "array" => Value::Array(Vec::new()),
                        "struct" => Value::Struct(Vec::new()),
                        "base64" => Value::Base64(String::new()),
                        _ => return bad(format!("empty {} in a value", name_of(&Event::Empty(s)))),
                    };
                    self.end()?;
                    break v;
                }
                Event::Start(s) => {
                    mixed(&untyped)?;
                    let v = match s.name().as_ref() {
                        "i4" | "int" => {
                            let t = self.text_until_end()?;
                            Value::Int(
                                t.trim()
                                    .parse()
                                    .map_err(|_| Error::Parse(format!("bad integer {:?}", truncated(&t))))?,
                            )
                        }
                        "boolean" => match self.text_until_end()?.trim() {
                            "1" => Value::Bool(true),
                            "0" => Value::Bool(false),
                            o => return bad(format!("bad boolean {:?}", truncated(o))),
                        },
                        "double" => {
                            let t = self.text_until_end()?;
                            Value::Double(
                                t.trim()
                                    .parse()
                                    .map_err(|_| Error::Parse(format!("bad double {:?}", truncated(&t))))?,
                            )
                        }
                        "string" => Value::Str(self.text_until_end()?),
                        "base64" => Value::Base64(self.text_until_end()?),
                        "dateTime.iso8601" => Value::DateTime(self.text_until_end()?),
                        "array" => self.array()?,
                        "struct" => self.structure()?,
                        _ => return bad(format!("unknown value type {}", name_of(&Event::Start(s)))),
                    };
                    self.end()?;
                    break v;
                }
                e => return bad(format!("expected a value, found {}", name_of(&e))),
            }
        };
        self.depth -= 1;
        Ok(v)
    }

    /// `<value>` or `<value/>`, whole.
    fn value(&mut self) -> R<Value> {
        match self.next()? {
            Event::Start(s) if s.name().as_ref() == "value" => self.value_body(),
            Event::Empty(s) if s.name().as_ref() == "value" => Ok(Value::Str(String::new())),
            e => bad(format!("expected <value>, found {}", name_of(&e))),
        }
    }

    /// After `<array>`: `<data>` values `</data>`, through `</array>`.
    fn array(&mut self) -> R<Value> {
        let mut items = Vec::new();
        match self.next()? {
            Event::Start(s) if s.name().as_ref() == "data" => loop {
                match self.next()? {
                    Event::Start(s) if s.name().as_ref() == "value" => items.push(self.value_body()?),
                    Event::Empty(s) if s.name().as_ref() == "value" => items.push(Value::Str(String::new())),
                    Event::End(_) => break,
                    e => return bad(format!("expected <value> in an array, found {}", name_of(&e))),
                }
            },
            Event::Empty(s) if s.name().as_ref() == "data" => {}
            e => return bad(format!("expected <data>, found {}", name_of(&e))),
        }
        self.end()?;
        Ok(Value::Array(items))
    }

    /// After `<struct>`: members, through `</struct>`.
    fn structure(&mut self) -> R<Value> {
        let mut members = Vec::new();
        loop {
            match self.next()? {
                Event::Start(s) if s.name().as_ref() == "member" => {
                    let key = match self.next()? {
                        Event::Start(s) if s.name().as_ref() == "name" => self.text_until_end()?,
                        Event::Empty(s) if s.name().as_ref() == "name" => String::new(),
                        e => return bad(format!("expected <name>, found {}", name_of(&e))),
                    };
                    let v = self.value()?;
                    self.end()?;
                    members.push((key, v));
                }
                Event::End(_) => return Ok(Value::Struct(members)),
                e => return bad(format!("expected <member>, found {}", name_of(&e))),
            }
        }
    }
}

/// Parses a `methodCall` or `methodResponse` body.
pub fn parse(xml: &[u8]) -> Result<Message, Error> {
    // XML has no NUL, raw or as `&#0;`; a string holding one could not be written back.
    if let Some(at) = xml.iter().position(|&b| b == 0) {
        return bad(format!("NUL byte at offset {at}: XML cannot carry it"));
    }
    let mut p = Parser { r: Reader::from_reader(xml), depth: 0 };
    match p.next()? {
        Event::Start(s) if s.name().as_ref() == "methodCall" => {
            p.start("methodName")?;
            let method = p.text_until_end()?.trim().to_string();
            let mut params = Vec::new();
            match p.next()? {
                Event::Start(s) if s.name().as_ref() == "params" => loop {
                    match p.next()? {
                        Event::Start(s) if s.name().as_ref() == "param" => {
                            params.push(p.value()?);
                            p.end()?;
                        }
                        Event::End(_) => break,
                        e => return bad(format!("expected <param>, found {}", name_of(&e))),
                    }
                },
                Event::Empty(_) | Event::End(_) => {}
                e => return bad(format!("expected <params>, found {}", name_of(&e))),
            }
            Ok(Message::Call { method, params })
        }
        Event::Start(s) if s.name().as_ref() == "methodResponse" => match p.next()? {
            Event::Start(s) if s.name().as_ref() == "params" => {
                p.start("param")?;
                Ok(Message::Response(p.value()?))
            }
            Event::Start(s) if s.name().as_ref() == "fault" => Ok(Message::Fault(p.value()?)),
            e => bad(format!("expected <params> or <fault>, found {}", name_of(&e))),
        },
        e => bad(format!("not an XML-RPC body: found {}", name_of(&e))),
    }
}

/// Escapes text for an element. `\r` and other control characters go as character references,
/// so that a parser's end-of-line normalisation does not turn `\r` into `\n`. NUL has no XML
/// form: it is written as `&#0;`, which parsers (ours, expat) refuse.
fn escape(s: &str, out: &mut String) {
    use std::fmt::Write;
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// The start of a long text, for error messages (bodies can be megabytes).
fn truncated(s: &str) -> String {
    const SHOWN: usize = 40;
    match s.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn write_value(v: &Value, o: &mut String) {
    use std::fmt::Write;
    o.push_str("<value>");
    match v {
        Value::Int(i) => {
            let _ = write!(o, "<i4>{i}</i4>");
        }
        Value::Bool(b) => o.push_str(if *b { "<boolean>1</boolean>" } else { "<boolean>0</boolean>" }),
        Value::Str(s) => {
            o.push_str("<string>");
            escape(s, o);
            o.push_str("</string>");
        }
        Value::Double(d) => {
            let _ = write!(o, "<double>{d:?}</double>");
        }
        Value::Base64(b) => {
            o.push_str("<base64>");
            escape(b, o);
            o.push_str("</base64>");
        }
        Value::DateTime(s) => {
            o.push_str("<dateTime.iso8601>");
            escape(s, o);
            o.push_str("</dateTime.iso8601>");
        }
        Value::Array(a) => {
            o.push_str("<array><data>");
            for x in a {
                write_value(x, o);
            }
            o.push_str("</data></array>");
        }
        Value::Struct(m) => {
            o.push_str("<struct>");
            for (k, x) in m {
                o.push_str("<member><name>");
                escape(k, o);
                o.push_str("</name>");
                write_value(x, o);
                o.push_str("</member>");
            }
            o.push_str("</struct>");
        }
        Value::Nil => o.push_str("<nil/>"),
    }
    o.push_str("</value>");
}

const DECL: &str = "<?xml version=\"1.0\"?>\n";

/// A `methodResponse` carrying `v`.
pub fn write_response(v: &Value) -> String {
    let mut o = format!("{DECL}<methodResponse><params><param>");
    write_value(v, &mut o);
    o.push_str("</param></params></methodResponse>\n");
    o
}

/// A `methodResponse` fault.
pub fn write_fault(code: i32, msg: &str) -> String {
    let mut o = format!("{DECL}<methodResponse><fault>");
    let fault = Value::Struct(vec![("faultCode".into(), Value::Int(code)), ("faultString".into(), msg.into())]);
    write_value(&fault, &mut o);
    o.push_str("</fault></methodResponse>\n");
    o
}

/// Any message: a call, a response, or a fault carrying whatever value it was given.
pub fn write_message(m: &Message) -> String {
    match m {
        Message::Call { method, params } => write_call(method, params),
        Message::Response(v) => write_response(v),
        Message::Fault(v) => {
            let mut o = format!("{DECL}<methodResponse><fault>");
            write_value(v, &mut o);
            o.push_str("</fault></methodResponse>\n");
            o
        }
    }
}

/// A `methodCall` body.
pub fn write_call(method: &str, params: &[Value]) -> String {
    let mut o = format!("{DECL}<methodCall><methodName>");
    escape(method, &mut o);
    o.push_str("</methodName><params>");
    for p in params {
        o.push_str("<param>");
        write_value(p, &mut o);
        o.push_str("</param>");
    }
    o.push_str("</params></methodCall>\n");
    o
}
