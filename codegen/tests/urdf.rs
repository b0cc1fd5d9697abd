//! URDF import (`import::urdf`): the robots of `examples/robots/models` go through the
//! pipeline, errors are located, ignored elements are listed as notes, mimic joints become
//! constraints. (The dynamics of the imported robots against Pinocchio: `examples/robots`.)

use mechgen_codegen::import::urdf::{import, to_mech, ImportError, ImportOptions};
use mechgen_codegen::{generate_str, Options};

fn model(path: &str) -> String {
    let p = format!(
        "{}/../examples/robots/models/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn published_robots_import_and_generate() {
    for (file, mimic, floating_base, nq, nc) in [
        ("ur_description/ur5_robot.urdf", true, false, 6, 0),
        ("panda_description/panda.urdf", true, false, 9, 1),
        ("panda_description/panda.urdf", false, false, 9, 0),
        // On a floating base: seven base coordinates, one unit-quaternion constraint.
        ("ur_description/ur5_robot.urdf", true, true, 13, 1),
        ("solo_description/robots/solo12.urdf", true, true, 19, 1),
        // A mimic constraint beside the quaternion: the generator picks the independents.
        ("panda_description/panda.urdf", true, true, 16, 2),
    ] {
        let opts = ImportOptions {
            mimic_constraints: mimic,
            floating_base,
            ..Default::default()
        };
        let imported = import(&model(file), &opts).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(imported.coords.len(), nq, "{file}");
        let g = generate_str(&imported.mech, &Options::default())
            .unwrap_or_else(|e| panic!("{file}: {}\n{}", e.message, imported.mech));
        let m = &g.modules[0];
        assert_eq!((m.nq, m.nc), (nq, nc), "{file}");
        // Every ignored element is in the header, with its line.
        for n in &imported.notes {
            assert!(imported.mech.contains(&n.message), "{}", n.message);
        }
    }
}

/// The humanoid (31 joints) imports on a floating base with 38 coordinates, the base's
/// first (its generation is checked by `examples/robots`, which builds it).
#[test]
fn humanoid_imports_on_a_floating_base() {
    let opts = ImportOptions {
        floating_base: true,
        ..Default::default()
    };
    let imported = import(&model("romeo_description/urdf/romeo_small.urdf"), &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.coords.len(), 38);
    assert_eq!(imported.coords[0].0, "root_joint_px");
    assert!(imported.mech.contains("constraint root_joint_w * root_joint_w + root_joint_x * root_joint_x + root_joint_y * root_joint_y + root_joint_z * root_joint_z == 1.0;"));
    assert!(imported.mech.contains("let base_link_frame = frame(vec3(root_joint_px, root_joint_py, root_joint_pz), rot_quat(root_joint_w, root_joint_x, root_joint_y, root_joint_z));"));
}

/// A minimal robot around `joint` (a joint from `base` to `arm`).
fn robot(joint: &str) -> String {
    format!(
        "<robot name=\"r\">\n  <link name=\"base\"/>\n  <link name=\"arm\">\n    <inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>\n  </link>\n{joint}\n</robot>\n"
    )
}

#[track_caller]
fn error(text: &str) -> ImportError {
    match to_mech(text, &ImportOptions::default()) {
        Ok(m) => panic!("expected an error, got\n{m}"),
        Err(e) => e,
    }
}

#[test]
fn errors_are_located() {
    let e = error(&robot(
        "  <joint name=\"j\" type=\"spherical\">\n    <parent link=\"base\"/><child link=\"arm\"/>\n  </joint>",
    ));
    assert!(e.message.contains("unknown type `spherical`"), "{e}");
    assert_eq!((e.line, e.column), (6, 3));
    let e = error(&robot(
        "  <joint name=\"j\" type=\"revolute\">\n    <parent link=\"base\"/><child link=\"hand\"/>\n  </joint>",
    ));
    assert!(
        e.message.contains("child link `hand` is not a <link>"),
        "{e}"
    );
    assert_eq!(e.line, 6);
    let e = error(&robot(
        "  <joint name=\"j\" type=\"revolute\">\n    <parent link=\"base\"/><child link=\"arm\"/>\n    <origin xyz=\"0 0 x\"/>\n  </joint>",
    ));
    assert!(
        e.message
            .contains("`xyz` of <origin> must be a finite number"),
        "{e}"
    );
    assert_eq!((e.line, e.column), (8, 5));
    let e = error(&robot(
        "  <joint name=\"j\" type=\"revolute\">\n    <parent link=\"base\"/><child link=\"arm\"/>\n    <axis xyz=\"0 0 0\"/>\n  </joint>",
    ));
    assert!(e.message.contains("zero axis"), "{e}");
    let e = error("<robot name=\"r\">\n  <link name=\"a\">\n</robot>");
    assert!(e.message.contains("not well-formed XML"), "{e}");
    assert_eq!(e.line, 3);
    let e = error("<robot name=\"r\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n  <xacro:macro name=\"m\"/>\n</robot>");
    assert!(e.message.contains("xacro"), "{e}");
    assert_eq!(e.line, 2);
    // Two roots: the links are not one tree.
    let e = error("<robot name=\"r\"><link name=\"a\"/><link name=\"b\"/></robot>");
    assert!(e.message.contains("2 separate trees"), "{e}");
}

#[test]
fn ignored_elements_are_notes_with_lines() {
    let text = robot(
        "  <joint name=\"j\" type=\"continuous\">\n    <parent link=\"base\"/><child link=\"arm\"/>\n    <calibration rising=\"0.1\"/>\n  </joint>\n  <gazebo/>",
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
            (8, "<calibration> ignored (controller data)"),
            (10, "<gazebo> ignored (simulator-specific)")
        ]
    );
    assert!(imported
        .mech
        .contains("//   <gazebo> ignored (simulator-specific): line 10"));
}

