//! Makes the `extern "C"` declarations from the installed deskaudio.h with the `bindgen`
//! command (Debian's package `bindgen`, with libclang), and links libdeskaudio found by
//! `pkg-config deskaudio` (set PKG_CONFIG_PATH for a copy installed elsewhere).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn pkg_config(argument: &str) -> String {
    let output = Command::new("pkg-config")
        .args([argument, "deskaudio"])
        .output()
        .expect("pkg-config runs");
    assert!(
        output.status.success(),
        "pkg-config finds no deskaudio: install libdeskaudio-dev, run scripts/install, or set PKG_CONFIG_PATH"
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn main() {
    let include_dir = pkg_config("--variable=includedir");
    let lib_dir = pkg_config("--variable=libdir");
    let header = format!("{include_dir}/deskaudio.h");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("deskaudio.rs");
    let status = Command::new("bindgen")
        .arg(&header)
        .args(["--allowlist-function", "(deskaudio_|enable_audio|set_audio_callback).*"])
        .args(["--allowlist-type", "deskaudio_.*"])
        .args(["--allowlist-var", "DESKAUDIO_.*"])
        .arg("--no-prepend-enum-name")
        .arg("-o")
        .arg(&out)
        .status()
        .expect("bindgen runs (Debian package bindgen, with libclang)");
    assert!(status.success(), "bindgen failed on {header}");
    println!("cargo:rerun-if-changed={header}");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rustc-link-search=native={lib_dir}");
    println!("cargo:rustc-link-lib=dylib=deskaudio");
    // For the crates that use this one (DEP_DESKAUDIO_LIBDIR in their build scripts): where
    // the library is, so their tests and examples find a copy installed outside the
    // linker's default paths at run time.
    println!("cargo:libdir={lib_dir}");
}
