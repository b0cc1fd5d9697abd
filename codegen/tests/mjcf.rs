//! MJCF import (`import::mjcf`): the orientation forms (`quat`, `axisangle`, `euler` with
//! every kind of `eulerseq`, `xyaxes`, `zaxis`) in degrees and radians against nalgebra at
//! random values; located errors; notes for what carries no dynamics; deterministic text.
//! (The dynamics of imported models against MuJoCo: `examples/robots/tests/mujoco.rs`.)

use std::str::FromStr;

use mechgen_codegen::import::mjcf::{import, to_mech, ImportError, ImportOptions};
use mechgen_codegen::proc_macro2::TokenStream;
use mechgen_codegen::{generate_str, models, Options};
use nalgebra::{Matrix3, Quaternion, Rotation3, Unit, UnitQuaternion, Vector3};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random orientations per form and unit.
const SAMPLES: usize = 100;
/// Agreement with nalgebra: a few roundings of entries of size ≤ 1 (the importer goes
/// through a quaternion, as MuJoCo's compiler does).
const TOL: f64 = 1e-14;

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(35)
}

/// The rotation of body `b` whose attributes are `attrs`, in a model with the compiler
/// attributes `compiler`, imported and evaluated: the matrix whose columns are the body
/// frame's axes.
fn body_rotation(compiler: &str, attrs: &str) -> Matrix3<f64> {
    let xml = format!(
        "<mujoco model=\"m\">\n  <compiler {compiler}/>\n  <worldbody>\n    <body name=\"b\" {attrs}>\n      <joint name=\"s\" type=\"slide\"/>\n      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n    </body>\n  </worldbody>\n</mujoco>\n"
    );
    let imported = import(&xml, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let (frame, _) = &imported.frames[0];
    // The module with the frame's axes as outputs (before its closing brace).
    let body = imported
        .mech
        .trim_end()
        .strip_suffix('}')
        .expect("a module");
    let src = format!(
        "{body}    output cx = {frame}.x_axis;\n    output cy = {frame}.y_axis;\n    output cz = {frame}.z_axis;\n}}\n"
    );
    let tokens = TokenStream::from_str(&src).expect("imported text tokenizes");
    let (lowered, _) = models(tokens).unwrap_or_else(|e| panic!("{}: {src}", e.message));
    let (model, arena) = &lowered[0];
    let ids: Vec<_> = model.outputs.iter().map(|o| o.expr).collect();
    assert_eq!(ids.len(), 9);
    // The slide at 0 and every parameter irrelevant to the rotation.
    let v = arena.eval(&ids, &|_| 0.0);
    Matrix3::from_column_slice(&v)
}

/// `{x:?}` keeps every digit of an `f64`.
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

/// Angles in the file's unit: (text value, radians).
fn angle(r: &mut ChaCha8Rng, degree: bool) -> (f64, f64) {
    let a: f64 = r.random_range(-4.0..4.0);
    if degree {
        let d = a.to_degrees();
        (d, d / 180.0 * std::f64::consts::PI)
    } else {
        (a, a)
    }
}

fn unit(degree: bool) -> &'static str {
    if degree {
        "angle=\"degree\""
    } else {
        "angle=\"radian\""
    }
}

#[test]
fn quat_is_w_first_and_normalised() {
    let mut r = rng();
    for _ in 0..SAMPLES {
        let q: [f64; 4] = std::array::from_fn(|_| r.random_range(-1.0..1.0));
        let want = UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]))
            .to_rotation_matrix()
            .into_inner();
        let attrs = format!(
            "quat=\"{} {} {} {}\"",
            lit(q[0]),
            lit(q[1]),
            lit(q[2]),
            lit(q[3])
        );
        close(&body_rotation("", &attrs), &want, &attrs);
    }
}

#[test]
fn axisangle_in_both_units() {
    let mut r = rng();
    for degree in [true, false] {
        for _ in 0..SAMPLES {
            let axis: [f64; 3] = std::array::from_fn(|_| r.random_range(-1.0..1.0));
            let (a, rad) = angle(&mut r, degree);
            let want = *Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::from(axis)), rad)
                .matrix();
            let attrs = format!(
                "axisangle=\"{} {} {} {}\"",
                lit(axis[0]),
                lit(axis[1]),
                lit(axis[2]),
                lit(a)
            );
            close(&body_rotation(unit(degree), &attrs), &want, &attrs);
        }
    }
}

