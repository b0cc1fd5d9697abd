// The corner particle of Jonquet, Nocent and Remion (GRAPP 2007): mass m in the corner
// between g1 = x − y ≥ 0 and g2 = y ≥ 0, pushed by a constant force (fx, fy). Shared by
// examples/contact.rs and tests/contact.rs.

mechgen::mechanism! {
    pub mod corner {
        param m = 2.0;
        param fx = 2.0;
        param fy = -1.0;
        coord x = 0.0;
        coord y = 0.0;
        body particle { mass = m, com = vec2(x, y) }
        force x = fx;
        force y = fy;
        inequality g1: x - y >= 0.0;
        inequality g2: y >= 0.0;
    }
}
