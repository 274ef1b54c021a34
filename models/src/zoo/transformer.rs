//! `bert-base` and `gpt2-small`: transformer encoder/decoder graphs laid out
//! as PyTorch's exporter writes them (opset 17). Dynamic batch and sequence
//! length; every reshape gets its target from Shape → Gather → Unsqueeze →
//! Concat; LayerNorm is decomposed into ReduceMean/Sub/Pow/Sqrt/Div;
//! attention masks are built from constants (a ConstantOfShape of ones for
//! BERT, a sliced lower-triangular buffer for GPT-2).

use frontend::proto::{tensor_proto::DataType, ModelProto, TensorProto};

use super::Shapes;
use crate::graph::{attr, Dim, GraphBuilder, Init};
use crate::GenOptions;

/// Dimensions of one transformer; the tiny ones have the same graph at a
/// size CI can run with full random weights.
pub(super) struct Cfg {
    name: &'static str,
    hidden: i64,
    heads: i64,
    ffn: i64,
    layers: usize,
    pub(super) vocab: i64,
    positions: i64,
}

impl Cfg {
    fn head_dim(&self) -> i64 {
        self.hidden / self.heads
    }

    fn doc(&self) -> String {
        let head = if self.name.starts_with("gpt2") {
            "tied LM head".to_string()
        } else {
            format!("{} heads", self.heads)
        };
        format!("{} layers, {} hidden, {head}", self.layers, self.hidden)
    }
}

pub(super) const BERT_BASE: Cfg = Cfg {
    name: "bert-base",
    hidden: 768,
    heads: 12,
    ffn: 3072,
    layers: 12,
    vocab: 30522,
    positions: 512,
};
pub(super) const GPT2_SMALL: Cfg = Cfg {
    name: "gpt2-small",
    vocab: 50257,
    positions: 1024,
    ..BERT_BASE
};
pub(super) const BERT_TINY: Cfg = Cfg {
    name: "bert-tiny",
    hidden: 64,
    heads: 4,
    ffn: 256,
    layers: 2,
    vocab: 1000,
    positions: 64,
};
pub(super) const GPT2_TINY: Cfg = Cfg {
    name: "gpt2-tiny",
    ..BERT_TINY
};

/// Sequence length of the sample inputs.
pub(super) const SAMPLE_SEQ: i64 = 8;
const INIT: Init = Init::Normal { std: 0.02 };

/// Vocabulary of the sample token ids of the base models (valid for both).
pub(super) const SAMPLE_VOCAB: i64 = BERT_BASE.vocab;

pub(super) fn inputs() -> Shapes {
    super::one("input_ids", &[1, SAMPLE_SEQ])
}

fn bert_shapes(c: &Cfg) -> Shapes {
    vec![
        (
            "last_hidden_state".to_string(),
            vec![1, SAMPLE_SEQ, c.hidden],
        ),
        ("pooler_output".to_string(), vec![1, c.hidden]),
    ]
}

pub(super) fn bert_outputs() -> Shapes {
    bert_shapes(&BERT_BASE)
}

pub(super) fn bert_tiny_outputs() -> Shapes {
    bert_shapes(&BERT_TINY)
}

pub(super) fn gpt2_outputs() -> Shapes {
    super::one("logits", &[1, SAMPLE_SEQ, GPT2_SMALL.vocab])
}

pub(super) fn gpt2_tiny_outputs() -> Shapes {
    super::one("logits", &[1, SAMPLE_SEQ, GPT2_TINY.vocab])
}

/// The model's dimensions and shared scalar and shape constants, created
/// once per graph.
struct K {
    c: &'static Cfg,
    i0: String,
    i1: String,
    axes0: String,
    heads: String,
    head_dim: String,
    hidden: String,
    one: String,
    two: String,
    eps: String,
}

