//! Writing the generated functions: one loop over the [table](super::table).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::docs::{comment, wrapped_doc};
use super::expr::idx;
use super::function::{Body, Emitter, Signature};
use super::health::health_tokens;
use super::names::local;
use super::table::{Entry, GenFn, Shape};
use super::{EmitOptions, FunctionStats, ATLAS_SWITCH};
use crate::expr::ExprId;
use crate::model::Model;

/// The generated functions of the table, in order, and their statistics.
pub(crate) fn items(
    model: &Model,
    em: &Emitter<'_>,
    table: &[Entry],
    opts: &EmitOptions,
) -> crate::error::Result<(TokenStream, Vec<FunctionStats>)> {
    let mut items = TokenStream::new();
    let mut stats = Vec::new();
    for entry in table {
        match entry {
            Entry::Function(f) => {
                let (ts, s) = function(model, em, f, opts)?;
                items.extend(ts);
                stats.push(s);
            }
            Entry::Atlas(charts) => items.extend(atlas(charts, opts)),
        }
    }
    Ok((items, stats))
}

/// One straight-line function (and its chunks).
fn function(
    model: &Model,
    em: &Emitter<'_>,
    f: &GenFn,
    opts: &EmitOptions,
) -> crate::error::Result<(TokenStream, FunctionStats)> {
    let ty = &opts.scalar.ty;
    let sig = Signature {
        params: f.inputs.params(ty),
        args: f.inputs.args(),
    };
    let body = em.body(&f.name, &f.roots, &sig);
    nonfinite(model, &body, f, |k| {
        if f.rows_are_constraints {
            f.pos.get(k).map(|p| p.0)
        } else {
            None
        }
    })?;
    let tail = output(model, f, &body.roots, opts);
    let ret = f.shape.ret(ty);
    let doc = wrapped_doc(&f.doc);
    let name = format_ident!("{}", f.name);
    let params = &sig.params;
    let stmts = &body.stmts;
    let chunks = &body.chunks;
    // The value of a scalar function is its last `let` (roots are always named).
    let allow = if f.shape == Shape::Scalar {
        quote!(#[allow(clippy::let_and_return)])
    } else {
        TokenStream::new()
    };
    let ts = quote! {
        #(#chunks)*
        #doc
        #allow
        #[inline]
        pub fn #name(#params) -> #ret {
            #stmts
            #tail
        }
    };
    let stats = FunctionStats {
        name: f.name.clone(),
        ops: body.ops,
        lets: body.lets,
        chunks: body.chunks.len(),
    };
    Ok((ts, stats))
}

