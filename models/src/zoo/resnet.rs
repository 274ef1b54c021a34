//! ResNet v1 at the ONNX model zoo's resnet50-v1 / resnet152-v1 layout:
//! bias-free Conv → BatchNormalization → Relu, bottleneck units with the
//! stride on the first 1×1 conv, Conv1×1+BN downsample shortcuts, Add,
//! GlobalAveragePool → Flatten → Gemm(1000).

use frontend::proto::ModelProto;

use super::layers::{classifier, conv_bn, pool, relu, Conv, GAMMA, GAMMA_RESIDUAL};
use super::Shapes;
use crate::graph::GraphBuilder;
use crate::GenOptions;

const CLASSES: i64 = 1000;
const WIDTHS: [i64; 4] = [64, 128, 256, 512];

pub(super) fn inputs() -> Shapes {
    super::one("data", &[1, 3, 224, 224])
}

pub(super) fn outputs() -> Shapes {
    super::one("output", &[1, CLASSES])
}

pub(super) fn resnet50(opts: &GenOptions) -> Result<ModelProto, String> {
    build("resnet50v1", [3, 4, 6, 3], opts)
}

pub(super) fn resnet152(opts: &GenOptions) -> Result<ModelProto, String> {
    build("resnet152v1", [3, 8, 36, 3], opts)
}

fn build(name: &str, units: [usize; 4], opts: &GenOptions) -> Result<ModelProto, String> {
    let mut b = GraphBuilder::new(name, opts);
    b.doc(&format!(
        "onnxc zoo: {name}, bottleneck units {units:?}, 3x224x224 -> 1000"
    ));
    let x = b.input_f32("data", &[1, 3, 224, 224]);
    let h = conv_bn(&mut b, "conv0", &x, 3, 64, Conv::k(7).stride(2), GAMMA);
    let h = relu(&mut b, "relu0", &h);
    let mut h = pool(&mut b, "MaxPool", "pool0", &h, 3, 2, 1);
    let mut c_in = 64;
    for (s, (&n, &mid)) in units.iter().zip(&WIDTHS).enumerate() {
        let out = mid * 4;
        for u in 0..n {
            let stride = if s > 0 && u == 0 { 2 } else { 1 };
            let p = format!("stage{}.unit{}", s + 1, u + 1);
            let r = conv_bn(
                &mut b,
                &format!("{p}.conv1"),
                &h,
                c_in,
                mid,
                Conv::k(1).stride(stride),
                GAMMA,
            );
            let r = relu(&mut b, &format!("{p}.relu1"), &r);
            let r = conv_bn(
                &mut b,
                &format!("{p}.conv2"),
                &r,
                mid,
                mid,
                Conv::k(3),
                GAMMA,
            );
            let r = relu(&mut b, &format!("{p}.relu2"), &r);
            let r = conv_bn(
                &mut b,
                &format!("{p}.conv3"),
                &r,
                mid,
                out,
                Conv::k(1),
                GAMMA_RESIDUAL,
            );
            let shortcut = if u == 0 {
                conv_bn(
                    &mut b,
                    &format!("{p}.downsample"),
                    &h,
                    c_in,
                    out,
                    Conv::k(1).stride(stride),
                    GAMMA,
                )
            } else {
                h.clone()
            };
            let sum = b.node("Add", &format!("{p}.add"), &[&r, &shortcut], vec![]);
            h = relu(&mut b, &format!("{p}.relu3"), &sum);
            c_in = out;
        }
    }
    classifier(&mut b, &h, c_in, CLASSES, "output");
    b.output_f32("output", &[1, CLASSES]);
    b.finish()
}
