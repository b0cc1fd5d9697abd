//! URDF import: a robot description (links, joints, inertials) turned into readable `.mech`
//! text — one coordinate per moving joint, one frame per link (`parent * origin * motion`),
//! one body per link with mass, gravity along −z — that goes through the normal pipeline.
//!
//! Supported: kinematic trees with `revolute`, `continuous`, `prismatic`, `fixed`,
//! `floating` and `planar` joints, on a fixed base (the root link is the world) or, with
//! [`ImportOptions::floating_base`], on a floating base (a free joint between the world and
//! the root link, as Pinocchio's `JointModelFreeFlyer` root); joint origins (`xyz`, `rpy`)
//! and axes (any direction, normalised); inertials with their own origin and the full
//! tensor; `<limit>` kept as comments; `<dynamics damping>` as a parameter and a viscous
//! generalised force; `<mimic>` as an exact constraint (on a fixed joint, which does not
//! move, ignored with a note); a negative moment of inertia within rounding of zero
//! (≥ −1e-15 kg m²) read as 0 with a note.
//!
//! A free joint (the floating base, a `floating` joint) has seven coordinates: the child
//! frame's position in the parent frame `NAME_px`, `NAME_py`, `NAME_pz`, then the unit
//! quaternion `NAME_w`, `NAME_x`, `NAME_y`, `NAME_z` of its orientation (`rot_quat`), with
//! the exact constraint `w² + x² + y² + z² = 1` (the floating base's `NAME` is
//! `root_joint`, Pinocchio's). The generator chooses the independent coordinates (the
//! quaternion's vector part `x, y, z` at the identity, `w` dependent); the chart of `x, y, z`
//! is singular where `w = 0` (half turns), and the runtime's simulation switches to another
//! partition before it gets there: the user never picks one. A `planar` joint has three,
//! `NAME_x`, `NAME_y` (translations in the plane normal to the axis, along two directions
//! `e_x`, `e_y` with `e_x × e_y` the axis) and `NAME_yaw` (the turn about the axis, after the
//! translation). Elements
//! that carry no dynamics (`<visual>`, `<collision>`, `<material>`, `<gazebo>`,
//! `<transmission>`, …) are listed as notes with their line, in the output's header and in
//! [`Imported::notes`]; nothing is dropped silently.
//!
//! The XML is read with `roxmltree` (read-only DOM, no dependencies, text positions for
//! located errors).
//!
//! ```
//! use mechgen_codegen::import::urdf::{to_mech, ImportOptions};
//! let urdf = r#"<robot name="arm">
//!   <link name="base"/>
//!   <link name="upper">
//!     <inertial>
//!       <origin xyz="0 0 0.25" rpy="0 0 0"/>
//!       <mass value="2.0"/>
//!       <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>
//!     </inertial>
//!   </link>
//!   <joint name="shoulder" type="revolute">
//!     <parent link="base"/>
//!     <child link="upper"/>
//!     <origin xyz="0 0 0.1" rpy="0 0 1.5707963267948966"/>
//!     <axis xyz="0 1 0"/>
//!     <limit lower="-2" upper="2" effort="50" velocity="3"/>
//!   </joint>
//! </robot>"#;
//! let mech = to_mech(urdf, &ImportOptions::default()).unwrap();
//! assert!(mech.contains("coord shoulder = 0.0;"));
//! assert!(mech.contains("rot_y(shoulder)"));
//! // The text is ordinary mechgen source.
//! let generated = mechgen_codegen::generate_str(&mech, &Default::default()).unwrap();
//! assert_eq!(generated.modules.len(), 1);
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};

use roxmltree::{Document, Node};

/// Negative moments of inertia no larger than this (kg m²) are read as 0, with a note: the
/// rounding noise of an exported zero (the iCub's `r_hip_2` has `ixx = -5.42101e-20`,
/// `-2⁻⁶⁴`). MuJoCo's compiler uses the same value (`mjMINVAL`) as the smallest inertia
/// it distinguishes from zero.
const INERTIA_NOISE: f64 = 1e-15;

/// Options of the import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The module's name; `None`: the robot's `name` attribute (made an identifier).
    pub module: Option<String>,
    /// The default of the parameter `g`, gravity's magnitude (along −z).
    pub gravity: f64,
    /// `<mimic>` joints as exact constraints (`true`, the default) or, with `false`, as
    /// independent joints like any other (the mimic relation kept as a comment), as
    /// dynamics libraries do that ignore it.
    pub mimic_constraints: bool,
    /// A floating base (`false`, the default: the root link is the world): a free joint
    /// between the world and the root link, as Pinocchio's `buildModel(urdf,
    /// JointModelFreeFlyer())` puts there. Its seven coordinates `root_joint_px`, `_py`, `_pz`
    /// (the root link's origin in the world) and `root_joint_w`, `_x`, `_y`, `_z` (the unit
    /// quaternion of its orientation, norm held by an exact constraint) come first.
    pub floating_base: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            module: None,
            gravity: 9.81,
            mimic_constraints: true,
            floating_base: false,
        }
    }
}

/// An import error at a place in the imported text (URDF or MJCF).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// What is wrong.
    pub message: String,
    /// 1-based line of the offending element (0: not tied to a place).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}:{}: {}", self.line, self.column, self.message)
        }
    }
}

impl std::error::Error for ImportError {}

/// A part of the imported file that was not imported, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// 1-based line of the element.
    pub line: u32,
    /// What was not imported and why.
    pub message: String,
}

/// The result of an import: the `.mech` text and the notes (also in the text's header).
#[derive(Clone, Debug)]
pub struct Imported {
    /// The `.mech` source.
    pub mech: String,
    /// Elements not imported, in document order.
    pub notes: Vec<Note>,
    /// The module's name in `mech`.
    pub module: String,
    /// The coordinates in `mech`, in order, with the URDF joint each comes from: the
    /// floating base's seven first (joint `root_joint`, with
    /// [`ImportOptions::floating_base`]), then per moving joint in tree order one (revolute,
    /// continuous, prismatic), three (planar) or seven (floating).
    pub coords: Vec<(String, String)>,
}

