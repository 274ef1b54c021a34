//! Hand-written prost types for the ONNX protobuf schema (`onnx/onnx.proto`,
//! ONNX-ML flavour, as shipped with onnx 1.23, IR version 14), plus the test
//! data containers of `onnx/onnx-data.proto`.
//!
//! Written by hand with prost's derive macros so the build needs neither
//! `protoc` nor `prost-build`. Field names, numbers and types follow the
//! spec exactly; the layout mirrors what prost-build would generate (nested
//! messages and enums live in a snake_case module named after their parent)
//! so the types feel familiar.
//!
//! Presence follows the proto3 rendering of the schema (`onnx.proto3`):
//! scalars are plain values that default to zero/empty, sub-messages are
//! `Option`. Repeated numeric fields are encoded packed (proto3 default) but
//! decode either way, so proto2-written files (unpacked `dims`) load fine.
//!
//! Zero-copy: `TensorProto::raw_data` is a [`bytes::Bytes`]. Decoding a model
//! with `Message::decode(bytes::Bytes)` slices weight payloads straight out of
//! the source buffer (e.g. a memory map) instead of copying them.

// ---------------------------------------------------------------------------
// Versioning
// ---------------------------------------------------------------------------

/// IR versions; `ModelProto::ir_version` carries one of these values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Version {
    /// Placeholder: proto3 requires the first enum value to be zero.
    StartVersion = 0,
    IrVersion20171010 = 1,
    IrVersion20171030 = 2,
    IrVersion2017113 = 3,
    IrVersion2019122 = 4,
    IrVersion2019318 = 5,
    IrVersion2019919 = 6,
    IrVersion202058 = 7,
    IrVersion2021730 = 8,
    IrVersion202355 = 9,
    IrVersion2024325 = 10,
    /// IR 11: FLOAT4E2M1, multi-device protobuf classes.
    IrVersion20250512 = 11,
    /// IR 12: FLOAT8E8M0.
    IrVersion20250826 = 12,
    /// IR 13: UINT2, INT2.
    IrVersion20251106 = 13,
    /// Current IR version of the schema (14): FLOAT6E2M3, FLOAT6E3M2.
    IrVersion = 14,
}

/// Legacy operator status; only referenced by `onnx-operators.proto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum OperatorStatus {
    Experimental = 0,
    Stable = 1,
}

// ---------------------------------------------------------------------------
// Model, graph, function: the containers
// ---------------------------------------------------------------------------

/// Top-level file format: metadata, opset imports and the main graph.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// See [`Version`]; must be present.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// Operator sets the graph binds against (at least the default domain).
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    #[prost(string, tag = "2")]
    pub producer_name: String,
    #[prost(string, tag = "3")]
    pub producer_version: String,
    #[prost(string, tag = "4")]
    pub domain: String,
    #[prost(int64, tag = "5")]
    pub model_version: i64,
    #[prost(string, tag = "6")]
    pub doc_string: String,
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
    #[prost(message, repeated, tag = "20")]
    pub training_info: Vec<TrainingInfoProto>,
    /// Model-local functions, callable by (domain, name, overload).
    #[prost(message, repeated, tag = "25")]
    pub functions: Vec<FunctionProto>,
    /// Multi-device configurations referenced by nodes (IR 11).
    #[prost(message, repeated, tag = "26")]
    pub configuration: Vec<DeviceConfigurationProto>,
}

