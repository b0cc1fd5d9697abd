mechgen::mechanism! {
    #![crate = my_mechgen]
    pub mod circle {
        coord x = 0.6;
        coord y = 0.8;
        constraint x * x + y * y == 1.0;
    }
}

fn main() {}
