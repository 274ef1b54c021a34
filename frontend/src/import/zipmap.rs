//! ai.onnx.ml ZipMap on a graph output (skl2onnx's default for
//! classifiers): a sequence of {class: probability} maps, which compiled
//! code returns in its tensor form, the probabilities [N, C], with the
//! class labels recorded per output (`func::OUTPUT_ZIPMAP`) for the header;
//! the Python session reads them off the model and builds the maps as
//! onnxruntime does.

use crate::proto::{GraphProto, NodeProto};
use ir::Attribute;

/// The class labels of a ZipMap.
#[derive(Clone, Debug, PartialEq)]
pub enum Labels {
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl Labels {
    fn of(node: &NodeProto) -> Option<Labels> {
        let attr = |name: &str| node.attribute.iter().find(|a| a.name == name);
        if let Some(a) = attr("classlabels_int64s") {
            return Some(Labels::Ints(a.ints.clone()));
        }
        let a = attr("classlabels_strings")?;
        Some(Labels::Strings(
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        ))
    }

    pub fn to_attr(&self) -> Attribute {
        match self {
            Labels::Ints(v) => Attribute::Array(v.iter().map(|&x| Attribute::i64(x)).collect()),
            Labels::Strings(v) => {
                Attribute::Array(v.iter().map(|s| Attribute::string(s)).collect())
            }
        }
    }
}

/// The ZipMap node that makes `name`, if any.
pub(super) fn maker<'g>(g: &'g GraphProto, name: &str) -> Option<&'g NodeProto> {
    g.node.iter().find(|n| {
        n.op_type == "ZipMap" && n.domain == "ai.onnx.ml" && n.output.iter().any(|o| o == name)
    })
}

/// Per graph output of `g`: the labels of the ZipMap that makes it.
pub fn zipmap_outputs(g: &GraphProto) -> Vec<Option<Labels>> {
    g.output
        .iter()
        .map(|vi| maker(g, &vi.name).and_then(Labels::of))
        .collect()
}