/// A computation graph: topologically sorted nodes plus named values.
/// Reserved tags 3, 4, 6..=9 (old ir_version/producer/domain fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors; may also appear as graph inputs (defaults).
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "15")]
    pub sparse_initializer: Vec<SparseTensorProto>,
    #[prost(string, tag = "10")]
    pub doc_string: String,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// Optional type/shape info for intermediate values.
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "14")]
    pub quantization_annotation: Vec<TensorAnnotation>,
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// A model-local function (operator defined by a body of nodes).
/// Reserved tags 2 (since_version) and 3 (status).
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, repeated, tag = "4")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "5")]
    pub output: Vec<String>,
    /// Attribute names without defaults.
    #[prost(string, repeated, tag = "6")]
    pub attribute: Vec<String>,
    /// Attributes with default values (IR 9).
    #[prost(message, repeated, tag = "11")]
    pub attribute_proto: Vec<AttributeProto>,
    #[prost(message, repeated, tag = "7")]
    pub node: Vec<NodeProto>,
    #[prost(string, tag = "8")]
    pub doc_string: String,
    #[prost(message, repeated, tag = "9")]
    pub opset_import: Vec<OperatorSetIdProto>,
    #[prost(string, tag = "10")]
    pub domain: String,
    /// Distinguishes functions sharing (domain, name) (IR 10).
    #[prost(string, tag = "13")]
    pub overload: String,
    #[prost(message, repeated, tag = "12")]
    pub value_info: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// Identifies an operator set: `domain` ("" or "ai.onnx" is the default
/// domain) at a given version.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    pub domain: String,
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// Training step description; carried through but not compiled.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrainingInfoProto {
    #[prost(message, optional, tag = "1")]
    pub initialization: Option<GraphProto>,
    #[prost(message, optional, tag = "2")]
    pub algorithm: Option<GraphProto>,
    #[prost(message, repeated, tag = "3")]
    pub initialization_binding: Vec<StringStringEntryProto>,
    #[prost(message, repeated, tag = "4")]
    pub update_binding: Vec<StringStringEntryProto>,
}

// ---------------------------------------------------------------------------
// Nodes and attributes
// ---------------------------------------------------------------------------

/// One operator application. Empty strings in `input`/`output` denote
/// omitted optional operands.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub op_type: String,
    #[prost(string, tag = "7")]
    pub domain: String,
    /// Selects a function overload (IR 10).
    #[prost(string, tag = "8")]
    pub overload: String,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    #[prost(string, tag = "6")]
    pub doc_string: String,
    #[prost(message, repeated, tag = "9")]
    pub metadata_props: Vec<StringStringEntryProto>,
    #[prost(message, repeated, tag = "10")]
    pub device_configurations: Vec<NodeDeviceConfigurationProto>,
}

/// A named attribute. `r#type` says which value field is in use, since
/// proto3 cannot distinguish an unset scalar from zero.
/// Reserved tags 12 (old `v`) and 16..=19.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    /// Inside function bodies: refers to an attribute of the caller.
    #[prost(string, tag = "21")]
    pub ref_attr_name: String,
    #[prost(string, tag = "13")]
    pub doc_string: String,
    #[prost(enumeration = "attribute_proto::AttributeType", tag = "20")]
    pub r#type: i32,
    #[prost(float, tag = "2")]
    pub f: f32,
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// UTF-8 string (kept as bytes: the spec says bytes).
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    #[prost(message, optional, tag = "6")]
    pub g: Option<GraphProto>,
    #[prost(message, optional, tag = "22")]
    pub sparse_tensor: Option<SparseTensorProto>,
    #[prost(message, optional, tag = "14")]
    pub tp: Option<TypeProto>,
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    #[prost(message, repeated, tag = "10")]
    pub tensors: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub graphs: Vec<GraphProto>,
    #[prost(message, repeated, tag = "23")]
    pub sparse_tensors: Vec<SparseTensorProto>,
    #[prost(message, repeated, tag = "15")]
    pub type_protos: Vec<TypeProto>,
}

/// Nested types of [`AttributeProto`].
pub mod attribute_proto {
    /// Discriminates the value field of an attribute. Numbering is not in
    /// declaration order (singular SPARSE_TENSOR/TYPE_PROTO came later).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum AttributeType {
        Undefined = 0,
        Float = 1,
        Int = 2,
        String = 3,
        Tensor = 4,
        Graph = 5,
        SparseTensor = 11,
        TypeProto = 13,
        Floats = 6,
        Ints = 7,
        Strings = 8,
        Tensors = 9,
        Graphs = 10,
        SparseTensors = 12,
        TypeProtos = 14,
    }
}