/// The elementary rotation about axis letter `c` (x, y, z in either case).
fn elementary(c: char, a: f64) -> Matrix3<f64> {
    let axis = match c.to_ascii_lowercase() {
        'x' => Vector3::x_axis(),
        'y' => Vector3::y_axis(),
        _ => Vector3::z_axis(),
    };
    *Rotation3::from_axis_angle(&axis, a).matrix()
}

/// Euler angles: a lower-case letter turns about the moving frame's axis (multiplied on the
/// right), an upper-case one about the parent's fixed axis (on the left) — MJCF's rule.
#[test]
fn euler_with_every_kind_of_sequence() {
    let mut r = rng();
    let sequences = ["xyz", "XYZ", "zyx", "ZYX", "zxz", "XzY", "yXy", "ZyX"];
    // URDF's rpy is MJCF's "XYZ": Rz(yaw) Ry(pitch) Rx(roll), nalgebra's euler angles.
    for degree in [true, false] {
        for (k, seq) in sequences.iter().enumerate() {
            for _ in 0..SAMPLES / 4 {
                let (t, rad): (Vec<f64>, Vec<f64>) = (0..3).map(|_| angle(&mut r, degree)).unzip();
                let mut want = Matrix3::identity();
                for (c, &a) in seq.chars().zip(&rad) {
                    let e = elementary(c, a);
                    want = if c.is_ascii_lowercase() {
                        want * e
                    } else {
                        e * want
                    };
                }
                if *seq == "XYZ" {
                    let rpy = Rotation3::from_euler_angles(rad[0], rad[1], rad[2]);
                    close(&want, rpy.matrix(), "XYZ is nalgebra's roll-pitch-yaw");
                }
                let attrs = format!("euler=\"{} {} {}\"", lit(t[0]), lit(t[1]), lit(t[2]));
                let compiler = format!("{} eulerseq=\"{seq}\"", unit(degree));
                close(
                    &body_rotation(&compiler, &attrs),
                    &want,
                    &format!("{attrs} {compiler} (#{k})"),
                );
            }
        }
    }
}

#[test]
fn xyaxes_is_orthonormalised() {
    let mut r = rng();
    for _ in 0..SAMPLES {
        let x = Vector3::from(std::array::from_fn(|_| r.random_range(-1.0..1.0)));
        let y0 = Vector3::from(std::array::from_fn(|_| r.random_range(-1.0..1.0)));
        // Gram–Schmidt: y made orthogonal to x; z their cross product.
        let xu = x.normalize();
        let yu = (y0 - xu * xu.dot(&y0)).normalize();
        let want = Matrix3::from_columns(&[xu, yu, xu.cross(&yu)]);
        let attrs = format!(
            "xyaxes=\"{} {} {} {} {} {}\"",
            lit(x[0]),
            lit(x[1]),
            lit(x[2]),
            lit(y0[0]),
            lit(y0[1]),
            lit(y0[2])
        );
        close(&body_rotation("", &attrs), &want, &attrs);
    }
}

#[test]
fn zaxis_is_the_minimal_rotation() {
    let mut r = rng();
    for k in 0..SAMPLES {
        let z = Vector3::from(std::array::from_fn(|_| r.random_range(-1.0..1.0)));
        // Both poles too: no turn, and a half turn about x.
        let z = match k {
            0 => Vector3::new(0.0, 0.0, 2.0),
            1 => Vector3::new(0.0, 0.0, -1.0),
            _ => z,
        };
        let want = match k {
            1 => *Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI).matrix(),
            _ => *Rotation3::rotation_between(&Vector3::z(), &z)
                .expect("not opposite")
                .matrix(),
        };
        let attrs = format!("zaxis=\"{} {} {}\"", lit(z[0]), lit(z[1]), lit(z[2]));
        close(&body_rotation("", &attrs), &want, &attrs);
    }
}

/// A model around `body` (inside `<worldbody>`), with `extra` after the worldbody.
fn model(body: &str, extra: &str) -> String {
    format!("<mujoco model=\"m\">\n  <worldbody>\n{body}\n  </worldbody>\n{extra}\n</mujoco>\n")
}

#[track_caller]
fn error(text: &str) -> ImportError {
    match to_mech(text, &ImportOptions::default()) {
        Ok(m) => panic!("expected an error, got\n{m}"),
        Err(e) => e,
    }
}

#[track_caller]
fn expect_error(text: &str, line: u32, what: &str) {
    let e = error(text);
    assert!(e.message.contains(what), "{e}\n{text}");
    assert_eq!(e.line, line, "{e}\n{text}");
    assert!(e.column >= 1, "{e}");
}

