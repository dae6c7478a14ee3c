//! The `ros2idl` definitions rosbag2 records (MCAP schemas): blocks after a line of `=` and a
//! header line, `IDL: pkg/msg/Type` for OMG IDL (newer rosbag2 mixes in `MSG:` and `SRV:`
//! blocks), parsed into the same [`MsgDef`]s `.msg` text gives, so hashes and codecs need not
//! care which one a bag carried.
//!
//! The IDL subset is what `rosidl_adapter` writes and ROS 2 packages hand-write: `module`s,
//! `struct`s, `typedef`s, `const`s in `Type_Constants` modules, `#include` and other
//! preprocessor lines (ignored), comments, and annotations (`@default (value=..)` becomes the
//! field's default, the others are skipped). IDL types map back to their `.msg` spellings
//! (`octet` → `byte`, `boolean` → `bool`, `double` → `float64`, `long` → `int32`,
//! `sequence<T, N>` → `T[<=N]`, `string<N>` → `string<=N>`, `a::msg::B` → `a/msg/B`). IDL
//! `char` maps to `.msg` `char`, so its RIHS01 type id is `uint8`'s (rosidl's for IDL `char` is
//! `FIELD_TYPE_CHAR`; IDL that rosidl generates from `.msg` never uses it). `wchar`,
//! `long double`, unions and enums have no `.msg` form and are errors.

use std::collections::HashMap;

use crate::definition::{Array, Constant, Dialect, Field, FieldType, MsgDef};
use crate::interface::shift_lines;
use crate::registry::{normalize, Registry};
use crate::schema::EMPTY_STRUCT_FIELD;
use crate::{Error, Result};

/// Deeper module nesting or type nesting than this is refused.
const MAX_NESTING: usize = 32;

impl Registry {
    /// Adds a type and its dependencies from the definition text rosbag2 recorded for it,
    /// `ros2idl` or `ros2msg` (see [`add_idl_concatenated`]).
    pub fn add_ros2_concatenated(&mut self, root: &str, text: &str) -> Result<()> {
        add_idl_concatenated(self, root, text)
    }
}

/// Adds `root` and its dependencies from rosbag2's concatenated definition text: text before
/// the first separator is `root`'s own `.msg`/`.srv`/`.action` (or IDL), then `IDL:`, `MSG:`
/// and `SRV:` blocks. IDL definitions win over `MSG:` blocks of the same type (rosbag2 writes
/// an empty `MSG:` block for a type it then gives as IDL). Services and actions defined in
/// IDL get their derived types too. Blank text is an empty message (rosbag2 records
/// `std_msgs/msg/Empty` so); a caller holding no definition (encoding `unknown`) should not
/// call this.
pub fn add_idl_concatenated(reg: &mut Registry, root: &str, text: &str) -> Result<()> {
    if reg.dialect() != Dialect::Ros2 {
        return Err(Error::Parse {
            what: root.to_string(),
            line: 0,
            reason: "ros2idl definitions need a ROS 2 registry".into(),
        });
    }
    let mut idl = Vec::new();
    let blocks = crate::concatenated::blocks(root, text)?;
    // Blank root text before other blocks is no definition; alone it is an empty message.
    let skip_blank_root = blocks.len() > 1 && blocks[0].body.trim().is_empty();
    for block in blocks.into_iter().skip(usize::from(skip_blank_root)) {
        let shift = |e| shift_lines(e, block.first_line);
        match block.kind {
            "IDL" => idl.extend(parse_idl(block.body, &block.name).map_err(shift)?),
            "" if looks_like_idl(block.body) => idl.extend(parse_idl(block.body, &block.name).map_err(shift)?),
            "" => reg.add_interface(&block.name, block.body).map_err(shift)?,
            "MSG" => reg.add(&block.name, block.body).map_err(shift)?,
            "SRV" => reg.add_srv(&block.name, block.body).map_err(shift)?,
            _ => reg.add_action(&block.name, block.body).map_err(shift)?,
        }
    }
    add_idl_defs(reg, idl)?;
    if !reg.contains(root) {
        return Err(Error::UnknownType {
            name: normalize(root, Dialect::Ros2),
            context: Some("its recorded definition does not define it".into()),
        });
    }
    Ok(())
}

/// Whether root text is IDL rather than `.msg` (whose comments may hold braces too).
fn looks_like_idl(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_start().strip_prefix("module").is_some_and(|rest| rest.starts_with(char::is_whitespace)))
}

