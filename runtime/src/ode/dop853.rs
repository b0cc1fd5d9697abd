//! Adaptive Dormand–Prince 8(5,3) with its seventh-order dense output (Hairer, Nørsett &
//! Wanner, "Solving Ordinary Differential Equations I", 2nd ed., II.10; the coefficients
//! of Hairer's `dop853`).
//!
//! Twelve stages per step (first-same-as-last), an eighth-order solution propagated,
//! an error estimate combining the fifth- and third-order embedded solutions, and a
//! dense output of order seven that costs three more stages in a step with an output
//! inside it.

// The coefficients are written with the published 30 digits.
#![allow(clippy::excessive_precision)]

use super::driver::{integrate, sum, Method, Step, Trial};
use super::{Dopri5Options, OdeState, OdeSystem, Solution, Stats};
use crate::error::OdeError;

const C2: f64 = 0.526001519587677318785587544488e-01;
const C3: f64 = 0.789002279381515978178381316732e-01;
const C4: f64 = 0.118350341907227396726757197510;
const C5: f64 = 0.281649658092772603273242802490;
const C6: f64 = 0.333333333333333333333333333333;
const C7: f64 = 0.25;
const C8: f64 = 0.307692307692307692307692307692;
const C9: f64 = 0.651282051282051282051282051282;
const C10: f64 = 0.6;
const C11: f64 = 0.857142857142857142857142857142;
const C12: f64 = 1.0;
const C14: f64 = 0.1;
const C15: f64 = 0.2;
const C16: f64 = 0.777777777777777777777777777778;
const A2_1: f64 = 5.26001519587677318785587544488e-2;
const A3_1: f64 = 1.97250569845378994544595329183e-2;
const A3_2: f64 = 5.91751709536136983633785987549e-2;
const A4_1: f64 = 2.95875854768068491816892993775e-2;
const A4_3: f64 = 8.87627564304205475450678981324e-2;
const A5_1: f64 = 2.41365134159266685502369798665e-1;
const A5_3: f64 = -8.84549479328286085344864962717e-1;
const A5_4: f64 = 9.24834003261792003115737966543e-1;
const A6_1: f64 = 3.7037037037037037037037037037e-2;
const A6_4: f64 = 1.70828608729473871279604482173e-1;
const A6_5: f64 = 1.25467687566822425016691814123e-1;
const A7_1: f64 = 3.7109375e-2;
const A7_4: f64 = 1.70252211019544039314978060272e-1;
const A7_5: f64 = 6.02165389804559606850219397283e-2;
const A7_6: f64 = -1.7578125e-2;
const A8_1: f64 = 3.70920001185047927108779319836e-2;
const A8_4: f64 = 1.70383925712239993810214054705e-1;
const A8_5: f64 = 1.07262030446373284651809199168e-1;
const A8_6: f64 = -1.53194377486244017527936158236e-2;
const A8_7: f64 = 8.27378916381402288758473766002e-3;
const A9_1: f64 = 6.24110958716075717114429577812e-1;
const A9_4: f64 = -3.36089262944694129406857109825;
const A9_5: f64 = -8.68219346841726006818189891453e-1;
const A9_6: f64 = 2.75920996994467083049415600797e1;
const A9_7: f64 = 2.01540675504778934086186788979e1;
const A9_8: f64 = -4.34898841810699588477366255144e1;
const A10_1: f64 = 4.77662536438264365890433908527e-1;
const A10_4: f64 = -2.48811461997166764192642586468;
const A10_5: f64 = -5.90290826836842996371446475743e-1;
const A10_6: f64 = 2.12300514481811942347288949897e1;
const A10_7: f64 = 1.52792336328824235832596922938e1;
const A10_8: f64 = -3.32882109689848629194453265587e1;
const A10_9: f64 = -2.03312017085086261358222928593e-2;
const A11_1: f64 = -9.3714243008598732571704021658e-1;
const A11_4: f64 = 5.18637242884406370830023853209;
const A11_5: f64 = 1.09143734899672957818500254654;
const A11_6: f64 = -8.14978701074692612513997267357;
const A11_7: f64 = -1.85200656599969598641566180701e1;
const A11_8: f64 = 2.27394870993505042818970056734e1;
const A11_9: f64 = 2.49360555267965238987089396762;
const A11_10: f64 = -3.0467644718982195003823669022;
const A12_1: f64 = 2.27331014751653820792359768449;
const A12_4: f64 = -1.05344954667372501984066689879e1;
const A12_5: f64 = -2.00087205822486249909675718444;
const A12_6: f64 = -1.79589318631187989172765950534e1;
const A12_7: f64 = 2.79488845294199600508499808837e1;
const A12_8: f64 = -2.85899827713502369474065508674;
const A12_9: f64 = -8.87285693353062954433549289258;
const A12_10: f64 = 1.23605671757943030647266201528e1;
const A12_11: f64 = 6.43392746015763530355970484046e-1;
const B1: f64 = 5.42937341165687622380535766363e-2;
const B6: f64 = 4.45031289275240888144113950566;
const B7: f64 = 1.89151789931450038304281599044;
const B8: f64 = -5.8012039600105847814672114227;
const B9: f64 = 3.1116436695781989440891606237e-1;
const B10: f64 = -1.52160949662516078556178806805e-1;
const B11: f64 = 2.01365400804030348374776537501e-1;
const B12: f64 = 4.47106157277725905176885569043e-2;
const A14_1: f64 = 5.61675022830479523392909219681e-2;
const A14_7: f64 = 2.53500210216624811088794765333e-1;
const A14_8: f64 = -2.46239037470802489917441475441e-1;
const A14_9: f64 = -1.24191423263816360469010140626e-1;
const A14_10: f64 = 1.5329179827876569731206322685e-1;
const A14_11: f64 = 8.20105229563468988491666602057e-3;
const A14_12: f64 = 7.56789766054569976138603589584e-3;
const A14_13: f64 = -8.298e-3;
const A15_1: f64 = 3.18346481635021405060768473261e-2;
const A15_6: f64 = 2.83009096723667755288322961402e-2;
const A15_7: f64 = 5.35419883074385676223797384372e-2;
const A15_8: f64 = -5.49237485713909884646569340306e-2;
const A15_11: f64 = -1.08347328697249322858509316994e-4;
const A15_12: f64 = 3.82571090835658412954920192323e-4;
const A15_13: f64 = -3.40465008687404560802977114492e-4;
const A15_14: f64 = 1.41312443674632500278074618366e-1;
const A16_1: f64 = -4.28896301583791923408573538692e-1;
const A16_6: f64 = -4.69762141536116384314449447206;
const A16_7: f64 = 7.68342119606259904184240953878;
const A16_8: f64 = 4.06898981839711007970213554331;
const A16_9: f64 = 3.56727187455281109270669543021e-1;
const A16_13: f64 = -1.39902416515901462129418009734e-3;
const A16_14: f64 = 2.9475147891527723389556272149;
const A16_15: f64 = -9.15095847217987001081870187138;
const BHH1: f64 = 0.244094488188976377952755905512;
const BHH9: f64 = 0.733846688281611857341361741547;
const BHH12: f64 = 0.220588235294117647058823529412e-1;
const E1: f64 = 0.1312004499419488073250102996e-1;
const E6: f64 = -0.1225156446376204440720569753e1;
const E7: f64 = -0.4957589496572501915214079952;
const E8: f64 = 0.1664377182454986536961530415e1;
const E9: f64 = -0.3503288487499736816886487290;
const E10: f64 = 0.3341791187130174790297318841;
const E11: f64 = 0.8192320648511571246570742613e-1;
const E12: f64 = -0.2235530786388629525884427845e-1;
const D4_1: f64 = -0.84289382761090128651353491142e1;
const D4_6: f64 = 0.56671495351937776962531783590;
const D4_7: f64 = -0.30689499459498916912797304727e1;
const D4_8: f64 = 0.23846676565120698287728149680e1;
const D4_9: f64 = 0.21170345824450282767155149946e1;
const D4_10: f64 = -0.87139158377797299206789907490;
const D4_11: f64 = 0.22404374302607882758541771650e1;
const D4_12: f64 = 0.63157877876946881815570249290;
const D4_13: f64 = -0.88990336451333310820698117400e-1;
const D4_14: f64 = 0.18148505520854727256656404962e2;
const D4_15: f64 = -0.91946323924783554000451984436e1;
const D4_16: f64 = -0.44360363875948939664310572000e1;
const D5_1: f64 = 0.10427508642579134603413151009e2;
const D5_6: f64 = 0.24228349177525818288430175319e3;
const D5_7: f64 = 0.16520045171727028198505394887e3;
const D5_8: f64 = -0.37454675472269020279518312152e3;
const D5_9: f64 = -0.22113666853125306036270938578e2;
const D5_10: f64 = 0.77334326684722638389603898808e1;
const D5_11: f64 = -0.30674084731089398182061213626e2;
const D5_12: f64 = -0.93321305264302278729567221706e1;
const D5_13: f64 = 0.15697238121770843886131091075e2;
const D5_14: f64 = -0.31139403219565177677282850411e2;
const D5_15: f64 = -0.93529243588444783865713862664e1;
const D5_16: f64 = 0.35816841486394083752465898540e2;
const D6_1: f64 = 0.19985053242002433820987653617e2;
const D6_6: f64 = -0.38703730874935176555105901742e3;
const D6_7: f64 = -0.18917813819516756882830838328e3;
const D6_8: f64 = 0.52780815920542364900561016686e3;
const D6_9: f64 = -0.11573902539959630126141871134e2;
const D6_10: f64 = 0.68812326946963000169666922661e1;
const D6_11: f64 = -0.10006050966910838403183860980e1;
const D6_12: f64 = 0.77771377980534432092869265740;
const D6_13: f64 = -0.27782057523535084065932004339e1;
const D6_14: f64 = -0.60196695231264120758267380846e2;
const D6_15: f64 = 0.84320405506677161018159903784e2;
const D6_16: f64 = 0.11992291136182789328035130030e2;
const D7_1: f64 = -0.25693933462703749003312586129e2;
const D7_6: f64 = -0.15418974869023643374053993627e3;
const D7_7: f64 = -0.23152937917604549567536039109e3;
const D7_8: f64 = 0.35763911791061412378285349910e3;
const D7_9: f64 = 0.93405324183624310003907691704e2;
const D7_10: f64 = -0.37458323136451633156875139351e2;
const D7_11: f64 = 0.10409964950896230045147246184e3;
const D7_12: f64 = 0.29840293426660503123344363579e2;
const D7_13: f64 = -0.43533456590011143754432175058e2;
const D7_14: f64 = 0.96324553959188282948394950600e2;
const D7_15: f64 = -0.39177261675615439165231486172e2;
const D7_16: f64 = -0.14972683625798562581422125276e3;
/// The rows `d4 … d7` of the dense output, over the stages `k1, k6 … k16`.
const DENSE: [[f64; 12]; 4] = [
    [
        D4_1, D4_6, D4_7, D4_8, D4_9, D4_10, D4_11, D4_12, D4_13, D4_14, D4_15, D4_16,
    ],
    [
        D5_1, D5_6, D5_7, D5_8, D5_9, D5_10, D5_11, D5_12, D5_13, D5_14, D5_15, D5_16,
    ],
    [
        D6_1, D6_6, D6_7, D6_8, D6_9, D6_10, D6_11, D6_12, D6_13, D6_14, D6_15, D6_16,
    ],
    [
        D7_1, D7_6, D7_7, D7_8, D7_9, D7_10, D7_11, D7_12, D7_13, D7_14, D7_15, D7_16,
    ],
];