/// A mimic joint is a constraint: its coordinate follows the leader's exactly, and names
/// that are not identifiers are made ones.
#[test]
fn mimic_is_a_constraint_and_names_are_identifiers() {
    let text = "<robot name=\"two fingers\">
  <link name=\"base\"/>
  <link name=\"left-finger\"><inertial><mass value=\"0.1\"/><inertia ixx=\"1e-4\" ixy=\"0\" ixz=\"0\" iyy=\"1e-4\" iyz=\"0\" izz=\"1e-4\"/></inertial></link>
  <link name=\"right-finger\"><inertial><mass value=\"0.1\"/><inertia ixx=\"1e-4\" ixy=\"0\" ixz=\"0\" iyy=\"1e-4\" iyz=\"0\" izz=\"1e-4\"/></inertial></link>
  <joint name=\"left\" type=\"prismatic\"><parent link=\"base\"/><child link=\"left-finger\"/><axis xyz=\"1 1 0\"/></joint>
  <joint name=\"type\" type=\"prismatic\"><parent link=\"base\"/><child link=\"right-finger\"/><axis xyz=\"0 -1 0\"/>
    <mimic joint=\"left\" multiplier=\"-2\" offset=\"0.5\"/></joint>
</robot>";
    let imported = import(text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.module, "two_fingers");
    assert_eq!(
        imported.coords,
        [
            ("left".to_string(), "left".to_string()),
            ("type_".to_string(), "type".to_string())
        ]
    );
    assert!(imported
        .mech
        .contains("constraint type_ == -2.0 * left + 0.5;"));
    assert!(imported.mech.contains("independent left;"));
    assert!(imported.mech.contains("body left_finger {"));
    let g = generate_str(&imported.mech, &Options::default())
        .unwrap_or_else(|e| panic!("{}\n{}", e.message, imported.mech));
    assert_eq!((g.modules[0].nq, g.modules[0].nc), (2, 1));
}