// ---------------------------------------------------------------------------
// Values, types and shapes
// ---------------------------------------------------------------------------

/// Name plus (optional) type of a graph input, output or intermediate.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
    #[prost(string, tag = "3")]
    pub doc_string: String,
    #[prost(message, repeated, tag = "4")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// The type of a value: tensor, sequence, map, optional, sparse tensor or
/// opaque.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    #[prost(oneof = "type_proto::Value", tags = "1, 4, 5, 9, 8, 7")]
    pub value: Option<type_proto::Value>,
    #[prost(string, tag = "6")]
    pub denotation: String,
}

/// Nested types of [`TypeProto`].
pub mod type_proto {
    /// Dense tensor type; `elem_type` is a `tensor_proto::DataType` value.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Tensor {
        #[prost(int32, tag = "1")]
        pub elem_type: i32,
        /// Absent shape means unknown rank.
        #[prost(message, optional, tag = "2")]
        pub shape: Option<super::TensorShapeProto>,
    }

    /// Homogeneous sequence; boxed because `TypeProto` is recursive.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sequence {
        #[prost(message, optional, boxed, tag = "1")]
        pub elem_type: Option<Box<super::TypeProto>>,
    }

    /// Map with an integral or string key (`tensor_proto::DataType` value).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Map {
        #[prost(int32, tag = "1")]
        pub key_type: i32,
        #[prost(message, optional, boxed, tag = "2")]
        pub value_type: Option<Box<super::TypeProto>>,
    }

    /// A value that may be absent.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Optional {
        #[prost(message, optional, boxed, tag = "1")]
        pub elem_type: Option<Box<super::TypeProto>>,
    }

    /// Sparse tensor type; same shape as [`Tensor`].
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SparseTensor {
        #[prost(int32, tag = "1")]
        pub elem_type: i32,
        #[prost(message, optional, tag = "2")]
        pub shape: Option<super::TensorShapeProto>,
    }

    /// Opaque, domain-defined type. Reserved tag 3 (old `parameters`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Opaque {
        #[prost(string, tag = "1")]
        pub domain: String,
        #[prost(string, tag = "2")]
        pub name: String,
    }

    /// The `value` oneof of [`super::TypeProto`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        #[prost(message, tag = "1")]
        TensorType(Tensor),
        #[prost(message, tag = "4")]
        SequenceType(Sequence),
        #[prost(message, tag = "5")]
        MapType(Map),
        #[prost(message, tag = "9")]
        OptionalType(Optional),
        #[prost(message, tag = "8")]
        SparseTensorType(SparseTensor),
        #[prost(message, tag = "7")]
        OpaqueType(Opaque),
    }
}

/// A tensor shape; each dimension is a constant, a symbol, or unknown.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<tensor_shape_proto::Dimension>,
}

/// Nested types of [`TensorShapeProto`].
pub mod tensor_shape_proto {
    /// One dimension; `value == None` means unknown.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Dimension {
        #[prost(oneof = "dimension::Value", tags = "1, 2")]
        pub value: Option<dimension::Value>,
        #[prost(string, tag = "3")]
        pub denotation: String,
    }

    /// Nested types of [`Dimension`].
    pub mod dimension {
        /// Constant extent or symbolic name.
        #[derive(Clone, PartialEq, Eq, Hash, prost::Oneof)]
        pub enum Value {
            #[prost(int64, tag = "1")]
            DimValue(i64),
            #[prost(string, tag = "2")]
            DimParam(String),
        }
    }
}

// ---------------------------------------------------------------------------
// Tensors
// ---------------------------------------------------------------------------

