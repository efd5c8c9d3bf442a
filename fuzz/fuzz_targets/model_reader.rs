//! Arbitrary bytes as an .onnx file: the reader returns facts or an error,
//! never panics, and never allocates out of proportion to the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = onnx_doctor::model::read_bytes(std::path::Path::new("fuzz.onnx"), data);
});
