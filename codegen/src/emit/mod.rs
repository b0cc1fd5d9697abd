//! Emission: a lowered, analysed model to a Rust module of straight-line functions.

mod expr;
mod function;
mod ops;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

pub use expr::ScalarType;
pub use function::{CHUNK_LETS, MAX_LETS_PER_FUNCTION};
pub use ops::OpCount;

use crate::dynamics::EquationsOfMotion;
use crate::expr::ExprId;
use crate::model::Model;
use crate::pivot::NullSpace;
use expr::{idx, SymNames};
use function::{Emitter, Signature};

/// Health of the primary chart above which `null_space_atlas` looks no further.
pub const ATLAS_SWITCH: f64 = 1e-3;

/// Name of the marker macro that [`pretty`](crate::pretty) turns into `//` comments.
pub const COMMENT_MARKER: &str = "__mechgen_comment";

/// What emission needs besides the model: derivatives and the null-space analysis.
pub struct Analysis<'a> {
    /// `C_J`, `NC × NQ`, row-major.
    pub jacobian: &'a [Vec<ExprId>],
    /// `C_t`, `NC` entries.
    pub jacobian_t: &'a [ExprId],
    /// Null space and dependent solve.
    pub null_space: &'a NullSpace,
    /// `γ` of `C_J q̈ = γ` (expressions of q, q̇, p, t).
    pub gamma: &'a [ExprId],
    /// Mass matrix, forces and energy, when the model has dynamics.
    pub eom: Option<&'a EquationsOfMotion>,
}

/// Options of emission.
#[derive(Clone, Debug)]
pub struct EmitOptions {
    /// Path to the facade crate (`::mechgen`): generated code uses `#path::nalgebra` and
    /// `#path::runtime`.
    pub crate_path: TokenStream,
    /// The scalar type.
    pub scalar: ScalarType,
    /// Emit `//` comment markers naming each equation (only for pretty-printed output:
    /// the markers are removed by [`pretty`](crate::pretty)).
    pub comments: bool,
}

/// Statistics of one generated function.
#[derive(Clone, Debug)]
pub struct FunctionStats {
    /// Function name.
    pub name: String,
    /// Operations it performs.
    pub ops: OpCount,
    /// Named temporaries (`let`s) it binds.
    pub lets: usize,
    /// Number of `#[inline(never)]` chunks it was split into (0 if not split).
    pub chunks: usize,
}

/// Statistics of one generated module.
#[derive(Clone, Debug)]
pub struct ModuleStats {
    /// Module name.
    pub name: String,
    /// Coordinates.
    pub nq: usize,
    /// Constraint equations.
    pub nc: usize,
    /// Rank of `C_J` found by probing.
    pub rank: usize,
    /// Degrees of freedom.
    pub dof: usize,
    /// Independent coordinates (names).
    pub independent: Vec<String>,
    /// Per generated function.
    pub functions: Vec<FunctionStats>,
    /// Notes of the analysis (redundant constraints, probe retries).
    pub notes: Vec<String>,
}

