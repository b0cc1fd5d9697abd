//! Growth with the family size `k`: least-squares exponents and the log–log SVG plot.

use std::path::Path;

use plotters::prelude::*;

/// Least-squares fit of `y = c k^e` on log–log axes: `(e, c)`.
pub fn fit_power(ks: &[f64], ys: &[f64]) -> (f64, f64) {
    let pts: Vec<(f64, f64)> = ks
        .iter()
        .zip(ys)
        .filter(|(k, y)| **k > 0.0 && **y > 0.0 && y.is_finite())
        .map(|(k, y)| (k.ln(), y.ln()))
        .collect();
    let n = pts.len() as f64;
    if pts.len() < 2 {
        return (f64::NAN, f64::NAN);
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let e = sxy / sxx;
    (e, (my - e * mx).exp())
}

/// One series of the plot.
pub struct Series {
    /// Legend label.
    pub label: String,
    /// `(k, y)` points.
    pub points: Vec<(f64, f64)>,
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for y in ys.filter(|y| *y > 0.0) {
        lo = lo.min(y);
        hi = hi.max(y);
    }
    if !lo.is_finite() {
        (lo, hi) = (1.0, 10.0);
    }
    let kmax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (0.8f64..kmax * 1.25).log_scale(),
            (lo / 1.5..hi * 1.5).log_scale(),
        )?;
    chart.configure_mesh().x_desc("k").y_desc(y_desc).draw()?;
    let colors = [BLUE, RED, GREEN, MAGENTA];
    for (i, s) in series.iter().enumerate() {
        let c = colors[i % colors.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Writes a two-panel log–log SVG: generation time and `null_space` operations vs `k`.
pub fn plot(
    path: &Path,
    time: &[Series],
    ops: &[Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1100, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(550);
    panel(&left, "generation time (median)", "ms", time)?;
    panel(&right, "null_space operations", "ops", ops)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_power_law() {
        let ks = [1.0, 2.0, 4.0, 8.0];
        let ys: Vec<f64> = ks.iter().map(|k: &f64| 3.0 * k.powf(1.5)).collect();
        let (e, c) = fit_power(&ks, &ys);
        assert!((e - 1.5).abs() < 1e-12 && (c - 3.0).abs() < 1e-12);
    }
}
