mechgen::mechanism! {
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        let p = vec2(x, y);
        constraint p.x * p.x + p.z * p.z == 1.0;
    }
}

fn main() {}