/// Adaptive Dormand–Prince 8(5,3) integration of `sys` from `(t0, y0)`, reporting the
/// state at each time of `t_out` (ascending, `≥ t0`; the last one is the end time).
///
/// The same interface, options, projection, events and errors as [`super::dopri5`]
/// (its documentation has the contract); the method differs: eighth order, twelve
/// right-hand sides per step, the step-size controller's exponent 1/8 (Hairer's
/// `dop853`: `err = ‖e₅‖² / √(n (‖e₅‖² + 0.01 ‖e₃‖²))` in the weighted norm with weights
/// `atol + rtol·max(|y_n|, |y_{n+1}|)`), and a dense output of order seven (three more
/// right-hand sides in a step with an output or an event inside it). At tight tolerances
/// it needs far fewer right-hand sides than [`super::dopri5`] for the same error.
///
/// ```
/// use mechgen_runtime::ode::{dop853, Dopri5Options};
/// use mechgen_runtime::nalgebra::SVector;
/// use std::convert::Infallible;
///
/// // y'' = -y, y(0) = 1, y'(0) = 0
/// let mut f = |_t: f64, y: &SVector<f64, 2>| Ok::<_, Infallible>(SVector::<f64, 2>::new(y[1], -y[0]));
/// let opts = Dopri5Options { rtol: 1e-10, atol: 1e-12, ..Default::default() };
/// let sol = dop853(&mut f, 0.0, SVector::<f64, 2>::new(1.0, 0.0), &[1.0, 10.0], &opts)?;
/// assert!((sol.y[1][0] - 10.0f64.cos()).abs() < 1e-8);
/// # Ok::<(), mechgen_runtime::OdeError<Infallible>>(())
/// ```
pub fn dop853<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    t0: f64,
    y0: S,
    t_out: &[f64],
    opts: &Dopri5Options,
) -> Result<Solution<S>, OdeError<Sys::Error>> {
    integrate::<S, Sys, Dp853>(sys, t0, y0, t_out, opts)
}

