//! A bag's summary as text, laid out as `rosbag info` prints it (with `ros2 bag info`'s
//! services apart): what `rbag info` prints and what a Python `print(bag)` shows.

use std::fmt;

use crate::info::{BagInfo, TopicInfo};
use crate::units::{format_duration, format_frequency, format_size, format_time};

impl fmt::Display for BagInfo {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_text(out, self)
    }
}

fn write_text(out: &mut fmt::Formatter<'_>, info: &BagInfo) -> fmt::Result {
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
        _ => " (UNINDEXED: the recording never closed it; a reindex repairs it)",
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
    // does, under the service's name and type.
    let (services, topics): (Vec<&TopicInfo>, Vec<&TopicInfo>) =
        info.topics.iter().partition(|t| t.name.ends_with("/_service_event") && t.message_type.ends_with("_Event"));
    write_topics(out, "topics", &topics, |t| (t.name.clone(), t.message_type.clone()))?;
    write_topics(out, "services", &services, |t| {
        (t.name.trim_end_matches("/_service_event").to_string(), t.message_type.trim_end_matches("_Event").to_string())
    })?;
    // Messages on connections the bag never declares: counted above, with no topic or type.
    for (i, u) in info.undeclared.iter().enumerate() {
        let l = if i == 0 { label("undeclared") } else { " ".repeat(14) };
        let unit = if u.message_count == 1 { "message" } else { "messages" };
        writeln!(out, "{l}{} {unit} on connection {}, which the bag never declares", u.message_count, u.connection)?;
    }
    Ok(())
}

/// One aligned line per topic: name, count, frequency, type, format, size, connections.
fn write_topics(
    out: &mut fmt::Formatter<'_>,
    heading: &str,
    list: &[&TopicInfo],
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
        let size =
            t.size_bytes.filter(|_| t.encoding != "ros1").map(|b| format!(" {}", format_size(b))).unwrap_or_default();
        writeln!(
            out,
            "{l}{name:<name_width$} {:>count_width$} {unit}{freq} : {ty}{format}{size}{conns}",
            t.message_count
        )?;
    }
    Ok(())
}
