//! `arcface100`: LResNet100E-IR (insightface), 3×112×112 → 512-d embedding.
//! Input normalization (x − 127.5) × 0.0078125, Conv3×3+BN+PRelu stem,
//! [3, 13, 30, 3] IR units (BN → Conv → BN → PRelu → Conv(stride) → BN,
//! Conv1×1+BN shortcut on each stage's first unit), then
//! BN → Flatten → Gemm(512) → BN.

use frontend::proto::ModelProto;

use super::layers::{bn, conv, conv_bn, gemm, prelu, Conv, GAMMA, GAMMA_RESIDUAL};
use super::Shapes;
use crate::graph::{attr, GraphBuilder};
use crate::GenOptions;

const HW: i64 = 112;
const EMBEDDING: i64 = 512;
const UNITS: [usize; 4] = [3, 13, 30, 3];
const WIDTHS: [i64; 4] = [64, 128, 256, 512];
/// insightface's BatchNorm epsilon.
const EPS: f32 = 2e-5;

pub(super) fn inputs() -> Shapes {
    super::one("data", &[1, 3, HW, HW])
}

pub(super) fn outputs() -> Shapes {
    super::one("fc1", &[1, EMBEDDING])
}

pub(super) fn build(opts: &GenOptions) -> Result<ModelProto, String> {
    let mut b = GraphBuilder::new("arcface100", opts);
    b.doc("onnxc zoo: arcface100 (LResNet100E-IR), 3x112x112 -> 512");
    let x = b.input_f32("data", &[1, 3, HW, HW]);
    let mean = b.const_f32("minusscalar0_second", &[], &[127.5]);
    let h = b.node("Sub", "minusscalar0", &[&x, &mean], vec![]);
    let scale = b.const_f32("mulscalar0_second", &[], &[0.007_812_5]);
    let h = b.node("Mul", "mulscalar0", &[&h, &scale], vec![]);
    let h = conv(&mut b, "conv0", &h, 3, 64, Conv::k(3));
    let h = bn(&mut b, "bn0", &h, 64, GAMMA, EPS);
    let mut h = prelu(&mut b, "relu0", &h, 64);
    let mut c_in = 64;
    for (s, (&n, &c)) in UNITS.iter().zip(&WIDTHS).enumerate() {
        for u in 0..n {
            let stride = if u == 0 { 2 } else { 1 };
            let p = format!("stage{}_unit{}", s + 1, u + 1);
            let r = bn(&mut b, &format!("{p}_bn1"), &h, c_in, GAMMA, EPS);
            let r = conv(&mut b, &format!("{p}_conv1"), &r, c_in, c, Conv::k(3));
            let r = bn(&mut b, &format!("{p}_bn2"), &r, c, GAMMA, EPS);
            let r = prelu(&mut b, &format!("{p}_relu1"), &r, c);
            let r = conv(
                &mut b,
                &format!("{p}_conv2"),
                &r,
                c,
                c,
                Conv::k(3).stride(stride),
            );
            let r = bn(&mut b, &format!("{p}_bn3"), &r, c, GAMMA_RESIDUAL, EPS);
            let shortcut = if u == 0 {
                conv_bn(
                    &mut b,
                    &format!("{p}_conv1sc"),
                    &h,
                    c_in,
                    c,
                    Conv::k(1).stride(stride),
                    GAMMA,
                )
            } else {
                h.clone()
            };
            h = b.node("Add", &format!("{p}_plus"), &[&r, &shortcut], vec![]);
            c_in = c;
        }
    }
    let h = bn(&mut b, "bn1", &h, c_in, GAMMA, EPS);
    let h = b.node("Flatten", "flatten", &[&h], vec![attr::int("axis", 1)]);
    let side = HW / 16;
    gemm(
        &mut b,
        "pre_fc1",
        &h,
        c_in * side * side,
        EMBEDDING,
        "pre_fc1",
    );
    bn(&mut b, "fc1", "pre_fc1", EMBEDDING, GAMMA, EPS);
    b.output_f32("fc1", &[1, EMBEDDING]);
    b.finish()
}
