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
    for (file, mimic, nq, nc) in [
        ("ur_description/ur5_robot.urdf", true, 6, 0),
        ("panda_description/panda.urdf", true, 9, 1),
        ("panda_description/panda.urdf", false, 9, 0),
    ] {
        let opts = ImportOptions {
            mimic_constraints: mimic,
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
        "  <joint name=\"j\" type=\"floating\">\n    <parent link=\"base\"/><child link=\"arm\"/>\n  </joint>",
    ));
    assert!(
        e.message
            .contains("`floating` joints are not supported yet"),
        "{e}"
    );
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
