"""ai.onnx.ml models for the CI corpus (ci_models.py): the operators
skl2onnx and onnxmltools write, built with onnx.helper the way those
exporters lay them out, many variants per model (one output each) so one
compile covers the attribute forms.

Not covered here (onnxruntime departs from the ONNX ML spec, onnxc follows
the spec): a post transform other than PROBIT on a single score column,
TreeEnsemble post_transform codes 1 and 2, two-class tree classifiers with
votes for class 1 only or with base values for both classes, and
LabelEncoder's repeated keys (onnxruntime keeps the first, the spec the
last).
"""

import numpy as np
from corpus_common import GraphBuilder
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
ML = "ai.onnx.ml"

POSTS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]


class Graph(GraphBuilder):
    def ml(self, op_type, inputs, n_out=1, **attrs):
        return self.op(op_type, inputs, n_out, domain=ML, **attrs)

    def model(self, name, inputs, ml_opset, opset=17):
        g = helper.make_graph(self.nodes, name, inputs, self.outputs, self.inits)
        m = helper.make_model(
            g,
            opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(ML, ml_opset)],
            producer_name="onnxc-corpus-ci",
        )
        m.ir_version = 8
        return m


def features(g, x):
    """[N, 12]: the 4 inputs, rounded (exact ties for EQ/LEQ/LT) and
    square-rooted (NaN for negatives: missing values)."""
    r = g.op("Round", [x])
    s = g.op("Sqrt", [x])
    return g.op("Concat", [x, r, s], axis=1)


def threshold(rng, f):
    kind = f // 4
    if kind == 1:
        return float(rng.choice([-1.0, 0.0, 1.0]))
    if kind == 2:
        return float(rng.uniform(0.1, 1.3))
    return float(rng.uniform(-1.2, 1.2))


def trees(rng, n_trees, depth, modes=("BRANCH_LEQ",), missing=0.0, n_features=12):
    """Random trees as opset 1/3 node tables; also the leaves (tree, node)."""
    t = {k: [] for k in ["treeids", "nodeids", "featureids", "modes", "values", "truenodeids", "falsenodeids", "missing"]}
    leaves = []
    for tree in range(n_trees):
        rows = []

        def build(d):
            nid = len(rows)
            rows.append(None)
            if d == depth or (d > 0 and rng.random() < 0.2):
                rows[nid] = (0, "LEAF", 0.0, 0, 0, 0)
                leaves.append((tree, nid))
                return nid
            f = int(rng.integers(n_features))
            mode = str(rng.choice(modes))
            yes = build(d + 1)
            no = build(d + 1)
            rows[nid] = (f, mode, threshold(rng, f), yes, no, int(rng.random() < missing))
            return nid

        build(0)
        for nid, (f, mode, v, yes, no, mt) in enumerate(rows):
            for k, val in zip(t, [tree, nid, f, mode, v, yes, no, mt]):
                t[k].append(val)
    attrs = {f"nodes_{k}": v for k, v in t.items() if k != "missing"}
    attrs["nodes_missing_value_tracks_true"] = t["missing"]
    return attrs, leaves


def votes(prefix, leaves, targets, weight, rng, density=1.0):
    """Leaf votes: for each leaf, each target with probability `density`."""
    tr, nd, ids, ws = [], [], [], []
    for tree, node in leaves:
        for k in targets:
            if rng.random() < density:
                tr.append(tree)
                nd.append(node)
                ids.append(k)
                ws.append(weight(rng))
    return {f"{prefix}_treeids": tr, f"{prefix}_nodeids": nd, f"{prefix}_ids": ids, f"{prefix}_weights": ws}


