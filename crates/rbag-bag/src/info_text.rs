//! A bag's summary as text, laid out as `rosbag info` prints it (with `ros2 bag info`'s
//! services apart): what `rbag info` prints and what a Python `print(bag)` shows.

use std::fmt;

use crate::info::{ActionInfo, BagInfo, QosInfo, TopicInfo};
use crate::units::{format_duration, format_frequency, format_size, format_time};

impl fmt::Display for BagInfo {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_text(out, self, false)
    }
}

impl BagInfo {
    /// The text summary; `verbose` adds each topic's QoS profiles and definition hashes, each
    /// service's request and response counts (when [`crate::InfoOptions::verbose`] filled
    /// them) and the stored definitions.
    pub fn to_text(&self, verbose: bool) -> String {
        struct Text<'a>(&'a BagInfo, bool);
        impl fmt::Display for Text<'_> {
            fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_text(out, self.0, self.1)
            }
        }
        Text(self, verbose).to_string()
    }

    /// The summary as `rosbag info -y` prints it: a YAML dict with `path`, `version`,
    /// `duration`, `start`, `end`, `size`, `messages`, `indexed`, `compression` (and
    /// `uncompressed`, `compressed` when chunks are compressed), `types` (`type`, `md5`) and
    /// `topics` (`topic`, `type`, `messages`, `connections` when more than one, `frequency`
    /// when known).
    pub fn to_rosbag_yaml(&self) -> String {
        let mut out = String::new();
        for (k, v) in rosbag_tree(self) {
            match v {
                Node::Scalar(s) => out.push_str(&format!("{k}: {}\n", yaml_scalar(&s))),
                Node::List(items) => {
                    out.push_str(&format!("{k}:\n"));
                    for item in items {
                        for (i, (ik, iv)) in item.iter().enumerate() {
                            let lead = if i == 0 { "    - " } else { "      " };
                            out.push_str(&format!("{lead}{ik}: {}\n", yaml_scalar(iv)));
                        }
                    }
                }
            }
        }
        out
    }

    /// One key of [`BagInfo::to_rosbag_yaml`], printed as `rosbag info -y -k KEY` prints it:
    /// `duration`, `topics`, `topics[0].type`, `types[-1].md5`. `None` for a key the summary
    /// does not have.
    pub fn rosbag_yaml_key(&self, key: &str) -> Option<String> {
        let tree = rosbag_tree(self);
        let mut parts = key.trim().split('.');
        let (name, index) = split_index(parts.next()?)?;
        let node = &tree.iter().find(|(k, _)| *k == name)?.1;
        match (node, index) {
            (Node::Scalar(s), None) => parts.next().is_none().then(|| py_str(s)),
            (Node::List(items), None) => {
                if parts.next().is_some() {
                    return None;
                }
                let mut out = String::new();
                for item in items {
                    let fields: Vec<String> = item.iter().map(|(k, v)| format!("{k}: {}", py_str(v))).collect();
                    out.push_str(&format!("- {}\n", fields.join("\n  ")));
                }
                Some(out)
            }
            (Node::List(items), Some(i)) => {
                let i = if i < 0 { items.len() as i64 + i } else { i };
                let item = items.get(usize::try_from(i).ok()?)?;
                match parts.next() {
                    None => {
                        Some(item.iter().map(|(k, v)| format!("{k}: {}", py_str(v))).collect::<Vec<_>>().join("\n"))
                    }
                    Some(field) => {
                        let v = &item.iter().find(|(k, _)| *k == field)?.1;
                        parts.next().is_none().then(|| py_str(v))
                    }
                }
            }
            (Node::Scalar(_), Some(_)) => None,
        }
    }

    /// The top-level keys of [`BagInfo::to_rosbag_yaml`], for an error naming what exists.
    pub fn rosbag_yaml_keys(&self) -> Vec<&'static str> {
        rosbag_tree(self).into_iter().map(|(k, _)| k).collect()
    }
}