/// One step of Dormand–Prince 8(5,3) of length `h` from `(t0, y0)`, without step-size
/// control or projection: the new state and the right-hand sides evaluated. For a step
/// whose length is set by something other than the error (the projection method's step
/// across a rank drop: its stages fall on either side of the point, none on it).
pub(crate) fn dop853_step<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    t0: f64,
    y0: &S,
    h: f64,
) -> Result<(S, usize), OdeError<Sys::Error>> {
    let mut stats = Stats::default();
    let k1 = super::eval(sys, &mut stats, t0, y0)?;
    // The tolerances only weigh the error estimate, which is not used.
    let step = Step {
        t: t0,
        y: y0,
        k1: &k1,
        h,
        t_new: t0 + h,
        rtol: 1.0,
        atol: 1.0,
    };
    let trial = <Dp853 as Method<S>>::trial(sys, &mut stats, &step)?;
    Ok((trial.y1, stats.rhs_calls))
}

/// The Dormand–Prince 8(5,3) method ([`Method`]).
struct Dp853;

/// `Σ_i (x_i / (atol + rtol·max(|a_i|, |b_i|)))²`.
fn weighted_sq<S: OdeState>(x: &S, a: &S, b: &S, rtol: f64, atol: f64) -> f64 {
    x.components()
        .zip(a.components())
        .zip(b.components())
        .map(|((xi, ai), bi)| {
            let r = xi / (atol + rtol * ai.abs().max(bi.abs()));
            r * r
        })
        .sum()
}