def ci_ml_linear():
    g = Graph(11)
    rng = g.rng
    x = "x"
    # skl2onnx StandardScaler -> LogisticRegression (multinomial) -> L1 Normalizer
    sc = g.ml("Scaler", [x], offset=rng.normal(0, 0.3, 5).tolist(), scale=rng.uniform(0.5, 2, 5).tolist())
    g.out("scaled", sc, F, ["N", 5])
    g.out("scaled_all", g.ml("Scaler", [x], offset=[0.25], scale=[3.0]), F, ["N", 5])
    coef3 = rng.normal(0, 1, 15).round(3).tolist()
    for post in POSTS:
        lab, prob = g.ml("LinearClassifier", [sc], 2, coefficients=coef3, intercepts=[0.5, -0.25, 0.1],
                         classlabels_ints=[3, 7, 9], multi_class=1, post_transform=post)
        g.out(f"lc3_{post.lower()}_label", lab, I64, ["N"])
        g.out(f"lc3_{post.lower()}_prob", prob, F, ["N", 3])
    lab, prob = g.ml("LinearClassifier", [sc], 2, coefficients=coef3, intercepts=[0.5, -0.25, 0.1],
                     classlabels_ints=[0, 1, 2], multi_class=1, post_transform="SOFTMAX")
    g.out("lc3_normalized", g.ml("Normalizer", [prob], norm="L1"), F, ["N", 3])
    # Binary: one coefficient row for two classes (older skl2onnx, onnxmltools).
    coef1 = rng.normal(0, 1, 5).round(3).tolist()
    for post in ["NONE", "LOGISTIC", "SOFTMAX"]:
        lab, prob = g.ml("LinearClassifier", [x], 2, coefficients=coef1, intercepts=[0.2],
                         classlabels_ints=[4, 8], post_transform=post)
        g.out(f"lc1_{post.lower()}_label", lab, I64, ["N"])
        g.out(f"lc1_{post.lower()}_prob", prob, F, ["N", 2])
    for post in ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"]:
        y = g.ml("LinearRegressor", [x], coefficients=rng.normal(0, 1, 10).tolist(), intercepts=[0.1, -0.3],
                 targets=2, post_transform=post)
        g.out(f"lr2_{post.lower()}", y, F, ["N", 2])
    g.out("lr1", g.ml("LinearRegressor", [x], coefficients=coef1), F, ["N", 1])
    g.out("lr1_probit", g.ml("LinearRegressor", [g.op("Sigmoid", [x])], coefficients=[0.2] * 5,
                             post_transform="PROBIT"), F, ["N", 1])
    # ReLU zeros keep SOFTMAX_ZERO's zero columns.
    g.out("lr3_softmax_zero", g.ml("LinearRegressor", [g.op("Relu", [x])], coefficients=np.eye(3, 5).ravel().tolist(),
                                   targets=3, post_transform="SOFTMAX_ZERO"), F, ["N", 3])
    for norm in ["MAX", "L1", "L2"]:
        g.out(f"norm_{norm.lower()}", g.ml("Normalizer", [x], norm=norm), F, ["N", 5])
    g.out("binarized", g.ml("Binarizer", [x], threshold=0.3), F, ["N", 5])
    # SimpleImputer: NaN (from Sqrt of negatives) -> per-feature means.
    g.out("imputed", g.ml("Imputer", [g.op("Sqrt", [x])], imputed_value_floats=rng.normal(0, 1, 5).tolist(),
                          replaced_value_float=float("nan")), F, ["N", 5])
    xi = g.op("Cast", [g.op("Round", [g.op("Mul", [x, g.const("three", 3.0)])])], to=I64)
    g.out("imputed_int", g.ml("Imputer", [xi], imputed_value_int64s=[-7], replaced_value_int64=0), I64, ["N", 5])
    g.out("scaled_int", g.ml("Scaler", [xi], offset=[1.0, 2, 3, 4, 5], scale=[0.5, 1, 2, 3, 4]), F, ["N", 5])
    g.out("picked", g.ml("ArrayFeatureExtractor", [x, g.const("cols", [4, 0, 2], np.int64)]), F, ["N", 3])
    # LabelEncoder over numbers (opset 2 lists, opset 4 tensors); NaN keys
    # match NaN.
    g.out("encoded_f", g.ml("LabelEncoder", [xi], keys_int64s=[-2, 0, 3, 1], values_floats=[0.5, 1.5, 2.5, 3.5],
                            default_float=-9.0), F, ["N", 5])
    g.out("encoded_i", g.ml("LabelEncoder", [g.op("Round", [g.op("Sqrt", [x])])], keys_floats=[0.0, 1.0, float("nan")],
                            values_int64s=[10, 11, 12]), I64, ["N", 5])
    g.out("encoded_t", g.ml("LabelEncoder", [xi], keys_tensor=numpy_helper.from_array(np.array([-1, 1, 2], np.int64)),
                            values_tensor=numpy_helper.from_array(np.array([7, 8, 9], np.float64)),
                            default_tensor=numpy_helper.from_array(np.array([-3], np.float64))), TensorProto.DOUBLE, ["N", 5])
    m = g.model("ci_ml_linear", [helper.make_tensor_value_info("x", F, ["N", 5])], 4)
    sizes = [{"x": ([1, 5], np.float32, "normal")}, {"x": ([23, 5], np.float32, "normal")}]
    return m, sizes, "ai.onnx.ml Scaler/Normalizer/Binarizer/Imputer/ArrayFeatureExtractor/LabelEncoder, LinearClassifier (3 classes, binary one-row) and LinearRegressor under every post transform"


