// The Whipple bicycle with the benchmark parameters of Meijaard, Papadopoulos, Ruina and
// Schwab (2007), shared by tests/bicycle.rs and benches/bicycle.rs.

mechgen::mechanism! {
    /// The Whipple bicycle (Meijaard et al. 2007, the benchmark bicycle): a rear frame with
    /// the rider, a front frame (fork and handlebar) turning about the tilted steer axis,
    /// and two knife-edge wheels rolling without slipping on the ground plane. Axes as in
    /// the benchmark: x forward, y to the right, z down. Coordinates: the rear contact
    /// point (`x`, `y`), yaw `psi`, roll `phi`, the rear frame's pitch `theta`, steer
    /// `delta`, the wheels' rotations `thr`, `thf`. One holonomic constraint (the front
    /// wheel touches the ground) and four velocity constraints (no slip at either contact):
    /// three degrees of freedom, with roll, steer and the rear wheel's rotation independent.
    pub mod whipple {
        /// Wheelbase, trail (m), steer axis tilt from the vertical (rad), gravity (m/s²).
        param w = 1.02;
        param c = 0.08;
        param lam = pi / 10.0;
        param g = 9.81;
        /// Rear wheel: radius (m), mass (kg), moments of inertia (kg m²).
        param r_r = 0.3;
        param m_r = 2.0;
        param i_rxx = 0.0603;
        param i_ryy = 0.12;
        /// Rear body and frame: centre of mass (m, from the rear contact), mass, inertia.
        param x_b = 0.3;
        param z_b = -0.9;
        param m_b = 85.0;
        param i_bxx = 9.2;
        param i_bxz = 2.4;
        param i_byy = 11.0;
        param i_bzz = 2.8;
        /// Front frame (fork and handlebar): centre of mass, mass, inertia.
        param x_h = 0.9;
        param z_h = -0.7;
        param m_h = 4.0;
        param i_hxx = 0.05892;
        param i_hxz = -0.00756;
        param i_hyy = 0.06;
        param i_hzz = 0.00708;
        /// Front wheel: radius, mass, moments of inertia.
        param r_f = 0.35;
        param m_f = 3.0;
        param i_fxx = 0.1405;
        param i_fyy = 0.28;
        coord x = 0.0;
        coord y = 0.0;
        coord psi = 0.0;
        coord phi = 0.0;
        coord theta = 0.0;
        coord delta = 0.0;
        coord thr = 0.0;
        coord thf = 0.0;
        independent phi, delta, thr;
        gravity = vec3(0.0, 0.0, g);
        // The rear wheel's plane (yaw, then roll), its centre above the contact point.
        let lean = frame(vec3(x, y, 0.0), rot_z(psi) * rot_x(phi));
        let rear_centre = lean.point(vec3(0.0, 0.0, -r_r));
        let rear_wheel = frame(rear_centre, lean.rotation * rot_y(thr));
        let rear_frame = frame(rear_centre, lean.rotation * rot_y(theta));
        // The front frame turns by `delta` about the steer axis, through the point of the
        // rear frame where the axis meets the ground in the reference pose.
        let front_frame = rear_frame * translate(vec3(w + c, 0.0, r_r)) * rot_y(lam) * rot_z(delta) * rot_y(-lam);
        let front_centre = front_frame.point(vec3(-c, 0.0, -r_f));
        let front_wheel = frame(front_centre, front_frame.rotation * rot_y(thf));
        // The front contact: the lowest point of the front wheel's rim.
        let axle = front_frame.y_axis;
        let down = vec3(0.0, 0.0, 1.0) - axle.z * axle;
        let front_contact = front_centre + r_f / norm(down) * down;
        let rear_contact = vec3(x, y, 0.0);
        constraint front_contact.z == 0.0;
        velocity_constraint vec2(velocity(rear_wheel, rear_contact).x, velocity(rear_wheel, rear_contact).y) == vec2(0.0, 0.0);
        velocity_constraint vec2(velocity(front_wheel, front_contact).x, velocity(front_wheel, front_contact).y) == vec2(0.0, 0.0);
        body rear_wheel_body { mass = m_r, inertia = vec3(i_rxx, i_ryy, i_rxx), frame = rear_wheel }
        body rear_body { mass = m_b, inertia = mat3(i_bxx, 0.0, i_bxz, 0.0, i_byy, 0.0, i_bxz, 0.0, i_bzz), frame = rear_frame * translate(vec3(x_b, 0.0, z_b + r_r)) }
        body front_body { mass = m_h, inertia = mat3(i_hxx, 0.0, i_hxz, 0.0, i_hyy, 0.0, i_hxz, 0.0, i_hzz), frame = front_frame * translate(vec3(x_h - w - c, 0.0, z_h)) }
        body front_wheel_body { mass = m_f, inertia = vec3(i_fxx, i_fyy, i_fxx), frame = front_wheel }
    }
}