/// Registers IDL structs: `X_Request` + `X_Response` in `srv` as a service, `X_Goal` +
/// `X_Result` + `X_Feedback` in `action` as an action, the rest as messages.
fn add_idl_defs(reg: &mut Registry, defs: Vec<(String, MsgDef)>) -> Result<()> {
    let mut defs: HashMap<String, MsgDef> = defs.into_iter().collect();
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in &names {
        if let Some(base) = name.strip_suffix("_Request").filter(|b| b.contains("/srv/")) {
            let resp = format!("{base}_Response");
            if let (Some(req), Some(res)) = (defs.remove(name), defs.remove(&resp)) {
                reg.add_service(base, req, res)?;
            }
        }
        if let Some(base) = name.strip_suffix("_Goal").filter(|b| b.contains("/action/")) {
            let (r, f) = (format!("{base}_Result"), format!("{base}_Feedback"));
            if defs.contains_key(&r) && defs.contains_key(&f) {
                let (goal, result, feedback) = (defs.remove(name), defs.remove(&r), defs.remove(&f));
                reg.add_action_parts(
                    base,
                    goal.unwrap_or_default(),
                    result.unwrap_or_default(),
                    feedback.unwrap_or_default(),
                )?;
            }
        }
    }
    for (name, def) in defs {
        reg.add_def(&name, def);
    }
    Ok(())
}

/// Parses IDL text into `(pkg/msg/Type, definition)` pairs; `what` names the text in errors.
pub fn parse_idl(text: &str, what: &str) -> Result<Vec<(String, MsgDef)>> {
    let tokens = tokenize(text).map_err(|(line, reason)| Error::Parse { what: what.to_string(), line, reason })?;
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        what: what.to_string(),
        modules: Vec::new(),
        typedefs: HashMap::new(),
        structs: Vec::new(),
        constants: Vec::new(),
    };
    p.definitions(false)?;
    let Parser { mut structs, constants, .. } = p;
    for (owner, line, constant) in constants {
        let def = structs.iter_mut().find(|(n, _)| *n == owner).map(|(_, d)| d);
        let def = def.ok_or_else(|| Error::Parse {
            what: what.to_string(),
            line,
            reason: format!("constant {} for {owner}, which this IDL does not define", constant.name),
        })?;
        def.constants.push(constant);
    }
    Ok(structs)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// A number as written.
    Number(String),
    /// A string literal: unescaped value and the text as written.
    Str {
        value: String,
        raw: String,
    },
    /// A character literal as written.
    Char(String),
    /// `::`
    Scope,
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Number(s) | Tok::Char(s) => s.clone(),
            Tok::Str { raw, .. } => raw.clone(),
            Tok::Scope => "::".into(),
            Tok::Punct(c) => c.to_string(),
        }
    }
}

/// Splits IDL into tokens, dropping comments and preprocessor lines.
fn tokenize(text: &str) -> std::result::Result<Vec<Token>, (usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0, 1, true);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        if c == '#' && at_line_start || c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let start = line;
            i += 2;
            loop {
                match (chars.get(i), chars.get(i + 1)) {
                    (Some('*'), Some('/')) => break,
                    (Some('\n'), _) => line += 1,
                    (None, _) => return Err((start, "unterminated /* comment".into())),
                    _ => {}
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        let tok_line = line;
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            let s: String = chars[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').collect();
            i += s.len();
            Tok::Ident(s)
        } else if c.is_ascii_digit() || c == '.' && next.is_some_and(|n| n.is_ascii_digit()) {
            let start = i;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign = i > start
                    && (d == '+' || d == '-')
                    && matches!(chars[i - 1], 'e' | 'E')
                    && !chars[start..i].iter().any(|c| matches!(c, 'x' | 'X'));
                if !(d.is_ascii_alphanumeric() || d == '.' || exponent_sign) {
                    break;
                }
                i += 1;
            }
            Tok::Number(chars[start..i].iter().collect())
        } else if c == '"' || c == '\'' {
            let start = i;
            let mut value = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None | Some('\n') => return Err((tok_line, "unterminated literal".into())),
                    Some(q) if *q == c => break,
                    Some('\\') => {
                        let (ch, len) = unescape(&chars[i + 1..]);
                        value.push(ch);
                        i += 1 + len;
                    }
                    Some(ch) => {
                        value.push(*ch);
                        i += 1;
                    }
                }
            }
            i += 1;
            let raw: String = chars[start..i].iter().collect();
            if c == '"' {
                Tok::Str { value, raw }
            } else {
                Tok::Char(raw)
            }
        } else if c == ':' && next == Some(':') {
            i += 2;
            Tok::Scope
        } else {
            i += 1;
            Tok::Punct(c)
        };
        out.push(Token { tok, line: tok_line });
    }
    Ok(out)
}

