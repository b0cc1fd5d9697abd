//! Straight-line function bodies: input bindings, named `let`s in dependency order,
//! `sin_cos` pairs, and splitting into `#[inline(never)]` chunks when a body is long.

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::expr::{idx, ExprWriter, ScalarType, SymNames};
use super::ops::OpCount;
use super::schedule::{Binding, Schedule};
use crate::expr::{Arena, ExprId, Func, Node, Sym};

/// Bodies longer than this many `let`s are split into chunks (DESIGN §8: one function of
/// ~3,000 `let`s crashes rustc with debuginfo on; chunks cost 5–17 % run time, so only
/// long bodies are split).
pub const MAX_LETS_PER_FUNCTION: usize = 1000;
/// Size of each chunk when a body is split.
pub const CHUNK_LETS: usize = 800;

/// The signature pieces shared by a generated function and its chunks.
pub(crate) struct Signature {
    /// Parameter list, e.g. `q: &SVector<f64, NQ>, p: &Params, t: f64`.
    pub params: TokenStream,
    /// The same names as call arguments, e.g. `q, p, t`.
    pub args: TokenStream,
}

/// A generated body: chunk functions to place beside it, its statements and an
/// expression for every root.
pub(crate) struct Body {
    pub chunks: Vec<TokenStream>,
    pub stmts: TokenStream,
    pub roots: Vec<TokenStream>,
    pub ops: OpCount,
    pub lets: usize,
    /// A constant of the body that is not finite (has no literal): an error to report.
    pub nonfinite: Option<ExprId>,
}

pub(crate) struct Emitter<'a> {
    pub arena: &'a Arena,
    pub names: &'a SymNames,
    /// Names of the generated code's own locals that give way to the user's.
    pub locals: &'a super::names::Locals,
    pub scalar: &'a ScalarType,
    pub coord_names: &'a [String],
    /// Function computing `(sin x, cos x)` together (`None`: the scalar's `sin_cos`).
    pub sin_cos: Option<TokenStream>,
    /// Function computing the sines and cosines of two angles together,
    /// `((sin a, cos a), (sin b, cos b))` (`None`: one angle at a time).
    pub sin_cos_pair: Option<TokenStream>,
}

