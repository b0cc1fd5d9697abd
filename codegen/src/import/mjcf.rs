//! MJCF import: a MuJoCo model (nested bodies, joints, inertials or geoms, equality
//! constraints, motors) turned into readable `.mech` text — one coordinate per hinge or slide
//! joint (MuJoCo's `qpos`), a unit quaternion of four coordinates per ball joint and position
//! plus quaternion per free joint, one frame per body (`parent * placement * joint
//! motions`), one mechgen body per body with mass, MuJoCo's gravity — that goes through the
//! normal pipeline.
//!
//! What MuJoCo closes with soft constraints, this import closes exactly: `<equality>`
//! `connect`, `weld` and `joint` become `constraint` items, held to rounding by mechgen's
//! projection instead of by a spring–damper in the solver.
//!
//! Supported:
//! - nested `<body>` trees with `pos` and every orientation form of MJCF: `quat` (w first),
//!   `axisangle`, `euler` (with `<compiler eulerseq>`), `xyaxes`, `zaxis`; angles in degrees
//!   (MJCF's default) or radians after `<compiler angle>`;
//! - `<inertial>` with `pos`, an orientation, `mass` and `diaginertia` or `fullinertia`; a body
//!   without one gets its mass and inertia from its geoms as MuJoCo does
//!   (`<compiler inertiafromgeom>`, `inertiagrouprange`, `boundmass`, `boundinertia`,
//!   `balanceinertia`): spheres, capsules, cylinders, boxes and ellipsoids with `size` or
//!   `fromto`, `density` or `mass` (a mesh or height field there is a located error naming the
//!   body);
//! - `ball` and `free` joints (and `<freejoint>`) as unit quaternions `(w, x, y, z)` with
//!   the exact constraint `w² + x² + y² + z² = 1` and `rot_quat`, the free joint's position
//!   in the world first (MuJoCo's `qpos` layout); their linear damping as a torque on the
//!   angular velocity in the body's axes (and a force on the free joint's linear velocity);
//! - `hinge` and `slide` joints with `axis`, `pos`, `ref` (the coordinate's value in the
//!   model's pose, as `qpos0`), `stiffness` and `springref` (a spring force
//!   `−(a x + b x² + c x³)`, `x = q − springref`), `damping` (`−(a v + b v|v| + c v³)`) and
//!   `armature` (added to the mass matrix's diagonal by a `mass_matrix { (q, q) = … }` item,
//!   as MuJoCo adds it to `qM`); `range` kept as a comment;
//! - `<default>` classes, nested, with `class` and `childclass`;
//! - `<option gravity>` (and `<flag gravity="disable"/>`);
//! - `<equality>` `connect` (three rows: the anchor on both bodies), `weld` (six rows: the
//!   anchor, and the skew part of the relative rotation `E` of body 2 against body 1's target
//!   pose, `(E₃₂ − E₂₃, E₁₃ − E₃₁, E₂₁ − E₁₂) = 2 sin θ · axis`: zero at the target, its
//!   Jacobian there twice the relative angular velocity, three independent rows of equal
//!   weight) and `joint` (the polynomial `polycoef` between two joints), each also with sites;
//! - `<actuator>` `motor`, `position` (`kp`, `kv`) and `velocity` (`kv`) on a hinge or slide
//!   joint as an `input` and the force on the joint's coordinate: `gear · u` for a motor,
//!   `gear · (kp (u − L) − kv L̇)` and `gear · kv (u − L̇)` for the servos, `L = gear · q`
//!   (MuJoCo's joint transmission); `ctrlrange` and `forcerange` as comments (not clamped).
//!
//! Not yet (a located error): stiffness and armature of ball and free joints, motors and
//! joint equalities on them, `tendon` and `flex` equalities, `<frame>`, `<replicate>`,
//! `<attach>`, `<include>`, mesh geoms for inertia, mocap bodies, gravity compensation, free
//! joints with `align="true"` (or `<compiler alignfree="true">`).
//! Elements without dynamics here (geoms for contact, sites, cameras, lights, sensors,
//! assets, solver settings, other actuators, joint friction loss) are listed as notes with
//! their line, in the output's header and in [`Imported::notes`]; nothing is dropped
//! silently.
//!
//! ```
//! use mechgen_codegen::import::mjcf::{to_mech, ImportOptions};
//! let mjcf = r#"<mujoco model="pendulum">
//!   <worldbody>
//!     <body name="arm" pos="0 0 1">
//!       <joint name="swing" type="hinge" axis="0 1 0" damping="0.1"/>
//!       <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
//!     </body>
//!   </worldbody>
//! </mujoco>"#;
//! let mech = to_mech(mjcf, &ImportOptions::default()).unwrap();
//! assert!(mech.contains("coord swing = 0.0;"));
//! assert!(mech.contains("rot_y(swing)"));
//! let generated = mechgen_codegen::generate_str(&mech, &Default::default()).unwrap();
//! assert_eq!(generated.modules[0].nq, 1);
//! ```

use std::collections::{HashMap, HashSet};
use std::f64::consts::PI;
use std::fmt::Write as _;

use roxmltree::{Document, Node};

use super::urdf::{
    err_at, free_motion, note_at, num, pos as pos_of, unit_norm, vec3, Namer, FREE_SUFFIXES,
};
pub use super::urdf::{ImportError, Note};

/// Options of the import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The module's name; `None`: the model's `model` attribute (made an identifier).
    pub module: Option<String>,
}

/// The result of an import: the `.mech` text, the notes (also in the text's header) and
/// the names it gave.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The `.mech` source.
    pub mech: String,
    /// Elements not imported, in document order.
    pub notes: Vec<Note>,
    /// The module's name in `mech`.
    pub module: String,
    /// The coordinates in `mech` (one per hinge or slide joint, in tree order, MuJoCo's
    /// `qpos` order) with the MJCF joint each comes from.
    /// (A ball joint has four, `NAME_w` … `NAME_z`; a free joint seven, `NAME_px`, `NAME_py`,
    /// `NAME_pz`, then its quaternion.)
    pub coords: Vec<(String, String)>,
    /// The frame of each body in `mech` (a `let` name) with the MJCF body's name, in tree
    /// order (unnamed bodies: `body1`, `body2`, … by MuJoCo's body index).
    pub frames: Vec<(String, String)>,
    /// The inputs in `mech` (one per imported actuator) with the MJCF actuator's name.
    pub inputs: Vec<(String, String)>,
}

/// The MJCF `text` as `.mech` source (see the module docs).
pub fn to_mech(text: &str, opts: &ImportOptions) -> Result<String, ImportError> {
    import(text, opts).map(|i| i.mech)
}

/// The MJCF `text` as `.mech` source, with the notes and names (see the module docs).
pub fn import(text: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let doc = Document::parse(text).map_err(|e| {
        let p = e.pos();
        ImportError {
            message: format!("not well-formed XML: {e}"),
            line: p.row,
            column: p.col,
        }
    })?;
    let model = read_model(&doc)?;
    write_mech(&model, opts)
}

// ---------------------------------------------------------------------------------------
// Small 3-D algebra (the importer's own numbers: inertias from geoms, poses at `qpos0`).

type V3 = [f64; 3];
/// A quaternion `(w, x, y, z)`.
type Quat = [f64; 4];
/// A 3×3 matrix, row by row.
type M3 = [[f64; 3]; 3];

const IDENTITY_Q: Quat = [1.0, 0.0, 0.0, 0.0];
const MJ_EPS: f64 = 1e-14;

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(s: f64, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

fn qmul(a: Quat, b: Quat) -> Quat {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

fn qnormalize(q: Quat) -> Option<Quat> {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    (n > MJ_EPS).then(|| q.map(|x| x / n))
}

/// The rotation matrix of a unit quaternion.
fn qmat(q: Quat) -> M3 {
    let [w, x, y, z] = q;
    [
        [
            w * w + x * x - y * y - z * z,
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            w * w - x * x + y * y - z * z,
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            w * w - x * x - y * y + z * z,
        ],
    ]
}

/// The unit quaternion of a rotation matrix (Shepperd's branches, largest component first).
fn mat_quat(m: &M3) -> Quat {
    let tr = m[0][0] + m[1][1] + m[2][2];
    if tr > 0.0 {
        let w = 0.5 * (1.0 + tr).sqrt();
        [
            w,
            (m[2][1] - m[1][2]) / (4.0 * w),
            (m[0][2] - m[2][0]) / (4.0 * w),
            (m[1][0] - m[0][1]) / (4.0 * w),
        ]
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        let x = 0.5 * (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt();
        [
            (m[2][1] - m[1][2]) / (4.0 * x),
            x,
            (m[0][1] + m[1][0]) / (4.0 * x),
            (m[0][2] + m[2][0]) / (4.0 * x),
        ]
    } else if m[1][1] > m[2][2] {
        let y = 0.5 * (1.0 - m[0][0] + m[1][1] - m[2][2]).sqrt();
        [
            (m[0][2] - m[2][0]) / (4.0 * y),
            (m[0][1] + m[1][0]) / (4.0 * y),
            y,
            (m[1][2] + m[2][1]) / (4.0 * y),
        ]
    } else {
        let z = 0.5 * (1.0 - m[0][0] - m[1][1] + m[2][2]).sqrt();
        [
            (m[1][0] - m[0][1]) / (4.0 * z),
            (m[0][2] + m[2][0]) / (4.0 * z),
            (m[1][2] + m[2][1]) / (4.0 * z),
            z,
        ]
    }
}

fn mv(m: &M3, v: V3) -> V3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

fn mt(m: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

fn mm(a: &M3, b: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

fn madd(a: &M3, b: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][j] + b[i][j]))
}

fn diag(d: V3) -> M3 {
    [[d[0], 0.0, 0.0], [0.0, d[1], 0.0], [0.0, 0.0, d[2]]]
}

/// `R D Rᵀ`: a tensor given in a rotated frame, in the outer axes.
fn rotate_tensor(q: Quat, d: &M3) -> M3 {
    let r = qmat(q);
    mm(&mm(&r, d), &mt(&r))
}

/// A rigid placement: origin and rotation.
#[derive(Clone, Copy, Debug)]
struct Pose {
    pos: V3,
    rot: M3,
}

impl Pose {
    fn identity() -> Self {
        Pose {
            pos: [0.0; 3],
            rot: diag([1.0; 3]),
        }
    }
    fn new(pos: V3, q: Quat) -> Self {
        Pose { pos, rot: qmat(q) }
    }
    /// `self * other`.
    fn then(&self, other: &Pose) -> Pose {
        Pose {
            pos: add(self.pos, mv(&self.rot, other.pos)),
            rot: mm(&self.rot, &other.rot),
        }
    }
    fn inverse(&self) -> Pose {
        let rt = mt(&self.rot);
        Pose {
            pos: scale(-1.0, mv(&rt, self.pos)),
            rot: rt,
        }
    }
    fn point(&self, p: V3) -> V3 {
        add(self.pos, mv(&self.rot, p))
    }
}

// ---------------------------------------------------------------------------------------
// Reading

/// `<compiler>` settings that change the numbers.
#[derive(Clone, Debug)]
struct Compiler {
    degree: bool,
    eulerseq: [u8; 3],
    inertia_from_geom: FromGeom,
    group_range: (i64, i64),
    bound_mass: f64,
    bound_inertia: f64,
    balance_inertia: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FromGeom {
    False,
    True,
    Auto,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            degree: true,
            eulerseq: *b"xyz",
            inertia_from_geom: FromGeom::Auto,
            group_range: (0, 5),
            bound_mass: 0.0,
            bound_inertia: 0.0,
            balance_inertia: false,
        }
    }
}

impl Compiler {
    /// An angle of the file in radians.
    fn angle(&self, a: f64) -> f64 {
        if self.degree {
            a / 180.0 * PI
        } else {
            a
        }
    }
    fn unit(&self) -> &'static str {
        if self.degree {
            "degrees"
        } else {
            "radians"
        }
    }
}

