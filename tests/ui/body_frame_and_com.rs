mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = rot(th);
        body bob { mass = 1.0, inertia = 0.1, frame = A, com = vec2(0.0, 0.0) }
    }
}

fn main() {}
