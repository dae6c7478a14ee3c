//! Charts of numeric series: a model ([`Chart`]) built from [`Series`], drawn as SVG or PNG
//! by plotters, or written as a self-contained HTML page with an interactive chart.
//!
//! Text is drawn with the DejaVu Sans the `dejavu` crate embeds, so charts come out the same on
//! a server with no display and no fonts installed.

mod draw;
mod html;

use rbag_bag::text::TimeFormat;

use crate::series::Series;

pub use draw::{png, svg};
pub use html::{chart_json, html, CHART_JS, HTML_COLUMNS, HTML_MAX_POINTS};

/// One line of a panel: points in drawing order (time order for time series).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Line {
    pub label: String,
    pub xs: Vec<f64>,
    pub ys: Vec<f64>,
}

/// One subplot: its lines share the y axis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Panel {
    pub lines: Vec<Line>,
}

/// What the x axis holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Log time, as `rbag echo --time-format` writes it; `origin` is the bag's start (ns).
    Time { format: TimeFormat, origin: u64 },
    /// The values of another field (an XY plot).
    Field,
}

/// A chart: a title, an x axis shared by every panel, and the panels top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub x: XAxis,
    pub panels: Vec<Panel>,
}

/// Size and look of a drawn chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

impl Default for Size {
    fn default() -> Self {
        Size { width: 1200, height: 700 }
    }
}

impl XAxis {
    /// `t` (ns since the epoch) as an x value: seconds for every format but `ns`.
    pub fn value(self, t: u64) -> f64 {
        match self {
            XAxis::Time { format: TimeFormat::Ns, .. } => t as f64,
            XAxis::Time { format: TimeFormat::Secs, .. } => t as f64 / 1e9,
            XAxis::Time { origin, .. } => (t as i128 - origin as i128) as f64 / 1e9,
            XAxis::Field => t as f64,
        }
    }

    /// The axis title.
    pub fn label(self) -> &'static str {
        match self {
            XAxis::Time { format: TimeFormat::Ns, .. } => "log time (ns since the epoch)",
            XAxis::Time { format: TimeFormat::Secs, .. } => "log time (s since the epoch)",
            XAxis::Time { format: TimeFormat::Rel, .. } => "log time (s since the bag's start)",
            XAxis::Time { format: TimeFormat::Iso, .. } => "log time (UTC)",
            XAxis::Field => "",
        }
    }

    /// A tick label for x value `x`.
    pub fn tick(self, x: f64) -> String {
        match self {
            XAxis::Time { format: TimeFormat::Iso, origin } => {
                let ns = origin as i128 + (x * 1e9).round() as i128;
                let (s, n) = (ns.div_euclid(1_000_000_000) as i64, ns.rem_euclid(1_000_000_000) as u32);
                match chrono::DateTime::from_timestamp(s, n) {
                    Some(d) => d.format("%H:%M:%S%.3f").to_string(),
                    None => format!("{x}"),
                }
            }
            _ => number_label(x),
        }
    }
}

/// A number as a short tick label: no trailing zeros, and scientific beyond 1e7 or below 1e-4.
pub(crate) fn number_label(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 {
        "0".into()
    } else if !(1e-4..1e7).contains(&a) && a.fract() != 0.0 || a >= 1e15 {
        format!("{x:.3e}")
    } else {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

impl Chart {
    /// A time chart: `groups` lists, per panel, the series it draws (indices into `series`).
    pub fn time(title: &str, series: &[Series], groups: &[Vec<usize>], x: XAxis) -> Chart {
        let panels = groups
            .iter()
            .map(|g| Panel {
                lines: g
                    .iter()
                    .map(|&i| {
                        let s = &series[i];
                        Line {
                            label: s.label.clone(),
                            xs: s.times.iter().map(|&t| x.value(t)).collect(),
                            ys: s.values.clone(),
                        }
                    })
                    .collect(),
            })
            .collect();
        Chart { title: title.into(), x_label: x.label().into(), x, panels }
    }

    /// An XY chart: each series is drawn against `xs`, pairing each point with the latest x
    /// value logged at or before it (the same message when both fields are of one topic).
    pub fn xy(title: &str, xs: &Series, series: &[Series], groups: &[Vec<usize>]) -> Chart {
        let panels =
            groups.iter().map(|g| Panel { lines: g.iter().map(|&i| pair(xs, &series[i])).collect() }).collect();
        Chart { title: title.into(), x_label: xs.label.clone(), x: XAxis::Field, panels }
    }

    /// The x range over every line (finite values only), widened when empty or flat.
    pub fn x_range(&self) -> (f64, f64) {
        let all = self.panels.iter().flat_map(|p| &p.lines).flat_map(|l| l.xs.iter().copied());
        range(all, false)
    }

    /// The number of points over every line.
    pub fn points(&self) -> usize {
        self.panels.iter().flat_map(|p| &p.lines).map(|l| l.xs.len()).sum()
    }
}

impl Panel {
    /// The y range over the panel's lines, with a margin of 5% each side.
    pub fn y_range(&self) -> (f64, f64) {
        range(self.lines.iter().flat_map(|l| l.ys.iter().copied()), true)
    }
}

/// The range of the finite values; a flat or empty range is widened so an axis can be drawn.
fn range(values: impl Iterator<Item = f64>, margin: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return (0.0, 1.0);
    }
    if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - pad, hi + pad);
    }
    if margin {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    }
}

/// `ys` against `xs` by log time: each y point takes the latest x logged at or before it.
fn pair(xs: &Series, ys: &Series) -> Line {
    let mut line = Line { label: ys.label.clone(), ..Default::default() };
    let mut j = 0;
    let mut current: Option<f64> = None;
    for (&t, &y) in ys.times.iter().zip(&ys.values) {
        while j < xs.times.len() && xs.times[j] <= t {
            current = Some(xs.values[j]);
            j += 1;
        }
        if let Some(x) = current {
            line.xs.push(x);
            line.ys.push(y);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, times: &[u64], values: &[f64]) -> Series {
        Series { label: label.into(), topic: "/t".into(), times: times.to_vec(), values: values.to_vec() }
    }

    #[test]
    fn xy_pairs_by_latest_x() {
        let x = series("/o.x", &[10, 20, 30], &[1.0, 2.0, 3.0]);
        let y = series("/o.y", &[5, 10, 25, 30], &[9.0, 10.0, 20.0, 30.0]);
        let c = Chart::xy("t", &x, &[y], &[vec![0]]);
        let l = &c.panels[0].lines[0];
        assert_eq!(l.xs, vec![1.0, 2.0, 3.0]);
        assert_eq!(l.ys, vec![10.0, 20.0, 30.0]);
    }

    #[test]
    fn time_axes() {
        let origin = 1_700_000_000_000_000_000;
        let rel = XAxis::Time { format: TimeFormat::Rel, origin };
        assert_eq!(rel.value(origin + 1_500_000_000), 1.5);
        let iso = XAxis::Time { format: TimeFormat::Iso, origin };
        assert_eq!(iso.tick(1.5), "22:13:21.500");
        assert_eq!(number_label(0.25), "0.25");
        assert_eq!(number_label(3.0), "3");
        assert_eq!(number_label(1.5e-6), "1.500e-6");
    }

    #[test]
    fn ranges_ignore_nan_and_widen_flat() {
        assert_eq!(range([f64::NAN, 2.0, 2.0].into_iter(), true), (1.8, 2.2));
        assert_eq!(range(std::iter::empty(), true), (0.0, 1.0));
    }
}
