mechgen::mechanism! {
    pub mod chain {
        fn grow(a) {
            grow(a) + 1.0
        }
        coord q = 0.0;
        constraint q == grow(1.0);
    }
}

fn main() {}
