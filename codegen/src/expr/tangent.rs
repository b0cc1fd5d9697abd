//! Forward-mode directional derivatives (one tangent pass over the DAG).

use super::arena::Arena;
use super::hash::FxHashMap;
use super::node::{ExprId, Node, Sym};

impl Arena {
    /// The directional derivative `Σ_s ∂e/∂s · dir(s)` over the symbols `s` for which
    /// `dir(s)` is `Some`, built by one forward tangent pass over the nodes under `e`
    /// (iterative, memoised within the call): the cost is the size of `e`'s DAG, where
    /// summing partial derivatives costs that size once per symbol.
    ///
    /// ```
    /// use mechgen_codegen::expr::{Arena, Sym};
    /// let mut a = Arena::new();
    /// let (x, y) = (a.sym(Sym::Coord(0)), a.sym(Sym::Coord(1)));
    /// let e = a.mul(x, y);
    /// // Along (ẋ, ẏ) = (vx, vy): ẋ y + x ẏ.
    /// let d = a.tangent(e, &|s| match s {
    ///     Sym::Coord(k) => Some(Sym::Vel(k)),
    ///     _ => None,
    /// });
    /// let v: Vec<f64> = a.eval(&[d], &|s| match s {
    ///     Sym::Coord(0) => 2.0, Sym::Coord(_) => 3.0, Sym::Vel(0) => 5.0, _ => 7.0,
    /// });
    /// assert_eq!(v, vec![5.0 * 3.0 + 2.0 * 7.0]);
    /// ```
    pub fn tangent(&mut self, e: ExprId, dir: &dyn Fn(Sym) -> Option<Sym>) -> ExprId {
        self.tangent_with(e, &mut |a, s| dir(s).map(|d| a.sym(d)))
    }

