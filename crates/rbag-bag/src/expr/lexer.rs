//! Tokens of a filter expression: Python's literals, names and operators, nothing more.

use super::{Limits, ParseError};

/// One token and where it starts and ends (byte offsets into the expression).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Int(i128),
    Float(f64),
    Str(Vec<u8>),
    Name(String),
    /// An operator or punctuation (`==`, `(`, `.`, `**`, …).
    Op(&'static str),
    End,
}

/// Operators, longest first so that `**` is not read as `*` `*`.
const OPS: &[&str] = &[
    "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%", "<", ">", "(", ")", "[", "]", ",", ".",
    ":", "~", "&", "|", "^",
];

/// Splits `src` into tokens, ending with [`Tok::End`].
pub(crate) fn tokens(src: &str, limits: &Limits) -> Result<Vec<Token>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if c == b'\'' || c == b'"' {
            let (s, end) = string(src, i, false, limits)?;
            i = end;
            Tok::Str(s)
        } else if (c == b'r' || c == b'R') && matches!(b.get(i + 1), Some(b'\'' | b'"')) {
            let (s, end) = string(src, i + 1, true, limits)?;
            i = end;
            Tok::Str(s)
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (t, end) = number(src, i, limits)?;
            i = end;
            t
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i - start > limits.max_name {
                return Err(ParseError::new(start, format!("a name longer than {} characters", limits.max_name)));
            }
            Tok::Name(src[start..i].to_string())
        } else if let Some(op) = OPS.iter().find(|op| b[i..].starts_with(op.as_bytes())) {
            i += op.len();
            Tok::Op(op)
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            let what = match ch {
                '=' => "`=` (compare with `==`)".to_string(),
                '!' => "`!` (negate with `not`)".to_string(),
                '&' | '|' => format!("`{ch}`"),
                _ => format!("{ch:?}"),
            };
            return Err(ParseError::new(start, format!("unexpected {what}")));
        };
        out.push(Token { tok, start, end: i });
    }
    out.push(Token { tok: Tok::End, start: b.len(), end: b.len() });
    Ok(out)
}

/// A quoted string from the quote at `at`; returns its bytes and the offset after it.
fn string(src: &str, at: usize, raw: bool, limits: &Limits) -> Result<(Vec<u8>, usize), ParseError> {
    let b = src.as_bytes();
    let quote = b[at];
    if b[at..].starts_with(&[quote, quote, quote]) {
        return Err(ParseError::new(at, "triple-quoted strings are not supported"));
    }
    let mut out = Vec::new();
    let mut i = at + 1;
    loop {
        let Some(&c) = b.get(i) else {
            return Err(ParseError::new(at, "this string is not closed"));
        };
        if out.len() > limits.max_literal {
            return Err(ParseError::new(at, format!("a string literal longer than {} bytes", limits.max_literal)));
        }
        if c == quote {
            return Ok((out, i + 1));
        }
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = b.get(i + 1) else {
            return Err(ParseError::new(at, "this string is not closed"));
        };
        if raw {
            // Python keeps the backslash in raw strings, and `\'` does not end them.
            out.extend_from_slice(&[b'\\', e]);
            i += 2;
            continue;
        }
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'0' => out.push(0),
            b'\\' | b'\'' | b'"' => out.push(e),
            b'\n' => {}
            b'x' | b'u' | b'U' => {
                let n = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = src.get(i..i + n).filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
                let code = hex.and_then(|h| u32::from_str_radix(h, 16).ok()).and_then(char::from_u32);
                let Some(ch) = code else {
                    return Err(ParseError::new(i - 2, format!("a bad \\{} escape", e as char)));
                };
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i += n;
            }
            // Python keeps unknown escapes as they are (`\d` is two characters).
            _ => out.extend_from_slice(&[b'\\', e]),
        }
    }
}

/// A number from `at`: decimal, hex, octal or binary integers, or a float.
fn number(src: &str, at: usize, limits: &Limits) -> Result<(Tok, usize), ParseError> {
    let b = src.as_bytes();
    let mut i = at;
    let radix = match (b[i], b.get(i + 1).map(u8::to_ascii_lowercase)) {
        (b'0', Some(b'x')) => 16,
        (b'0', Some(b'o')) => 8,
        (b'0', Some(b'b')) => 2,
        _ => 10,
    };
    let mut float = false;
    if radix != 10 {
        i += 2;
        while i < b.len() && (b[i].is_ascii_hexdigit() || b[i] == b'_') {
            i += 1;
        }
    } else {
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            float = true;
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if b.get(j).is_some_and(u8::is_ascii_digit) {
                float = true;
                i = j;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
    }
    if i - at > limits.max_number {
        return Err(ParseError::new(at, format!("a number literal longer than {} characters", limits.max_number)));
    }
    if b.get(i).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') {
        return Err(ParseError::new(at, "a bad number"));
    }
    let text: String = src[at..i].chars().filter(|&c| c != '_').collect();
    let tok = if float {
        Tok::Float(text.parse().map_err(|_| ParseError::new(at, "a bad number"))?)
    } else if radix == 10 {
        if text.len() > 1 && text.starts_with('0') && text.bytes().any(|c| c != b'0') {
            return Err(ParseError::new(at, "leading zeros in a decimal integer (Python writes octal as 0o…)"));
        }
        Tok::Int(text.parse().map_err(|_| ParseError::new(at, "an integer too large (at most 2**127 - 1)"))?)
    } else {
        let digits = &text[2..];
        Tok::Int(i128::from_str_radix(digits, radix).map_err(|_| ParseError::new(at, "a bad or too large integer"))?)
    };
    Ok((tok, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokens(s, &Limits::default()).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn literals_and_operators() {
        assert_eq!(
            toks("m.x**2 >= 1_000 and r'\\d' != \"a\\n\""),
            vec![
                Tok::Name("m".into()),
                Tok::Op("."),
                Tok::Name("x".into()),
                Tok::Op("**"),
                Tok::Int(2),
                Tok::Op(">="),
                Tok::Int(1000),
                Tok::Name("and".into()),
                Tok::Str(b"\\d".to_vec()),
                Tok::Op("!="),
                Tok::Str(b"a\n".to_vec()),
                Tok::End
            ]
        );
        assert_eq!(toks(".5 1e3 0x1F 1.")[..4], [Tok::Float(0.5), Tok::Float(1000.0), Tok::Int(31), Tok::Float(1.0)]);
        assert_eq!(toks("'\\u00e9'")[0], Tok::Str("é".as_bytes().to_vec()));
    }

    #[test]
    fn bad_input_is_located() {
        let e = tokens("m.x = 1", &Limits::default()).unwrap_err();
        assert_eq!(e.pos, 4);
        assert!(e.msg.contains("=="), "{e:?}");
        let e = tokens("'abc", &Limits::default()).unwrap_err();
        assert!(e.msg.contains("not closed"));
        let e = tokens(&"9".repeat(70), &Limits::default()).unwrap_err();
        assert!(e.msg.contains("longer than"), "{e:?}");
    }
}