impl K {
    fn new(b: &mut GraphBuilder, c: &'static Cfg) -> K {
        K {
            c,
            i0: b.const_i64("const.i0", &[], &[0]),
            i1: b.const_i64("const.i1", &[], &[1]),
            axes0: b.const_i64("const.axes0", &[1], &[0]),
            heads: b.const_i64("const.heads", &[1], &[c.heads]),
            head_dim: b.const_i64("const.head_dim", &[1], &[c.head_dim()]),
            hidden: b.const_i64("const.hidden", &[1], &[c.hidden]),
            one: b.const_f32("const.one", &[], &[1.0]),
            two: b.const_f32("const.two", &[], &[2.0]),
            eps: b.const_f32("const.eps", &[], &[1e-5]),
        }
    }
}

fn start(c: &'static Cfg, opts: &GenOptions) -> (GraphBuilder, String, K) {
    let mut b = GraphBuilder::new(c.name, opts);
    b.doc(&format!("onnxc zoo: {}, {}", c.name, c.doc()));
    let ids = b.input(
        "input_ids",
        DataType::Int64,
        &[Dim::from("batch"), Dim::from("sequence")],
    );
    let k = K::new(&mut b, c);
    (b, ids, k)
}

/// `Shape(x)[i]` as a 1-element tensor: Shape → Gather → Unsqueeze.
fn dim(b: &mut GraphBuilder, k: &K, p: &str, x: &str, i: usize) -> String {
    let shape = b.node("Shape", &format!("{p}.shape{i}"), &[x], vec![]);
    let idx = if i == 0 { &k.i0 } else { &k.i1 };
    let d = b.node(
        "Gather",
        &format!("{p}.dim{i}"),
        &[&shape, idx],
        vec![attr::int("axis", 0)],
    );
    b.node(
        "Unsqueeze",
        &format!("{p}.dim{i}.unsq"),
        &[&d, &k.axes0],
        vec![],
    )
}

/// Reshape `x` to [batch, seq, rest...] with the target built by Concat.
fn reshape_bs(b: &mut GraphBuilder, k: &K, p: &str, x: &str, rest: &[&str]) -> String {
    let d0 = dim(b, k, p, x, 0);
    let d1 = dim(b, k, p, x, 1);
    let mut parts = vec![d0.as_str(), d1.as_str()];
    parts.extend_from_slice(rest);
    let shape = b.node(
        "Concat",
        &format!("{p}.target"),
        &parts,
        vec![attr::int("axis", 0)],
    );
    b.node("Reshape", p, &[x, &shape], vec![])
}

/// `x @ W + b` with W stored [n_in, n_out] (PyTorch exports Linear on 3-D
/// inputs as MatMul + Add).
fn linear(b: &mut GraphBuilder, p: &str, x: &str, n_in: i64, n_out: i64) -> String {
    let w = b.weight(&format!("{p}.weight"), &[n_in, n_out], INIT);
    let bias = b.weight(&format!("{p}.bias"), &[n_out], Init::BIAS);
    let h = b.node("MatMul", &format!("{p}.matmul"), &[x, &w], vec![]);
    b.node("Add", p, &[&h, &bias], vec![])
}

/// LayerNormalization over the last axis, decomposed as the exporter of
/// older opsets writes it.
fn layer_norm(b: &mut GraphBuilder, k: &K, p: &str, x: &str) -> String {
    let mean_attrs = || vec![attr::ints("axes", &[-1]), attr::int("keepdims", 1)];
    let mean = b.node("ReduceMean", &format!("{p}.mean"), &[x], mean_attrs());
    let centered = b.node("Sub", &format!("{p}.sub"), &[x, &mean], vec![]);
    let sq = b.node("Pow", &format!("{p}.pow"), &[&centered, &k.two], vec![]);
    let var = b.node("ReduceMean", &format!("{p}.var"), &[&sq], mean_attrs());
    let var = b.node("Add", &format!("{p}.add_eps"), &[&var, &k.eps], vec![]);
    let std = b.node("Sqrt", &format!("{p}.sqrt"), &[&var], vec![]);
    let norm = b.node("Div", &format!("{p}.div"), &[&centered, &std], vec![]);
    let g = b.weight(
        &format!("{p}.weight"),
        &[k.c.hidden],
        Init::Uniform { lo: 0.9, hi: 1.1 },
    );
    let beta = b.weight(&format!("{p}.bias"), &[k.c.hidden], Init::BIAS);
    let h = b.node("Mul", &format!("{p}.scale"), &[&norm, &g], vec![]);
    b.node("Add", p, &[&h, &beta], vec![])
}

