//! The definition text bags carry: the type's own `.msg`, then each dependency after a line of
//! `=` and a `MSG: pkg/Type` line (ROS 1 `message_definition`, rosbag2 `ros2msg`).

use crate::{Error, Result};

/// Splits concatenated definition text into `(full name, .msg text)` pairs, the root first
/// (named `root`). Dependency names are as written (`pkg/Type` or `pkg/msg/Type`).
pub fn split<'a>(root: &str, text: &'a str) -> Result<Vec<(String, &'a str)>> {
    let mut out = Vec::new();
    let mut name = root.to_string();
    let mut start = 0;
    let mut pos = 0;
    let mut line_no = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        line_no += 1;
        let t = line.trim();
        if t.len() >= 3 && t.bytes().all(|b| b == b'=') {
            let next = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
            let dep = next.strip_prefix("MSG:").map(str::trim).ok_or_else(|| Error::Parse {
                what: root.to_string(),
                line: line_no + 1,
                reason: format!("a separator must be followed by `MSG: pkg/Type`, not {next:?}"),
            })?;
            out.push((name, &text[start..pos]));
            name = dep.to_string();
            pos += line.len() + lines.get(i + 1).map_or(0, |l| l.len());
            start = pos;
            i += 2;
            line_no += 1;
            continue;
        }
        pos += line.len();
        i += 1;
    }
    out.push((name, &text[start..]));
    Ok(out)
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
