//! mechgen's generated code in a `#![no_std]` static library, called from C (`check.c`):
//! CI builds it against the run-time crate without `std` (features `macros` and `libm`), so
//! any use of `std` in generated code or in the part of the runtime it needs fails the
//! build (this crate brings its own panic handler: with `std` linked in, two would clash),
//! and the C program checks the numbers.
//!
//! The mechanism uses every elementary function of the language (through a spring's
//! length, an output, an inequality and explicit forces), dynamics, the generic family
//! over dual numbers and `f32`.
#![no_std]

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{Dual, Real};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}

mechgen::mechanism! {
    #![generic]
    #![derivatives]
    /// A slider crank with a spring from a fixed point to the rod's midpoint, a stop on the
    /// slider and forces that use every elementary function.
    pub mod crank {
        param l1 = 0.1;
        param l2 = 0.3;
        param m1 = 0.5;
        param m2 = 1.0;
        param m3 = 0.8;
        param g = 9.81;
        param k = 30.0;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
        body crank_bar { mass = m1, inertia = m1 * l1 * l1 / 12.0, com = crank / 2.0, angle = theta }
        body rod_bar { mass = m2, inertia = m2 * l2 * l2 / 12.0, com = crank + rod / 2.0, angle = beta }
        body slider { mass = m3, com = vec2(s, 0.0) }
        gravity = vec2(0.0, -g);
        spring pull { a = vec2(0.0, 0.2), b = crank + rod / 2.0, stiffness = k, length = 0.1, damping = 0.1 }
        force theta = 0.1 * atan2(sin(theta), 2.0 + cos(theta)) + 0.01 * tan(beta / 4.0)
            + 0.01 * exp(-s) + 0.01 * ln(1.0 + s * s) + 0.01 * abs(s - 0.3)
            + 0.01 * asin(0.5 * sin(beta)) + 0.01 * acos(0.5 * cos(beta)) + 0.01 * atan(s)
            + 0.001 * (s + 0.1).powi(5) + 0.001 / (s + 1.0).powi(3);
        output tip = crank + rod / 2.0;
        inequality stop: 0.45 - s >= 0.0;
    }
}

mechgen::mechanism! {
    #![scalar = f32]
    /// The same kinematics in single precision.
    pub mod crank32 {
        param l1 = 0.1;
        param l2 = 0.3;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
    }
}

/// `m` row by row into `out` (C's layout).
fn write_rows<T: Copy, const R: usize, const C: usize>(m: &SMatrix<T, R, C>, out: &mut [T]) {
    for r in 0..R {
        for c in 0..C {
            out[r * C + c] = m[(r, c)];
        }
    }
}

const NQ: usize = crank::NQ;
const NC: usize = crank::NC;
const DOF: usize = crank::DOF;

/// `NQ`, `NC`, `DOF`.
#[no_mangle]
pub extern "C" fn mg_sizes(out: &mut [usize; 3]) {
    *out = [NQ, NC, DOF];
}

/// The nominal coordinates.
#[no_mangle]
pub extern "C" fn mg_nominal(out: &mut [f64; NQ]) {
    *out = crank::NOMINAL_Q;
}

/// `C(q)` at the default parameters.
#[no_mangle]
pub extern "C" fn mg_residual(q: &[f64; NQ], out: &mut [f64; NC]) {
    let c = crank::residual(&SVector::from(*q), &crank::Params::default(), 0.0);
    out.copy_from_slice(c.as_slice());
}

/// `C_J` row by row.
#[no_mangle]
pub extern "C" fn mg_jacobian(q: &[f64; NQ], out: &mut [f64; NC * NQ]) {
    let j = crank::jacobian(&SVector::from(*q), &crank::Params::default(), 0.0);
    write_rows(&j, out);
}