/// [b, s, hidden] → [b, HEADS, s, HEAD_DIM] (or [b, HEADS, HEAD_DIM, s]
/// with `keys`, ready for Q·Kᵀ).
fn split_heads(b: &mut GraphBuilder, k: &K, p: &str, x: &str, keys: bool) -> String {
    let r = reshape_bs(b, k, &format!("{p}.view"), x, &[&k.heads, &k.head_dim]);
    let perm: &[i64] = if keys { &[0, 2, 3, 1] } else { &[0, 2, 1, 3] };
    b.node("Transpose", p, &[&r], vec![attr::ints("perm", perm)])
}

/// Scaled dot-product attention with an additive or boolean mask, heads
/// merged back to [b, s, hidden].
fn attention(
    b: &mut GraphBuilder,
    k: &K,
    p: &str,
    (q, key, v): (&str, &str, &str),
    mask: Mask<'_>,
) -> String {
    let q = split_heads(b, k, &format!("{p}.q_heads"), q, false);
    let kt = split_heads(b, k, &format!("{p}.k_heads"), key, true);
    let v = split_heads(b, k, &format!("{p}.v_heads"), v, false);
    let scores = b.node("MatMul", &format!("{p}.scores"), &[&q, &kt], vec![]);
    let scale = b.const_f32(
        &format!("{p}.scale"),
        &[],
        &[(k.c.head_dim() as f32).sqrt()],
    );
    let scores = b.node("Div", &format!("{p}.scaled"), &[&scores, &scale], vec![]);
    let scores = match mask {
        Mask::Additive(m) => b.node("Add", &format!("{p}.masked"), &[&scores, m], vec![]),
        Mask::Causal { keep, fill } => b.node(
            "Where",
            &format!("{p}.masked"),
            &[keep, &scores, fill],
            vec![],
        ),
    };
    let probs = b.node(
        "Softmax",
        &format!("{p}.softmax"),
        &[&scores],
        vec![attr::int("axis", -1)],
    );
    let ctx = b.node("MatMul", &format!("{p}.context"), &[&probs, &v], vec![]);
    let ctx = b.node(
        "Transpose",
        &format!("{p}.context.t"),
        &[&ctx],
        vec![attr::ints("perm", &[0, 2, 1, 3])],
    );
    reshape_bs(b, k, &format!("{p}.merge"), &ctx, &[&k.hidden])
}

enum Mask<'a> {
    /// Added to the scores ([b, 1, 1, s]: 0 or -10000).
    Additive(&'a str),
    /// `Where(keep, scores, fill)` with a boolean [1, 1, s, s].
    Causal { keep: &'a str, fill: &'a str },
}

/// Erf Gelu: x · 0.5 · (1 + erf(x / √2)).
fn gelu_erf(b: &mut GraphBuilder, k: &K, p: &str, x: &str) -> String {
    let sqrt2 = b.const_f32(&format!("{p}.sqrt2"), &[], &[std::f32::consts::SQRT_2]);
    let half = b.const_f32(&format!("{p}.half"), &[], &[0.5]);
    let h = b.node("Div", &format!("{p}.div"), &[x, &sqrt2], vec![]);
    let h = b.node("Erf", &format!("{p}.erf"), &[&h], vec![]);
    let h = b.node("Add", &format!("{p}.add"), &[&h, &k.one], vec![]);
    let h = b.node("Mul", &format!("{p}.mul"), &[x, &h], vec![]);
    b.node("Mul", p, &[&h, &half], vec![])
}

