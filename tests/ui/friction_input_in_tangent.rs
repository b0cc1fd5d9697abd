mechgen::mechanism! {
    pub mod block {
        input belt = 0.0;
        coord x = 0.0;
        coord y = 0.0;
        body b { mass = 1.0, com = vec2(x, y) }
        inequality floor: y >= 0.0, friction = 0.5, tangent = der(x) - belt;
    }
}

fn main() {}
