// A slider crank with a spring on the slider, in the generic family (`#![generic]`) and with
// the derivatives of its dynamics terms (`#![derivatives]`): the
// step-Jacobian tests and the gradient example share it.

mechgen::mechanism! {
    #![generic]
    #![derivatives]
    /// The planar slider crank of `slider_crank.rs` with a linear spring of stiffness `k`
    /// pulling the slider towards `s = s0`, a damper `c` on it, and a constant crank torque.
    pub mod sprung_crank {
        /// Crank and rod lengths (m).
        param l1 = 0.1;
        param l2 = 0.3;
        /// Crank, rod and slider masses (kg).
        param m1 = 0.5;
        param m2 = 1.0;
        param m3 = 0.8;
        /// Gravitational acceleration (m/s²).
        param g = 9.81;
        /// Crank torque (N m).
        param torque = 0.4;
        /// Slider spring stiffness (N/m) and rest position (m).
        param k = 30.0;
        param s0 = 0.3;
        /// Slider damping (N s/m).
        param c = 0.0;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
        body crank_bar { mass = m1, inertia = m1 * l1 * l1 / 12.0, com = crank / 2.0, angle = theta }
        body rod_bar { mass = m2, inertia = m2 * l2 * l2 / 12.0, com = crank + rod / 2.0, angle = beta }
        body slider { mass = m3, com = vec2(s, 0.0) }
        gravity = vec2(0.0, -g);
        force theta = torque;
        force s = -k * (s - s0) - c * der(s);
    }
}
