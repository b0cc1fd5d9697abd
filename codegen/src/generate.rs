//! The whole pipeline, from tokens to generated Rust.

use std::str::FromStr;
use std::time::{Duration, Instant};

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::{self, Analysis, EmitOptions, ModuleStats, ScalarType};
use crate::error::{Error, Result};
use crate::expr::Arena;
use crate::model::{self, Model};
use crate::pivot::{self, PivotOptions};
use crate::Options;
use crate::{derive, parse};

/// Wall time of each stage of the pipeline, summed over the modules of an input.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Tokens → syntax tree.
    pub parse: Duration,
    /// Syntax tree → scalar model and DAG.
    pub lower: Duration,
    /// `C_J`, `C_t`.
    pub differentiate: Duration,
    /// Probing, static pivots and symbolic LU.
    pub pivot_lu: Duration,
    /// Scheduling and writing tokens.
    pub emit: Duration,
}

impl Timings {
    /// Sum of all stages.
    pub fn total(&self) -> Duration {
        self.parse + self.lower + self.differentiate + self.pivot_lu + self.emit
    }
}

/// The output of [`generate`]: the items to splice or write, and statistics.
#[derive(Clone, Debug)]
pub struct Generated {
    /// One `pub mod` per mechanism.
    pub tokens: TokenStream,
    /// Sizes and operation counts per module.
    pub modules: Vec<ModuleStats>,
    /// Time spent per stage.
    pub timings: Timings,
}

/// One lowered `mod` block: the model and the DAG its expressions live in.
pub type Lowered = (Model, Arena);

/// Parses and lowers every `mod` block of the input, and returns the input's
/// `#![seed = N]` if any.
pub fn models(input: TokenStream) -> Result<(Vec<Lowered>, Option<u64>)> {
    let file = parse::parse_file(input)?;
    let mut errors = crate::error::Errors::new();
    let models: Vec<Lowered> = file
        .modules
        .iter()
        .filter_map(|m| errors.check(model::lower(m)))
        .collect();
    errors.finish()?;
    Ok((models, file.options.seed))
}

