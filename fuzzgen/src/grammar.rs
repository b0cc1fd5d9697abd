//! A grammar-based generator of mostly valid mechanisms.
//!
//! Every expression is built together with its value at the nominal configuration
//! (coordinates at their nominal values, parameters at their defaults, `t = 0`), so that
//! constraint right-hand sides can be chosen to hold there: the nominal configuration of a
//! generated mechanism is consistent by construction. Each constraint row is built around
//! its own *dependent* coordinate (a closed loop around two or three of its joint angles,
//! or a random equation in a fresh coordinate), so the Jacobian with respect to the
//! dependent coordinates is generically non-singular, and `independent` hints are drawn from
//! the other coordinates. Functions are applied only inside their domain at the nominal.

use std::f64::consts::PI;

use crate::dice::Dice;

/// Value of an expression at the nominal configuration.
#[derive(Clone, Debug)]
enum Val {
    S(f64),
    V2([f64; 2]),
    V3([f64; 3]),
    R([[f64; 3]; 3]),
}

impl Val {
    fn finite_and_moderate(&self) -> bool {
        let ok = |v: f64| v.is_finite() && v.abs() < 1e4;
        match self {
            Val::S(x) => ok(*x),
            Val::V2(v) => v.iter().all(|&x| ok(x)),
            Val::V3(v) => v.iter().all(|&x| ok(x)),
            Val::R(m) => m.iter().flatten().all(|&x| ok(x)),
        }
    }
}

/// An expression: its source text and its nominal value.
#[derive(Clone, Debug)]
struct Ex {
    text: String,
    val: Val,
}

impl Ex {
    fn s(&self) -> f64 {
        match self.val {
            Val::S(x) => x,
            _ => f64::NAN,
        }
    }
}

/// A named value in scope.
#[derive(Clone, Debug)]
struct Named {
    name: String,
    val: Val,
}

/// A float literal that Rust parses back to the same value (negative ones parenthesised).
pub fn lit(v: f64) -> String {
    let s = format!("{v:?}");
    if v.is_sign_negative() {
        format!("({s})")
    } else {
        s
    }
}

fn rot(axis: usize, th: f64) -> [[f64; 3]; 3] {
    let (s, c) = th.sin_cos();
    match axis {
        0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
        1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    }
}

fn mat_vec(m: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    let d = |r: &[f64; 3]| r[0] * v[0] + r[1] * v[1] + r[2] * v[2];
    [d(&m[0]), d(&m[1]), d(&m[2])]
}

fn mat_mat(m: &[[f64; 3]; 3], n: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = m[i][0] * n[0][j] + m[i][1] * n[1][j] + m[i][2] * n[2][j];
        }
    }
    out
}

/// State of one module being generated.
struct Module<'d> {
    dice: &'d mut Dice,
    out: Vec<String>,
    counter: usize,
    scalars: Vec<Named>,
    vec2s: Vec<Named>,
    vec3s: Vec<Named>,
    rots: Vec<Named>,
    /// Coordinates: name, nominal, whether some constraint row is built around it.
    coords: Vec<(String, f64, bool)>,
    /// Parameters without default (usable in dynamics only).
    free_params: Vec<String>,
    /// Whether `t` may appear in the expression being built.
    allow_time: bool,
}