/// One `<default>` class: its parent and its element defaults by tag.
struct Class<'a, 'i> {
    parent: Option<String>,
    tags: Vec<(&'a str, Node<'a, 'i>)>,
}

/// An element with its defaults: the element itself first, then its class's default element
/// of the same tag, then the ancestors' classes'.
struct El<'a, 'i> {
    chain: Vec<Node<'a, 'i>>,
}

impl<'a, 'i> El<'a, 'i> {
    fn node(&self) -> Node<'a, 'i> {
        self.chain[0]
    }
    /// An attribute, from the element or its defaults, with the node that gave it.
    fn get(&self, name: &str) -> Option<(&'a str, Node<'a, 'i>)> {
        self.chain
            .iter()
            .find_map(|n| n.attribute(name).map(|v| (v, *n)))
    }
    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JointKind {
    Hinge,
    Slide,
    /// A unit quaternion `(w, x, y, z)`: four coordinates and their norm constraint.
    Ball,
    /// Position and unit quaternion of the body frame in the world: seven coordinates.
    Free,
}

#[derive(Clone, Debug)]
struct Joint {
    name: String,
    kind: JointKind,
    body: usize,
    pos: V3,
    /// As written (the emitted `axis_angle` normalises it).
    axis: V3,
    /// In radians for hinges.
    reference: f64,
    springref: f64,
    stiffness: [f64; 3],
    damping: [f64; 3],
    armature: f64,
    range: Option<[f64; 2]>,
}

/// A body's mass properties, as they are emitted.
#[derive(Clone, Debug)]
enum Inertia {
    /// `<inertial>` with `diaginertia`: principal moments in the frame `(pos, quat)`.
    Principal {
        mass: f64,
        pos: V3,
        quat: Quat,
        rot_src: Option<String>,
        moments: V3,
    },
    /// `fullinertia`, or inferred from geoms: the tensor about the centre of mass `pos` in
    /// the body's axes.
    Tensor {
        mass: f64,
        pos: V3,
        tensor: M3,
        from_geoms: usize,
    },
}

impl Inertia {
    fn mass(&self) -> f64 {
        match self {
            Inertia::Principal { mass, .. } | Inertia::Tensor { mass, .. } => *mass,
        }
    }
}

struct Body {
    name: String,
    parent: usize,
    pos: V3,
    quat: Quat,
    /// The orientation as written, when not a `quat` (a comment).
    rot_src: Option<String>,
    /// `quat` as written (emitted as is; the language normalises it).
    quat_written: Option<Quat>,
    joints: Vec<usize>,
    inertia: Option<Inertia>,
}

struct Site {
    body: usize,
    pos: V3,
    quat: Quat,
}

enum EqKind {
    /// The anchor point on both bodies, each in its body's frame.
    Connect {
        b1: usize,
        b2: usize,
        a1: V3,
        a2: V3,
    },
    /// The frames `b1 * f1` and `b2 * f2` held together: same origin (MuJoCo's weld point:
    /// `relpose`'s position on body 1, `anchor` on body 2) and same orientation.
    Weld {
        b1: usize,
        b2: usize,
        f1: Box<Pose>,
        f2: Box<Pose>,
    },
    Joint {
        j1: usize,
        j2: Option<usize>,
        coef: [f64; 5],
    },
}

struct Equality {
    name: Option<String>,
    kind: EqKind,
    line: u32,
    column: u32,
}

/// How an actuator turns its control `u` into a force on its length `L = gear · q`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Drive {
    /// `<motor>`: `u`.
    Motor,
    /// `<position>`: `kp (u − L) − kv L̇`.
    Position { kp: f64, kv: f64 },
    /// `<velocity>`: `kv (u − L̇)`.
    Velocity { kv: f64 },
}

/// An actuator on a hinge or slide joint (the joint's force is `gear` times the actuator's).
struct Motor {
    name: String,
    joint: usize,
    gear: f64,
    drive: Drive,
    ctrlrange: Option<[f64; 2]>,
    forcerange: Option<[f64; 2]>,
}

struct Model {
    name: String,
    gravity: V3,
    compiler: Compiler,
    bodies: Vec<Body>,
    joints: Vec<Joint>,
    equalities: Vec<Equality>,
    motors: Vec<Motor>,
    notes: Vec<Note>,
}

/// The element children of `n`.
fn elements<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(|c| c.is_element())
}

struct Reader<'a, 'i> {
    doc: &'a Document<'i>,
    compiler: Compiler,
    classes: HashMap<String, Class<'a, 'i>>,
    notes: Vec<Note>,
    bodies: Vec<Body>,
    body_index: HashMap<String, usize>,
    joints: Vec<Joint>,
    joint_index: HashMap<String, usize>,
    sites: HashMap<String, Site>,
}

impl<'a, 'i> Reader<'a, 'i> {
    fn err(&self, n: Node, message: impl Into<String>) -> ImportError {
        err_at(self.doc, n, message)
    }
    fn note(&mut self, n: Node, message: impl Into<String>) {
        let note = note_at(self.doc, n, message);
        self.notes.push(note);
    }

    /// `n` with its defaults: its `class` or the inherited `class`.
    fn el(&self, n: Node<'a, 'i>, inherited: &str) -> Result<El<'a, 'i>, ImportError> {
        let class = n.attribute("class").unwrap_or(inherited);
        if !self.classes.contains_key(class) && (class != "main" || n.has_attribute("class")) {
            return Err(self.err(
                n,
                format!(
                    "<{}> uses the default class `{class}`, which no <default> defines",
                    n.tag_name().name()
                ),
            ));
        }
        let tag = n.tag_name().name();
        let mut chain = vec![n];
        let mut c = Some(class.to_string());
        let mut seen = HashSet::new();
        while let Some(name) = c {
            if !seen.insert(name.clone()) {
                break;
            }
            let Some(class) = self.classes.get(&name) else {
                break;
            };
            chain.extend(
                class
                    .tags
                    .iter()
                    .filter(|(t, _)| *t == tag)
                    .map(|(_, node)| *node),
            );
            c = class.parent.clone();
        }
        Ok(El { chain })
    }

    /// A name attribute (no control characters: names go into comments).
    fn name_attr(&self, n: Node<'a, 'i>, attr: &str) -> Result<Option<&'a str>, ImportError> {
        match n.attribute(attr) {
            Some(s) if s.chars().any(char::is_control) => Err(self.err(
                n,
                format!(
                    "the `{attr}` of <{}> holds a control character: {s:?}",
                    n.tag_name().name()
                ),
            )),
            other => Ok(other),
        }
    }

    /// The numbers of attribute `name` (from the element or its defaults), their count in
    /// `counts`; `None` when absent.
    fn numbers(
        &self,
        el: &El<'a, 'i>,
        name: &str,
        counts: &[usize],
    ) -> Result<Option<Vec<f64>>, ImportError> {
        let Some((s, n)) = el.get(name) else {
            return Ok(None);
        };
        let tag = n.tag_name().name();
        let mut out = Vec::new();
        for part in s.split_whitespace() {
            match part.parse::<f64>() {
                Ok(x) if x.is_finite() => out.push(x),
                _ => {
                    return Err(self.err(
                        n,
                        format!("`{name}` of <{tag}> must hold finite numbers, found {s:?}"),
                    ))
                }
            }
        }
        if !counts.contains(&out.len()) {
            let want: Vec<String> = counts.iter().map(usize::to_string).collect();
            return Err(self.err(
                n,
                format!(
                    "`{name}` of <{tag}> must be {} number{}, found {s:?}",
                    want.join(" or "),
                    if counts == [1] { "" } else { "s" }
                ),
            ));
        }
        Ok(Some(out))
    }

    fn scalar(&self, el: &El<'a, 'i>, name: &str, default: f64) -> Result<f64, ImportError> {
        Ok(self
            .numbers(el, name, &[1])?
            .map(|v| v[0])
            .unwrap_or(default))
    }

    fn triple(&self, el: &El<'a, 'i>, name: &str, default: V3) -> Result<V3, ImportError> {
        Ok(self
            .numbers(el, name, &[3])?
            .map(|v| [v[0], v[1], v[2]])
            .unwrap_or(default))
    }

    /// A boolean attribute (`true`/`false`).
    fn boolean(&self, el: &El<'a, 'i>, name: &str) -> Result<Option<bool>, ImportError> {
        match el.get(name) {
            None => Ok(None),
            Some(("true", _)) => Ok(Some(true)),
            Some(("false", _)) => Ok(Some(false)),
            Some((s, n)) => Err(self.err(
                n,
                format!(
                    "`{name}` of <{}> must be `true` or `false`, found {s:?}",
                    n.tag_name().name()
                ),
            )),
        }
    }

    /// The orientation of a spatial frame (`quat`, `axisangle`, `euler`, `xyaxes`, `zaxis`:
    /// at most one), as MuJoCo's compiler resolves it: the unit quaternion, the quaternion as
    /// written (for `quat`), and the other forms as written (a comment).
    #[allow(clippy::type_complexity)]
    fn orientation(
        &self,
        el: &El<'a, 'i>,
    ) -> Result<(Quat, Option<Quat>, Option<String>), ImportError> {
        let forms = ["quat", "axisangle", "euler", "xyaxes", "zaxis"];
        let given: Vec<&str> = forms.iter().copied().filter(|f| el.has(f)).collect();
        if given.len() > 1 {
            return Err(self.err(
                el.node(),
                format!(
                    "<{}> gives its orientation twice ({}): use one of quat, axisangle, euler, xyaxes, zaxis",
                    el.node().tag_name().name(),
                    given.join(", ")
                ),
            ));
        }
        let Some(&form) = given.first() else {
            return Ok((IDENTITY_Q, None, None));
        };
        let node = el.get(form).map_or(el.node(), |(_, n)| n);
        let tag = node.tag_name().name();
        let bad = |what: &str| self.err(node, format!("`{form}` of <{tag}>: {what}"));
        let src = el.get(form).map(|(s, _)| s.trim().to_string());
        let src = src.map(|s| format!("{form}=\"{s}\""));
        match form {
            "quat" => {
                let v = self.numbers(el, "quat", &[4])?.unwrap_or_default();
                let q = [v[0], v[1], v[2], v[3]];
                let u = qnormalize(q).ok_or_else(|| bad("the zero quaternion"))?;
                Ok((u, Some(q), None))
            }
            "axisangle" => {
                let v = self.numbers(el, "axisangle", &[4])?.unwrap_or_default();
                let axis = [v[0], v[1], v[2]];
                let n = norm(axis);
                if n < MJ_EPS {
                    return Err(bad("the axis is zero"));
                }
                let a = self.compiler.angle(v[3]) / 2.0;
                let s = a.sin() / n;
                let src = src.map(|s| format!("{s} ({})", self.compiler.unit()));
                Ok(([a.cos(), s * axis[0], s * axis[1], s * axis[2]], None, src))
            }
            "euler" => {
                let v = self.numbers(el, "euler", &[3])?.unwrap_or_default();
                let mut q = IDENTITY_Q;
                for (k, &c) in self.compiler.eulerseq.iter().enumerate() {
                    let a = self.compiler.angle(v[k]) / 2.0;
                    let mut r = [a.cos(), 0.0, 0.0, 0.0];
                    r[1 + usize::from(c.to_ascii_lowercase() - b'x')] = a.sin();
                    // Lower case: axes that move with the frame (post-multiply); upper
                    // case: the parent's fixed axes (pre-multiply).
                    q = if c.is_ascii_lowercase() {
                        qmul(q, r)
                    } else {
                        qmul(r, q)
                    };
                }
                let q = qnormalize(q).ok_or_else(|| bad("not a rotation"))?;
                let seq = String::from_utf8_lossy(&self.compiler.eulerseq).into_owned();
                let src = src.map(|s| format!("{s} ({}, eulerseq {seq})", self.compiler.unit()));
                Ok((q, None, src))
            }
            "xyaxes" => {
                let v = self.numbers(el, "xyaxes", &[6])?.unwrap_or_default();
                let x = [v[0], v[1], v[2]];
                let nx = norm(x);
                if nx < MJ_EPS {
                    return Err(bad("the x axis is zero"));
                }
                let x = scale(1.0 / nx, x);
                let y = [v[3], v[4], v[5]];
                let y = sub(y, scale(dot(x, y), x));
                let ny = norm(y);
                if ny < MJ_EPS {
                    return Err(bad("the y axis is parallel to the x axis"));
                }
                let y = scale(1.0 / ny, y);
                let z = cross(x, y);
                let z = scale(1.0 / norm(z), z);
                let m = [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]];
                let q = qnormalize(mat_quat(&m)).ok_or_else(|| bad("not a rotation"))?;
                Ok((q, None, src))
            }
            _ => {
                let v = self.numbers(el, "zaxis", &[3])?.unwrap_or_default();
                let z = [v[0], v[1], v[2]];
                let n = norm(z);
                if n < MJ_EPS {
                    return Err(bad("the axis is zero"));
                }
                Ok((z_to_quat(scale(1.0 / n, z)), None, src))
            }
        }
    }
}