fn comment(opts: &EmitOptions, text: &str) -> TokenStream {
    if !opts.comments {
        return TokenStream::new();
    }
    let m = format_ident!("{}", COMMENT_MARKER);
    quote!(#m!(#text);)
}

fn doc_lines(lines: &[String]) -> TokenStream {
    let mut out = TokenStream::new();
    for l in lines {
        let l = format!(" {}", l.trim_start());
        out.extend(quote!(#[doc = #l]));
    }
    out
}

/// `text` as doc lines wrapped near 92 columns (blank lines between paragraphs, which
/// `\n\n` separates; `- ` list items keep their continuation lines indented).
fn wrapped_doc(text: &str) -> TokenStream {
    doc_lines(&wrap(text))
}

/// `text` wrapped near 92 columns (see [`wrapped_doc`]).
fn wrap(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (k, para) in text.split("\n\n").enumerate() {
        if k > 0 {
            lines.push(String::new());
        }
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.len() + word.len() > 92 {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

/// Emits the module for one model.
///
/// The local names of coordinates, velocities and parameters are chosen against the names
/// the generated code itself binds, read off the emitted tokens: the module is emitted
/// with placeholder names, every identifier in a binding position is collected
/// ([`bound_names`]), the user's names are allocated around that set, and the
/// placeholders are replaced.
///
/// Fails (at the equation concerned) when an expression to emit holds a constant that is
/// not finite, e.g. a derivative whose constant factor overflows `f64`.
pub fn module(
    model: &Model,
    an: &Analysis<'_>,
    opts: &EmitOptions,
) -> crate::Result<(TokenStream, ModuleStats)> {
    let coord_names: Vec<String> = model.coords.iter().map(|c| c.name.clone()).collect();
    let param_names: Vec<String> = model.params.iter().map(|p| p.name.clone()).collect();
    // Fast path: emit with the names the user's names get when nothing collides, and
    // keep that emission when the names allocated around what it binds (its input
    // bindings aside) are those same names. Otherwise emit with placeholders and replace
    // them: both give the same output, the first without a second pass over the tokens.
    let direct = sym_names(&coord_names, &param_names, Default::default());
    let (tokens, stats) = module_with(model, an, opts, &direct)?;
    let inputs: std::collections::HashSet<String> = direct
        .coord
        .iter()
        .chain(&direct.vel)
        .chain(&direct.param)
        .map(|i| {
            use syn::ext::IdentExt;
            i.unraw().to_string()
        })
        .collect();
    let mut taken = std::collections::HashSet::new();
    collect_bound(tokens.clone(), &inputs, &mut taken);
    if same_names(&sym_names(&coord_names, &param_names, taken), &direct) {
        return Ok((tokens, stats));
    }
    let placeholders = SymNames {
        coord: (0..model.coords.len())
            .map(|i| format_ident!("{}_q{}", PLACEHOLDER, i))
            .collect(),
        vel: (0..model.coords.len())
            .map(|i| format_ident!("{}_qd{}", PLACEHOLDER, i))
            .collect(),
        param: (0..model.params.len())
            .map(|i| format_ident!("{}_p{}", PLACEHOLDER, i))
            .collect(),
        field: model.params.iter().map(|p| rust_ident(&p.name)).collect(),
    };
    let (tokens, stats) = module_with(model, an, opts, &placeholders)?;
    let taken = bound_names(&tokens);
    let names = sym_names(&coord_names, &param_names, taken);
    let mut map = std::collections::HashMap::new();
    for (from, to) in [
        (&placeholders.coord, &names.coord),
        (&placeholders.vel, &names.vel),
        (&placeholders.param, &names.param),
    ] {
        for (a, b) in from.iter().zip(to) {
            map.insert(a.to_string(), b.clone());
        }
    }
    Ok((replace_idents(tokens, &map), stats))
}

/// Prefix of the placeholder names of [`module`]'s first emission.
const PLACEHOLDER: &str = "__mechgen_sym";

/// Replaces the identifiers named in `map` (by their text) throughout `ts`.
fn replace_idents(ts: TokenStream, map: &std::collections::HashMap<String, Ident>) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Ident(id) => match map.get(&id.to_string()) {
                Some(new) => TokenTree::Ident(new.clone()),
                None => TokenTree::Ident(id),
            },
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), replace_idents(g.stream(), map));
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other,
        })
        .collect()
}

/// The names generated code binds in the value namespace, read off the emitted tokens:
/// `let` patterns (`let x`, `let mut x`, `let (s, c)`), function names and parameters,
/// `const`s, `static`s, structs and associated types. A user name bound in a generated
/// function must differ from all of them (it would shadow them, or be shadowed, or be a
/// pattern). Placeholder names are left out.
pub fn bound_names(ts: &TokenStream) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    collect_bound(ts.clone(), &Default::default(), &mut out);
    out.retain(|n| !n.starts_with(PLACEHOLDER));
    out
}

/// Whether `tokens[k..]` reads an input: `q[…]`, `qd[…]`, `b[…]` or `p.field`, then `;`.
fn reads_input(tokens: &[proc_macro2::TokenTree], k: usize) -> bool {
    use proc_macro2::{Delimiter, TokenTree};
    match (tokens.get(k), tokens.get(k + 1), tokens.get(k + 2)) {
        (Some(TokenTree::Ident(v)), Some(TokenTree::Group(g)), Some(TokenTree::Punct(semi)))
            if (v == "q" || v == "qd" || v == "b")
                && g.delimiter() == Delimiter::Bracket
                && semi.as_char() == ';' =>
        {
            true
        }
        (Some(TokenTree::Ident(v)), Some(TokenTree::Punct(dot)), Some(TokenTree::Ident(_))) => {
            v == "p"
                && dot.as_char() == '.'
                && matches!(tokens.get(k + 3), Some(TokenTree::Punct(s)) if s.as_char() == ';')
        }
        _ => false,
    }
}