impl<'d> Module<'d> {
    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}_{}", self.counter)
    }

    fn item(&mut self, s: String) {
        self.out.push(format!("    {s}"));
    }

    fn number(&mut self, lo: f64, hi: f64) -> f64 {
        // Round to a few digits so that most literals look like hand-written ones.
        let v = self.dice.float(lo, hi);
        if self.dice.chance(3, 4) {
            (v * 1000.0).round() / 1000.0
        } else {
            v
        }
    }

    fn angle(&mut self) -> f64 {
        let a = self.number(0.2, 1.3);
        if self.dice.chance(1, 2) {
            -a
        } else {
            a
        }
    }

    // ---- declarations ---------------------------------------------------------------

    fn param(&mut self, lo: f64, hi: f64) -> Ex {
        let name = self.fresh("len");
        let v = self.number(lo, hi);
        if self.dice.chance(1, 3) {
            self.item(format!("/// Parameter {name} (m)."));
        }
        self.item(format!("param {name} = {};", lit(v)));
        self.scalars.push(Named {
            name: name.clone(),
            val: Val::S(v),
        });
        Ex {
            text: name,
            val: Val::S(v),
        }
    }

    /// A positive length: a parameter, a constant or a literal.
    fn length(&mut self) -> Ex {
        match self.dice.below(3) {
            0 => self.param(0.2, 1.0),
            1 => {
                let name = self.fresh("k");
                let v = self.number(0.2, 1.0);
                let (text, val) = if self.dice.chance(1, 2) {
                    (format!("{} * pi / 4.0", lit(v)), v * PI / 4.0)
                } else {
                    (lit(v), v)
                };
                self.item(format!("const {name} = {text};"));
                self.scalars.push(Named {
                    name: name.clone(),
                    val: Val::S(val),
                });
                Ex {
                    text: name,
                    val: Val::S(val),
                }
            }
            _ => {
                let v = self.number(0.2, 1.0);
                Ex {
                    text: lit(v),
                    val: Val::S(v),
                }
            }
        }
    }

    fn coord(&mut self, nominal: f64, dependent: bool) -> Ex {
        let name = self.fresh("q");
        self.item(format!("coord {name} = {};", lit(nominal)));
        self.coords.push((name.clone(), nominal, dependent));
        self.scalars.push(Named {
            name: name.clone(),
            val: Val::S(nominal),
        });
        Ex {
            text: name,
            val: Val::S(nominal),
        }
    }

    fn let_binding(&mut self, e: &Ex) -> Ex {
        let name = self.fresh("v");
        self.item(format!("let {name} = {};", e.text));
        let named = Named {
            name: name.clone(),
            val: e.val.clone(),
        };
        match e.val {
            Val::S(_) => self.scalars.push(named),
            Val::V2(_) => self.vec2s.push(named),
            Val::V3(_) => self.vec3s.push(named),
            Val::R(_) => self.rots.push(named),
        }
        Ex {
            text: name,
            val: e.val.clone(),
        }
    }

    // ---- expressions ----------------------------------------------------------------

    fn leaf(&mut self) -> Ex {
        let k = self.dice.below(10);
        if k < 6 && !self.scalars.is_empty() {
            let n = self.dice.pick(&self.scalars).clone();
            return Ex {
                text: n.name,
                val: n.val,
            };
        }
        if k == 6 {
            return Ex {
                text: "pi".into(),
                val: Val::S(PI),
            };
        }
        if k == 7 && self.allow_time {
            return Ex {
                text: "(0.1 * t)".into(),
                val: Val::S(0.0),
            };
        }
        if k == 8 && !self.vec2s.is_empty() {
            let n = self.dice.pick(&self.vec2s).clone();
            if let Val::V2(v) = n.val {
                let c = self.dice.below(2);
                return Ex {
                    text: format!("{}.{}", n.name, ["x", "y"][c]),
                    val: Val::S(v[c]),
                };
            }
        }
        if k == 9 && !self.vec3s.is_empty() {
            let n = self.dice.pick(&self.vec3s).clone();
            if let Val::V3(v) = n.val {
                let c = self.dice.below(3);
                return Ex {
                    text: format!("{}.{}", n.name, ["x", "y", "z"][c]),
                    val: Val::S(v[c]),
                };
            }
        }
        let v = self.number(-2.0, 2.0);
        Ex {
            text: lit(v),
            val: Val::S(v),
        }
    }

    /// A scalar expression of depth at most `depth`, finite and moderate at the nominal.
    fn scalar(&mut self, depth: u32) -> Ex {
        if depth == 0 || self.dice.chance(1, 3) {
            return self.leaf();
        }
        for _ in 0..4 {
            let e = self.scalar_node(depth);
            if e.val.finite_and_moderate() {
                return e;
            }
        }
        self.leaf()
    }

    fn call(&mut self, f: &str, a: &Ex) -> String {
        if self.dice.chance(1, 3) {
            format!("({}).{f}()", a.text)
        } else {
            format!("{f}({})", a.text)
        }
    }

    fn scalar_node(&mut self, depth: u32) -> Ex {
        let a = self.scalar(depth - 1);
        let x = a.s();
        let s = |text: String, v: f64| Ex {
            text,
            val: Val::S(v),
        };
        match self.dice.below(13) {
            0 => s(format!("(-{})", a.text), -x),
            1 => s(self.call("sin", &a), x.sin()),
            2 => s(self.call("cos", &a), x.cos()),
            3 => s(self.call("atan", &a), x.atan()),
            4 => s(
                format!("sqrt({} * {} + 1.0)", a.text, a.text),
                (x * x + 1.0).sqrt(),
            ),
            5 if x.abs() < 0.9 => s(self.call("asin", &a), x.asin()),
            6 if x.abs() < 0.9 => s(self.call("acos", &a), x.acos()),
            7 if x.abs() < 1.2 => s(self.call("tan", &a), x.tan()),
            8 if x.abs() < 3.0 => s(self.call("exp", &a), x.exp()),
            9 if x > 0.1 => s(self.call("ln", &a), x.ln()),
            10 => {
                let n: i32 = *self.dice.pick(&[2, 3, -1, -2, 1, 0]);
                if n < 0 && x.abs() < 0.1 {
                    return s(format!("({} * {})", a.text, a.text), x * x);
                }
                let text = if self.dice.chance(1, 2) {
                    format!("({}).powi({n})", a.text)
                } else {
                    format!("powi({}, {n})", a.text)
                };
                s(text, x.powi(n))
            }
            11 => {
                let b = self.scalar(depth - 1);
                let y = b.s();
                if x.abs() + y.abs() < 0.1 {
                    return a;
                }
                let text = if self.dice.chance(1, 2) {
                    format!("atan2({}, {})", a.text, b.text)
                } else {
                    format!("({}).atan2({})", a.text, b.text)
                };
                s(text, x.atan2(y))
            }
            _ => {
                let b = self.scalar(depth - 1);
                let y = b.s();
                match self.dice.below(4) {
                    0 => s(format!("({} + {})", a.text, b.text), x + y),
                    1 => s(format!("({} - {})", a.text, b.text), x - y),
                    2 => s(format!("({} * {})", a.text, b.text), x * y),
                    _ if y.abs() > 0.1 => s(format!("({} / {})", a.text, b.text), x / y),
                    _ => s(format!("({} * {})", a.text, b.text), x * y),
                }
            }
        }
    }

    fn vec2(&mut self, depth: u32) -> Ex {
        let k = self.dice.below(if depth == 0 { 2 } else { 7 });
        match k {
            0 if !self.vec2s.is_empty() => {
                let n = self.dice.pick(&self.vec2s).clone();
                Ex {
                    text: n.name,
                    val: n.val,
                }
            }
            1 | 0 => {
                let (a, b) = (self.scalar(depth), self.scalar(depth));
                Ex {
                    text: format!("vec2({}, {})", a.text, b.text),
                    val: Val::V2([a.s(), b.s()]),
                }
            }
            2 => {
                let v = self.vec2(depth - 1);
                let th = self.scalar(depth - 1);
                let Val::V2(x) = v.val else { return v };
                let (sn, c) = th.s().sin_cos();
                Ex {
                    text: format!("rotate2d({}, {})", v.text, th.text),
                    val: Val::V2([x[0] * c - x[1] * sn, x[0] * sn + x[1] * c]),
                }
            }
            3 | 4 => {
                let (u, v) = (self.vec2(depth - 1), self.vec2(depth - 1));
                let (Val::V2(x), Val::V2(y)) = (&u.val, &v.val) else {
                    return u;
                };
                let (op, sg) = if k == 3 { ("+", 1.0) } else { ("-", -1.0) };
                Ex {
                    text: format!("({} {op} {})", u.text, v.text),
                    val: Val::V2([x[0] + sg * y[0], x[1] + sg * y[1]]),
                }
            }
            5 => {
                let (a, v) = (self.scalar(depth - 1), self.vec2(depth - 1));
                let Val::V2(x) = v.val else { return v };
                Ex {
                    text: format!("({} * {})", a.text, v.text),
                    val: Val::V2([a.s() * x[0], a.s() * x[1]]),
                }
            }
            _ => {
                let v = self.vec2(depth - 1);
                let Val::V2(x) = v.val else { return v };
                Ex {
                    text: format!("(-{})", v.text),
                    val: Val::V2([-x[0], -x[1]]),
                }
            }
        }
    }

    fn rotation(&mut self, depth: u32) -> Ex {
        let k = self.dice.below(if depth == 0 { 2 } else { 3 });
        if k == 0 && !self.rots.is_empty() {
            let n = self.dice.pick(&self.rots).clone();
            return Ex {
                text: n.name,
                val: n.val,
            };
        }
        if k == 2 {
            let (m, n) = (self.rotation(depth - 1), self.rotation(depth - 1));
            let (Val::R(a), Val::R(b)) = (&m.val, &n.val) else {
                return m;
            };
            return Ex {
                text: format!("({} * {})", m.text, n.text),
                val: Val::R(mat_mat(a, b)),
            };
        }
        let axis = self.dice.below(3);
        let th = self.scalar(depth.saturating_sub(1));
        Ex {
            text: format!("rot_{}({})", ["x", "y", "z"][axis], th.text),
            val: Val::R(rot(axis, th.s())),
        }
    }

    fn vec3(&mut self, depth: u32) -> Ex {
        let k = self.dice.below(if depth == 0 { 2 } else { 6 });
        match k {
            0 if !self.vec3s.is_empty() => {
                let n = self.dice.pick(&self.vec3s).clone();
                Ex {
                    text: n.name,
                    val: n.val,
                }
            }
            0 | 1 => {
                let (a, b, c) = (self.scalar(depth), self.scalar(depth), self.scalar(depth));
                Ex {
                    text: format!("vec3({}, {}, {})", a.text, b.text, c.text),
                    val: Val::V3([a.s(), b.s(), c.s()]),
                }
            }
            2 => {
                let (m, v) = (self.rotation(depth - 1), self.vec3(depth - 1));
                let (Val::R(a), Val::V3(x)) = (&m.val, &v.val) else {
                    return v;
                };
                Ex {
                    text: format!("({} * {})", m.text, v.text),
                    val: Val::V3(mat_vec(a, x)),
                }
            }
            3 => {
                let (u, v) = (self.vec3(depth - 1), self.vec3(depth - 1));
                let (Val::V3(x), Val::V3(y)) = (&u.val, &v.val) else {
                    return u;
                };
                Ex {
                    text: format!("cross({}, {})", u.text, v.text),
                    val: Val::V3([
                        x[1] * y[2] - x[2] * y[1],
                        x[2] * y[0] - x[0] * y[2],
                        x[0] * y[1] - x[1] * y[0],
                    ]),
                }
            }
            4 => {
                let (u, v) = (self.vec3(depth - 1), self.vec3(depth - 1));
                let (Val::V3(x), Val::V3(y)) = (&u.val, &v.val) else {
                    return u;
                };
                Ex {
                    text: format!("({} + {})", u.text, v.text),
                    val: Val::V3([x[0] + y[0], x[1] + y[1], x[2] + y[2]]),
                }
            }
            _ => {
                let (a, v) = (self.scalar(depth - 1), self.vec3(depth - 1));
                let Val::V3(x) = v.val else { return v };
                let s = a.s();
                Ex {
                    text: format!("({} * {})", a.text, v.text),
                    val: Val::V3([s * x[0], s * x[1], s * x[2]]),
                }
            }
        }
    }

    /// A scalar that certainly depends on coordinate `q` (value `x`), with a non-zero
    /// derivative at the nominal.
    fn around(&mut self, q: &Ex) -> Ex {
        let x = q.s();
        let s = |text: String, v: f64| Ex {
            text,
            val: Val::S(v),
        };
        let core = match self.dice.below(5) {
            0 => q.clone(),
            1 => s(format!("sin({})", q.text), x.sin()),
            2 => s(format!("({} * {} + {})", q.text, q.text, q.text), x * x + x),
            3 => s(format!("({}).atan()", q.text), x.atan()),
            _ => s(format!("exp({})", q.text), x.exp()),
        };
        if self.dice.chance(1, 2) {
            return core;
        }
        let other = self.scalar(2);
        match self.dice.below(3) {
            0 => s(
                format!("({} + {})", core.text, other.text),
                core.s() + other.s(),
            ),
            1 => s(
                format!("({} - {})", core.text, other.text),
                core.s() - other.s(),
            ),
            _ if other.s().abs() > 0.2 => s(
                format!("({} * {})", other.text, core.text),
                other.s() * core.s(),
            ),
            _ => core,
        }
    }

    // ---- motifs ---------------------------------------------------------------------

    /// A planar closed loop of `k` links (the last two angles dependent), optionally
    /// closed on a slider.
    fn planar_loop(&mut self) {
        let k = self.dice.range(3, 5);
        let slider = self.dice.chance(1, 3);
        let mut terms = Vec::new();
        let mut sum = [0.0, 0.0];
        let n_angles = if slider { k - 1 } else { k };
        for i in 0..n_angles {
            let dependent = if slider {
                i + 1 == n_angles
            } else {
                i + 2 >= n_angles
            };
            let nominal = self.angle() + i as f64 * 0.9;
            let th = self.coord(nominal, dependent);
            let l = self.length();
            let (c, s) = (th.s().cos(), th.s().sin());
            let (text, v) = match self.dice.below(4) {
                0 => (
                    format!(
                        "vec2({} * cos({}), {} * sin({}))",
                        l.text, th.text, l.text, th.text
                    ),
                    [l.s() * c, l.s() * s],
                ),
                1 => (
                    format!("rotate2d(vec2({}, 0.0), {})", l.text, th.text),
                    [l.s() * c, l.s() * s],
                ),
                2 => (
                    format!("{} * vec2({}.cos(), {}.sin())", l.text, th.text, th.text),
                    [l.s() * c, l.s() * s],
                ),
                _ => (
                    format!(
                        "vec2({} * sin({}), -{} * cos({}))",
                        l.text, th.text, l.text, th.text
                    ),
                    [l.s() * s, -l.s() * c],
                ),
            };
            let link = if self.dice.chance(1, 3) {
                self.let_binding(&Ex {
                    text,
                    val: Val::V2(v),
                })
            } else {
                Ex {
                    text,
                    val: Val::V2(v),
                }
            };
            sum[0] += v[0];
            sum[1] += v[1];
            terms.push(link.text);
        }
        let lhs = terms.join(" + ");
        if slider {
            let s = self.coord(sum[0], true);
            let base = if self.dice.chance(1, 2) {
                let p = self.param(-0.5, 0.5);
                let off = sum[1] - p.s();
                format!("vec2({}, {} + {})", s.text, p.text, lit(off))
            } else {
                format!("vec2({}, {})", s.text, lit(sum[1]))
            };
            self.item(format!("constraint {lhs} == {base};"));
        } else {
            self.item(format!(
                "constraint {lhs} == vec2({}, {});",
                lit(sum[0]),
                lit(sum[1])
            ));
        }
    }

    /// A spatial loop: two links turned by `rot_z · rot_y` / `rot_z · rot_x`, closed on a
    /// prismatic coordinate along z; three equations, three dependent coordinates.
    fn spatial_loop(&mut self) {
        let nominals = [self.angle(), self.angle(), self.angle(), self.angle()];
        let a1 = self.coord(nominals[0], false);
        let b1 = self.coord(nominals[1], false);
        let a2 = self.coord(nominals[2], true);
        let b2 = self.coord(nominals[3], true);
        let (l1, l2) = (self.length(), self.length());
        let r1 = mat_mat(&rot(2, a1.s()), &rot(1, b1.s()));
        let r2 = mat_mat(&rot(2, a2.s()), &rot(0, b2.s()));
        let p1 = mat_vec(&r1, &[l1.s(), 0.0, 0.0]);
        let p2 = mat_vec(&r2, &[0.0, l2.s(), 0.0]);
        let z = p1[2] + p2[2];
        let s = self.coord(-z + 0.3, true);
        let link1 = format!(
            "rot_z({}) * rot_y({}) * vec3({}, 0.0, 0.0)",
            a1.text, b1.text, l1.text
        );
        let link1 = if self.dice.chance(1, 2) {
            self.let_binding(&Ex {
                text: link1,
                val: Val::V3(p1),
            })
            .text
        } else {
            link1
        };
        self.item(format!(
            "constraint {link1} + rot_z({}) * rot_x({}) * vec3(0.0, {}, 0.0) + vec3(0.0, 0.0, {}) == vec3({}, {}, 0.3);",
            a2.text,
            b2.text,
            l2.text,
            s.text,
            lit(p1[0] + p2[0]),
            lit(p1[1] + p2[1]),
        ));
    }

    /// A random scalar equation around a fresh dependent coordinate, maybe with a fresh
    /// independent one.
    fn scalar_equation(&mut self) {
        let nominal = self.number(-1.5, 1.5);
        let q = self.coord(nominal, true);
        if self.dice.chance(1, 2) || self.coords.iter().all(|c| c.2) {
            let n = self.angle();
            self.coord(n, false);
        }
        self.allow_time = self.dice.chance(1, 4);
        let lhs = self.around(&q);
        let rhs_form = self.dice.below(3);
        let line = if rhs_form == 0 {
            let other = self.scalar(2);
            format!(
                "constraint {} == {} + {};",
                lhs.text,
                other.text,
                lit(lhs.s() - other.s())
            )
        } else {
            format!("constraint {} == {};", lhs.text, lit(lhs.s()))
        };
        self.allow_time = false;
        self.item(line);
    }

    fn random_lets(&mut self) {
        for _ in 0..self.dice.below(3) {
            let e = match self.dice.below(4) {
                0 => self.scalar(2),
                1 => self.vec2(2),
                2 => self.vec3(2),
                _ => self.rotation(2),
            };
            if e.val.finite_and_moderate() {
                self.let_binding(&e);
            }
        }
    }

    // ---- dynamics -------------------------------------------------------------------

    fn mass(&mut self) -> String {
        if self.dice.chance(1, 2) {
            self.param(0.5, 3.0).text
        } else if self.dice.chance(1, 4) && !self.free_params.is_empty() {
            self.dice.pick(&self.free_params).clone()
        } else {
            lit(self.number(0.1, 2.0))
        }
    }

    fn dynamics(&mut self) {
        let spatial = self.dice.chance(1, 3);
        if self.dice.chance(1, 3) {
            let name = self.fresh("m");
            self.item(format!("/// A parameter without default ({name})."));
            self.item(format!("param {name};"));
            self.free_params.push(name);
        }
        let n_bodies = self.dice.range(1, 3);
        for _ in 0..n_bodies {
            let name = self.fresh("body");
            let mass = self.mass();
            let line = if self.dice.chance(1, 4) {
                let com = if spatial { self.vec3(2) } else { self.vec2(2) };
                format!("body {name} {{ mass = {mass}, com = {} }}", com.text)
            } else if spatial {
                let com = self.vec3(2);
                let r = self.rotation(2);
                let i = [
                    self.number(0.01, 0.2),
                    self.number(0.01, 0.2),
                    self.number(0.01, 0.2),
                ];
                format!(
                    "body {name} {{ mass = {mass}, inertia = vec3({}, {}, {}), com = {}, rotation = {} }}",
                    lit(i[0]),
                    lit(i[1]),
                    lit(i[2]),
                    com.text,
                    r.text
                )
            } else {
                let com = self.vec2(2);
                let ang = self.scalar(2);
                let i = self.number(0.01, 0.2);
                format!(
                    "body {name} {{ mass = {mass}, inertia = {}, com = {}, angle = {} }}",
                    lit(i),
                    com.text,
                    ang.text
                )
            };
            self.item(line);
        }
        if self.dice.chance(2, 3) {
            let line = if spatial {
                let g = self.param(9.0, 10.0);
                format!("gravity = vec3(0.0, 0.0, -{});", g.text)
            } else {
                format!("gravity = vec2(0.0, {});", lit(-self.number(9.0, 10.0)))
            };
            self.item(line);
        }
        for _ in 0..self.dice.below(3) {
            let (a, b) = if spatial {
                (self.vec3(2), self.vec3(1))
            } else {
                (self.vec2(2), self.vec2(1))
            };
            let dist = match (&a.val, &b.val) {
                (Val::V2(x), Val::V2(y)) => ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2)).sqrt(),
                (Val::V3(x), Val::V3(y)) => {
                    (0..3).map(|i| (x[i] - y[i]).powi(2)).sum::<f64>().sqrt()
                }
                _ => 0.0,
            };
            if dist.is_nan() || dist < 0.05 {
                continue;
            }
            let name = self.fresh("spring");
            let k = self.number(1.0, 100.0);
            let l0 = self.number(0.1, 1.0);
            let damping = if self.dice.chance(1, 2) {
                format!(", damping = {}", lit(self.number(0.0, 2.0)))
            } else {
                String::new()
            };
            self.item(format!(
                "spring {name} {{ a = {}, b = {}, stiffness = {}, length = {}{damping} }}",
                a.text,
                b.text,
                lit(k),
                lit(l0)
            ));
        }
        let coords: Vec<String> = self.coords.iter().map(|c| c.0.clone()).collect();
        for _ in 0..self.dice.below(3) {
            let c = self.dice.pick(&coords).clone();
            self.allow_time = true;
            let e = self.scalar(2);
            self.allow_time = false;
            let damp = self.number(0.0, 1.0);
            self.item(format!(
                "force {c} = {} - {} * der({c});",
                e.text,
                lit(damp)
            ));
        }
        if self.dice.chance(1, 4) {
            let c = self.dice.pick(&coords).clone();
            let c2 = self.dice.pick(&coords).clone();
            let m = self.number(0.1, 1.0);
            let mut entries = vec![format!("({c}, {c}) = {}", lit(m))];
            if c2 != c {
                entries.push(format!("({c2}, {c2}) = {}", lit(m + 0.5)));
                entries.push(format!("({c}, {c2}) = {}", lit(m * 0.1)));
            }
            self.item(format!("mass_matrix {{ {} }}", entries.join(", ")));
        }
        if self.dice.chance(1, 4) {
            let c = self.dice.pick(&coords).clone();
            let e = self.scalar(2);
            self.item(format!(
                "generalized_force {{ {c} = {} - 0.1 * der({c}) }}",
                e.text
            ));
        }
    }
}