const ARM: &str = "    <body name=\"arm\" pos=\"0 0 1\">\n      <joint name=\"j\" axis=\"0 1 0\"/>\n      <geom type=\"capsule\" fromto=\"0 0 0 0.5 0 0\" size=\"0.05\"/>\n    </body>";

#[test]
fn errors_are_located() {
    expect_error(
        "<mujoco>\n  <worldbody>\n    <body>\n  </worldbody>\n</mujoco>",
        4,
        "not well-formed XML",
    );
    expect_error(
        "<robot name=\"r\"/>",
        1,
        "an MJCF file's root element is <mujoco>, found <robot>",
    );
    expect_error(
        &model(
            "    <body name=\"b\">\n      <joint name=\"k\" type=\"screw\"/>\n    </body>",
            "",
        ),
        4,
        "joint `k` has the unknown type `screw`",
    );
    expect_error(
        &model(
            "    <body name=\"b\">\n      <joint name=\"k\" class=\"stiff\"/>\n    </body>",
            "",
        ),
        4,
        "uses the default class `stiff`, which no <default> defines",
    );
    expect_error(
        &model(ARM, "  <equality>\n    <connect body1=\"arm\" body2=\"hand\" anchor=\"0 0 0\"/>\n  </equality>"),
        9,
        "`body2` names the body `hand`, which is not a body of the model",
    );
    expect_error(
        &model(
            ARM,
            "  <equality>\n    <tendon tendon1=\"t\"/>\n  </equality>",
        ),
        9,
        "<tendon> equality constraints are not supported",
    );
    expect_error(
        &model(
            "    <body name=\"hull\">\n      <joint name=\"k\"/>\n      <geom type=\"mesh\" mesh=\"hull\"/>\n    </body>",
            "",
        ),
        5,
        "body `hull` takes its inertia from its geoms, and the mesh geom's volume is not computed here",
    );
    expect_error(
        &model("    <body name=\"b\" euler=\"10 20\"/>", ""),
        3,
        "`euler` of <body> must be 3 numbers",
    );
    expect_error(
        &model("    <body name=\"b\" euler=\"10 20 x\"/>", ""),
        3,
        "`euler` of <body> must hold finite numbers",
    );
    expect_error(
        &model(
            "    <body name=\"b\" quat=\"1 0 0 0\" zaxis=\"0 0 1\"/>",
            "",
        ),
        3,
        "gives its orientation twice (quat, zaxis)",
    );
    expect_error(
        "<mujoco>\n  <compiler eulerseq=\"xyw\"/>\n</mujoco>",
        2,
        "`eulerseq` of <compiler> must be three of the letters x, y, z, X, Y, Z",
    );
    expect_error(
        &model(
            "    <body name=\"b\">\n      <joint name=\"k\"/>\n      <inertial pos=\"0 0 0\" mass=\"1\" fullinertia=\"1 1 1 2 0 0\"/>\n    </body>",
            "",
        ),
        5,
        "the fullinertia of body `b` is not positive definite",
    );
    expect_error(
        &model(
            "    <body name=\"b\">\n      <joint name=\"k\"/>\n      <inertial mass=\"1\" diaginertia=\"1 1 1\"/>\n    </body>",
            "",
        ),
        5,
        "the <inertial> of body `b` needs `pos`",
    );
    expect_error(
        &model(
            "    <body name=\"b\">\n      <joint name=\"k\"/>\n      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 3\"/>\n    </body>",
            "",
        ),
        3,
        "violate A + B >= C",
    );
    expect_error(
        "<mujoco>\n  <compiler angle=\"radian\" alignfree=\"true\"/>\n</mujoco>",
        2,
        "`alignfree=\"true\"` of <compiler>",
    );
    expect_error(
        "<mujoco>\n  <include file=\"other.xml\"/>\n</mujoco>",
        2,
        "<include> is not supported",
    );
    // A site-based connect between two sites of the world: it never moves and never holds.
    expect_error(
        &model(
            &format!(
                "{ARM}\n    <site name=\"p\" pos=\"0 0 0\"/>\n    <site name=\"q\" pos=\"1 0 0\"/>"
            ),
            "  <equality>\n    <connect site1=\"p\" site2=\"q\"/>\n  </equality>",
        ),
        11,
        "can never hold: it does not move with the joints and is off by -1.0",
    );
    expect_error(
        &model("    <body name=\"b\" mocap=\"true\"/>", ""),
        3,
        "body `b` is a mocap body",
    );
    expect_error(
        &model(
            "    <body name=\"b\">\n      <joint name=\"k\" stiffness=\"-1\"/>\n    </body>",
            "",
        ),
        4,
        "stiffness, damping and armature cannot be negative",
    );
}

