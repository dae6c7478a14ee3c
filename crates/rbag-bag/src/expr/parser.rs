//! A recursive-descent parser for Python's expression grammar (the subset filters use), with a
//! depth limit checked as each node is built, so neither parsing nor evaluating nor dropping a
//! tree can recurse deeper than [`Limits::max_depth`].

use super::lexer::{Tok, Token};
use super::{Limits, ParseError};

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(Vec<u8>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Is,
    IsNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Pos,
    Invert,
}

/// The functions a filter may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Len,
    Abs,
    Min,
    Max,
    Int,
    Float,
    Str,
    Bool,
    Round,
    Sum,
    Any,
    All,
    /// `__import__('re')`, as filters written for `rosbag filter` reach the re module.
    Import,
}

impl Builtin {
    fn named(name: &str) -> Option<Builtin> {
        Some(match name {
            "len" => Builtin::Len,
            "abs" => Builtin::Abs,
            "min" => Builtin::Min,
            "max" => Builtin::Max,
            "int" => Builtin::Int,
            "float" => Builtin::Float,
            "str" => Builtin::Str,
            "bool" => Builtin::Bool,
            "round" => Builtin::Round,
            "sum" => Builtin::Sum,
            "any" => Builtin::Any,
            "all" => Builtin::All,
            "__import__" => Builtin::Import,
            _ => return None,
        })
    }
}

/// The functions a filter may call, for messages.
pub(crate) const BUILTINS: &str = "len, abs, min, max, int, float, str, bool, round, sum, any, all";

