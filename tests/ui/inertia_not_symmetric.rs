mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = translate(vec3(0.0, 0.0, 0.0)) * rot_z(th);
        body top { mass = 1.0, inertia = mat3(1.0, 0.1, 0.0, 0.2, 1.0, 0.0, 0.0, 0.0, 2.0), frame = A }
    }
}

fn main() {}
