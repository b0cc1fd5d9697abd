//! User names that collide with the names generated code gives its own arguments, locals,
//! temporaries and items (`b`, `t3`, `sin_x`, `live1`, `null_space`, `forces_part0`, …)
//! must still give a module that compiles and computes the right numbers.

use mechgen::nalgebra::SVector;

mechgen::mechanism! {
    /// A four-bar linkage whose names are all taken by the generated code (and a private
    /// module: the declared visibility is kept).
    mod clash {
        param b = 1.0;
        param t1 = 3.0;
        param sin_x = 2.5;
        param live1 = 3.0;
        param b_0 = 0.0;
        coord null_space = 1.0;
        coord forces_part0 = 0.5;
        coord cos_a = 2.0;
        constraint vec2(b * cos(null_space) + t1 * cos(forces_part0), b * sin(null_space) + t1 * sin(forces_part0) + b_0)
            == vec2(live1 + sin_x * cos(cos_a), sin_x * sin(cos_a));
    }
}

#[test]
fn colliding_names_compile_and_evaluate() {
    let p = clash::Params::default();
    assert_eq!(p.b, 1.0);
    assert_eq!(p.sin_x, 2.5);
    assert_eq!(clash::COORD_NAMES, ["null_space", "forces_part0", "cos_a"]);
    let q = SVector::<f64, 3>::new(0.3, -0.7, 1.9);
    let r = clash::residual(&q, &p, 0.0);
    let want = [
        p.b * q[0].cos() + p.t1 * q[1].cos() - p.live1 - p.sin_x * q[2].cos(),
        p.b * q[0].sin() + p.t1 * q[1].sin() + p.b_0 - p.sin_x * q[2].sin(),
    ];
    for i in 0..2 {
        assert!(
            (r[i] - want[i]).abs() <= 1e-14,
            "row {i}: {} vs {}",
            r[i],
            want[i]
        );
    }
    let j = clash::jacobian(&q, &p, 0.0);
    let (d, health) = clash::null_space(&q, &p, 0.0);
    assert!(health > 0.0);
    assert!((j * d).norm() <= 1e-14 * j.norm() * d.norm());
}

mechgen::mechanism! {
    /// Every coordinate and parameter is named like something the generated code binds
    /// (arguments `q qd p b`, outputs `r m v d x g f health`, chunk `prev`, items `NQ`,
    /// `Model`, `gamma`, `forces`, `residual`), or is a keyword of a later edition (`gen`,
    /// `r#try`) or a raw identifier (`r#match`, used inside `sin`/`cos`).
    pub mod bound {
        param f = 0.7;
        param g = 9.81;
        param q = 1.3;
        param p = 2.0;
        param qd = 0.4;
        param d = 0.2;
        param health = 0.3;
        param r = 0.1;
        param m = 1.5;
        param v = 1.0;
        param x = 0.25;
        param prev = 0.05;
        param Model = 0.6;
        param gamma = 2.0;
        param forces = 0.5;
        param residual = 1.0;
        param r#try = 0.9;
        coord b = 1.0;
        coord NQ = 0.6;
        coord r#match = 0.8;
        coord gen = 0.0;
        constraint (b - r).powi(2) + NQ.powi(2) == q.powi(2) + prev;
        constraint sin(r#match) * v == cos(gen) * residual * sin(b * v);
        constraint gen == 0.0;
        body health_body { mass = p * m, com = vec2(b, NQ) }
        body Model_body { mass = Model, com = vec2(r#match, gen) }
        gravity = vec2(x, -g);
        generalized_force { b = f * der(b) + d, NQ = health * v, gen = gamma * forces * r#try }
    }
}

#[test]
fn names_the_generated_code_binds_compile_and_evaluate() {
    use mechgen::runtime::Dynamics;
    let p = bound::Params::default();
    assert_eq!((p.f, p.g, p.q, p.p, p.r#try), (0.7, 9.81, 1.3, 2.0, 0.9));
    assert_eq!(bound::COORD_NAMES, ["b", "NQ", "match", "gen"]);
    let q = SVector::<f64, 4>::new(0.9, -0.4, 0.3, 0.2);
    let qd = SVector::<f64, 4>::new(0.5, -1.5, 0.25, 0.75);
    let r = bound::residual(&q, &p, 0.0);
    let want_r = [
        (q[0] - p.r).powi(2) + q[1].powi(2) - p.q.powi(2) - p.prev,
        q[2].sin() * p.v - q[3].cos() * p.residual * (q[0] * p.v).sin(),
        q[3],
    ];
    for i in 0..3 {
        assert!(
            (r[i] - want_r[i]).abs() <= 1e-14,
            "residual {i}: {} vs {}",
            r[i],
            want_r[i]
        );
    }
    let mm = bound::Model::mass_matrix(&q, &p, 0.0);
    let want_m = [p.p * p.m, p.p * p.m, p.Model, p.Model];
    for i in 0..4 {
        assert!((mm[(i, i)] - want_m[i]).abs() <= 1e-14, "M[{i}{i}]");
    }
    let f = bound::Model::forces(&q, &qd, &p, 0.0);
    let want_f = [
        p.p * p.m * p.x + p.f * qd[0] + p.d,
        -p.p * p.m * p.g + p.health * p.v,
        p.Model * p.x,
        -p.Model * p.g + p.gamma * p.forces * p.r#try,
    ];
    for i in 0..4 {
        assert!(
            (f[i] - want_f[i]).abs() <= 1e-13,
            "forces {i}: {} vs {}",
            f[i],
            want_f[i]
        );
    }
    let g = bound::Model::gamma(&q, &qd, &p, 0.0);
    let want_g0 = -2.0 * (qd[0].powi(2) + qd[1].powi(2));
    assert!(
        (g[0] - want_g0).abs() <= 1e-13,
        "gamma 0: {} vs {want_g0}",
        g[0]
    );
    assert_eq!(g[2], 0.0);
}

mechgen::mechanism! {
    /// Indexed raw names (issue 33: `coord r#a[0]` and `const r#w = [..]` panicked the
    /// macro): `r#a[k]` is `a_k`, one name with `a[k]`; `r#match[0]` is `match_0` (no
    /// keyword, no `r#`); a raw loop variable is the loop variable.
    pub mod raw_family {
        const r#w = [1.0, 2.0];
        for r#i in 0..2 {
            coord r#a[i] = 0.6 * (1.0 + r#i);
        }
        coord r#match[0] = 0.8;
        constraint a[0] * r#a[0] + r#match[0] * match_0 == r#w[0];
        constraint r#a[1] == w[1] * a_0;
    }
}

#[test]
fn indexed_raw_names_compile_and_evaluate() {
    assert_eq!(raw_family::COORD_NAMES, ["a_0", "a_1", "match_0"]);
    let p = raw_family::Params::default();
    let q = SVector::<f64, 3>::new(0.6, 1.2, 0.8);
    let r = raw_family::residual(&q, &p, 0.0);
    let want = [0.36 + 0.64 - 1.0, 1.2 - 2.0 * 0.6];
    for i in 0..2 {
        assert!(
            (r[i] - want[i]).abs() <= 1e-15,
            "row {i}: {} vs {}",
            r[i],
            want[i]
        );
    }
}