/// A dense tensor constant. Exactly one storage applies: `raw_data`
/// (little-endian, preferred for weights), one of the typed `*_data` lists,
/// or external data (`data_location == EXTERNAL`, see `external_data`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// A `tensor_proto::DataType` value (declared int32 in the spec).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    #[prost(message, optional, tag = "3")]
    pub segment: Option<tensor_proto::Segment>,
    /// FLOAT and COMPLEX64 values.
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// INT32 and every narrower/packed type (ints, bool, f16, bf16, f8, f4...).
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    /// STRING elements.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_data: Vec<Vec<u8>>,
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    #[prost(string, tag = "8")]
    pub name: String,
    #[prost(string, tag = "12")]
    pub doc_string: String,
    /// Bytes rather than Vec<u8>: decoding from a `Bytes` buffer slices the
    /// weights out of it instead of copying.
    #[prost(bytes = "bytes", tag = "9")]
    pub raw_data: bytes::Bytes,
    /// Keys: location, offset, length, checksum (see ExternalData.md).
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    #[prost(enumeration = "tensor_proto::DataLocation", tag = "14")]
    pub data_location: i32,
    /// DOUBLE and COMPLEX128 values.
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// UINT32 and UINT64 values.
    #[prost(uint64, repeated, tag = "11")]
    pub uint64_data: Vec<u64>,
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// Nested types of [`TensorProto`].
pub mod tensor_proto {
    /// Element types. Also used by `TypeProto` element/key types.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DataType {
        Undefined = 0,
        Float = 1,
        Uint8 = 2,
        Int8 = 3,
        Uint16 = 4,
        Int16 = 5,
        Int32 = 6,
        Int64 = 7,
        String = 8,
        Bool = 9,
        Float16 = 10,
        Double = 11,
        Uint32 = 12,
        Uint64 = 13,
        Complex64 = 14,
        Complex128 = 15,
        Bfloat16 = 16,
        /// IR 9 float8 family.
        Float8e4m3fn = 17,
        Float8e4m3fnuz = 18,
        Float8e5m2 = 19,
        Float8e5m2fnuz = 20,
        /// IR 10: 4-bit integers, two per byte.
        Uint4 = 21,
        Int4 = 22,
        /// IR 11.
        Float4e2m1 = 23,
        /// IR 12.
        Float8e8m0 = 24,
        /// IR 13: 2-bit integers, four per byte.
        Uint2 = 25,
        Int2 = 26,
        /// IR 14.
        Float6e2m3 = 27,
        Float6e3m2 = 28,
    }

    /// Where the tensor's payload lives.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DataLocation {
        /// In this message (`raw_data` or a typed list).
        Default = 0,
        /// In a side file described by `external_data`.
        External = 1,
    }

    /// Marks this proto as one chunk `[begin, end)` of a larger tensor.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Segment {
        #[prost(int64, tag = "1")]
        pub begin: i64,
        #[prost(int64, tag = "2")]
        pub end: i64,
    }
}

/// COO sparse tensor: `values` holds the NNZ values, `indices` either
/// `[NNZ]` linearized or `[NNZ, rank]` coordinates.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseTensorProto {
    #[prost(message, optional, tag = "1")]
    pub values: Option<TensorProto>,
    #[prost(message, optional, tag = "2")]
    pub indices: Option<TensorProto>,
    #[prost(int64, repeated, tag = "3")]
    pub dims: Vec<i64>,
}

/// Quantization parameter names attached to a tensor.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorAnnotation {
    #[prost(string, tag = "1")]
    pub tensor_name: String,
    #[prost(message, repeated, tag = "2")]
    pub quant_parameter_tensor_names: Vec<StringStringEntryProto>,
}

/// Portable map entry (the schema avoids proto `map<>`).
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct StringStringEntryProto {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

// ---------------------------------------------------------------------------
// Multi-device configuration (IR 11)
// ---------------------------------------------------------------------------

/// A named device set a model can be partitioned over.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeviceConfigurationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int32, tag = "2")]
    pub num_devices: i32,
    /// Optional device names (`num_devices` entries).
    #[prost(string, repeated, tag = "3")]
    pub device: Vec<String>,
}

