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