/// Runs the pipeline on a `mechanism!` body (or a `.mech` file's tokens).
pub fn generate(input: TokenStream, opts: &Options) -> Result<Generated> {
    let mut timings = Timings::default();
    let t0 = Instant::now();
    let file = parse::parse_file(input)?;
    timings.parse = t0.elapsed();
    let opts = &opts.resolve(&file.options);
    let seed = opts.seed;
    let crate_path = TokenStream::from_str(&opts.crate_path).map_err(|e| {
        Error::new(
            proc_macro2::Span::call_site(),
            format!("invalid crate path `{}`: {e}", opts.crate_path),
        )
    })?;
    let scalar = match opts.scalar.as_deref() {
        None | Some("f64") => None,
        Some("f32") => Some("f32"),
        Some(other) => {
            return Err(Error::new(
                proc_macro2::Span::call_site(),
                format!(
                "unknown scalar type `{other}`: the scalar type is `f64` (the default) or `f32`"
            ),
            ))
        }
    };
    let eopts = EmitOptions {
        crate_path,
        scalar: match scalar {
            Some("f32") => ScalarType::concrete(quote::quote!(f32)),
            _ => ScalarType::default(),
        },
        comments: opts.comments,
        generic: opts.generic,
    };
    let mut tokens = TokenStream::new();
    let mut modules = Vec::new();
    // Independent modules: the errors of each are collected, reported together.
    let mut errors = crate::error::Errors::new();
    for m in &file.modules {
        let t = Instant::now();
        let Some((mut model, mut arena)) = errors.check(model::lower(m)) else {
            continue;
        };
        timings.lower += t.elapsed();
        let t = Instant::now();
        let mut kin = derive::kinematics(&model, &mut arena);
        let eom = (!model.dynamics.is_empty())
            .then(|| crate::derive::motion::equations_of_motion(&model, &mut arena));
        timings.differentiate += t.elapsed();
        let t = Instant::now();
        let Some(checked) = errors.check(crate::pivot::check::check(
            &model,
            &arena,
            &kin.jacobian,
            seed,
        )) else {
            continue;
        };
        if !model.velocity_constraints.is_empty() {
            if opts.derivatives {
                errors.push(Error::new(
                    model.velocity_constraints[0].span,
                    "`#![derivatives]` is not supported with velocity constraints yet",
                ));
                continue;
            }
            stack_velocity_constraints(&mut model, &mut arena, &mut kin);
        }
        let Some(mut ns) = errors.check(pivot::analyze(
            &model,
            &mut arena,
            &kin.jacobian,
            &PivotOptions::new(seed),
        )) else {
            continue;
        };
        let mut notes = checked.notes;
        let auto: Vec<String> = ns
            .independent
            .iter()
            .filter(|j| !model.independent.contains(j))
            .map(|&j| format!("`{}`", model.coords[j].name))
            .collect();
        if !auto.is_empty() && ns.rank > 0 {
            notes.push(format!(
                "independent coordinates chosen by the analysis: {} (name the actuated joints with `independent` to choose them)",
                auto.join(", ")
            ));
        }
        notes.append(&mut ns.notes);
        ns.notes = notes;
        let Some(charts) = errors.check(named_charts(&model, &mut arena, &kin.jacobian, seed))
        else {
            continue;
        };
        timings.pivot_lu += t.elapsed();
        let t = Instant::now();
        let outputs = (!model.outputs.is_empty())
            .then(|| derive::outputs::outputs(&model, &mut arena, &ns.basis));
        let inequalities = (!model.inequalities.is_empty())
            .then(|| derive::inequality::inequalities(&model, &mut arena));
        let dynamics = eom.map(|eom| {
            let derivatives = (opts.derivatives).then(|| {
                derive::sensitivity::dynamics_derivatives(
                    &model,
                    &mut arena,
                    &eom,
                    &kin.jacobian,
                    &kin.gamma,
                    &ns.basis,
                    &ns.solve,
                )
            });
            derive::Dynamics { eom, derivatives }
        });
        let charts = pivot::Charts {
            primary: ns,
            named: charts,
        };
        let an = Analysis {
            kinematics: &kin,
            charts: &charts,
            dynamics: dynamics.as_ref(),
            inequalities: inequalities.as_ref(),
            outputs: outputs.as_ref(),
        };
        let Some((ts, mut stats)) = errors.check(emit::module(&model, &arena, &an, &eopts)) else {
            continue;
        };
        if let Some(syntax) = opts.formulas {
            stats.formulas = formulas(&model, &mut arena, syntax);
        }
        timings.emit += t.elapsed();
        tokens.extend(ts);
        modules.push(stats);
    }
    errors.finish()?;
    Ok(Generated {
        tokens,
        modules,
        timings,
    })
}

/// Appends the velocity constraints `A q̇ + a₀ = 0` below the constraint rows: `A` to the
/// Jacobian (the velocity-level constraint matrix `[C_J; A]` whose null space is `D`), `a₀`
/// to `C_t` (so that `[C_J; A] q̇ = −[C_t; a₀]`), `−d(A q̇ + a₀)/dt` (with `q̇` held) to `γ`,
/// and an identically zero row to the residual (a velocity constraint restricts no
/// configuration: the module's `VELOCITY_ROWS` counts these rows, and the runtime's position
/// assembly solves the holonomic rows above them only).
fn stack_velocity_constraints(model: &mut Model, arena: &mut Arena, kin: &mut derive::Kinematics) {
    let nq = model.coords.len();
    let mut rows = derive::SymMatrix::new(nq);
    let mut rest = Vec::new();
    for v in &model.velocity_constraints {
        rows.push_row(arena, v.row.clone());
        kin.jacobian.push_row(arena, v.row.clone());
        rest.push(v.rest);
    }
    kin.gamma.extend(derive::rows_gamma(arena, &rows, &rest));
    kin.jacobian_t.extend(rest);
    let zero = arena.constant(0.0);
    for v in model.velocity_constraints.clone() {
        model.constraints.push(model::Equation {
            expr: zero,
            label: v.label,
            span: v.span,
        });
    }
}

