#!/usr/bin/env python3
"""Replaces ConstantOfShape nodes with constant shape inputs by initializers
(the light_* models): `bench_fold_constantofshape.py IN.onnx OUT.onnx`."""
import onnx, sys, numpy as np
from onnx import numpy_helper, helper
m = onnx.load(sys.argv[1])
g = m.graph
inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
keep = []
for n in g.node:
    if n.op_type == 'ConstantOfShape' and n.input[0] in inits:
        shape = inits[n.input[0]].astype(np.int64)
        val = np.zeros(1, np.float32)
        for a in n.attribute:
            if a.name == 'value': val = numpy_helper.to_array(a.t)
        arr = np.full(tuple(shape), val.reshape(-1)[0], dtype=val.dtype)
        g.initializer.append(numpy_helper.from_array(arr, n.output[0]))
        inits[n.output[0]] = arr
    else:
        keep.append(n)
del g.node[:]
g.node.extend(keep)
onnx.save(m, sys.argv[2])