/// GPT-2's tanh Gelu: 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
fn gelu_tanh(b: &mut GraphBuilder, k: &K, p: &str, x: &str) -> String {
    let three = b.const_f32(&format!("{p}.three"), &[], &[3.0]);
    let c = b.const_f32(&format!("{p}.c"), &[], &[0.044_715]);
    let s = b.const_f32(
        &format!("{p}.s"),
        &[],
        &[(2.0 / std::f32::consts::PI).sqrt()],
    );
    let half = b.const_f32(&format!("{p}.half"), &[], &[0.5]);
    let cube = b.node("Pow", &format!("{p}.cube"), &[x, &three], vec![]);
    let h = b.node("Mul", &format!("{p}.mul_c"), &[&cube, &c], vec![]);
    let h = b.node("Add", &format!("{p}.add_x"), &[x, &h], vec![]);
    let h = b.node("Mul", &format!("{p}.mul_s"), &[&h, &s], vec![]);
    let h = b.node("Tanh", &format!("{p}.tanh"), &[&h], vec![]);
    let h = b.node("Add", &format!("{p}.add_one"), &[&h, &k.one], vec![]);
    let h = b.node("Mul", &format!("{p}.mul_x"), &[x, &h], vec![]);
    b.node("Mul", p, &[&h, &half], vec![])
}

/// `buffer[:, :len]` where len = seq length of `ids` (position ids etc.).
fn slice_to_seq(b: &mut GraphBuilder, k: &K, p: &str, buffer: &str, ids: &str) -> String {
    let len = dim(b, k, p, ids, 1);
    let starts = b.const_i64(&format!("{p}.starts"), &[1], &[0]);
    let axes = b.const_i64(&format!("{p}.axes"), &[1], &[1]);
    b.node("Slice", p, &[buffer, &starts, &len, &axes], vec![])
}

fn embedding(b: &mut GraphBuilder, k: &K, name: &str, rows: i64, ids: &str) -> String {
    let table = b.weight(&format!("{name}.weight"), &[rows, k.c.hidden], INIT);
    b.node("Gather", name, &[&table, ids], vec![attr::int("axis", 0)])
}

pub(super) fn bert(opts: &GenOptions) -> Result<ModelProto, String> {
    bert_with(&BERT_BASE, opts)
}

pub(super) fn bert_tiny(opts: &GenOptions) -> Result<ModelProto, String> {
    bert_with(&BERT_TINY, opts)
}