impl<S: OdeState> Method<S> for Dp853 {
    /// `k1 … k12`.
    type Stages = [S; 12];
    /// Hairer's `rcont2 … rcont8`.
    type Dense = [S; 7];
    const EXPONENT: f64 = 0.125;
    const DENSE_NEEDS_END: bool = true;

    fn trial<Sys: OdeSystem<S>>(
        sys: &mut Sys,
        stats: &mut Stats,
        step: &Step<'_, S>,
    ) -> Result<Trial<S, [S; 12]>, OdeError<Sys::Error>> {
        let (y, k1, h) = (step.y, step.k1, step.h);
        let k2 = step.stage(sys, stats, C2, &[(A2_1, k1)])?;
        let k3 = step.stage(sys, stats, C3, &[(A3_1, k1), (A3_2, &k2)])?;
        let k4 = step.stage(sys, stats, C4, &[(A4_1, k1), (A4_3, &k3)])?;
        let k5 = step.stage(sys, stats, C5, &[(A5_1, k1), (A5_3, &k3), (A5_4, &k4)])?;
        let k6 = step.stage(sys, stats, C6, &[(A6_1, k1), (A6_4, &k4), (A6_5, &k5)])?;
        let k7 = step.stage(
            sys,
            stats,
            C7,
            &[(A7_1, k1), (A7_4, &k4), (A7_5, &k5), (A7_6, &k6)],
        )?;
        let k8 = step.stage(
            sys,
            stats,
            C8,
            &[
                (A8_1, k1),
                (A8_4, &k4),
                (A8_5, &k5),
                (A8_6, &k6),
                (A8_7, &k7),
            ],
        )?;
        let k9 = step.stage(
            sys,
            stats,
            C9,
            &[
                (A9_1, k1),
                (A9_4, &k4),
                (A9_5, &k5),
                (A9_6, &k6),
                (A9_7, &k7),
                (A9_8, &k8),
            ],
        )?;
        let k10 = step.stage(
            sys,
            stats,
            C10,
            &[
                (A10_1, k1),
                (A10_4, &k4),
                (A10_5, &k5),
                (A10_6, &k6),
                (A10_7, &k7),
                (A10_8, &k8),
                (A10_9, &k9),
            ],
        )?;
        let k11 = step.stage(
            sys,
            stats,
            C11,
            &[
                (A11_1, k1),
                (A11_4, &k4),
                (A11_5, &k5),
                (A11_6, &k6),
                (A11_7, &k7),
                (A11_8, &k8),
                (A11_9, &k9),
                (A11_10, &k10),
            ],
        )?;
        let k12 = step.stage(
            sys,
            stats,
            C12,
            &[
                (A12_1, k1),
                (A12_4, &k4),
                (A12_5, &k5),
                (A12_6, &k6),
                (A12_7, &k7),
                (A12_8, &k8),
                (A12_9, &k9),
                (A12_10, &k10),
                (A12_11, &k11),
            ],
        )?;
        let y1 = step.combine(&[
            (B1, k1),
            (B6, &k6),
            (B7, &k7),
            (B8, &k8),
            (B9, &k9),
            (B10, &k10),
            (B11, &k11),
            (B12, &k12),
        ]);
        let e5 = sum(
            (E1, k1),
            &[
                (E6, &k6),
                (E7, &k7),
                (E8, &k8),
                (E9, &k9),
                (E10, &k10),
                (E11, &k11),
                (E12, &k12),
            ],
        );
        let e3 = sum(
            (B1 - BHH1, k1),
            &[
                (B6, &k6),
                (B7, &k7),
                (B8, &k8),
                (B9 - BHH9, &k9),
                (B10, &k10),
                (B11, &k11),
                (B12 - BHH12, &k12),
            ],
        );
        let n = y.dim().max(1) as f64;
        let err5 = weighted_sq(&e5, y, &y1, step.rtol, step.atol);
        let err3 = weighted_sq(&e3, y, &y1, step.rtol, step.atol);
        let deno = err5 + 0.01 * err3;
        let err = if deno > 0.0 {
            h.abs() * err5 / (n * deno).sqrt()
        } else if deno == 0.0 {
            0.0
        } else {
            f64::NAN
        };
        Ok(Trial {
            y1,
            f1: None,
            err,
            stages: [k1.clone(), k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12],
        })
    }

