//! `mechgen import`: a URDF file to `.mech` text that `mechgen check` accepts, the same
//! text as the library's `to_mech`; notes and errors on standard error with the file's line.

use std::path::PathBuf;
use std::process::Command;

const CLI: &str = env!("CARGO_BIN_EXE_mechgen");

fn ur5() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/robots/models/ur_description/ur5_robot.urdf")
}

#[test]
fn import_writes_mech_that_checks() {
    let dir = std::env::temp_dir().join(format!("mechgen-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join("ur5.mech");
    let run = Command::new(CLI)
        .args(["import"])
        .arg(ur5())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success(), "{run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("ur5_robot.urdf:7: <gazebo> ignored"),
        "{stderr}"
    );
    assert!(stderr.contains("module `ur5`, 6 coordinates"), "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let urdf = std::fs::read_to_string(ur5()).unwrap_or_else(|e| panic!("{e}"));
    let lib = mechgen_codegen::import::urdf::to_mech(&urdf, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, lib);
    let check = Command::new(CLI)
        .arg("check")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{check:?}");
    assert!(
        stdout.contains("ok: module `ur5`: NQ = 6, NC = 0"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_error_is_located() {
    let dir = std::env::temp_dir().join(format!("mechgen-import-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let file = dir.join("bad.urdf");
    std::fs::write(
        &file,
        "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"b\"/>\n<joint name=\"j\" type=\"spherical\"><parent link=\"a\"/><child link=\"b\"/></joint>\n</robot>\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = Command::new(CLI)
        .arg("import")
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("bad.urdf:4:1: joint `j` has the unknown type `spherical`"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `.xml` file is MJCF: the four-bar of `examples/robots/mjcf` imports with its loop as a
/// constraint, the same text as the library's `mjcf::to_mech`, and checks.
#[test]
fn import_picks_mjcf_for_xml() {
    let dir = std::env::temp_dir().join(format!("mechgen-import-mjcf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let model =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/robots/mjcf/four_bar.xml");
    let out = dir.join("four_bar.mech");
    let run = Command::new(CLI)
        .arg("import")
        .arg(&model)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success(), "{run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("four_bar.xml:14: <geom> ignored for contact"),
        "{stderr}"
    );
    assert!(
        stderr.contains("module `four_bar`, 3 coordinates"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let xml = std::fs::read_to_string(&model).unwrap_or_else(|e| panic!("{e}"));
    let lib = mechgen_codegen::import::mjcf::to_mech(&xml, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, lib);
    let check = Command::new(CLI)
        .arg("check")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{check:?}");
    assert!(
        stdout.contains("ok: module `four_bar`: NQ = 3, NC = 2, rank = 2, DOF = 1"),
        "{stdout}"
    );
    // `--format mjcf` reads standard input as MJCF; an error is located in it.
    let mut child = Command::new(CLI)
        .args(["import", "-", "--format", "mjcf"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
        stdin
            .write_all(b"<mujoco>\n<worldbody>\n<body><joint type=\"screw\" name=\"b\"/></body>\n</worldbody>\n</mujoco>\n")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let run = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("-:3:7: joint `b` has the unknown type `screw`"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--additions`: the file's items end the imported module (the UR5 of
/// `examples/imported_robot` with its tool on a table), and the whole text checks.
#[test]
fn import_with_additions_puts_them_in_the_module() {
    let dir = std::env::temp_dir().join(format!("mechgen-import-add-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join("ur5.mech");
    let additions =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/imported_robot/ur5_table.mech");
    let run = Command::new(CLI)
        .arg("import")
        .arg(ur5())
        .arg("--additions")
        .arg(&additions)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success(), "{run:?}");
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let own = std::fs::read_to_string(&additions).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        text.ends_with(&format!("{own}}}\n")),
        "{}",
        &text[text.len() - 400..]
    );
    let check = Command::new(CLI)
        .arg("check")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{check:?}");
    assert!(
        stdout.contains("ok: module `ur5`: NQ = 6, NC = 1"),
        "{stdout}"
    );
    // A missing additions file is an error naming it.
    let run = Command::new(CLI)
        .arg("import")
        .arg(ur5())
        .arg("--additions")
        .arg(dir.join("missing.mech"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("missing.mech"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--floating-base` puts the UR5 on a free joint: seven more coordinates (position and unit
/// quaternion) and the quaternion's norm constraint, the library's text, and it checks; with
/// an MJCF file the flag is refused.
#[test]
fn import_floating_base() {
    let dir = std::env::temp_dir().join(format!("mechgen-import-float-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join("ur5.mech");
    let run = Command::new(CLI)
        .args(["import", "--floating-base"])
        .arg(ur5())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success(), "{run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("module `ur5`, 13 coordinates"), "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let urdf = std::fs::read_to_string(ur5()).unwrap_or_else(|e| panic!("{e}"));
    let opts = mechgen_codegen::import::urdf::ImportOptions {
        floating_base: true,
        ..Default::default()
    };
    let lib =
        mechgen_codegen::import::urdf::to_mech(&urdf, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, lib);
    let check = Command::new(CLI)
        .arg("check")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{check:?}");
    assert!(
        stdout.contains("ok: module `ur5`: NQ = 13, NC = 1"),
        "{stdout}"
    );
    let model =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/robots/mjcf/four_bar.xml");
    let run = Command::new(CLI)
        .args(["import", "--floating-base"])
        .arg(&model)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("--floating-base is for URDF files"),
        "{run:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