/// The character an escape sequence (after its `\`) stands for, and its length.
fn unescape(rest: &[char]) -> (char, usize) {
    match rest.first() {
        Some('n') => ('\n', 1),
        Some('t') => ('\t', 1),
        Some('r') => ('\r', 1),
        Some('0') => ('\0', 1),
        Some('x') => {
            let hex: String = rest[1..].iter().take(2).take_while(|c| c.is_ascii_hexdigit()).collect();
            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                Some(ch) => (ch, 1 + hex.len()),
                None => ('x', 1),
            }
        }
        Some(other) => (*other, 1),
        None => ('\\', 0),
    }
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    what: String,
    modules: Vec<String>,
    typedefs: HashMap<String, FieldType>,
    structs: Vec<(String, MsgDef)>,
    /// `(owning struct, line, constant)`
    constants: Vec<(String, usize, Constant)>,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn line(&self) -> usize {
        self.toks.get(self.pos).or(self.toks.last()).map_or(1, |t| t.line)
    }

    fn err(&self, reason: impl Into<String>) -> Error {
        Error::Parse { what: self.what.clone(), line: self.line(), reason: reason.into() }
    }

    fn next(&mut self) -> Result<Tok> {
        let t = self.peek().cloned().ok_or_else(|| self.err("unexpected end of IDL"))?;
        self.pos += 1;
        Ok(t)
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w == word)
    }

    fn expect(&mut self, c: char) -> Result<()> {
        match self.next()? {
            Tok::Punct(p) if p == c => Ok(()),
            other => {
                self.pos -= 1;
                Err(self.err(format!("expected `{c}`, found `{}`", other.text())))
            }
        }
    }

    fn ident(&mut self) -> Result<String> {
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            other => {
                self.pos -= 1;
                Err(self.err(format!("expected a name, found `{}`", other.text())))
            }
        }
    }

    fn usize_literal(&mut self) -> Result<usize> {
        match self.next()? {
            Tok::Number(n) => n.parse().map_err(|_| {
                self.pos -= 1;
                self.err(format!("{n:?} is not a size"))
            }),
            other => {
                self.pos -= 1;
                Err(self.err(format!("expected a size, found `{}`", other.text())))
            }
        }
    }

    /// Definitions up to the end of the text, or to the `}` closing a module.
    fn definitions(&mut self, in_module: bool) -> Result<()> {
        loop {
            self.annotations()?; // on modules, structs, typedefs, constants: nothing to keep
            let Some(tok) = self.peek().cloned() else {
                return if in_module { Err(self.err("a module is not closed")) } else { Ok(()) };
            };
            match tok {
                Tok::Punct('}') if in_module => return Ok(()),
                Tok::Punct(';') => self.pos += 1,
                Tok::Ident(w) if w == "module" => self.module()?,
                Tok::Ident(w) if w == "struct" => self.structure()?,
                Tok::Ident(w) if w == "typedef" => self.typedef()?,
                Tok::Ident(w) if w == "const" => self.constant()?,
                other => return Err(self.err(format!("unsupported IDL construct `{}`", other.text()))),
            }
        }
    }

    fn module(&mut self) -> Result<()> {
        self.pos += 1;
        let name = self.ident()?;
        if self.modules.len() >= MAX_NESTING {
            return Err(self.err("modules nested too deeply"));
        }
        self.expect('{')?;
        self.modules.push(name);
        self.definitions(true)?;
        self.modules.pop();
        self.expect('}')?;
        self.expect(';')
    }

    fn structure(&mut self) -> Result<()> {
        self.pos += 1;
        let name = self.ident()?;
        if self.is_punct(';') {
            return Ok(()); // a forward declaration
        }
        let full = self.scoped(&name)?;
        self.expect('{')?;
        let outer = std::mem::replace(&mut self.what, full.clone());
        let mut def = MsgDef::default();
        while !self.is_punct('}') {
            let annotations = self.annotations()?;
            let ty = self.field_type(0)?;
            loop {
                let field_name = self.ident()?;
                let ty = self.declarator(ty.clone())?;
                def.fields.push(Field { default: default_value(&annotations, &ty), ty, name: field_name });
                if self.is_punct(',') {
                    self.pos += 1;
                    continue;
                }
                self.expect(';')?;
                break;
            }
        }
        self.expect('}')?;
        self.expect(';')?;
        self.what = outer;
        if def.fields.len() == 1 && def.fields[0].name == EMPTY_STRUCT_FIELD {
            def.fields.clear();
        }
        self.structs.push((full, def));
        Ok(())
    }

    /// `[N]` after a member or typedef name.
    fn declarator(&mut self, ty: FieldType) -> Result<FieldType> {
        if !self.is_punct('[') {
            return Ok(ty);
        }
        self.pos += 1;
        let n = self.usize_literal()?;
        self.expect(']')?;
        if ty.array != Array::Single || self.is_punct('[') {
            return Err(self.err("nested arrays and sequences have no .msg form"));
        }
        Ok(FieldType { array: Array::Fixed(n), ..ty })
    }

    fn typedef(&mut self) -> Result<()> {
        self.pos += 1;
        let ty = self.field_type(0)?;
        let name = self.ident()?;
        let ty = self.declarator(ty)?;
        self.expect(';')?;
        self.typedefs.insert(name, ty);
        Ok(())
    }

    /// `const T NAME = value;`, owned by `X` when inside module `X_Constants`.
    fn constant(&mut self) -> Result<()> {
        self.pos += 1;
        let line = self.line();
        let ty = self.field_type(0)?;
        let name = self.ident()?;
        self.expect('=')?;
        let mut value = Vec::new();
        while !self.is_punct(';') {
            value.push(self.next()?);
        }
        self.pos += 1;
        if ty.array != Array::Single || !ty.is_primitive() {
            return Err(self.err(format!("constant {name} must have a primitive, non-array type")));
        }
        let Some(owner) = self.modules.last().and_then(|m| m.strip_suffix("_Constants")) else {
            return Ok(()); // a module-level constant belongs to no message
        };
        let owner = self.modules[..self.modules.len() - 1]
            .iter()
            .map(String::as_str)
            .chain([owner])
            .collect::<Vec<_>>()
            .join("/");
        let value = value_text(&value, false);
        self.constants.push((owner, line, Constant { ty: ty.base, name, value }));
        Ok(())
    }

    /// Annotations before a definition or member, as `(name, tokens inside the parentheses)`.
    fn annotations(&mut self) -> Result<Vec<(String, Vec<Tok>)>> {
        let mut out = Vec::new();
        while self.is_punct('@') {
            self.pos += 1;
            let name = self.ident()?;
            let mut params = Vec::new();
            if self.is_punct('(') {
                self.pos += 1;
                let mut depth = 1;
                loop {
                    let t = self.next().map_err(|_| self.err(format!("annotation @{name} is not closed")))?;
                    match t {
                        Tok::Punct('(') => depth += 1,
                        Tok::Punct(')') => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    params.push(t);
                }
            }
            out.push((name, params));
        }
        Ok(out)
    }

    /// A type: primitive, `string<N>`, `sequence<T, N>`, typedef or (scoped) struct name.
    fn field_type(&mut self, depth: usize) -> Result<FieldType> {
        if depth > 1 {
            return Err(self.err("nested sequences have no .msg form"));
        }
        let single = |base: &str| FieldType { base: base.to_string(), string_bound: None, array: Array::Single };
        let first = match self.next()? {
            Tok::Ident(w) => w,
            Tok::Scope => self.ident()?,
            other => {
                self.pos -= 1;
                return Err(self.err(format!("expected a type, found `{}`", other.text())));
            }
        };
        let base = match first.as_str() {
            "sequence" => {
                self.expect('<')?;
                let element = self.field_type(depth + 1)?;
                let array = if self.is_punct(',') {
                    self.pos += 1;
                    Array::Bounded(self.usize_literal()?)
                } else {
                    Array::Unbounded
                };
                self.expect('>')?;
                if element.array != Array::Single {
                    return Err(self.err("sequences of arrays have no .msg form"));
                }
                return Ok(FieldType { array, ..element });
            }
            "string" | "wstring" => {
                let mut ty = single(&first);
                if self.is_punct('<') {
                    self.pos += 1;
                    ty.string_bound = Some(self.usize_literal()?);
                    self.expect('>')?;
                }
                return Ok(ty);
            }
            "unsigned" => match self.ident()?.as_str() {
                "short" => "uint16",
                "long" if self.is_ident("long") => {
                    self.pos += 1;
                    "uint64"
                }
                "long" => "uint32",
                other => return Err(self.err(format!("unsigned {other} is not an IDL type"))),
            },
            "long" if self.is_ident("long") => {
                self.pos += 1;
                "int64"
            }
            "long" if self.is_ident("double") => return Err(self.err("long double has no .msg form")),
            "long" => "int32",
            "short" => "int16",
            "boolean" => "bool",
            "octet" => "byte",
            "float" => "float32",
            "double" => "float64",
            "char" => "char",
            "int8" | "uint8" | "int16" | "uint16" | "int32" | "uint32" | "int64" | "uint64" => first.as_str(),
            "wchar" => return Err(self.err("wchar has no .msg form")),
            _ => return self.named_type(first),
        };
        Ok(single(base))
    }

    /// A typedef, a struct of the current module, or `a::b::C` → `a/b/C`.
    fn named_type(&mut self, first: String) -> Result<FieldType> {
        let mut parts = vec![first];
        while self.peek() == Some(&Tok::Scope) {
            self.pos += 1;
            parts.push(self.ident()?);
        }
        if let [name] = &parts[..] {
            if let Some(ty) = self.typedefs.get(name) {
                return Ok(ty.clone());
            }
            let base = self.scoped(name)?;
            return Ok(FieldType { base, string_bound: None, array: Array::Single });
        }
        Ok(FieldType { base: parts.join("/"), string_bound: None, array: Array::Single })
    }

    /// `name` in the current module: `pkg/msg/name`.
    fn scoped(&self, name: &str) -> Result<String> {
        if self.modules.is_empty() {
            return Err(self.err(format!("{name} is outside any module")));
        }
        Ok(format!("{}/{name}", self.modules.join("/")))
    }
}