fn bert_with(c: &'static Cfg, opts: &GenOptions) -> Result<ModelProto, String> {
    let (mut gb, ids, k) = start(c, opts);
    let b = &mut gb;
    let (hidden, positions) = (c.hidden, c.positions);
    let words = embedding(b, &k, "embeddings.word_embeddings", c.vocab, &ids);
    // Registered buffers: position ids 0..positions and token types (zeros).
    let position_ids: Vec<i64> = (0..positions).collect();
    let pos_buf = b.const_i64("embeddings.position_ids", &[1, positions], &position_ids);
    let pos_ids = slice_to_seq(b, &k, "embeddings.position_ids.slice", &pos_buf, &ids);
    let types = vec![0; positions as usize];
    let type_buf = b.const_i64("embeddings.token_type_ids", &[1, positions], &types);
    let type_ids = slice_to_seq(b, &k, "embeddings.token_type_ids.slice", &type_buf, &ids);
    let pos = embedding(b, &k, "embeddings.position_embeddings", positions, &pos_ids);
    let typ = embedding(b, &k, "embeddings.token_type_embeddings", 2, &type_ids);
    let h = b.node("Add", "embeddings.add1", &[&words, &typ], vec![]);
    let h = b.node("Add", "embeddings.add2", &[&h, &pos], vec![]);
    let mut h = layer_norm(b, &k, "embeddings.LayerNorm", &h);

    // attention_mask defaults to ones(input_shape); (1 - m) * -10000.
    let shape = b.node("Shape", "mask.shape", &[&ids], vec![]);
    let ones = b.node(
        "ConstantOfShape",
        "mask.ones",
        &[&shape],
        vec![attr::tensor(
            "value",
            crate::graph::tensor_i64("", &[1], &[1]),
        )],
    );
    let ax1 = b.const_i64("mask.axes1", &[1], &[1]);
    let ax2 = b.const_i64("mask.axes2", &[1], &[2]);
    let m = b.node("Unsqueeze", "mask.unsq1", &[&ones, &ax1], vec![]);
    let m = b.node("Unsqueeze", "mask.unsq2", &[&m, &ax2], vec![]);
    let m = b.node(
        "Cast",
        "mask.cast",
        &[&m],
        vec![attr::int("to", DataType::Float as i64)],
    );
    let m = b.node("Sub", "mask.invert", &[&k.one, &m], vec![]);
    let big = b.const_f32("mask.min", &[], &[-10000.0]);
    let mask = b.node("Mul", "mask.additive", &[&m, &big], vec![]);

    for l in 0..c.layers {
        let p = format!("encoder.layer.{l}");
        let q = linear(b, &format!("{p}.attention.self.query"), &h, hidden, hidden);
        let key = linear(b, &format!("{p}.attention.self.key"), &h, hidden, hidden);
        let v = linear(b, &format!("{p}.attention.self.value"), &h, hidden, hidden);
        let ctx = attention(
            b,
            &k,
            &format!("{p}.attention.self"),
            (&q, &key, &v),
            Mask::Additive(&mask),
        );
        let o = linear(
            b,
            &format!("{p}.attention.output.dense"),
            &ctx,
            hidden,
            hidden,
        );
        let o = b.node(
            "Add",
            &format!("{p}.attention.output.residual"),
            &[&o, &h],
            vec![],
        );
        let a = layer_norm(b, &k, &format!("{p}.attention.output.LayerNorm"), &o);
        let f = linear(b, &format!("{p}.intermediate.dense"), &a, hidden, c.ffn);
        let f = gelu_erf(b, &k, &format!("{p}.intermediate.gelu"), &f);
        let f = linear(b, &format!("{p}.output.dense"), &f, c.ffn, hidden);
        let f = b.node("Add", &format!("{p}.output.residual"), &[&f, &a], vec![]);
        h = layer_norm(b, &k, &format!("{p}.output.LayerNorm"), &f);
    }
    b.node_outputs(
        "Identity",
        "last_hidden_state",
        &[&h],
        &["last_hidden_state"],
        vec![],
    );
    // Pooler: first token → Gemm → Tanh.
    let first = b.node(
        "Gather",
        "pooler.first_token",
        &[&h, &k.i0],
        vec![attr::int("axis", 1)],
    );
    let w = b.weight("pooler.dense.weight", &[hidden, hidden], INIT);
    let bias = b.weight("pooler.dense.bias", &[hidden], Init::BIAS);
    let d = b.node(
        "Gemm",
        "pooler.dense",
        &[&first, &w, &bias],
        vec![attr::int("transB", 1)],
    );
    b.node_outputs("Tanh", "pooler.tanh", &[&d], &["pooler_output"], vec![]);
    let seq_dims = [
        Dim::from("batch"),
        Dim::from("sequence"),
        Dim::Value(hidden),
    ];
    b.output("last_hidden_state", DataType::Float, &seq_dims);
    b.output(
        "pooler_output",
        DataType::Float,
        &[Dim::from("batch"), Dim::Value(hidden)],
    );
    gb.finish()
}

fn bool_tensor(name: &str, dims: &[i64], data: impl Iterator<Item = bool>) -> TensorProto {
    TensorProto {
        name: name.to_string(),
        dims: dims.to_vec(),
        data_type: DataType::Bool as i32,
        raw_data: data.map(u8::from).collect::<Vec<u8>>().into(),
        ..Default::default()
    }
}

pub(super) fn gpt2(opts: &GenOptions) -> Result<ModelProto, String> {
    gpt2_with(&GPT2_SMALL, opts)
}

pub(super) fn gpt2_tiny(opts: &GenOptions) -> Result<ModelProto, String> {
    gpt2_with(&GPT2_TINY, opts)
}

