//! The language and the generated API, with examples that compile and run (doctests).
//!
//! # A mechanism
//!
//! The body of [`mechanism!`](crate::mechanism) and the contents of a `.mech` file read by
//! `mechgen_build::Builder` are the same language: an optional `#![seed = N]` (the probe
//! seed), an optional `#![crate = "::path"]` (macro only: where the run-time crate is), an
//! optional `#![scalar = f32]` (the generated functions in single precision, without the
//! runtime's trait impls, which are for `f64`), an optional `#![generic]` (the generic family,
//! see below), then one or more modules.
//!
//! | item | meaning |
//! | --- | --- |
//! | `param NAME = 0.1;` | run-time parameter, a field of `Params` (the value is its default, also used for probing) |
//! | `input NAME;` | run-time input, a field of `Params` (default 0) set by a controller between intervals ([`simulate_controlled`](crate::runtime::controlled::simulate_controlled)); only in `force` / `generalized_force` |
//! | `const NAME = pi / 180.0;` | constant, folded at generation |
//! | `coord NAME = 0.3;` | generalised coordinate and its nominal value (on or near the constraints) |
//! | `let NAME = expr;` | scalar, 2-vector, 3-vector, 3×3 matrix or frame, inlined into the expression DAG |
//! | `constraint lhs == rhs;` | scalar or vector equation |
//! | `joint NAME = revolute(A, B);` | a joint's equations between two frames (or points: `distance(p, q, l)`, …) |
//! | `velocity_constraint lhs == rhs;` | a constraint linear in the velocities `der(q)` (rolling without slipping) |
//! | `independent a, b;` | coordinates to keep independent (actuated joints) |
//! | `independent NAME: a, b;` | a named chart: the same mechanism with other independent coordinates (`null_space_NAME`, `solve_dependent_NAME`, a type `Name` for the runtime) |
//! | `body NAME { mass = m, inertia = I, com = v, angle = φ }` | planar rigid body (spatial: `inertia = vec3(…)` or `mat3(…)`, `rotation = R`; or `frame = F` for `com` and orientation; point mass: no inertia) |
//! | `gravity = vec2(0.0, -g);` | gravity on every body |
//! | `spring NAME { a = p1, b = p2, stiffness = k, length = l0, damping = c }` | spring–damper between two points |
//! | `force COORD = expr;` | generalised force (may use `der(q)` and `t`) |
//! | `mass_matrix { (a, b) = expr, … }`, `generalized_force { a = expr, … }` | explicit terms |
//! | `output NAME = expr;` | a named output (scalar, `vec2` or `vec3` of `q`, `p`, `t`; components `NAME_x`, …) |
//! | `for i in 0..N { items }` | the items repeated for `i = 0, …, N − 1` (see families below) |
//! | `fn NAME(a, b) -> vec2 { let x = …; value }` | a function, inlined at each call (see below) |
//! | `inequality NAME: lhs >= rhs (, restitution = e)?;` | unilateral constraint `lhs − rhs ≥ 0` (or `<=`), scalar or vector, with the restitution of impacts on it (default 0) |
//!
//! Families: `for i in 0..6 { items }` repeats its items (bounds: constant integer
//! expressions; loops nest; inside, `i` is a number); `NAME[index]` with a constant integer
//! index (integer literals and loop variables, `+ - * / %`) is the name `NAME_index`, in
//! declarations and uses alike (`coord a[i] = …;` declares `a_0`, `a_1`, …); `const w = [e0,
//! e1, …];` declares `w_0`, `w_1`, … and `w[k]` past its end is an error.
//!
//! ```
//! mechgen::mechanism! {
//!     /// Three links in a row, each a fixed distance from the next.
//!     pub mod chain {
//!         const gap = [1.0, 2.0];
//!         for i in 0..3 {
//!             coord x[i] = 0.5 * i;
//!         }
//!         for i in 0..2 {
//!             constraint x[i + 1] - x[i] == gap[i];
//!         }
//!     }
//! }
//! assert_eq!(chain::COORD_NAMES, ["x_0", "x_1", "x_2"]);
//! assert_eq!((chain::NC, chain::DOF), (2, 1));
//! ```
//!
//! Functions: `fn NAME(a, b) -> TYPE { let x = …; value }` is inlined at each call (the
//! `-> TYPE` is documentation; recursion is an error):
//!
//! ```
//! mechgen::mechanism! {
//!     pub mod two_link {
//!         fn polar(r, a) -> vec2 { vec2(r * cos(a), r * sin(a)) }
//!         coord a = 0.3;
//!         coord b = 1.2;
//!         coord x = 1.2;
//!         independent a;
//!         constraint polar(1.0, a) + polar(1.0, b) == vec2(x, 0.8);
//!     }
//! }
//! assert_eq!((two_link::NQ, two_link::NC), (3, 2));
//! ```
//!
//! Expressions: numbers, names declared above, `t`, `pi`; `+ - * /`, unary `-`; `sin cos
//! tan asin acos atan atan2 sqrt exp ln abs powi` (call or method form); `vec2`, `vec3`,
//! `.x .y .z`, `dot`, `cross`, `norm`, `norm_squared`, `rotate2d`, `rot_x/rot_y/rot_z`,
//! `mat3`; `der(q)` (and `der(e)` of any expression, `velocity(F, p)`) in forces and velocity
//! constraints. Rotations as robot descriptions give them: `rpy(r, p, y)` (URDF's
//! `Rz(y) Ry(p) Rx(r)`), `quat(w, x, y, z)` (normalised) and `axis_angle(axis, θ)` (about any
//! axis, normalised: a joint's rotation); `mechgen import robot.urdf` writes a robot's `.mech`.
//!
//! Frames and joints: `translate(v)`, `rot(θ)`, `frame(origin, angle or R)` build rigid
//! placements, `*` composes them, `F.point(v)` / `F.apply(v)` map points and directions,
//! `F.origin`, `F.angle`, `F.x_axis`, … read them; `joint NAME = revolute(A, B);` (also
//! `prismatic`, `cylindrical`, `spherical`, `universal`, `planar`, `fixed`, and between
//! points `coincident`, `distance`, `on_line`, `on_plane`) adds a joint's equations, and
//! `body NAME { mass, inertia, frame = F }` places a body by a frame at its centre of mass.
//! A four-bar linkage:
//!
//! ```
//! mechgen::mechanism! {
//!     pub mod four_bar {
//!         param g = 9.81;
//!         coord crank = 1.0;
//!         coord coupler = 0.3;
//!         coord rocker = 1.4;
//!         independent crank;
//!         let a = rot(crank);
//!         let b = frame(a.point(vec2(0.3, 0.0)), coupler);
//!         let c = translate(vec2(1.0, 0.0)) * rot(rocker);
//!         joint pin = revolute(b * translate(vec2(1.0, 0.0)), c * translate(vec2(0.8, 0.0)));
//!         body link { mass = 1.0, inertia = 0.1, frame = b * translate(vec2(0.5, 0.0)) }
//!         gravity = vec2(0.0, -g);
//!     }
//! }
//! use mechgen::nalgebra::SVector;
//! assert_eq!((four_bar::NQ, four_bar::NC, four_bar::DOF), (3, 2, 1));
//! // The pin's two rows: the coupler's end minus the rocker's end.
//! let q = SVector::from([1.0, 0.3, 1.4]);
//! let r = four_bar::residual(&q, &four_bar::Params::default(), 0.0);
//! let end = |th: f64, x: f64, l: f64| (x + l * th.cos(), l * th.sin());
//! let (bx, by) = end(0.3, 0.3 * 1f64.cos(), 1.0);
//! let (cx, cy) = end(1.4, 1.0, 0.8);
//! assert!((r[0] - (bx - cx)).abs() < 1e-15);
//! assert!((r[1] - (by + 0.3 * 1f64.sin() - cy)).abs() < 1e-15);
//! ```
//!
//! Mistakes are compile errors at the offending tokens:
//!
//! ```compile_fail
//! mechgen::mechanism! {
//!     pub mod circle {
//!         coord x = 0.6;
//!         coord y = 0.8;
//!         constraint x * x + yy * y == 1.0; // error: unknown name `yy`; did you mean `y`?
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! # What is generated
//!
//! Each module holds the sizes (`NQ`, `NC`, `DOF`, `RANK`), `COORD_NAMES`, `INDEPENDENT`,
//! `NOMINAL_Q`, a `Params` struct, and straight-line functions: `residual` (C), `jacobian`
//! (C_J), `jacobian_t` (C_t), `null_space` (a basis D of C_J's null space with its health
//! figure in [0, 1]), `solve_dependent` (C_J x = b with the independent part of x zero),
//! `gamma` (the acceleration right-hand side) and, with bodies or forces, `mass_matrix`,
//! `forces` and `energy`. `Model` implements [`runtime::Mechanism`](crate::runtime::Mechanism)
//! and [`runtime::Dynamics`](crate::runtime::Dynamics).
//!
//! ```
//! mechgen::mechanism! {
//!     /// A pendulum of length `l` in natural coordinates.
//!     pub mod pendulum {
//!         param l = 1.0;
//!         param m = 1.0;
//!         param g = 9.81;
//!         coord x = 0.6;
//!         coord y = -0.8;
//!         independent x;
//!         constraint x * x + y * y == l * l;
//!         body bob { mass = m, com = vec2(x, y) }
//!         gravity = vec2(0.0, -g);
//!     }
//! }
//! use mechgen::nalgebra::SVector;
//! let p = pendulum::Params::default();
//! let q = SVector::<f64, 2>::from(pendulum::NOMINAL_Q);
//! assert!(pendulum::residual(&q, &p, 0.0).norm() < 1e-12);
//! // The basis spans C_J's null space; the health figure says the static pivots are fine.
//! let (d, health) = pendulum::null_space(&q, &p, 0.0);
//! assert!((pendulum::jacobian(&q, &p, 0.0) * d).norm() < 1e-12);
//! assert!(health > 0.1);
//! ```
//!
//! Every vector or matrix function `f` also has `f_into(…, out: &mut …)`, which writes only
//! the structurally nonzero entries into the caller's storage (zero it once, reuse it);
//! `jacobian_values` writes `C_J`'s nonzeros in compressed-column order (`JACOBIAN_NNZ`,
//! `JACOBIAN_COLPTR`, `JACOBIAN_ROWIDX`); `kinematics` returns `C`, `C_J` and the primary
//! chart's basis from one evaluation.
//!
//! # Outputs
//!
//! `output NAME = expr;` names a point or quantity of the mechanism. The module then has `NO`,
//! `OUTPUT_NAMES`, `outputs` (o), `output_jacobian` (∂o/∂q), `output_velocity`
//! (ȯ = ∂o/∂q q̇ + ∂o/∂t), `output_acceleration_bias` (ö = ∂o/∂q q̈ + bias) and
//! `manipulator_jacobian` (∂o/∂q · D: how the outputs move with the independent velocities).
//!
//! ```
//! mechgen::mechanism! {
//!     pub mod arm {
//!         param l = 1.0;
//!         coord x = 0.6;
//!         coord y = -0.8;
//!         independent x;
//!         constraint x * x + y * y == l * l;
//!         /// The point halfway along the arm.
//!         output mid = 0.5 * vec2(x, y);
//!     }
//! }
//! use mechgen::nalgebra::SVector;
//! let p = arm::Params::default();
//! let q = SVector::<f64, 2>::from(arm::NOMINAL_Q);
//! assert_eq!(arm::OUTPUT_NAMES, ["mid_x", "mid_y"]);
//! assert!((arm::outputs(&q, &p, 0.0)[1] + 0.4).abs() < 1e-15);
//! // Moving x by u moves y by −x/y · u: the midpoint moves by (0.5, 0.375) · u.
//! let ju = arm::manipulator_jacobian(&q, &p, 0.0);
//! assert!((ju[(0, 0)] - 0.5).abs() < 1e-15 && (ju[(1, 0)] - 0.375).abs() < 1e-15);
//! ```
//!
//! # Inequality constraints
//!
//! `inequality NAME: g >= 0.0;` adds `NI`, `INEQUALITY_NAMES`, `RESTITUTION`, `inequality`,
//! `inequality_jacobian`, `inequality_jacobian_t` and `inequality_gamma`; with dynamics,
//! `Model` implements [`runtime::Inequalities`](crate::runtime::Inequalities), and
//! [`runtime::contact::simulate_contact`](crate::runtime::contact::simulate_contact) keeps the contacts with the
//! active-set algorithm of Jonquet, Nocent and Remion (an LCP solve where it is not
//! complementary), locating impacts inside steps:
//!
//! ```
//! mechgen::mechanism! {
//!     /// A particle pushed into the corner between `x − y ≥ 0` and `y ≥ 0`.
//!     pub mod corner {
//!         coord x = 0.0;
//!         coord y = 0.0;
//!         body particle { mass = 2.0, com = vec2(x, y) }
//!         force x = -1.0;
//!         force y = -2.0;
//!         inequality g1: x - y >= 0.0;
//!         inequality g2: y >= 0.0;
//!     }
//! }
//! use mechgen::nalgebra::SVector;
//! use mechgen::runtime::{contact::contact_accelerations, contact::ContactOptions};
//! let z = SVector::<f64, 2>::zeros();
//! let s = contact_accelerations::<corner::Model, _, _, _, _>(
//!     &z, &z, &corner::Params::default(), 0.0, &[], &ContactOptions::default(),
//! )?;
//! // Both walls push (λ = (1, 3)): the particle stays in the corner.
//! assert_eq!(s.handled, vec![0, 1]);
//! assert!(s.qdd.norm() < 1e-12 && (s.lambda[1] - 3.0).abs() < 1e-12);
//! # Ok::<(), mechgen::runtime::ContactError>(())
//! ```
//!
//! # The generic family and step Jacobians
//!
//! `#![generic]` (in build.rs `Builder::generic(true)`, on the command line `--generic`) adds
//! `pub mod generic` to each module: the straight-line functions over any scalar
//! `S: runtime::Real` (`f64`, `f32`, [`Dual<N>`](crate::runtime::Dual)), with the parameters'
//! values as `p: &[S; NP]`. Dual numbers give exact derivatives through the generated code;
//! [`step_jacobians`](crate::runtime::step::step_jacobians) uses them to differentiate one step of
//! the projection method, projection included. With `#![derivatives]` as well
//! (`Builder::derivatives(true)`, `--derivatives`) the module also holds the symbolic
//! derivatives of its dynamics terms (`forces_jacobian_q`, `gamma_jacobian_p`, …), and
//! [`step_jacobians_symbolic`](crate::runtime::step::step_jacobians_symbolic) composes the same
//! Jacobians from them at a fraction of the cost:
//!
//! ```
//! mechgen::mechanism! {
//!     #![generic]
//!     #![derivatives]
//!     pub mod pendulum {
//!         param l = 1.0;
//!         param m = 1.0;
//!         param g = 9.81;
//!         coord x = 0.6;
//!         coord y = -0.8;
//!         independent x;
//!         constraint x * x + y * y == l * l;
//!         body bob { mass = m, com = vec2(x, y) }
//!         gravity = vec2(0.0, -g);
//!     }
//! }
//! use mechgen::nalgebra::SVector;
//! use mechgen::runtime::step::{step, step_jacobians, step_jacobians_symbolic, StepMethod, StepOptions};
//! use mechgen::runtime::Dual;
//! # fn main() -> Result<(), mechgen::runtime::StepError> {
//! let p = pendulum::Params::default();
//! // ∂C/∂q by one evaluation over dual numbers equals the symbolic Jacobian.
//! let q = SVector::<f64, 2>::new(0.6, -0.8);
//! let qd = SVector::<Dual<2>, 2>::from_fn(|i, _| Dual::variable(q[i], i));
//! let c = pendulum::generic::residual(&qd, &pendulum::generic::params(&p), Dual::constant(0.0));
//! let j = pendulum::jacobian(&q, &p, 0.0);
//! assert_eq!(c[0].eps, [j[(0, 0)], j[(0, 1)]]);
//! // One step of 1 ms and its Jacobians (sizes NQ, NC, DOF, NP).
//! let u = SVector::<f64, 1>::new(0.5);
//! let opts = StepOptions::default();
//! let (q1, u1) = step::<pendulum::Model, _, _, _, _>(&q, &u, &p, 0.0, 1e-3, &opts)?;
//! let jac = step_jacobians::<pendulum::Model, _, _, _, _>(&q, &u, &p, 0.0, 1e-3, &opts)?;
//! assert!((jac.q - q1).norm() < 1e-15 && (jac.u - u1).norm() < 1e-15);
//! // ∂u'/∂g: gravity pulls the bob back towards x = 0, whichever way it swings.
//! assert!(jac.du_dp[(0, 2)] < 0.0);
//! // The same Jacobians composed from the symbolic derivatives.
//! let sym = step_jacobians_symbolic::<pendulum::Model, _, _, _, _>(&q, &u, &p, 0.0, 1e-3, &opts)?;
//! assert!((sym.dq_dq - jac.dq_dq).norm() < 1e-12 && (sym.du_dp - jac.du_dp).norm() < 1e-12);
//! // The fourth-order step (four evaluations of the rates, the same projection).
//! let rk4 = StepOptions { method: StepMethod::Rk4, ..StepOptions::default() };
//! let (q4, _) = step::<pendulum::Model, _, _, _, _>(&q, &u, &p, 0.0, 1e-2, &rk4)?;
//! assert!(pendulum::residual(&q4, &p, 1e-2)[0].abs() < 1e-12);
//! # Ok(())
//! # }
//! ```
//!
//! # Checked null spaces
//!
//! Where the static pivot order degrades (its health figure drops below a threshold),
//! [`runtime::null_space::null_space_checked`](crate::runtime::null_space::null_space_checked) falls back on a
//! numeric factorisation and says which path it took:
//!
//! ```
//! # mechgen::mechanism! {
//! #     pub mod pendulum {
//! #         param l = 1.0;
//! #         coord x = 0.6;
//! #         coord y = -0.8;
//! #         independent x;
//! #         constraint x * x + y * y == l * l;
//! #     }
//! # }
//! use mechgen::nalgebra::SVector;
//! use mechgen::runtime::{self, null_space::NullSpacePath, null_space::DEFAULT_PIVOT_THRESHOLD};
//! type M = pendulum::Model;
//! let p = pendulum::Params::default();
//! // Horizontal: y is 0, and y cannot be the dependent coordinate there.
//! let q = SVector::<f64, 2>::new(1.0, 0.0);
//! let out = runtime::null_space::null_space_checked::<M, _, _, _>(&q, &p, 0.0, DEFAULT_PIVOT_THRESHOLD)
//!     .expect("a basis");
//! assert!(!matches!(out.path, NullSpacePath::Static { .. }), "{:?}", out.path);
//! assert!((pendulum::jacobian(&q, &p, 0.0) * out.d).norm() < 1e-12);
//! ```
//!
//! # Simulation
//!
//! [`runtime::simulate`](crate::runtime::simulate()) is the one entry point: the model type,
//! its parameters, a start [`State`](crate::runtime::State) (positions and full velocities;
//! [`State::from_independent`](crate::runtime::State::from_independent) builds one from the
//! independent velocities), the end time and [`Options`](crate::runtime::Options). No sizes
//! are written: they follow from the model. The default route
//! ([`Route::Auto`](crate::runtime::Route::Auto)) runs the projection method (switching
//! independent coordinates where they degrade, stepping over rank drops) and hands any
//! stretch it cannot pass to the Lagrange route, then to ALI3-P;
//! [`Simulation::stretches`](crate::runtime::Simulation::stretches) says which route
//! carried what. The routes on their own stay available (`Options::route`).
//!
//! The generated module's free functions (`pendulum::energy`, `pendulum::gamma`,
//! `pendulum::residual`, outputs) take no sizes either.
//!
//! ```
//! # mechgen::mechanism! {
//! #     pub mod pendulum {
//! #         param l = 1.0;
//! #         param m = 1.0;
//! #         param g = 9.81;
//! #         coord x = 0.6;
//! #         coord y = -0.8;
//! #         independent x;
//! #         constraint x * x + y * y == l * l;
//! #         body bob { mass = m, com = vec2(x, y) }
//! #         gravity = vec2(0.0, -g);
//! #     }
//! # }
//! use mechgen::nalgebra::SVector;
//! use mechgen::runtime::{simulate, Options, State};
//! let p = pendulum::Params::default();
//! let start = State::at_rest(0.0, SVector::from(pendulum::NOMINAL_Q)); // released at rest
//! let run = simulate(pendulum::Model, &p, &start, 2.0, &Options::default())?;
//! let (q, qd) = (run.q[run.q.len() - 1], run.qd[run.qd.len() - 1]);
//! // Energy is conserved and the bob stays on its circle.
//! let e0 = pendulum::energy(&start.q, &start.qd, &p, 0.0);
//! let e1 = pendulum::energy(&q, &qd, &p, 2.0);
//! assert!((e1 - e0).abs() < 1e-6 * e0.abs());
//! assert!(pendulum::residual(&q, &p, 2.0).norm() < 1e-9);
//! assert_eq!(run.handovers(), 0); // the projection method carried it all
//! # Ok::<(), mechgen::runtime::SimError>(())
//! ```