/// `C_J` row by row from one pass of the generic residual over `Dual<NQ>`.
#[no_mangle]
pub extern "C" fn mg_jacobian_dual(q: &[f64; NQ], out: &mut [f64; NC * NQ]) {
    let qd = SVector::<Dual<NQ>, NQ>::from_fn(|i, _| Dual::variable(q[i], i));
    let p = crank::generic::params::<Dual<NQ>>(&crank::Params::default());
    let c = crank::generic::residual(&qd, &p, Dual::from_f64(0.0));
    for r in 0..NC {
        out[r * NQ..(r + 1) * NQ].copy_from_slice(&c[r].eps);
    }
}

/// The null-space basis `D` row by row; returns its health.
#[no_mangle]
pub extern "C" fn mg_null_space(q: &[f64; NQ], out: &mut [f64; NQ * DOF]) -> f64 {
    let (d, health) = crank::null_space(&SVector::from(*q), &crank::Params::default(), 0.0);
    write_rows(&d, out);
    health
}

/// The `f32` module's basis row by row; returns its health.
#[no_mangle]
pub extern "C" fn mg_null_space_f32(q: &[f32; NQ], out: &mut [f32; NQ * DOF]) -> f32 {
    let (d, health) = crank32::null_space(&SVector::from(*q), &crank32::Params::default(), 0.0);
    write_rows(&d, out);
    health
}

/// `M(q)` row by row.
#[no_mangle]
pub extern "C" fn mg_mass_matrix(q: &[f64; NQ], out: &mut [f64; NQ * NQ]) {
    let m = crank::mass_matrix(&SVector::from(*q), &crank::Params::default(), 0.0);
    write_rows(&m, out);
}

/// `f(q, q̇)`.
#[no_mangle]
pub extern "C" fn mg_forces(q: &[f64; NQ], qd: &[f64; NQ], out: &mut [f64; NQ]) {
    let f = crank::forces(
        &SVector::from(*q),
        &SVector::from(*qd),
        &crank::Params::default(),
        0.0,
    );
    out.copy_from_slice(f.as_slice());
}

/// `∂f/∂q` row by row (the generated derivative).
#[no_mangle]
pub extern "C" fn mg_forces_jacobian_q(q: &[f64; NQ], qd: &[f64; NQ], out: &mut [f64; NQ * NQ]) {
    let j = crank::forces_jacobian_q(
        &SVector::from(*q),
        &SVector::from(*qd),
        &crank::Params::default(),
        0.0,
    );
    write_rows(&j, out);
}

/// The output `tip` and the inequality `stop`.
#[no_mangle]
pub extern "C" fn mg_tip_and_stop(q: &[f64; NQ], out: &mut [f64; 3]) {
    let p = crank::Params::default();
    let o = crank::outputs(&SVector::from(*q), &p, 0.0);
    let g = crank::inequality(&SVector::from(*q), &p, 0.0);
    *out = [o[0], o[1], g[0]];
}

mechgen::mechanism! {
    /// A slider crank with dry friction in its slider's rail: without std the model still
    /// implements `runtime::JointFriction` (its simulation needs std).
    pub mod crank_rough {
        param a = 0.1;
        param b = 0.3;
        param g = 9.81;
        coord th = 0.3;
        coord ph = -0.1;
        coord s = 0.39;
        coord ys = 0.0;
        body crank { mass = 0.5, inertia = 0.001, frame = frame(vec2(0.5 * a * cos(th), 0.5 * a * sin(th)), th) }
        body slider { mass = 1.2, com = vec2(s, ys) }
        gravity = vec2(0.0, -g);
        constraint a * vec2(cos(th), sin(th)) + b * vec2(cos(ph), sin(ph)) == vec2(s, ys);
        constraint rail: ys == 0.0, friction = 0.25, slip = s;
    }
}

/// The rough slider crank's model implements the joint-friction trait without std.
const _: fn() = || {
    fn joint_friction<M: mechgen::runtime::JointFriction<4, 3, 1, 1>>() {}
    joint_friction::<crank_rough::Model>();
};
