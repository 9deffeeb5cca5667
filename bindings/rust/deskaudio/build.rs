//! Lets this crate's tests and examples find libdeskaudio at run time when it is installed
//! outside the system's library paths (scripts/install PREFIX): an rpath to the directory
//! deskaudio-sys found it in. A program that uses the crate does the same, or sets
//! LD_LIBRARY_PATH; an installed package (/usr/lib) needs neither.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DESKAUDIO_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_DESKAUDIO_LIBDIR") {
        if dir != "/usr/lib" && !dir.starts_with("/usr/lib/") {
            println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{dir}");
            println!("cargo:rustc-link-arg-examples=-Wl,-rpath,{dir}");
        }
    }
}