/// The model's equations as formulas: constraints (`C[i]: … = 0`), velocity constraints (as
/// `A q̇ + a₀ = 0`), inequalities (`g[k]: … ≥ 0`) and outputs (`o[k]: name = …`).
fn formulas(model: &Model, arena: &mut Arena, syntax: crate::expr::print::Syntax) -> Vec<String> {
    use crate::expr::{print, Sym};
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
    let mut rows: Vec<crate::expr::ExprId> =
        model.constraints[..npos].iter().map(|c| c.expr).collect();
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

/// The static LU of each named chart (`independent NAME: a, b;`): the analysis of the
/// primary chart with the chart's coordinates named independent instead (errors are
/// located at the chart's name).
fn named_charts(
    model: &Model,
    arena: &mut Arena,
    jac: &derive::SymMatrix,
    seed: u64,
) -> Result<Vec<(String, pivot::NullSpace)>> {
    let mut out = Vec::new();
    for chart in &model.charts {
        let named = Model {
            independent: chart.independent.clone(),
            independent_span: Some(chart.span),
            ..model.clone()
        };
        // The named chart's own fixed order only: its atlas would not be emitted.
        let ns = pivot::analyze(&named, arena, jac, &PivotOptions { seed, atlas: false })?;
        out.push((chart.name.clone(), ns));
    }
    Ok(out)
}

/// Runs the pipeline on source text (the contents of a `.mech` file).
pub fn generate_str(src: &str, opts: &Options) -> Result<Generated> {
    let tokens = TokenStream::from_str(src).map_err(|e| {
        let span = e.span();
        let at = span.start();
        let c = src
            .lines()
            .nth(at.line.saturating_sub(1))
            .and_then(|l| l.chars().nth(at.column));
        let message = match c {
            Some('"') => "unterminated string literal (strings are only allowed in doc comments)".to_string(),
            Some('\'') => "a `'` is not part of the mechanism language (lifetimes and characters are not supported)".to_string(),
            Some(c) if c.is_alphanumeric() || c == '_' => format!("`{c}` starts no valid identifier or number"),
            Some(c) => format!("unexpected character `{c}` (U+{:04X}): not part of the mechanism language", c as u32),
            None => e.to_string(),
        };
        Error::new(span, format!("cannot tokenize the input: {message}"))
    })?;
    generate(tokens, opts)
}

/// Expands a `mechanism!` body to Rust items (what the proc macro returns).
pub fn expand(input: TokenStream, opts: &Options) -> Result<TokenStream> {
    Ok(generate(input, opts)?.tokens)
}

/// Pretty-prints generated items with prettyplease, turning comment markers into `//`
/// comments.
pub fn pretty(tokens: &TokenStream) -> String {
    if let Some(text) = crate::emit::format::pretty_file(tokens.clone()) {
        return comments_to_lines(&text);
    }
    let file: syn::File = match syn::parse2(quote!(#tokens)) {
        Ok(f) => f,
        // Generated tokens always parse; keep the raw text rather than panic if not.
        Err(_) => return tokens.to_string(),
    };
    comments_to_lines(&prettyplease::unparse(&file))
}

/// [`pretty`] of tokens no one else holds (the generated module, once generation is
/// done): read without copying them. `None` in the case [`pretty`] falls back to printing
/// through `syn` alone (never seen: generated tokens always parse), where the caller
/// regenerates and calls [`pretty`].
pub(crate) fn pretty_owned(tokens: TokenStream) -> Option<String> {
    crate::emit::format::pretty_file(tokens).map(|text| comments_to_lines(&text))
}

/// Turns the comment-marker statements left by `prettyplease` into `//` comments.
fn comments_to_lines(text: &str) -> String {
    let marker = format!("{}!(", emit::COMMENT_MARKER);
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(&marker) {
            // prettyplease may wrap a long marker call over several lines.
            let mut call = rest.trim().to_string();
            while !call.ends_with(");") {
                match lines.next() {
                    Some(l) => call.push_str(l.trim()),
                    None => break,
                }
            }
            let indent = &line[..line.len() - trimmed.len()];
            let lit = call
                .trim_end_matches(';')
                .trim_end_matches(')')
                .trim()
                .trim_end_matches(',');
            let text = syn::parse_str::<syn::LitStr>(lit)
                .map(|l| l.value())
                .unwrap_or_else(|_| lit.to_string());
            out.push_str(indent);
            out.push_str("// ");
            out.push_str(&text);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}
