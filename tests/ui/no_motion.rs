mechgen::mechanism! {
    pub mod fixed {
        coord x = 1.0;
        coord y = 2.0;
        constraint x + y == 3.0;
        constraint x - y == -1.0;
    }
}

fn main() {}