/// What published robots carry that a strict reading refused (TALOS and the iCub of
/// example-robot-data 6.0.0 did not import): a `<mimic>` on a fixed joint (TALOS's
/// grippers; a fixed joint does not move, so nothing is coupled) and a moment of inertia
/// that is a negative rounding of zero (the iCub's `r_hip_2`: `-5.42101e-20`). Both import
/// with a note each; a clearly negative moment and a mimic on a floating joint stay errors.
#[test]
fn fixed_joint_mimics_and_rounding_negative_moments_are_notes() {
    let text = "<robot name=\"r\">
  <link name=\"base\"/>
  <link name=\"arm\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>
  <link name=\"pad\"><inertial><mass value=\"0.5\"/><inertia ixx=\"-5.42101e-20\" ixy=\"0\" ixz=\"0\" iyy=\"-5.42101e-20\" iyz=\"0\" izz=\"0\"/></inertial></link>
  <joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/><axis xyz=\"0 0 1\"/></joint>
  <joint name=\"f\" type=\"fixed\"><parent link=\"arm\"/><child link=\"pad\"/>
    <mimic joint=\"j\" multiplier=\"1\" offset=\"0\"/></joint>
</robot>";
    let imported = import(text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let notes: Vec<(u32, &str)> = imported
        .notes
        .iter()
        .map(|n| (n.line, n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (4, "the moment -5.42101e-20 of link `pad`'s inertia read as 0 (a negative value within 1e-15 kg m² of zero: rounding noise)"),
            (4, "the moment -5.42101e-20 of link `pad`'s inertia read as 0 (a negative value within 1e-15 kg m² of zero: rounding noise)"),
            (6, "the <mimic> of the fixed joint `f` ignored (a fixed joint does not move)"),
        ]
    );
    assert_eq!(imported.coords.len(), 1);
    let g = generate_str(&imported.mech, &Options::default())
        .unwrap_or_else(|e| panic!("{}\n{}", e.message, imported.mech));
    assert_eq!((g.modules[0].nq, g.modules[0].nc), (1, 0));
    // Beyond rounding: still an error, at the element.
    let e = error(&text.replace("ixx=\"-5.42101e-20\"", "ixx=\"-1e-9\""));
    assert!(e.message.contains("has a negative moment"), "{e}");
    assert_eq!(e.line, 4);
    // A mimic on a joint that moves but cannot follow one coordinate: still an error.
    let e = error(&text.replace("type=\"fixed\"", "type=\"floating\""));
    assert!(e.message.contains("cannot mimic another joint"), "{e}");
}

/// Origins of whole quarter turns (`1.5707963267948966`, as URDF files write π/2) are
/// written as exact matrices: each equal to nalgebra's `from_euler_angles` rounded to
/// integers; other angles (`1.57079632679`) stay `rpy(…)`.
#[test]
fn quarter_turn_origins_are_exact_matrices() {
    use nalgebra::Rotation3;
    let half_pi = std::f64::consts::FRAC_PI_2;
    for k in 0..64 {
        let turns = [k % 4, k / 4 % 4, k / 16].map(|t| t as f64 - 1.0);
        let rpy = turns.map(|t| t * half_pi);
        let joint = format!(
            "  <joint name=\"j\" type=\"fixed\"><parent link=\"base\"/><child link=\"arm\"/>\n    <origin xyz=\"0 0 1\" rpy=\"{:?} {:?} {:?}\"/></joint>",
            rpy[0], rpy[1], rpy[2]
        );
        let mech =
            to_mech(&robot(&joint), &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let want = Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]);
        let at = mech
            .find("let arm_frame")
            .and_then(|s| mech[s..].find("mat3(").map(|m| s + m + 5));
        let Some(at) = at else {
            // The identity (no turn) needs no matrix.
            assert!(turns.iter().all(|t| t.rem_euclid(4.0) == 0.0), "{mech}");
            continue;
        };
        let end = at + mech[at..].find(')').unwrap_or(0);
        let got: Vec<f64> = mech[at..end]
            .split(", ")
            .map(|x| x.parse().unwrap_or(f64::NAN))
            .collect();
        for i in 0..3 {
            for j in 0..3 {
                assert_eq!(
                    got[3 * i + j],
                    want[(i, j)].round(),
                    "rpy {rpy:?}: entry ({i}, {j})"
                );
                assert!((got[3 * i + j] - want[(i, j)]).abs() < 1e-15);
            }
        }
    }
    let joint = "  <joint name=\"j\" type=\"fixed\"><parent link=\"base\"/><child link=\"arm\"/>\n    <origin rpy=\"1.57079632679 0 0\"/></joint>";
    let mech = to_mech(&robot(joint), &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        mech.contains("base_frame * rpy(1.57079632679, 0.0, 0.0)"),
        "{mech}"
    );
}

