// A five-bar and a delta robot written with frames and joints, shared by tests/joints.rs,
// tests/charts.rs and examples/animate.rs.

mechgen::mechanism! {
    /// A planar five-bar: two cranks at the base pivots (actuated), two distal links
    /// meeting at the tool point in a pin joint; links as uniform bars under gravity, with
    /// optional damping at the base joints. The chart `distal` has the distal links'
    /// angles independent.
    pub mod five_bar {
        param d = 0.5;
        param a = 0.4;
        param b = 0.6;
        param m = 0.1;
        param g = 9.81;
        param damping = 0.0;
        coord th1 = 2.0;
        coord th2 = 1.0;
        coord ph1 = 0.7131736682768216;
        coord ph2 = 2.3669581625353264;
        independent th1, th2;
        independent distal: ph1, ph2;
        let left = rot(th1);
        let right = translate(vec2(d, 0.0)) * rot(th2);
        let left_distal = frame(left.point(vec2(a, 0.0)), ph1);
        let right_distal = frame(right.point(vec2(a, 0.0)), ph2);
        joint tool_pin = revolute(left_distal * translate(vec2(b, 0.0)), right_distal * translate(vec2(b, 0.0)));
        body crank_l { mass = m, inertia = m * a * a / 12.0, frame = left * translate(vec2(a / 2.0, 0.0)) }
        body crank_r { mass = m, inertia = m * a * a / 12.0, frame = right * translate(vec2(a / 2.0, 0.0)) }
        body distal_l { mass = m, inertia = m * b * b / 12.0, frame = left_distal * translate(vec2(b / 2.0, 0.0)) }
        body distal_r { mass = m, inertia = m * b * b / 12.0, frame = right_distal * translate(vec2(b / 2.0, 0.0)) }
        gravity = vec2(0.0, -g);
        force th1 = -damping * der(th1);
        force th2 = -damping * der(th2);
        /// The joint points, in drawing order (the tool third).
        output base_l = left.origin;
        output elbow_l = left_distal.origin;
        output tool = left_distal.point(vec2(b, 0.0));
        output elbow_r = right_distal.origin;
        output base_r = right.origin;
    }

    /// Delta robot: three arms turning about horizontal axes at the base (frames), each
    /// joined to the platform by a forearm of fixed length (a distance joint); forward
    /// kinematics in the primary chart, inverse kinematics in the chart `tool`.
    pub mod delta {
        param rb = 0.2;
        param rp = 0.05;
        param la = 0.2;
        param lf = 0.45;
        for i in 0..3 {
            coord th[i] = 0.5;
        }
        coord x = 0.0;
        coord y = 0.0;
        coord z = -0.41;
        independent th_0, th_1, th_2;
        /// Inverse kinematics: the platform position is given.
        independent tool: x, y, z;
        let platform = translate(vec3(x, y, z));
        for i in 0..3 {
            let side[i] = frame(vec3(0.0, 0.0, 0.0), rot_z(2.0 * pi * i / 3.0));
            let arm[i] = side[i] * translate(vec3(rb, 0.0, 0.0)) * rot_y(th[i]);
            joint forearm[i] = distance(arm[i].point(vec3(la, 0.0, 0.0)), platform.point(side[i].apply(vec3(rp, 0.0, 0.0))), lf);
        }
        /// The tool point (the platform's centre).
        output tool = platform.origin;
    }
}
