//! Scalable mechanism families, generated as `.mech` text.

use std::fmt::Write;

/// A chain of `k` four-bar loops in which the rocker of loop `i` is the crank of loop
/// `i + 1`: `NQ = 2k + 1`, `NC = 2k`, `DOF = 1`, block-bidiagonal Jacobian.
///
/// Every loop is a Grashof crank–rocker (crank 1, coupler 3, rocker 2.5, ground 3), so
/// any crank angle assembles; nominal values are exact circle intersections.
pub fn four_bar_chain(k: usize) -> String {
    let (a, b, c, g) = (1.0f64, 3.0f64, 2.5f64, 3.0f64);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/// A chain of {k} four-bar loops; the rocker of loop i drives the crank of loop i+1."
    );
    let _ = writeln!(s, "pub mod four_bar_chain_{k} {{");
    let _ = writeln!(
        s,
        "    param la = {a:?};\n    param lb = {b:?};\n    param lc = {c:?};\n    param lg = {g:?};"
    );
    let mut theta = 1.0f64;
    let _ = writeln!(s, "    coord th0 = {theta:?};");
    let mut cons = String::new();
    for i in 1..=k {
        // Ground pivots at x0 = 4(i−1) and x0 + g. Crank tip P, rocker pivot R = (x0 + g, 0):
        // the coupler tip Q lies on circles |Q − P| = b and |Q − R| = c.
        let x0 = 4.0 * (i as f64 - 1.0);
        let p = (x0 + a * theta.cos(), a * theta.sin());
        let r = (x0 + g, 0.0);
        let (dx, dy) = (r.0 - p.0, r.1 - p.1);
        let d = (dx * dx + dy * dy).sqrt();
        let l = (b * b - c * c + d * d) / (2.0 * d);
        let h = (b * b - l * l).max(0.0).sqrt();
        let q = (p.0 + l * dx / d - h * dy / d, p.1 + l * dy / d + h * dx / d);
        let phi = (q.1 - p.1).atan2(q.0 - p.0);
        let th = (q.1 - r.1).atan2(q.0 - r.0);
        let _ = writeln!(s, "    coord ph{i} = {phi:?};\n    coord th{i} = {th:?};");
        let _ = writeln!(
            cons,
            "    constraint vec2({x0:?} + la * cos(th{p}), la * sin(th{p})) + vec2(lb * cos(ph{i}), lb * sin(ph{i})) == vec2({x0:?} + lg + lc * cos(th{i}), lc * sin(th{i}));",
            p = i - 1
        );
        theta = th;
    }
    s.push_str(&cons);
    s.push_str("}\n");
    s
}

/// A planar closed chain of `k + 3` unit links pinned to the ground at both ends:
/// `NQ = k + 3`, `NC = 2`, `DOF = k + 1`, two dense constraint rows.
pub fn closed_chain(k: usize) -> String {
    let n = k + 3;
    let alpha = 1.0f64;
    let angles: Vec<f64> = (0..n)
        .map(|i| alpha * (1.0 - 2.0 * i as f64 / (n as f64 - 1.0)))
        .collect();
    let span: f64 = angles.iter().map(|t| t.cos()).sum();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/// A closed chain of {n} unit links pinned to the ground at both ends."
    );
    let _ = writeln!(s, "pub mod closed_chain_{k} {{");
    let _ = writeln!(s, "    param span = {span:?};");
    for (i, t) in angles.iter().enumerate() {
        let _ = writeln!(s, "    coord th{i} = {t:?};");
    }
    let sum: Vec<String> = (0..n)
        .map(|i| format!("vec2(cos(th{i}), sin(th{i}))"))
        .collect();
    let _ = writeln!(s, "    constraint {} == vec2(span, 0.0);", sum.join(" + "));
    s.push_str("}\n");
    s
}