/// How one node is placed under a given device configuration.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeDeviceConfigurationProto {
    /// Refers to `DeviceConfigurationProto::name`.
    #[prost(string, tag = "1")]
    pub configuration_id: String,
    #[prost(message, repeated, tag = "2")]
    pub sharding_spec: Vec<ShardingSpecProto>,
    #[prost(int32, tag = "3")]
    pub pipeline_stage: i32,
}

/// Sharding of one node input/output over devices.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShardingSpecProto {
    #[prost(string, tag = "1")]
    pub tensor_name: String,
    /// Device ids or device-group ids (see `index_to_device_group_map`).
    #[prost(int64, repeated, tag = "2")]
    pub device: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub index_to_device_group_map: Vec<IntIntListEntryProto>,
    #[prost(message, repeated, tag = "4")]
    pub sharded_dim: Vec<ShardedDimProto>,
}

/// Sharding of one tensor axis.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShardedDimProto {
    #[prost(int64, tag = "1")]
    pub axis: i64,
    #[prost(message, repeated, tag = "2")]
    pub simple_sharding: Vec<SimpleShardedDimProto>,
}

/// A (possibly symbolic) extent split into `num_shards` pieces.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SimpleShardedDimProto {
    #[prost(oneof = "simple_sharded_dim_proto::Dim", tags = "1, 2")]
    pub dim: Option<simple_sharded_dim_proto::Dim>,
    #[prost(int64, tag = "3")]
    pub num_shards: i64,
}

/// Nested types of [`SimpleShardedDimProto`].
pub mod simple_sharded_dim_proto {
    /// Constant or symbolic extent being sharded.
    #[derive(Clone, PartialEq, Eq, Hash, prost::Oneof)]
    pub enum Dim {
        #[prost(int64, tag = "1")]
        DimValue(i64),
        #[prost(string, tag = "2")]
        DimParam(String),
    }
}

/// Portable `map<int64, repeated int64>` entry.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct IntIntListEntryProto {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
}

// ---------------------------------------------------------------------------
// Test data containers (onnx-data.proto): backend test inputs/outputs that
// are not plain tensors.
// ---------------------------------------------------------------------------

/// A sequence of values, all of kind `elem_type`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SequenceProto {
    #[prost(string, tag = "1")]
    pub name: String,
    /// A `sequence_proto::DataType` value.
    #[prost(int32, tag = "2")]
    pub elem_type: i32,
    #[prost(message, repeated, tag = "3")]
    pub tensor_values: Vec<TensorProto>,
    #[prost(message, repeated, tag = "4")]
    pub sparse_tensor_values: Vec<SparseTensorProto>,
    #[prost(message, repeated, tag = "5")]
    pub sequence_values: Vec<SequenceProto>,
    #[prost(message, repeated, tag = "6")]
    pub map_values: Vec<MapProto>,
    #[prost(message, repeated, tag = "7")]
    pub optional_values: Vec<OptionalProto>,
}

/// Nested types of [`SequenceProto`].
pub mod sequence_proto {
    /// Kind of the sequence elements.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DataType {
        Undefined = 0,
        Tensor = 1,
        SparseTensor = 2,
        Sequence = 3,
        Map = 4,
        Optional = 5,
    }
}

/// A map stored as parallel key and value lists.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MapProto {
    #[prost(string, tag = "1")]
    pub name: String,
    /// A `tensor_proto::DataType` value (integral or STRING).
    #[prost(int32, tag = "2")]
    pub key_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub keys: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "4")]
    pub string_keys: Vec<Vec<u8>>,
    #[prost(message, optional, tag = "5")]
    pub values: Option<SequenceProto>,
}

