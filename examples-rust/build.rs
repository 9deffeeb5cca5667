//! Makes the `extern "C"` declarations from the installed deskaudio.h with the `bindgen`
//! command (Debian's package), and links libdeskaudio found by `pkg-config deskaudio`.
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
        "pkg-config finds no deskaudio: run scripts/install, or set PKG_CONFIG_PATH"
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
        .arg("-o")
        .arg(&out)
        .status()
        .expect("bindgen runs (Debian package bindgen, with libclang)");
    assert!(status.success(), "bindgen failed on {header}");
    println!("cargo:rerun-if-changed={header}");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rustc-link-search=native={lib_dir}");
    println!("cargo:rustc-link-lib=dylib=deskaudio");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib_dir}");
}