    fn dense<Sys: OdeSystem<S>>(
        sys: &mut Sys,
        stats: &mut Stats,
        step: &Step<'_, S>,
        y1: &S,
        f_end: Option<&S>,
        stages: &[S; 12],
    ) -> Result<[S; 7], OdeError<Sys::Error>> {
        let Some(k13) = f_end else {
            return Err(OdeError::InvalidOptions(
                "dop853's dense output needs the right-hand side at the step's end",
            ));
        };
        let [k1, _, _, _, _, k6, k7, k8, k9, k10, k11, k12] = stages;
        let k14 = step.stage(
            sys,
            stats,
            C14,
            &[
                (A14_1, k1),
                (A14_7, k7),
                (A14_8, k8),
                (A14_9, k9),
                (A14_10, k10),
                (A14_11, k11),
                (A14_12, k12),
                (A14_13, k13),
            ],
        )?;
        let k15 = step.stage(
            sys,
            stats,
            C15,
            &[
                (A15_1, k1),
                (A15_6, k6),
                (A15_7, k7),
                (A15_8, k8),
                (A15_11, k11),
                (A15_12, k12),
                (A15_13, k13),
                (A15_14, &k14),
            ],
        )?;
        let k16 = step.stage(
            sys,
            stats,
            C16,
            &[
                (A16_1, k1),
                (A16_6, k6),
                (A16_7, k7),
                (A16_8, k8),
                (A16_9, k9),
                (A16_13, k13),
                (A16_14, &k14),
                (A16_15, &k15),
            ],
        )?;
        let [ydiff, bspl, r4] = step.dense_head(y1, k13);
        let ks = [k6, k7, k8, k9, k10, k11, k12, k13, &k14, &k15, &k16];
        let h = step.h;
        let row = |d: &[f64; 12]| {
            let mut r = k1.clone();
            r.scale(h * d[0]);
            for (&c, &k) in d[1..].iter().zip(&ks) {
                r.axpy(h * c, k);
            }
            r
        };
        let [r5, r6, r7, r8] = [
            row(&DENSE[0]),
            row(&DENSE[1]),
            row(&DENSE[2]),
            row(&DENSE[3]),
        ];
        Ok([ydiff, bspl, r4, r5, r6, r7, r8])
    }

    /// `y + s (ydiff + s1 (bspl + s (r4 + s1 (r5 + s (r6 + s1 (r7 + s r8))))))`,
    /// `s1 = 1 − s`.
    fn interpolate(y: &S, dense: &[S; 7], s: f64) -> S {
        super::driver::interpolate_alternating(y, dense, s)
    }
}