/// A possibly-absent value of kind `elem_type`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OptionalProto {
    #[prost(string, tag = "1")]
    pub name: String,
    /// An `optional_proto::DataType` value.
    #[prost(int32, tag = "2")]
    pub elem_type: i32,
    #[prost(message, optional, tag = "3")]
    pub tensor_value: Option<TensorProto>,
    #[prost(message, optional, tag = "4")]
    pub sparse_tensor_value: Option<SparseTensorProto>,
    #[prost(message, optional, tag = "5")]
    pub sequence_value: Option<SequenceProto>,
    #[prost(message, optional, tag = "6")]
    pub map_value: Option<MapProto>,
    /// Boxed: the message is directly recursive.
    #[prost(message, optional, boxed, tag = "7")]
    pub optional_value: Option<Box<OptionalProto>>,
}

/// Nested types of [`OptionalProto`].
pub mod optional_proto {
    /// Kind of the contained value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DataType {
        Undefined = 0,
        Tensor = 1,
        SparseTensor = 2,
        Sequence = 3,
        Map = 4,
        Optional = 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use prost::Message;

    fn dim_value(v: i64) -> tensor_shape_proto::Dimension {
        tensor_shape_proto::Dimension {
            value: Some(tensor_shape_proto::dimension::Value::DimValue(v)),
            denotation: String::new(),
        }
    }

    fn dim_param(p: &str) -> tensor_shape_proto::Dimension {
        tensor_shape_proto::Dimension {
            value: Some(tensor_shape_proto::dimension::Value::DimParam(p.into())),
            denotation: String::new(),
        }
    }

