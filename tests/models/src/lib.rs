//! Nothing to use: this crate's tests check the code generated (by its build.rs, from the
//! `.mech` files of `examples/seven_body` and `examples/stewart_platform`) against
//! independent computations: finite differences, the expression DAG evaluated directly,
//! nalgebra's SVD, published values, and the same mechanism written in another form.
