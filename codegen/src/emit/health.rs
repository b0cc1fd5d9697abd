//! The health figure of a null-space basis: the smallest pivot relative to the Frobenius
//! norm of the pivot rows of `C_J`.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::expr::ScalarType;
use super::names::Locals;

/// Terms of one flat chain: longer reductions are cut into chains of this many terms,
/// each bound to a `let`, and the `let`s combined as a balanced tree.
const CHAIN: usize = 8;

/// A root of the health figure: its expression and, when it is a constant, its value
/// (folded at generation).
pub(crate) type Term = (TokenStream, Option<f64>);

/// How a reduction combines its terms.
#[derive(Clone, Copy)]
enum Op<'a> {
    /// `a + b`.
    Sum,
    /// `a.min(b)`.
    Min,
    /// `lesser(a, b)` and `smallest(a, [b, c, …])` under the given path (the runtime's: one
    /// comparison each, no NaN handling, for terms checked finite beside them).
    Lesser(&'a TokenStream),
}

/// `terms` reduced by `op`, as statements and the expression of the result: one flat
/// chain (`a + b + c`, `a.min(b).min(c)`) when short; otherwise chains of [`CHAIN`]
/// terms bound to `let {name}{k}`, combined by a balanced tree. Flat chains read
/// best, but a chain of hundreds of additions is latency-bound (about 4 cycles each:
/// it tripled the Stewart platform's `null_space` time), hence the tree above them.
fn reduce(
    terms: &[TokenStream],
    op: Op,
    name: &str,
    locals: &Locals,
) -> (TokenStream, TokenStream) {
    fn chain(terms: &[TokenStream], op: Op) -> TokenStream {
        if let (Op::Lesser(runtime), [first, rest @ ..]) = (op, terms) {
            if !rest.is_empty() {
                return quote!(#runtime::smallest(#first, [#(#rest),*]));
            }
        }
        let mut out = terms[0].clone();
        for t in &terms[1..] {
            out = match op {
                Op::Sum => quote!(#out + #t),
                Op::Min => quote!(#out.min(#t)),
                Op::Lesser(runtime) => quote!(#runtime::lesser(#out, #t)),
            };
        }
        out
    }
    fn tree(ids: &[Ident], op: Op, top: bool) -> TokenStream {
        if ids.len() == 1 {
            let id = &ids[0];
            return quote!(#id);
        }
        let (l, r) = ids.split_at(ids.len() / 2);
        let (l, r) = (tree(l, op, false), tree(r, op, false));
        match op {
            // No parentheses around the whole (`unused_parens` in a call argument).
            Op::Sum if top => quote!(#l + #r),
            Op::Sum => quote!((#l + #r)),
            Op::Min => quote!(#l.min(#r)),
            Op::Lesser(runtime) => quote!(#runtime::lesser(#l, #r)),
        }
    }
    if terms.len() <= CHAIN {
        return (TokenStream::new(), chain(terms, op));
    }
    let mut stmts = TokenStream::new();
    let mut ids = Vec::new();
    for (k, part) in terms.chunks(CHAIN).enumerate() {
        let id = locals.local(&format!("{name}{k}"));
        let e = chain(part, op);
        stmts.extend(quote!(let #id = #e;));
        ids.push(id);
    }
    (stmts, tree(&ids, op, true))
}

/// The statements computing the health figure (see `null_space`'s docs), bound to
/// `local("health")`, from the pivots and the scale entries (structural entries of the
/// pivot rows of `C_J`); `d` is the basis. Constant pivots and scale entries are folded
/// at generation (and a constant is finite: it needs no check). The `f64`/`f32` functions
/// take minima by `krate`'s `runtime::__generated::lesser` and `smallest` (one comparison each:
/// every pivot is checked finite before the minimum is used).
///
/// The generic family computes it in `<S as Real>::Part` (its terms are `Real::part(x)`):
/// `f64` for scalars and dual numbers (their values: no derivative work), `F64x4` for
/// lanes, so that each lane gets its own figure and the result (`Real::value`, the smallest
/// lane) is the worst lane's, computed with lane-wise operations.
pub(crate) fn health_tokens(
    pivots: &[Term],
    (scale, weights): (&[Term], &[u32]),
    d: &Ident,
    sc: &ScalarType,
    krate: &TokenStream,
    locals: &Locals,
) -> TokenStream {
    let generic = sc.is_generic();
    let runtime = quote!(#krate::runtime::__generated);
    let min_op = if generic {
        Op::Min
    } else {
        Op::Lesser(&runtime)
    };
    let ty = &sc.ty;
    let part = quote!(<S as Real>::Part);
    let lit = |v: f64| {
        let l = ScalarType::default().literal(v).unwrap_or_default();
        if generic {
            quote!(<#part as Real>::from_f64(#l))
        } else {
            sc.literal(v).unwrap_or_default()
        }
    };
    // The figure itself is an `f64` in the generic family.
    let health_lit = |v: f64| {
        if generic {
            ScalarType::default().literal(v).unwrap_or_default()
        } else {
            sc.literal(v).unwrap_or_default()
        }
    };
    let (one, zero) = (health_lit(1.0), health_lit(0.0));
    let call = |f: &str, args: TokenStream| {
        let f = quote::format_ident!("{f}");
        if generic {
            quote!(Real::#f(#args))
        } else {
            quote!(#ty::#f(#args))
        }
    };
    let health = locals.local("health");
    if pivots.is_empty() {
        // No constraints: D = I, healthy unless the inputs are not finite.
        let finite = if generic {
            quote!(#d.iter().all(|x| Real::value(*x).is_finite()))
        } else {
            quote!(#d.sum().is_finite())
        };
        return quote! {
            let #health = if #finite { #one } else { #zero };
        };
    }
    let scale_name = locals.local("health_scale");
    let min_name = locals.local("min_pivot");
    // Folded: the constant pivots' smallest modulus, the constant entries' squares.
    let const_min = pivots
        .iter()
        .filter_map(|p| p.1.map(f64::abs))
        .reduce(f64::min);
    // Scale entry `k` counts `weights[k]` times (one each when `weights` is empty).
    let weight = |k: usize| weights.get(k).copied().unwrap_or(1);
    let const_sq: f64 = scale
        .iter()
        .enumerate()
        .filter_map(|(k, e)| e.1.map(|v| f64::from(weight(k)) * (v * v)))
        .sum();
    let var_pivots: Vec<&TokenStream> = pivots
        .iter()
        .filter(|p| p.1.is_none())
        .map(|p| &p.0)
        .collect();
    // The constant last: `x.min(1.0)` (a literal has no method before its type is known).
    let mut mins: Vec<TokenStream> = var_pivots.iter().map(|p| call("abs", quote!(#p))).collect();
    mins.extend(const_min.map(lit));
    let mut squares: Vec<TokenStream> = Vec::new();
    if const_sq != 0.0 {
        squares.push(lit(const_sq));
    }
    squares.extend(
        scale
            .iter()
            .enumerate()
            .filter(|(k, e)| e.1.is_none() && weight(*k) > 0)
            .map(|(k, e)| {
                let e = &e.0;
                match weight(k) {
                    1 => quote!(#e * #e),
                    w => {
                        let w = lit(f64::from(w));
                        quote!(#w * (#e * #e))
                    }
                }
            }),
    );
    // Entries of weight 0 (the angles of folded `c cos x`, `c sin x` pairs) are checked
    // finite beside the pivots.
    let checked_only: Vec<TokenStream> = scale
        .iter()
        .enumerate()
        .filter(|(k, e)| e.1.is_none() && weight(*k) == 0)
        .map(|(_, e)| e.0.clone())
        .collect();
    if squares.is_empty() {
        squares.push(lit(0.0));
    }
    let (sq_stmts, sq) = reduce(&squares, Op::Sum, "health_sq", locals);
    let (min_stmts, min) = reduce(&mins, min_op, "health_min", locals);
    let sqrt = call("sqrt", sq);
    // Every input of the basis is an entry of the pivot rows (in `health_scale`, or a
    // folded pair's factor and angle) or a pivot: when those are finite, so is the basis
    // (or its health is ~0 by overflow).
    let (check_stmts, checked) = if var_pivots.is_empty() && checked_only.is_empty() {
        (TokenStream::new(), quote!(#scale_name))
    } else {
        let terms: Vec<TokenStream> = var_pivots
            .iter()
            .map(|p| quote!(#p))
            .chain(checked_only)
            .collect();
        let (stmts, sum) = reduce(&terms, Op::Sum, "health_check", locals);
        (stmts, quote!(#sum + #scale_name))
    };
    let decide = if generic {
        // `x · 0` is 0 for finite x, NaN otherwise, and a NaN lane is the lanes' value.
        let (zero_part, one_part) = (lit(0.0), lit(1.0));
        let ratio = call("min", quote!(#min_name / #scale_name, #one_part));
        quote! {
            let #health = if Real::value((#checked) * #zero_part) == 0.0
                && Real::value(#scale_name) > 0.0
            {
                Real::value(#ratio)
            } else {
                0.0
            };
        }
    } else {
        // `if checked.is_finite() && scale > 0 { lesser(min / scale, 1) } else { 0 }` as a
        // call: the body stays a sequence of statements (printed without `syn`), the same
        // code once inlined.
        let figure = if sc.ty.to_string() == "f32" {
            quote!(health_f32)
        } else {
            quote!(health)
        };
        quote! {
            let #health = #runtime::#figure(#checked, #scale_name, #min_name);
        }
    };
    quote! {
        #sq_stmts
        let #scale_name = #sqrt;
        #min_stmts
        let #min_name = #min;
        #check_stmts
        #decide
    }
}