impl Module<'_> {
    /// Named outputs (scalars and vectors, some time-dependent) and inequality constraints
    /// (some with restitution): what the emitted-code checker (`emit.rs`) checks besides
    /// the kinematics and dynamics.
    fn outputs_and_inequalities(&mut self) {
        for _ in 0..self.dice.below(3) {
            let name = self.fresh("o");
            self.allow_time = self.dice.chance(1, 3);
            let e = match self.dice.below(3) {
                0 => self.scalar(2),
                1 => self.vec2(2),
                _ => self.vec3(2),
            };
            self.allow_time = false;
            self.item(format!("output {name} = {};", e.text));
        }
        for _ in 0..self.dice.below(3) {
            let name = self.fresh("g");
            // An inequality must involve a coordinate.
            let (c, x) = {
                let c = self.dice.pick(&self.coords);
                (c.0.clone(), c.1)
            };
            self.allow_time = self.dice.chance(1, 3);
            let e = self.around(&Ex {
                text: c,
                val: Val::S(x),
            });
            self.allow_time = false;
            let rest = if self.dice.chance(1, 3) {
                format!(", restitution = {}", lit(self.number(0.0, 1.0)))
            } else {
                String::new()
            };
            let bound = lit(self.number(-1.0, 1.0));
            self.item(format!("inequality {name}: {} >= {bound}{rest};", e.text));
        }
    }
}

