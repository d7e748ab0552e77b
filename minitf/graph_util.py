"""``tf.graph_util`` (also ``tf.compat.v1.graph_util``): GraphDef surgery.

Freezing a model for serving — its variables made constants, the training
ops dropped — and cutting a GraphDef down to what some outputs need.  The
functions are :mod:`minitf.framework.graph_util_impl`'s; this module gives
them TF1's names.
"""

from minitf.framework.graph_util_impl import (
    convert_variables_to_constants, extract_sub_graph, must_run_on_cpu, remove_training_nodes,
    tensor_shape_from_node_def_name)

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "must_run_on_cpu",
           "remove_training_nodes", "tensor_shape_from_node_def_name"]
