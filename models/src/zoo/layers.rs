//! Layer helpers shared by the CNN generators: each appends the nodes of one
//! framework layer and its weights, named `{layer}.weight` etc. like exports.

use crate::graph::{attr, GraphBuilder, Init};

/// A 2-D convolution's geometry; `Conv::k(3)` is 3×3, stride 1, "same" pad.
#[derive(Clone, Copy, Debug)]
pub(super) struct Conv {
    pub k: i64,
    pub stride: i64,
    pub pad: i64,
    pub group: i64,
    pub bias: bool,
}

impl Conv {
    pub fn k(k: i64) -> Conv {
        Conv {
            k,
            stride: 1,
            pad: k / 2,
            group: 1,
            bias: false,
        }
    }
    pub fn stride(self, stride: i64) -> Conv {
        Conv { stride, ..self }
    }
    pub fn pad(self, pad: i64) -> Conv {
        Conv { pad, ..self }
    }
    pub fn group(self, group: i64) -> Conv {
        Conv { group, ..self }
    }
    pub fn bias(self) -> Conv {
        Conv { bias: true, ..self }
    }
}

/// `Conv` from `c_in` to `c_out` channels with He-initialized weights.
pub(super) fn conv(
    b: &mut GraphBuilder,
    name: &str,
    x: &str,
    c_in: i64,
    c_out: i64,
    c: Conv,
) -> String {
    let fan_in = c_in / c.group * c.k * c.k;
    let w = b.weight(
        &format!("{name}.weight"),
        &[c_out, c_in / c.group, c.k, c.k],
        Init::he(fan_in),
    );
    let mut inputs = vec![x.to_string(), w];
    if c.bias {
        inputs.push(b.weight(&format!("{name}.bias"), &[c_out], Init::BIAS));
    }
    let mut attrs = vec![
        attr::ints("kernel_shape", &[c.k, c.k]),
        attr::ints("pads", &[c.pad; 4]),
        attr::ints("strides", &[c.stride, c.stride]),
    ];
    if c.group != 1 {
        attrs.push(attr::int("group", c.group));
    }
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    b.node("Conv", name, &refs, attrs)
}

/// Range of a BatchNormalization's scale (gamma). Branches that end in a
/// residual add get a small gamma so a deep untrained stack stays bounded.
pub(super) const GAMMA: (f32, f32) = (0.8, 1.2);
pub(super) const GAMMA_RESIDUAL: (f32, f32) = (0.1, 0.3);

/// Inference-mode `BatchNormalization` with running statistics (var > 0).
pub(super) fn bn(
    b: &mut GraphBuilder,
    name: &str,
    x: &str,
    c: i64,
    gamma: (f32, f32),
    epsilon: f32,
) -> String {
    let scale = b.weight(
        &format!("{name}.gamma"),
        &[c],
        Init::Uniform {
            lo: gamma.0,
            hi: gamma.1,
        },
    );
    let bias = b.weight(
        &format!("{name}.beta"),
        &[c],
        Init::Uniform { lo: -0.1, hi: 0.1 },
    );
    let mean = b.weight(
        &format!("{name}.running_mean"),
        &[c],
        Init::Normal { std: 0.1 },
    );
    let var = b.weight(
        &format!("{name}.running_var"),
        &[c],
        Init::Uniform { lo: 0.5, hi: 1.5 },
    );
    b.node(
        "BatchNormalization",
        name,
        &[x, &scale, &bias, &mean, &var],
        vec![attr::float("epsilon", epsilon)],
    )
}

/// Conv (no bias) → BatchNormalization (eps 1e-5), the common pair.
pub(super) fn conv_bn(
    b: &mut GraphBuilder,
    name: &str,
    x: &str,
    c_in: i64,
    c_out: i64,
    c: Conv,
    gamma: (f32, f32),
) -> String {
    let h = conv(b, name, x, c_in, c_out, c);
    bn(b, &format!("{name}.bn"), &h, c_out, gamma, 1e-5)
}

pub(super) fn relu(b: &mut GraphBuilder, name: &str, x: &str) -> String {
    b.node("Relu", name, &[x], vec![])
}

/// `PRelu` with one learned slope per channel, shaped [C, 1, 1].
pub(super) fn prelu(b: &mut GraphBuilder, name: &str, x: &str, c: i64) -> String {
    let slope = b.weight(
        &format!("{name}.slope"),
        &[c, 1, 1],
        Init::Uniform { lo: 0.1, hi: 0.3 },
    );
    b.node("PRelu", name, &[x, &slope], vec![])
}

/// `kind` = "MaxPool" or "AveragePool", square window.
pub(super) fn pool(
    b: &mut GraphBuilder,
    kind: &str,
    name: &str,
    x: &str,
    k: i64,
    stride: i64,
    pad: i64,
) -> String {
    let attrs = vec![
        attr::ints("kernel_shape", &[k, k]),
        attr::ints("pads", &[pad; 4]),
        attr::ints("strides", &[stride, stride]),
    ];
    b.node(kind, name, &[x], attrs)
}

/// GlobalAveragePool → Flatten → Gemm(transB) with bias: the classifier
/// head of the image models; the Gemm writes graph output `out`.
pub(super) fn classifier(b: &mut GraphBuilder, x: &str, features: i64, classes: i64, out: &str) {
    let h = b.node("GlobalAveragePool", "pool_global", &[x], vec![]);
    let h = b.node("Flatten", "flatten", &[&h], vec![attr::int("axis", 1)]);
    gemm(b, "fc", &h, features, classes, out);
}

/// `Gemm` with weight [out, in] (transB = 1) and bias, writing value `out`.
pub(super) fn gemm(b: &mut GraphBuilder, name: &str, x: &str, n_in: i64, n_out: i64, out: &str) {
    let w = b.weight(&format!("{name}.weight"), &[n_out, n_in], Init::he(n_in));
    let bias = b.weight(&format!("{name}.bias"), &[n_out], Init::BIAS);
    b.node_outputs(
        "Gemm",
        name,
        &[x, &w, &bias],
        &[out],
        vec![attr::int("transB", 1)],
    );
}
