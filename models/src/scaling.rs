//! Models whose size is a parameter, for the compile-scaling benchmark
//! (`onnxc bench --scaling`, docs/BENCHMARKS.md): a chain of element-wise
//! ops, and a stack of small transformer encoder layers with light weights.
//! Both are named by their node count: `chain-N`, `transformer-N`.

use crate::graph::{attr, GraphBuilder, Init};
use crate::GenOptions;
use frontend::proto::ModelProto;

/// Width of the chain's tensor.
const CHAIN_WIDTH: i64 = 16;
/// Encoder layer sizes: sequence, hidden, heads, feed-forward.
const SEQ: i64 = 8;
const HIDDEN: i64 = 32;
const HEADS: i64 = 2;
const FFN: i64 = 64;
/// ONNX nodes of one encoder layer (checked by a test).
pub const LAYER_NODES: usize = 49;

/// Builds a model of a given node count.
pub type Generator = fn(usize) -> Result<ModelProto, String>;

/// `chain-N` or `transformer-N`: the generator and the node count.
pub fn parse(name: &str) -> Option<(Generator, usize)> {
    let (kind, n) = name.rsplit_once('-')?;
    let n: usize = n.parse().ok().filter(|&n| n > 0 && n <= 10_000_000)?;
    match kind {
        "chain" => Some((chain, n)),
        "transformer" => Some((transformer, n)),
        _ => None,
    }
}

/// `n` nodes alternating Relu and Sigmoid on a 1×16 tensor.
pub fn chain(n: usize) -> Result<ModelProto, String> {
    let mut b = GraphBuilder::new("chain", &GenOptions::default());
    b.doc(&format!("onnxc scaling: chain of {n} Relu/Sigmoid"));
    let mut v = b.input_f32("x", &[1, CHAIN_WIDTH]);
    for i in 0..n {
        let op = if i % 2 == 0 { "Relu" } else { "Sigmoid" };
        let out = if i + 1 == n {
            "y".to_string()
        } else {
            format!("t{i}")
        };
        b.node_outputs(op, &format!("n{i}"), &[&v], &[&out], vec![]);
        v = out;
    }
    b.output_f32("y", &[1, CHAIN_WIDTH]);
    b.finish()
}

/// About `n` nodes: encoder layers (attention, layer norms, an erf-GELU
/// feed-forward) of `LAYER_NODES` nodes each, weights as `ConstantOfShape`.
pub fn transformer(n: usize) -> Result<ModelProto, String> {
    let layers = (n / LAYER_NODES).max(1);
    let opts = GenOptions {
        seed: 7,
        light: true,
    };
    let mut b = GraphBuilder::new("transformer", &opts);
    b.doc(&format!("onnxc scaling: {layers} encoder layers"));
    let mut x = b.input_f32("x", &[SEQ, HIDDEN]);
    let head = HIDDEN / HEADS;
    b.const_i64("split_shape", &[3], &[SEQ, HEADS, head]);
    b.const_i64("merge_shape", &[2], &[SEQ, HIDDEN]);
    b.const_f32("scale", &[], &[(head as f32).sqrt()]);
    b.const_f32("sqrt2", &[], &[std::f32::consts::SQRT_2]);
    b.const_f32("one", &[], &[1.0]);
    b.const_f32("half", &[], &[0.5]);
    for l in 0..layers {
        x = layer(&mut b, &format!("l{l}"), &x);
    }
    b.node_outputs("Identity", "out", &[&x], &["y"], vec![]);
    b.output_f32("y", &[SEQ, HIDDEN]);
    b.finish()
}

fn linear(b: &mut GraphBuilder, p: &str, x: &str, n_in: i64, n_out: i64) -> String {
    let w = b.weight(&format!("{p}.w"), &[n_in, n_out], Init::he(n_in));
    let bias = b.weight(&format!("{p}.b"), &[n_out], Init::BIAS);
    let h = b.node("MatMul", &format!("{p}.mm"), &[x, &w], vec![]);
    b.node("Add", &format!("{p}.add"), &[&h, &bias], vec![])
}