/// The end of `f`'s body: its output written from the roots' values `vals`, and returned.
fn output(model: &Model, f: &GenFn, vals: &[TokenStream], opts: &EmitOptions) -> TokenStream {
    let ty = &opts.scalar.ty;
    let buf = local(f.buffer);
    match &f.shape {
        Shape::Vector(n) => {
            let n = n.tokens();
            let mut sets = TokenStream::new();
            for (k, (e, &(i, _))) in vals.iter().zip(&f.pos).enumerate() {
                if let Some(c) = f.comments.get(k) {
                    sets.extend(comment(opts, c));
                }
                let i = idx(i);
                sets.extend(quote!(#buf[#i] = #e;));
            }
            if sets.is_empty() {
                // Nothing to write (`C_t` of scleronomic constraints).
                quote!(SVector::<#ty, #n>::zeros())
            } else {
                quote! {
                    let mut #buf = SVector::<#ty, #n>::zeros();
                    #sets
                    #buf
                }
            }
        }
        Shape::Matrix(r, c) => {
            let (r, c) = (r.tokens(), c.tokens());
            let sets = matrix_sets(vals, &f.pos, &buf);
            if sets.is_empty() {
                quote!(SMatrix::<#ty, #r, #c>::zeros())
            } else {
                quote! {
                    let mut #buf = SMatrix::<#ty, #r, #c>::zeros();
                    #sets
                    #buf
                }
            }
        }
        Shape::Symmetric(n) => {
            let n = n.tokens();
            let v = local("v");
            let mut sets = TokenStream::new();
            for (e, &(i, j)) in vals.iter().zip(&f.pos) {
                let (i, j, diag) = (idx(i), idx(j), i == j);
                if diag {
                    sets.extend(quote!(#buf[(#i, #j)] = #e;));
                } else {
                    sets.extend(quote!(let #v = #e; #buf[(#i, #j)] = #v; #buf[(#j, #i)] = #v;));
                }
            }
            if sets.is_empty() {
                quote!(SMatrix::<#ty, #n, #n>::zeros())
            } else {
                quote! {
                    let mut #buf = SMatrix::<#ty, #n, #n>::zeros();
                    #sets
                    #buf
                }
            }
        }
        Shape::Scalar => vals.first().cloned().unwrap_or_default(),
        Shape::Basis { pivots } => {
            let nb = f.pos.len();
            let health_name = local("health");
            let sets = matrix_sets(&vals[..nb], &f.pos, &buf);
            let terms: Vec<(TokenStream, Option<f64>)> = vals
                .iter()
                .zip(&f.roots)
                .map(|(v, &r)| (v.clone(), model.arena.as_const(r)))
                .collect();
            let health = health_tokens(
                &terms[nb..nb + pivots],
                &terms[nb + pivots..],
                &buf,
                &opts.scalar,
            );
            quote! {
                let mut #buf = SMatrix::<#ty, NQ, DOF>::zeros();
                #sets
                #health
                (#buf, #health_name)
            }
        }
    }
}

fn matrix_sets(
    vals: &[TokenStream],
    pos: &[(usize, usize)],
    m: &proc_macro2::Ident,
) -> TokenStream {
    let mut out = TokenStream::new();
    for (e, &(i, j)) in vals.iter().zip(pos) {
        let (i, j) = (idx(i), idx(j));
        out.extend(quote!(#m[(#i, #j)] = #e;));
    }
    out
}

/// `NCHARTS`, `CHARTS`, `null_space_atlas` and the default `null_space`.
fn atlas(charts: &[(String, Vec<usize>)], opts: &EmitOptions) -> TokenStream {
    let ty = &opts.scalar.ty;
    let nch = charts.len();
    let nch_lit = idx(nch);
    let chart_rows: Vec<TokenStream> = charts
        .iter()
        .map(|(_, indep)| {
            let ix = indep.iter().map(|&i| idx(i));
            quote!([#(#ix),*])
        })
        .collect();
    let fns: Vec<proc_macro2::Ident> = charts.iter().map(|(n, _)| format_ident!("{}", n)).collect();
    let switch = opts.scalar.literal(ATLAS_SWITCH).unwrap_or_default();
    let first = &fns[0];
    let (d, h, best) = (local("d"), local("h"), local("best"));
    let others = fns.iter().enumerate().skip(1).map(|(k, f)| {
        let k = idx(k);
        quote! {
            let (#d, #h) = #f(q, p, t);
            if #h > #best.1 {
                #best = (#d, #h, #k);
            }
        }
    });
    let charts_doc = wrapped_doc(&format!(
        " Independent coordinates of each chart of the atlas ({nch}): chart 0 is the primary one \
         (`INDEPENDENT`, `null_space_fixed`), chart `k` is `null_space_chart{{k}}`."
    ));
    let atlas_doc = wrapped_doc(&format!(
        " Null-space basis from the healthiest chart of the atlas, its health, and the chart \
         used (an index into `CHARTS`: the identity rows of `D` are at `CHARTS[chart]`). The \
         primary chart is evaluated first and used when its health is at least {ATLAS_SWITCH:e}; \
         otherwise every chart is evaluated and the healthiest kept."
    ));
    // With one chart the default is the fixed order itself (no dispatch to pay for).
    let (default_body, atlas_body) = if nch == 1 {
        (
            quote!(#first(q, p, t)),
            quote! {
                let (#d, #h) = #first(q, p, t);
                (#d, #h, 0)
            },
        )
    } else {
        (
            quote! {
                let (#d, #h, _) = null_space_atlas(q, p, t);
                (#d, #h)
            },
            quote! {
                let (#d, #h) = #first(q, p, t);
                if #h >= #switch {
                    return (#d, #h, 0);
                }
                let mut #best = (#d, #h, 0);
                #(#others)*
                #best
            },
        )
    };
    quote! {
        /// Charts in the atlas.
        pub const NCHARTS: usize = #nch_lit;
        #charts_doc
        pub const CHARTS: [[usize; DOF]; NCHARTS] = [#(#chart_rows),*];
        #atlas_doc
        #[inline]
        pub fn null_space_atlas(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty, usize) {
            #atlas_body
        }
        /// Null-space basis `D` of `C_J` (`C_J D = 0`) and its health in `[0, 1]` (see
        /// `null_space_fixed`), from the healthiest chart of the atlas
        /// (`null_space_atlas` also says which chart, i.e. where the identity rows of `D`
        /// are). For the basis with identity rows always at `INDEPENDENT`, call
        /// `null_space_fixed`.
        #[inline]
        pub fn null_space(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty) {
            #default_body
        }
    }
}

/// Fails when `body` (of generated function `f`) met a constant that is not finite,
/// located at the constraint of the first root holding it (`row_of` maps a root to its
/// constraint, where it has one), else at the first constraint whose own expression
/// holds it, else at the module.
fn nonfinite(
    model: &Model,
    body: &Body,
    f: &GenFn,
    row_of: impl Fn(usize) -> Option<usize>,
) -> crate::error::Result<()> {
    let Some(bad) = body.nonfinite else {
        return Ok(());
    };
    let v = model.arena.as_const(bad).unwrap_or(f64::NAN);
    let holds = |root: ExprId| {
        let mut stack = vec![root];
        let mut seen = std::collections::HashSet::new();
        while let Some(e) = stack.pop() {
            if e == bad {
                return true;
            }
            if seen.insert(e) {
                stack.extend(model.arena.node(e).children());
            }
        }
        false
    };
    let row = f
        .roots
        .iter()
        .enumerate()
        .find(|&(_, &r)| holds(r))
        .and_then(|(k, _)| row_of(k))
        .or_else(|| model.constraints.iter().position(|c| holds(c.expr)));
    let (span, what) = match row.and_then(|i| model.constraints.get(i)) {
        Some(c) => (c.span, format!("the equation `{}`", c.label)),
        None => (model.span, format!("mechanism `{}`", model.name)),
    };
    Err(crate::error::Error::new(
        span,
        format!(
            "a constant of the generated `{}` for {what} is not finite ({v}): \
             its value or a derivative overflows f64; rescale the constants",
            f.name
        ),
    ))
}