/// The URDF `text` as `.mech` source (see the module docs).
pub fn to_mech(text: &str, opts: &ImportOptions) -> Result<String, ImportError> {
    import(text, opts).map(|i| i.mech)
}

/// The URDF `text` as `.mech` source, with the notes and names (see the module docs).
pub fn import(text: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let doc = Document::parse(text).map_err(|e| {
        let p = e.pos();
        ImportError {
            message: format!("not well-formed XML: {e}"),
            line: p.row,
            column: p.col,
        }
    })?;
    let robot = read_robot(&doc)?;
    write_mech(&robot, opts)
}

// ---------------------------------------------------------------------------------------
// Reading

/// A rigid placement `xyz`, `rpy` as in URDF's `<origin>`.
#[derive(Clone, Copy, Debug, Default)]
struct Origin {
    xyz: [f64; 3],
    rpy: [f64; 3],
}

#[derive(Clone, Debug)]
struct Inertial {
    origin: Origin,
    mass: f64,
    /// ixx, ixy, ixz, iyy, iyz, izz.
    inertia: [f64; 6],
}

#[derive(Clone, Debug)]
struct Link {
    name: String,
    inertial: Option<Inertial>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Revolute,
    Continuous,
    Prismatic,
    Fixed,
    /// Six degrees of freedom: position and unit quaternion (seven coordinates).
    Floating,
    /// Motion in the plane normal to the axis: two translations and a turn about the axis.
    Planar,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Revolute => "revolute",
            Kind::Continuous => "continuous",
            Kind::Prismatic => "prismatic",
            Kind::Fixed => "fixed",
            Kind::Floating => "floating",
            Kind::Planar => "planar",
        }
    }

    /// The suffixes of the joint's coordinates (`[""]`: one coordinate named as the joint).
    fn suffixes(self) -> &'static [&'static str] {
        match self {
            Kind::Revolute | Kind::Continuous | Kind::Prismatic => &[""],
            Kind::Fixed => &[],
            Kind::Floating => &FREE_SUFFIXES,
            Kind::Planar => &["x", "y", "yaw"],
        }
    }
}

/// The suffixes of a free joint's seven coordinates (URDF `floating`, MJCF `free`): the
/// position, then the unit quaternion `(w, x, y, z)`.
pub(super) const FREE_SUFFIXES: [&str; 7] = ["px", "py", "pz", "w", "x", "y", "z"];

/// The frame factor of a free joint with the coordinates `qs` (position, then quaternion).
pub(super) fn free_motion(qs: &[String]) -> String {
    format!(
        "frame(vec3({}), rot_quat({}))",
        qs[..3].join(", "),
        qs[3..].join(", ")
    )
}

/// The constraint keeping the quaternion `qs` (four coordinates) unit.
pub(super) fn unit_norm(qs: &[String]) -> String {
    let squares: Vec<String> = qs.iter().map(|c| format!("{c} * {c}")).collect();
    format!("constraint {} == 1.0;", squares.join(" + "))
}

#[derive(Clone, Debug, Default)]
struct Limit {
    lower: Option<f64>,
    upper: Option<f64>,
    effort: Option<f64>,
    velocity: Option<f64>,
}

#[derive(Clone, Debug)]
struct Mimic {
    joint: String,
    multiplier: f64,
    offset: f64,
    line: u32,
    column: u32,
}

#[derive(Clone, Debug)]
struct Joint {
    name: String,
    kind: Kind,
    parent: String,
    child: String,
    origin: Origin,
    axis: [f64; 3],
    limit: Option<Limit>,
    damping: f64,
    friction: f64,
    mimic: Option<Mimic>,
    line: u32,
    column: u32,
}

struct Robot {
    name: String,
    links: Vec<Link>,
    joints: Vec<Joint>,
    notes: Vec<Note>,
}

/// 1-based line and column of a node's start.
pub(super) fn pos(doc: &Document, n: Node) -> (u32, u32) {
    let p = doc.text_pos_at(n.range().start);
    (p.row, p.col)
}

/// An import error located at a node's start.
pub(super) fn err_at(doc: &Document, n: Node, message: impl Into<String>) -> ImportError {
    let (line, column) = pos(doc, n);
    ImportError {
        message: message.into(),
        line,
        column,
    }
}

/// A note at a node's line.
pub(super) fn note_at(doc: &Document, n: Node, message: impl Into<String>) -> Note {
    Note {
        line: pos(doc, n).0,
        message: message.into(),
    }
}

/// A required attribute.
fn attr<'a>(doc: &Document, n: Node<'a, '_>, name: &str) -> Result<&'a str, ImportError> {
    n.attribute(name).ok_or_else(|| {
        err_at(
            doc,
            n,
            format!("<{}> needs the attribute `{name}`", n.tag_name().name()),
        )
    })
}

/// An optional name attribute: names go into comments of the `.mech` text, so a control
/// character (a line break) in one is an error.
fn name_attr<'a>(
    doc: &Document,
    n: Node<'a, '_>,
    name: &str,
) -> Result<Option<&'a str>, ImportError> {
    match n.attribute(name) {
        Some(s) if s.chars().any(char::is_control) => Err(err_at(
            doc,
            n,
            format!(
                "the `{name}` of <{}> holds a control character: {s:?}",
                n.tag_name().name()
            ),
        )),
        other => Ok(other),
    }
}

/// A required name attribute (see [`name_attr`]).
fn required_name(doc: &Document, n: Node, name: &str) -> Result<String, ImportError> {
    name_attr(doc, n, name)?;
    attr(doc, n, name).map(str::to_string)
}

/// A finite number.
fn number(doc: &Document, n: Node, what: &str, s: &str) -> Result<f64, ImportError> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(err_at(
            doc,
            n,
            format!(
                "`{what}` of <{}> must be a finite number, found {s:?}",
                n.tag_name().name()
            ),
        )),
    }
}

