//! Compiles `proto/*.proto` with a vendored protoc, so no system protoc is needed.
fn main() {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc");
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed=proto/neokv.proto");
    println!("cargo:rerun-if-changed=proto/peer.proto");
    prost_build::Config::new()
        .bytes(["."])
        .compile_protos(&["proto/neokv.proto", "proto/peer.proto"], &["proto/"])
        .expect("compile proto/*.proto");
    println!("cargo:rerun-if-changed=src/protocol/ldouble.c");
    cc::Build::new().file("src/protocol/ldouble.c").opt_level(2).compile("neokv_ldouble");
}
