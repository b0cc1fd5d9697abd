//! Scheduling: which DAG nodes a generated function computes, in which order, and which
//! get a named `let` (shared or costly) and which are inlined into their single user.

use crate::expr::{Arena, ExprId, Func, Node};

/// How a needed node appears in generated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// A literal or an input symbol: written where it is used.
    Leaf,
    /// Written inline into its single user.
    Inline,
    /// Bound to a named `let`.
    Let,
}

/// The evaluation plan of one generated function.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Needed non-leaf nodes bound by `let`, in dependency (id) order.
    pub lets: Vec<ExprId>,
    /// Binding of every node of the arena (`None` for nodes the function does not need).
    pub binding: Vec<Option<Binding>>,
    /// `sin`/`cos` pairs of one argument: for node `i` = `sin a` (or `cos a`), the partner.
    pub sincos_partner: Vec<Option<ExprId>>,
}

/// Deepest expression nesting allowed inline (keeps generated expressions readable and
/// rustc's recursion shallow).
const MAX_INLINE_DEPTH: u32 = 6;

impl Schedule {
    /// Plans the evaluation of `roots`: every needed node is computed once; a node used
    /// once (and not a root) is inlined into its user unless that nests too deep. A root
    /// that only negates a name (`-t3`, `-l1`) and is used nowhere else is written where
    /// the root is stored, not bound to a `let` of its own.
    pub fn new(arena: &Arena, roots: &[ExprId]) -> Self {
        let plan = Self::plan(arena, roots, true);
        // A chunked body (see `emit::MAX_LETS_PER_FUNCTION`) carries only `let`s from one
        // chunk to the next, so there every root keeps its name.
        if plan.lets.len() > crate::emit::MAX_LETS_PER_FUNCTION {
            return Self::plan(arena, roots, false);
        }
        plan
    }

    fn plan(arena: &Arena, roots: &[ExprId], inline_root_negations: bool) -> Self {
        let n = arena.len();
        let mask = arena.reachable(roots);
        let mut uses = vec![0u32; n];
        for (i, node) in arena.nodes().iter().enumerate() {
            if mask[i] {
                for c in node.children() {
                    uses[c.index()] += 1;
                }
                // Powers are written as products: their base must be a name.
                if let Node::Powi(a, _) = node {
                    uses[a.index()] += 1;
                }
            }
        }
        let mut root_count = vec![0u32; n];
        for r in roots {
            uses[r.index()] += 2; // roots are always bound (but see below)
            root_count[r.index()] += 1;
        }
        // sin and cos of the same argument are computed together with sin_cos.
        let mut sincos_partner = vec![None; n];
        let mut sin_of = std::collections::HashMap::new();
        for (i, node) in arena.nodes().iter().enumerate() {
            if mask[i] {
                if let Node::Func(Func::Sin, a) = node {
                    sin_of.insert(*a, ExprId(i as u32));
                }
            }
        }
        for (i, node) in arena.nodes().iter().enumerate() {
            if mask[i] {
                if let Node::Func(Func::Cos, a) = node {
                    if let Some(&s) = sin_of.get(a) {
                        sincos_partner[i] = Some(s);
                        sincos_partner[s.index()] = Some(ExprId(i as u32));
                    }
                }
            }
        }
        let mut binding = vec![None; n];
        let mut depth = vec![0u32; n];
        let mut lets = Vec::new();
        for (i, node) in arena.nodes().iter().enumerate() {
            if !mask[i] {
                continue;
            }
            let b = match node {
                Node::Const(_) | Node::Sym(_) => Binding::Leaf,
                _ => {
                    let d = node
                        .children()
                        .map(|c| {
                            if binding[c.index()] == Some(Binding::Inline) {
                                depth[c.index()]
                            } else {
                                0
                            }
                        })
                        .max()
                        .unwrap_or(0)
                        + 1;
                    depth[i] = d;
                    let used_once =
                        uses[i] == 1 && d < MAX_INLINE_DEPTH && sincos_partner[i].is_none();
                    // The negation of a name is written where it is used (`-t3`), never
                    // a `let` of its own: the compiler folds the repeated negations (into
                    // subtractions, mostly), and the reader sees one name per value.
                    let negates_name = matches!(node, Node::Neg(a)
                        if binding[a.index()] != Some(Binding::Inline));
                    let lone_negation = inline_root_negations && negates_name;
                    if used_once || lone_negation {
                        Binding::Inline
                    } else {
                        Binding::Let
                    }
                }
            };
            if b == Binding::Let {
                lets.push(ExprId(i as u32));
            }
            binding[i] = Some(b);
        }
        Self {
            lets,
            binding,
            sincos_partner,
        }
    }
}
