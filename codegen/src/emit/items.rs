//! Writing the generated functions: one loop over the [table](super::table).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::docs::{comment, wrapped_doc};
use super::expr::{block, idx, ScalarType};
use super::function::{Body, Emitter, Signature};
use super::health::health_tokens;
use super::table::{Entry, GenFn, Shape};
use super::{EmitOptions, FunctionStats, ATLAS_SWITCH};
use crate::expr::{Arena, ExprId};
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
            Entry::Atlas(charts) => items.extend(atlas(charts, opts, em.locals)),
            Entry::NamedChart(name, independent, _) => {
                let konst = quote::format_ident!("{}", crate::model::chart_item_names(name).1);
                let ty = super::traits::chart_type(name);
                let cols = independent.iter().map(|&i| idx(i));
                let names: Vec<&str> = independent
                    .iter()
                    .filter_map(|&i| model.coords.get(i).map(|c| c.name.as_str()))
                    .collect();
                let doc = format!(
                    " Independent coordinates of the chart `{name}` ({}): the identity rows of \
                     `null_space_{name}`, the coordinates `solve_dependent_{name}` and the type \
                     `{ty}` hold.",
                    names.join(", ")
                );
                items.extend(quote! {
                    #[doc = #doc]
                    pub const #konst: [usize; DOF] = [#(#cols),*];
                });
            }
            Entry::ParamCount(n) => {
                let n = idx(*n);
                items.extend(quote! {
                    /// Number of parameters (inputs included): the columns of `forces_jacobian_p`.
                    pub const NP: usize = #n;
                });
            }
            Entry::InequalityNames(list) => {
                let ni = idx(list.len());
                let names = list.iter().map(|(n, _)| n);
                let e: Vec<TokenStream> = list
                    .iter()
                    .map(|(_, e)| opts.scalar.literal(*e).unwrap_or_default())
                    .collect();
                let ty = &opts.scalar.ty;
                items.extend(quote! {
                    /// Number of inequality constraints `g ≥ 0` (scalar components).
                    pub const NI: usize = #ni;
                    /// Names of the inequality constraints, in the order of `inequality`.
                    pub const INEQUALITY_NAMES: [&str; NI] = [#(#names),*];
                    /// Restitution coefficient of each inequality constraint (impacts).
                    pub const RESTITUTION: [#ty; NI] = [#(#e),*];
                });
            }
            Entry::Friction(mu, contact) => {
                let nt = idx(contact.len());
                let mu: Vec<TokenStream> = mu
                    .iter()
                    .map(|m| opts.scalar.literal(*m).unwrap_or_default())
                    .collect();
                let contact = contact.iter().map(|&k| idx(k));
                let ty = &opts.scalar.ty;
                items.extend(quote! {
                    /// Coulomb friction coefficient of each inequality constraint (0: frictionless).
                    pub const FRICTION: [#ty; NI] = [#(#mu),*];
                    /// Number of slip rows of the frictional contacts (one per planar contact, two
                    /// per spatial one).
                    pub const NT: usize = #nt;
                    /// The inequality (contact) each slip row belongs to.
                    pub const TANGENT_CONTACT: [usize; NT] = [#(#contact),*];
                });
            }
            Entry::JointFriction(joints) => {
                let ns = idx(joints.len());
                let lit = |x: f64| opts.scalar.literal(x).unwrap_or_default();
                let names = joints.iter().map(|j| &j.name);
                let mu = joints.iter().map(|j| lit(j.mu));
                let radius = joints.iter().map(|j| lit(j.radius));
                let rows = joints.iter().map(|j| {
                    let (a, n) = (idx(j.rows.0), idx(j.rows.1));
                    quote!((#a, #n))
                });
                let ty = &opts.scalar.ty;
                items.extend(quote! {
                    /// Number of joints with dry friction (`constraint NAME: …, friction = μ, slip = v`).
                    pub const NS: usize = #ns;
                    /// Names of the joints with dry friction, in source order.
                    pub const JOINT_FRICTION_NAMES: [&str; NS] = [#(#names),*];
                    /// Coulomb friction coefficient of each joint.
                    pub const JOINT_FRICTION: [#ty; NS] = [#(#mu),*];
                    /// The radius scaling each joint's normal force (friction `μ r ‖N‖`).
                    pub const FRICTION_RADIUS: [#ty; NS] = [#(#radius),*];
                    /// Each joint's normal: its first constraint row and number of rows (their
                    /// multipliers are the reaction `N`).
                    pub const FRICTION_ROWS: [(usize, usize); NS] = [#(#rows),*];
                });
            }
            Entry::OutputNames(names) => {
                let no = idx(names.len());
                items.extend(quote! {
                    /// Number of named outputs (scalar components: `output tip = vec2(…)` counts two).
                    pub const NO: usize = #no;
                    /// Names of the outputs, in the order of `outputs` (`tip_x`, `tip_y` for a vector).
                    pub const OUTPUT_NAMES: [&str; NO] = [#(#names),*];
                });
            }
        }
    }
    Ok((items, stats))
}

/// One straight-line function (and its chunks): for an output of fixed shape, the body goes
/// to `{name}_into`, which writes the structural nonzeros into the caller's storage, and
/// `{name}` is a thin allocating wrapper around it (one body, two calling conventions).
pub(crate) fn function(
    model: &Model,
    em: &Emitter<'_>,
    f: &GenFn,
    opts: &EmitOptions,
) -> crate::error::Result<(TokenStream, FunctionStats)> {
    let ty = &opts.scalar.ty;
    let generics = opts.scalar.generics();
    let sig = Signature {
        params: f.inputs.params(&opts.scalar),
        args: f.inputs.args(),
    };
    let mut body = em.body(&f.name, &f.roots, &sig);
    nonfinite(model, em.arena, &body, f, |k| {
        if f.rows_are_constraints {
            f.pos.get(k).map(|p| p.0)
        } else {
            None
        }
    })?;
    let doc = wrapped_doc(&f.doc);
    let name = format_ident!("{}", f.name);
    let params = &sig.params;
    let args = &sig.args;
    let chunks = &body.chunks;
    let local = |base: &str| em.locals.local(base);
    let out = local("out");
    let ts = match &f.shape {
        Shape::Scalar => {
            // The value of a scalar function is its last `let` (roots are always named).
            let value = body.roots.first().cloned().unwrap_or_default();
            let block = block([std::mem::take(&mut body.stmts), value]);
            quote! {
                #(#chunks)*
                #doc
                #[allow(clippy::let_and_return)]
                #[inline]
                pub fn #name #generics (#params) -> #ty #block
            }
        }
        Shape::Values {
            prefix,
            dims,
            colptr,
            rowidx,
        } => {
            let n = idx(f.roots.len());
            let sets = body.roots.iter().enumerate().map(|(k, e)| {
                let k = idx(k);
                quote!(#out[#k] = #e;)
            });
            let (nnz, cp, ri) = (
                format_ident!("{}_NNZ", prefix),
                format_ident!("{}_COLPTR", prefix),
                format_ident!("{}_ROWIDX", prefix),
            );
            let (rows, cols) = (dims.0.tokens(), dims.1.tokens());
            let (colptr, rowidx) = (
                colptr.iter().map(|&k| idx(k)),
                rowidx.iter().map(|&k| idx(k)),
            );
            let nnz_doc = wrapped_doc(&format!(
                " Structural nonzeros of the `{rows}` × `{cols}` matrix `{}` writes.",
                f.name
            ));
            let cp_doc = wrapped_doc(&format!(
                " Compressed columns of `{}`: the values of column `j` are `{cp}[j]..{cp}[j + 1]`.",
                f.name
            ));
            let ri_doc = wrapped_doc(&format!(" Row of each value `{}` writes.", f.name));
            let block = block(std::iter::once(std::mem::take(&mut body.stmts)).chain(sets));
            quote! {
                #nnz_doc
                pub const #nnz: usize = #n;
                #cp_doc
                pub const #cp: [usize; #cols + 1] = [#(#colptr),*];
                #ri_doc
                pub const #ri: [usize; #nnz] = [#(#rowidx),*];
                #(#chunks)*
                #doc
                #[inline]
                pub fn #name #generics (#params, #out: &mut [#ty; #nnz]) #block
            }
        }
        Shape::Kinematics { .. } => kinematics(em, f, &mut body, &sig, opts),
        Shape::Fused { parts } => {
            let outs: Vec<proc_macro2::Ident> = (0..parts.len())
                .map(|k| local(&format!("out{k}")))
                .collect();
            let mut sets = TokenStream::new();
            let mut start = 0;
            for (k, &(_, _, n)) in parts.iter().enumerate() {
                let end = start + n;
                sets.extend(matrix_sets(
                    &body.roots[start..end],
                    &f.pos[start..end],
                    &outs[k],
                ));
                start = end;
            }
            let out_params = parts.iter().zip(&outs).map(|(&(r, c, _), o)| {
                let (r, c) = (r.tokens(), c.tokens());
                quote!(#o: &mut SMatrix<#ty, #r, #c>)
            });
            let into = format_ident!("{}_into", f.name);
            let block = block([std::mem::take(&mut body.stmts), sets]);
            quote! {
                #(#chunks)*
                #doc
                #[allow(clippy::too_many_arguments)]
                #[inline]
                pub fn #into #generics (#params, #(#out_params),*) #block
            }
        }
        shape => {
            let ret = shape.ret(&opts.scalar);
            let large_doc = large_output_doc(model, f, shape, &opts.scalar);
            let target = shape.target(ty);
            let zeros = opts.scalar.zeros(&target);
            let health_ty = opts.scalar.health_ty();
            let into = format_ident!("{}_into", f.name);
            let sets = output_sets(em, f, &body.roots, &out, opts);
            let block = block([std::mem::take(&mut body.stmts), sets]);
            let doc = quote!(#doc #large_doc);
            // The rules of `_into` functions are the module's docs, said once.
            let module = if opts.scalar.bound.is_some() {
                "super"
            } else {
                "self"
            };
            let into_doc = wrapped_doc(&format!(
                " `{}` written into `out` ([writing into storage]({module}#writing-into-storage)).",
                f.name
            ));
            // A basis's value is its health figure, the last `let`.
            let allow = if matches!(shape, Shape::Basis { .. }) {
                quote!(#[allow(clippy::let_and_return)])
            } else {
                TokenStream::new()
            };
            let (into_ret, wrapper) = match shape {
                Shape::Basis { .. } => {
                    let (d, h) = (local("d"), local("h"));
                    (
                        quote!(-> #health_ty),
                        quote! {
                            let mut #d = #zeros;
                            let #h = #into(#args, &mut #d);
                            (#d, #h)
                        },
                    )
                }
                _ if f.roots.is_empty() => (TokenStream::new(), zeros.clone()),
                _ => {
                    let buf = local(f.buffer);
                    (
                        TokenStream::new(),
                        quote! {
                            let mut #buf = #zeros;
                            #into(#args, &mut #buf);
                            #buf
                        },
                    )
                }
            };
            quote! {
                #(#chunks)*
                #doc
                #[inline]
                pub fn #name #generics (#params) -> #ret {
                    #wrapper
                }
                #into_doc
                #allow
                #[inline(always)]
                pub fn #into #generics (#params, #out: &mut #target) #into_ret #block
            }
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

/// Returned by value, an output larger than this many bytes gets a note in its allocating
/// wrapper's documentation pointing to `{name}_into` (Rust zeroes the value and copies it
/// into the caller's slot on every call: 132 KB, 12 µs against 1.8 µs for `_into`, for the
/// 128 × 129 Jacobian of `four_bar_chain(64)`).
const LARGE_OUTPUT_BYTES: usize = 16 * 1024;

/// The allocating wrapper's note on a large by-value output (empty for a small one).
fn large_output_doc(model: &Model, f: &GenFn, shape: &Shape, scalar: &ScalarType) -> TokenStream {
    let bytes = if scalar.ty.to_string() == "f32" { 4 } else { 8 };
    let entries = shape.entries(model.coords.len(), model.constraints.len());
    match entries.map(|n| n * bytes) {
        Some(b) if b > LARGE_OUTPUT_BYTES && !scalar.is_generic() => {
            let values = if f.name == "jacobian" {
                " (or its structural nonzeros with `jacobian_values`)"
            } else {
                ""
            };
            let text = wrapped_doc(&format!(
                " The value is {} KB, zeroed and returned by value on every call: in a loop, \
                 write into reused storage with [`{}_into`]{values}.",
                b / 1024,
                f.name
            ));
            quote!(#[doc = " "] #text)
        }
        _ => TokenStream::new(),
    }
}

/// The assignments of `f`'s output entries from the roots' values `vals` into `out` (a
/// `&mut` of the output's storage); for a basis, then the health figure, as the value.
fn output_sets(
    em: &Emitter<'_>,
    f: &GenFn,
    vals: &[TokenStream],
    out: &proc_macro2::Ident,
    opts: &EmitOptions,
) -> TokenStream {
    match &f.shape {
        Shape::Vector(_) => {
            let mut sets = TokenStream::new();
            for (k, (e, &(i, _))) in vals.iter().zip(&f.pos).enumerate() {
                if let Some(c) = f.comments.get(k) {
                    sets.extend(comment(opts, c));
                }
                let i = idx(i);
                sets.extend(quote!(#out[#i] = #e;));
            }
            sets
        }
        Shape::Matrix(..) => matrix_sets(vals, &f.pos, out),
        Shape::Symmetric(_) => {
            let v = em.locals.local("v");
            let mut sets = TokenStream::new();
            for (e, &(i, j)) in vals.iter().zip(&f.pos) {
                let (i, j, diag) = (idx(i), idx(j), i == j);
                if diag {
                    sets.extend(quote!(#out[(#i, #j)] = #e;));
                } else {
                    sets.extend(quote!(let #v = #e; #out[(#i, #j)] = #v; #out[(#j, #i)] = #v;));
                }
            }
            sets
        }
        Shape::Basis { pivots } => {
            let nb = f.pos.len();
            basis_sets(
                em,
                &f.pos,
                &f.roots[nb..],
                &vals[..nb],
                &vals[nb..],
                (*pivots, &f.scale_weights),
                out,
                opts,
            )
        }
        Shape::Scalar | Shape::Values { .. } | Shape::Kinematics { .. } | Shape::Fused { .. } => {
            TokenStream::new()
        }
    }
}

/// A basis written into `out` from its entries' values, then the health figure from the
/// values of its pivots and scale entries (`extra`, whose roots are `extra_roots`), as the
/// block's value.
#[allow(clippy::too_many_arguments)]
fn basis_sets(
    em: &Emitter<'_>,
    pos: &[(usize, usize)],
    extra_roots: &[ExprId],
    entries: &[TokenStream],
    extra: &[TokenStream],
    (pivots, scale_weights): (usize, &[u32]),
    out: &proc_macro2::Ident,
    opts: &EmitOptions,
) -> TokenStream {
    let health_name = em.locals.local("health");
    let sets = matrix_sets(entries, pos, out);
    // The generic family's health figure is computed in `S::Part` from its pivots' parts.
    let terms: Vec<(TokenStream, Option<f64>)> = extra
        .iter()
        .zip(extra_roots)
        .map(|(v, &r)| {
            let v = if opts.scalar.is_generic() {
                quote!(Real::part(#v))
            } else {
                v.clone()
            };
            (v, em.arena.as_const(r))
        })
        .collect();
    let health = health_tokens(
        &terms[..pivots],
        (&terms[pivots..], scale_weights),
        out,
        &opts.scalar,
        &opts.crate_path,
        em.locals,
    );
    quote! {
        #sets
        #health
        #health_name
    }
}

/// The fused `kinematics_into` / `kinematics`: residual, Jacobian and the primary chart's
/// basis with its health, from one body (their shared subexpressions computed once).
fn kinematics(
    em: &Emitter<'_>,
    f: &GenFn,
    body: &mut super::function::Body,
    sig: &Signature,
    opts: &EmitOptions,
) -> TokenStream {
    let Shape::Kinematics {
        residual,
        jacobian,
        basis,
        pivots,
    } = f.shape
    else {
        return TokenStream::new();
    };
    let ty = &opts.scalar.ty;
    let params = &sig.params;
    let args = &sig.args;
    let chunks = &body.chunks;
    let local = |base: &str| em.locals.local(base);
    let (r, j, d) = (local("r"), local("m"), local("d"));
    let vals = &body.roots;
    let (a, b, c) = (residual, residual + jacobian, residual + jacobian + basis);
    let res_sets = vals[..a].iter().zip(&f.pos[..a]).map(|(e, &(i, _))| {
        let i = idx(i);
        quote!(#r[#i] = #e;)
    });
    let jac_sets = matrix_sets(&vals[a..b], &f.pos[a..b], &j);
    let basis = basis_sets(
        em,
        &f.pos[b..c],
        &f.roots[c..],
        &vals[b..c],
        &vals[c..],
        (pivots, &f.scale_weights),
        &d,
        opts,
    );
    let doc = wrapped_doc(&f.doc);
    let (kr, kj, kd, kh) = (local("kr"), local("kj"), local("kd"), local("kh"));
    let block = block(
        std::iter::once(std::mem::take(&mut body.stmts))
            .chain(res_sets)
            .chain([jac_sets, basis]),
    );
    quote! {
        /// What [`kinematics`] returns: `C`, `C_J` and `D` at one configuration.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Kinematics {
            /// Constraint residual `C(q, p, t)` (as `residual`).
            pub residual: SVector<#ty, NC>,
            /// Constraint Jacobian `C_J` (as `jacobian`).
            pub jacobian: SMatrix<#ty, NC, NQ>,
            /// Null-space basis of the primary chart (as `null_space_fixed`).
            pub null_space: SMatrix<#ty, NQ, DOF>,
            /// Health of the basis (as `null_space_fixed`'s second value).
            pub health: #ty,
        }
        #(#chunks)*
        /// The residual, the Jacobian and the primary chart's null-space basis (`null_space_fixed`)
        /// with its health, written into `r`, `m` and `d` from one evaluation: only structurally
        /// nonzero entries are written (zero the storage once and reuse it). Returns the health.
        #[allow(clippy::let_and_return)]
        #[inline]
        pub fn kinematics_into(
            #params,
            #r: &mut SVector<#ty, NC>,
            #j: &mut SMatrix<#ty, NC, NQ>,
            #d: &mut SMatrix<#ty, NQ, DOF>,
        ) -> #ty #block
        #doc
        #[inline]
        pub fn kinematics(#params) -> Kinematics {
            let mut #kr = SVector::<#ty, NC>::zeros();
            let mut #kj = SMatrix::<#ty, NC, NQ>::zeros();
            let mut #kd = SMatrix::<#ty, NQ, DOF>::zeros();
            let #kh = kinematics_into(#args, &mut #kr, &mut #kj, &mut #kd);
            Kinematics {
                residual: #kr,
                jacobian: #kj,
                null_space: #kd,
                health: #kh,
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
fn atlas(
    charts: &[(String, Vec<usize>)],
    opts: &EmitOptions,
    locals: &super::names::Locals,
) -> TokenStream {
    let local = |base: &str| locals.local(base);
    let ty = &opts.scalar.ty;
    let krate = &opts.crate_path;
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
    // The default `null_space`: the other charts' bases re-expressed in `INDEPENDENT`
    // (charts with other independent coordinates through `in_independent`).
    let primary = &charts[0].1;
    let default_others = fns.iter().zip(charts).skip(1).map(|(f, (_, ind))| {
        let convert = (ind != primary).then(|| {
            quote!(let (#d, #h) = #krate::runtime::__generated::in_independent(&#d, #h, &INDEPENDENT);)
        });
        quote! {
            let (#d, #h) = #f(q, p, t);
            #convert
            if #h > #best.1 {
                #best = (#d, #h);
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
    if nch == 1 {
        // One chart: every entry point is the fixed order itself (no dispatch, no atlas
        // docs), under the names the multi-chart modules have.
        return quote! {
            /// Charts in the atlas: the module has one, the primary chart.
            pub const NCHARTS: usize = 1;
            /// Independent coordinates of the one chart (`INDEPENDENT`).
            pub const CHARTS: [[usize; DOF]; NCHARTS] = [INDEPENDENT];
            /// `null_space_fixed` with its chart's index, 0 (the module has one chart).
            #[inline]
            pub fn null_space_atlas(
                q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty, usize
            ) {
                let (#d, #h) = #first(q, p, t);
                (#d, #h, 0)
            }
            /// Null-space basis `D` of `C_J` (`C_J D = 0`) with identity rows at
            /// `INDEPENDENT` and its health in `[0, 1]`: `null_space_fixed` (the module has
            /// one chart).
            #[inline]
            pub fn null_space(
                q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty
            ) {
                #first(q, p, t)
            }
            /// `null_space_fixed` with its chart's independent coordinates, `INDEPENDENT`
            /// (the module has one chart).
            #[inline]
            pub fn null_space_in_chart(
                q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty, [usize; DOF]
            ) {
                let (#d, #h) = #first(q, p, t);
                (#d, #h, INDEPENDENT)
            }
        };
    }
    let default_body = quote! {
        let (#d, #h) = #first(q, p, t);
        if #h >= #switch {
            return (#d, #h);
        }
        // A health that is not a number, or a basis that is not finite, counts 0.
        let #h = if #h >= 0.0 && #d.iter().all(|v| v.is_finite()) { #h } else { 0.0 };
        let mut #best = (#d, #h);
        #(#default_others)*
        #best
    };
    let atlas_body = quote! {
        let (#d, #h) = #first(q, p, t);
        if #h >= #switch {
            return (#d, #h, 0);
        }
        let mut #best = (#d, #h, 0);
        #(#others)*
        #best
    };
    quote! {
        /// Charts in the atlas.
        pub const NCHARTS: usize = #nch_lit;
        #charts_doc
        pub const CHARTS: [[usize; DOF]; NCHARTS] = [#(#chart_rows),*];
        #atlas_doc
        #[inline]
        pub fn null_space_atlas(
            q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty, usize
        ) {
            #atlas_body
        }
        /// Null-space basis `D` of `C_J` (`C_J D = 0`) with identity rows at `INDEPENDENT`
        /// (its columns are the derivatives `∂q/∂q[INDEPENDENT]`), and its health in
        /// `[0, 1]`. The fixed pivot order (`null_space_fixed`) while its health is at least
        /// the atlas's switch; below, the healthiest chart of the atlas, its basis
        /// re-expressed in `INDEPENDENT` (`D B⁻¹`, `B` its rows at `INDEPENDENT`) with a
        /// health that is also at most the conditioning of `B`: near 0 (0 where `B` is
        /// singular or a value is not finite) where `INDEPENDENT` does not parametrise the
        /// mechanism. The chart-indexed bases (identity rows at the chart's coordinates)
        /// are `null_space_in_chart` and `null_space_atlas`.
        #[inline]
        pub fn null_space(
            q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty
        ) {
            #default_body
        }
        /// Null-space basis from the healthiest chart of the atlas with its health and the
        /// chart's independent coordinates (the identity rows of `D`, `CHARTS[k]` of
        /// `null_space_atlas`): a basis in whichever coordinates parametrise the mechanism
        /// best here, not necessarily `INDEPENDENT`.
        #[inline]
        pub fn null_space_in_chart(
            q: &SVector<#ty, NQ>, p: &Params, t: #ty) -> (SMatrix<#ty, NQ, DOF>, #ty, [usize; DOF]
        ) {
            let (#d, #h, k) = null_space_atlas(q, p, t);
            (#d, #h, CHARTS[k])
        }
    }
}

/// Fails when `body` (of generated function `f`) met a constant that is not finite,
/// located at the constraint of the first root holding it (`row_of` maps a root to its
/// constraint, where it has one), else at the first constraint whose own expression
/// holds it, else at the module.
fn nonfinite(
    model: &Model,
    arena: &Arena,
    body: &Body,
    f: &GenFn,
    row_of: impl Fn(usize) -> Option<usize>,
) -> crate::error::Result<()> {
    let Some(bad) = body.nonfinite else {
        return Ok(());
    };
    let v = arena.as_const(bad).unwrap_or(f64::NAN);
    let holds = |root: ExprId| {
        let mut stack = vec![root];
        let mut seen = std::collections::HashSet::new();
        while let Some(e) = stack.pop() {
            if e == bad {
                return true;
            }
            if seen.insert(e) {
                stack.extend(arena.node(e).children());
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
