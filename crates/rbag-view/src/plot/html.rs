//! A chart as one self-contained HTML file: the data as JSON and the drawing code inline, so it
//! opens from disk or an e-mail with no network.

use rbag_bag::text::TimeFormat;
use serde_json::{json, Value};

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

/// The chart as JSON for [`CHART_JS`]: non-finite values become `null` (a gap).
pub fn chart_json(chart: &Chart) -> Value {
    let reduce = chart.points() > HTML_MAX_POINTS && matches!(chart.x, XAxis::Time { .. });
    let (x0, x1) = chart.x_range();
    let finite = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
    let panels: Vec<Value> = chart
        .panels
        .iter()
        .map(|p| {
            let lines: Vec<Value> = p
                .lines
                .iter()
                .map(|l| {
                    let keep: Vec<usize> = if reduce {
                        m4(&l.xs, &l.ys, x0, x1, HTML_COLUMNS)
                    } else {
                        (0..l.xs.len().min(l.ys.len())).collect()
                    };
                    json!({
                        "label": l.label,
                        "x": keep.iter().map(|&k| finite(l.xs[k])).collect::<Vec<_>>(),
                        "y": keep.iter().map(|&k| finite(l.ys[k])).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({ "lines": lines })
        })
        .collect();
    let (kind, origin_ms) = match chart.x {
        XAxis::Time { format: TimeFormat::Iso, origin } => ("iso", origin as f64 / 1e6),
        XAxis::Time { format: TimeFormat::Ns, .. } => ("ns", 0.0),
        XAxis::Time { .. } => ("time", 0.0),
        XAxis::Field => ("field", 0.0),
    };
    json!({
        "title": chart.title,
        "x_label": chart.x_label,
        "x_kind": kind,
        "origin_ms": origin_ms,
        "reduced": reduce,
        "panels": panels,
    })
}

/// The chart as a self-contained HTML page.
pub fn html(chart: &Chart) -> String {
    // `</` inside a script element would end it: JSON allows `<\/` for `</`.
    let data = chart_json(chart).to_string().replace("</", "<\\/");
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