#[test]
fn ignored_elements_are_notes_with_lines() {
    let text = model(
        "    <light pos=\"0 0 3\"/>\n    <body name=\"arm\">\n      <joint name=\"j\" frictionloss=\"0.2\"/>\n      <geom size=\"0.1\"/>\n      <site name=\"s\"/>\n    </body>",
        "  <sensor/>\n  <equality>\n    <joint joint1=\"j\" active=\"false\"/>\n  </equality>\n  <actuator>\n    <general joint=\"j\" gainprm=\"10\"/>\n  </actuator>",
    );
    let imported = import(&text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<(u32, &str)> = imported
        .notes
        .iter()
        .map(|n| (n.line, n.message.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (3, "<light> ignored (no dynamics)"),
            (5, "the frictionloss 0.2 of joint `j` is not modelled"),
            (6, "<geom> ignored for contact (contacts are not modelled; a body without <inertial> takes its mass from its geoms)"),
            (7, "<site> kept as a place for equalities (no dynamics)"),
            (10, "<sensor> ignored (add outputs in the .mech)"),
            (12, "<joint> equality inactive (`active=\"false\"`): not imposed"),
            (15, "<general> actuator ignored (motor, position and velocity actuators only: add its force in the .mech)"),
        ]
    );
    for n in &imported.notes {
        assert!(imported.mech.contains(&n.message), "{}", n.message);
    }
    assert!(imported
        .mech
        .contains("//   <light> ignored (no dynamics): line 3"));
}

/// Defaults: a class's attributes, its parent's where it has none, the element's own over
/// both; `childclass` reaches the body's own elements and its descendants; `class` wins.
#[test]
fn defaults_and_childclass() {
    let text = model(
        "    <body name=\"a\" childclass=\"soft\">\n      <joint name=\"ja\"/>\n      <geom size=\"0.1\"/>\n      <body name=\"b\">\n        <joint name=\"jb\" damping=\"7\"/>\n        <geom size=\"0.1\"/>\n        <body name=\"c\">\n          <joint name=\"jc\" class=\"main\"/>\n          <geom size=\"0.1\"/>\n        </body>\n      </body>\n    </body>",
        "",
    );
    let text = text.replace(
        "<mujoco model=\"m\">\n",
        "<mujoco model=\"m\">\n  <default>\n    <joint damping=\"1\" axis=\"1 0 0\"/>\n    <default class=\"soft\">\n      <joint stiffness=\"5\" springref=\"30\"/>\n    </default>\n  </default>\n",
    );
    let mech = to_mech(&text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    // ja: the class `soft` (stiffness, springref in degrees) and its parent's damping and axis.
    assert!(mech.contains("param ja_stiffness = 5.0;"), "{mech}");
    assert!(
        mech.contains("param ja_springref = 0.5235987755982988;"),
        "{mech}"
    );
    assert!(mech.contains("param ja_damping = 1.0;"), "{mech}");
    assert!(mech.contains("rot_x(ja)"), "{mech}");
    // jb: inherits the childclass, its own damping wins.
    assert!(mech.contains("param jb_stiffness = 5.0;"), "{mech}");
    assert!(mech.contains("param jb_damping = 7.0;"), "{mech}");
    // jc: `class="main"` leaves the childclass: no spring.
    assert!(!mech.contains("jc_stiffness"), "{mech}");
    assert!(mech.contains("param jc_damping = 1.0;"), "{mech}");
    let g = generate_str(&mech, &Options::default()).unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(g.modules[0].nq, 3);
}

/// The same file gives the same text, byte for byte.
#[test]
fn import_is_deterministic() {
    let text = model(
        ARM,
        "  <equality>\n    <weld body1=\"arm\" anchor=\"0.5 0 1\"/>\n  </equality>",
    );
    let a = to_mech(&text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let b = to_mech(&text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a, b);
    // The arm turns about y: of the weld's six rows, the point's y row and the rotation's
    // x and z rows never change and are left out (with a comment); three remain.
    assert!(a.contains("left out"), "{a}");
    assert_eq!(a.matches("    constraint ").count(), 3, "{a}");
}
