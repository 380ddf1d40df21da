//! The `moss` binary as a black box, linked as one test binary (one module per area).
//!
//! The modules share a process safely: no test changes this process's environment (each sets
//! the variables of the `moss` and `mossd` processes it spawns), every test has its own
//! `MOSS_HOME` and address, and the lifecycle tests stop or kill only daemons they started.
//! Run one area with `cargo test -p moss-cli --test it lifecycle::`.

mod bridge;
mod cli;
mod consistency;
mod full_disk;
mod lifecycle;
mod output;
mod readme;
mod semantic;