def ci_ml_trees():
    g = Graph(12)
    rng = g.rng
    feats = features(g, "x")
    modes = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
    # skl2onnx GradientBoostingRegressor: LEQ only, one target, base value.
    nodes, leaves = trees(rng, 6, 3)
    g.out("gb", g.ml("TreeEnsembleRegressor", [feats], n_targets=1, base_values=[0.75],
                     **nodes, **votes("target", leaves, [0], lambda r: r.uniform(-0.3, 0.3), rng)), F, ["N", 1])
    # Every mode, missing values to either side, two targets.
    nodes, leaves = trees(rng, 5, 4, modes, missing=0.5)
    dense = votes("target", leaves, [0, 1], lambda r: r.uniform(-1, 1), rng)
    for agg in ["SUM", "AVERAGE", "MIN", "MAX"]:
        g.out(f"reg_{agg.lower()}", g.ml("TreeEnsembleRegressor", [feats], n_targets=2, aggregate_function=agg,
                                         base_values=[0.5, -0.5], **nodes, **dense), F, ["N", 2])
    for post in ["LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"]:
        g.out(f"reg_{post.lower()}", g.ml("TreeEnsembleRegressor", [feats], n_targets=2, post_transform=post,
                                          **nodes, **dense), F, ["N", 2])
    # Sparse votes: a target no tree voted for stays 0, base value or not.
    sparse = votes("target", leaves, [0, 1, 2], lambda r: r.uniform(-1, 1), rng, density=0.3)
    for agg in ["SUM", "MAX"]:
        g.out(f"sparse_{agg.lower()}", g.ml("TreeEnsembleRegressor", [feats], n_targets=3, aggregate_function=agg,
                                            base_values=[0.1, 0.2, 0.3], **nodes, **sparse), F, ["N", 3])
    # Double thresholds and weights (opset 3 *_as_tensor; onnxruntime
    # takes them with double features only).
    nodes, leaves = trees(rng, 4, 3, ("BRANCH_LEQ", "BRANCH_GT"))
    v = votes("target", leaves, [0], lambda r: r.uniform(-1, 1), rng)
    nodes["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(nodes.pop("nodes_values"), np.float64))
    v["target_weights_as_tensor"] = numpy_helper.from_array(np.array(v.pop("target_weights"), np.float64))
    feats64 = g.op("Cast", [feats], to=TensorProto.DOUBLE)
    g.out("reg_double", g.ml("TreeEnsembleRegressor", [feats64], n_targets=1, **nodes, **v), F, ["N", 1])
    classifiers(g, rng, feats)
    m = g.model("ci_ml_trees", [helper.make_tensor_value_info("x", F, ["N", 4])], 3)
    sizes = [{"x": ([1, 4], np.float32, "normal")}, {"x": ([41, 4], np.float32, "normal")}]
    return m, sizes, "ai.onnx.ml TreeEnsembleRegressor/Classifier: every node mode, missing values, aggregates, post transforms, binary conventions, double thresholds"


def classifiers(g, rng, feats):
    # skl2onnx RandomForestClassifier: proportions / n_trees for every class.
    nodes, leaves = trees(rng, 5, 3)
    multi = votes("class", leaves, [0, 1, 2], lambda r: r.uniform(0, 1) / 5, rng)
    for post, base in [("NONE", None), ("SOFTMAX", [0.1, -0.2, 0.3]), ("SOFTMAX_ZERO", None), ("LOGISTIC", [0.0, 0.5, 1.0])]:
        extra = {"base_values": base} if base else {}
        lab, prob = g.ml("TreeEnsembleClassifier", [feats], 2, classlabels_int64s=[5, 6, 7], post_transform=post,
                         **nodes, **multi, **extra)
        g.out(f"rf3_{post.lower()}_label", lab, I64, ["N"])
        g.out(f"rf3_{post.lower()}_prob", prob, F, ["N", 3])
    # Binary RF: class 0 carries the positive class's proportion.
    nodes, leaves = trees(rng, 4, 3, ("BRANCH_LEQ", "BRANCH_LT"))
    pos = votes("class", leaves, [0], lambda r: r.uniform(0, 1) / 4, rng)
    for post in ["NONE", "LOGISTIC"]:
        lab, prob = g.ml("TreeEnsembleClassifier", [feats], 2, classlabels_int64s=[0, 1], post_transform=post, **nodes, **pos)
        g.out(f"rf2_{post.lower()}_label", lab, I64, ["N"])
        g.out(f"rf2_{post.lower()}_prob", prob, F, ["N", 2])
    # Binary GradientBoostingClassifier: mixed weights, LOGISTIC, one base value.
    mixed = votes("class", leaves, [0], lambda r: r.uniform(-1, 1), rng)
    for post, base in [("LOGISTIC", [-0.2]), ("NONE", None)]:
        extra = {"base_values": base} if base else {}
        lab, prob = g.ml("TreeEnsembleClassifier", [feats], 2, classlabels_int64s=[2, 9], post_transform=post,
                         **nodes, **mixed, **extra)
        g.out(f"gb2_{post.lower()}_label", lab, I64, ["N"])
        g.out(f"gb2_{post.lower()}_prob", prob, F, ["N", 2])
    # Two classes with votes for both: labels follow the second score.
    both = votes("class", leaves, [0, 1], lambda r: r.uniform(-1, 1), rng)
    lab, prob = g.ml("TreeEnsembleClassifier", [feats], 2, classlabels_int64s=[0, 1], **nodes, **both)
    g.out("two_label", lab, I64, ["N"])
    g.out("two_prob", prob, F, ["N", 2])


def ci_ml_tree_ensemble():
    g = Graph(13)
    rng = g.rng
    feats = features(g, "x")
    nodes, leaves = trees(rng, 4, 3, ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"),
                          missing=0.3)
    # opset 1/3 table -> opset 5 encoding: branches first, then leaves.
    branch = [i for i, m in enumerate(nodes["nodes_modes"]) if m != "LEAF"]
    leaf_at = {(t, n): k for k, (t, n) in enumerate(leaves)}
    pos = {(nodes["nodes_treeids"][i], nodes["nodes_nodeids"][i]): k for k, i in enumerate(branch)}
    code = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5}

    def child(tree, nid):
        return (1, leaf_at[(tree, nid)]) if (tree, nid) in leaf_at else (0, pos[(tree, nid)])

    modes, splits, feats_, ty, tl, fy, fl, mt = [], [], [], [], [], [], [], []
    for i in branch:
        t = nodes["nodes_treeids"][i]
        mode = nodes["nodes_modes"][i]
        # Every fourth integer-feature branch becomes a set membership test.
        member = nodes["nodes_featureids"][i] // 4 == 1 and len(modes) % 4 == 0
        modes.append(6 if member else code[mode])
        splits.append(nodes["nodes_values"][i])
        feats_.append(nodes["nodes_featureids"][i])
        (a, b), (c, d) = child(t, nodes["nodes_truenodeids"][i]), child(t, nodes["nodes_falsenodeids"][i])
        tl.append(a), ty.append(b), fl.append(c), fy.append(d)
        mt.append(nodes["nodes_missing_value_tracks_true"][i])
    members = []
    for m in modes:
        if m == 6:
            members += [-1.0, 1.0, float("nan")]
    roots = [pos[(t, 0)] for t in range(4)]
    common = dict(
        nodes_featureids=feats_, nodes_modes=numpy_helper.from_array(np.array(modes, np.uint8)),
        nodes_splits=numpy_helper.from_array(np.array(splits, np.float32)),
        nodes_truenodeids=ty, nodes_trueleafs=tl, nodes_falsenodeids=fy, nodes_falseleafs=fl,
        nodes_missing_value_tracks_true=mt, tree_roots=roots, n_targets=3,
        leaf_targetids=[int(rng.integers(3)) for _ in leaves],
        leaf_weights=numpy_helper.from_array(rng.uniform(-1, 1, len(leaves)).astype(np.float32)),
    )
    if members:
        common["membership_values"] = numpy_helper.from_array(np.array(members, np.float32))
    for agg, name in [(1, "sum"), (0, "average"), (2, "min"), (3, "max")]:
        g.out(f"te_{name}", g.ml("TreeEnsemble", [feats], aggregate_function=agg, **common), F, ["N", 3])
    g.out("te_softmax_zero", g.ml("TreeEnsemble", [feats], post_transform=3, **common), F, ["N", 3])
    m = g.model("ci_ml_tree_ensemble", [helper.make_tensor_value_info("x", F, ["N", 4])], 5)
    sizes = [{"x": ([1, 4], np.float32, "normal")}, {"x": ([37, 4], np.float32, "normal")}]
    return m, sizes, "ai.onnx.ml opset 5 TreeEnsemble: set membership, every mode, missing values, aggregates"