/// The value of `@default (value=...)`, spelt as in `.msg`.
fn default_value(annotations: &[(String, Vec<Tok>)], ty: &FieldType) -> Option<String> {
    let (_, params) = annotations.iter().find(|(n, _)| n == "default")?;
    let start = match params.iter().position(|t| *t == Tok::Ident("value".into())) {
        Some(i) if params.get(i + 1) == Some(&Tok::Punct('=')) => i + 2,
        _ => 0,
    };
    let end = params[start..].iter().position(|t| *t == Tok::Punct(',')).map_or(params.len(), |e| start + e);
    let value = value_text(&params[start..end], true);
    // rosidl writes array defaults as the string "(a, b)"; `.msg` writes `[a, b]`.
    if ty.array != Array::Single {
        if let [Tok::Str { value: inner, .. }] = &params[start..end] {
            if let Some(items) = inner.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
                return Some(format!("[{}]", items.trim_end_matches(',').trim()));
            }
        }
    }
    Some(value)
}

/// A constant or default value as `.msg` writes it: numbers as written, `TRUE`/`FALSE` as
/// `true`/`false`, strings unquoted for constants and quoted as written for defaults
/// (adjacent literals joined).
fn value_text(tokens: &[Tok], quoted: bool) -> String {
    if !tokens.is_empty() && tokens.iter().all(|t| matches!(t, Tok::Str { .. })) {
        let value: String =
            tokens.iter().map(|t| if let Tok::Str { value, .. } = t { value.as_str() } else { "" }).collect();
        if !quoted {
            return value;
        }
        if let [Tok::Str { raw, .. }] = tokens {
            return raw.clone();
        }
        return format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""));
    }
    let text: String = tokens.iter().map(Tok::text).collect();
    match text.as_str() {
        "TRUE" => "true".into(),
        "FALSE" => "false".into(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ft(base: &str, string_bound: Option<usize>, array: Array) -> FieldType {
        FieldType { base: base.into(), string_bound, array }
    }

    #[test]
    fn rosidl_style_idl_with_typedefs_constants_and_annotations() {
        let idl = r#"// generated from rosidl_adapter/resource/msg.idl.em
#include "std_msgs/msg/Header.idl"

module pkg {
  module msg {
    typedef double double__9[9];
    typedef geometry_msgs::msg::Point geometry_msgs__msg__Point;
    typedef geometry_msgs__msg__Point geometry_msgs__msg__Point__3[3];
    module Thing_Constants {
      @verbatim (language="comment", text=
        "unable" "\n" "to fix")
      const int8 NO_FIX = -1;
      const string NAME = "a \"b\"";
      const boolean YES = TRUE;
    };
    /* a block
       comment */
    @verbatim (language="comment", text="A thing.")
    struct Thing {
      std_msgs::msg::Header header;
      double__9 covariance;
      geometry_msgs__msg__Point__3 corners;
      @default (value=1.5)
      @unit (value="m")
      double x, y;
      sequence<int32> a;
      sequence<string<5>, 3> b;
      string<22> s;
      @default (value="Hello world!")
      string greeting;
      @default (value="(1, 2)")
      sequence<octet> raw;
      unsigned long long big;
      long long small;
      unsigned short us;
      boolean ok;
      Other other;
      uint8 u8[4];
    };
    struct Empty {
      uint8 structure_needs_at_least_one_member;
    };
  };
};
"#;
        let defs = parse_idl(idl, "pkg/msg/Thing").unwrap();
        let names: Vec<&str> = defs.iter().map(|d| d.0.as_str()).collect();
        assert_eq!(names, ["pkg/msg/Thing", "pkg/msg/Empty"]);
        let t = &defs[0].1;
        let types: Vec<(&str, &FieldType)> = t.fields.iter().map(|f| (f.name.as_str(), &f.ty)).collect();
        assert_eq!(
            types,
            [
                ("header", &ft("std_msgs/msg/Header", None, Array::Single)),
                ("covariance", &ft("float64", None, Array::Fixed(9))),
                ("corners", &ft("geometry_msgs/msg/Point", None, Array::Fixed(3))),
                ("x", &ft("float64", None, Array::Single)),
                ("y", &ft("float64", None, Array::Single)),
                ("a", &ft("int32", None, Array::Unbounded)),
                ("b", &ft("string", Some(5), Array::Bounded(3))),
                ("s", &ft("string", Some(22), Array::Single)),
                ("greeting", &ft("string", None, Array::Single)),
                ("raw", &ft("byte", None, Array::Unbounded)),
                ("big", &ft("uint64", None, Array::Single)),
                ("small", &ft("int64", None, Array::Single)),
                ("us", &ft("uint16", None, Array::Single)),
                ("ok", &ft("bool", None, Array::Single)),
                ("other", &ft("pkg/msg/Other", None, Array::Single)),
                ("u8", &ft("uint8", None, Array::Fixed(4))),
            ]
        );
        assert_eq!(t.fields[3].default.as_deref(), Some("1.5"));
        assert_eq!(t.fields[4].default.as_deref(), Some("1.5"));
        assert_eq!(t.fields[8].default.as_deref(), Some("\"Hello world!\""));
        assert_eq!(t.fields[9].default.as_deref(), Some("[1, 2]"));
        let consts: Vec<(&str, &str, &str)> =
            t.constants.iter().map(|c| (c.ty.as_str(), c.name.as_str(), c.value.as_str())).collect();
        assert_eq!(consts, [("int8", "NO_FIX", "-1"), ("string", "NAME", "a \"b\""), ("bool", "YES", "true")]);
        assert!(defs[1].1.fields.is_empty());
    }

    #[test]
    fn services_and_actions_in_idl_get_their_derived_types() {
        let text = "================================================================================\nIDL: p/srv/S\n\
            module p { module srv { struct S_Request { int64 a; }; struct S_Response { int64 sum; }; }; };\n\
            ================================================================================\nIDL: p/action/A\n\
            module p { module action { struct A_Goal { int32 order; }; struct A_Result { sequence<int32> s; }; struct A_Feedback { sequence<int32> s; }; }; };\n";
        let mut r = Registry::new(Dialect::Ros2);
        add_idl_concatenated(&mut r, "p/srv/S_Event", text).unwrap();
        for name in
            ["p/srv/S", "p/srv/S_Event", "p/action/A", "p/action/A_SendGoal_Event", "p/action/A_FeedbackMessage"]
        {
            assert!(r.contains(name), "{name}");
        }
        let mut reference = Registry::new(Dialect::Ros2);
        reference.add_srv("p/srv/S", "int64 a\n---\nint64 sum\n").unwrap();
        assert_eq!(r.rihs01("p/srv/S_Event").unwrap(), reference.rihs01("p/srv/S_Event").unwrap());
    }

    #[test]
    fn mixed_blocks_as_newer_rosbag2_writes_them() {
        // rosbag2's test_local_message_definition_source.py (ros2/rosbag2, rosbag2_py/test):
        // an SRV block, an empty MSG placeholder, then the IDL that defines it.
        let text = "================================================================================\n\
            SRV: rosbag2_test_msgdefs/srv/ComplexSrvIdl\nrosbag2_test_msgdefs/BasicIdl req\n---\nrosbag2_test_msgdefs/BasicIdl resp\n\n\
            ================================================================================\nMSG: rosbag2_test_msgdefs/BasicIdl\n\n\
            ================================================================================\nIDL: rosbag2_test_msgdefs/BasicIdl\n\
            module rosbag2_test_msgdefs {\n  module msg {\n    struct BasicIdl {\n        float x;\n    };\n  };\n};\n";
        let mut r = Registry::new(Dialect::Ros2);
        add_idl_concatenated(&mut r, "rosbag2_test_msgdefs/srv/ComplexSrvIdl", text).unwrap();
        assert_eq!(r.get("rosbag2_test_msgdefs/msg/BasicIdl").unwrap().fields[0].ty.base, "float32");
        assert!(r.contains("rosbag2_test_msgdefs/srv/ComplexSrvIdl_Event"));
    }

    #[test]
    fn errors_name_the_type_and_the_line_in_the_whole_text() {
        let text = "================================================================================\nIDL: p/msg/A\n\
            module p {\n  module msg {\n    struct A {\n      wchar c;\n    };\n  };\n};\n";
        let mut r = Registry::new(Dialect::Ros2);
        let e = add_idl_concatenated(&mut r, "p/msg/A", text).unwrap_err().to_string();
        assert!(e.contains("p/msg/A") && e.contains("line 6") && e.contains("wchar"), "{e}");
        for (bad, needle) in [
            ("module p { module msg { struct A { int32 x }; }; };", "expected `;`"),
            ("module p { module msg { union U { }; }; };", "unsupported IDL construct `union`"),
            ("module p { module msg { struct A { sequence<int32> x[2]; }; }; };", "nested arrays"),
            ("module p { module msg {\n struct A { int32 x; };\n", "not closed"),
            ("module p { module msg { module B_Constants { const int8 X = 1; }; }; };", "constant X for p/msg/B"),
            ("/* open", "unterminated"),
        ] {
            let e = parse_idl(bad, "p/msg/A").unwrap_err().to_string();
            assert!(e.contains("p/msg/A") && e.contains(needle), "{bad}: {e}");
        }
        let e = add_idl_concatenated(&mut r, "p/msg/A", "=====\nNOPE p\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = add_idl_concatenated(
            &mut r,
            "p/msg/Missing",
            "=====\nIDL: p/msg/B\nmodule p { module msg { struct B { int8 x; }; }; };\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("p/msg/Missing"), "{e}");
    }

    #[test]
    fn ros2msg_text_and_blank_text() {
        let mut r = Registry::new(Dialect::Ros2);
        add_idl_concatenated(&mut r, "std_msgs/msg/Empty", "").unwrap();
        assert!(r.get("std_msgs/msg/Empty").unwrap().fields.is_empty());
        let text = "# {sec: -2} is not IDL\nbuiltin_interfaces/Time stamp\n================================================================================\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
        add_idl_concatenated(&mut r, "a/msg/Stamp", text).unwrap();
        assert_eq!(r.get("builtin_interfaces/msg/Time").unwrap().fields.len(), 2);
        let e = add_idl_concatenated(&mut r, "a/msg/Bad", "int32 x\n=====\nMSG: a/msg/C\nint32 ok\nbad\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a/msg/C") && e.contains("line 5"), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = "module m {".repeat(40) + &"};".repeat(40);
        assert!(parse_idl(&text, "x").unwrap_err().to_string().contains("too deeply"));
        assert!(parse_idl("module p { struct A { sequence<sequence<int8>> x; }; };", "x").is_err());
    }
}