    fn tensor_type(
        elem: tensor_proto::DataType,
        dims: Vec<tensor_shape_proto::Dimension>,
    ) -> TypeProto {
        TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: elem as i32,
                shape: Some(TensorShapeProto { dim: dims }),
            })),
            denotation: String::new(),
        }
    }

    /// `Relu(Add(x, w))`-style model with one node, a raw_data initializer,
    /// a symbolic batch dimension and an opset import.
    fn small_model() -> ModelProto {
        let weights: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let w = TensorProto {
            dims: vec![4],
            data_type: tensor_proto::DataType::Float as i32,
            name: "w".into(),
            raw_data: Bytes::from(weights),
            ..Default::default()
        };
        let node = NodeProto {
            input: vec!["x".into(), "w".into()],
            output: vec!["y".into()],
            name: "add0".into(),
            op_type: "Add".into(),
            attribute: vec![AttributeProto {
                name: "note".into(),
                r#type: attribute_proto::AttributeType::Ints as i32,
                ints: vec![1, -2, 3],
                ..Default::default()
            }],
            ..Default::default()
        };
        let graph = GraphProto {
            node: vec![node],
            name: "g".into(),
            initializer: vec![w],
            input: vec![ValueInfoProto {
                name: "x".into(),
                r#type: Some(tensor_type(
                    tensor_proto::DataType::Float,
                    vec![dim_param("N"), dim_value(4)],
                )),
                ..Default::default()
            }],
            output: vec![ValueInfoProto {
                name: "y".into(),
                r#type: Some(tensor_type(
                    tensor_proto::DataType::Float,
                    vec![dim_param("N"), dim_value(4)],
                )),
                ..Default::default()
            }],
            ..Default::default()
        };
        ModelProto {
            ir_version: Version::IrVersion as i64,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: 21,
            }],
            producer_name: "onnxc-test".into(),
            graph: Some(graph),
            ..Default::default()
        }
    }

    #[test]
    fn model_roundtrip() {
        let model = small_model();
        let encoded = Bytes::from(model.encode_to_vec());
        let decoded = ModelProto::decode(encoded).unwrap();
        assert_eq!(decoded, model);

        let g = decoded.graph.as_ref().unwrap();
        assert_eq!(g.node[0].op_type, "Add");
        let init = &g.initializer[0];
        assert_eq!(init.data_type, tensor_proto::DataType::Float as i32);
        assert_eq!(init.raw_data.len(), 16);
        let Some(type_proto::Value::TensorType(t)) =
            g.input[0].r#type.as_ref().unwrap().value.as_ref()
        else {
            panic!("input is not a tensor type");
        };
        let shape = t.shape.as_ref().unwrap();
        assert_eq!(
            shape.dim[0].value,
            Some(tensor_shape_proto::dimension::Value::DimParam("N".into()))
        );
        assert_eq!(
            shape.dim[1].value,
            Some(tensor_shape_proto::dimension::Value::DimValue(4))
        );
        assert_eq!(
            g.node[0].attribute[0].r#type(),
            attribute_proto::AttributeType::Ints
        );
    }

    #[test]
    fn raw_data_is_zero_copy() {
        let source = Bytes::from(small_model().encode_to_vec());
        let range = source.as_ptr_range();
        let decoded = ModelProto::decode(source.clone()).unwrap();
        let raw = &decoded.graph.as_ref().unwrap().initializer[0].raw_data;
        assert_eq!(raw.len(), 16);
        let raw_range = raw.as_ptr_range();
        assert!(
            range.start <= raw_range.start && raw_range.end <= range.end,
            "raw_data was copied out of the source buffer"
        );
        // Same bytes as the payload we encoded, found at that offset.
        let offset = raw_range.start as usize - range.start as usize;
        assert_eq!(&source[offset..offset + 16], &raw[..]);
    }

    // Minimal protobuf writer for hand-built wire bytes.
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
        varint(out, (u64::from(field) << 3) | u64::from(wire));
    }

    fn field_varint(out: &mut Vec<u8>, field: u32, v: u64) {
        key(out, field, 0);
        varint(out, v);
    }

    fn field_bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
        key(out, field, 2);
        varint(out, data.len() as u64);
        out.extend_from_slice(data);
    }

    #[test]
    fn field_numbers_match_spec() {
        // TensorProto: dims=1 (unpacked, as proto2 writers emit it, then
        // packed), data_type=2, name=8, raw_data=9, data_location=14.
        let mut tensor = Vec::new();
        field_varint(&mut tensor, 1, 2);
        let mut packed = Vec::new();
        varint(&mut packed, 3);
        field_bytes(&mut tensor, 1, &packed);
        field_varint(&mut tensor, 2, 7);
        field_bytes(&mut tensor, 8, b"w");
        field_bytes(&mut tensor, 9, &[1, 2, 3, 4]);
        field_varint(&mut tensor, 14, 1);
        let t = TensorProto::decode(Bytes::from(tensor.clone())).unwrap();
        assert_eq!(t.dims, vec![2, 3]);
        assert_eq!(
            tensor_proto::DataType::try_from(t.data_type),
            Ok(tensor_proto::DataType::Int64)
        );
        assert_eq!(t.name, "w");
        assert_eq!(&t.raw_data[..], &[1, 2, 3, 4]);
        assert_eq!(t.data_location(), tensor_proto::DataLocation::External);

        // NodeProto: input=1, output=2, op_type=4, domain=7.
        let mut node = Vec::new();
        field_bytes(&mut node, 1, b"a");
        field_bytes(&mut node, 2, b"b");
        field_bytes(&mut node, 4, b"Relu");
        field_bytes(&mut node, 7, b"com.example");
        let n = NodeProto::decode(&node[..]).unwrap();
        assert_eq!((n.input[0].as_str(), n.output[0].as_str()), ("a", "b"));
        assert_eq!(n.op_type, "Relu");
        assert_eq!(n.domain, "com.example");

        // GraphProto: node=1, initializer=5.
        let mut graph = Vec::new();
        field_bytes(&mut graph, 1, &node);
        field_bytes(&mut graph, 5, &tensor);

        // OperatorSetIdProto: domain=1, version=2.
        let mut opset = Vec::new();
        field_bytes(&mut opset, 1, b"");
        field_varint(&mut opset, 2, 21);

        // ModelProto: ir_version=1, graph=7, opset_import=8.
        let mut model = Vec::new();
        field_varint(&mut model, 1, 10);
        field_bytes(&mut model, 7, &graph);
        field_bytes(&mut model, 8, &opset);
        let m = ModelProto::decode(Bytes::from(model)).unwrap();
        assert_eq!(m.ir_version, 10);
        assert_eq!(
            m.opset_import,
            vec![OperatorSetIdProto {
                domain: String::new(),
                version: 21
            }]
        );
        let g = m.graph.unwrap();
        assert_eq!(g.node, vec![n]);
        assert_eq!(g.initializer, vec![t]);

        // AttributeProto: name=1, i=3, type=20; TypeProto oneof tags.
        let mut attr = Vec::new();
        field_bytes(&mut attr, 1, b"axis");
        field_varint(&mut attr, 3, u64::MAX); // -1 as int64 varint
        field_varint(&mut attr, 20, 2);
        let a = AttributeProto::decode(&attr[..]).unwrap();
        assert_eq!(a.name, "axis");
        assert_eq!(a.i, -1);
        assert_eq!(a.r#type(), attribute_proto::AttributeType::Int);

        // TypeProto.optional_type=9 wrapping sequence_type=4 of tensor_type=1.
        let mut tensor_ty = Vec::new();
        field_varint(&mut tensor_ty, 1, 1);
        let mut seq_inner = Vec::new();
        field_bytes(&mut seq_inner, 1, &tensor_ty);
        let mut seq = Vec::new();
        field_bytes(&mut seq, 1, &seq_inner);
        let mut seq_ty = Vec::new();
        field_bytes(&mut seq_ty, 4, &seq);
        let mut opt = Vec::new();
        field_bytes(&mut opt, 1, &seq_ty);
        let mut ty = Vec::new();
        field_bytes(&mut ty, 9, &opt);
        let tp = TypeProto::decode(&ty[..]).unwrap();
        let Some(type_proto::Value::OptionalType(o)) = tp.value else {
            panic!("expected optional_type, got {tp:?}");
        };
        let Some(type_proto::Value::SequenceType(s)) = o.elem_type.unwrap().value else {
            panic!("expected sequence_type");
        };
        let Some(type_proto::Value::TensorType(tt)) = s.elem_type.unwrap().value else {
            panic!("expected tensor_type");
        };
        assert_eq!(tt.elem_type, tensor_proto::DataType::Float as i32);
    }

    #[test]
    fn newest_data_types_have_spec_numbers() {
        use tensor_proto::DataType as D;
        assert_eq!(D::try_from(17), Ok(D::Float8e4m3fn));
        assert_eq!(D::try_from(21), Ok(D::Uint4));
        assert_eq!(D::try_from(22), Ok(D::Int4));
        assert_eq!(D::try_from(23), Ok(D::Float4e2m1));
        assert_eq!(D::try_from(24), Ok(D::Float8e8m0));
        assert_eq!(D::try_from(25), Ok(D::Uint2));
        assert_eq!(D::try_from(26), Ok(D::Int2));
        assert_eq!(D::try_from(28), Ok(D::Float6e3m2));
        assert!(D::try_from(29).is_err());
        assert_eq!(Version::IrVersion as i32, 14);
    }

    /// Cross-check against the reference implementation: set
    /// `ONNXC_PY_MODEL` to a model file written by python `onnx`.
    #[test]
    fn decode_external_model_if_given() {
        let Ok(path) = std::env::var("ONNXC_PY_MODEL") else {
            return;
        };
        let data = Bytes::from(std::fs::read(&path).unwrap());
        let m = ModelProto::decode(data.clone()).unwrap();
        assert!(m.ir_version > 0);
        let g = m.graph.as_ref().unwrap();
        assert!(!g.node.is_empty());
        for init in &g.initializer {
            if !init.raw_data.is_empty() {
                let r = init.raw_data.as_ptr_range();
                let d = data.as_ptr_range();
                assert!(d.start <= r.start && r.end <= d.end);
            }
        }
        // Re-encoding must reproduce a message equal to the original.
        let again = ModelProto::decode(Bytes::from(m.encode_to_vec())).unwrap();
        assert_eq!(again, m);
    }
}
