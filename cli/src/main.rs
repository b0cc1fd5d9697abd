//! `mechgen` command line: generate Rust from a `.mech` file, print its statistics, or
//! check it.
//!
//! ```text
//! mechgen [FILE.mech | -] [-o OUT.rs] [--stats] [--seed N] [--crate-path PATH] [--generic] [--derivatives] [--scalar f32]
//! mechgen generate [FILE.mech | -] [-o OUT.rs] ...   (the same, named)
//! mechgen stats [FILE.mech | -] [--seed N] [--equations] [--latex]
//! mechgen check [FILE.mech | -] [--seed N]
//! mechgen import ROBOT.urdf [-o ROBOT.mech] [--module NAME] [--mimic-independent] [--floating-base] [--additions A.mech]
//! mechgen import MODEL.xml [-o MODEL.mech] [--module NAME]   (MJCF, MuJoCo's format)
//! ```
//! `-` reads standard input. With no file it uses the built-in Stewart platform (and,
//! with no subcommand, prints what it produced: the demo).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use mechgen_build::{generate_file_text, options_table, Generated, Options};

/// Writes a line to stdout; a closed pipe (`mechgen --stats | head`) ends the program
/// quietly instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to stdout without a newline (as [`out!`]).
macro_rules! emit {
    ($($arg:tt)*) => {
        write_stdout(format_args!($($arg)*))
    };
}

fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// The built-in mechanism (`mechgen generate` with no file): the Stewart platform. A copy of
/// `examples/stewart_platform/stewart.mech` inside this package, so that it packages on its own;
/// `tests/cli.rs` checks that the two stay equal.
const BUILTIN: &str = include_str!("stewart.mech");

/// Generate Rust for constrained mechanisms from `.mech` files.
#[derive(Parser, Debug)]
#[command(
    name = "mechgen",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    generate: GenerateArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate Rust (what `mechgen FILE` does without a subcommand).
    Generate(GenerateArgs),
    /// Print sizes, operation counts, notes and generation time; write nothing.
    Stats(StatsArgs),
    /// Report errors and notes; write nothing (exit status 1 on an error).
    Check(Input),
    /// Import a robot description (URDF, or MJCF for a `.xml` file) as `.mech` text to read,
    /// edit and generate.
    Import(ImportArgs),
}

/// `mechgen import`: the robot file, where to write, how to name.
#[derive(Args, Debug, Default)]
struct ImportArgs {
    /// The URDF file, or an MJCF file (MuJoCo's format) when its name ends in `.xml` or
    /// `--format mjcf` says so (`-`: standard input, URDF unless `--format mjcf`).
    file: PathBuf,
    /// The file's format: `urdf` or `mjcf` (default: by the extension, `.xml` is MJCF).
    #[arg(long, value_name = "urdf|mjcf")]
    format: Option<String>,
    /// Write the `.mech` text there (default: standard output).
    #[arg(short, long, value_name = "OUT.mech")]
    output: Option<PathBuf>,
    /// The module's name (default: the robot's name).
    #[arg(long, value_name = "NAME")]
    module: Option<String>,
    /// Keep `<mimic>` joints independent (default: an exact constraint on each).
    #[arg(long)]
    mimic_independent: bool,
    /// Put the URDF robot's root link on a floating base (a free joint from the world:
    /// position and unit quaternion, as Pinocchio's `JointModelFreeFlyer` root) instead of
    /// fixing it to the world.
    #[arg(long)]
    floating_base: bool,
    /// A `.mech` file of additions (loops, inputs, forces, outputs naming the imported
    /// coordinates, `<link>_frame`s and bodies), placed at the end of the imported module.
    #[arg(long, value_name = "ADDITIONS.mech")]
    additions: Option<PathBuf>,
}

/// Where the mechanism comes from and how it is generated.
#[derive(Args, Debug, Default)]
struct Input {
    /// The `.mech` file (`-`: standard input; none: the built-in Stewart platform).
    file: Option<PathBuf>,
    #[command(flatten)]
    options: OptionArgs,
}

