//! The definition text bags carry: the type's own definition, then each dependency after a line
//! of `=` and a `KIND: name` line: `MSG:` in ROS 1 `message_definition` and rosbag2 `ros2msg`;
//! `IDL:` (and, from newer rosbag2, `MSG:`/`SRV:`/`ACTION:` mixed) in `ros2idl`.

use crate::{Error, Result};

/// One block of concatenated text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// The header kind: `""` for the root text before any separator, else `MSG`, `IDL`, `SRV`
    /// or `ACTION`.
    pub kind: &'static str,
    /// The root's name, or the name the header gives (as written).
    pub name: String,
    /// The block's definition text.
    pub body: &'a str,
    /// Lines of `text` before `body` (to turn a line in the body into one in the whole text).
    pub first_line: usize,
}

/// Splits concatenated text at the `=`-line + `KIND: name` headers: the root block first
/// (named `root`, possibly blank), then one block per header.
pub fn blocks<'a>(root: &str, text: &'a str) -> Result<Vec<Block<'a>>> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = Vec::new();
    let mut current = Block { kind: "", name: root.to_string(), body: "", first_line: 0 };
    let (mut start, mut pos, mut i) = (0, 0, 0);
    while i < lines.len() {
        let t = lines[i].trim();
        if t.len() >= 3 && t.bytes().all(|b| b == b'=') {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            let header = next.split_once(':').map(|(k, n)| (k.trim(), n.trim())).filter(|(_, n)| !n.is_empty());
            let kind = match header.map(|h| h.0) {
                Some("MSG") => "MSG",
                Some("IDL") => "IDL",
                Some("SRV") => "SRV",
                Some("ACTION") => "ACTION",
                _ => {
                    return Err(Error::Parse {
                        what: root.to_string(),
                        line: i + 2,
                        reason: format!(
                            "a separator must be followed by `MSG: pkg/Type` (or IDL:, SRV:, ACTION:), not {next:?}"
                        ),
                    })
                }
            };
            current.body = &text[start..pos];
            out.push(current);
            pos += lines[i].len() + lines.get(i + 1).map_or(0, |l| l.len());
            start = pos;
            current = Block { kind, name: header.map_or("", |h| h.1).to_string(), body: "", first_line: i + 2 };
            i += 2;
            continue;
        }
        pos += lines[i].len();
        i += 1;
    }
    current.body = &text[start..];
    out.push(current);
    Ok(out)
}

/// Splits concatenated definition text into `(full name, .msg text)` pairs, the root first
/// (named `root`). Dependency names are as written (`pkg/Type` or `pkg/msg/Type`).
/// Only `MSG:` blocks belong in this form.
pub fn split<'a>(root: &str, text: &'a str) -> Result<Vec<(String, &'a str)>> {
    blocks(root, text)?
        .into_iter()
        .map(|b| match b.kind {
            "" | "MSG" => Ok((b.name, b.body)),
            kind => Err(Error::Parse {
                what: root.to_string(),
                line: b.first_line,
                reason: format!("a separator must be followed by `MSG: pkg/Type`, not `{kind}:`"),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_then_dependencies() {
        let text = "Header header\nPoint p\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\n================================================================================\nMSG: geometry_msgs/msg/Point\nfloat64 x\n";
        let parts = split("geometry_msgs/PointStamped", text).unwrap();
        let names: Vec<&str> = parts.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(names, ["geometry_msgs/PointStamped", "std_msgs/Header", "geometry_msgs/msg/Point"]);
        assert_eq!(parts[1].1, "uint32 seq\n");
        assert_eq!(parts[2].1, "float64 x\n");
        assert!(split("a/B", "x y\n=====\nnot msg\n").is_err());
    }
}