/// An optional numeric attribute (`default` when absent).
fn number_attr(doc: &Document, n: Node, name: &str, default: f64) -> Result<f64, ImportError> {
    match n.attribute(name) {
        Some(s) => number(doc, n, name, s),
        None => Ok(default),
    }
}

/// A triple like `xyz="0 0 0.1"` (`default` when absent).
fn triple(doc: &Document, n: Node, name: &str, default: [f64; 3]) -> Result<[f64; 3], ImportError> {
    let Some(s) = n.attribute(name) else {
        return Ok(default);
    };
    let parts: Vec<&str> = s.split_whitespace().collect();
    if parts.len() != 3 {
        return Err(err_at(
            doc,
            n,
            format!(
                "`{name}` of <{}> must be three numbers, found {s:?}",
                n.tag_name().name()
            ),
        ));
    }
    let mut out = [0.0; 3];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = number(doc, n, name, p)?;
    }
    Ok(out)
}

fn origin(doc: &Document, n: Node) -> Result<Origin, ImportError> {
    Ok(Origin {
        xyz: triple(doc, n, "xyz", [0.0; 3])?,
        rpy: triple(doc, n, "rpy", [0.0; 3])?,
    })
}

/// The element children of `n`.
fn elements<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(|c| c.is_element())
}

/// An error for unexpanded xacro macros, which are not URDF.
fn check_namespace(doc: &Document, n: Node) -> Result<(), ImportError> {
    if let Some(ns) = n.tag_name().namespace() {
        if ns.contains("xacro") {
            return Err(err_at(
                doc,
                n,
                format!(
                    "<xacro:{}> is a xacro macro, not URDF: expand the file first (`xacro robot.urdf.xacro > robot.urdf`)",
                    n.tag_name().name()
                ),
            ));
        }
    }
    Ok(())
}

fn read_robot(doc: &Document) -> Result<Robot, ImportError> {
    let root = doc.root_element();
    if root.tag_name().name() != "robot" {
        return Err(err_at(
            doc,
            root,
            format!(
                "a URDF file's root element is <robot>, found <{}>",
                root.tag_name().name()
            ),
        ));
    }
    let name = name_attr(doc, root, "name")?.unwrap_or("robot").to_string();
    let mut robot = Robot {
        name,
        links: Vec::new(),
        joints: Vec::new(),
        notes: Vec::new(),
    };
    for n in elements(root) {
        check_namespace(doc, n)?;
        match n.tag_name().name() {
            "link" => {
                let link = read_link(doc, n, &mut robot.notes)?;
                robot.links.push(link);
            }
            "joint" => {
                let joint = read_joint(doc, n, &mut robot.notes)?;
                robot.joints.push(joint);
            }
            "material" => robot
                .notes
                .push(note_at(doc, n, "<material> ignored (appearance only)")),
            "transmission" => robot.notes.push(note_at(
                doc,
                n,
                "<transmission> ignored (actuators: declare inputs and forces in the .mech)",
            )),
            "gazebo" => robot
                .notes
                .push(note_at(doc, n, "<gazebo> ignored (simulator-specific)")),
            other => robot.notes.push(note_at(
                doc,
                n,
                format!("<{other}> ignored (not a URDF element this importer knows)"),
            )),
        }
    }
    Ok(robot)
}

fn read_link(doc: &Document, n: Node, notes: &mut Vec<Note>) -> Result<Link, ImportError> {
    let name = required_name(doc, n, "name")?;
    let mut inertial = None;
    for c in elements(n) {
        check_namespace(doc, c)?;
        match c.tag_name().name() {
            "inertial" => {
                if inertial.is_some() {
                    return Err(err_at(
                        doc,
                        c,
                        format!("link `{name}` has a second <inertial>"),
                    ));
                }
                inertial = Some(read_inertial(doc, c, &name, notes)?);
            }
            "visual" | "collision" => notes.push(note_at(
                doc,
                c,
                format!(
                    "<{}> ignored (geometry is not part of the dynamics)",
                    c.tag_name().name()
                ),
            )),
            other => notes.push(note_at(
                doc,
                c,
                format!("<{other}> in a <link> ignored (unknown element)"),
            )),
        }
    }
    Ok(Link { name, inertial })
}