/// Generates one module named `name` (with its doc comment) into `out`; with `extras`,
/// with outputs and inequality constraints too.
fn module(dice: &mut Dice, name: &str, out: &mut Vec<String>, extras: bool) {
    let mut m = Module {
        dice,
        out: Vec::new(),
        counter: 0,
        scalars: Vec::new(),
        vec2s: Vec::new(),
        vec3s: Vec::new(),
        rots: Vec::new(),
        coords: Vec::new(),
        free_params: Vec::new(),
        allow_time: false,
    };
    for _ in 0..m.dice.below(3) {
        m.param(0.1, 2.0);
    }
    let motifs = m.dice.range(1, 3);
    for _ in 0..motifs {
        m.random_lets();
        match m.dice.below(4) {
            0 | 1 => m.planar_loop(),
            2 => m.spatial_loop(),
            _ => m.scalar_equation(),
        }
    }
    if m.dice.chance(1, 4) {
        let a = m.angle();
        m.coord(a, false);
    }
    let free: Vec<String> = m
        .coords
        .iter()
        .filter(|c| !c.2)
        .map(|c| c.0.clone())
        .collect();
    if !free.is_empty() && m.dice.chance(1, 2) {
        let n = m.dice.range(1, free.len());
        let start = m.dice.below(free.len() - n + 1);
        m.item(format!(
            "independent {};",
            free[start..start + n].join(", ")
        ));
    }
    if m.dice.chance(1, 2) {
        m.dynamics();
    }
    if extras {
        m.outputs_and_inequalities();
    }
    let vis = *m.dice.pick(&["pub ", "", "pub(crate) "]);
    if m.dice.chance(2, 3) {
        out.push(format!(
            "/// Generated mechanism `{name}`: {} coordinates.",
            m.coords.len()
        ));
    }
    out.push(format!("{vis}mod {name} {{"));
    out.append(&mut m.out);
    out.push("}".into());
}