enum Node {
    Scalar(String),
    List(Vec<Vec<(&'static str, String)>>),
}

/// The dict `rosbag info -y` prints, values as their YAML text.
fn rosbag_tree(info: &BagInfo) -> Vec<(&'static str, Node)> {
    // Seconds as rospy's `Time.to_sec()` makes them, printed with `%.6f`, so that the digits
    // (rounding included) are rosbag's.
    let to_sec = |ns: u64| (ns / 1_000_000_000) as f64 + (ns % 1_000_000_000) as f64 * 1e-9;
    let (start, end) = (to_sec(info.start_ns.unwrap_or(0)), to_sec(info.end_ns.unwrap_or(0)));
    let mut t = vec![
        ("path", Node::Scalar(info.path.clone())),
        ("version", Node::Scalar(info.version.clone())),
        ("duration", Node::Scalar(format!("{:.6}", end - start))),
        ("start", Node::Scalar(format!("{start:.6}"))),
        ("end", Node::Scalar(format!("{end:.6}"))),
        ("size", Node::Scalar(info.size_bytes.to_string())),
        ("messages", Node::Scalar(info.message_count.to_string())),
        ("indexed", Node::Scalar(if info.indexed { "True" } else { "False" }.into())),
    ];
    // The algorithm of most chunks, as rosbag picks it.
    let main = info.compression.iter().max_by(|a, b| a.chunks.cmp(&b.chunks).then_with(|| a.name.cmp(&b.name)));
    t.push(("compression", Node::Scalar(main.map_or("none".into(), |c| c.name.clone()))));
    if info.compression.iter().any(|c| c.name != "none") {
        let u: u64 = info.compression.iter().map(|c| c.uncompressed_bytes).sum();
        let z: u64 = info.compression.iter().map(|c| c.compressed_bytes).sum();
        t.push(("uncompressed", Node::Scalar(u.to_string())));
        t.push(("compressed", Node::Scalar(z.to_string())));
    }
    let types = info
        .types
        .iter()
        .map(|ty| {
            let mut item = vec![("type", ty.name.clone())];
            if let Some(md5) = &ty.md5sum {
                item.push(("md5", md5.clone()));
            }
            item
        })
        .collect();
    t.push(("types", Node::List(types)));
    let topics = info
        .topics
        .iter()
        .map(|tp| {
            let mut item = vec![
                ("topic", tp.name.clone()),
                ("type", tp.message_type.clone()),
                ("messages", tp.message_count.to_string()),
            ];
            if tp.connections > 1 {
                item.push(("connections", tp.connections.to_string()));
            }
            if let Some(f) = tp.frequency_hz {
                item.push(("frequency", format!("{f:.4}")));
            }
            item
        })
        .collect();
    t.push(("topics", Node::List(topics)));
    t
}

/// `name` or `name[i]`.
fn split_index(part: &str) -> Option<(&str, Option<i64>)> {
    match part.split_once('[') {
        None => Some((part, None)),
        Some((name, rest)) => Some((name, Some(rest.strip_suffix(']')?.trim().parse().ok()?))),
    }
}

/// A scalar as Python's `str()` shows it after `yaml.safe_load`, as `rosbag info -k` does:
/// `2.0`, `3.1`, `True`.
fn py_str(s: &str) -> String {
    if s.contains('.') && !s.contains(|c: char| c.is_ascii_alphabetic()) {
        if let Ok(f) = s.parse::<f64>() {
            let v = f.to_string();
            return if v.contains('.') { v } else { format!("{v}.0") };
        }
    }
    s.to_string()
}

/// A plain YAML scalar, double-quoted when plain would change its meaning.
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@` ".contains(c))
        && !s.ends_with(' ')
        && !s.contains(|c: char| c.is_control());
    if plain {
        s.to_string()
    } else {
        let mut q = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                c if c.is_control() => q.push_str(&format!("\\u{:04x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    }
}

fn write_text(out: &mut fmt::Formatter<'_>, info: &BagInfo, verbose: bool) -> fmt::Result {
    let label = |s: &str| format!("{:<14}", format!("{s}:"));
    writeln!(out, "{}{}", label("path"), info.path)?;
    if info.files.len() > 1 || info.files.first().is_some_and(|f| *f != info.path) {
        for (i, f) in info.files.iter().enumerate() {
            let l = if i == 0 { label("files") } else { " ".repeat(14) };
            let name = std::path::Path::new(f).file_name().map_or(f.clone(), |n| n.to_string_lossy().into_owned());
            writeln!(out, "{l}{name}")?;
        }
    }
    writeln!(out, "{}{}", label("version"), info.version)?;
    let not_indexed = match info.storage {
        "mcap" => " (NO SUMMARY: the file was scanned)",
        _ => " (UNINDEXED: its index is missing or cut short; a reindex repairs it)",
    };
    writeln!(out, "{}{}{}", label("storage"), info.storage, if info.indexed { "" } else { not_indexed })?;
    for (key, name) in [
        ("profile", "profile"),
        ("metadata_version", "metadata"),
        ("ros_distro", "ros distro"),
        ("compression", "rosbag2 zstd"),
    ] {
        if let Some(v) = info.properties.get(key).filter(|v| !v.is_empty()) {
            writeln!(out, "{}{}", label(name), v)?;
        }
    }
    writeln!(out, "{}{}", label("duration"), format_duration(info.duration_ns))?;
    if let (Some(s), Some(e)) = (info.start_ns, info.end_ns) {
        writeln!(out, "{}{}", label("start"), format_time(s))?;
        writeln!(out, "{}{}", label("end"), format_time(e))?;
    }
    writeln!(out, "{}{}", label("size"), format_size(info.size_bytes))?;
    writeln!(out, "{}{}", label("messages"), info.message_count)?;
    let total: u64 = info.compression.iter().map(|c| c.chunks).sum();
    for (i, c) in info.compression.iter().enumerate() {
        let ratio = if c.uncompressed_bytes > 0 && c.name != "none" {
            format!("; {:.2}%", 100.0 * c.compressed_bytes as f64 / c.uncompressed_bytes as f64)
        } else {
            String::new()
        };
        let l = if i == 0 { label("compression") } else { " ".repeat(14) };
        writeln!(out, "{l}{} [{}/{} chunks{ratio}]", c.name, c.chunks, total)?;
    }
    if info.compression.iter().any(|c| c.name != "none") {
        let (u, z): (u64, u64) =
            info.compression.iter().fold((0, 0), |a, c| (a.0 + c.uncompressed_bytes, a.1 + c.compressed_bytes));
        let secs = info.duration_ns as f64 / 1e9;
        let rate =
            |b: u64| if secs > 0.0 { format!(" @ {}/s", format_size((b as f64 / secs) as u64)) } else { String::new() };
        writeln!(out, "{}{}{}", label("uncompressed"), format_size(u), rate(u))?;
        writeln!(out, "{}{}{}", label("compressed"), format_size(z), rate(z))?;
    }
    let type_width = info.types.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for (i, t) in info.types.iter().enumerate() {
        let l = if i == 0 { label("types") } else { " ".repeat(14) };
        match &t.md5sum {
            Some(md5) => writeln!(out, "{l}{:<type_width$} [{md5}]", t.name)?,
            None => writeln!(out, "{l}{}", t.name)?,
        }
    }
    // Service introspection topics (`/srv/_service_event`) are listed apart, as `ros2 bag info`
    // does, under the service's name and type; so are actions' five topics, under the action.
    let (services, topics): (Vec<&TopicInfo>, Vec<&TopicInfo>) =
        info.topics.iter().filter(|t| t.action_part().is_none()).partition(|t| t.is_service_event());
    write_topics(out, "topics", &topics, verbose, |t| (t.name.clone(), t.message_type.clone()))?;
    write_topics(out, "services", &services, verbose, |t| {
        (t.name.trim_end_matches("/_service_event").to_string(), t.message_type.trim_end_matches("_Event").to_string())
    })?;
    write_actions(out, &info.actions)?;
    if info.topics.iter().any(|t| t.size_estimated) {
        writeln!(out, "{}~ estimated from chunk sizes and per-chunk counts", label("sizes"))?;
    }
    if verbose {
        let width = info.definitions.iter().map(|d| d.name.len()).max().unwrap_or(0);
        for (i, d) in info.definitions.iter().enumerate() {
            let l = if i == 0 { label("definitions") } else { " ".repeat(14) };
            let enc = if d.encoding.is_empty() { "unknown dialect".to_string() } else { d.encoding.clone() };
            let hash = d.hash.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
            let stored = if d.length == 0 { " (no text stored)".to_string() } else { format!(" ({} bytes)", d.length) };
            writeln!(out, "{l}{:<width$} [{enc}]{hash}{stored}", d.name)?;
        }
    }
    // Messages on connections the bag never declares: counted above, with no topic or type.
    for (i, u) in info.undeclared.iter().enumerate() {
        let l = if i == 0 { label("undeclared") } else { " ".repeat(14) };
        let unit = if u.message_count == 1 { "message" } else { "messages" };
        writeln!(out, "{l}{} {unit} on connection {}, which the bag never declares", u.message_count, u.connection)?;
    }
    Ok(())
}

/// Per action a line (name, type, format, size, parts) and a line per part: feedback and
/// status with their message counts, send_goal, cancel_goal and get_result with their event
/// counts and, when verbose filled them, their request and response counts.
fn write_actions(out: &mut fmt::Formatter<'_>, actions: &[ActionInfo]) -> fmt::Result {
    let label = format!("{:<14}", "actions:");
    let name_width = actions.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for (i, a) in actions.iter().enumerate() {
        let l = if i == 0 { label.clone() } else { " ".repeat(14) };
        let ty = if a.action_type.is_empty() { "(type unknown)" } else { &a.action_type };
        let format = if a.encoding.is_empty() { String::new() } else { format!(" [{}]", a.encoding) };
        let size = a.size_bytes.map(|b| format!(" {}", format_size(b))).unwrap_or_default();
        let unit = if a.message_count == 1 { "msg " } else { "msgs" };
        writeln!(
            out,
            "{l}{:<name_width$} {} {unit} : {ty}{format}{size} ({} topics, {} services)",
            a.name,
            a.message_count,
            a.topics.len(),
            a.services.len()
        )?;
        let pad = " ".repeat(16);
        let count_width = a
            .topics
            .iter()
            .map(|t| t.message_count)
            .chain(a.services.iter().map(|s| s.event_count))
            .map(|n| n.to_string().len())
            .max()
            .unwrap_or(0);
        for t in &a.topics {
            let unit = if t.message_count == 1 { "msg" } else { "msgs" };
            writeln!(out, "{pad}topic   {:<11} {:>count_width$} {unit}", t.name, t.message_count)?;
        }
        for s in &a.services {
            let unit = if s.event_count == 1 { "event" } else { "events" };
            let calls = match (s.request_count, s.response_count) {
                (Some(req), Some(resp)) => format!(" (requests: {req}, responses: {resp})"),
                _ => String::new(),
            };
            writeln!(out, "{pad}service {:<11} {:>count_width$} {unit}{calls}", s.name, s.event_count)?;
        }
    }
    Ok(())
}

/// One aligned line per topic: name, count, frequency, type, format, size, connections.
fn write_topics(
    out: &mut fmt::Formatter<'_>,
    heading: &str,
    list: &[&TopicInfo],
    verbose: bool,
    names: impl Fn(&TopicInfo) -> (String, String),
) -> fmt::Result {
    let label = format!("{:<14}", format!("{heading}:"));
    let rows: Vec<(String, String, &TopicInfo)> = list
        .iter()
        .map(|t| {
            let (name, ty) = names(t);
            (name, ty, *t)
        })
        .collect();
    let name_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let count_width = rows.iter().map(|r| r.2.message_count.to_string().len()).max().unwrap_or(0);
    let freq_width = rows.iter().filter_map(|r| r.2.frequency_hz).map(|f| format_frequency(f).len()).max().unwrap_or(0);
    for (i, (name, ty, t)) in rows.iter().enumerate() {
        let l = if i == 0 { label.clone() } else { " ".repeat(14) };
        let unit = if t.message_count == 1 { "msg " } else { "msgs" };
        let freq = match t.frequency_hz {
            Some(f) => format!(" @ {:>freq_width$}", format_frequency(f)),
            None if freq_width > 0 => " ".repeat(freq_width + 3),
            None => String::new(),
        };
        let conns = if t.connections > 1 { format!(" ({} connections)", t.connections) } else { String::new() };
        let format =
            if t.encoding == "ros1" || t.encoding.is_empty() { String::new() } else { format!(" [{}]", t.encoding) };
        let approx = if t.size_estimated { "~" } else { "" };
        let size = t.size_bytes.map(|b| format!(" {approx}{}", format_size(b))).unwrap_or_default();
        writeln!(
            out,
            "{l}{name:<name_width$} {:>count_width$} {unit}{freq} : {ty}{format}{size}{conns}",
            t.message_count
        )?;
        if verbose {
            let pad = " ".repeat(16);
            if let (Some(req), Some(resp)) = (t.service_requests, t.service_responses) {
                writeln!(out, "{pad}requests: {req}, responses: {resp}")?;
            }
            for q in &t.qos {
                writeln!(out, "{pad}qos: {}", qos_text(q))?;
            }
            if !t.definition_hashes.is_empty() {
                writeln!(out, "{pad}hash: {}", t.definition_hashes.join(", "))?;
            }
        }
    }
    Ok(())
}

/// A QoS profile on one line: reliability, durability, history (depth), and the durations
/// that are set.
fn qos_text(q: &QosInfo) -> String {
    let history = match q.history.as_str() {
        "keep_last" => format!("keep_last {}", q.depth),
        "keep_all" => "keep_all".to_string(),
        other => format!("history {other}"),
    };
    let mut s = format!("{}, {}, {history}", q.reliability, q.durability);
    for (name, ns) in
        [("deadline", q.deadline_ns), ("lifespan", q.lifespan_ns), ("liveliness lease", q.liveliness_lease_duration_ns)]
    {
        if ns > 0 && ns < i64::MAX {
            s.push_str(&format!(", {name} {}", format_duration(ns as u64)));
        }
    }
    if q.liveliness != "system_default" && q.liveliness != "automatic" {
        s.push_str(&format!(", liveliness {}", q.liveliness));
    }
    s
}
