use super::*;
use bytes::Bytes;
use ir::elements::{DType, WideNum};

fn f32_elements(n: usize, shape: Vec<i64>) -> Elements {
    let vals: Vec<WideNum> = (0..n)
        .map(|i| WideNum::from_f64(i as f64 * 0.5 - 3.0))
        .collect();
    Elements::from_wide(DType::F32, shape, &vals).unwrap()
}

fn tensor(name: &str, e: &Elements, inline: bool) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: e.shape().to_vec(),
        data_type: 1,
        raw_data: if inline {
            e.to_contiguous_bytes()
        } else {
            Bytes::new()
        },
        ..TensorProto::default()
    }
}

fn temp_out(tag: &str) -> (std::path::PathBuf, Out) {
    let dir = std::env::temp_dir().join(format!("onnxc-stream-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.onnx");
    let file = File::create(&path).unwrap();
    (
        path,
        Out {
            file,
            buf: Vec::new(),
        },
    )
}

/// Deferred payloads (a splat, a lazy view over several chunks, a plain
/// buffer) decode to the values of their views, between inline tensors.
#[test]
fn streamed_model_decodes_like_the_original() {
    let small = f32_elements(2, vec![2]);
    let splat = Elements::splat(DType::F32, vec![64, 64], WideNum::from_f64(1.5)).unwrap();
    // 6 MB: several chunks, packed by workers and the writer.
    let base = f32_elements(1_500_000, vec![3, 500_000]);
    let lazy = base
        .affine_blocks(
            DType::F32,
            500_000,
            vec![2.0, -1.0, 0.5],
            vec![0.0, 1.0, 2.0],
        )
        .unwrap();
    let model = ModelProto {
        ir_version: 8,
        graph: Some(GraphProto {
            name: "g".into(),
            initializer: vec![
                tensor("a", &small, true),
                tensor("b", &splat, false),
                tensor("c", &lazy, false),
                tensor("d", &base, false),
                tensor("e", &small, true),
            ],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let deferred = vec![(1, splat.clone()), (2, lazy.clone()), (3, base.clone())];
    let (path, mut out) = temp_out("decode");
    write_streamed(&mut out, model.clone(), &deferred, None).unwrap();
    drop(out);
    let back = ModelProto::decode(Bytes::from(std::fs::read(&path).unwrap())).unwrap();
    let g = back.graph.unwrap();
    let want = [
        small.to_contiguous_bytes(),
        splat.to_contiguous_bytes(),
        lazy.to_contiguous_bytes(),
        base.to_contiguous_bytes(),
        small.to_contiguous_bytes(),
    ];
    assert_eq!(g.initializer.len(), want.len());
    for (t, w) in g.initializer.iter().zip(&want) {
        assert_eq!(&t.raw_data, w, "{}", t.name);
    }
    assert_eq!(g.name, "g");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// Slices of the mapped input file are copied file to file and arrive
/// intact; the mapping itself is never read for them.
#[test]
fn mapped_slices_are_copied_from_the_source_file() {
    let w = f32_elements(40_000, vec![200, 200]);
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![frontend::proto::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(GraphProto {
            name: "g".into(),
            initializer: vec![tensor("w", &w, true)],
            output: vec![frontend::proto::ValueInfoProto {
                name: "w".into(),
                ..Default::default()
            }],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let (dir_path, out) = temp_out("copy");
    drop(out);
    let dir = dir_path.parent().unwrap().to_path_buf();
    let input = dir.join("in.onnx");
    std::fs::write(&input, model.encode_to_vec()).unwrap();
    let loaded = frontend::load::load_model(&input).unwrap();
    let m = frontend::import::import_model(&loaded).unwrap();
    let source = MappedSource::open(&input, loaded).unwrap();
    let output = dir.join("out.onnx");
    write_model(&m, &output, Some(&source)).unwrap();
    let back = ModelProto::decode(Bytes::from(std::fs::read(&output).unwrap())).unwrap();
    let t = &back.graph.unwrap().initializer[0];
    assert_eq!(t.raw_data, w.to_contiguous_bytes());
    let _ = std::fs::remove_dir_all(&dir);
}
