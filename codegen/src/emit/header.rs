//! The module around the generated functions: its docs and lint allowances, the size
//! and analysis constants, and `Params`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::docs::{doc_lines, wrapped_lines};
use super::expr::{idx, ScalarType, SymNames};
use super::names::rust_ident;
use super::{EmitOptions, FunctionStats};
use crate::model::Model;
use crate::pivot::NullSpace;

/// The module `model.name` holding the constants, `Params`, then `body` (the generated
/// functions and trait impls).
pub(crate) fn module_tokens(
    model: &Model,
    ns: &NullSpace,
    opts: &EmitOptions,
    names: &SymNames,
    stats: &[FunctionStats],
    body: TokenStream,
) -> crate::error::Result<TokenStream> {
    let nq = model.coords.len();
    let nc = model.constraints.len();
    let dof = nq - ns.rank;
    let krate = &opts.crate_path;
    let ty = &opts.scalar.ty;
    let name = rust_ident(&model.name);
    let mod_docs = doc_lines(&model.docs);
    let coord_lits = model.coords.iter().map(|c| c.name.as_str());
    let nominal: Vec<TokenStream> = model
        .coords
        .iter()
        .map(|c| float(model, &opts.scalar, c.nominal))
        .collect::<crate::error::Result<_>>()?;
    let indep: Vec<Literal> = ns.independent.iter().map(|&i| idx(i)).collect();
    let params = params(model, &opts.scalar, names)?;
    let notes_doc = if ns.notes.is_empty() {
        TokenStream::new()
    } else {
        let mut lines = vec![
            String::new(),
            "# Notes of the analysis".to_string(),
            String::new(),
        ];
        for n in &ns.notes {
            lines.extend(super::docs::wrap(&format!("- {n}")));
        }
        wrapped_lines(&lines)
    };
    let size_doc = format!(
        " Sizes: NQ = {nq} coordinates, NC = {nc} constraint equations, rank {}, DOF = {dof}.",
        ns.rank
    );
    let redundant: Vec<Literal> = ns.redundant.iter().map(|&i| idx(i)).collect();
    let nred = idx(redundant.len());
    let nfun = idx(stats.len());
    let (nq_lit, nc_lit, dof_lit) = (idx(nq), idx(nc), idx(dof));
    let rank_lit = idx(ns.rank);
    let nvel = idx(model.velocity_constraints.len());
    let typical = float(model, &opts.scalar, ns.typical_health)?;
    let prow: Vec<Literal> = ns.rows.iter().map(|&i| idx(i)).collect();
    let pcol: Vec<Literal> = ns.cols.iter().map(|&i| idx(i)).collect();
    let op_names = stats.iter().map(|f| f.name.as_str());
    let op_totals = stats.iter().map(|f| idx(f.ops.total()));
    // The module keeps the visibility it was declared with (`mod`, `pub mod`,
    // `pub(crate) mod`).
    // Lints the generated code triggers anywhere in the module: every function takes
    // `(q, p, t)` whether it reads them or not, the user's names may be upper case
    // (`NQ`), and a folded constant may be the value of π (`phi + pi`).
    let vis = syn::parse_str::<syn::Visibility>(&model.vis)
        .map(quote::ToTokens::into_token_stream)
        .unwrap_or_else(|_| quote!(pub));
    // The module's items are built first and the module's own items, `Params` and
    // `body` moved into its block: interpolated with `#`, a stream is copied token by
    // token (quote borrows it; proc_macro2 copies a shared stream to iterate it).
    let mut items = quote! {
        use #krate::nalgebra::{SMatrix, SVector};
        // The elementary functions (`x.sqrt()`, `f64::atan2`) are `f64`/`f32` methods
        // with `std`; on `no_std` (the runtime's `libm` feature) they resolve to this
        // trait's, so the same code compiles for both.
        #[allow(unused_imports)]
        use #krate::runtime::Real as _;

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
        /// Typical health of the primary chart (`null_space_fixed`'s figure): its median over
        /// the configurations sampled at generation. The projection method switches charts
        /// below `TYPICAL_HEALTH / 10` where that is under its switch threshold, and takes
        /// the generated chart back at `TYPICAL_HEALTH / 2` (within 2 and 10 times the
        /// threshold).
        pub const TYPICAL_HEALTH: #ty = #typical;
        /// Trailing rows of the constraint Jacobian that are velocity (nonholonomic)
        /// constraints `A q̇ + a₀ = 0` (the last `VELOCITY_ROWS` of the `NC` rows; their
        /// residual rows are identically zero, and position assembly leaves them out).
        pub const VELOCITY_ROWS: usize = #nvel;
        /// Constraint equations found redundant (not used by `null_space`/`solve_dependent`).
        pub const REDUNDANT: [usize; #nred] = [#(#redundant),*];
        /// Coordinate names, in coordinate order.
        pub const COORD_NAMES: [&str; NQ] = [#(#coord_lits),*];
        /// Nominal coordinates given in the model.
        pub const NOMINAL_Q: [#ty; NQ] = [#(#nominal),*];
        /// Operations performed by each generated function (after common-subexpression
        /// elimination), as counted at generation.
        pub const OP_COUNTS: [(&str, usize); #nfun] = [#((#op_names, #op_totals)),*];
    };
    items.extend(params);
    items.extend(body);
    let items = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, items);
    let mut out = mod_docs;
    out.extend(quote! {
        ///
        #[doc = #size_doc]
        ///
        /// # Writing into storage
        ///
        /// Each `NAME_into` function writes what `NAME` returns into the caller's `out`:
        /// only the structurally nonzero entries are written, the others are left as they
        /// are (zero the storage once and reuse it).
    });
    out.extend(notes_doc);
    out.extend(quote! {
        #[allow(unused_variables, non_snake_case, clippy::approx_constant)]
        #vis mod #name #items
    });
    Ok(out)
}

/// `Params` (a field per parameter) and, when every parameter has a default, its
/// `Default` impl.
fn params(model: &Model, sc: &ScalarType, names: &SymNames) -> crate::error::Result<TokenStream> {
    let ty = &sc.ty;
    let fields = model.params.iter().zip(&names.field).map(|(p, f)| {
        let d = if p.docs.is_empty() {
            let s = match p.default {
                Some(v) if p.input => format!(" Input `{}` (default {v}).", p.name),
                Some(v) => format!(" Parameter `{}` (default {v}).", p.name),
                None => format!(" Parameter `{}`.", p.name),
            };
            quote!(#[doc = #s])
        } else {
            doc_lines(&p.docs)
        };
        // An input says so whatever its own docs: a controller sets it between intervals.
        let d = if p.input && !p.docs.is_empty() {
            quote!(#d #[doc = ""] #[doc = " (An `input`: set between control intervals, see `runtime::controlled::simulate_controlled`.)"])
        } else {
            d
        };
        quote!(#d pub #f: #ty,)
    });
    let all_defaults = model.params.iter().all(|p| p.default.is_some());
    let default_impl = if all_defaults {
        let values = model
            .params
            .iter()
            .zip(&names.field)
            .map(|(p, f)| {
                let v = float(model, sc, p.default.unwrap_or(0.0))?;
                Ok(quote!(#f: #v,))
            })
            .collect::<crate::error::Result<Vec<_>>>()?;
        quote! {
            impl Default for Params {
                fn default() -> Self {
                    Self { #(#values)* }
                }
            }
        }
    } else {
        TokenStream::new()
    };
    Ok(quote! {
        /// Runtime parameters of the mechanism.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Params {
            #(#fields)*
        }
        #default_impl
    })
}

/// A literal of `v` (nominal values and parameter defaults, checked finite by lowering).
fn float(model: &Model, s: &ScalarType, v: f64) -> crate::error::Result<TokenStream> {
    let lit = s.literal(v).ok_or_else(|| {
        crate::error::Error::new(
            model.span,
            format!(
                "mechanism `{}`: a nominal value or default is not finite ({v})",
                model.name
            ),
        )
    })?;
    Ok(if v < 0.0 { quote!(-#lit) } else { lit })
}
