//! Loader + importer on arbitrary bytes: every input must end in a model
//! or a diagnostic. Imported models must verify and export.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    // A directory that does not exist: external data never resolves.
    let dir = PathBuf::from("/nonexistent/onnxc-fuzz");
    let Ok(model) = frontend::load_model_bytes(Bytes::copy_from_slice(data), dir) else {
        return;
    };
    let Ok(m) = frontend::import_model(&model) else {
        return;
    };
    if let Err(d) = ir::verify(&m) {
        panic!("imported module does not verify: {d}");
    }
    if let Ok(proto) = frontend::export::export_model(&m) {
        let _ = frontend::export::encode(&proto);
    }
});