/// The generation options' flags, one per entry of `mechgen_build::options_table!`.
macro_rules! option_args {
    (
        flags { $( $(#[doc = $fdoc:literal])* $flag:ident, help = $help:literal; )* }
        values { $(
            $(#[doc = $vdoc:literal])*
            $name:ident : $ty:ty = $default:expr, value $vt:ty, attr = $attr:literal,
            usage = $usage:literal, parse = $parse:ident, builder($bty:ty), cli($($cli:tt)*);
        )* }
    ) => {
        /// The generation options (a file's own `#![…]` attributes win over the values).
        #[derive(Args, Debug, Default)]
        struct OptionArgs {
            $(
                $(#[doc = $vdoc])*
                #[doc = ""]
                #[doc = concat!("As ", $usage, " in the file does (the file's attribute wins).")]
                #[arg(long, $($cli)*)]
                $name: Option<$vt>,
            )*
            $(
                $(#[doc = $fdoc])*
                #[doc = ""]
                #[doc = concat!("As `#![", stringify!($flag), "]` in the file does.")]
                #[arg(long)]
                $flag: bool,
            )*
        }

        impl OptionArgs {
            /// The options the command line gives: `//` comments naming each equation, and
            /// the flags given.
            fn options(&self) -> Options {
                let mut opts = Options::for_files();
                $( opts.$flag |= self.$flag; )*
                $(
                    if let Some(v) = &self.$name {
                        opts.$name = v.clone().into();
                    }
                )*
                opts
            }
        }
    };
}

options_table!(option_args);

#[derive(Args, Debug, Default)]
struct StatsArgs {
    #[command(flatten)]
    input: Input,
    /// Also print every equation as a formula (constraints, velocity constraints,
    /// inequalities, outputs).
    #[arg(long)]
    equations: bool,
    /// Print the formulas as LaTeX (implies `--equations`).
    #[arg(long)]
    latex: bool,
}

#[derive(Args, Debug, Default)]
struct GenerateArgs {
    #[command(flatten)]
    input: Input,
    /// Write the generated Rust there (default: standard output when a file is given).
    #[arg(short, long, value_name = "OUT.rs")]
    output: Option<PathBuf>,
    /// Also print sizes, operation counts and generation time.
    #[arg(long)]
    stats: bool,
}

/// The source of `input`: its path (as shown in messages) and text.
fn read(input: &Input) -> Result<(PathBuf, String), String> {
    match input.file.as_deref() {
        Some(p) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| format!("reading standard input: {e}"))?;
            Ok((PathBuf::from("<stdin>"), s))
        }
        Some(p) => std::fs::read_to_string(p)
            .map(|s| (p.to_path_buf(), s))
            .map_err(|e| format!("{}: {e}", p.display())),
        None => Ok((
            PathBuf::from("<built-in stewart.mech>"),
            BUILTIN.to_string(),
        )),
    }
}

fn print_stats(g: &Generated, code: &str) {
    for m in &g.modules {
        out!(
            "module `{}`: NQ = {}, NC = {}, rank = {}, DOF = {}, independent = {:?}",
            m.name,
            m.nq,
            m.nc,
            m.rank,
            m.dof,
            m.independent
        );
        for e in &m.equations {
            out!("  {e}");
        }
        for f in &m.functions {
            let chunks = if f.chunks > 0 {
                format!(", {} chunks", f.chunks)
            } else {
                String::new()
            };
            out!("  {:<16} {} — {} lets{chunks}", f.name, f.ops, f.lets);
        }
        for n in &m.notes {
            out!("  note: {n}");
        }
    }
    let t = &g.timings;
    out!(
        "generation: {:.2} ms (parse {:.2}, lower {:.2}, differentiate {:.2}, pivot+LU {:.2}, emit {:.2})",
        t.total().as_secs_f64() * 1e3,
        t.parse.as_secs_f64() * 1e3,
        t.lower.as_secs_f64() * 1e3,
        t.differentiate.as_secs_f64() * 1e3,
        t.pivot_lu.as_secs_f64() * 1e3,
        t.emit.as_secs_f64() * 1e3
    );
    out!(
        "generated source: {} bytes, {} lines",
        code.len(),
        code.lines().count()
    );
}

/// Generates `input`: the result and its text, or the located error (printed).
fn generate(input: &Input) -> Result<(Generated, String, std::time::Duration), ExitCode> {
    generate_with(input, None)
}

/// [`generate`], printing the equations as formulas in `formulas` syntax.
fn generate_with(
    input: &Input,
    formulas: Option<mechgen_build::FormulaSyntax>,
) -> Result<(Generated, String, std::time::Duration), ExitCode> {
    let (path, src) = read(input).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(1)
    })?;
    let mut opts = input.options.options();
    opts.formulas = formulas;
    let t = std::time::Instant::now();
    match generate_file_text(&path, &src, &opts) {
        Ok((g, code)) => Ok((g, code, t.elapsed())),
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(1))
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // Help and version on stdout.
                emit!("{e}");
                return ExitCode::SUCCESS;
            }
            // The error alone, not the usage again.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("error: bad arguments");
            eprintln!("{first}\n(see `mechgen --help`)");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Some(Command::Generate(a)) => run_generate(&a, false),
        Some(Command::Stats(args)) => match generate_with(
            &args.input,
            match (args.latex, args.equations) {
                (true, _) => Some(mechgen_build::FormulaSyntax::Latex),
                (false, true) => Some(mechgen_build::FormulaSyntax::Text),
                _ => None,
            },
        ) {
            Ok((g, code, wall)) => {
                print_stats(&g, &code);
                for m in &g.modules {
                    if !m.formulas.is_empty() {
                        out!("equations of `{}`:", m.name);
                    }
                    for f in &m.formulas {
                        out!("  {f}");
                    }
                }
                out!(
                    "wall time including pretty-printing: {:.2} ms",
                    wall.as_secs_f64() * 1e3
                );
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Some(Command::Check(input)) => match generate(&input) {
            Ok((g, _, _)) => {
                for m in &g.modules {
                    out!(
                        "ok: module `{}`: NQ = {}, NC = {}, rank = {}, DOF = {}, independent = {:?}",
                        m.name,
                        m.nq,
                        m.nc,
                        m.rank,
                        m.dof,
                        m.independent
                    );
                    for n in &m.notes {
                        out!("  note: {n}");
                    }
                }
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Some(Command::Import(args)) => run_import(&args),
        None => run_generate(&cli.generate, true),
    }
}

/// `mechgen import ROBOT.urdf|MODEL.xml [-o OUT.mech]`: the URDF or MJCF file as `.mech`
/// text; the elements not imported as notes on standard error.
fn run_import(args: &ImportArgs) -> ExitCode {
    use mechgen_codegen::import::{Format, ImportSettings};
    let stdin = args.file.as_os_str() == "-";
    let mjcf = match args.format.as_deref() {
        Some("mjcf") => true,
        Some("urdf") => false,
        Some(other) => {
            eprintln!("error: --format {other}: the formats are `urdf` and `mjcf`");
            return ExitCode::from(2);
        }
        None => args
            .file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("xml")),
    };
    if mjcf && args.mimic_independent {
        eprintln!("error: --mimic-independent is for URDF files (MJCF has no <mimic>)");
        return ExitCode::from(2);
    }
    if mjcf && args.floating_base {
        eprintln!(
            "error: --floating-base is for URDF files (an MJCF body floats by its <freejoint>)"
        );
        return ExitCode::from(2);
    }
    let text = if stdin {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map(|_| s)
    } else {
        std::fs::read_to_string(&args.file)
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", args.file.display());
            return ExitCode::from(1);
        }
    };
    let mut settings = ImportSettings::new(if mjcf { Format::Mjcf } else { Format::Urdf });
    settings.urdf.mimic_constraints = !args.mimic_independent;
    settings.urdf.floating_base = args.floating_base;
    if let Some(m) = &args.module {
        settings = settings.module(m.clone());
    }
    let additions = match &args.additions {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some((path.as_path(), text)),
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let source = mechgen_codegen::import_source(
        &args.file,
        &text,
        &settings,
        additions.as_ref().map(|(p, t)| (*p, t.as_str())),
    );
    let (mech, notes, module) = match source {
        Ok(s) => (s.mech, s.notes, s.module),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let coords = mech
        .lines()
        .filter(|l| l.trim_start().starts_with("coord "))
        .count();
    for n in &notes {
        eprintln!("note: {}:{}: {}", args.file.display(), n.line, n.message);
    }
    match &args.output {
        Some(out) => {
            if let Err(e) = std::fs::write(out, &mech) {
                eprintln!("error: {}: {e}", out.display());
                return ExitCode::from(1);
            }
            eprintln!(
                "wrote {} (module `{module}`, {coords} coordinates)",
                out.display(),
            );
        }
        None => emit!("{mech}"),
    }
    ExitCode::SUCCESS
}

/// `mechgen [generate] ...`; `demo`: no subcommand was named (no file then means the
/// built-in demo, which prints what it produced).
fn run_generate(args: &GenerateArgs, demo: bool) -> ExitCode {
    let (g, code, wall) = match generate(&args.input) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let demo = demo && args.input.file.is_none();
    match &args.output {
        Some(out) => {
            if let Err(e) = std::fs::write(out, &code) {
                eprintln!("error: {}: {e}", out.display());
                return ExitCode::from(1);
            }
            eprintln!("wrote {}", out.display());
        }
        None if demo => {
            out!("mechgen: built-in Stewart platform (pass a .mech file to generate your own; -o to write; --help)");
        }
        None if !args.stats => emit!("{code}"),
        None => {}
    }
    if args.stats || demo {
        print_stats(&g, &code);
        out!(
            "wall time including pretty-printing: {:.2} ms",
            wall.as_secs_f64() * 1e3
        );
    }
    if demo && args.output.is_none() {
        if let Some(start) = code.find("pub fn null_space") {
            let excerpt: String = code[start..]
                .lines()
                .take(12)
                .collect::<Vec<_>>()
                .join("\n");
            out!("\nexcerpt of the generated null_space:\n{excerpt}\n    ...");
        }
    }
    ExitCode::SUCCESS
}
