//! Classic ImageNet CNNs at model-zoo layouts, all 3×224×224 → 1000:
//! VGG-19, DenseNet-121, MobileNetV2 and SqueezeNet 1.1.

use frontend::proto::ModelProto;

use super::layers::{bn, classifier, conv, conv_bn, gemm, pool, relu, Conv, GAMMA, GAMMA_RESIDUAL};
use super::Shapes;
use crate::graph::{attr, GraphBuilder};
use crate::GenOptions;

const CLASSES: i64 = 1000;

pub(super) fn inputs() -> Shapes {
    super::one("data", &[1, 3, 224, 224])
}

pub(super) fn outputs() -> Shapes {
    super::one("output", &[1, CLASSES])
}

fn start(name: &str, doc: &str, opts: &GenOptions) -> (GraphBuilder, String) {
    let mut b = GraphBuilder::new(name, opts);
    b.doc(&format!("onnxc zoo: {name}, {doc}"));
    let x = b.input_f32("data", &[1, 3, 224, 224]);
    (b, x)
}

fn finish(mut b: GraphBuilder) -> Result<ModelProto, String> {
    b.output_f32("output", &[1, CLASSES]);
    b.finish()
}

/// VGG-19: 16 Conv3×3(bias)+Relu in 5 stages with MaxPool, 3 Gemm layers.
pub(super) fn vgg19(opts: &GenOptions) -> Result<ModelProto, String> {
    let (mut b, mut h) = start("vgg19", "16 conv + 3 fc (about 144M weights)", opts);
    let mut c_in = 3;
    for (s, (&n, &c)) in [2, 2, 4, 4, 4]
        .iter()
        .zip(&[64, 128, 256, 512, 512])
        .enumerate()
    {
        for u in 0..n {
            let p = format!("features.{}.{}", s + 1, u + 1);
            h = conv(&mut b, &format!("{p}.conv"), &h, c_in, c, Conv::k(3).bias());
            h = relu(&mut b, &format!("{p}.relu"), &h);
            c_in = c;
        }
        h = pool(&mut b, "MaxPool", &format!("pool{}", s + 1), &h, 2, 2, 0);
    }
    let h = b.node("Flatten", "flatten", &[&h], vec![attr::int("axis", 1)]);
    gemm(&mut b, "fc6", &h, 512 * 7 * 7, 4096, "fc6");
    let h = relu(&mut b, "relu6", "fc6");
    let h = b.node("Dropout", "drop6", &[&h], vec![]);
    gemm(&mut b, "fc7", &h, 4096, 4096, "fc7");
    let h = relu(&mut b, "relu7", "fc7");
    let h = b.node("Dropout", "drop7", &[&h], vec![]);
    gemm(&mut b, "fc8", &h, 4096, CLASSES, "output");
    finish(b)
}

/// DenseNet-121: growth 32, blocks [6, 12, 24, 16] of BN-Relu-Conv1×1-
/// BN-Relu-Conv3×3 layers whose outputs are concatenated, with
/// BN-Relu-Conv1×1-AveragePool transitions.
pub(super) fn densenet121(opts: &GenOptions) -> Result<ModelProto, String> {
    const GROWTH: i64 = 32;
    let (mut b, x) = start("densenet121", "growth 32, blocks [6, 12, 24, 16]", opts);
    let h = conv_bn(&mut b, "conv0", &x, 3, 64, Conv::k(7).stride(2), GAMMA);
    let h = relu(&mut b, "relu0", &h);
    let mut h = pool(&mut b, "MaxPool", "pool0", &h, 3, 2, 1);
    let mut c = 64;
    for (s, &n) in [6, 12, 24, 16].iter().enumerate() {
        for l in 0..n {
            let p = format!("block{}.layer{}", s + 1, l + 1);
            let r = bn(&mut b, &format!("{p}.norm1"), &h, c, GAMMA, 1e-5);
            let r = relu(&mut b, &format!("{p}.relu1"), &r);
            let r = conv(&mut b, &format!("{p}.conv1"), &r, c, 4 * GROWTH, Conv::k(1));
            let r = bn(&mut b, &format!("{p}.norm2"), &r, 4 * GROWTH, GAMMA, 1e-5);
            let r = relu(&mut b, &format!("{p}.relu2"), &r);
            let r = conv(
                &mut b,
                &format!("{p}.conv2"),
                &r,
                4 * GROWTH,
                GROWTH,
                Conv::k(3),
            );
            h = b.node(
                "Concat",
                &format!("{p}.concat"),
                &[&h, &r],
                vec![attr::int("axis", 1)],
            );
            c += GROWTH;
        }
        if s < 3 {
            let p = format!("transition{}", s + 1);
            let r = bn(&mut b, &format!("{p}.norm"), &h, c, GAMMA, 1e-5);
            let r = relu(&mut b, &format!("{p}.relu"), &r);
            let r = conv(&mut b, &format!("{p}.conv"), &r, c, c / 2, Conv::k(1));
            c /= 2;
            h = pool(&mut b, "AveragePool", &format!("{p}.pool"), &r, 2, 2, 0);
        }
    }
    let h = bn(&mut b, "norm5", &h, c, GAMMA, 1e-5);
    let h = relu(&mut b, "relu5", &h);
    classifier(&mut b, &h, c, CLASSES, "output");
    finish(b)
}