    /// [`Arena::tangent`] with the direction of each symbol given as an expression
    /// (`dir(arena, s)`, `None` for zero), e.g. `1` for time in a total time derivative.
    pub fn tangent_with(
        &mut self,
        e: ExprId,
        dir: &mut dyn FnMut(&mut Arena, Sym) -> Option<ExprId>,
    ) -> ExprId {
        let mut memo: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        let mut stack = vec![(e, false)];
        while let Some((id, expanded)) = stack.pop() {
            if memo.contains_key(&id) {
                continue;
            }
            if !expanded {
                stack.push((id, true));
                for c in self.node(id).children() {
                    if !memo.contains_key(&c) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let d = match self.node(id) {
                Node::Sym(s) => match dir(self, s) {
                    Some(d) => d,
                    None => self.constant(0.0),
                },
                n => {
                    let mut tc = [id; 2];
                    for (k, c) in n.children().enumerate() {
                        tc[k] = memo[&c];
                    }
                    self.chain(id, tc)
                }
            };
            memo.insert(id, d);
        }
        memo[&e]
    }
}

/// Which of the directed symbols a node depends on: none, exactly one, or several.
#[derive(Clone, Copy, PartialEq)]
enum Reach {
    None,
    One(Sym),
    Many,
}

impl Arena {
    /// [`Arena::tangent_with`], except that a node depending on exactly one directed symbol
    /// `s` takes `∂node/∂s · dir(s)`: the partial derivative [`Arena::diff`] builds (and the
    /// Jacobian already holds), so only the nodes that combine several symbols go through
    /// the product and chain rules. A total time derivative of a body's position then shares
    /// the Jacobian's single-joint partials at the leaves and the tangent recursion along the
    /// chain above them. Equal in value to [`Arena::tangent_with`].
    ///
    /// ```
    /// use mechgen_codegen::expr::{Arena, Sym};
    /// let mut a = Arena::new();
    /// let (x, y) = (a.sym(Sym::Coord(0)), a.sym(Sym::Coord(1)));
    /// let (sx, sy) = (a.sin(x), a.sin(y));
    /// let e = a.mul(sx, sy);
    /// let d = a.tangent_sharing_partials(e, &mut |a, s| match s {
    ///     Sym::Coord(k) => Some(a.sym(Sym::Vel(k))),
    ///     _ => None,
    /// });
    /// let at = |s: Sym| match s {
    ///     Sym::Coord(0) => 0.3, Sym::Coord(_) => 0.7, Sym::Vel(0) => 2.0, _ => -1.5,
    /// };
    /// let want = 0.3f64.cos() * 2.0 * 0.7f64.sin() + 0.3f64.sin() * 0.7f64.cos() * -1.5;
    /// assert!((a.eval(&[d], &at)[0] - want).abs() < 1e-15);
    /// // The single-coordinate factor's derivative is the partial derivative node itself.
    /// let dsx = a.diff(sx, Sym::Coord(0));
    /// assert!(a.reachable(&[d])[dsx.index()]);
    /// ```
    pub fn tangent_sharing_partials(
        &mut self,
        e: ExprId,
        dir: &mut dyn FnMut(&mut Arena, Sym) -> Option<ExprId>,
    ) -> ExprId {
        // The nodes under `e` in creation order (children before parents).
        let mut under = Vec::new();
        let mut seen: FxHashMap<ExprId, ()> = FxHashMap::default();
        let mut stack = vec![e];
        while let Some(id) = stack.pop() {
            if seen.insert(id, ()).is_some() {
                continue;
            }
            under.push(id);
            stack.extend(self.node(id).children());
        }
        under.sort_unstable();
        let mut dirs: FxHashMap<Sym, Option<ExprId>> = FxHashMap::default();
        let mut reach: FxHashMap<ExprId, Reach> = FxHashMap::default();
        for &id in &under {
            let r = match self.node(id) {
                Node::Sym(s) => {
                    let d = match dirs.get(&s) {
                        Some(&d) => d,
                        None => {
                            let d = dir(self, s);
                            dirs.insert(s, d);
                            d
                        }
                    };
                    if d.is_some() {
                        Reach::One(s)
                    } else {
                        Reach::None
                    }
                }
                n => n
                    .children()
                    .fold(Reach::None, |acc, c| match (acc, reach[&c]) {
                        (x, Reach::None) | (Reach::None, x) => x,
                        (Reach::One(a), Reach::One(b)) if a == b => Reach::One(a),
                        _ => Reach::Many,
                    }),
            };
            reach.insert(id, r);
        }
        // Which nodes need a tangent: `e`, and the children of every node that combines
        // several symbols.
        let mut needed: FxHashMap<ExprId, ()> = FxHashMap::default();
        needed.insert(e, ());
        for &id in under.iter().rev() {
            if needed.contains_key(&id) && reach[&id] == Reach::Many {
                for c in self.node(id).children() {
                    needed.insert(c, ());
                }
            }
        }
        let mut memo: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        for &id in &under {
            if !needed.contains_key(&id) {
                continue;
            }
            let d = match reach[&id] {
                Reach::None => self.constant(0.0),
                Reach::One(s) => match (self.node(id), dirs[&s]) {
                    (Node::Sym(_), Some(ds)) => ds,
                    (_, Some(ds)) => {
                        let partial = self.diff(id, s);
                        self.mul(partial, ds)
                    }
                    // `One(s)` only for symbols with a direction.
                    (_, None) => self.constant(0.0),
                },
                Reach::Many => {
                    let mut tc = [id; 2];
                    for (k, c) in self.node(id).children().enumerate() {
                        tc[k] = memo[&c];
                    }
                    self.chain(id, tc)
                }
            };
            memo.insert(id, d);
        }
        memo[&e]
    }

    /// The gradient `∂e/∂q_k` for the coordinates `coords` (returned in that order), by
    /// one reverse (adjoint) pass over the nodes under `e`: the cost is the size of `e`'s
    /// DAG, where one forward derivative per coordinate costs that size per coordinate
    /// (quadratic for one equation over thousands of coordinates). The expressions are
    /// equal to [`Arena::diff`]'s but associated differently.
    pub fn gradient(&mut self, e: ExprId, coords: &[u32]) -> Vec<ExprId> {
        // Nodes under `e`, and which of them depend on a coordinate (only those pass
        // adjoints on).
        let mut under = Vec::new();
        let mut seen: FxHashMap<ExprId, ()> = FxHashMap::default();
        let mut stack = vec![e];
        while let Some(id) = stack.pop() {
            if seen.insert(id, ()).is_some() {
                continue;
            }
            under.push(id);
            stack.extend(self.node(id).children());
        }
        under.sort_unstable();
        let mut has_coord: FxHashMap<ExprId, bool> = FxHashMap::default();
        for &id in &under {
            let h = match self.node(id) {
                Node::Sym(Sym::Coord(_)) => true,
                n => n
                    .children()
                    .any(|c| has_coord.get(&c).copied().unwrap_or(false)),
            };
            has_coord.insert(id, h);
        }
        let mut adj: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        let one = self.constant(1.0);
        adj.insert(e, one);
        let mut grad: FxHashMap<u32, ExprId> = FxHashMap::default();
        for &id in under.iter().rev() {
            let Some(&g) = adj.get(&id) else { continue };
            // Contributions (child, partial · adjoint), for children that depend on a
            // coordinate.
            let mut out: Vec<(ExprId, ExprId)> = Vec::with_capacity(2);
            let live = |c: ExprId| has_coord.get(&c).copied().unwrap_or(false);
            match self.node(id) {
                Node::Const(_) => {}
                Node::Sym(s) => {
                    if let Sym::Coord(k) = s {
                        grad.insert(k, g);
                    }
                }
                Node::Add(a, b) => {
                    out.push((a, g));
                    out.push((b, g));
                }
                Node::Mul(a, b) => {
                    if live(a) {
                        let v = self.mul(g, b);
                        out.push((a, v));
                    }
                    if live(b) {
                        let v = self.mul(g, a);
                        out.push((b, v));
                    }
                }
                Node::Div(a, b) => {
                    if live(a) {
                        let v = self.div(g, b);
                        out.push((a, v));
                    }
                    if live(b) {
                        // ∂(a/b)/∂b = −(a/b)/b.
                        let q = self.div(id, b);
                        let m = self.mul(g, q);
                        let v = self.neg(m);
                        out.push((b, v));
                    }
                }
                Node::Neg(a) => {
                    let v = self.neg(g);
                    out.push((a, v));
                }
                Node::Powi(a, n) => {
                    let cp = self.powi_derivative(id, a, n);
                    let v = self.mul(g, cp);
                    out.push((a, v));
                }
                Node::Atan2(y, x) => {
                    let x2 = self.powi(x, 2);
                    let y2 = self.powi(y, 2);
                    let den = self.add(x2, y2);
                    if live(y) {
                        let d = self.div(x, den);
                        let v = self.mul(g, d);
                        out.push((y, v));
                    }
                    if live(x) {
                        let d = self.div(y, den);
                        let m = self.mul(g, d);
                        let v = self.neg(m);
                        out.push((x, v));
                    }
                }
                Node::Func(f, a) => {
                    let d = f.derivative(self, a, id);
                    let v = self.mul(g, d);
                    out.push((a, v));
                }
            }
            for (c, v) in out {
                if !live(c) {
                    continue;
                }
                let acc = match adj.get(&c) {
                    Some(&prev) => self.add(prev, v),
                    None => v,
                };
                adj.insert(c, acc);
            }
        }
        let zero = self.constant(0.0);
        coords
            .iter()
            .map(|k| grad.get(k).copied().unwrap_or(zero))
            .collect()
    }
}