/// Names go into comments of the text: a line break in one is an error, not code.
#[test]
fn control_characters_in_names_are_errors() {
    let e = error("<robot name=\"r\">\n  <link name=\"a&#10;coord x = 1.0;\"/>\n</robot>");
    assert!(e.message.contains("control character"), "{e}");
    assert_eq!(e.line, 2);
}

/// A floating base, a `floating` joint and `planar` joints (along a coordinate axis, against
/// it, and along a skew axis), evaluated at random coordinates against nalgebra: the base
/// frame is `(p, R(q))` of its position and unit quaternion; the floating joint's child is
/// its parent's frame times the joint origin times `(p, R(q))`; a planar joint's child is the
/// joint frame turned by `yaw` about the axis (URDF: motion in the plane normal to it) and
/// moved in that plane by a distance `hypot(x, y)`, `x` and `y` along two perpendicular
/// directions with `e_x × e_y` along the axis. Within 1e-13 (a few roundings).
#[test]
fn floating_and_planar_joints_move_as_urdf_says() {
    use mechgen_codegen::models;
    use mechgen_codegen::proc_macro2::TokenStream;
    use nalgebra::{
        Isometry3, Matrix3, Quaternion, Rotation3, Translation3, Unit, UnitQuaternion, Vector3,
    };
    use rand::{RngExt, SeedableRng};
    use std::str::FromStr;
    let inertial = "<inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>";
    for axis in [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.3, -0.5, 0.8]] {
        let urdf = format!(
            "<robot name=\"r\">\n<link name=\"base\">{inertial}</link>\n<link name=\"a\">{inertial}</link>\n<link name=\"b\">{inertial}</link>\n\
             <joint name=\"f\" type=\"floating\"><parent link=\"base\"/><child link=\"a\"/><origin xyz=\"0.1 -0.2 0.3\" rpy=\"0.4 -0.5 0.6\"/></joint>\n\
             <joint name=\"p\" type=\"planar\"><parent link=\"a\"/><child link=\"b\"/><origin xyz=\"-0.3 0.2 0.1\" rpy=\"-0.2 0.7 0.1\"/><axis xyz=\"{} {} {}\"/></joint>\n</robot>\n",
            axis[0], axis[1], axis[2]
        );
        let opts = ImportOptions {
            floating_base: true,
            ..Default::default()
        };
        let imported = import(&urdf, &opts).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = imported.coords.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "root_joint_px",
                "root_joint_py",
                "root_joint_pz",
                "root_joint_w",
                "root_joint_x",
                "root_joint_y",
                "root_joint_z",
                "f_px",
                "f_py",
                "f_pz",
                "f_w",
                "f_x",
                "f_y",
                "f_z",
                "p_x",
                "p_y",
                "p_yaw"
            ]
        );
        let body = imported
            .mech
            .trim_end()
            .strip_suffix('}')
            .expect("a module");
        let mut src = body.to_string();
        for f in ["base_frame", "a_frame", "b_frame"] {
            for part in ["origin", "x_axis", "y_axis", "z_axis"] {
                src += &format!("    output {f}_{part} = {f}.{part};\n");
            }
        }
        src += "}\n";
        let tokens = TokenStream::from_str(&src).expect("imported text tokenizes");
        let (lowered, _) = models(tokens).unwrap_or_else(|e| panic!("{}: {src}", e.message));
        let (model, arena) = &lowered[0];
        assert_eq!(model.constraints.len(), 2, "two unit quaternions");
        let ids: Vec<_> = model.outputs.iter().map(|o| o.expr).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
        let iso = |v: &[f64]| {
            let r = Matrix3::from_column_slice(&v[3..12]);
            (Vector3::new(v[0], v[1], v[2]), r)
        };
        let urdf_origin = |xyz: [f64; 3], rpy: [f64; 3]| {
            Isometry3::from_parts(
                Translation3::new(xyz[0], xyz[1], xyz[2]),
                UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
            )
        };
        for _ in 0..100 {
            let mut q: Vec<f64> = (0..17).map(|_| rng.random_range(-1.0..1.0)).collect();
            for k in [3, 10] {
                let n = q[k..k + 4].iter().map(|x| x * x).sum::<f64>().sqrt();
                q[k..k + 4].iter_mut().for_each(|x| *x /= n);
            }
            let v = arena.eval(&ids, &|s| match s {
                mechgen_codegen::expr::Sym::Coord(i) => q[i as usize],
                _ => 9.81,
            });
            let free = |q: &[f64]| {
                Isometry3::from_parts(
                    Translation3::new(q[0], q[1], q[2]),
                    UnitQuaternion::new_unchecked(Quaternion::new(q[3], q[4], q[5], q[6])),
                )
            };
            let base = free(&q[0..7]);
            let a = base * urdf_origin([0.1, -0.2, 0.3], [0.4, -0.5, 0.6]) * free(&q[7..14]);
            let joint = a * urdf_origin([-0.3, 0.2, 0.1], [-0.2, 0.7, 0.1]);
            let mut worst = 0.0f64;
            for (k, want) in [base, a].iter().enumerate() {
                let (p, r) = iso(&v[12 * k..12 * k + 12]);
                worst = worst.max((p - want.translation.vector).amax());
                worst = worst.max((r - want.rotation.to_rotation_matrix().matrix()).amax());
            }
            // The planar joint, in the joint frame.
            let (p, r) = iso(&v[24..36]);
            let (jp, jr) = (
                joint.translation.vector,
                joint.rotation.to_rotation_matrix().into_inner(),
            );
            let local = jr.transpose() * (p - jp);
            let u = Unit::new_normalize(Vector3::from(axis));
            let turn = Rotation3::from_axis_angle(&u, q[16]).into_inner();
            worst = worst.max((jr.transpose() * r - turn).amax());
            worst = worst.max(local.dot(&u).abs());
            worst = worst.max((local.norm() - q[14].hypot(q[15])).abs());
            assert!(worst < 1e-13, "axis {axis:?}: off by {worst:e}");
        }
        // x and y move along perpendicular directions, e_x × e_y along the axis: their
        // images at (1, 0, 0) and (0, 1, 0) in the joint frame.
        let at = |x: f64, y: f64| {
            let mut q = [0.0; 17];
            (q[3], q[10], q[14], q[15]) = (1.0, 1.0, x, y);
            let v = arena.eval(&ids, &|s| match s {
                mechgen_codegen::expr::Sym::Coord(i) => q[i as usize],
                _ => 9.81,
            });
            let joint = urdf_origin([0.1, -0.2, 0.3], [0.4, -0.5, 0.6])
                * urdf_origin([-0.3, 0.2, 0.1], [-0.2, 0.7, 0.1]);
            joint
                .inverse_transform_point(&nalgebra::Point3::new(v[24], v[25], v[26]))
                .coords
        };
        let (ex, ey) = (at(1.0, 0.0), at(0.0, 1.0));
        let u = Vector3::from(axis).normalize();
        assert!(
            (ex.cross(&ey) - u).amax() < 1e-13,
            "axis {axis:?}: {ex} {ey}"
        );
    }
}
