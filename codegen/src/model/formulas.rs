//! The model's equations printed as formulas (`mechgen stats --equations` / `--latex`).

use crate::expr::{print, Arena, ExprId, Sym};
use crate::model::Model;

/// The model's equations as formulas: constraints (`C[i]: … = 0`), velocity constraints (as
/// `A q̇ + a₀ = 0`), inequalities (`g[k]: … ≥ 0`) and outputs (`o[k]: name = …`).
pub fn formulas(model: &Model, arena: &mut Arena, syntax: print::Syntax) -> Vec<String> {
    let coords: Vec<String> = model.coords.iter().map(|c| c.name.clone()).collect();
    let params: Vec<String> = model.params.iter().map(|p| p.name.clone()).collect();
    let name = |s: Sym| match s {
        Sym::Coord(i) | Sym::Vel(i) => coords.get(i as usize).cloned().unwrap_or_default(),
        Sym::Param(i) => params.get(i as usize).cloned().unwrap_or_default(),
        Sym::Time => "t".to_string(),
        Sym::Rhs(i) => format!("b{i}"),
        Sym::Weight(i) => format!("w{i}"),
    };
    let (eq, ge) = match syntax {
        print::Syntax::Text => ("= 0", ">= 0"),
        print::Syntax::Latex => ("= 0", "\\geq 0"),
    };
    let npos = model.constraints.len() - model.velocity_constraints.len();
    let mut rows: Vec<ExprId> = model.constraints[..npos].iter().map(|c| c.expr).collect();
    for v in model.velocity_constraints.clone() {
        let a = &mut *arena;
        let mut w = v.rest;
        for (k, e) in v.row {
            let qd = a.sym(Sym::Vel(k as u32));
            let t = a.mul(e, qd);
            w = a.add(w, t);
        }
        rows.push(w);
    }
    let a = &*arena;
    let mut out: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, &e)| format!("C[{i}]: {} {eq}", print::format(a, e, syntax, &name)))
        .collect();
    out.extend(model.inequalities.iter().enumerate().map(|(k, g)| {
        format!(
            "g[{k}] ({}): {} {ge}",
            g.name,
            print::format(a, g.expr, syntax, &name)
        )
    }));
    out.extend(model.outputs.iter().enumerate().map(|(k, o)| {
        format!(
            "o[{k}]: {} = {}",
            o.name,
            print::format(a, o.expr, syntax, &name)
        )
    }));
    out
}