/// MobileNetV2 (width 1.0): inverted residuals of Conv1×1 expand →
/// depthwise Conv3×3 → Conv1×1 project, BN after each, ReLU6 as Clip(0, 6).
pub(super) fn mobilenetv2(opts: &GenOptions) -> Result<ModelProto, String> {
    let (mut b, x) = start("mobilenetv2", "width 1.0, inverted residuals", opts);
    let lo = b.const_f32("clip_min", &[], &[0.0]);
    let hi = b.const_f32("clip_max", &[], &[6.0]);
    let relu6 =
        |b: &mut GraphBuilder, name: &str, x: &str| b.node("Clip", name, &[x, &lo, &hi], vec![]);
    let h = conv_bn(&mut b, "conv0", &x, 3, 32, Conv::k(3).stride(2), GAMMA);
    let mut h = relu6(&mut b, "conv0.relu6", &h);
    let mut c_in = 32;
    // (expansion t, channels c, repeats n, first stride s)
    let settings = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    let mut k = 0;
    for (t, c, n, s) in settings {
        for u in 0..n {
            k += 1;
            let p = format!("block{k}");
            let stride = if u == 0 { s } else { 1 };
            let hidden = c_in * t;
            let mut r = h.clone();
            if t != 1 {
                r = conv_bn(
                    &mut b,
                    &format!("{p}.expand"),
                    &r,
                    c_in,
                    hidden,
                    Conv::k(1),
                    GAMMA,
                );
                r = relu6(&mut b, &format!("{p}.expand.relu6"), &r);
            }
            let dw = Conv::k(3).stride(stride).group(hidden);
            r = conv_bn(&mut b, &format!("{p}.dw"), &r, hidden, hidden, dw, GAMMA);
            r = relu6(&mut b, &format!("{p}.dw.relu6"), &r);
            let gamma = if stride == 1 && c_in == c {
                GAMMA_RESIDUAL
            } else {
                GAMMA
            };
            r = conv_bn(
                &mut b,
                &format!("{p}.project"),
                &r,
                hidden,
                c,
                Conv::k(1),
                gamma,
            );
            h = if stride == 1 && c_in == c {
                b.node("Add", &format!("{p}.add"), &[&h, &r], vec![])
            } else {
                r
            };
            c_in = c;
        }
    }
    let h = conv_bn(&mut b, "conv_last", &h, c_in, 1280, Conv::k(1), GAMMA);
    let h = relu6(&mut b, "conv_last.relu6", &h);
    classifier(&mut b, &h, 1280, CLASSES, "output");
    finish(b)
}

/// SqueezeNet 1.1: Fire modules (squeeze 1×1, expand 1×1 ‖ 3×3, Concat),
/// biased convs, and a Conv1×1(1000) + GlobalAveragePool head.
pub(super) fn squeezenet(opts: &GenOptions) -> Result<ModelProto, String> {
    let (mut b, x) = start("squeezenet", "1.1, 8 fire modules", opts);
    let h = conv(
        &mut b,
        "conv1",
        &x,
        3,
        64,
        Conv::k(3).stride(2).pad(0).bias(),
    );
    let h = relu(&mut b, "relu1", &h);
    let mut h = pool(&mut b, "MaxPool", "pool1", &h, 3, 2, 0);
    let mut c_in = 64;
    let fires: [(i64, i64); 8] = [
        (16, 64),
        (16, 64),
        (32, 128),
        (32, 128),
        (48, 192),
        (48, 192),
        (64, 256),
        (64, 256),
    ];
    for (i, (sq, ex)) in fires.into_iter().enumerate() {
        let p = format!("fire{}", i + 2);
        let s = conv(
            &mut b,
            &format!("{p}.squeeze"),
            &h,
            c_in,
            sq,
            Conv::k(1).bias(),
        );
        let s = relu(&mut b, &format!("{p}.squeeze.relu"), &s);
        let e1 = conv(
            &mut b,
            &format!("{p}.expand1x1"),
            &s,
            sq,
            ex,
            Conv::k(1).bias(),
        );
        let e1 = relu(&mut b, &format!("{p}.expand1x1.relu"), &e1);
        let e3 = conv(
            &mut b,
            &format!("{p}.expand3x3"),
            &s,
            sq,
            ex,
            Conv::k(3).bias(),
        );
        let e3 = relu(&mut b, &format!("{p}.expand3x3.relu"), &e3);
        h = b.node(
            "Concat",
            &format!("{p}.concat"),
            &[&e1, &e3],
            vec![attr::int("axis", 1)],
        );
        c_in = 2 * ex;
        if i == 1 || i == 3 {
            h = pool(&mut b, "MaxPool", &format!("pool{}", i + 2), &h, 3, 2, 0);
        }
    }
    let h = b.node("Dropout", "drop9", &[&h], vec![]);
    let h = conv(&mut b, "conv10", &h, c_in, CLASSES, Conv::k(1).bias());
    let h = relu(&mut b, "relu10", &h);
    let h = b.node("GlobalAveragePool", "pool10", &[&h], vec![]);
    b.node_outputs(
        "Flatten",
        "flatten",
        &[&h],
        &["output"],
        vec![attr::int("axis", 1)],
    );
    finish(b)
}