fn layer_norm(b: &mut GraphBuilder, p: &str, x: &str) -> String {
    let g = b.weight(&format!("{p}.g"), &[HIDDEN], Init::Const(1.0));
    let beta = b.weight(&format!("{p}.beta"), &[HIDDEN], Init::Const(0.0));
    let eps = attr::float("epsilon", 1e-5);
    b.node("LayerNormalization", p, &[x, &g, &beta], vec![eps])
}

fn heads(b: &mut GraphBuilder, p: &str, x: &str, perm: &[i64]) -> String {
    let r = b.node(
        "Reshape",
        &format!("{p}.split"),
        &[x, "split_shape"],
        vec![],
    );
    let perm = attr::ints("perm", perm);
    b.node("Transpose", &format!("{p}.heads"), &[&r], vec![perm])
}

fn layer(b: &mut GraphBuilder, p: &str, x: &str) -> String {
    let q = linear(b, &format!("{p}.q"), x, HIDDEN, HIDDEN);
    let k = linear(b, &format!("{p}.k"), x, HIDDEN, HIDDEN);
    let v = linear(b, &format!("{p}.v"), x, HIDDEN, HIDDEN);
    let q = heads(b, &format!("{p}.q"), &q, &[1, 0, 2]);
    let k = heads(b, &format!("{p}.k"), &k, &[1, 2, 0]);
    let v = heads(b, &format!("{p}.v"), &v, &[1, 0, 2]);
    let s = b.node("MatMul", &format!("{p}.scores"), &[&q, &k], vec![]);
    let s = b.node("Div", &format!("{p}.scaled"), &[&s, "scale"], vec![]);
    let axis = attr::int("axis", -1);
    let s = b.node("Softmax", &format!("{p}.softmax"), &[&s], vec![axis]);
    let c = b.node("MatMul", &format!("{p}.ctx"), &[&s, &v], vec![]);
    let perm = attr::ints("perm", &[1, 0, 2]);
    let c = b.node("Transpose", &format!("{p}.ctx_t"), &[&c], vec![perm]);
    let c = b.node(
        "Reshape",
        &format!("{p}.merge"),
        &[&c, "merge_shape"],
        vec![],
    );
    let o = linear(b, &format!("{p}.o"), &c, HIDDEN, HIDDEN);
    let r = b.node("Add", &format!("{p}.res1"), &[x, &o], vec![]);
    let r = layer_norm(b, &format!("{p}.ln1"), &r);
    let h = linear(b, &format!("{p}.up"), &r, HIDDEN, FFN);
    let g = b.node("Div", &format!("{p}.gelu_div"), &[&h, "sqrt2"], vec![]);
    let g = b.node("Erf", &format!("{p}.gelu_erf"), &[&g], vec![]);
    let g = b.node("Add", &format!("{p}.gelu_add"), &[&g, "one"], vec![]);
    let g = b.node("Mul", &format!("{p}.gelu_mul"), &[&h, &g], vec![]);
    let g = b.node("Mul", &format!("{p}.gelu"), &[&g, "half"], vec![]);
    let d = linear(b, &format!("{p}.down"), &g, FFN, HIDDEN);
    let r2 = b.node("Add", &format!("{p}.res2"), &[&r, &d], vec![]);
    layer_norm(b, &format!("{p}.ln2"), &r2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_counts() {
        let c = chain(10).unwrap();
        assert_eq!(c.graph.unwrap().node.len(), 10);
        let t = transformer(3 * LAYER_NODES).unwrap();
        // Three layers plus the final Identity.
        assert_eq!(t.graph.unwrap().node.len(), 3 * LAYER_NODES + 1);
        assert!(parse("chain-100").is_some());
        assert!(parse("transformer-5000").is_some());
        assert!(parse("chain-0").is_none() && parse("cnn").is_none());
    }
}