/// The minimal rotation taking `(0, 0, 1)` to the unit vector `z` (a half turn about x when
/// `z` is `(0, 0, −1)`), as MuJoCo's compiler takes it.
fn z_to_quat(z: V3) -> Quat {
    let c = cross([0.0, 0.0, 1.0], z);
    let s = norm(c);
    let axis = if s < 1e-10 {
        [1.0, 0.0, 0.0]
    } else {
        scale(1.0 / s, c)
    };
    let a = s.atan2(z[2]) / 2.0;
    [
        a.cos(),
        a.sin() * axis[0],
        a.sin() * axis[1],
        a.sin() * axis[2],
    ]
}

fn read_model(doc: &Document) -> Result<Model, ImportError> {
    let root = doc.root_element();
    if root.tag_name().name() != "mujoco" {
        return Err(err_at(
            doc,
            root,
            format!(
                "an MJCF file's root element is <mujoco>, found <{}>",
                root.tag_name().name()
            ),
        ));
    }
    let mut r = Reader {
        doc,
        compiler: Compiler::default(),
        classes: HashMap::new(),
        notes: Vec::new(),
        bodies: vec![Body {
            name: "world".into(),
            parent: 0,
            pos: [0.0; 3],
            quat: IDENTITY_Q,
            rot_src: None,
            quat_written: None,
            joints: Vec::new(),
            inertia: None,
        }],
        body_index: HashMap::from([("world".to_string(), 0)]),
        joints: Vec::new(),
        joint_index: HashMap::new(),
        sites: HashMap::new(),
    };
    let name = r.name_attr(root, "model")?.unwrap_or("model").to_string();
    // The compiler's settings hold for the whole file, wherever they stand; so do defaults.
    for n in elements(root) {
        match n.tag_name().name() {
            "compiler" => read_compiler(&mut r, n)?,
            "default" => read_default(&mut r, n, None)?,
            "include" => {
                return Err(r.err(
                    n,
                    "<include> is not supported: inline the included file first",
                ))
            }
            _ => {}
        }
    }
    let mut gravity = [0.0, 0.0, -9.81];
    let mut equality_nodes = Vec::new();
    let mut actuator_nodes = Vec::new();
    for n in elements(root) {
        match n.tag_name().name() {
            "compiler" | "default" => {}
            "option" => read_option(&mut r, n, &mut gravity)?,
            "worldbody" => {
                for c in elements(n) {
                    read_body_child(&mut r, c, 0, "main")?;
                }
            }
            "equality" => equality_nodes.push(n),
            "actuator" => actuator_nodes.push(n),
            tag @ ("asset" | "visual" | "statistic" | "size" | "custom" | "extension") => {
                r.note(n, format!("<{tag}> ignored (no dynamics)"))
            }
            "contact" => r.note(n, "<contact> ignored (contacts are not modelled)"),
            "sensor" => r.note(n, "<sensor> ignored (add outputs in the .mech)"),
            "keyframe" => r.note(n, "<keyframe> ignored (set the coordinates at run time)"),
            "tendon" => r.note(
                n,
                "<tendon> ignored (tendons are not imported: their springs, dampers and limits are missing)",
            ),
            other => r.note(
                n,
                format!("<{other}> ignored (not an MJCF element this importer knows)"),
            ),
        }
    }
    let mut equalities = Vec::new();
    for n in equality_nodes {
        for c in elements(n) {
            if let Some(e) = read_equality(&mut r, c)? {
                equalities.push(e);
            }
        }
    }
    let mut motors = Vec::new();
    for n in actuator_nodes {
        for c in elements(n) {
            if let Some(m) = read_actuator(&mut r, c)? {
                motors.push(m);
            }
        }
    }
    Ok(Model {
        name,
        gravity,
        compiler: r.compiler,
        bodies: r.bodies,
        joints: r.joints,
        equalities,
        motors,
        notes: r.notes,
    })
}

fn read_compiler(r: &mut Reader, n: Node) -> Result<(), ImportError> {
    for a in n.attributes() {
        let v = a.value();
        let bad = |r: &Reader, what: &str| {
            r.err(
                n,
                format!("`{}` of <compiler> must be {what}, found {v:?}", a.name()),
            )
        };
        match a.name() {
            "angle" => {
                r.compiler.degree = match v {
                    "degree" => true,
                    "radian" => false,
                    _ => return Err(bad(r, "`degree` or `radian`")),
                }
            }
            "eulerseq" => {
                let b = v.as_bytes();
                if b.len() != 3 || !b.iter().all(|c| b"xyzXYZ".contains(c)) {
                    return Err(bad(r, "three of the letters x, y, z, X, Y, Z"));
                }
                r.compiler.eulerseq = [b[0], b[1], b[2]];
            }
            "inertiafromgeom" => {
                r.compiler.inertia_from_geom = match v {
                    "true" => FromGeom::True,
                    "false" => FromGeom::False,
                    "auto" => FromGeom::Auto,
                    _ => return Err(bad(r, "`true`, `false` or `auto`")),
                }
            }
            "inertiagrouprange" => {
                let parts: Vec<Option<i64>> =
                    v.split_whitespace().map(|s| s.parse().ok()).collect();
                match parts[..] {
                    [Some(a), Some(b)] => r.compiler.group_range = (a, b),
                    _ => return Err(bad(r, "two integers")),
                }
            }
            "boundmass" | "boundinertia" => {
                let x = match v.trim().parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => x,
                    _ => return Err(bad(r, "a number not below zero")),
                };
                if a.name() == "boundmass" {
                    r.compiler.bound_mass = x;
                } else {
                    r.compiler.bound_inertia = x;
                }
            }
            "balanceinertia" => {
                r.compiler.balance_inertia = match v {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad(r, "`true` or `false`")),
                }
            }
            "coordinate" if v == "global" => {
                return Err(r.err(
                    n,
                    "`coordinate=\"global\"` is no longer MJCF (MuJoCo rejects it too): give frames in local coordinates",
                ))
            }
            "alignfree" if v == "true" => {
                return Err(r.err(
                    n,
                    "`alignfree=\"true\"` of <compiler> (free bodies' frames moved to their inertial frames) is not supported",
                ))
            }
            "settotalmass" => {
                return Err(r.err(
                    n,
                    "`settotalmass` of <compiler> is not supported: give the masses themselves",
                ))
            }
            "fusestatic" | "discardvisual" | "meshdir" | "texturedir" | "assetdir"
            | "strippath" | "autolimits" | "coordinate" | "usethread" | "exactmeshinertia"
            | "fitaabb" | "alignfree" | "saveinertial" => {}
            other => {
                let msg = format!("`{other}` of <compiler> ignored");
                r.note(n, msg);
            }
        }
    }
    for c in elements(n) {
        let msg = format!("<{}> in <compiler> ignored", c.tag_name().name());
        r.note(c, msg);
    }
    Ok(())
}

fn read_default<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
    parent: Option<String>,
) -> Result<(), ImportError> {
    let name = match (n.attribute("class"), &parent) {
        (Some(c), _) => c.to_string(),
        (None, None) => "main".to_string(),
        (None, Some(_)) => {
            return Err(r.err(n, "a nested <default> needs the attribute `class`"));
        }
    };
    if r.classes.contains_key(&name) {
        return Err(r.err(n, format!("the default class `{name}` is defined twice")));
    }
    let mut tags = Vec::new();
    let mut nested = Vec::new();
    for c in elements(n) {
        if c.tag_name().name() == "default" {
            nested.push(c);
        } else {
            tags.push((c.tag_name().name(), c));
        }
    }
    r.classes.insert(
        name.clone(),
        Class {
            parent: parent.clone(),
            tags,
        },
    );
    for c in nested {
        read_default(r, c, Some(name.clone()))?;
    }
    Ok(())
}

fn read_option(r: &mut Reader, n: Node, gravity: &mut V3) -> Result<(), ImportError> {
    let el = El { chain: vec![n] };
    *gravity = r.triple(&el, "gravity", *gravity)?;
    for a in n.attributes() {
        match a.name() {
            "gravity" => {}
            "density" | "viscosity" | "wind" | "magnetic" => {
                let zero = a
                    .value()
                    .split_whitespace()
                    .all(|s| s.parse::<f64>().is_ok_and(|x| x == 0.0));
                if !zero {
                    let msg = format!(
                        "`{}` of <option> ignored (fluid and field forces are not modelled)",
                        a.name()
                    );
                    r.note(n, msg);
                }
            }
            _ => {
                let msg = format!(
                    "`{}` of <option> ignored (a setting of MuJoCo's simulation)",
                    a.name()
                );
                r.note(n, msg);
            }
        }
    }
    for c in elements(n) {
        if c.tag_name().name() == "flag" {
            for a in c.attributes() {
                if a.name() == "gravity" && a.value() == "disable" {
                    *gravity = [0.0; 3];
                } else {
                    let msg = format!(
                        "`{}` of <flag> ignored (a setting of MuJoCo's simulation)",
                        a.name()
                    );
                    r.note(c, msg);
                }
            }
        } else {
            let msg = format!("<{}> in <option> ignored", c.tag_name().name());
            r.note(c, msg);
        }
    }
    Ok(())
}

/// An element inside `<worldbody>` or a `<body>` (`body`: its index).
fn read_body_child<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
    body: usize,
    class: &str,
) -> Result<(), ImportError> {
    let tag = n.tag_name().name();
    match tag {
        "body" => read_body(r, n, body, class),
        "geom" => {
            r.note(n, "<geom> ignored for contact (contacts are not modelled; a body without <inertial> takes its mass from its geoms)");
            Ok(())
        }
        "site" => {
            let el = r.el(n, class)?;
            let pos = r.triple(&el, "pos", [0.0; 3])?;
            let (quat, _, _) = r.orientation(&el)?;
            if let Some(name) = r.name_attr(n, "name")? {
                r.sites.insert(name.to_string(), Site { body, pos, quat });
            }
            r.note(n, "<site> kept as a place for equalities (no dynamics)");
            Ok(())
        }
        "camera" | "light" => {
            r.note(n, format!("<{tag}> ignored (no dynamics)"));
            Ok(())
        }
        "joint" | "freejoint" if body == 0 => Err(r.err(
            n,
            format!("<{tag}> in <worldbody>: the world does not move (put joints in a <body>)"),
        )),
        "inertial" if body == 0 => Err(r.err(n, "<inertial> in <worldbody>: the world has no mass")),
        "joint" | "freejoint" | "inertial" => Ok(()),
        "frame" | "replicate" | "attach" | "composite" | "flexcomp" | "plugin" | "skin" => {
            Err(r.err(
                n,
                format!("<{tag}> is not supported yet: write its bodies out (MuJoCo's `mj_saveLastXML` writes an equivalent plain file)"),
            ))
        }
        other => {
            r.note(n, format!("<{other}> in a body ignored (unknown element)"));
            Ok(())
        }
    }
}

