//! Raw bindings to libdeskaudio's C API: every function, type and constant of deskaudio.h,
//! as bindgen makes them from the installed header at build time. Everything here is
//! `unsafe` to call; the `deskaudio` crate is the safe API over it. The header's comments
//! (the library's documentation) say what each call does, who owns what and on which thread
//! callbacks run.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]
include!(concat!(env!("OUT_DIR"), "/deskaudio.rs"));
