mechgen::mechanism! {
    pub mod circle {
        coord x = 0.6;
        coord y = ;
        let a = x + ;
        constrain x * x == 1.0;
        constraint x * x + y * y == 1.0;
    }
}

fn main() {}