fn read_body<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
    parent: usize,
    class: &str,
) -> Result<(), ImportError> {
    // The body's own elements take its childclass; `class` is not an attribute of <body>.
    let class = match n.attribute("childclass") {
        Some(c) => {
            if !r.classes.contains_key(c) {
                return Err(r.err(
                    n,
                    format!("the childclass `{c}` is not a class of any <default>"),
                ));
            }
            c.to_string()
        }
        None => class.to_string(),
    };
    let el = El { chain: vec![n] };
    let index = r.bodies.len();
    let name = match r.name_attr(n, "name")? {
        Some(s) => s.to_string(),
        None => format!("body{index}"),
    };
    if r.body_index.insert(name.clone(), index).is_some() {
        return Err(r.err(n, format!("two bodies are named `{name}`")));
    }
    let pos = r.triple(&el, "pos", [0.0; 3])?;
    let (quat, quat_written, rot_src) = r.orientation(&el)?;
    if r.boolean(&el, "mocap")? == Some(true) {
        return Err(r.err(
            n,
            format!(
                "body `{name}` is a mocap body (moved by the user, not by dynamics): not supported"
            ),
        ));
    }
    if r.scalar(&el, "gravcomp", 0.0)? != 0.0 {
        return Err(r.err(
            n,
            format!("body `{name}`: gravity compensation (`gravcomp`) is not supported"),
        ));
    }
    r.bodies.push(Body {
        name: name.clone(),
        parent,
        pos,
        quat,
        rot_src,
        quat_written,
        joints: Vec::new(),
        inertia: None,
    });
    // Joints first (their order is the order of the motions), then the mass, then children.
    let mut inertial = None;
    let mut geoms = Vec::new();
    for c in elements(n) {
        match c.tag_name().name() {
            "joint" => {
                let j = read_joint(r, c, index, &class)?;
                r.bodies[index].joints.push(j);
            }
            "freejoint" => {
                let j = read_joint(r, c, index, &class)?;
                r.bodies[index].joints.push(j);
            }
            "inertial" => {
                if inertial.is_some() {
                    return Err(r.err(c, format!("body `{name}` has a second <inertial>")));
                }
                inertial = Some(c);
            }
            "geom" => geoms.push(c),
            _ => {}
        }
    }
    let from_geoms = match r.compiler.inertia_from_geom {
        FromGeom::True => true,
        FromGeom::Auto => inertial.is_none(),
        FromGeom::False => false,
    };
    let mut inertia = match inertial {
        Some(c) if !from_geoms => Some(read_inertial(r, c, &name)?),
        _ => None,
    };
    if from_geoms {
        inertia = geom_inertia(r, &geoms, &class, &name)?;
    } else if inertial.is_none() {
        return Err(r.err(
            n,
            format!("body `{name}` has no <inertial> and the compiler's inertiafromgeom is false"),
        ));
    }
    let inertia = match inertia {
        Some(i) => Some(bound_and_check(r, n, &name, i)?),
        None => None,
    };
    r.bodies[index].inertia = inertia;
    for c in elements(n) {
        read_body_child(r, c, index, &class)?;
    }
    Ok(())
}

/// `<compiler boundmass boundinertia balanceinertia>` applied, and MuJoCo's check that the
/// principal moments satisfy the triangle inequality.
fn bound_and_check(
    r: &Reader,
    n: Node,
    name: &str,
    inertia: Inertia,
) -> Result<Inertia, ImportError> {
    let c = &r.compiler;
    match inertia {
        Inertia::Principal {
            mass,
            pos,
            quat,
            rot_src,
            moments,
        } => {
            let mass = mass.max(c.bound_mass);
            let mut m = moments.map(|x| x.max(c.bound_inertia));
            if m[0] + m[1] < m[2] || m[0] + m[2] < m[1] || m[1] + m[2] < m[0] {
                if c.balance_inertia {
                    let a = (m[0] + m[1] + m[2]) / 3.0;
                    m = [a; 3];
                } else {
                    return Err(r.err(
                        n,
                        format!("body `{name}`: the principal moments of inertia {} {} {} violate A + B >= C (MuJoCo rejects them too; `<compiler balanceinertia=\"true\"/>` evens them out)", num(m[0]), num(m[1]), num(m[2])),
                    ));
                }
            }
            Ok(Inertia::Principal {
                mass,
                pos,
                quat,
                rot_src,
                moments: m,
            })
        }
        Inertia::Tensor {
            mass,
            pos,
            tensor,
            from_geoms,
        } => {
            // The bounds act on principal moments, which a tensor does not show: applied
            // only when they are zero (the default) would be exact; otherwise an error.
            if c.bound_inertia > 0.0 || c.balance_inertia {
                return Err(r.err(
                    n,
                    format!("body `{name}`: boundinertia and balanceinertia are supported for <inertial diaginertia> only"),
                ));
            }
            Ok(Inertia::Tensor {
                mass: mass.max(c.bound_mass),
                pos,
                tensor,
                from_geoms,
            })
        }
    }
}

fn read_inertial<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
    body: &str,
) -> Result<Inertia, ImportError> {
    let el = El { chain: vec![n] };
    let pos = r
        .numbers(&el, "pos", &[3])?
        .ok_or_else(|| r.err(n, format!("the <inertial> of body `{body}` needs `pos`")))?;
    let pos = [pos[0], pos[1], pos[2]];
    let mass = r
        .numbers(&el, "mass", &[1])?
        .ok_or_else(|| r.err(n, format!("the <inertial> of body `{body}` needs `mass`")))?[0];
    if mass < 0.0 {
        return Err(r.err(n, format!("the mass of body `{body}` is negative ({mass})")));
    }
    let (quat, _, rot_src) = r.orientation(&el)?;
    let full = r.numbers(&el, "fullinertia", &[6])?;
    let diag_i = r.numbers(&el, "diaginertia", &[3])?;
    match (full, diag_i) {
        (Some(_), Some(_)) => Err(r.err(
            n,
            format!("the <inertial> of body `{body}` gives both diaginertia and fullinertia"),
        )),
        (Some(f), None) => {
            if ["quat", "axisangle", "euler", "xyaxes", "zaxis"]
                .iter()
                .any(|a| n.has_attribute(*a))
            {
                return Err(r.err(n, format!("the <inertial> of body `{body}`: fullinertia is in the body's axes, an orientation cannot go with it")));
            }
            let t = [[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]];
            // Positive definite (MuJoCo's compiler rejects it otherwise): leading minors.
            let d2 = t[0][0] * t[1][1] - t[0][1] * t[0][1];
            let d3 = t[0][0] * (t[1][1] * t[2][2] - t[1][2] * t[2][1])
                - t[0][1] * (t[1][0] * t[2][2] - t[1][2] * t[2][0])
                + t[0][2] * (t[1][0] * t[2][1] - t[1][1] * t[2][0]);
            if !(t[0][0] > 0.0 && d2 > 0.0 && d3 > 0.0) {
                return Err(r.err(
                    n,
                    format!("the fullinertia of body `{body}` is not positive definite"),
                ));
            }
            Ok(Inertia::Tensor {
                mass,
                pos,
                tensor: t,
                from_geoms: 0,
            })
        }
        (None, Some(d)) => {
            if d.iter().any(|&x| x < 0.0) {
                return Err(r.err(
                    n,
                    format!("the diaginertia of body `{body}` has a negative moment"),
                ));
            }
            Ok(Inertia::Principal {
                mass,
                pos,
                quat,
                rot_src,
                moments: [d[0], d[1], d[2]],
            })
        }
        (None, None) => Err(r.err(
            n,
            format!("the <inertial> of body `{body}` needs diaginertia or fullinertia"),
        )),
    }
}

/// The mass properties of a body from its geoms, as MuJoCo infers them (uniform density,
/// volumes and principal moments of each shape, summed about the common centre of mass);
/// `None` for no mass.
fn geom_inertia<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    geoms: &[Node<'a, 'i>],
    class: &str,
    body: &str,
) -> Result<Option<Inertia>, ImportError> {
    // (mass, centre, tensor about the centre in body axes)
    let mut parts: Vec<(f64, V3, M3)> = Vec::new();
    for &g in geoms {
        let el = r.el(g, class)?;
        let group = r.scalar(&el, "group", 0.0)?;
        if group < r.compiler.group_range.0 as f64 || group > r.compiler.group_range.1 as f64 {
            continue;
        }
        let ty = el.get("type").map_or("sphere", |(t, _)| t);
        let type_node = el.get("type").map_or(g, |(_, n)| n);
        if r.boolean(&el, "shellinertia")? == Some(true) {
            return Err(r.err(
                g,
                format!("body `{body}`: shell inertia of geoms is not supported (a body without <inertial> takes its inertia from its geoms)"),
            ));
        }
        let size = r.numbers(&el, "size", &[1, 2, 3])?.unwrap_or_default();
        let s = |k: usize| size.get(k).copied().unwrap_or(0.0);
        let mut size = [s(0), s(1), s(2)];
        let mut pos = r.triple(&el, "pos", [0.0; 3])?;
        let (mut quat, _, _) = r.orientation(&el)?;
        if let Some(ft) = r.numbers(&el, "fromto", &[6])? {
            if !["capsule", "cylinder", "box", "ellipsoid"].contains(&ty) {
                return Err(r.err(
                    g,
                    format!("`fromto` needs a capsule, cylinder, box or ellipsoid, not a {ty}"),
                ));
            }
            if g.has_attribute("pos") {
                return Err(r.err(g, "a geom with `fromto` cannot also have `pos`"));
            }
            let v = [ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]];
            let l = norm(v);
            if l / 2.0 < MJ_EPS {
                return Err(r.err(g, "the points of `fromto` coincide"));
            }
            size[1] = l / 2.0;
            if ty == "box" || ty == "ellipsoid" {
                size[2] = size[1];
                size[1] = size[0];
            }
            pos = [
                (ft[0] + ft[3]) / 2.0,
                (ft[1] + ft[4]) / 2.0,
                (ft[2] + ft[5]) / 2.0,
            ];
            quat = z_to_quat(scale(1.0 / l, v));
        }
        let [a, b, c] = size;
        // Volume and principal moments per unit mass.
        let (volume, unit): (f64, V3) = match ty {
            "sphere" => (4.0 * PI * a * a * a / 3.0, [2.0 * a * a / 5.0; 3]),
            "capsule" => {
                let h = 2.0 * b;
                let volume = PI * (a * a * h + 4.0 * a * a * a / 3.0);
                // Two hemispheres (as one sphere, displaced) and a cylinder, per unit mass.
                let ms = 4.0 * a / (4.0 * a + 3.0 * h);
                let mc = 1.0 - ms;
                let lateral = mc * (3.0 * a * a + h * h) / 12.0
                    + 2.0 * ms * a * a / 5.0
                    + ms * h * (3.0 * a + 2.0 * h) / 8.0;
                let axial = mc * a * a / 2.0 + 2.0 * ms * a * a / 5.0;
                (volume, [lateral, lateral, axial])
            }
            "cylinder" => {
                let h = 2.0 * b;
                let lateral = (3.0 * a * a + h * h) / 12.0;
                (PI * a * a * h, [lateral, lateral, a * a / 2.0])
            }
            "ellipsoid" => (
                4.0 * PI * a * b * c / 3.0,
                [
                    (b * b + c * c) / 5.0,
                    (a * a + c * c) / 5.0,
                    (a * a + b * b) / 5.0,
                ],
            ),
            "box" => (
                8.0 * a * b * c,
                [
                    (b * b + c * c) / 3.0,
                    (a * a + c * c) / 3.0,
                    (a * a + b * b) / 3.0,
                ],
            ),
            "plane" => (0.0, [0.0; 3]),
            "mesh" | "sdf" | "hfield" => {
                return Err(r.err(
                    g,
                    format!("body `{body}` takes its inertia from its geoms, and the {ty} geom's volume is not computed here: give the body an <inertial>"),
                ))
            }
            other => {
                return Err(r.err(
                    type_node,
                    format!("unknown geom type `{other}` (MJCF: plane, hfield, sphere, capsule, ellipsoid, cylinder, box, mesh, sdf)"),
                ))
            }
        };
        let mass = match r.numbers(&el, "mass", &[1])? {
            Some(m) if m[0] < 0.0 => {
                return Err(r.err(g, format!("a geom of body `{body}` has a negative mass")))
            }
            Some(m) if volume > MJ_EPS || m[0] == 0.0 => m[0],
            Some(_) => 0.0,
            None => {
                let density = r.scalar(&el, "density", 1000.0)?;
                if density < 0.0 {
                    return Err(r.err(g, format!("a geom of body `{body}` has a negative density")));
                }
                density * volume
            }
        };
        if mass == 0.0 {
            continue;
        }
        parts.push((mass, pos, rotate_tensor(quat, &diag(scale(mass, unit)))));
    }
    let total: f64 = parts.iter().map(|p| p.0).sum();
    if parts.is_empty() || total <= 0.0 {
        return Ok(None);
    }
    let com = scale(
        1.0 / total,
        parts
            .iter()
            .fold([0.0; 3], |acc, (m, p, _)| add(acc, scale(*m, *p))),
    );
    let mut tensor = [[0.0; 3]; 3];
    for (m, p, t) in &parts {
        let d = sub(*p, com);
        let dd = dot(d, d);
        let shift: M3 = std::array::from_fn(|i| {
            std::array::from_fn(|j| m * (if i == j { dd } else { 0.0 } - d[i] * d[j]))
        });
        tensor = madd(&tensor, &madd(t, &shift));
    }
    // Exactly symmetric (the rotated terms are, up to rounding).
    let tensor =
        std::array::from_fn(|i| std::array::from_fn(|j| 0.5 * (tensor[i][j] + tensor[j][i])));
    Ok(Some(Inertia::Tensor {
        mass: total,
        pos: com,
        tensor,
        from_geoms: parts.len(),
    }))
}

