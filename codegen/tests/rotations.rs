//! The rotation functions `rpy`, `quat` and `axis_angle` against nalgebra's
//! `Rotation3::from_euler_angles`, `UnitQuaternion` and `Rotation3::from_axis_angle` at
//! random arguments, both with run-time parameters as arguments (the symbolic path) and
//! with number literals (folded at generation); and their located errors.

use std::str::FromStr;

use mechgen_codegen::expr::Sym;
use mechgen_codegen::proc_macro2::TokenStream;
use mechgen_codegen::{generate_str, models, Options};
use nalgebra::{Matrix3, Quaternion, Rotation3, Unit, UnitQuaternion, Vector3};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random states per function and path.
const SAMPLES: usize = 100;
/// Agreement with nalgebra: a few roundings of entries of size ≤ 1.
const TOL: f64 = 1e-14;

/// The rotation `rotation` (an expression of the language) evaluated with the parameters
/// `names` set to `values`: the matrix whose columns are the frame's axes.
fn evaluate(rotation: &str, names: &[&str], values: &[f64]) -> Matrix3<f64> {
    let params: String = names
        .iter()
        .map(|n| format!("param {n} = 0.5;\n"))
        .collect();
    let src = format!(
        "mod m {{\n{params}coord q = 0.1;\nlet f = frame(vec3(0.0, 0.0, 0.0), {rotation});\n\
         output cx = f.x_axis;\noutput cy = f.y_axis;\noutput cz = f.z_axis;\n}}"
    );
    let tokens = TokenStream::from_str(&src).expect("test source tokenizes");
    let (lowered, _) = models(tokens).unwrap_or_else(|e| panic!("{}: {src}", e.message));
    let (model, arena) = &lowered[0];
    let ids: Vec<_> = model.outputs.iter().map(|o| o.expr).collect();
    assert_eq!(ids.len(), 9);
    let env = |s: Sym| match s {
        Sym::Param(k) => values[k as usize],
        _ => 0.1,
    };
    let v = arena.eval(&ids, &env);
    Matrix3::from_column_slice(&v)
}

/// `{x:?}` keeps every digit of an `f64` (a literal that reads back exactly).
fn lit(x: f64) -> String {
    format!("{x:?}")
}

#[track_caller]
fn close(got: &Matrix3<f64>, want: &Matrix3<f64>, what: &str) {
    let err = (got - want).abs().max();
    assert!(
        err <= TOL,
        "{what}: error {err:e}\n got {got}\n want {want}"
    );
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(35)
}

#[test]
fn rpy_is_nalgebras_euler_angles() {
    let mut r = rng();
    for _ in 0..SAMPLES {
        let a: [f64; 3] = std::array::from_fn(|_| r.random_range(-4.0..4.0));
        let want = *Rotation3::from_euler_angles(a[0], a[1], a[2]).matrix();
        let sym = evaluate("rpy(a, b, c)", &["a", "b", "c"], &a);
        close(&sym, &want, &format!("rpy{a:?} (parameters)"));
        let folded = evaluate(
            &format!("rpy({}, {}, {})", lit(a[0]), lit(a[1]), lit(a[2])),
            &[],
            &[],
        );
        close(&folded, &want, &format!("rpy{a:?} (literals)"));
    }
}

#[test]
fn quat_is_nalgebras_unit_quaternion() {
    let mut r = rng();
    for _ in 0..SAMPLES {
        // Not normalised: `quat` divides by the norm.
        let q: [f64; 4] = std::array::from_fn(|_| r.random_range(-2.0..2.0));
        let want = *UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]))
            .to_rotation_matrix()
            .matrix();
        let sym = evaluate("quat(w, x, y, z)", &["w", "x", "y", "z"], &q);
        close(&sym, &want, &format!("quat{q:?} (parameters)"));
        let text = format!(
            "quat({}, {}, {}, {})",
            lit(q[0]),
            lit(q[1]),
            lit(q[2]),
            lit(q[3])
        );
        close(
            &evaluate(&text, &[], &[]),
            &want,
            &format!("quat{q:?} (literals)"),
        );
    }
}

