//! ONNX ingestion: protobuf schema, loading, import into the onnx dialect, shape inference, export.

pub mod dialect;
pub mod export;
pub mod foreign;
pub mod forms;
pub mod import;
pub mod infer;
pub mod load;
pub mod proto;
pub mod tensor_io;

pub use import::import_model;
pub use load::{load_model, load_model_bytes, LoadedModel};
