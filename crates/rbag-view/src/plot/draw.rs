//! Drawing a [`Chart`] with plotters: one drawing routine for the SVG and the bitmap backend.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use super::{Chart, Size, XAxis};
use crate::downsample::m4;
use crate::{Error, Result};

/// Line colours (Tableau 10): distinct, and readable on white.
pub(crate) const COLOURS: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

const FONT: &str = "sans-serif";

/// Registers the embedded font once: plotters' ab_glyph text needs it, and nothing on the
/// system is looked up.
fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only on bytes that are not a font, which these are.
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// The chart as an SVG document.
pub fn svg(chart: &Chart, size: Size) -> Result<String> {
    fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (size.width, size.height)).into_drawing_area();
        draw(&root, chart)?;
        root.present().map_err(draw_error)?;
    }
    Ok(out)
}

/// The chart as a PNG image of exactly `size` pixels.
pub fn png(chart: &Chart, size: Size) -> Result<Vec<u8>> {
    fonts();
    let (w, h) = (size.width, size.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root, chart)?;
        root.present().map_err(draw_error)?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| Error::Draw(e.to_string()))?;
    writer.write_image_data(&rgb).map_err(|e| Error::Draw(e.to_string()))?;
    writer.finish().map_err(|e| Error::Draw(e.to_string()))?;
    Ok(out)
}

fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> Error {
    Error::Draw(e.to_string())
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(draw_error)?;
    let area = root.titled(&chart.title, (FONT, 20)).map_err(draw_error)?;
    let panels = area.split_evenly((chart.panels.len().max(1), 1));
    let (x0, x1) = chart.x_range();
    let last = chart.panels.len().saturating_sub(1);
    let mut colour = 0;
    for (i, (panel, area)) in chart.panels.iter().zip(&panels).enumerate() {
        let (y0, y1) = panel.y_range();
        let mut c = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(if i == last { 45 } else { 25 })
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(draw_error)?;
        let tick = |x: &f64| chart.x.tick(*x);
        let ylabel = |y: &f64| super::number_label(*y);
        let mut mesh = c.configure_mesh();
        mesh.x_label_formatter(&tick).y_label_formatter(&ylabel).label_style((FONT, 13)).light_line_style(WHITE);
        if i == last {
            mesh.x_desc(&chart.x_label).axis_desc_style((FONT, 14));
        }
        mesh.draw().map_err(draw_error)?;
        let columns = c.plotting_area().dim_in_pixel().0 as usize;
        for line in &panel.lines {
            let (r, g, b) = COLOURS[colour % COLOURS.len()];
            colour += 1;
            let style = RGBColor(r, g, b);
            // Time series are reduced per pixel column; XY paths are drawn whole.
            let keep: Vec<usize> = match chart.x {
                XAxis::Time { .. } => m4(&line.xs, &line.ys, x0, x1, columns),
                XAxis::Field => (0..line.xs.len().min(line.ys.len())).collect(),
            };
            let points: Vec<(f64, f64)> = keep
                .iter()
                .map(|&k| (line.xs[k], line.ys[k]))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            // A handful of points gets markers, so a single sample is not invisible.
            let marker = if points.len() <= 60 { 2 } else { 0 };
            c.draw_series(LineSeries::new(points, style.stroke_width(1)).point_size(marker))
                .map_err(draw_error)?
                .label(&line.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style.stroke_width(2)));
        }
        if !panel.lines.is_empty() {
            c.configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font((FONT, 13))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .draw()
                .map_err(draw_error)?;
        }
    }
    Ok(())
}
