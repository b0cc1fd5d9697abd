//! The hash-consed arena and its smart constructors.

use super::func::{Func, Parity};
use super::hash::{FxHashMap, FxHashSet};
use super::node::{ExprId, Node, Sym};

/// A hash-consed arena of expression nodes (one node per distinct subexpression).
///
/// ```
/// use mechgen_codegen::expr::{Arena, Sym};
/// let mut a = Arena::new();
/// let x = a.sym(Sym::Coord(0));
/// let y = a.sym(Sym::Coord(1));
/// let s1 = a.add(x, y);
/// let s2 = a.add(y, x);
/// assert_eq!(s1, s2); // canonical operand order
/// let zero = a.constant(0.0);
/// assert_eq!(a.add(x, zero), x);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Arena {
    nodes: Vec<Node>,
    index: FxHashMap<Node, ExprId>,
    pub(super) diff_memo: FxHashMap<(ExprId, Sym), ExprId>,
}

fn const_bits(v: f64) -> u64 {
    // Normalise -0.0 to 0.0 so that both hash-cons to the same node.
    if v == 0.0 {
        0.0f64.to_bits()
    } else {
        v.to_bits()
    }
}

impl Arena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of nodes stored.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// A mark to return to with [`Arena::rollback`]: the number of nodes stored now.
    pub fn mark(&self) -> usize {
        self.nodes.len()
    }

    /// Drops every node created since `mark` ([`Arena::mark`]) and the memoised derivatives
    /// that name one: the arena is again as it was at the mark, so a trial construction
    /// that is not kept leaves no trace in the ids of what comes after.
    ///
    /// ```
    /// use mechgen_codegen::expr::{Arena, Sym};
    /// let mut a = Arena::new();
    /// let x = a.sym(Sym::Coord(0));
    /// let m = a.mark();
    /// let s = a.sin(x);
    /// a.rollback(m);
    /// assert_eq!(a.len(), m);
    /// let y = a.sym(Sym::Coord(1));
    /// assert_eq!(y, s); // the id is free again
    /// ```
    pub fn rollback(&mut self, mark: usize) {
        if mark >= self.nodes.len() {
            return;
        }
        self.nodes.truncate(mark);
        self.index.retain(|_, id| id.index() < mark);
        self.diff_memo
            .retain(|(e, _), d| e.index() < mark && d.index() < mark);
    }

    /// Whether the arena holds no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node behind an id.
    pub fn node(&self, id: ExprId) -> Node {
        self.nodes[id.index()]
    }

    /// All nodes, in id (topological) order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    fn intern(&mut self, node: Node) -> ExprId {
        if let Some(&id) = self.index.get(&node) {
            return id;
        }
        let id = ExprId(self.nodes.len() as u32);
        self.nodes.push(node);
        self.index.insert(node, id);
        id
    }

    /// The constant value of a node, if it is a constant.
    pub fn as_const(&self, id: ExprId) -> Option<f64> {
        self.node(id).as_const()
    }

    /// Whether the node is the constant `v`.
    pub fn is_const(&self, id: ExprId, v: f64) -> bool {
        self.as_const(id) == Some(v)
    }

    /// Whether the node is the constant zero (a structural zero).
    pub fn is_zero(&self, id: ExprId) -> bool {
        self.is_const(id, 0.0)
    }

    /// A constant. Non-finite values are stored as they are; the language rejects them
    /// before they reach the arena.
    pub fn constant(&mut self, v: f64) -> ExprId {
        self.intern(Node::Const(const_bits(v)))
    }

    /// A symbol.
    pub fn sym(&mut self, s: Sym) -> ExprId {
        self.intern(Node::Sym(s))
    }

    /// `a + b`.
    pub fn add(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) => return self.constant(x + y),
            (Some(0.0), None) => return b,
            (None, Some(0.0)) => return a,
            _ => {}
        }
        if self.node(b) == Node::Neg(a) || self.node(a) == Node::Neg(b) {
            return self.constant(0.0);
        }
        if a == b {
            let two = self.constant(2.0);
            return self.mul(two, a);
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        self.intern(Node::Add(a, b))
    }

    /// `a − b` (stored as `a + (−b)`).
    pub fn sub(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let nb = self.neg(b);
        self.add(a, nb)
    }

    /// `−a`.
    pub fn neg(&mut self, a: ExprId) -> ExprId {
        match self.node(a) {
            Node::Const(_) => {
                let v = -self.as_const(a).unwrap_or(0.0);
                self.constant(v)
            }
            Node::Neg(x) => x,
            // −(x − y) = y − x (exact in floating point: one rounding either way).
            Node::Add(x, y) if matches!(self.node(y), Node::Neg(_)) => {
                let Node::Neg(z) = self.node(y) else {
                    return self.intern(Node::Neg(a));
                };
                let nx = self.neg(x);
                self.add(z, nx)
            }
            Node::Add(x, y) if matches!(self.node(x), Node::Neg(_)) => {
                let Node::Neg(z) = self.node(x) else {
                    return self.intern(Node::Neg(a));
                };
                let ny = self.neg(y);
                self.add(z, ny)
            }
            Node::Mul(c, x) if self.as_const(c).is_some() => {
                let v = -self.as_const(c).unwrap_or(0.0);
                let nc = self.constant(v);
                self.mul(nc, x)
            }
            _ => self.intern(Node::Neg(a)),
        }
    }

    /// `a · b`.
    pub fn mul(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let (ca, cb) = (self.as_const(a), self.as_const(b));
        match (ca, cb) {
            (Some(x), Some(y)) => return self.constant(x * y),
            (None, Some(_)) => return self.mul(b, a),
            (Some(x), None) => {
                if x == 0.0 {
                    return a;
                }
                if x == 1.0 {
                    return b;
                }
                if x == -1.0 {
                    return self.neg(b);
                }
                match self.node(b) {
                    Node::Mul(c2, y) if self.as_const(c2).is_some() => {
                        let v = x * self.as_const(c2).unwrap_or(1.0);
                        let c = self.constant(v);
                        return self.mul(c, y);
                    }
                    Node::Neg(y) => {
                        let c = self.constant(-x);
                        return self.mul(c, y);
                    }
                    _ => return self.intern(Node::Mul(a, b)),
                }
            }
            (None, None) => {}
        }
        // Pull negations and constant factors out, so that they meet and fold.
        if let Node::Neg(x) = self.node(a) {
            let m = self.mul(x, b);
            return self.neg(m);
        }
        if let Node::Neg(y) = self.node(b) {
            let m = self.mul(a, y);
            return self.neg(m);
        }
        if let Node::Mul(c, x) = self.node(a) {
            if self.as_const(c).is_some() {
                let m = self.mul(x, b);
                return self.mul(c, m);
            }
        }
        if let Node::Mul(c, y) = self.node(b) {
            if self.as_const(c).is_some() {
                let m = self.mul(a, y);
                return self.mul(c, m);
            }
        }
        let (ba, na) = self.base_exp(a);
        let (bb, nb) = self.base_exp(b);
        if ba == bb {
            // Exponents beyond i32 stay an unmerged product.
            if let Some(n) = na.checked_add(nb) {
                return self.powi(ba, n);
            }
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        self.intern(Node::Mul(a, b))
    }

    fn base_exp(&self, a: ExprId) -> (ExprId, i32) {
        match self.node(a) {
            Node::Powi(x, n) => (x, n),
            _ => (a, 1),
        }
    }

    /// `a / b`.
    pub fn div(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            // A zero divisor is kept as a division: evaluating it gives the non-finite
            // value that checks upstream report (a `const` of 0/0, say).
            (_, Some(0.0)) => return self.intern(Node::Div(a, b)),
            (Some(x), Some(y)) => return self.constant(x / y),
            (_, Some(1.0)) => return a,
            (_, Some(-1.0)) => return self.neg(a),
            (Some(0.0), _) => return a,
            _ => {}
        }
        if a == b {
            return self.constant(1.0);
        }
        if let Node::Neg(x) = self.node(a) {
            let d = self.div(x, b);
            return self.neg(d);
        }
        if let Node::Neg(y) = self.node(b) {
            let d = self.div(a, y);
            return self.neg(d);
        }
        self.intern(Node::Div(a, b))
    }

    /// `a^n` for an integer `n`.
    pub fn powi(&mut self, a: ExprId, n: i32) -> ExprId {
        if n == 0 {
            return self.constant(1.0);
        }
        if n == 1 {
            return a;
        }
        if let Some(x) = self.as_const(a) {
            let v = x.powi(n);
            if v.is_finite() {
                return self.constant(v);
            }
        }
        match self.node(a) {
            Node::Powi(x, m) => match m.checked_mul(n) {
                Some(k) => self.powi(x, k),
                None => self.intern(Node::Powi(a, n)),
            },
            Node::Neg(x) => {
                let p = self.powi(x, n);
                if n % 2 == 0 {
                    p
                } else {
                    self.neg(p)
                }
            }
            _ => self.intern(Node::Powi(a, n)),
        }
    }

    /// A unary function `f(a)`: folded when `a` is a constant with a finite value, and
    /// simplified by the identities of [`Func::parity`] and [`Func::idempotent`].
    pub fn func(&mut self, f: Func, a: ExprId) -> ExprId {
        if let Some(x) = self.as_const(a) {
            let v = f.eval(x);
            if v.is_finite() {
                return self.constant(v);
            }
        }
        match (f.parity(), self.node(a)) {
            (Parity::Even, Node::Neg(x)) => return self.func(f, x),
            (Parity::Odd, Node::Neg(x)) => {
                let y = self.func(f, x);
                return self.neg(y);
            }
            (_, Node::Func(g, _)) if g == f && f.idempotent() => return a,
            _ => {}
        }
        self.intern(Node::Func(f, a))
    }

    /// `atan2(y, x)`.
    pub fn atan2(&mut self, y: ExprId, x: ExprId) -> ExprId {
        if let (Some(yv), Some(xv)) = (self.as_const(y), self.as_const(x)) {
            return self.constant(yv.atan2(xv));
        }
        self.intern(Node::Atan2(y, x))
    }

    /// `sin a`.
    pub fn sin(&mut self, a: ExprId) -> ExprId {
        self.func(Func::Sin, a)
    }

    /// `cos a`.
    pub fn cos(&mut self, a: ExprId) -> ExprId {
        self.func(Func::Cos, a)
    }

    /// `sqrt a`.
    pub fn sqrt(&mut self, a: ExprId) -> ExprId {
        self.func(Func::Sqrt, a)
    }

    /// Whether `root` depends on symbol `s` (walks the DAG below `root`).
    pub fn depends_on(&self, root: ExprId, s: Sym) -> bool {
        let mask = self.reachable(&[root]);
        self.nodes
            .iter()
            .enumerate()
            .any(|(i, n)| mask[i] && *n == Node::Sym(s))
    }

    /// The symbols `root` depends on, sorted.
    pub fn symbols(&self, roots: &[ExprId]) -> Vec<Sym> {
        let mask = self.reachable(roots);
        let mut out: Vec<Sym> = self
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match n {
                Node::Sym(s) if mask[i] => Some(*s),
                _ => None,
            })
            .collect();
        out.sort();
        out
    }

    /// A mask over all nodes: `true` for the nodes that `roots` need.
    pub fn reachable(&self, roots: &[ExprId]) -> Vec<bool> {
        let mut mask = vec![false; self.nodes.len()];
        for r in roots {
            mask[r.index()] = true;
        }
        for i in (0..self.nodes.len()).rev() {
            if mask[i] {
                for c in self.nodes[i].children() {
                    mask[c.index()] = true;
                }
            }
        }
        mask
    }

    /// Indices of the coordinates `e` depends on, ascending. Visits only the nodes
    /// under `e`, so asking for each row of a sparse Jacobian stays linear overall.
    ///
    /// ```
    /// use mechgen_codegen::expr::{Arena, Sym};
    /// let mut a = Arena::new();
    /// let (x, z) = (a.sym(Sym::Coord(0)), a.sym(Sym::Coord(2)));
    /// let s = a.sin(z);
    /// let e = a.mul(x, s);
    /// assert_eq!(a.coords_of(e), vec![0, 2]);
    /// ```
    pub fn coords_of(&self, e: ExprId) -> Vec<u32> {
        let mut seen = FxHashSet::default();
        let mut stack = vec![e];
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            match self.node(id) {
                Node::Sym(Sym::Coord(i)) => out.push(i),
                n => stack.extend(n.children()),
            }
        }
        out.sort_unstable();
        out
    }

    /// Number of distinct nodes the roots need (the size of their shared DAG).
    pub fn dag_size(&self, roots: &[ExprId]) -> usize {
        self.reachable(roots).iter().filter(|m| **m).count()
    }
}
