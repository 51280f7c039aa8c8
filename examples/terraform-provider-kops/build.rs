//! Generates the server side of Terraform's plugin protocol (version 6) from the
//! protocol's published definition, `proto/tfplugin6.proto`, and of go-plugin's
//! controller. protox compiles the files in Rust, so no `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/tfplugin6.proto", "proto/plugin.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(false)
        .compile_fds(descriptors)?;
    Ok(())
}