/// A `<joint>` (with its defaults) or a `<freejoint>` (without: MuJoCo's shortcut ignores
/// them) of body `body`.
fn read_joint<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
    body: usize,
    class: &str,
) -> Result<usize, ImportError> {
    let freejoint = n.tag_name().name() == "freejoint";
    let el = if freejoint {
        El { chain: vec![n] }
    } else {
        r.el(n, class)?
    };
    let name = match r.name_attr(n, "name")? {
        Some(s) => s.to_string(),
        None => format!("joint{}", r.joints.len()),
    };
    let ty = if freejoint {
        "free"
    } else {
        el.get("type").map_or("hinge", |(t, _)| t)
    };
    let kind = match ty {
        "hinge" => JointKind::Hinge,
        "slide" => JointKind::Slide,
        "ball" => JointKind::Ball,
        "free" => JointKind::Free,
        other => {
            return Err(r.err(
                n,
                format!(
                "joint `{name}` has the unknown type `{other}` (MJCF: hinge, slide, ball, free)"
            ),
            ))
        }
    };
    let scalar = matches!(kind, JointKind::Hinge | JointKind::Slide);
    let axis = r.triple(&el, "axis", [0.0, 0.0, 1.0])?;
    if scalar && norm(axis) < 1e-14 {
        return Err(r.err(n, format!("joint `{name}` has the zero axis")));
    }
    if kind == JointKind::Free {
        if r.bodies[body].parent != 0 {
            return Err(r.err(
                n,
                format!("joint `{name}`: a free joint is allowed in a child of the world only (MuJoCo's rule)"),
            ));
        }
        if !r.bodies[body].joints.is_empty() {
            return Err(r.err(
                n,
                format!("joint `{name}`: a free joint must be its body's only joint"),
            ));
        }
        let align = el.get("align").map(|(v, _)| v);
        if align == Some("true") {
            return Err(r.err(
                n,
                format!("joint `{name}`: `align=\"true\"` (body frame moved to the inertial frame) is not supported"),
            ));
        }
    } else if r.bodies[body]
        .joints
        .iter()
        .any(|&j| r.joints[j].kind == JointKind::Free)
    {
        return Err(r.err(
            n,
            format!("joint `{name}`: its body has a free joint, which must be its only joint"),
        ));
    }
    let compiler = r.compiler.clone();
    let angle = |x: f64| {
        if matches!(kind, JointKind::Hinge | JointKind::Ball) {
            compiler.angle(x)
        } else {
            x
        }
    };
    let poly = |r: &Reader<'a, 'i>, what: &str| -> Result<[f64; 3], ImportError> {
        let v = r.numbers(&el, what, &[1, 2, 3])?.unwrap_or_default();
        Ok(std::array::from_fn(|k| v.get(k).copied().unwrap_or(0.0)))
    };
    let stiffness = poly(r, "stiffness")?;
    let damping = poly(r, "damping")?;
    let armature = r.scalar(&el, "armature", 0.0)?;
    if armature < 0.0 || damping[0] < 0.0 || stiffness[0] < 0.0 {
        return Err(r.err(
            n,
            format!("joint `{name}`: stiffness, damping and armature cannot be negative"),
        ));
    }
    if !scalar
        && (stiffness.iter().any(|&x| x != 0.0)
            || armature != 0.0
            || damping[1..].iter().any(|&x| x != 0.0))
    {
        return Err(r.err(
            n,
            format!("joint `{name}`: stiffness, armature and nonlinear damping of {ty} joints are not supported yet (linear damping is)"),
        ));
    }
    if let Some(sd) = r.numbers(&el, "springdamper", &[2])? {
        if sd[0] > 0.0 && sd[1] > 0.0 {
            return Err(r.err(
                n,
                format!("joint `{name}`: `springdamper` (stiffness and damping from a time constant) is not supported: give stiffness and damping"),
            ));
        }
    }
    let limited = el.get("limited").map(|(v, _)| v);
    let range = r
        .numbers(&el, "range", &[2])?
        .filter(|_| limited != Some("false"))
        .map(|v| [angle(v[0]), angle(v[1])]);
    let friction = r.scalar(&el, "frictionloss", 0.0)?;
    if friction != 0.0 {
        r.note(
            n,
            format!(
                "the frictionloss {} of joint `{name}` is not modelled",
                num(friction)
            ),
        );
    }
    let joint = Joint {
        name: name.clone(),
        kind,
        body,
        pos: r.triple(&el, "pos", [0.0; 3])?,
        axis,
        reference: if scalar {
            angle(r.scalar(&el, "ref", 0.0)?)
        } else {
            0.0
        },
        springref: if scalar {
            angle(r.scalar(&el, "springref", 0.0)?)
        } else {
            0.0
        },
        stiffness,
        damping,
        armature,
        range,
    };
    let k = r.joints.len();
    if r.joint_index.insert(name.clone(), k).is_some() {
        return Err(r.err(n, format!("two joints are named `{name}`")));
    }
    r.joints.push(joint);
    Ok(k)
}

/// The pose of each body in the world at `qpos0` (every joint at its `ref`: the model as
/// written).
fn rest_poses(bodies: &[Body]) -> Vec<Pose> {
    let mut poses = vec![Pose::identity(); bodies.len()];
    for k in 1..bodies.len() {
        let b = &bodies[k];
        poses[k] = poses[b.parent].then(&Pose::new(b.pos, b.quat));
    }
    poses
}

/// The pose of each body in the world with the joint coordinates `q` (per joint: one value,
/// a quaternion for a ball joint, position and quaternion for a free joint; MuJoCo's
/// kinematics: each joint's motion after the body's placement, in the order of the joints).
fn poses_at(bodies: &[Body], joints: &[Joint], q: &[Vec<f64>]) -> Vec<Pose> {
    let mut poses = vec![Pose::identity(); bodies.len()];
    for k in 1..bodies.len() {
        let b = &bodies[k];
        let mut p = poses[b.parent].then(&Pose::new(b.pos, b.quat));
        for &j in &b.joints {
            let jt = &joints[j];
            let v = &q[j];
            let x = v[0] - jt.reference;
            let u = scale(1.0 / norm(jt.axis), jt.axis);
            let unit = |w: &[f64]| qnormalize([w[0], w[1], w[2], w[3]]).unwrap_or(IDENTITY_Q);
            p = match jt.kind {
                JointKind::Ball => p
                    .then(&Pose::new(jt.pos, IDENTITY_Q))
                    .then(&Pose::new([0.0; 3], unit(v)))
                    .then(&Pose::new(scale(-1.0, jt.pos), IDENTITY_Q)),
                JointKind::Free => Pose::new([v[0], v[1], v[2]], unit(&v[3..])),
                JointKind::Hinge => {
                    let (s, c) = (x / 2.0).sin_cos();
                    let turn = Pose::new([0.0; 3], [c, s * u[0], s * u[1], s * u[2]]);
                    p.then(&Pose::new(jt.pos, IDENTITY_Q))
                        .then(&turn)
                        .then(&Pose::new(scale(-1.0, jt.pos), IDENTITY_Q))
                }
                JointKind::Slide => p.then(&Pose::new(scale(x, u), IDENTITY_Q)),
            };
        }
        poses[k] = p;
    }
    poses
}

/// The rows of a connect (3) or weld (6) equality at the body poses `poses`, as they are
/// emitted.
fn equality_rows(kind: &EqKind, poses: &[Pose]) -> Vec<f64> {
    match kind {
        EqKind::Connect { b1, b2, a1, a2 } => {
            sub(poses[*b1].point(*a1), poses[*b2].point(*a2)).to_vec()
        }
        EqKind::Weld { b1, b2, f1, f2 } => {
            let target = poses[*b1].then(f1);
            let source = poses[*b2].then(f2);
            let e = target.inverse().then(&source).rot;
            let mut rows = sub(target.pos, source.pos).to_vec();
            rows.extend([e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1]]);
            rows
        }
        EqKind::Joint { .. } => Vec::new(),
    }
}