/// Collects the bound names of `ts` into `out`, leaving out the input bindings
/// (`let NAME = q[i];`, `qd[i]`, `b[i]`, `p.field`) of the names in `inputs`.
fn collect_bound(
    ts: TokenStream,
    inputs: &std::collections::HashSet<String>,
    out: &mut std::collections::HashSet<String>,
) {
    use proc_macro2::{Delimiter, TokenTree};
    use syn::ext::IdentExt;
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    let plain = |id: &Ident| id.unraw().to_string();
    let mut k = 0;
    while k < tokens.len() {
        if let TokenTree::Ident(kw) = &tokens[k] {
            // (Compared without `to_string`: this scan reads every token of the module.)
            let mut next = k + 1;
            if kw == "let" {
                if matches!(tokens.get(next), Some(TokenTree::Ident(m)) if m == "mut") {
                    next += 1;
                }
                match tokens.get(next) {
                    Some(TokenTree::Ident(id)) => {
                        let name = plain(id);
                        let is_input = !inputs.is_empty()
                            && inputs.contains(&name)
                            && matches!(tokens.get(next + 1), Some(TokenTree::Punct(e)) if e.as_char() == '=')
                            && reads_input(&tokens, next + 2);
                        if !is_input {
                            out.insert(name);
                        }
                    }
                    Some(TokenTree::Group(g)) => {
                        for tt in g.stream() {
                            if let TokenTree::Ident(id) = tt {
                                if id != "mut" {
                                    out.insert(plain(&id));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            } else if kw == "fn"
                || kw == "const"
                || kw == "static"
                || kw == "struct"
                || kw == "type"
            {
                if let Some(TokenTree::Ident(id)) = tokens.get(next) {
                    out.insert(plain(id));
                }
                if kw == "fn" {
                    // Parameters: the identifier before each top-level `:`.
                    if let Some(TokenTree::Group(g)) = tokens.get(next + 1) {
                        if g.delimiter() == Delimiter::Parenthesis {
                            let ps: Vec<TokenTree> = g.stream().into_iter().collect();
                            for w in ps.windows(2) {
                                if let (TokenTree::Ident(id), TokenTree::Punct(c)) = (&w[0], &w[1])
                                {
                                    if c.as_char() == ':'
                                        && c.spacing() == proc_macro2::Spacing::Alone
                                    {
                                        out.insert(plain(id));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if let TokenTree::Group(g) = &tokens[k] {
            collect_bound(g.stream(), inputs, out);
        }
        k += 1;
    }
}

/// An identifier for a user's name: raw (`r#match`) where the name is a Rust keyword of
/// any edition (`gen`, `async`, `try`, …), so that generated code compiles everywhere.
/// (`self`, `Self`, `super`, `crate` and `_` cannot be raw: lowering rejects them, and
/// here they get a trailing `_`.)
pub fn rust_ident(name: &str) -> Ident {
    if matches!(name, "self" | "Self" | "super" | "crate" | "_") {
        // No raw form exists (lowering rejects these; never a panic here).
        format_ident!("{}_", name.trim_start_matches('_'))
    } else if crate::model::is_keyword(name) {
        Ident::new_raw(name, proc_macro2::Span::call_site())
    } else {
        format_ident!("{}", name)
    }
}

fn module_with(
    model: &Model,
    an: &Analysis<'_>,
    opts: &EmitOptions,
    names: &SymNames,
) -> crate::Result<(TokenStream, ModuleStats)> {
    let nq = model.coords.len();
    let nc = model.constraints.len();
    let ns = an.null_space;
    let dof = nq - ns.rank;
    let krate = &opts.crate_path;
    let ty = &opts.scalar.ty;
    let coord_names: Vec<String> = model.coords.iter().map(|c| c.name.clone()).collect();
    let em = Emitter {
        arena: &model.arena,
        names,
        scalar: &opts.scalar,
        coord_names: &coord_names,
        // One argument reduction for both (the C library's `sin_cos` is two calls).
        sin_cos: (ty.to_string() == "f64").then(|| quote!(#krate::runtime::sin_cos)),
    };
    let base = Signature {
        params: quote!(q: &SVector<#ty, NQ>, p: &Params, t: #ty),
        args: quote!(q, p, t),
    };
    let with_b = Signature {
        params: quote!(q: &SVector<#ty, NQ>, p: &Params, t: #ty, b: &SVector<#ty, NC>),
        args: quote!(q, p, t, b),
    };
    let mut stats = Vec::new();
    let mut items = TokenStream::new();
    let order = coord_order_doc(&coord_names);

    // residual
    {
        let roots: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
        let body = em.body("residual", &roots, &base);
        nonfinite(model, &body, "residual", &roots, Some)?;
        let mut sets = TokenStream::new();
        for (i, (e, c)) in body.roots.iter().zip(&model.constraints).enumerate() {
            sets.extend(comment(opts, &format!("C[{i}]: {}", c.label)));
            let i = idx(i);
            sets.extend(quote!(r[#i] = #e;));
        }
        let doc = format!(
            " Constraint residual `C(q, p, t)` ({nc} equations; zero on the mechanism's configuration manifold).\n\n Coordinate order: {order}."
        );
        {
            let params = &base.params;
            let stmts = &body.stmts;
            let chunks = &body.chunks;
            items.extend(quote! { #(#chunks)*
                #[doc = #doc]
                #[inline]
                pub fn residual(#params) -> SVector<#ty, NC> {
                    #stmts
                    let mut r = SVector::<#ty, NC>::zeros();
                    #sets
                    r
                }
            });
            stats.push(FunctionStats {
                name: "residual".to_string(),
                ops: body.ops,
                lets: body.lets,
                chunks: body.chunks.len(),
            });
        }
    }
    // jacobian
    {
        let (roots, pos) = nonzeros(an.jacobian, &model.arena);
        let body = em.body("jacobian", &roots, &base);
        nonfinite(model, &body, "jacobian", &roots, |k| {
            pos.get(k).map(|p| p.0)
        })?;
        let sets = matrix_sets(&body.roots, &pos, quote!(m));
        let doc = format!(
            " Constraint Jacobian `C_J = ∂C/∂q` ({nc} × {nq}; structural zeros are not written).\n\n Column order: {order}."
        );
        {
            let params = &base.params;
            let stmts = &body.stmts;
            let chunks = &body.chunks;
            items.extend(quote! { #(#chunks)*
                #[doc = #doc]
                #[inline]
                pub fn jacobian(#params) -> SMatrix<#ty, NC, NQ> {
                    #stmts
                    let mut m = SMatrix::<#ty, NC, NQ>::zeros();
                    #sets
                    m
                }
            });
            stats.push(FunctionStats {
                name: "jacobian".to_string(),
                ops: body.ops,
                lets: body.lets,
                chunks: body.chunks.len(),
            });
        }
    }
    // jacobian_t
    {
        let jt: Vec<Vec<ExprId>> = an.jacobian_t.iter().map(|&e| vec![e]).collect();
        let (roots, pos) = nonzeros(&jt, &model.arena);
        let body = em.body("jacobian_t", &roots, &base);
        nonfinite(model, &body, "jacobian_t", &roots, |k| {
            pos.get(k).map(|p| p.0)
        })?;
        let pos1: Vec<(usize, usize)> = pos.iter().map(|&(i, _)| (i, 0)).collect();
        let sets = vector_sets(&body.roots, &pos1, quote!(v));
        let doc = format!(" Partial time derivative `C_t = ∂C/∂t` ({nc} entries; zero for scleronomic constraints).");
        {
            let params = &base.params;
            let stmts = &body.stmts;
            let chunks = &body.chunks;
            items.extend(quote! { #(#chunks)*
                #[doc = #doc]
                #[inline]
                pub fn jacobian_t(#params) -> SVector<#ty, NC> {
                    #stmts
                    let mut v = SVector::<#ty, NC>::zeros();
                    #sets
                    v
                }
            });
            stats.push(FunctionStats {
                name: "jacobian_t".to_string(),
                ops: body.ops,
                lets: body.lets,
                chunks: body.chunks.len(),
            });
        }
    }
    // null_space: the primary chart (`null_space_fixed`), the atlas's further charts
    // (`null_space_chart{k}`), and the default `null_space`, which picks the healthiest.
    let primary = crate::pivot::Chart {
        independent: ns.independent.clone(),
        rows: ns.rows.clone(),
        pivots: ns.pivots.clone(),
        row_scale: ns.row_scale.clone(),
        basis: ns.basis.clone(),
    };
    let charts: Vec<&crate::pivot::Chart> =
        std::iter::once(&primary).chain(ns.charts.iter()).collect();
    let mut chart_fns = Vec::new();
    for (k, chart) in charts.iter().enumerate() {
        let name = if k == 0 {
            "null_space_fixed".to_string()
        } else {
            format!("null_space_chart{k}")
        };
        let fname = format_ident!("{}", name);
        let (mut roots, pos) = nonzeros(&chart.basis, &model.arena);
        let nb = roots.len();
        roots.extend(chart.pivots.iter().copied());
        // The scale: the Frobenius norm of the pivot rows of C_J (each structural entry once).
        let mut scale_entries: Vec<ExprId> = chart.row_scale.iter().flatten().copied().collect();
        scale_entries.sort();
        scale_entries.dedup();
        let ns_start = roots.len();
        roots.extend(scale_entries.iter().copied());
        let body = em.body(&name, &roots, &base);
        nonfinite(model, &body, &name, &roots, |_| None)?;
        let sets = matrix_sets(&body.roots[..nb], &pos, quote!(d));
        let health = health_tokens(
            &body.roots[nb..ns_start],
            &body.roots[ns_start..],
            &opts.scalar,
        );
        let indep: Vec<&str> = chart
            .independent
            .iter()
            .map(|&i| coord_names[i].as_str())
            .collect();
        let which = if k == 0 {
            " of the primary chart (the fixed pivot order: identity rows at `INDEPENDENT`)"
                .to_string()
        } else {
            format!(" of chart {k} of the atlas (identity rows at `CHARTS[{k}]`)")
        };
        let doc = format!(
            " Null-space basis `D` of `C_J` ({nq} × {dof}, `C_J D = 0`) by the static LU{which}, and \
             its health in `[0, 1]`: `min(1, min_k |U_kk| / ‖C_J‖_F)` over the pivot rows, or 0 \
             when any pivot or entry of the pivot rows of `C_J` is not finite (NaN inputs) or the \
             Jacobian vanishes. Near 0: this pivot order is breaking down, or the mechanism is \
             singular.\n\n Rows: {order}. Columns: the independent coordinates {indep:?} (identity \
             rows of `D`): `q̇ = D u` with `u` their velocities."
        );
        let params = &base.params;
        let stmts = &body.stmts;
        let chunks = &body.chunks;
        let doc = wrapped_doc(&doc);
        items.extend(quote! { #(#chunks)*
            #doc
            #[inline]
            pub fn #fname(#params) -> (SMatrix<#ty, NQ, DOF>, #ty) {
                #stmts
                let mut d = SMatrix::<#ty, NQ, DOF>::zeros();
                #sets
                #health
                (d, health)
            }
        });
        stats.push(FunctionStats {
            name,
            ops: body.ops,
            lets: body.lets,
            chunks: body.chunks.len(),
        });
        chart_fns.push(fname);
    }
    {
        let nch = charts.len();
        let chart_rows: Vec<TokenStream> = charts
            .iter()
            .map(|c| {
                let ix = c.independent.iter().map(|&i| idx(i));
                quote!([#(#ix),*])
            })
            .collect();
        let switch = opts.scalar.literal(ATLAS_SWITCH).unwrap_or_default();
        let first = &chart_fns[0];
        let others = chart_fns.iter().enumerate().skip(1).map(|(k, f)| {
            let k = idx(k);
            quote! {
                let (d, h) = #f(q, p, t);
                if h > best.1 {
                    best = (d, h, #k);
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
        let default_body = if nch == 1 {
            quote!(#first(q, p, t))
        } else {
            quote! {
                let (d, h, _) = null_space_atlas(q, p, t);
                (d, h)
            }
        };
        items.extend(quote! {
            /// Charts in the atlas.
            pub const NCHARTS: usize = #nch;
            #charts_doc
            pub const CHARTS: [[usize; DOF]; NCHARTS] = [#(#chart_rows),*];
            #atlas_doc
            #[inline]
            pub fn null_space_atlas(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty, usize) {
                let (d, h) = #first(q, p, t);
                if h >= #switch {
                    return (d, h, 0);
                }
                let mut best = (d, h, 0);
                #(#others)*
                best
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
        });
    }
    // solve_dependent
    {
        let sol: Vec<Vec<ExprId>> = ns.solve.iter().map(|&e| vec![e]).collect();
        let (roots, pos) = nonzeros(&sol, &model.arena);
        let body = em.body("solve_dependent", &roots, &with_b);
        nonfinite(model, &body, "solve_dependent", &roots, |_| None)?;
        let pos1: Vec<(usize, usize)> = pos.iter().map(|&(i, _)| (i, 0)).collect();
        let sets = vector_sets(&body.roots, &pos1, quote!(x));
        let rows_used: Vec<usize> = ns.rows.clone();
        let doc = format!(
            " Solves `C_J x = b` for `x` with zero independent part (`x[INDEPENDENT[j]] = 0`) with the \
             static LU factors. Uses rows {rows_used:?} of `b`{}.",
            if ns.redundant.is_empty() { String::new() } else { format!(" (rows {:?} are redundant and ignored)", ns.redundant) }
        );
        {
            let params = &with_b.params;
            let stmts = &body.stmts;
            let chunks = &body.chunks;
            items.extend(quote! { #(#chunks)*
                #[doc = #doc]
                #[inline]
                pub fn solve_dependent(#params) -> SVector<#ty, NQ> {
                    #stmts
                    let mut x = SVector::<#ty, NQ>::zeros();
                    #sets
                    x
                }
            });
            stats.push(FunctionStats {
                name: "solve_dependent".to_string(),
                ops: body.ops,
                lets: body.lets,
                chunks: body.chunks.len(),
            });
        }
    }

    let with_qd = Signature {
        params: quote!(q: &SVector<#ty, NQ>, qd: &SVector<#ty, NQ>, p: &Params, t: #ty),
        args: quote!(q, qd, p, t),
    };
    // gamma
    {
        let g: Vec<Vec<ExprId>> = an.gamma.iter().map(|&e| vec![e]).collect();
        let (roots, pos) = nonzeros(&g, &model.arena);
        let body = em.body("gamma", &roots, &with_qd);
        nonfinite(model, &body, "gamma", &roots, |k| pos.get(k).map(|p| p.0))?;
        let pos1: Vec<(usize, usize)> = pos.iter().map(|&(i, _)| (i, 0)).collect();
        let sets = vector_sets(&body.roots, &pos1, quote!(g));
        let doc = " Right-hand side `γ` of the acceleration constraint `C_J q̈ = γ`, \
                   `γ = −(C_J q̇)_q q̇ − 2 C_qt q̇ − C_tt` (NC entries).";
        let params = &with_qd.params;
        let stmts = &body.stmts;
        let chunks = &body.chunks;
        items.extend(quote! {
            #(#chunks)*
            #[doc = #doc]
            #[inline]
            pub fn gamma(#params) -> SVector<#ty, NC> {
                #stmts
                let mut g = SVector::<#ty, NC>::zeros();
                #sets
                g
            }
        });
        stats.push(FunctionStats {
            name: "gamma".to_string(),
            ops: body.ops,
            lets: body.lets,
            chunks: body.chunks.len(),
        });
    }
    let mut dynamics_impl = TokenStream::new();
    if let Some(eom) = an.eom {
        // mass_matrix: each symmetric entry computed once.
        let mut roots = Vec::new();
        let mut pos = Vec::new();
        for i in 0..nq {
            for j in i..nq {
                let e = eom.mass[i][j];
                if !model.arena.is_zero(e) {
                    roots.push(e);
                    pos.push((i, j));
                }
            }
        }
        let body = em.body("mass_matrix", &roots, &base);
        nonfinite(model, &body, "mass_matrix", &roots, |_| None)?;
        let mut sets = TokenStream::new();
        for (e, &(i, j)) in body.roots.iter().zip(&pos) {
            let (i, j, diag) = (idx(i), idx(j), i == j);
            if diag {
                sets.extend(quote!(m[(#i, #j)] = #e;));
            } else {
                sets.extend(quote!(let v = #e; m[(#i, #j)] = v; m[(#j, #i)] = v;));
            }
        }
        let doc = format!(" Generalised mass matrix `M(q, p, t)` ({nq} × {nq}, symmetric; each entry computed once).\n\n Row and column order: {order}.");
        let params = &base.params;
        let stmts = &body.stmts;
        let chunks = &body.chunks;
        items.extend(quote! {
            #(#chunks)*
            #[doc = #doc]
            #[inline]
            pub fn mass_matrix(#params) -> SMatrix<#ty, NQ, NQ> {
                #stmts
                let mut m = SMatrix::<#ty, NQ, NQ>::zeros();
                #sets
                m
            }
        });
        stats.push(FunctionStats {
            name: "mass_matrix".to_string(),
            ops: body.ops,
            lets: body.lets,
            chunks: body.chunks.len(),
        });
        // forces
        let f: Vec<Vec<ExprId>> = eom.forces.iter().map(|&e| vec![e]).collect();
        let (roots, pos) = nonzeros(&f, &model.arena);
        let body = em.body("forces", &roots, &with_qd);
        nonfinite(model, &body, "forces", &roots, |_| None)?;
        let pos1: Vec<(usize, usize)> = pos.iter().map(|&(i, _)| (i, 0)).collect();
        let sets = vector_sets(&body.roots, &pos1, quote!(f));
        let doc = format!(" Generalised forces `f(q, q̇, p, t)`: applied forces, gravity, springs and dampers, and the quadratic-velocity (Coriolis and centrifugal) terms of the kinetic energy, so that `M q̈ = f + C_Jᵀ λ`.\n\n Order: {order}.");
        let params = &with_qd.params;
        let stmts = &body.stmts;
        let chunks = &body.chunks;
        items.extend(quote! {
            #(#chunks)*
            #[doc = #doc]
            #[inline]
            pub fn forces(#params) -> SVector<#ty, NQ> {
                #stmts
                let mut f = SVector::<#ty, NQ>::zeros();
                #sets
                f
            }
        });
        stats.push(FunctionStats {
            name: "forces".to_string(),
            ops: body.ops,
            lets: body.lets,
            chunks: body.chunks.len(),
        });
        let energy_impl = if let Some(e) = eom.energy {
            let body = em.body("energy", &[e], &with_qd);
            nonfinite(model, &body, "energy", &[e], |_| None)?;
            let val = &body.roots[0];
            let params = &with_qd.params;
            let stmts = &body.stmts;
            let chunks = &body.chunks;
            items.extend(quote! {
                #(#chunks)*
                /// Total energy: kinetic energy of the bodies plus the potential energy of gravity and springs.
                #[inline]
                pub fn energy(#params) -> #ty {
                    #stmts
                    #val
                }
            });
            stats.push(FunctionStats {
                name: "energy".to_string(),
                ops: body.ops,
                lets: body.lets,
                chunks: body.chunks.len(),
            });
            quote! {
                fn energy(q: &SVector<#ty, NQ>, qd: &SVector<#ty, NQ>, p: &Params, t: #ty) -> Option<#ty> {
                    Some(energy(q, qd, p, t))
                }
            }
        } else {
            TokenStream::new()
        };
        dynamics_impl = quote! {
            impl #krate::runtime::Dynamics<NQ, NC, DOF> for Model {
                #[inline]
                fn mass_matrix(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> SMatrix<#ty, NQ, NQ> {
                    mass_matrix(q, p, t)
                }
                #[inline]
                fn forces(q: &SVector<#ty, NQ>, qd: &SVector<#ty, NQ>, p: &Params, t: #ty) -> SVector<#ty, NQ> {
                    forces(q, qd, p, t)
                }
                #[inline]
                fn gamma(q: &SVector<#ty, NQ>, qd: &SVector<#ty, NQ>, p: &Params, t: #ty) -> SVector<#ty, NC> {
                    gamma(q, qd, p, t)
                }
                #energy_impl
            }
        };
    }

    let name = rust_ident(&model.name);
    let mod_docs = doc_lines(&model.docs);
    let coord_lits = coord_names.iter();
    let nominal: Vec<TokenStream> = model
        .coords
        .iter()
        .map(|c| float(model, &opts.scalar, c.nominal))
        .collect::<crate::Result<_>>()?;
    let indep: Vec<proc_macro2::Literal> = ns.independent.iter().map(|&i| idx(i)).collect();
    let param_fields = model.params.iter().zip(&names.field).map(|(p, f)| {
        let d = if p.docs.is_empty() {
            let s = match p.default {
                Some(v) => format!(" Parameter `{}` (default {v}).", p.name),
                None => format!(" Parameter `{}`.", p.name),
            };
            quote!(#[doc = #s])
        } else {
            doc_lines(&p.docs)
        };
        quote!(#d pub #f: #ty,)
    });
    let all_defaults = model.params.iter().all(|p| p.default.is_some());
    let default_impl = if all_defaults {
        let fields = model
            .params
            .iter()
            .zip(&names.field)
            .map(|(p, f)| {
                let v = float(model, &opts.scalar, p.default.unwrap_or(0.0))?;
                Ok(quote!(#f: #v,))
            })
            .collect::<crate::Result<Vec<_>>>()?;
        quote! {
            impl Default for Params {
                fn default() -> Self {
                    Self { #(#fields)* }
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let notes_doc = if ns.notes.is_empty() {
        TokenStream::new()
    } else {
        let mut lines = vec![
            String::new(),
            "# Notes of the analysis".to_string(),
            String::new(),
        ];
        for n in &ns.notes {
            lines.extend(wrap(&format!("- {n}")));
        }
        doc_lines(&lines)
    };
    let size_doc = format!(
        " Sizes: NQ = {nq} coordinates, NC = {nc} constraint equations, rank {}, DOF = {dof}.",
        ns.rank
    );
    let redundant: Vec<proc_macro2::Literal> = ns.redundant.iter().map(|&i| idx(i)).collect();
    let nred = idx(redundant.len());
    let name_str = model.name.clone();
    let nfun = idx(stats.len());
    let (nq_lit, nc_lit, dof_lit) = (idx(nq), idx(nc), idx(dof));
    let rank_lit = idx(ns.rank);
    let prow: Vec<proc_macro2::Literal> = ns.rows.iter().map(|&i| idx(i)).collect();
    let pcol: Vec<proc_macro2::Literal> = ns.cols.iter().map(|&i| idx(i)).collect();
    let op_names = stats.iter().map(|f| f.name.as_str());
    let op_totals = stats.iter().map(|f| idx(f.ops.total()));
    // The module keeps the visibility it was declared with (`mod`, `pub mod`,
    // `pub(crate) mod`).
    let vis = syn::parse_str::<syn::Visibility>(&model.vis)
        .map(quote::ToTokens::into_token_stream)
        .unwrap_or_else(|_| quote!(pub));
    let tokens = quote! {
        #mod_docs
        ///
        #[doc = #size_doc]
        #notes_doc
        #[allow(unused_variables, unused_mut, non_snake_case, clippy::all, clippy::pedantic)]
        #vis mod #name {
            use #krate::nalgebra::{SMatrix, SVector};

            /// Number of generalised coordinates.
            pub const NQ: usize = #nq_lit;
            /// Number of scalar constraint equations.
            pub const NC: usize = #nc_lit;
            /// Degrees of freedom (`NQ − rank C_J`).
            pub const DOF: usize = #dof_lit;
            /// Independent coordinates: the identity rows of the null-space basis.
            pub const INDEPENDENT: [usize; DOF] = [#(#indep),*];
            /// Rank of the constraint Jacobian found by probing.
            pub const RANK: usize = #rank_lit;
            /// Constraint rows in static pivot order (`P`): the rows the LU factors.
            pub const PIVOT_ROWS: [usize; RANK] = [#(#prow),*];
            /// Coordinates in static pivot order (`Q`): `RANK` dependent, then the independent.
            pub const PIVOT_COLS: [usize; NQ] = [#(#pcol),*];
            /// Constraint equations found redundant (not used by `null_space`/`solve_dependent`).
            pub const REDUNDANT: [usize; #nred] = [#(#redundant),*];
            /// Coordinate names, in coordinate order.
            pub const COORD_NAMES: [&str; NQ] = [#(#coord_lits),*];
            /// Nominal coordinates given in the model.
            pub const NOMINAL_Q: [#ty; NQ] = [#(#nominal),*];
            /// Operations performed by each generated function (after common-subexpression
            /// elimination), as counted at generation.
            pub const OP_COUNTS: [(&str, usize); #nfun] = [#((#op_names, #op_totals)),*];

            /// Runtime parameters of the mechanism.
            #[derive(Clone, Copy, Debug, PartialEq)]
            pub struct Params {
                #(#param_fields)*
            }
            #default_impl

            #items

            /// The mechanism as a type, for the runtime's generic solvers.
            #[derive(Clone, Copy, Debug, Default)]
            pub struct Model;

            impl #krate::runtime::Mechanism<NQ, NC, DOF> for Model {
                type Params = Params;
                const NAME: &'static str = #name_str;
                const COORD_NAMES: [&'static str; NQ] = COORD_NAMES;
                const INDEPENDENT: [usize; DOF] = INDEPENDENT;
                fn nominal_q() -> SVector<#ty, NQ> {
                    SVector::<#ty, NQ>::from(NOMINAL_Q)
                }
                #[inline]
                fn residual(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> SVector<#ty, NC> {
                    residual(q, p, t)
                }
                #[inline]
                fn jacobian(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> SMatrix<#ty, NC, NQ> {
                    jacobian(q, p, t)
                }
                #[inline]
                fn jacobian_t(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> SVector<#ty, NC> {
                    jacobian_t(q, p, t)
                }
                #[inline]
                fn null_space(q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty) {
                    null_space_fixed(q, p, t)
                }
                #[inline]
                fn solve_dependent(q: &SVector<#ty, NQ>, p: &Params, t: #ty, b: &SVector<#ty, NC>) -> SVector<#ty, NQ> {
                    solve_dependent(q, p, t, b)
                }
            }

            #dynamics_impl
        }
    };
    let stats = ModuleStats {
        name: model.name.clone(),
        nq,
        nc,
        rank: ns.rank,
        dof,
        independent: ns
            .independent
            .iter()
            .map(|&i| coord_names[i].clone())
            .collect(),
        functions: stats,
        notes: ns.notes.clone(),
    };
    Ok((tokens, stats))
}

/// A literal of `v` (nominal values and parameter defaults, checked finite by lowering).
fn float(model: &Model, s: &ScalarType, v: f64) -> crate::Result<TokenStream> {
    let lit = s.literal(v).ok_or_else(|| {
        crate::Error::new(
            model.span,
            format!(
                "mechanism `{}`: a nominal value or default is not finite ({v})",
                model.name
            ),
        )
    })?;
    Ok(if v < 0.0 { quote!(-#lit) } else { lit })
}

/// Fails when `body` (of generated function `fname`) met a constant that is not finite,
/// located at the constraint of the first root holding it (`row_of` maps a root to its
/// constraint, where it has one), else at the first constraint whose own expression
/// holds it, else at the module.
fn nonfinite(
    model: &Model,
    body: &function::Body,
    fname: &str,
    roots: &[ExprId],
    row_of: impl Fn(usize) -> Option<usize>,
) -> crate::Result<()> {
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
    let row = roots
        .iter()
        .enumerate()
        .find(|&(_, &r)| holds(r))
        .and_then(|(k, _)| row_of(k))
        .or_else(|| model.constraints.iter().position(|c| holds(c.expr)));
    let (span, what) = match row.and_then(|i| model.constraints.get(i)) {
        Some(c) => (c.span, format!("the equation `{}`", c.label)),
        None => (model.span, format!("mechanism `{}`", model.name)),
    };
    Err(crate::Error::new(
        span,
        format!(
            "a constant of the generated `{fname}` for {what} is not finite ({v}): \
             its value or a derivative overflows f64; rescale the constants"
        ),
    ))
}

fn coord_order_doc(names: &[String]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{i}: `{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn sym_names(
    coords: &[String],
    params: &[String],
    mut taken: std::collections::HashSet<String>,
) -> SymNames {
    let mut fresh = |base: String| -> Ident {
        let mut name = base;
        loop {
            if is_temp_name(&name) {
                // `sin_x`, `t12`, `b_3`, `f_part2`: prefixed and suffixed, the name leaves
                // the temporaries' name space for good.
                name = format!("v_{name}_");
            } else if taken.contains(&name) {
                name.push('_');
            } else {
                break;
            }
        }
        taken.insert(name.clone());
        rust_ident(&name)
    };
    let coord: Vec<Ident> = coords.iter().map(|c| fresh(c.clone())).collect();
    let param: Vec<Ident> = params.iter().map(|c| fresh(c.clone())).collect();
    let vel: Vec<Ident> = coords.iter().map(|c| fresh(format!("{c}_dot"))).collect();
    let field = params.iter().map(|p| rust_ident(p)).collect();
    SymNames {
        coord,
        vel,
        param,
        field,
    }
}

/// Whether two name allocations give every coordinate, velocity and parameter the same
/// identifier.
fn same_names(a: &SymNames, b: &SymNames) -> bool {
    a.coord == b.coord && a.vel == b.vel && a.param == b.param
}

/// Whether `s` has the shape of a name emission gives its own temporaries: `t12`,
/// `live3`, `b_0`, `sin_…`, `cos_…`, `forces_part1`.
fn is_temp_name(s: &str) -> bool {
    let digits_after = |prefix: &str| {
        s.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit()))
    };
    digits_after("t")
        || digits_after("live")
        || digits_after("b_")
        || s.starts_with("sin_")
        || s.starts_with("cos_")
        || s.rsplit_once("_part")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// Structurally nonzero entries of a matrix, with their positions.
fn nonzeros(m: &[Vec<ExprId>], arena: &crate::expr::Arena) -> (Vec<ExprId>, Vec<(usize, usize)>) {
    let mut roots = Vec::new();
    let mut pos = Vec::new();
    for (i, row) in m.iter().enumerate() {
        for (j, &e) in row.iter().enumerate() {
            if !arena.is_zero(e) {
                roots.push(e);
                pos.push((i, j));
            }
        }
    }
    (roots, pos)
}

fn matrix_sets(vals: &[TokenStream], pos: &[(usize, usize)], m: TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for (e, &(i, j)) in vals.iter().zip(pos) {
        let (i, j) = (idx(i), idx(j));
        out.extend(quote!(#m[(#i, #j)] = #e;));
    }
    out
}

fn vector_sets(vals: &[TokenStream], pos: &[(usize, usize)], v: TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for (e, &(i, _)) in vals.iter().zip(pos) {
        let i = idx(i);
        out.extend(quote!(#v[#i] = #e;));
    }
    out
}

/// `items` combined pairwise into a balanced tree by `op` (depth `log2 n`, so the combining
/// operations run in parallel instead of one long dependency chain).
fn balanced(
    items: &[TokenStream],
    op: &dyn Fn(&TokenStream, &TokenStream) -> TokenStream,
) -> TokenStream {
    match items.len() {
        0 => quote!(0.0),
        1 => items[0].clone(),
        n => {
            let (l, r) = items.split_at(n / 2);
            op(&balanced(l, op), &balanced(r, op))
        }
    }
}

/// The sum of `items` as a balanced tree, without parentheses around the whole (which
/// rustc's `unused_parens` would flag in a call argument).
fn sum_tree(items: &[TokenStream]) -> TokenStream {
    let add = |a: &TokenStream, b: &TokenStream| quote!((#a + #b));
    if items.len() < 2 {
        return balanced(items, &add);
    }
    let (l, r) = items.split_at(items.len() / 2);
    let (l, r) = (balanced(l, &add), balanced(r, &add));
    quote!(#l + #r)
}

/// The statements computing `health` (see `null_space`'s docs) from the pivots and the
/// scale entries (structural entries of the pivot rows of `C_J`); `d` is the basis.
fn health_tokens(pivots: &[TokenStream], scale: &[TokenStream], sc: &ScalarType) -> TokenStream {
    let ty = &sc.ty;
    // Finite literals always print.
    let one = sc.literal(1.0).unwrap_or_default();
    let zero = sc.literal(0.0).unwrap_or_default();
    if pivots.is_empty() {
        // No constraints: D = I, healthy unless the inputs are not finite.
        return quote! {
            let health = if d.sum().is_finite() { #one } else { #zero };
        };
    }
    // Balanced trees, not left-to-right chains: a chain of 260 additions is latency-bound
    // (about 4 cycles each) and tripled the Stewart platform's `null_space` time.
    let abs: Vec<TokenStream> = pivots.iter().map(|p| quote!(#ty::abs(#p))).collect();
    let min_pivot = balanced(&abs, &|a, b| quote!(#ty::min(#a, #b)));
    // Every input of the basis is an entry of the pivot rows (in `health_scale`) or a
    // pivot: when those are finite, so is the basis (or its health is ~0 by overflow).
    let check = sum_tree(pivots);
    let squares: Vec<TokenStream> = scale.iter().map(|e| quote!(#e * #e)).collect();
    let sq = sum_tree(&squares);
    quote! {
        let health_scale = #ty::sqrt(#sq);
        let min_pivot = #min_pivot;
        let health = if (#check + health_scale).is_finite() && health_scale > #zero {
            #ty::min(min_pivot / health_scale, #one)
        } else {
            #zero
        };
    }
}