/// Generates a mostly valid `.mech` text: an optional `#![seed = N]` and one or two
/// modules with consistent nominal configurations.
pub fn generate(dice: &mut Dice) -> String {
    generate_with(dice, false)
}

/// [`generate`], with `extras`: named outputs and inequality constraints as well (other
/// draws than [`generate`]'s: the same seed makes another input).
pub fn generate_with(dice: &mut Dice, extras: bool) -> String {
    let mut out = Vec::new();
    if dice.chance(1, 4) {
        out.push(format!("#![seed = {}]", dice.next_u32()));
    }
    let n = if dice.chance(1, 5) { 2 } else { 1 };
    for i in 0..n {
        let name = format!("mech{i}");
        module(dice, &name, &mut out, extras);
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_round_trip() {
        for v in [0.1, -0.25, 1e-7, 1e20, 3.0, -0.0] {
            let s = lit(v);
            let t = s.trim_start_matches('(').trim_end_matches(')');
            assert_eq!(t.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{s}");
        }
    }

    #[test]
    fn same_seed_same_text() {
        let a = generate(&mut Dice::from_seed(7));
        let b = generate(&mut Dice::from_seed(7));
        assert_eq!(a, b);
        assert!(a.contains("mod mech0"), "{a}");
        assert!(a.contains("constraint"), "{a}");
    }
}