#[test]
fn axis_angle_is_nalgebras_axis_angle() {
    let mut r = rng();
    for k in 0..SAMPLES {
        let mut axis: [f64; 3] = std::array::from_fn(|_| r.random_range(-2.0..2.0));
        // Every fifth sample a signed coordinate axis (the folded `rot_x/y/z` path).
        if k % 5 == 0 {
            let i = k / 5 % 3;
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            axis = [0.0; 3];
            axis[i] = sign * r.random_range(0.5..2.0);
        }
        let th: f64 = r.random_range(-4.0..4.0);
        let unit = Unit::new_normalize(Vector3::from(axis));
        let want = *Rotation3::from_axis_angle(&unit, th).matrix();
        let sym = evaluate(
            "axis_angle(vec3(x, y, z), th)",
            &["x", "y", "z", "th"],
            &[axis[0], axis[1], axis[2], th],
        );
        close(
            &sym,
            &want,
            &format!("axis_angle({axis:?}, {th}) (parameters)"),
        );
        let text = format!(
            "axis_angle(vec3({}, {}, {}), {})",
            lit(axis[0]),
            lit(axis[1]),
            lit(axis[2]),
            lit(th)
        );
        close(
            &evaluate(&text, &[], &[]),
            &want,
            &format!("axis_angle({axis:?}, {th}) (literals)"),
        );
    }
}

/// A coordinate as the angle: the joint rotation of a robot, with its derivative (the
/// angular velocity is `θ̇ k`, so `Ṙ = θ̇ [k]× R`), through the whole pipeline.
#[test]
fn axis_angle_of_a_coordinate_generates() {
    let src = "mod m { coord q = 0.3; let f = frame(vec3(0.0, 0.0, 0.0), axis_angle(vec3(1.0, 2.0, -2.0), q));
        body b { mass = 1.0, inertia = mat3(1.0, 0.1, 0.0, 0.1, 2.0, 0.0, 0.0, 0.0, 3.0), frame = f * translate(vec3(0.1, 0.2, 0.3)) }
        gravity = vec3(0.0, 0.0, -9.81); }";
    let g = generate_str(src, &Options::default()).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(g.tokens.to_string().contains("fn mass_matrix"));
}

/// The message of the error `src` gives, and the source text its span covers.
fn error_at(src: &str) -> (String, String) {
    let e = match generate_str(src, &Options::default()) {
        Ok(_) => panic!("expected an error for {src}"),
        Err(e) => e,
    };
    let (start, end) = (e.span.start(), e.span.end());
    assert_eq!(start.line, end.line, "one-line span");
    let line = src.lines().nth(start.line - 1).unwrap_or_default();
    let covered: String = line
        .chars()
        .skip(start.column)
        .take(end.column - start.column)
        .collect();
    (e.message, covered)
}

fn module(rotation: &str) -> String {
    format!("mod m {{\n    coord q = 0.1;\n    let f = frame(vec3(0.0, 0.0, 0.0), {rotation});\n    output o = f.x_axis;\n}}\n")
}

#[test]
fn wrong_arity_is_located() {
    for (call, n, found) in [
        ("rpy(0.1, 0.2)", 3, 2),
        ("quat(1.0, 0.0, 0.0)", 4, 3),
        ("axis_angle(vec3(0.0, 0.0, 1.0))", 2, 1),
    ] {
        let (message, covered) = error_at(&module(call));
        let name = &call[..call.find('(').unwrap_or(0)];
        assert!(
            message.contains(&format!("`{name}` takes {n} arguments, found {found}")),
            "{message}"
        );
        assert_eq!(covered, call);
    }
}

#[test]
fn wrong_types_are_located() {
    let (m, c) = error_at(&module("rpy(vec3(0.1, 0.2, 0.3), 0.0, 0.0)"));
    assert!(m.contains("3-vector"), "{m}");
    assert_eq!(c, "vec3(0.1, 0.2, 0.3)");
    let (m, c) = error_at(&module("axis_angle(0.5, q)"));
    assert!(m.contains("takes a 3-vector axis, found a scalar"), "{m}");
    assert_eq!(c, "0.5");
    let (m, c) = error_at(&module("axis_angle(vec2(1.0, 0.0), q)"));
    assert!(m.contains("takes a 3-vector axis"), "{m}");
    assert_eq!(c, "vec2(1.0, 0.0)");
}

#[test]
fn zero_quaternion_and_zero_axis_are_located() {
    let (m, c) = error_at(&module("quat(0.0, 0.0, 0.0, 0.0)"));
    assert!(
        m.contains("the quaternion `quat(w, x, y, z)` is zero"),
        "{m}"
    );
    assert_eq!(c, "quat(0.0, 0.0, 0.0, 0.0)");
    let (m, c) = error_at(&module("axis_angle(vec3(0.0, 0.0, 0.0), q)"));
    assert!(
        m.contains("the axis of `axis_angle(axis, θ)` is zero"),
        "{m}"
    );
    assert_eq!(c, "vec3(0.0, 0.0, 0.0)");
}