/// Which rows of each equality move with the coordinates: a row that keeps its value at
/// random configurations (the out-of-plane row of a connect in a planar linkage) says
/// nothing, and mechgen rejects a constraint on no coordinate; it is left out if it holds,
/// an error if it never does.
fn live_rows(model: &Model) -> Result<Vec<Vec<bool>>, ImportError> {
    // A fixed-seed generator: the same file gives the same text.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut random = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let configs: Vec<Vec<Vec<f64>>> = (0..8)
        .map(|_| {
            model
                .joints
                .iter()
                .map(|j| match j.kind {
                    JointKind::Hinge | JointKind::Slide => vec![j.reference + 3.0 * random()],
                    JointKind::Ball => (0..4).map(|_| random()).collect(),
                    JointKind::Free => (0..7).map(|_| random()).collect(),
                })
                .collect()
        })
        .collect();
    let rows: Vec<Vec<Vec<f64>>> = configs
        .iter()
        .map(|q| {
            let poses = poses_at(&model.bodies, &model.joints, q);
            model
                .equalities
                .iter()
                .map(|e| equality_rows(&e.kind, &poses))
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for (k, e) in model.equalities.iter().enumerate() {
        let n = rows[0][k].len();
        let mut live = Vec::new();
        for r in 0..n {
            let values: Vec<f64> = rows.iter().map(|c| c[k][r]).collect();
            let size = values.iter().fold(1.0f64, |a, v| a.max(v.abs()));
            let spread = values
                .iter()
                .fold(0.0f64, |a, v| a.max((v - values[0]).abs()));
            let moving = spread > 1e-9 * size;
            if !moving && values[0].abs() > 1e-9 * size {
                return Err(ImportError {
                    message: format!(
                        "equality{} (row {}) can never hold: it does not move with the joints and is off by {}",
                        e.name.as_ref().map(|n| format!(" `{n}`")).unwrap_or_default(),
                        r + 1,
                        num(values[0])
                    ),
                    line: e.line,
                    column: e.column,
                });
            }
            live.push(moving);
        }
        out.push(live);
    }
    Ok(out)
}

fn read_equality<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
) -> Result<Option<Equality>, ImportError> {
    let tag = n.tag_name().name();
    let el = r.el(n, "main")?;
    let name = r.name_attr(n, "name")?.map(str::to_string);
    let (line, column) = pos_of(r.doc, n);
    if !["connect", "weld", "joint"].contains(&tag) {
        return Err(r.err(
            n,
            format!("<{tag}> equality constraints are not supported (connect, weld and joint are)"),
        ));
    }
    if r.boolean(&el, "active")? == Some(false) {
        r.note(
            n,
            format!("<{tag}> equality inactive (`active=\"false\"`): not imposed"),
        );
        return Ok(None);
    }
    if el.has("solref") || el.has("solimp") {
        r.note(
            n,
            "solref/solimp ignored: the equality is imposed exactly, not by MuJoCo's soft constraint",
        );
    }
    let body = |r: &Reader<'a, 'i>, attr: &str, required: bool| -> Result<usize, ImportError> {
        match el.get(attr) {
            Some((b, node)) => r.body_index.get(b).copied().ok_or_else(|| {
                r.err(
                    node,
                    format!(
                        "<{tag}>: `{attr}` names the body `{b}`, which is not a body of the model"
                    ),
                )
            }),
            None if required => Err(r.err(n, format!("<{tag}> needs `{attr}`"))),
            None => Ok(0),
        }
    };
    let site = |r: &Reader<'a, 'i>, attr: &str| -> Result<(usize, Pose), ImportError> {
        let (s, node) = el
            .get(attr)
            .ok_or_else(|| r.err(n, format!("<{tag}> with sites needs `{attr}`")))?;
        let site = r.sites.get(s).ok_or_else(|| {
            r.err(
                node,
                format!("<{tag}>: `{attr}` names the site `{s}`, which is not a named site of the model"),
            )
        })?;
        Ok((site.body, Pose::new(site.pos, site.quat)))
    };
    let with_sites = el.has("site1") || el.has("site2");
    let poses = rest_poses(&r.bodies);
    let kind = match tag {
        "connect" => {
            if with_sites {
                let (b1, p1) = site(r, "site1")?;
                let (b2, p2) = site(r, "site2")?;
                EqKind::Connect {
                    b1,
                    b2,
                    a1: p1.pos,
                    a2: p2.pos,
                }
            } else {
                let b1 = body(r, "body1", true)?;
                let b2 = body(r, "body2", false)?;
                let a1 = r
                    .numbers(&el, "anchor", &[3])?
                    .ok_or_else(|| r.err(n, "<connect> needs `anchor`"))?;
                let a1 = [a1[0], a1[1], a1[2]];
                // Body 2's point: the anchor where the model as written puts it.
                let world = poses[b1].point(a1);
                let a2 = poses[b2].inverse().point(world);
                EqKind::Connect { b1, b2, a1, a2 }
            }
        }
        "weld" => {
            if with_sites {
                let (b1, f1) = site(r, "site1")?;
                let (b2, f2) = site(r, "site2")?;
                EqKind::Weld {
                    b1,
                    b2,
                    f1: Box::new(f1),
                    f2: Box::new(f2),
                }
            } else {
                let b1 = body(r, "body1", true)?;
                let b2 = body(r, "body2", false)?;
                let anchor = r.triple(&el, "anchor", [0.0; 3])?;
                let relpose = r.numbers(&el, "relpose", &[7])?;
                // Body 2's weld point is `anchor`; body 1's is `relpose`'s position, and body
                // 2's orientation relative to body 1 its quaternion.
                let f1 = match relpose {
                    Some(v) if v[3..].iter().any(|&x| x != 0.0) => {
                        let q = qnormalize([v[3], v[4], v[5], v[6]])
                            .ok_or_else(|| r.err(n, "the quaternion of `relpose` is zero"))?;
                        Pose::new([v[0], v[1], v[2]], q)
                    }
                    // A zero quaternion (the default): both as the model is written.
                    _ => poses[b1]
                        .inverse()
                        .then(&poses[b2])
                        .then(&Pose::new(anchor, IDENTITY_Q)),
                };
                EqKind::Weld {
                    b1,
                    b2,
                    f1: Box::new(f1),
                    f2: Box::new(Pose::new(anchor, IDENTITY_Q)),
                }
            }
        }
        _ => {
            let joint = |r: &Reader<'a, 'i>, attr: &str| -> Result<Option<usize>, ImportError> {
                el.get(attr)
                    .map(|(j, node)| {
                        r.joint_index
                            .get(j)
                            .copied()
                            .filter(|&k| {
                                matches!(r.joints[k].kind, JointKind::Hinge | JointKind::Slide)
                            })
                            .ok_or_else(|| {
                                r.err(
                                    node,
                                    format!("<joint> equality: `{attr}` names `{j}`, which is not a hinge or slide joint of the model"),
                                )
                            })
                    })
                    .transpose()
            };
            let j1 =
                joint(r, "joint1")?.ok_or_else(|| r.err(n, "<joint> equality needs `joint1`"))?;
            let j2 = joint(r, "joint2")?;
            let c = r
                .numbers(&el, "polycoef", &[5])?
                .unwrap_or(vec![0.0, 1.0, 0.0, 0.0, 0.0]);
            EqKind::Joint {
                j1,
                j2,
                coef: [c[0], c[1], c[2], c[3], c[4]],
            }
        }
    };
    Ok(Some(Equality {
        name,
        kind,
        line,
        column,
    }))
}

fn read_actuator<'a, 'i>(
    r: &mut Reader<'a, 'i>,
    n: Node<'a, 'i>,
) -> Result<Option<Motor>, ImportError> {
    let tag = n.tag_name().name();
    if !["motor", "position", "velocity"].contains(&tag) {
        r.note(
            n,
            format!("<{tag}> actuator ignored (motor, position and velocity actuators only: add its force in the .mech)"),
        );
        return Ok(None);
    }
    let el = r.el(n, "main")?;
    let name = r.name_attr(n, "name")?;
    let Some((joint, node)) = el.get("joint") else {
        r.note(
            n,
            format!("<{tag}> on a tendon, site or body ignored (joint actuators only)"),
        );
        return Ok(None);
    };
    let drive = match tag {
        "position" => {
            for (attr, what) in [
                ("dampratio", "damping in units of the damping ratio"),
                ("timeconst", "a first-order filter (activation dynamics)"),
                ("inheritrange", "ctrlrange from the joint's range"),
            ] {
                if r.scalar(&el, attr, 0.0)? != 0.0 {
                    return Err(r.err(
                        n,
                        format!("<position>: `{attr}` ({what}) is not supported: give kp and kv"),
                    ));
                }
            }
            Drive::Position {
                kp: r.scalar(&el, "kp", 1.0)?,
                kv: r.scalar(&el, "kv", 0.0)?,
            }
        }
        "velocity" => Drive::Velocity {
            kv: r.scalar(&el, "kv", 1.0)?,
        },
        _ => Drive::Motor,
    };
    let joint = r
        .joint_index
        .get(joint)
        .copied()
        .filter(|&j| matches!(r.joints[j].kind, JointKind::Hinge | JointKind::Slide))
        .ok_or_else(|| {
            r.err(
                node,
                format!("<motor>: `joint` names `{joint}`, which is not a hinge or slide joint of the model (motors on ball and free joints are not supported yet)"),
            )
        })?;
    let gear = r
        .numbers(&el, "gear", &[1, 2, 3, 4, 5, 6])?
        .map_or(1.0, |g| g[0]);
    let limited = |attr: &str| el.get(attr).map(|(v, _)| v) != Some("false");
    let ctrlrange = r
        .numbers(&el, "ctrlrange", &[2])?
        .filter(|_| limited("ctrllimited"))
        .map(|v| [v[0], v[1]]);
    let forcerange = r
        .numbers(&el, "forcerange", &[2])?
        .filter(|_| limited("forcelimited"))
        .map(|v| [v[0], v[1]]);
    let name = name.map_or_else(|| format!("motor_{}", r.joints[joint].name), str::to_string);
    Ok(Some(Motor {
        name,
        joint,
        gear,
        drive,
        ctrlrange,
        forcerange,
    }))
}

// ---------------------------------------------------------------------------------------
// Writing

/// A rotation as a factor of a frame product (`None`: the identity).
fn rotation_factor(quat: Quat, written: Option<Quat>, src: &Option<String>) -> Option<String> {
    if quat == IDENTITY_Q {
        return None;
    }
    let q = written.unwrap_or(quat);
    let text = format!(
        "quat({}, {}, {}, {})",
        num(q[0]),
        num(q[1]),
        num(q[2]),
        num(q[3])
    );
    Some(match src {
        Some(s) => format!("{text} /* {s} */"),
        None => text,
    })
}

/// A placement `(pos, rotation)` as a factor (`None`: the identity).
fn placement(pos: V3, rotation: Option<String>) -> Option<String> {
    let moves = pos.iter().any(|&x| x != 0.0);
    match (moves, rotation) {
        (false, None) => None,
        (true, None) => Some(format!("translate({})", vec3(pos))),
        (false, Some(r)) => Some(r),
        (true, Some(r)) => Some(format!("frame({}, {r})", vec3(pos))),
    }
}

/// A pose as a frame factor (`None`: the identity).
fn pose_factor(p: &Pose) -> Option<String> {
    let q = mat_quat(&p.rot);
    let q = if q[0] < 0.0 { q.map(|x| -x) } else { q };
    let rot = (q != IDENTITY_Q).then(|| {
        format!(
            "quat({}, {}, {}, {})",
            num(q[0]),
            num(q[1]),
            num(q[2]),
            num(q[3])
        )
    });
    placement(p.pos, rot)
}

/// The signed coordinate axis `axis` is along (`Some((i, sign))`), if it is one.
fn coordinate_axis(axis: V3) -> Option<(usize, f64)> {
    let nonzero: Vec<usize> = (0..3).filter(|&i| axis[i] != 0.0).collect();
    match nonzero[..] {
        [i] => Some((i, axis[i].signum())),
        _ => None,
    }
}

/// The motion of joint `j` with its coordinates `qs` as frame factors (a free joint: the
/// body's whole placement in the world).
fn motion(j: &Joint, qs: &[String]) -> Vec<String> {
    let pivot = |turn: String| {
        if j.pos.iter().any(|&x| x != 0.0) {
            vec![
                format!("translate({})", vec3(j.pos)),
                turn,
                format!("translate({})", vec3(scale(-1.0, j.pos))),
            ]
        } else {
            vec![turn]
        }
    };
    let q = &qs[0];
    // The joint's displacement `q − ref`: bare as a lone argument, parenthesised in a product.
    let (bare, value) = if j.reference == 0.0 {
        (q.to_string(), q.to_string())
    } else {
        let d = if j.reference > 0.0 {
            format!("{q} - {}", num(j.reference))
        } else {
            format!("{q} + {}", num(-j.reference))
        };
        (d.clone(), format!("({d})"))
    };
    let signed = |sign: f64| {
        if sign < 0.0 {
            format!("-{value}")
        } else {
            bare.clone()
        }
    };
    match j.kind {
        JointKind::Ball => pivot(format!("rot_quat({})", qs.join(", "))),
        JointKind::Free => vec![free_motion(qs)],
        JointKind::Hinge => {
            let turn = match coordinate_axis(j.axis) {
                Some((i, sign)) => format!("rot_{}({})", ["x", "y", "z"][i], signed(sign)),
                None => format!("axis_angle({}, {bare})", vec3(j.axis)),
            };
            pivot(turn)
        }
        JointKind::Slide => vec![match coordinate_axis(j.axis) {
            Some((i, sign)) => {
                let mut parts = ["0.0".to_string(), "0.0".to_string(), "0.0".to_string()];
                parts[i] = signed(sign);
                format!("translate(vec3({}, {}, {}))", parts[0], parts[1], parts[2])
            }
            None => format!(
                "translate({value} * {})",
                vec3(scale(1.0 / norm(j.axis), j.axis))
            ),
        }],
    }
}

/// `c0 + c1 x + c2 x² + …` of the nonzero terms (`x` an expression), or `0.0`.
fn polynomial(coef: &[f64], powers: &dyn Fn(usize) -> String) -> String {
    let mut terms = Vec::new();
    for (k, &c) in coef.iter().enumerate() {
        if c == 0.0 {
            continue;
        }
        let term = if k == 0 {
            num(c)
        } else if c == 1.0 {
            powers(k)
        } else {
            format!("{} * {}", num(c), powers(k))
        };
        terms.push(term);
    }
    if terms.is_empty() {
        "0.0".into()
    } else {
        terms.join(" + ")
    }
}

/// `constraint lhs == rhs;` for 3-vectors, only the rows `live` (the others hold whatever
/// the joints do: a comment says so).
fn vector_rows(o: &mut String, namer: &mut Namer, base: &str, lhs: &str, rhs: &str, live: &[bool]) {
    if live.iter().all(|&l| l) {
        let _ = writeln!(o, "    constraint {lhs} == {rhs};");
        return;
    }
    let axes = ["x", "y", "z"];
    let dead: Vec<&str> = (0..3).filter(|&i| !live[i]).map(|i| axes[i]).collect();
    let _ = writeln!(
        o,
        "    // its {} row{} hold{} whatever the joints do (the motion keeps {}): left out",
        dead.join(", "),
        if dead.len() == 1 { "" } else { "s" },
        if dead.len() == 1 { "s" } else { "" },
        if dead.len() == 1 { "it" } else { "them" }
    );
    if dead.len() == 3 {
        return;
    }
    let a = namer.name(&format!("{base}_a"));
    let b = namer.name(&format!("{base}_b"));
    let _ = writeln!(o, "    let {a} = {lhs};");
    let _ = writeln!(o, "    let {b} = {rhs};");
    for i in (0..3).filter(|&i| live[i]) {
        let _ = writeln!(o, "    constraint {a}.{c} == {b}.{c};", c = axes[i]);
    }
}

fn write_mech(model: &Model, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let bodies = &model.bodies;
    let joints = &model.joints;
    // Whether a body moves: a joint on the path from the world.
    let mut moves = vec![false; bodies.len()];
    for k in 1..bodies.len() {
        moves[k] = moves[bodies[k].parent] || !bodies[k].joints.is_empty();
    }

    // Names.
    let mut namer = Namer {
        used: HashSet::new(),
    };
    let module = namer.name(opts.module.as_deref().unwrap_or(&model.name));
    let g = namer.name("gravity_vector");
    for f in [
        "quaternion_omega",
        "quaternion_force_w",
        "quaternion_force_v",
    ] {
        namer.used.insert(f.to_string());
    }
    for c in ["x", "y", "z"] {
        namer.used.insert(format!("{g}_{c}"));
    }
    // Every joint's coordinates (MuJoCo's qpos order); `coord[j]`: the first (a hinge's or
    // slide's only one).
    let coords_of: Vec<Vec<String>> = joints
        .iter()
        .map(|j| match j.kind {
            JointKind::Hinge | JointKind::Slide => vec![namer.name(&j.name)],
            JointKind::Ball => ["w", "x", "y", "z"]
                .iter()
                .map(|c| namer.name(&format!("{}_{c}", j.name)))
                .collect(),
            JointKind::Free => FREE_SUFFIXES
                .iter()
                .map(|c| namer.name(&format!("{}_{c}", j.name)))
                .collect(),
        })
        .collect();
    let coord: Vec<String> = coords_of.iter().map(|c| c[0].clone()).collect();
    let quaternions = joints
        .iter()
        .any(|j| matches!(j.kind, JointKind::Ball | JointKind::Free));
    let frame: Vec<String> = bodies
        .iter()
        .map(|b| namer.name(&format!("{}_frame", b.name)))
        .collect();
    let body_name: Vec<String> = bodies
        .iter()
        .map(|b| namer.name_or(&b.name, "body"))
        .collect();
    let param = |namer: &mut Namer, j: usize, what: &str| -> String {
        namer.name(&format!("{}_{what}", joints[j].name))
    };
    let stiffness: Vec<Option<(String, String)>> = (0..joints.len())
        .map(|j| {
            (joints[j].stiffness.iter().any(|&x| x != 0.0)).then(|| {
                (
                    param(&mut namer, j, "stiffness"),
                    param(&mut namer, j, "springref"),
                )
            })
        })
        .collect();
    let damping: Vec<Option<String>> = (0..joints.len())
        .map(|j| (joints[j].damping[0] != 0.0).then(|| param(&mut namer, j, "damping")))
        .collect();
    let armature: Vec<Option<String>> = (0..joints.len())
        .map(|j| (joints[j].armature != 0.0).then(|| param(&mut namer, j, "armature")))
        .collect();
    let inputs: Vec<String> = model
        .motors
        .iter()
        .map(|m| namer.name_or(&m.name, "motor"))
        .collect();

    // Joint equalities: the follower's nominal value.
    let mut nominal: Vec<f64> = joints.iter().map(|j| j.reference).collect();
    let only_joint_equalities = !quaternions
        && !model.equalities.is_empty()
        && model
            .equalities
            .iter()
            .all(|e| matches!(e.kind, EqKind::Joint { .. }));
    let mut followers = HashSet::new();
    for e in &model.equalities {
        if let EqKind::Joint { j1, coef, .. } = e.kind {
            nominal[j1] = joints[j1].reference + coef[0];
            if !followers.insert(j1) && only_joint_equalities {
                return Err(ImportError {
                    message: format!("joint `{}` follows two <joint> equalities", joints[j1].name),
                    line: e.line,
                    column: e.column,
                });
            }
        }
    }

    let mut o = String::new();
    let moving = moves.iter().filter(|&&m| m).count();
    let _ = writeln!(
        o,
        "// Imported by `mechgen import` from the MJCF model `{}`: {} bodies ({moving} moving), {} joints, {} equality constraints, {} motors.",
        model.name,
        bodies.len() - 1,
        joints.len(),
        model.equalities.len(),
        model.motors.len()
    );
    let _ = writeln!(
        o,
        "// Ordinary mechgen source: edit it, add loops, inputs, outputs and forces."
    );
    let _ = writeln!(
        o,
        "// Angles were in {} (euler sequence {}); here every angle is in radians.",
        model.compiler.unit(),
        String::from_utf8_lossy(&model.compiler.eulerseq)
    );
    if model.notes.is_empty() {
        let _ = writeln!(o, "// Every element of the MJCF was imported.");
    } else {
        let _ = writeln!(o, "// Not imported (what: MJCF lines):");
        let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
        for n in &model.notes {
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
    let _ = writeln!(o, "/// The MJCF model `{}`.", model.name);
    let _ = writeln!(o, "pub mod {module} {{");
    let _ = writeln!(o, "    // Gravity (<option gravity>).");
    let _ = writeln!(o, "    param {g} = {};", vec3(model.gravity));
    let has_joint_params = stiffness.iter().any(Option::is_some)
        || damping.iter().any(Option::is_some)
        || armature.iter().any(Option::is_some);
    if has_joint_params {
        let _ = writeln!(
            o,
            "    // Joint springs (stiffness, springref), dampers and rotor inertia (armature)."
        );
        for (j, joint) in joints.iter().enumerate() {
            if let Some((k, r)) = &stiffness[j] {
                let _ = writeln!(o, "    param {k} = {};", num(joint.stiffness[0]));
                let _ = writeln!(o, "    param {r} = {};", num(joint.springref));
            }
            if let Some(d) = &damping[j] {
                let _ = writeln!(o, "    param {d} = {};", num(joint.damping[0]));
            }
            if let Some(a) = &armature[j] {
                let _ = writeln!(o, "    param {a} = {};", num(joint.armature));
            }
        }
    }
    if !model.motors.is_empty() {
        let _ = writeln!(
            o,
            "    // Actuator controls (<actuator>): a motor's joint force is gear * control; a servo's, gear * its force."
        );
        for (m, input) in model.motors.iter().zip(&inputs) {
            let mut comment = match m.drive {
                Drive::Motor => format!("motor, gear {}", num(m.gear)),
                Drive::Position { kp, kv } => format!(
                    "position servo (target), kp {}, kv {}, gear {}",
                    num(kp),
                    num(kv),
                    num(m.gear)
                ),
                Drive::Velocity { kv } => {
                    format!(
                        "velocity servo (target), kv {}, gear {}",
                        num(kv),
                        num(m.gear)
                    )
                }
            };
            if let Some([lo, hi]) = m.ctrlrange {
                let _ = write!(comment, ", ctrlrange [{}, {}]", num(lo), num(hi));
            }
            if let Some([lo, hi]) = m.forcerange {
                let _ = write!(comment, ", forcerange [{}, {}]", num(lo), num(hi));
            }
            if m.ctrlrange.is_some() || m.forcerange.is_some() {
                comment.push_str(" (not clamped here)");
            }
            let name_note = if *input != m.name {
                format!(" (MJCF motor `{}`)", m.name)
            } else {
                String::new()
            };
            let _ = writeln!(o, "    input {input}; // {comment}{name_note}");
        }
    }
    if joints
        .iter()
        .enumerate()
        .any(|(j, jt)| matches!(jt.kind, JointKind::Ball | JointKind::Free) && damping[j].is_some())
    {
        let _ = writeln!(
            o,
            "    // A unit quaternion's angular velocity in the turned axes (omega = 2 conj(q) dq/dt), and the"
        );
        let _ = writeln!(
            o,
            "    // generalised forces on (w, x, y, z) of a torque tau in those axes (the power tau . omega)."
        );
        let _ = writeln!(
            o,
            "    fn quaternion_omega(w, x, y, z, dw, dx, dy, dz) -> vec3 {{ 2.0 * vec3(w * dx - dw * x - y * dz + z * dy, w * dy - dw * y - z * dx + x * dz, w * dz - dw * z - x * dy + y * dx) }}"
        );
        let _ = writeln!(
            o,
            "    fn quaternion_force_w(w, x, y, z, tau) -> scalar {{ -2.0 * dot(tau, vec3(x, y, z)) }}"
        );
        let _ = writeln!(
            o,
            "    fn quaternion_force_v(w, x, y, z, tau) -> vec3 {{ 2.0 * (w * tau + cross(vec3(x, y, z), tau)) }}"
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "    // Joint coordinates (radians or metres; MuJoCo's qpos), in tree order."
    );
    for (j, joint) in joints.iter().enumerate() {
        let mut comment = match joint.kind {
            JointKind::Hinge => "hinge".to_string(),
            JointKind::Slide => "slide".to_string(),
            JointKind::Ball => "ball joint, unit quaternion (w, x, y, z)".to_string(),
            JointKind::Free => {
                "free joint: position in the world, unit quaternion (w, x, y, z)".to_string()
            }
        };
        let _ = write!(comment, " of body `{}`", bodies[joint.body].name);
        if let Some([lo, hi]) = joint.range {
            if joint.kind == JointKind::Ball {
                let _ = write!(comment, ", largest angle {} (not enforced)", num(hi));
            } else {
                let _ = write!(comment, ", range [{}, {}] (not enforced)", num(lo), num(hi));
            }
        }
        if joint.reference != 0.0 {
            let _ = write!(comment, ", ref {}", num(joint.reference));
        }
        if coord[j] != joint.name && coords_of[j].len() == 1 {
            let _ = write!(comment, " (MJCF joint `{}`)", joint.name);
        }
        let values: Vec<f64> = match joint.kind {
            JointKind::Hinge | JointKind::Slide => vec![nominal[j]],
            JointKind::Ball => IDENTITY_Q.to_vec(),
            JointKind::Free => {
                let b = &bodies[joint.body];
                let mut v = b.pos.to_vec();
                v.extend(b.quat);
                v
            }
        };
        for (k, (c, v)) in coords_of[j].iter().zip(values).enumerate() {
            if k == 0 {
                let _ = writeln!(o, "    coord {c} = {}; // {comment}", num(v));
            } else {
                let _ = writeln!(o, "    coord {c} = {};", num(v));
            }
        }
    }
    if quaternions {
        let _ = writeln!(
            o,
            "    // Unit quaternions (ball and free joints): their norm held exactly."
        );
        for (j, joint) in joints.iter().enumerate() {
            if matches!(joint.kind, JointKind::Ball | JointKind::Free) {
                let q = &coords_of[j][coords_of[j].len() - 4..];
                let _ = writeln!(o, "    {}", unit_norm(q));
            }
        }
    }
    if only_joint_equalities {
        let independent: Vec<&str> = (0..joints.len())
            .filter(|j| !followers.contains(j))
            .map(|j| coord[j].as_str())
            .collect();
        if !independent.is_empty() {
            let _ = writeln!(o, "    independent {};", independent.join(", "));
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "    // Body frames: the parent's frame * the body's pos and orientation * its joints' motions."
    );
    let _ = writeln!(o, "    let {} = translate(vec3(0.0, 0.0, 0.0));", frame[0]);
    for k in 1..bodies.len() {
        let b = &bodies[k];
        let mut factors = vec![frame[b.parent].clone()];
        let free = b.joints.iter().any(|&j| joints[j].kind == JointKind::Free);
        if !free {
            factors.extend(placement(
                b.pos,
                rotation_factor(b.quat, b.quat_written, &b.rot_src),
            ));
        }
        for &j in &b.joints {
            factors.extend(motion(&joints[j], &coords_of[j]));
        }
        let js: Vec<String> = b
            .joints
            .iter()
            .map(|&j| match joints[j].kind {
                JointKind::Hinge | JointKind::Slide => {
                    format!("{} {}", coord[j], vec3(joints[j].axis))
                }
                JointKind::Ball => format!("{} ball", joints[j].name),
                JointKind::Free => format!("{} free", joints[j].name),
            })
            .collect();
        let _ = writeln!(
            o,
            "    // body `{}` in `{}`{}",
            b.name,
            bodies[b.parent].name,
            if js.is_empty() {
                ", welded".to_string()
            } else {
                format!(", joints: {}", js.join(", "))
            }
        );
        let _ = writeln!(o, "    let {} = {};", frame[k], factors.join(" * "));
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "    // Bodies: mass and inertia, placed at the centre of mass."
    );
    for k in 1..bodies.len() {
        let b = &bodies[k];
        let Some(i) = &b.inertia else {
            let _ = writeln!(o, "    // body `{}`: no mass", b.name);
            continue;
        };
        if !moves[k] {
            let _ = writeln!(
                o,
                "    // body `{}`: welded to the world, its mass {} does not enter the dynamics",
                b.name,
                num(i.mass())
            );
            continue;
        }
        match i {
            Inertia::Principal {
                mass,
                pos,
                quat,
                rot_src,
                moments,
            } => {
                if *mass == 0.0 && moments.iter().all(|&x| x == 0.0) {
                    let _ = writeln!(o, "    // body `{}`: massless", b.name);
                    continue;
                }
                let mut f = vec![frame[k].clone()];
                f.extend(placement(*pos, rotation_factor(*quat, None, rot_src)));
                let _ = writeln!(
                    o,
                    "    body {} {{ mass = {}, inertia = {}, frame = {} }}",
                    body_name[k],
                    num(*mass),
                    vec3(*moments),
                    f.join(" * ")
                );
            }
            Inertia::Tensor {
                mass,
                pos,
                tensor: t,
                from_geoms,
            } => {
                if *from_geoms > 0 {
                    let _ = writeln!(
                        o,
                        "    // body `{}`: mass and inertia of its {from_geoms} geom{}",
                        b.name,
                        if *from_geoms == 1 { "" } else { "s" }
                    );
                }
                let mut f = vec![frame[k].clone()];
                f.extend(placement(*pos, None));
                let e: Vec<String> = t.iter().flatten().map(|&x| num(x)).collect();
                let _ = writeln!(
                    o,
                    "    body {} {{ mass = {}, inertia = mat3({}), frame = {} }}",
                    body_name[k],
                    num(*mass),
                    e.join(", "),
                    f.join(" * ")
                );
            }
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "    gravity = {g};");
    if armature.iter().any(Option::is_some) {
        let entries: Vec<String> = (0..joints.len())
            .filter_map(|j| {
                armature[j]
                    .as_ref()
                    .map(|a| format!("({c}, {c}) = {a}", c = coord[j]))
            })
            .collect();
        let _ = writeln!(
            o,
            "    // Armature: rotor inertia on the mass matrix's diagonal."
        );
        let _ = writeln!(o, "    mass_matrix {{ {} }}", entries.join(", "));
    }
    for (j, joint) in joints.iter().enumerate() {
        let q = &coord[j];
        if matches!(joint.kind, JointKind::Ball | JointKind::Free) {
            let Some(d) = &damping[j] else {
                continue;
            };
            let cs = &coords_of[j];
            let n = cs.len();
            if joint.kind == JointKind::Free {
                let _ = writeln!(
                    o,
                    "    // free joint `{}`: damping of the linear velocity (world axes) and of the angular velocity (body axes).",
                    joint.name
                );
                for c in &cs[..3] {
                    let _ = writeln!(o, "    force {c} = -{d} * der({c});");
                }
            } else {
                let _ = writeln!(
                    o,
                    "    // ball joint `{}`: damping of the angular velocity (body axes).",
                    joint.name
                );
            }
            let quat = cs[n - 4..].join(", ");
            let rates: Vec<String> = cs[n - 4..].iter().map(|c| format!("der({c})")).collect();
            let tau = format!("-{d} * quaternion_omega({quat}, {})", rates.join(", "));
            let _ = writeln!(
                o,
                "    force {} = quaternion_force_w({quat}, {tau});",
                cs[n - 4]
            );
            for (c, axis) in cs[n - 3..].iter().zip(["x", "y", "z"]) {
                let _ = writeln!(
                    o,
                    "    force {c} = quaternion_force_v({quat}, {tau}).{axis};"
                );
            }
            continue;
        }
        let mut terms = Vec::new();
        // Each term enters with a minus sign (a restoring spring, a dissipating damper).
        if let Some((k, r)) = &stiffness[j] {
            let x = format!("({q} - {r})");
            terms.push(format!("{k} * {x}"));
            if joint.stiffness[1] != 0.0 {
                terms.push(format!("{} * {x}.powi(2)", num(joint.stiffness[1])));
            }
            if joint.stiffness[2] != 0.0 {
                terms.push(format!("{} * {x}.powi(3)", num(joint.stiffness[2])));
            }
        }
        if let Some(d) = &damping[j] {
            terms.push(format!("{d} * der({q})"));
        }
        if joint.damping[1] != 0.0 {
            terms.push(format!(
                "{} * der({q}) * abs(der({q}))",
                num(joint.damping[1])
            ));
        }
        if joint.damping[2] != 0.0 {
            terms.push(format!("{} * der({q}).powi(3)", num(joint.damping[2])));
        }
        if !terms.is_empty() {
            let _ = writeln!(o, "    force {q} = -{};", terms.join(" - "));
        }
    }
    for (m, input) in model.motors.iter().zip(&inputs) {
        let q = &coord[m.joint];
        // The actuator's length `gear · q` and its rate.
        let (length, rate) = if m.gear == 1.0 {
            (q.clone(), format!("der({q})"))
        } else {
            (
                format!("{} * {q}", num(m.gear)),
                format!("{} * der({q})", num(m.gear)),
            )
        };
        let actuator = match m.drive {
            Drive::Motor => input.clone(),
            Drive::Position { kp, kv } => {
                let mut f = format!("{} * ({input} - {length})", num(kp));
                if kv != 0.0 {
                    let _ = write!(f, " - {} * {rate}", num(kv));
                }
                f
            }
            Drive::Velocity { kv } => format!("{} * ({input} - {rate})", num(kv)),
        };
        let f = match (m.gear == 1.0, m.drive) {
            (true, _) => actuator,
            (false, Drive::Motor) => format!("{} * {actuator}", num(m.gear)),
            (false, _) => format!("{} * ({actuator})", num(m.gear)),
        };
        let _ = writeln!(o, "    force {q} = {f};");
    }
    if !model.equalities.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "    // Equality constraints, imposed exactly (MuJoCo imposes them softly)."
        );
    }
    let live = live_rows(model)?;
    for (k, e) in model.equalities.iter().enumerate() {
        let label = e
            .name
            .as_ref()
            .map(|n| format!(" `{n}`"))
            .unwrap_or_default();
        match &e.kind {
            EqKind::Connect { b1, b2, a1, a2 } => {
                let _ = writeln!(
                    o,
                    "    // connect{label} (MJCF line {}): a ball joint between `{}` and `{}`.",
                    e.line, bodies[*b1].name, bodies[*b2].name
                );
                let point = |b: usize, a: V3| {
                    if b == 0 {
                        vec3(a)
                    } else {
                        format!("{}.point({})", frame[b], vec3(a))
                    }
                };
                let base = e.name.as_deref().unwrap_or("connect");
                vector_rows(
                    &mut o,
                    &mut namer,
                    base,
                    &point(*b1, *a1),
                    &point(*b2, *a2),
                    &live[k][..3],
                );
            }
            EqKind::Weld { b1, b2, f1, f2 } => {
                let _ = writeln!(
                    o,
                    "    // weld{label} (MJCF line {}): `{}` held at its pose relative to `{}`; the rotation rows are the skew part of the relative rotation (2 sin(angle) * axis).",
                    e.line, bodies[*b2].name, bodies[*b1].name
                );
                let base = e.name.as_deref().unwrap_or("weld");
                let mut t = vec![frame[*b1].clone()];
                t.extend(pose_factor(f1));
                let mut s = vec![frame[*b2].clone()];
                s.extend(pose_factor(f2));
                let tn = namer.name(&format!("{base}_target"));
                let sn = namer.name(&format!("{base}_held"));
                let _ = writeln!(o, "    let {tn} = {};", t.join(" * "));
                let _ = writeln!(o, "    let {sn} = {};", s.join(" * "));
                let rel = namer.name(&format!("{base}_relative"));
                let _ = writeln!(o, "    let {rel} = inverse({tn}) * {sn};");
                vector_rows(
                    &mut o,
                    &mut namer,
                    base,
                    &format!("{tn}.origin"),
                    &format!("{sn}.origin"),
                    &live[k][..3],
                );
                vector_rows(
                    &mut o,
                    &mut namer,
                    &format!("{base}_turn"),
                    &format!(
                        "vec3({rel}.y_axis.z - {rel}.z_axis.y, {rel}.z_axis.x - {rel}.x_axis.z, {rel}.x_axis.y - {rel}.y_axis.x)"
                    ),
                    "vec3(0.0, 0.0, 0.0)",
                    &live[k][3..],
                );
            }
            EqKind::Joint { j1, j2, coef } => {
                let _ = writeln!(
                    o,
                    "    // joint equality{label} (MJCF line {}): polycoef {}.",
                    e.line,
                    coef.iter().map(|&c| num(c)).collect::<Vec<_>>().join(" ")
                );
                let lhs = |j: usize| {
                    let r = joints[j].reference;
                    if r == 0.0 {
                        coord[j].clone()
                    } else {
                        format!("({} - {})", coord[j], num(r))
                    }
                };
                let rhs = match j2 {
                    None => num(coef[0]),
                    Some(j2) => {
                        let x = lhs(*j2);
                        polynomial(coef, &|k| {
                            if k == 1 {
                                x.clone()
                            } else {
                                format!("{x}.powi({k})")
                            }
                        })
                    }
                };
                let _ = writeln!(o, "    constraint {} == {rhs};", lhs(*j1));
            }
        }
    }
    let _ = writeln!(o, "}}");
    Ok(Imported {
        mech: o,
        notes: model.notes.clone(),
        module,
        coords: coords_of
            .iter()
            .zip(joints)
            .flat_map(|(cs, j)| cs.iter().map(|c| (c.clone(), j.name.clone())))
            .collect(),
        frames: (1..bodies.len())
            .map(|k| (frame[k].clone(), bodies[k].name.clone()))
            .collect(),
        inputs: inputs
            .iter()
            .zip(&model.motors)
            .map(|(i, m)| (i.clone(), m.name.clone()))
            .collect(),
    })
}