fn read_inertial(
    doc: &Document,
    n: Node,
    link: &str,
    notes: &mut Vec<Note>,
) -> Result<Inertial, ImportError> {
    let mut o = Origin::default();
    let mut mass = None;
    let mut inertia = None;
    for c in elements(n) {
        match c.tag_name().name() {
            "origin" => o = origin(doc, c)?,
            "mass" => {
                let m = number(doc, c, "value", attr(doc, c, "value")?)?;
                if m < 0.0 {
                    return Err(err_at(
                        doc,
                        c,
                        format!("the mass of link `{link}` is negative ({m})"),
                    ));
                }
                mass = Some(m);
            }
            "inertia" => {
                let mut v = [0.0; 6];
                for (x, k) in v.iter_mut().zip(["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]) {
                    *x = number(doc, c, k, attr(doc, c, k)?)?;
                }
                for k in [0, 3, 5] {
                    if v[k] < 0.0 && v[k] >= -INERTIA_NOISE {
                        notes.push(note_at(
                            doc,
                            c,
                            format!(
                                "the moment {} of link `{link}`'s inertia read as 0 (a negative \
                                 value within {INERTIA_NOISE:e} kg m² of zero: rounding noise)",
                                num(v[k])
                            ),
                        ));
                        v[k] = 0.0;
                    }
                }
                if v[0] < 0.0 || v[3] < 0.0 || v[5] < 0.0 {
                    return Err(err_at(
                        doc,
                        c,
                        format!("the inertia of link `{link}` has a negative moment"),
                    ));
                }
                inertia = Some(v);
            }
            other => notes.push(note_at(
                doc,
                c,
                format!("<{other}> in an <inertial> ignored (unknown element)"),
            )),
        }
    }
    let mass = mass.ok_or_else(|| {
        err_at(
            doc,
            n,
            format!("the <inertial> of link `{link}` has no <mass>"),
        )
    })?;
    let inertia = inertia.ok_or_else(|| {
        err_at(
            doc,
            n,
            format!("the <inertial> of link `{link}` has no <inertia>"),
        )
    })?;
    Ok(Inertial {
        origin: o,
        mass,
        inertia,
    })
}

fn read_joint(doc: &Document, n: Node, notes: &mut Vec<Note>) -> Result<Joint, ImportError> {
    let name = required_name(doc, n, "name")?;
    let ty = attr(doc, n, "type")?;
    let kind = match ty {
        "revolute" => Kind::Revolute,
        "continuous" => Kind::Continuous,
        "prismatic" => Kind::Prismatic,
        "fixed" => Kind::Fixed,
        "floating" => Kind::Floating,
        "planar" => Kind::Planar,
        other => {
            return Err(err_at(
                doc,
                n,
                format!("joint `{name}` has the unknown type `{other}` (URDF: revolute, continuous, prismatic, fixed, floating, planar)"),
            ))
        }
    };
    let (line, column) = pos(doc, n);
    let mut joint = Joint {
        name: name.clone(),
        kind,
        parent: String::new(),
        child: String::new(),
        origin: Origin::default(),
        axis: [1.0, 0.0, 0.0],
        limit: None,
        damping: 0.0,
        friction: 0.0,
        mimic: None,
        line,
        column,
    };
    let (mut parent, mut child) = (None, None);
    for c in elements(n) {
        check_namespace(doc, c)?;
        match c.tag_name().name() {
            "parent" => parent = Some(required_name(doc, c, "link")?),
            "child" => child = Some(required_name(doc, c, "link")?),
            "origin" => joint.origin = origin(doc, c)?,
            "axis" => joint.axis = triple(doc, c, "xyz", [1.0, 0.0, 0.0])?,
            "limit" => {
                let opt = |k: &str| -> Result<Option<f64>, ImportError> {
                    c.attribute(k).map(|s| number(doc, c, k, s)).transpose()
                };
                joint.limit = Some(Limit {
                    lower: opt("lower")?,
                    upper: opt("upper")?,
                    effort: opt("effort")?,
                    velocity: opt("velocity")?,
                });
            }
            "dynamics" => {
                for a in c.attributes() {
                    if !["damping", "friction"].contains(&a.name()) {
                        notes.push(note_at(
                            doc,
                            c,
                            format!(
                                "the attribute `{}` of <dynamics> ignored (not URDF)",
                                a.name()
                            ),
                        ));
                    }
                }
                joint.damping = number_attr(doc, c, "damping", 0.0)?;
                joint.friction = number_attr(doc, c, "friction", 0.0)?;
                if joint.damping < 0.0 {
                    return Err(err_at(
                        doc,
                        c,
                        format!("joint `{name}` has a negative damping"),
                    ));
                }
                if joint.friction != 0.0 {
                    notes.push(note_at(
                        doc,
                        c,
                        format!(
                            "the friction {} of joint `{name}` is not modelled (kept as a comment)",
                            num(joint.friction)
                        ),
                    ));
                }
            }
            "mimic" => {
                let (l, col) = pos(doc, c);
                joint.mimic = Some(Mimic {
                    joint: required_name(doc, c, "joint")?,
                    multiplier: number_attr(doc, c, "multiplier", 1.0)?,
                    offset: number_attr(doc, c, "offset", 0.0)?,
                    line: l,
                    column: col,
                });
            }
            "calibration" | "safety_controller" => notes.push(note_at(
                doc,
                c,
                format!("<{}> ignored (controller data)", c.tag_name().name()),
            )),
            other => notes.push(note_at(
                doc,
                c,
                format!("<{other}> in a <joint> ignored (unknown element)"),
            )),
        }
    }
    joint.parent =
        parent.ok_or_else(|| err_at(doc, n, format!("joint `{name}` has no <parent link=…>")))?;
    joint.child =
        child.ok_or_else(|| err_at(doc, n, format!("joint `{name}` has no <child link=…>")))?;
    if kind != Kind::Fixed && joint.axis.iter().all(|&x| x == 0.0) {
        return Err(err_at(doc, n, format!("joint `{name}` has the zero axis")));
    }
    if joint.mimic.is_some() && kind == Kind::Fixed {
        // A fixed joint does not move: there is nothing to couple (TALOS's grippers carry
        // such `<mimic>` elements on their fixed joints).
        notes.push(note_at(
            doc,
            n,
            format!(
                "the <mimic> of the fixed joint `{name}` ignored (a fixed joint does not move)"
            ),
        ));
        joint.mimic = None;
    }
    if joint.mimic.is_some() && !matches!(kind, Kind::Revolute | Kind::Continuous | Kind::Prismatic)
    {
        return Err(err_at(
            doc,
            n,
            format!("joint `{name}` is {}: it cannot mimic another joint (revolute, continuous and prismatic joints can)", kind.name()),
        ));
    }
    if matches!(kind, Kind::Floating | Kind::Planar) && joint.damping != 0.0 {
        notes.push(note_at(
            doc,
            n,
            format!(
                "the damping {} of the {} joint `{name}` is not modelled",
                num(joint.damping),
                kind.name()
            ),
        ));
        joint.damping = 0.0;
    }
    Ok(joint)
}

// ---------------------------------------------------------------------------------------
// Writing

/// A number as a literal that reads back to the same `f64` (`1.0`, `-0.5`, `1e-5`).
pub(super) fn num(x: f64) -> String {
    // `-0.0` reads back as zero anyway; print it as `0.0`.
    let x = if x == 0.0 { 0.0 } else { x };
    format!("{x:?}")
}

pub(super) fn vec3(v: [f64; 3]) -> String {
    format!("vec3({}, {}, {})", num(v[0]), num(v[1]), num(v[2]))
}

/// The quarter turns `k` with `a = k π/2` up to the rounding of `π/2` itself (`|a − k π/2|
/// ≤ 1e-15`: the literal `1.5707963267948966` is one, `1.57079632679` is not), if `a` is one.
fn quarter_turns(a: f64) -> Option<i64> {
    let k = (a / std::f64::consts::FRAC_PI_2).round();
    ((a - k * std::f64::consts::FRAC_PI_2).abs() <= 1e-15).then_some(k as i64)
}

/// A rotation `rpy(r, p, y)` as text: when every angle is a whole number of quarter turns
/// (up to the rounding of `π/2`), the exact matrix of zeros and ones (`cos(π/2)` rounds
/// to 6e-17, which would fill every product with terms of that size: a difference of
/// 1e-16 relative, against dense expressions), else `rpy(…)`.
fn rotation(rpy: [f64; 3]) -> String {
    let turns: Option<Vec<i64>> = rpy.iter().map(|&a| quarter_turns(a)).collect();
    let Some(turns) = turns else {
        return format!("rpy({}, {}, {})", num(rpy[0]), num(rpy[1]), num(rpy[2]));
    };
    // cos and sin of k quarter turns.
    let cs = |k: i64| match k.rem_euclid(4) {
        0 => (1i64, 0i64),
        1 => (0, 1),
        2 => (-1, 0),
        _ => (0, -1),
    };
    let axis = |i: usize, k: i64| {
        let (c, s) = cs(k);
        let mut m = [[0i64; 3]; 3];
        let (a, b) = ((i + 1) % 3, (i + 2) % 3);
        m[i][i] = 1;
        m[a][a] = c;
        m[b][b] = c;
        m[a][b] = -s;
        m[b][a] = s;
        m
    };
    let mul = |x: [[i64; 3]; 3], y: [[i64; 3]; 3]| {
        let mut out = [[0i64; 3]; 3];
        for (i, row) in out.iter_mut().enumerate() {
            for (j, e) in row.iter_mut().enumerate() {
                *e = (0..3).map(|k| x[i][k] * y[k][j]).sum();
            }
        }
        out
    };
    let m = mul(mul(axis(2, turns[2]), axis(1, turns[1])), axis(0, turns[0]));
    let entries: Vec<String> = m.iter().flatten().map(|&e| num(e as f64)).collect();
    format!(
        "mat3({}) /* rpy({}, {}, {}) */",
        entries.join(", "),
        num(rpy[0]),
        num(rpy[1]),
        num(rpy[2])
    )
}

/// A placement as a factor of a frame product (`None`: the identity).
fn placement(o: &Origin) -> Option<String> {
    let moves = o.xyz.iter().any(|&x| x != 0.0);
    let turns = o.rpy.iter().any(|&x| x != 0.0);
    match (moves, turns) {
        (false, false) => None,
        (_, false) => Some(format!("translate({})", vec3(o.xyz))),
        (false, true) => Some(rotation(o.rpy)),
        (_, true) => Some(format!("frame({}, {})", vec3(o.xyz), rotation(o.rpy))),
    }
}

/// The signed coordinate axis `axis` is along (`Some((i, sign))`), if it is one.
fn coordinate_axis(axis: [f64; 3]) -> Option<(usize, f64)> {
    let nonzero: Vec<usize> = (0..3).filter(|&i| axis[i] != 0.0).collect();
    match nonzero[..] {
        [i] => Some((i, axis[i].signum())),
        _ => None,
    }
}

/// The motion of a moving joint with coordinates `qs` as a frame factor.
fn motion(kind: Kind, axis: [f64; 3], qs: &[String]) -> String {
    match kind {
        Kind::Floating => return free_motion(qs),
        Kind::Planar => return planar_motion(axis, qs),
        _ => {}
    }
    let q = &qs[0];
    let signed = |sign: f64| {
        if sign < 0.0 {
            format!("-{q}")
        } else {
            q.to_string()
        }
    };
    match kind {
        Kind::Revolute | Kind::Continuous => match coordinate_axis(axis) {
            Some((i, sign)) => format!("rot_{}({})", ["x", "y", "z"][i], signed(sign)),
            None => format!("axis_angle({}, {q})", vec3(axis)),
        },
        Kind::Prismatic => match coordinate_axis(axis) {
            Some((i, sign)) => {
                let mut parts = ["0.0".to_string(), "0.0".to_string(), "0.0".to_string()];
                parts[i] = signed(sign);
                format!("translate(vec3({}, {}, {}))", parts[0], parts[1], parts[2])
            }
            None => {
                let n = axis.iter().map(|x| x * x).sum::<f64>().sqrt();
                let u = axis.map(|x| x / n);
                format!("translate({q} * {})", vec3(u))
            }
        },
        Kind::Fixed | Kind::Floating | Kind::Planar => String::new(),
    }
}

/// The motion of a planar joint with coordinates `x`, `y`, `yaw` (`qs`): a translation by
/// `x e1 + y e2` in the plane normal to `axis` (`e1`, `e2`, `axis` right-handed), then a turn
/// by `yaw` about `axis`.
fn planar_motion(axis: [f64; 3], qs: &[String]) -> String {
    let (x, y, yaw) = (&qs[0], &qs[1], &qs[2]);
    if let Some((i, sign)) = coordinate_axis(axis) {
        let mut parts = ["0.0".to_string(), "0.0".to_string(), "0.0".to_string()];
        parts[(i + 1) % 3] = x.to_string();
        parts[(i + 2) % 3] = if sign < 0.0 {
            format!("-{y}")
        } else {
            y.to_string()
        };
        let turn = if sign < 0.0 {
            format!("-{yaw}")
        } else {
            yaw.to_string()
        };
        return format!(
            "translate(vec3({}, {}, {})) * rot_{}({turn})",
            parts[0],
            parts[1],
            parts[2],
            ["x", "y", "z"][i]
        );
    }
    let n = axis.iter().map(|x| x * x).sum::<f64>().sqrt();
    let u = axis.map(|x| x / n);
    // The coordinate axis least along `u`, made normal to it.
    let k = (0..3)
        .min_by(|&a, &b| u[a].abs().total_cmp(&u[b].abs()))
        .unwrap_or(0);
    let mut e = [0.0; 3];
    e[k] = 1.0;
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let e1 = cross(u, e);
    let l = e1.iter().map(|x| x * x).sum::<f64>().sqrt();
    let e1 = e1.map(|x| x / l);
    let e2 = cross(u, e1);
    format!(
        "translate({x} * {} + {y} * {}) * axis_angle({}, {yaw})",
        vec3(e1),
        vec3(e2),
        vec3(axis)
    )
}

/// Identifiers for the `.mech` text, unique within the module.
pub(super) struct Namer {
    pub(super) used: HashSet<String>,
}

impl Namer {
    /// `raw` made an identifier (other characters become `_`, a leading digit gets a `_`
    /// prefix, keywords and reserved names a `_` suffix), made unique with `_2`, `_3`, ….
    pub(super) fn name(&mut self, raw: &str) -> String {
        let s = Self::identifier(raw);
        let mut out = s.clone();
        let mut k = 2;
        while self.used.contains(&out) {
            out = format!("{s}_{k}");
            k += 1;
        }
        self.used.insert(out.clone());
        out
    }

    /// As [`Namer::name`], but a name already taken becomes `raw_suffix` first (a body
    /// named like its joint: `knee_body` rather than `knee_2`).
    pub(super) fn name_or(&mut self, raw: &str, suffix: &str) -> String {
        if self.used.contains(&Self::identifier(raw)) {
            self.name(&format!("{raw}_{suffix}"))
        } else {
            self.name(raw)
        }
    }

    /// `raw` made an identifier (see [`Namer::name`]), not yet unique.
    fn identifier(raw: &str) -> String {
        let mut s: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
            s.insert(0, '_');
        }
        if s.starts_with("__mechgen") {
            s.replace_range(..2, "m_");
        }
        if s.chars().all(|c| c == '_')
            || crate::model::is_keyword(&s)
            || crate::model::PATTERN_NAMES.contains(&s.as_str())
            || ["t", "pi", "PI"].contains(&s.as_str())
        {
            s.push('_');
        }
        s
    }
}