impl Emitter<'_> {
    fn bind_inputs(&self, syms: &BTreeSet<Sym>) -> TokenStream {
        let mut out = TokenStream::new();
        for &s in syms {
            let name = self.names.ident(s);
            let stmt = match s {
                Sym::Coord(i) => {
                    let i = idx(i as usize);
                    quote!(let #name = q[#i];)
                }
                Sym::Vel(i) => {
                    let i = idx(i as usize);
                    quote!(let #name = qd[#i];)
                }
                Sym::Param(i) if self.scalar.is_generic() => {
                    let i = idx(i as usize);
                    quote!(let #name = p[#i];)
                }
                Sym::Param(i) => {
                    let f = &self.names.field[i as usize];
                    quote!(let #name = p.#f;)
                }
                Sym::Rhs(i) => {
                    let i = idx(i as usize);
                    quote!(let #name = b[#i];)
                }
                Sym::Weight(i) => {
                    let i = idx(i as usize);
                    quote!(let #name = w[#i];)
                }
                Sym::Time => continue,
            };
            out.extend(stmt);
        }
        out
    }

    fn let_names(&self, sched: &Schedule) -> Vec<Option<Ident>> {
        let mut names = vec![None; self.arena.len()];
        for (k, &id) in sched.lets.iter().enumerate() {
            let name = match self.arena.node(id) {
                Node::Func(f @ (Func::Sin | Func::Cos), a) => match self.arena.node(a) {
                    Node::Sym(Sym::Coord(i)) => Some(format_ident!(
                        "{}_{}",
                        f.name(),
                        self.coord_names[i as usize]
                    )),
                    _ => None,
                },
                _ => None,
            };
            names[id.index()] = Some(name.unwrap_or_else(|| format_ident!("t{}", k)));
        }
        names
    }

    /// Let nodes that the definition of `id` reads (through inlined children).
    fn let_refs(&self, sched: &Schedule, id: ExprId, out: &mut Vec<ExprId>) {
        for c in self.arena.node(id).children() {
            match sched.binding[c.index()] {
                Some(Binding::Let) => out.push(c),
                Some(Binding::Inline) => self.let_refs(sched, c, out),
                _ => {}
            }
        }
    }

    /// The `let`s in the order a depth-first walk from the roots (in their order) first
    /// needs them: each value is computed close to its users, so that when a long body is
    /// split into chunks only few values are live from one chunk to the next (the
    /// arena's id order computes, say, every `sin`/`cos` of a 2,000-coordinate chain first
    /// and carries them all through every chunk).
    fn locality_order(&self, sched: &Schedule, roots: &[ExprId]) -> Vec<ExprId> {
        let mut done = vec![false; self.arena.len()];
        let mut out = Vec::with_capacity(sched.lets.len());
        // (node, children pushed?) — an explicit stack: expression chains can be deep.
        let mut stack: Vec<(ExprId, bool)> = Vec::new();
        let mut refs = Vec::new();
        for &r in roots {
            let mut start = Vec::new();
            match sched.binding[r.index()] {
                Some(Binding::Let) => start.push(r),
                Some(Binding::Inline) => self.let_refs(sched, r, &mut start),
                _ => {}
            }
            for s in start.into_iter().rev() {
                stack.push((s, false));
            }
            while let Some((id, expanded)) = stack.pop() {
                if done[id.index()] {
                    continue;
                }
                if expanded {
                    done[id.index()] = true;
                    out.push(id);
                    continue;
                }
                stack.push((id, true));
                refs.clear();
                self.let_refs(sched, id, &mut refs);
                for &c in refs.iter().rev() {
                    if !done[c.index()] {
                        stack.push((c, false));
                    }
                }
            }
        }
        out
    }

    /// Order of `lets` with every `sin`/`cos` partner right after its first member.
    fn ordered_lets(&self, sched: &Schedule, lets: &[ExprId]) -> Vec<ExprId> {
        let mut seen = vec![false; self.arena.len()];
        let mut out = Vec::with_capacity(lets.len());
        for &id in lets {
            if seen[id.index()] {
                continue;
            }
            seen[id.index()] = true;
            out.push(id);
            if let Some(p) = sched.sincos_partner[id.index()] {
                if sched.binding[p.index()] == Some(Binding::Let) && !seen[p.index()] {
                    seen[p.index()] = true;
                    out.push(p);
                }
            }
        }
        out
    }

    fn let_stmts(
        &self,
        w: &mut ExprWriter<'_>,
        sched: &Schedule,
        lets: &[ExprId],
        let_names: &[Option<Ident>],
    ) -> TokenStream {
        let mut out = TokenStream::new();
        let mut done = BTreeSet::new();
        let mut pairs = self.angle_pairs(w, sched, lets, let_names);
        for &id in lets {
            if let Some(stmt) = pairs.remove(&id) {
                out.extend(stmt);
                continue;
            }
            if done.contains(&id) {
                continue;
            }
            let name = &let_names[id.index()];
            let partner = sched.sincos_partner[id.index()]
                .filter(|p| sched.binding[p.index()] == Some(Binding::Let));
            if let (Some(p), Node::Func(f, a)) = (partner, self.arena.node(id)) {
                done.insert(p);
                let (bare, _) = w.reference(a);
                let arg = if matches!(
                    sched.binding[a.index()],
                    Some(Binding::Let) | Some(Binding::Leaf)
                ) && self.arena.as_const(a).is_none()
                {
                    bare.clone()
                } else {
                    quote!((#bare))
                };
                let pn = &let_names[p.index()];
                w.ops.trig += 1;
                let (s, c) = if f == Func::Sin {
                    (name, pn)
                } else {
                    (pn, name)
                };
                out.extend(match &self.sin_cos {
                    Some(f) => quote!(let (#s, #c) = #f(#bare);),
                    None => quote!(let (#s, #c) = #arg.sin_cos();),
                });
                continue;
            }
            let (e, _) = w.definition(id);
            out.extend(super::expr::let_stmt(name, e));
        }
        out
    }

    /// The `let`-bound sines and cosines of input symbols (angle coordinates, parameters),
    /// two angles to one call: `let ((s1, c1), (s2, c2)) = sin_cos_pair(a, b);`, keyed by
    /// the first of the pair's `let`s in `lets`' order, its other `let`s keyed to an empty
    /// statement (an unused sine or cosine is `_`). An odd angle out keeps its own
    /// `sin_cos`. Empty without a pair function (scalars other than `f64`).
    fn angle_pairs(
        &self,
        w: &mut ExprWriter<'_>,
        sched: &Schedule,
        lets: &[ExprId],
        let_names: &[Option<Ident>],
    ) -> std::collections::HashMap<ExprId, TokenStream> {
        let mut planned = std::collections::HashMap::new();
        let Some(pair_fn) = &self.sin_cos_pair else {
            return planned;
        };
        // (sin let, cos let, argument) of each angle, in `lets`' order.
        let mut angles: Vec<(Option<ExprId>, Option<ExprId>, ExprId)> = Vec::new();
        let mut seen = BTreeSet::new();
        for &id in lets {
            if seen.contains(&id) {
                continue;
            }
            let Node::Func(f @ (Func::Sin | Func::Cos), a) = self.arena.node(id) else {
                continue;
            };
            if !matches!(self.arena.node(a), Node::Sym(_)) {
                continue;
            }
            let partner = sched.sincos_partner[id.index()]
                .filter(|p| sched.binding[p.index()] == Some(Binding::Let));
            seen.insert(id);
            if let Some(p) = partner {
                seen.insert(p);
            }
            angles.push(if f == Func::Sin {
                (Some(id), partner, a)
            } else {
                (partner, Some(id), a)
            });
        }
        let name = |e: Option<ExprId>| match e.and_then(|e| let_names[e.index()].clone()) {
            Some(n) => quote!(#n),
            None => quote!(_),
        };
        for two in angles.chunks_exact(2) {
            let (s1, c1, a1) = two[0];
            let (s2, c2, a2) = two[1];
            let (x1, _) = w.reference(a1);
            let (x2, _) = w.reference(a2);
            w.ops.trig += 2;
            let (ns1, nc1, ns2, nc2) = (name(s1), name(c1), name(s2), name(c2));
            let ids: Vec<ExprId> = [s1, c1, s2, c2].into_iter().flatten().collect();
            // Written at the first of its `let`s in `lets`' order; the others emit nothing.
            let first = lets
                .iter()
                .copied()
                .find(|l| ids.contains(l))
                .unwrap_or(ids[0]);
            for &i in &ids {
                planned.insert(i, TokenStream::new());
            }
            planned.insert(
                first,
                quote!(let ((#ns1, #nc1), (#ns2, #nc2)) = #pair_fn(#x1, #x2);),
            );
        }
        planned
    }

    /// Emits a body computing `roots`, split into chunks named `{fname}_part{k}` when long.
    pub fn body(&self, fname: &str, roots: &[ExprId], sig: &Signature) -> Body {
        let sched = Schedule::new(self.arena, roots);
        let let_names = self.let_names(&sched);
        let n_lets = sched.lets.len();
        let lets = if n_lets <= MAX_LETS_PER_FUNCTION {
            self.ordered_lets(&sched, &sched.lets)
        } else {
            self.ordered_lets(&sched, &self.locality_order(&sched, roots))
        };
        let mut w = ExprWriter {
            arena: self.arena,
            sched: &sched,
            names: self.names,
            scalar: self.scalar,
            let_names: &let_names,
            ops: OpCount::default(),
            used_syms: BTreeSet::new(),
            nonfinite: None,
        };
        if lets.len() <= MAX_LETS_PER_FUNCTION {
            let body = self.let_stmts(&mut w, &sched, &lets, &let_names);
            let root_exprs: Vec<TokenStream> = roots.iter().map(|&r| w.reference(r).0).collect();
            let inputs = self.bind_inputs(&w.used_syms);
            let mut stmts = inputs;
            stmts.extend(body);
            return Body {
                chunks: Vec::new(),
                stmts,
                roots: root_exprs,
                ops: w.ops,
                lets: n_lets,
                nonfinite: w.nonfinite,
            };
        }
        // Split into chunks; never separate a sin/cos pair.
        let mut bounds = vec![0];
        let mut start = 0;
        while lets.len() - start > CHUNK_LETS {
            let mut end = start + CHUNK_LETS;
            if sched.sincos_partner[lets[end].index()] == Some(lets[end - 1]) {
                end += 1;
            }
            bounds.push(end);
            start = end;
        }
        bounds.push(lets.len());
        let nchunks = bounds.len() - 1;
        let mut chunk_of = vec![usize::MAX; self.arena.len()];
        for c in 0..nchunks {
            for &id in &lets[bounds[c]..bounds[c + 1]] {
                chunk_of[id.index()] = c;
            }
        }
        // Values cross chunks by return value: each chunk returns one array of the `let`s
        // later chunks read and the roots it completes, built by one array literal, so no
        // buffer is zero-filled before it is written (a shared scratch buffer cost Romeo's
        // `mass_matrix` + `forces` a quarter of their instructions in `memset`). A later
        // chunk takes by reference the arrays of only the chunks it reads from. (Handing
        // every live value from chunk to chunk made the text grow with the number of
        // chunks times the live set: quadratic for an LU's forward and back substitution,
        // whose pivots all stay live.)
        let mut reads: Vec<BTreeSet<ExprId>> = vec![BTreeSet::new(); nchunks];
        let mut crossing = vec![false; self.arena.len()];
        let mut note_use = |r: ExprId, c: usize, reads: &mut Vec<BTreeSet<ExprId>>| {
            let home = chunk_of[r.index()];
            if home < c && sched.binding[r.index()] == Some(Binding::Let) {
                crossing[r.index()] = true;
                reads[c].insert(r);
            }
        };
        for c in 0..nchunks {
            for &id in &lets[bounds[c]..bounds[c + 1]] {
                let mut refs = Vec::new();
                self.let_refs(&sched, id, &mut refs);
                if let Node::Func(_, a) = self.arena.node(id) {
                    refs.push(a);
                }
                for r in refs {
                    note_use(r, c, &mut reads);
                }
            }
        }
        // Each root is returned by the chunk where its last `let` is defined (computed
        // after the chunks when it reads no `let`).
        let mut root_chunk = Vec::with_capacity(roots.len());
        for &r in roots {
            let mut refs = Vec::new();
            match sched.binding[r.index()] {
                Some(Binding::Let) => refs.push(r),
                Some(Binding::Inline) => self.let_refs(&sched, r, &mut refs),
                _ => {}
            }
            let c = refs
                .iter()
                .map(|id| chunk_of[id.index()])
                .filter(|&c| c < nchunks)
                .max()
                .unwrap_or(nchunks);
            if c < nchunks {
                for id in refs {
                    note_use(id, c, &mut reads);
                }
            }
            root_chunk.push(c);
        }
        // Where each returned value sits: (chunk, index in its array). A crossing `let`
        // first, in `lets`' order; then the roots, each value once (a root that is a
        // crossing `let`, or repeats an earlier root, reuses its place).
        let mut place: Vec<Option<(usize, usize)>> = vec![None; self.arena.len()];
        let mut returned: Vec<Vec<ExprId>> = vec![Vec::new(); nchunks];
        for c in 0..nchunks {
            for &id in &lets[bounds[c]..bounds[c + 1]] {
                if crossing[id.index()] {
                    place[id.index()] = Some((c, returned[c].len()));
                    returned[c].push(id);
                }
            }
        }
        let mut root_place: Vec<Option<(usize, usize)>> = vec![None; roots.len()];
        for (k, &r) in roots.iter().enumerate() {
            let c = root_chunk[k];
            if c == nchunks {
                continue;
            }
            root_place[k] = Some(*place[r.index()].get_or_insert_with(|| {
                returned[c].push(r);
                (c, returned[c].len() - 1)
            }));
        }
        let ty = &self.scalar.ty;
        let generics = self.scalar.generics();
        let params = &sig.params;
        let args = &sig.args;
        let part_name = |c: usize| format_ident!("{}_part{}", fname, c);
        let mut chunks = Vec::new();
        let mut stmts = TokenStream::new();
        for c in 0..nchunks {
            let mine = &lets[bounds[c]..bounds[c + 1]];
            w.used_syms.clear();
            let mut unpack = TokenStream::new();
            let mut from = BTreeSet::new();
            for id in &reads[c] {
                let name = &let_names[id.index()];
                if let Some((home, k)) = place[id.index()] {
                    let (part, k) = (part_name(home), idx(k));
                    unpack.extend(quote!(let #name = #part[#k];));
                    from.insert(home);
                }
            }
            let body = self.let_stmts(&mut w, &sched, mine, &let_names);
            // A root returned here is a `let` of this chunk or an inline expression
            // of its `let`s: written where it is returned.
            let values: Vec<TokenStream> = returned[c]
                .iter()
                .map(|&id| {
                    if crossing[id.index()] {
                        let name = &let_names[id.index()];
                        quote!(#name)
                    } else {
                        w.reference(id).0
                    }
                })
                .collect();
            let inputs = self.bind_inputs(&w.used_syms);
            let name = part_name(c);
            let n = idx(values.len());
            let from_names: Vec<Ident> = from.iter().map(|&h| part_name(h)).collect();
            let from_lens: Vec<proc_macro2::Literal> =
                from.iter().map(|&h| idx(returned[h].len())).collect();
            let doc = format!(
                "Part {} of {} of `{}` (split to keep functions short): returns the values \
                 later parts and the caller read.",
                c + 1,
                nchunks,
                fname
            );
            let ret = quote!([#(#values),*]);
            let block = super::expr::block([unpack, inputs, body, ret]);
            let (mut part_params, mut part_args) = (params.clone(), args.clone());
            for (from, len) in from_names.iter().zip(&from_lens) {
                part_params.extend(quote!(, #from: &[#ty; #len]));
                part_args.extend(quote!(, &#from));
            }
            chunks.push(quote! {
                #[doc = #doc]
                #[inline(never)]
                #[allow(unused_variables, clippy::too_many_arguments)]
                fn #name #generics (#part_params) -> [#ty; #n] #block
            });
            stmts.extend(quote!(let #name = #name(#part_args);));
        }
        w.used_syms.clear();
        let root_exprs: Vec<TokenStream> = (0..roots.len())
            .map(|k| match root_place[k] {
                Some((c, j)) => {
                    let (part, j) = (part_name(c), idx(j));
                    quote!(#part[#j])
                }
                None => w.reference(roots[k]).0,
            })
            .collect();
        stmts.extend(self.bind_inputs(&w.used_syms));
        Body {
            chunks,
            stmts,
            roots: root_exprs,
            ops: w.ops,
            lets: n_lets,
            nonfinite: w.nonfinite,
        }
    }
}
