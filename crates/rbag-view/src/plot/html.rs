//! A chart as one self-contained HTML file: the data as JSON and the drawing code inline, so it
//! opens from disk or an e-mail with no network.

use rbag_bag::text::TimeFormat;

use super::{Chart, XAxis};
use crate::downsample::m4;

/// The interactive chart code, shared with `rbag serve`'s page.
pub const CHART_JS: &str = include_str!("chart.js");

/// Beyond this many points in all, each line is reduced (first, smallest, largest and last
/// point per 1/[`HTML_COLUMNS`] of the x range) so the file stays a few tens of MB at most.
pub const HTML_MAX_POINTS: usize = 2_000_000;
/// Columns a line is reduced to beyond [`HTML_MAX_POINTS`]: zooming in 20x still shows every
/// pixel column's extremes on a wide screen.
pub const HTML_COLUMNS: usize = 40_000;

/// The chart as JSON for [`CHART_JS`]: non-finite values become `null` (a gap). Written
/// directly (numbers by ryu, the shortest form that reads back exactly): a million points take
/// tens of milliseconds, where a `serde_json::Value` tree took half a second.
pub fn chart_json(chart: &Chart) -> String {
    let reduce = chart.points() > HTML_MAX_POINTS && matches!(chart.x, XAxis::Time { .. });
    let (x0, x1) = chart.x_range();
    let (kind, origin_ms) = match chart.x {
        XAxis::Time { format: TimeFormat::Iso, origin } => ("iso", origin as f64 / 1e6),
        XAxis::Time { format: TimeFormat::Ns, .. } => ("ns", 0.0),
        XAxis::Time { .. } => ("time", 0.0),
        XAxis::Field => ("field", 0.0),
    };
    let text = |s: &str| serde_json::Value::from(s).to_string();
    let mut out = String::with_capacity(64 + chart.points() * 40);
    out.push_str(&format!(
        "{{\"title\":{},\"x_label\":{},\"x_kind\":\"{kind}\",\"origin_ms\":",
        text(&chart.title),
        text(&chart.x_label)
    ));
    push_number(&mut out, origin_ms);
    out.push_str(&format!(",\"reduced\":{reduce},\"panels\":["));
    for (p, panel) in chart.panels.iter().enumerate() {
        out.push_str(if p == 0 { "{\"lines\":[" } else { ",{\"lines\":[" });
        for (l, line) in panel.lines.iter().enumerate() {
            let keep: Vec<usize> = if reduce {
                m4(&line.xs, &line.ys, x0, x1, HTML_COLUMNS)
            } else {
                (0..line.xs.len().min(line.ys.len())).collect()
            };
            out.push_str(if l == 0 { "{\"label\":" } else { ",{\"label\":" });
            out.push_str(&text(&line.label));
            for (name, values) in [("x", &line.xs), ("y", &line.ys)] {
                out.push_str(&format!(",\"{name}\":["));
                for (i, &k) in keep.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_number(&mut out, values[k]);
                }
                out.push(']');
            }
            out.push('}');
        }
        out.push_str("]}");
    }
    out.push_str("]}");
    out
}

/// Appends a JSON number, or `null` for NaN and infinities.
fn push_number(out: &mut String, v: f64) {
    if v.is_finite() {
        out.push_str(ryu::Buffer::new().format_finite(v));
    } else {
        out.push_str("null");
    }
}

/// The chart as a self-contained HTML page.
pub fn html(chart: &Chart) -> String {
    // `</` inside a script element would end it: JSON allows `<\/` for `</`.
    let data = chart_json(chart).replace("</", "<\\/");
    let title = escape(&chart.title);
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<meta name="generator" content="rbag plot">
<style>
body {{ font-family: sans-serif; margin: 16px; background: #fff; }}
#chart {{ max-width: 1400px; }}
p.help {{ color: #666; font-size: 12px; }}
</style>
</head>
<body>
<div id="chart"></div>
<p class="help">Drag across the chart to zoom in; double-click to zoom out.</p>
<script type="application/json" id="rbag-chart">{data}</script>
<script>
{CHART_JS}
</script>
<script>
window.rbagChartHandle = rbagChart(document.getElementById("chart"), JSON.parse(document.getElementById("rbag-chart").textContent));
</script>
</body>
</html>
"#
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
