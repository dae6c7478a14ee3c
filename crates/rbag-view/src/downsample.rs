//! Fewer points for drawing, with the same picture: per pixel column, a series keeps its
//! first, last, smallest and largest point (M4), in time order. A line through them covers
//! exactly the pixels the full line would, so a one-sample spike stays visible.

/// Indices of the points of `(xs, ys)` to draw across `columns` pixel columns spanning
/// `x0..=x1`. `xs` must be non-decreasing. With no more than 4 points per column on average,
/// every index is kept. NaN values are never chosen as a column's smallest or largest.
pub fn m4(xs: &[f64], ys: &[f64], x0: f64, x1: f64, columns: usize) -> Vec<usize> {
    let n = xs.len().min(ys.len());
    if columns == 0 || n <= 4 * columns || x1 <= x0 {
        return (0..n).collect();
    }
    let scale = columns as f64 / (x1 - x0);
    let column = |x: f64| (((x - x0) * scale).floor().max(0.0) as usize).min(columns - 1);
    let mut out = Vec::with_capacity(4 * columns);
    let mut i = 0;
    while i < n {
        let c = column(xs[i]);
        let (first, mut min, mut max) = (i, i, i);
        let mut last = i;
        while last + 1 < n && column(xs[last + 1]) == c {
            last += 1;
            let y = ys[last];
            if y < ys[min] || ys[min].is_nan() {
                min = last;
            }
            if y > ys[max] || ys[max].is_nan() {
                max = last;
            }
        }
        let mut pick = [first, min, max, last];
        pick.sort_unstable();
        for (k, &p) in pick.iter().enumerate() {
            if k == 0 || pick[k - 1] != p {
                out.push(p);
            }
        }
        i = last + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_series_are_kept_whole() {
        let xs: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(m4(&xs, &xs, 0.0, 9.0, 100), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn a_spike_survives() {
        let xs: Vec<f64> = (0..100_000).map(f64::from).collect();
        let mut ys = vec![0.0; xs.len()];
        ys[54_321] = 1000.0;
        ys[77_777] = -5.0;
        let kept = m4(&xs, &ys, 0.0, 99_999.0, 100);
        assert!(kept.len() <= 400, "{}", kept.len());
        assert!(kept.contains(&54_321) && kept.contains(&77_777));
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "time order");
        assert_eq!((kept[0], *kept.last().unwrap()), (0, 99_999));
    }
}
