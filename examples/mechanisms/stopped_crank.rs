// The end-stopped slider crank shared by tests/contact.rs and tests/contact_jacobians.rs.

mechgen::mechanism! {
    // The generic family: the contact step's Jacobians by dual numbers (tests/contact_jacobians.rs).
    #![generic]
    /// A slider crank driven by a constant torque on the crank, its slider stopped by an end
    /// stop `s ≤ s_max` (restitution 1/2): equality and inequality constraints together.
    pub mod stopped_crank {
        param l1 = 0.1;
        param l2 = 0.3;
        param m = 1.0;
        param torque = 0.5;
        param s_max = 0.36;
        coord theta = 1.2;
        coord beta = 0.8;
        coord s = 0.3;
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
        body crank_bar { mass = m, inertia = m * l1 * l1 / 12.0, com = crank / 2.0, angle = theta }
        body rod_bar { mass = m, inertia = m * l2 * l2 / 12.0, com = crank + rod / 2.0, angle = beta }
        body slider { mass = m, com = vec2(s, 0.0) }
        force theta = -torque;
        inequality stop: s <= s_max, restitution = 0.5;
    }
}
