mechgen::mechanism! {
    pub mod arm {
        coord x = 0.6;
        coord y = 0.8;
        constraint x * x + y * y == 1.0;
        output speed = der(x);
    }
}

fn main() {}
