//! CSV output of a [`Trajectory`].

use std::io::{self, Write};

use crate::simulate::Trajectory;

fn field(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

/// Writes a trajectory as CSV: a header `t,<q names>,<q names>_dot[,lambda_0,…]`
/// (names from `coord_names`, usually [`crate::Mechanism::COORD_NAMES`]), then one row
/// per output time. Numbers use Rust's shortest round-trip formatting.
///
/// ```
/// use mechgen_runtime::write_csv;
/// use mechgen_runtime::simulate::{SimStats, Trajectory};
/// use mechgen_runtime::nalgebra::SVector;
///
/// let traj = Trajectory::<1, 0> {
///     t: vec![0.0, 0.5],
///     q: vec![SVector::<f64, 1>::new(1.0), SVector::<f64, 1>::new(2.0)],
///     qd: vec![SVector::<f64, 1>::new(0.0), SVector::<f64, 1>::new(4.0)],
///     lambda: None,
///     stats: SimStats::default(),
///     switch_times: Vec::new(),
///     rank_drop_times: Vec::new(),
/// };
/// let mut out = Vec::new();
/// write_csv(&mut out, &["x"], &traj)?;
/// assert_eq!(String::from_utf8_lossy(&out), "t,x,x_dot\n0,1,0\n0.5,2,4\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_csv<W: Write, const NQ: usize, const NC: usize>(
    w: &mut W,
    coord_names: &[&str; NQ],
    traj: &Trajectory<NQ, NC>,
) -> io::Result<()> {
    let mut header = vec!["t".to_string()];
    header.extend(coord_names.iter().map(|n| field(n)));
    header.extend(coord_names.iter().map(|n| field(&format!("{n}_dot"))));
    if traj.lambda.is_some() {
        header.extend((0..NC).map(|k| format!("lambda_{k}")));
    }
    writeln!(w, "{}", header.join(","))?;
    for (k, t) in traj.t.iter().enumerate() {
        let mut row = vec![t.to_string()];
        if let Some(q) = traj.q.get(k) {
            row.extend(q.iter().map(|x| x.to_string()));
        }
        if let Some(qd) = traj.qd.get(k) {
            row.extend(qd.iter().map(|x| x.to_string()));
        }
        if let Some(l) = traj.lambda.as_ref().and_then(|l| l.get(k)) {
            row.extend(l.iter().map(|x| x.to_string()));
        }
        writeln!(w, "{}", row.join(","))?;
    }
    Ok(())
}