fn gpt2_with(c: &'static Cfg, opts: &GenOptions) -> Result<ModelProto, String> {
    let (mut gb, ids, k) = start(c, opts);
    let b = &mut gb;
    let (hidden, positions) = (c.hidden, c.positions);
    // position_ids = arange(seq).unsqueeze(0)
    let len = dim(b, &k, "position_ids", &ids, 1);
    let len = b.node("Squeeze", "position_ids.len", &[&len, &k.axes0], vec![]);
    let step = b.const_i64("position_ids.step", &[], &[1]);
    let pos = b.node("Range", "position_ids.range", &[&k.i0, &len, &step], vec![]);
    let pos = b.node("Unsqueeze", "position_ids", &[&pos, &k.axes0], vec![]);
    let wte = b.weight("wte.weight", &[c.vocab, hidden], INIT);
    let tok = b.node("Gather", "wte", &[&wte, &ids], vec![attr::int("axis", 0)]);
    let pe = embedding(b, &k, "wpe", positions, &pos);
    let mut h = b.node("Add", "embeddings.add", &[&tok, &pe], vec![]);

    // The registered causal buffer, sliced to [.., k-q:k, :k] per layer.
    let n = positions as usize;
    let tri = (0..n * n).map(|i| i % n <= i / n);
    b.initializer(bool_tensor("attn.bias", &[1, 1, positions, positions], tri));
    let fill = b.const_f32("attn.masked_bias", &[], &[-10000.0]);
    let split = b.const_i64("attn.split", &[3], &[hidden; 3]);

    for l in 0..c.layers {
        let p = format!("h.{l}");
        let a = layer_norm(b, &k, &format!("{p}.ln_1"), &h);
        let qkv = linear(b, &format!("{p}.attn.c_attn"), &a, hidden, 3 * hidden);
        let names = [
            format!("{p}.attn.q"),
            format!("{p}.attn.k"),
            format!("{p}.attn.v"),
        ];
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        b.node_outputs(
            "Split",
            &format!("{p}.attn.split"),
            &[&qkv, &split],
            &refs,
            vec![attr::int("axis", 2)],
        );
        // Causal mask: bias[:, :, k-q:k, :k] with q = k = seq length.
        let kl = dim(b, &k, &format!("{p}.attn.klen"), &names[1], 1);
        let ql = dim(b, &k, &format!("{p}.attn.qlen"), &names[0], 1);
        let from = b.node("Sub", &format!("{p}.attn.mask.from"), &[&kl, &ql], vec![]);
        let starts = b.node(
            "Concat",
            &format!("{p}.attn.mask.starts"),
            &[&from, &k.axes0],
            vec![attr::int("axis", 0)],
        );
        let ends = b.node(
            "Concat",
            &format!("{p}.attn.mask.ends"),
            &[&kl, &kl],
            vec![attr::int("axis", 0)],
        );
        let axes = b.const_i64(&format!("{p}.attn.mask.axes"), &[2], &[2, 3]);
        let keep = b.node(
            "Slice",
            &format!("{p}.attn.mask"),
            &["attn.bias", &starts, &ends, &axes],
            vec![],
        );
        let ctx = attention(
            b,
            &k,
            &format!("{p}.attn"),
            (&names[0], &names[1], &names[2]),
            Mask::Causal {
                keep: &keep,
                fill: &fill,
            },
        );
        let o = linear(b, &format!("{p}.attn.c_proj"), &ctx, hidden, hidden);
        h = b.node("Add", &format!("{p}.residual1"), &[&h, &o], vec![]);
        let m = layer_norm(b, &k, &format!("{p}.ln_2"), &h);
        let m = linear(b, &format!("{p}.mlp.c_fc"), &m, hidden, c.ffn);
        let m = gelu_tanh(b, &k, &format!("{p}.mlp.gelu"), &m);
        let m = linear(b, &format!("{p}.mlp.c_proj"), &m, c.ffn, hidden);
        h = b.node("Add", &format!("{p}.residual2"), &[&h, &m], vec![]);
    }
    let h = layer_norm(b, &k, "ln_f", &h);
    // Tied LM head: logits = h @ wteᵀ.
    let wt = b.node(
        "Transpose",
        "lm_head.weight",
        &[&wte],
        vec![attr::ints("perm", &[1, 0])],
    );
    b.node_outputs("MatMul", "lm_head", &[&h, &wt], &["logits"], vec![]);
    b.output(
        "logits",
        DataType::Float,
        &[
            Dim::from("batch"),
            Dim::from("sequence"),
            Dim::Value(c.vocab),
        ],
    );
    gb.finish()
}