/// The coordinate lines of a free joint (`cs`: position, quaternion) at the identity.
fn write_free_coords(o: &mut String, cs: &[String], comment: &str) {
    for (k, c) in cs.iter().enumerate() {
        let value = if k == 3 { "1.0" } else { "0.0" };
        if k == 0 {
            let _ = writeln!(o, "    coord {c} = {value}; // {comment}");
        } else {
            let _ = writeln!(o, "    coord {c} = {value};");
        }
    }
}

fn write_mech(robot: &Robot, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let at = |j: &Joint, message: String| ImportError {
        message,
        line: j.line,
        column: j.column,
    };
    // The tree: links by name, the joint whose child each link is, children in document order.
    let mut link_index: HashMap<&str, usize> = HashMap::new();
    for (k, l) in robot.links.iter().enumerate() {
        if link_index.insert(&l.name, k).is_some() {
            return Err(ImportError {
                message: format!("two links are named `{}`", l.name),
                line: 0,
                column: 0,
            });
        }
    }
    if robot.links.is_empty() {
        return Err(ImportError {
            message: "the robot has no <link>".into(),
            line: 0,
            column: 0,
        });
    }
    let mut joint_names = HashSet::new();
    let mut parent_joint: Vec<Option<usize>> = vec![None; robot.links.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); robot.links.len()];
    for (k, j) in robot.joints.iter().enumerate() {
        if !joint_names.insert(j.name.as_str()) {
            return Err(at(j, format!("two joints are named `{}`", j.name)));
        }
        let find = |l: &str, role: &str| {
            link_index.get(l).copied().ok_or_else(|| {
                at(
                    j,
                    format!(
                        "joint `{}`: its {role} link `{l}` is not a <link> of the robot",
                        j.name
                    ),
                )
            })
        };
        let p = find(&j.parent, "parent")?;
        let c = find(&j.child, "child")?;
        if let Some(other) = parent_joint[c] {
            return Err(at(
                j,
                format!(
                    "link `{}` is the child of two joints (`{}` and `{}`): URDF describes trees, a closed loop is a constraint to add in the .mech",
                    j.child, robot.joints[other].name, j.name
                ),
            ));
        }
        parent_joint[c] = Some(k);
        children[p].push(k);
    }
    let roots: Vec<usize> = (0..robot.links.len())
        .filter(|&k| parent_joint[k].is_none())
        .collect();
    let root = match roots[..] {
        [r] => r,
        [] => {
            return Err(ImportError {
                message: "every link is the child of a joint: the joints form a cycle".into(),
                line: 0,
                column: 0,
            })
        }
        _ => {
            let names: Vec<&str> = roots
                .iter()
                .map(|&k| robot.links[k].name.as_str())
                .collect();
            return Err(ImportError {
                message: format!(
                    "the links form {} separate trees (roots {}): a URDF robot is one tree",
                    roots.len(),
                    names.join(", ")
                ),
                line: 0,
                column: 0,
            });
        }
    };
    // Depth-first order of the joints, children in document order.
    let mut order = Vec::new();
    let mut stack: Vec<usize> = children[root].iter().rev().copied().collect();
    while let Some(j) = stack.pop() {
        order.push(j);
        let c = link_index[robot.joints[j].child.as_str()];
        stack.extend(children[c].iter().rev());
    }
    // Whether a link moves: a moving joint between it and the root.
    let mut moves = vec![false; robot.links.len()];
    moves[root] = opts.floating_base;
    for &j in &order {
        let joint = &robot.joints[j];
        let (p, c) = (
            link_index[joint.parent.as_str()],
            link_index[joint.child.as_str()],
        );
        moves[c] = moves[p] || joint.kind != Kind::Fixed;
    }
    if order.len() != robot.joints.len() {
        let lost = (0..robot.joints.len())
            .find(|j| !order.contains(j))
            .map(|j| &robot.joints[j]);
        if let Some(j) = lost {
            return Err(at(
                j,
                format!(
                    "joint `{}` is on a cycle of joints not connected to the root link `{}`",
                    j.name, robot.links[root].name
                ),
            ));
        }
    }

    // Names.
    let mut namer = Namer {
        used: HashSet::new(),
    };
    let module = match &opts.module {
        Some(m) => namer.name(m),
        None => namer.name(&robot.name),
    };
    let g = namer.name("g");
    let mut coords = Vec::new();
    // The floating base's coordinates (none on a fixed base).
    let base: Vec<String> = if opts.floating_base {
        FREE_SUFFIXES
            .iter()
            .map(|s| namer.name(&format!("root_joint_{s}")))
            .collect()
    } else {
        Vec::new()
    };
    coords.extend(base.iter().map(|c| (c.clone(), "root_joint".to_string())));
    // Each moving joint's coordinates.
    let mut coord_of: HashMap<&str, Vec<String>> = HashMap::new();
    for &j in &order {
        let joint = &robot.joints[j];
        let cs: Vec<String> = joint
            .kind
            .suffixes()
            .iter()
            .map(|s| {
                if s.is_empty() {
                    namer.name(&joint.name)
                } else {
                    namer.name(&format!("{}_{s}", joint.name))
                }
            })
            .collect();
        if !cs.is_empty() {
            coords.extend(cs.iter().map(|c| (c.clone(), joint.name.clone())));
            coord_of.insert(&joint.name, cs);
        }
    }
    // The quaternions: the base's, then each floating joint's.
    let mut quaternions: Vec<&[String]> = Vec::new();
    if opts.floating_base {
        quaternions.push(&base[3..]);
    }
    for &j in &order {
        if robot.joints[j].kind == Kind::Floating {
            quaternions.push(&coord_of[robot.joints[j].name.as_str()][3..]);
        }
    }
    let frame_names: Vec<String> = robot
        .links
        .iter()
        .map(|l| namer.name(&format!("{}_frame", l.name)))
        .collect();
    let body_names: Vec<String> = robot.links.iter().map(|l| namer.name(&l.name)).collect();
    let damping_names: HashMap<usize, String> = order
        .iter()
        .filter(|&&j| robot.joints[j].damping != 0.0 && robot.joints[j].kind.suffixes() == [""])
        .map(|&j| (j, namer.name(&format!("{}_damping", robot.joints[j].name))))
        .collect();

    // Mimic relations, checked.
    let mut mimics = Vec::new();
    for &j in &order {
        let joint = &robot.joints[j];
        if let Some(m) = &joint.mimic {
            let leader = match coord_of.get(m.joint.as_str()).map(|c| &c[..]) {
                Some([leader]) => leader,
                _ => {
                    return Err(ImportError {
                        message: format!(
                            "joint `{}` mimics `{}`, which is not a revolute, continuous or prismatic joint of the robot",
                            joint.name, m.joint
                        ),
                        line: m.line,
                        column: m.column,
                    })
                }
            };
            mimics.push((
                coord_of[joint.name.as_str()][0].clone(),
                leader.clone(),
                m.clone(),
            ));
        }
    }
    let constrained = opts.mimic_constraints && !mimics.is_empty();

    // The text.
    let mut o = String::new();
    let moving = order
        .iter()
        .filter(|&&j| robot.joints[j].kind != Kind::Fixed)
        .count();
    let _ = writeln!(
        o,
        "// Imported by `mechgen import` from the URDF robot `{}`: {} links, {} joints ({moving} moving).",
        robot.name,
        robot.links.len(),
        robot.joints.len()
    );
    let _ = writeln!(
        o,
        "// Ordinary mechgen source: edit it, add loops, inputs, outputs and forces."
    );
    if robot.notes.is_empty() {
        let _ = writeln!(o, "// Every element of the URDF was imported.");
    } else {
        let _ = writeln!(o, "// Not imported (what: URDF lines):");
        let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
        for n in &robot.notes {
            match groups.iter_mut().find(|(m, _)| *m == n.message) {
                Some((_, lines)) => lines.push(n.line),
                None => groups.push((&n.message, vec![n.line])),
            }
        }
        for (message, lines) in groups {
            let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
            let _ = writeln!(
                o,
                "//   {message}: line{} {}",
                if lines.len() == 1 { "" } else { "s" },
                lines.join(", ")
            );
        }
    }
    let _ = writeln!(o);
    if opts.floating_base {
        let _ = writeln!(
            o,
            "/// The URDF robot `{}` on a floating base (a free joint between the world and its root link `{}`).",
            robot.name, robot.links[root].name
        );
    } else {
        let _ = writeln!(
            o,
            "/// The URDF robot `{}` on a fixed base (its root link `{}` is the world).",
            robot.name, robot.links[root].name
        );
    }
    let _ = writeln!(o, "pub mod {module} {{");
    let _ = writeln!(o, "    // Gravity's magnitude, along -z.");
    let _ = writeln!(o, "    param {g} = {};", num(opts.gravity));
    if !damping_names.is_empty() {
        let _ = writeln!(
            o,
            "    // Joint damping (URDF <dynamics damping>): generalised force -damping * velocity."
        );
        for &j in &order {
            if let Some(p) = damping_names.get(&j) {
                let _ = writeln!(o, "    param {p} = {};", num(robot.joints[j].damping));
            }
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "    // Joint coordinates (radians or metres), in tree order."
    );
    if opts.floating_base {
        let comment = format!(
            "floating base: the root link `{}`'s origin in the world, unit quaternion (w, x, y, z) of its orientation",
            robot.links[root].name
        );
        write_free_coords(&mut o, &base, &comment);
    }
    for &j in &order {
        let joint = &robot.joints[j];
        let Some(cs) = coord_of.get(joint.name.as_str()) else {
            continue;
        };
        match joint.kind {
            Kind::Floating => {
                let comment = format!(
                    "floating joint `{}`: position, unit quaternion (w, x, y, z)",
                    joint.name
                );
                write_free_coords(&mut o, cs, &comment);
                continue;
            }
            Kind::Planar => {
                for (k, c) in cs.iter().enumerate() {
                    let comment = match k {
                        0 => format!(
                            "planar joint `{}`: translations in the plane normal to its axis, then the turn about it",
                            joint.name
                        ),
                        _ => String::new(),
                    };
                    let _ = writeln!(
                        o,
                        "    coord {c} = 0.0;{}",
                        if comment.is_empty() {
                            String::new()
                        } else {
                            format!(" // {comment}")
                        }
                    );
                }
                continue;
            }
            _ => {}
        }
        let c = &cs[0];
        let nominal = match (&joint.mimic, constrained) {
            (Some(m), true) => m.offset,
            _ => 0.0,
        };
        let mut comment = joint.kind.name().to_string();
        if let Some(l) = &joint.limit {
            if joint.kind != Kind::Continuous {
                if let (Some(lo), Some(hi)) = (l.lower, l.upper) {
                    let _ = write!(comment, ", limits [{}, {}]", num(lo), num(hi));
                }
            }
            if let Some(e) = l.effort {
                let _ = write!(comment, ", effort {}", num(e));
            }
            if let Some(v) = l.velocity {
                let _ = write!(comment, ", velocity {}", num(v));
            }
        }
        if joint.friction != 0.0 {
            let _ = write!(comment, ", friction {} (not modelled)", num(joint.friction));
        }
        if let Some(m) = &joint.mimic {
            let _ = write!(
                comment,
                ", mimics `{}` (x {}, + {}){}",
                m.joint,
                num(m.multiplier),
                num(m.offset),
                if constrained { "" } else { " (not imposed)" }
            );
        }
        let name_note = if *c != joint.name {
            format!(" (URDF joint `{}`)", joint.name)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "    coord {c} = {}; // {comment}{name_note}",
            num(nominal)
        );
    }
    if !quaternions.is_empty() {
        let _ = writeln!(
            o,
            "    // Unit quaternions (floating base and joints): their norm held exactly."
        );
        for q in &quaternions {
            let _ = writeln!(o, "    {}", unit_norm(q));
        }
    }
    // With quaternions, the generator chooses the independent coordinates (and the atlas
    // the charts to switch to); without, the mimic leaders are independent.
    if constrained && quaternions.is_empty() {
        let independent: Vec<&str> = coords
            .iter()
            .filter(|(_, urdf)| {
                !robot
                    .joints
                    .iter()
                    .any(|j| &j.name == urdf && j.mimic.is_some())
            })
            .map(|(c, _)| c.as_str())
            .collect();
        let _ = writeln!(o, "    independent {};", independent.join(", "));
    }
    if constrained {
        let _ = writeln!(
            o,
            "    // <mimic> joints: follower == multiplier * leader + offset."
        );
        for (follower, leader, m) in &mimics {
            let _ = writeln!(
                o,
                "    constraint {follower} == {} * {leader} + {};",
                num(m.multiplier),
                num(m.offset)
            );
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "    // Link frames: the parent link's frame * the joint's origin * the joint's motion."
    );
    if opts.floating_base {
        let _ = writeln!(
            o,
            "    // the floating base: `{}` placed in the world",
            robot.links[root].name
        );
        let _ = writeln!(o, "    let {} = {};", frame_names[root], free_motion(&base));
    } else {
        let _ = writeln!(
            o,
            "    let {} = translate(vec3(0.0, 0.0, 0.0));",
            frame_names[root]
        );
    }
    for &j in &order {
        let joint = &robot.joints[j];
        let p = link_index[joint.parent.as_str()];
        let c = link_index[joint.child.as_str()];
        let mut factors = vec![frame_names[p].clone()];
        factors.extend(placement(&joint.origin));
        if let Some(qs) = coord_of.get(joint.name.as_str()) {
            factors.push(motion(joint.kind, joint.axis, qs));
        }
        let _ = writeln!(
            o,
            "    // joint `{}` ({}{}): `{}` -> `{}`",
            joint.name,
            joint.kind.name(),
            if matches!(joint.kind, Kind::Fixed | Kind::Floating) {
                String::new()
            } else {
                format!(", axis {}", vec3(joint.axis))
            },
            joint.parent,
            joint.child
        );
        let _ = writeln!(o, "    let {} = {};", frame_names[c], factors.join(" * "));
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "    // Bodies: each link's <inertial>, placed at its centre of mass, the tensor in its own axes."
    );
    for (k, l) in robot.links.iter().enumerate() {
        let Some(i) = &l.inertial else {
            let _ = writeln!(o, "    // link `{}`: no <inertial>", l.name);
            continue;
        };
        if !moves[k] {
            let _ = writeln!(
                o,
                "    // link `{}`: fixed to the world, its mass {} does not enter the dynamics",
                l.name,
                num(i.mass)
            );
            continue;
        }
        if i.mass == 0.0 && i.inertia.iter().all(|&x| x == 0.0) {
            let _ = writeln!(o, "    // link `{}`: massless", l.name);
            continue;
        }
        let [ixx, ixy, ixz, iyy, iyz, izz] = i.inertia.map(num);
        let mut frame = vec![frame_names[k].clone()];
        frame.extend(placement(&i.origin));
        let _ = writeln!(
            o,
            "    body {} {{ mass = {}, inertia = mat3({ixx}, {ixy}, {ixz}, {ixy}, {iyy}, {iyz}, {ixz}, {iyz}, {izz}), frame = {} }}",
            body_names[k],
            num(i.mass),
            frame.join(" * ")
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "    gravity = vec3(0.0, 0.0, -{g});");
    for &j in &order {
        if let Some(p) = damping_names.get(&j) {
            let q = &coord_of[robot.joints[j].name.as_str()][0];
            let _ = writeln!(o, "    force {q} = -{p} * der({q});");
        }
    }
    let _ = writeln!(o, "}}");
    Ok(Imported {
        mech: o,
        notes: robot.notes.clone(),
        module,
        coords,
    })
}
