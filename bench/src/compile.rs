//! Compile time of each generated module in a scratch crate.
//!
//! The scratch crate lives in a temporary directory, depends on `mechgen` by path and has
//! an empty `[workspace]` table so it is not part of ours. It is built once per profile
//! to warm its dependencies; then, for each module, the module source is (re)written and
//! `cargo build` of just that crate is timed, in release and in debug. Its `main` takes
//! the address of every generated function, so all of them are compiled.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use mechgen_codegen::emit::ModuleStats;

/// A compile-time measurement.
#[derive(Clone, Debug)]
pub struct CompileRow {
    /// Display name.
    pub label: String,
    /// Seconds in release (`None`: skipped or failed).
    pub release_s: Option<f64>,
    /// Seconds in debug.
    pub debug_s: Option<f64>,
    /// Why a profile was skipped or failed.
    pub note: Option<String>,
}

impl CompileRow {
    /// JSON of this row.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "label": self.label,
            "release_s": self.release_s,
            "debug_s": self.debug_s,
            "note": self.note,
        })
    }
}

/// The scratch crate.
pub struct Scratch {
    dir: PathBuf,
}

/// Root of our workspace.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bench/ has a parent")
        .to_path_buf()
}

impl Scratch {
    /// Creates (or reuses) the scratch crate in the temporary directory.
    pub fn new() -> std::io::Result<Scratch> {
        let dir = std::env::temp_dir().join("mechgen-bench-compile");
        std::fs::create_dir_all(dir.join("src"))?;
        let root = workspace_root();
        let manifest = format!(
            "[package]\nname = \"mechgen_compile_probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\nmechgen = {{ path = {:?} }}\n\n[workspace]\n\n\
             [profile.release.build-override]\nopt-level = 3\n\n[profile.dev.build-override]\nopt-level = 3\n",
            root.display().to_string()
        );
        std::fs::write(dir.join("Cargo.toml"), manifest)?;
        // Same dependency versions as our workspace, without touching the network.
        if let Ok(lock) = std::fs::read(root.join("Cargo.lock")) {
            std::fs::write(dir.join("Cargo.lock"), lock)?;
        }
        Ok(Scratch { dir })
    }

    fn write_module(&self, module: &str, text: &str, stats: &ModuleStats) -> std::io::Result<()> {
        std::fs::write(self.dir.join("src/generated.rs"), text)?;
        let mut main = String::from("#![allow(warnings)]\nmod generated;\nuse generated::");
        main.push_str(module);
        main.push_str(" as m;\nfn main() {\n");
        for f in &stats.functions {
            main.push_str(&format!(
                "    println!(\"{{}}\", std::hint::black_box(m::{} as usize));\n",
                f.name
            ));
        }
        main.push_str("}\n");
        std::fs::write(self.dir.join("src/main.rs"), main)?;
        Ok(())
    }

    fn build(&self, release: bool) -> Result<f64, String> {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.current_dir(&self.dir)
            .arg("build")
            .arg("--offline")
            .arg("--quiet")
            .env("CARGO_TARGET_DIR", self.dir.join("target"))
            .env_remove("RUSTFLAGS");
        if release {
            cmd.arg("--release");
        }
        let t = Instant::now();
        let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
        let s = t.elapsed().as_secs_f64();
        if out.status.success() {
            Ok(s)
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(6).collect();
            Err(format!(
                "cargo build failed: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ))
        }
    }

    /// Builds `module` once in both profiles without timing (warms the dependencies).
    pub fn warm(&self, module: &str, text: &str, stats: &ModuleStats) -> Result<(), String> {
        self.write_module(module, text, stats)
            .map_err(|e| e.to_string())?;
        self.build(true)?;
        self.build(false)?;
        Ok(())
    }

    /// Writes `module` (touching the source) and times `cargo build` of the scratch crate.
    pub fn time(
        &self,
        module: &str,
        text: &str,
        stats: &ModuleStats,
        release: bool,
    ) -> Result<f64, String> {
        self.write_module(module, text, stats)
            .map_err(|e| e.to_string())?;
        self.build(release)
    }
}