/// One node of the expression tree: what it is, where it is in the text, how deep its subtree is.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) start: u32,
    pub(crate) end: u32,
    depth: u32,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Lit(Lit),
    Topic,
    M,
    T,
    /// Python's `re` module.
    Re,
    Attr(Box<Node>, String),
    Index(Box<Node>, Box<Node>),
    Slice(Box<Node>, Option<Box<Node>>, Option<Box<Node>>),
    Call(Builtin, Vec<Node>),
    Method(Box<Node>, String, Vec<Node>),
    Unary(UnOp, Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    /// `a < b <= c`: the first operand and each following comparison.
    Cmp(Box<Node>, Vec<(CmpOp, Node)>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    IfElse(Box<Node>, Box<Node>, Box<Node>),
    /// A list or tuple display.
    List(Vec<Node>),
}

impl Node {
    /// Whether the expression reads `m` anywhere (else messages need not be decoded).
    pub(crate) fn uses_m(&self) -> bool {
        let mut found = false;
        self.walk(&mut |n| found |= matches!(n.kind, Kind::M));
        found
    }

    fn walk(&self, f: &mut dyn FnMut(&Node)) {
        f(self);
        match &self.kind {
            Kind::Lit(_) | Kind::Topic | Kind::M | Kind::T | Kind::Re => {}
            Kind::Attr(a, _) | Kind::Unary(_, a) | Kind::Not(a) => a.walk(f),
            Kind::Index(a, b) | Kind::Bin(_, a, b) | Kind::And(a, b) | Kind::Or(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Kind::Slice(a, b, c) => {
                a.walk(f);
                b.iter().chain(c.iter()).for_each(|n| n.walk(f));
            }
            Kind::Call(_, args) | Kind::List(args) => args.iter().for_each(|n| n.walk(f)),
            Kind::Method(a, _, args) => {
                a.walk(f);
                args.iter().for_each(|n| n.walk(f));
            }
            Kind::Cmp(a, rest) => {
                a.walk(f);
                rest.iter().for_each(|(_, n)| n.walk(f));
            }
            Kind::IfElse(a, b, c) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
        }
    }

    /// Where `m` is read: the spans of its nodes.
    pub(crate) fn m_spans(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        self.walk(&mut |n| {
            if matches!(n.kind, Kind::M) {
                out.push((n.start, n.end));
            }
        });
        out
    }

    /// Every regular expression written as a literal first argument of `re.*`, to compile once.
    pub(crate) fn literal_patterns(&self) -> Vec<(Vec<u8>, String, u32)> {
        let mut out = Vec::new();
        self.walk(&mut |n| {
            if let Kind::Method(obj, name, args) = &n.kind {
                if matches!(obj.kind, Kind::Re) {
                    if let Some(Node { kind: Kind::Lit(Lit::Str(p)), start, .. }) = args.first() {
                        out.push((p.clone(), name.clone(), *start));
                    }
                }
            }
        });
        out
    }
}

/// Parses a whole expression.
pub(crate) fn parse(src: &str, tokens: Vec<Token>, limits: &Limits) -> Result<Node, ParseError> {
    let mut p = Parser { src, tokens, pos: 0, limits };
    let node = p.expr()?;
    let t = p.peek();
    if t.tok != Tok::End {
        return Err(ParseError::new(t.start, format!("unexpected {}", p.describe(t))));
    }
    Ok(node)
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    limits: &'s Limits,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn describe(&self, t: &Token) -> String {
        match t.tok {
            Tok::End => "end of the expression".into(),
            _ => format!("`{}`", &self.src[t.start..t.end]),
        }
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek().tok, Tok::Op(o) if o == op)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Name(n) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(kw);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect_op(&mut self, op: &str, what: &str) -> Result<Token, ParseError> {
        if self.is_op(op) {
            return Ok(self.next());
        }
        let t = self.peek();
        Err(ParseError::new(t.start, format!("expected `{op}` {what}, found {}", self.describe(t))))
    }

    /// A node spanning `start..end` over `children`, refused if it makes the tree too deep.
    fn node(&self, kind: Kind, start: usize, end: usize) -> Result<Node, ParseError> {
        let mut depth = 0;
        let mut child = |n: &Node| depth = depth.max(n.depth);
        match &kind {
            Kind::Lit(_) | Kind::Topic | Kind::M | Kind::T | Kind::Re => {}
            Kind::Attr(a, _) | Kind::Unary(_, a) | Kind::Not(a) => child(a),
            Kind::Index(a, b) | Kind::Bin(_, a, b) | Kind::And(a, b) | Kind::Or(a, b) => {
                child(a);
                child(b);
            }
            Kind::Slice(a, b, c) => {
                child(a);
                b.iter().chain(c.iter()).for_each(|n| child(n));
            }
            Kind::Call(_, args) | Kind::List(args) => args.iter().for_each(&mut child),
            Kind::Method(a, _, args) => {
                child(a);
                args.iter().for_each(&mut child);
            }
            Kind::Cmp(a, rest) => {
                child(a);
                rest.iter().for_each(|(_, n)| child(n));
            }
            Kind::IfElse(a, b, c) => {
                child(a);
                child(b);
                child(c);
            }
        }
        if depth + 1 > self.limits.max_depth {
            return Err(ParseError::new(
                start,
                format!("the expression nests deeper than {} levels here", self.limits.max_depth),
            ));
        }
        Ok(Node { kind, start: start as u32, end: end as u32, depth: depth + 1 })
    }

    fn end(&self) -> usize {
        self.tokens[self.pos.saturating_sub(1)].end
    }

    /// A guard against recursion before any node exists (`((((…` or `not not not …`).
    fn enter(&self, level: u32, at: usize) -> Result<u32, ParseError> {
        if level > self.limits.max_depth {
            return Err(ParseError::new(
                at,
                format!("the expression nests deeper than {} levels here", self.limits.max_depth),
            ));
        }
        Ok(level + 1)
    }

    fn expr(&mut self) -> Result<Node, ParseError> {
        self.expr_at(0)
    }

    /// `a if c else b`, the lowest precedence.
    fn expr_at(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let level = self.enter(level, start)?;
        if self.is_kw("lambda") {
            return Err(ParseError::new(start, "lambda is not supported"));
        }
        let a = self.or(level)?;
        if self.eat_kw("if") {
            let c = self.or(level)?;
            if !self.eat_kw("else") {
                let t = self.peek();
                return Err(ParseError::new(t.start, format!("expected `else`, found {}", self.describe(t))));
            }
            let b = self.expr_at(level)?;
            let end = self.end();
            return self.node(Kind::IfElse(Box::new(c), Box::new(a), Box::new(b)), start, end);
        }
        Ok(a)
    }

    fn or(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let mut a = self.and(level)?;
        while self.eat_kw("or") {
            let b = self.and(level)?;
            a = self.node(Kind::Or(Box::new(a), Box::new(b)), start, self.end())?;
        }
        Ok(a)
    }

    fn and(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let mut a = self.not(level)?;
        while self.eat_kw("and") {
            let b = self.not(level)?;
            a = self.node(Kind::And(Box::new(a), Box::new(b)), start, self.end())?;
        }
        Ok(a)
    }

    fn not(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        if self.eat_kw("not") {
            let level = self.enter(level, start)?;
            let a = self.not(level)?;
            return self.node(Kind::Not(Box::new(a)), start, self.end());
        }
        self.comparison(level)
    }

    fn cmp_op(&mut self) -> Option<CmpOp> {
        let op = match &self.peek().tok {
            Tok::Op("==") => CmpOp::Eq,
            Tok::Op("!=") => CmpOp::Ne,
            Tok::Op("<") => CmpOp::Lt,
            Tok::Op("<=") => CmpOp::Le,
            Tok::Op(">") => CmpOp::Gt,
            Tok::Op(">=") => CmpOp::Ge,
            Tok::Name(n) if n == "in" => CmpOp::In,
            Tok::Name(n) if n == "is" => {
                self.pos += 1;
                return Some(if self.eat_kw("not") { CmpOp::IsNot } else { CmpOp::Is });
            }
            Tok::Name(n) if n == "not" => {
                if !matches!(&self.tokens.get(self.pos + 1).map(|t| &t.tok), Some(Tok::Name(n)) if n == "in") {
                    return None;
                }
                self.pos += 2;
                return Some(CmpOp::NotIn);
            }
            _ => return None,
        };
        self.pos += 1;
        Some(op)
    }

    fn comparison(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let a = self.bitor(level)?;
        let mut rest = Vec::new();
        while let Some(op) = self.cmp_op() {
            rest.push((op, self.bitor(level)?));
        }
        if rest.is_empty() {
            return Ok(a);
        }
        self.node(Kind::Cmp(Box::new(a), rest), start, self.end())
    }

    /// Left-associative binary operators of one precedence level.
    fn binary(
        &mut self,
        level: u32,
        ops: &[(&str, BinOp)],
        next: fn(&mut Self, u32) -> Result<Node, ParseError>,
    ) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let mut a = next(self, level)?;
        'outer: loop {
            for &(text, op) in ops {
                if self.eat_op(text) {
                    let b = next(self, level)?;
                    a = self.node(Kind::Bin(op, Box::new(a), Box::new(b)), start, self.end())?;
                    continue 'outer;
                }
            }
            return Ok(a);
        }
    }

    fn bitor(&mut self, level: u32) -> Result<Node, ParseError> {
        self.binary(level, &[("|", BinOp::BitOr)], Self::bitxor)
    }

    fn bitxor(&mut self, level: u32) -> Result<Node, ParseError> {
        self.binary(level, &[("^", BinOp::BitXor)], Self::bitand)
    }

    fn bitand(&mut self, level: u32) -> Result<Node, ParseError> {
        self.binary(level, &[("&", BinOp::BitAnd)], Self::shift)
    }

    fn shift(&mut self, level: u32) -> Result<Node, ParseError> {
        self.binary(level, &[("<<", BinOp::Shl), (">>", BinOp::Shr)], Self::sum)
    }

    fn sum(&mut self, level: u32) -> Result<Node, ParseError> {
        self.binary(level, &[("+", BinOp::Add), ("-", BinOp::Sub)], Self::term)
    }

    fn term(&mut self, level: u32) -> Result<Node, ParseError> {
        let ops = [("*", BinOp::Mul), ("//", BinOp::FloorDiv), ("/", BinOp::Div), ("%", BinOp::Mod)];
        self.binary(level, &ops, Self::unary)
    }

    fn unary(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let op = match self.peek().tok {
            Tok::Op("-") => UnOp::Neg,
            Tok::Op("+") => UnOp::Pos,
            Tok::Op("~") => UnOp::Invert,
            _ => return self.power(level),
        };
        self.pos += 1;
        let level = self.enter(level, start)?;
        let a = self.unary(level)?;
        // Fold `-5` into a literal, so that `-9223372036854775808` and `2 ** -1` stay simple.
        if let (UnOp::Neg, Kind::Lit(Lit::Int(v))) = (op, &a.kind) {
            return self.node(Kind::Lit(Lit::Int(-v)), start, self.end());
        }
        if let (UnOp::Neg, Kind::Lit(Lit::Float(v))) = (op, &a.kind) {
            return self.node(Kind::Lit(Lit::Float(-v)), start, self.end());
        }
        self.node(Kind::Unary(op, Box::new(a)), start, self.end())
    }

    /// `a ** b`: binds tighter than a unary minus on its left, and is right-associative.
    fn power(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let a = self.postfix(level)?;
        if self.eat_op("**") {
            let level = self.enter(level, start)?;
            let b = self.unary(level)?;
            return self.node(Kind::Bin(BinOp::Pow, Box::new(a), Box::new(b)), start, self.end());
        }
        Ok(a)
    }

    /// Call arguments after `(`, up to and including `)`.
    fn args(&mut self, level: u32) -> Result<Vec<Node>, ParseError> {
        let mut args = Vec::new();
        while !self.is_op(")") {
            if args.len() >= self.limits.max_items {
                return Err(ParseError::new(self.peek().start, "too many arguments"));
            }
            args.push(self.expr_at(level)?);
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")", "to close the call")?;
        Ok(args)
    }

    fn postfix(&mut self, level: u32) -> Result<Node, ParseError> {
        let start = self.peek().start;
        let mut a = self.atom(level)?;
        loop {
            if self.eat_op(".") {
                let t = self.next();
                let Tok::Name(name) = t.tok else {
                    return Err(ParseError::new(
                        t.start,
                        format!("expected a field name after `.`, found {}", self.describe(&t)),
                    ));
                };
                if self.eat_op("(") {
                    let args = self.args(level)?;
                    a = self.node(Kind::Method(Box::new(a), name, args), start, self.end())?;
                } else {
                    a = self.node(Kind::Attr(Box::new(a), name), start, self.end())?;
                }
            } else if self.eat_op("[") {
                let lo = if self.is_op(":") { None } else { Some(Box::new(self.expr_at(level)?)) };
                if self.eat_op(":") {
                    let hi =
                        if self.is_op("]") || self.is_op(":") { None } else { Some(Box::new(self.expr_at(level)?)) };
                    if self.is_op(":") {
                        return Err(ParseError::new(self.peek().start, "slices with a step are not supported"));
                    }
                    self.expect_op("]", "to close the slice")?;
                    a = self.node(Kind::Slice(Box::new(a), lo, hi), start, self.end())?;
                } else {
                    self.expect_op("]", "to close the index")?;
                    let Some(i) = lo else { unreachable!("an index without `:` has an expression") };
                    a = self.node(Kind::Index(Box::new(a), i), start, self.end())?;
                }
            } else if self.is_op("(") {
                return Err(ParseError::new(
                    self.peek().start,
                    format!("only functions ({BUILTINS}) and methods can be called"),
                ));
            } else {
                return Ok(a);
            }
        }
    }

    fn atom(&mut self, level: u32) -> Result<Node, ParseError> {
        let t = self.next();
        let kind = match t.tok {
            Tok::Int(v) => Kind::Lit(Lit::Int(v)),
            Tok::Float(v) => Kind::Lit(Lit::Float(v)),
            Tok::Str(mut s) => {
                // Adjacent literals concatenate, as in Python.
                while let Tok::Str(more) = &self.peek().tok {
                    if s.len() + more.len() > self.limits.max_literal {
                        return Err(ParseError::new(
                            t.start,
                            format!("a string literal longer than {} bytes", self.limits.max_literal),
                        ));
                    }
                    s.extend_from_slice(more);
                    self.pos += 1;
                }
                Kind::Lit(Lit::Str(s))
            }
            Tok::Op("(") | Tok::Op("[") => {
                let list = t.tok == Tok::Op("[");
                let close = if list { "]" } else { ")" };
                let mut items = Vec::new();
                let mut comma = false;
                while !self.is_op(close) {
                    if items.len() >= self.limits.max_items {
                        return Err(ParseError::new(
                            t.start,
                            format!("a list of more than {} items", self.limits.max_items),
                        ));
                    }
                    items.push(self.expr_at(level)?);
                    comma = self.eat_op(",");
                    if !comma {
                        break;
                    }
                }
                self.expect_op(close, if list { "to close the list" } else { "to close the parenthesis" })?;
                if !list && items.len() == 1 && !comma {
                    // A parenthesized expression, not a tuple.
                    let mut inner = items.pop().unwrap_or_else(|| unreachable!());
                    inner.start = t.start as u32;
                    inner.end = self.end() as u32;
                    return Ok(inner);
                }
                Kind::List(items)
            }
            Tok::Name(n) => match n.as_str() {
                "True" => Kind::Lit(Lit::Bool(true)),
                "False" => Kind::Lit(Lit::Bool(false)),
                "None" => Kind::Lit(Lit::None),
                "topic" => Kind::Topic,
                "m" => Kind::M,
                "t" => Kind::T,
                "re" => Kind::Re,
                "and" | "or" | "not" | "in" | "is" | "if" | "else" | "lambda" => {
                    return Err(ParseError::new(t.start, format!("unexpected `{n}`")))
                }
                _ => match Builtin::named(&n) {
                    Some(Builtin::Import) if self.eat_op("(") => {
                        let args = self.args(level)?;
                        if !matches!(&args[..], [Node { kind: Kind::Lit(Lit::Str(m)), .. }] if m == b"re") {
                            return Err(ParseError::new(
                                t.start,
                                "only the re module can be imported: __import__('re')",
                            ));
                        }
                        Kind::Re
                    }
                    Some(f) if self.eat_op("(") => Kind::Call(f, self.args(level)?),
                    Some(_) => return Err(ParseError::new(t.start, format!("{n} must be called: {n}(…)"))),
                    None => {
                        return Err(ParseError::new(
                            t.start,
                            format!("unknown name {n} (the names are topic, m, t, re and the functions {BUILTINS})"),
                        ))
                    }
                },
            },
            _ => return Err(ParseError::new(t.start, format!("unexpected {}", self.describe(&t)))),
        };
        self.node(kind, t.start, self.end())
    }
}