def ci_ml_folded():
    """The models on constant features fold (onnxc's constprop computes
    them); the results scale a dynamic input so the graph keeps one."""
    g = Graph(14)
    rng = g.rng
    a = g.const("a", rng.normal(0, 1, (6, 4)))
    feats = features(g, a)
    scale = g.op("Reshape", ["x", g.const("to3", [-1, 1, 1], np.int64)])

    def out(name, v, cols, label=False):
        if label:
            v = g.op("Cast", [v], to=F)
            v = g.op("Unsqueeze", [v, g.const(f"{name}_ax", [1], np.int64)])
        g.out(name, g.op("Mul", [v, scale]), F, ["N", 6, cols])

    nodes, leaves = trees(rng, 4, 3, ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_EQ", "BRANCH_NEQ"), missing=0.5)
    reg = votes("target", leaves, [0, 1], lambda r: r.uniform(-1, 1), rng, density=0.7)
    for agg in ["SUM", "MIN"]:
        out(f"reg_{agg.lower()}", g.ml("TreeEnsembleRegressor", [feats], n_targets=2, aggregate_function=agg,
                                       base_values=[0.5, -0.5], post_transform="SOFTMAX", **nodes, **reg), 2)
    multi = votes("class", leaves, [0, 1, 2], lambda r: r.uniform(0, 0.25), rng)
    lab, prob = g.ml("TreeEnsembleClassifier", [feats], 2, classlabels_int64s=[5, 6, 7], **nodes, **multi)
    out("rf3_label", lab, 1, label=True)
    out("rf3_prob", prob, 3)
    mixed = votes("class", leaves, [0], lambda r: r.uniform(-1, 1), rng)
    lab, prob = g.ml("TreeEnsembleClassifier", [feats], 2, classlabels_int64s=[0, 1], base_values=[0.1],
                     post_transform="LOGISTIC", **nodes, **mixed)
    out("gb2_label", lab, 1, label=True)
    out("gb2_prob", prob, 2)
    lab, prob = g.ml("LinearClassifier", [a], 2, coefficients=rng.normal(0, 1, 12).tolist(), intercepts=[0.1, 0.2, 0.3],
                     classlabels_ints=[1, 2, 3], post_transform="SOFTMAX")
    out("lc3_label", lab, 1, label=True)
    out("lc3_prob", prob, 3)
    lab, prob = g.ml("LinearClassifier", [a], 2, coefficients=rng.normal(0, 1, 4).tolist(), intercepts=[0.1],
                     classlabels_ints=[0, 1], post_transform="LOGISTIC")
    out("lc1_label", lab, 1, label=True)
    out("lc1_prob", prob, 2)
    out("lr2", g.ml("LinearRegressor", [a], coefficients=rng.normal(0, 1, 8).tolist(), targets=2,
                    post_transform="LOGISTIC"), 2)
    out("scaled", g.ml("Scaler", [a], offset=[0.1, 0.2, 0.3, 0.4], scale=[2.0, 3.0, 4.0, 5.0]), 4)
    out("norm_l2", g.ml("Normalizer", [a], norm="L2"), 4)
    out("norm_max", g.ml("Normalizer", [a], norm="MAX"), 4)
    out("imputed", g.ml("Imputer", [g.op("Sqrt", [a])], imputed_value_floats=[9.0], replaced_value_float=float("nan")), 4)
    out("binarized", g.ml("Binarizer", [a], threshold=0.2), 4)
    out("picked", g.ml("ArrayFeatureExtractor", [a, g.const("cols", [3, 1], np.int64)]), 2)
    ai = g.op("Cast", [g.op("Round", [g.op("Mul", [a, g.const("two", 2.0)])])], to=I64)
    out("encoded", g.ml("LabelEncoder", [ai], keys_int64s=[-1, 0, 1, 2], values_floats=[0.25, 0.5, 0.75, 1.0]), 4)
    m = g.model("ci_ml_folded", [helper.make_tensor_value_info("x", F, ["N", 1])], 4)
    sizes = [{"x": ([1, 1], np.float32, "normal")}, {"x": ([3, 1], np.float32, "normal")}]
    return m, sizes, "ai.onnx.ml models on constant features, folded by constprop"


def ci_ml_zipmap():
    """skl2onnx's default classifier outputs: the label, and the
    probabilities through ZipMap (a list of {class: probability} maps),
    with integer and with string class labels."""
    g = Graph(12)
    rng = g.rng
    coef = rng.normal(0, 1, 15).round(3).tolist()
    lab, prob = g.ml("LinearClassifier", ["x"], 2, coefficients=coef, intercepts=[0.5, -0.25, 0.1],
                     classlabels_ints=[3, 7, 9], multi_class=1, post_transform="SOFTMAX")
    g.out("output_label", lab, I64, ["N"])
    for key, labels in [("int64s", [3, 7, 9]), ("strings", ["cat", "dog", "eel"])]:
        name = f"output_probability_{key}"
        g.nodes.append(helper.make_node("ZipMap", [prob], [name], name=f"zipmap_{key}", domain=ML,
                                        **{f"classlabels_{key}": labels}))
        key_type = I64 if key == "int64s" else TensorProto.STRING
        maps = helper.make_sequence_type_proto(helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(F, [])))
        g.outputs.append(helper.make_value_info(name, maps))
    m = g.model("ci_ml_zipmap", [helper.make_tensor_value_info("x", F, ["N", 5])], 1)
    sizes = [{"x": ([n, 5], np.float32, "normal")} for n in (1, 4, 2)]
    return m, sizes, "LinearClassifier -> ZipMap (int and string labels), skl2onnx's default"


MODELS = [ci_ml_linear, ci_ml_trees, ci_ml_tree_ensemble, ci_ml_folded, ci_ml_zipmap]
