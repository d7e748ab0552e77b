"""The declaration of an op: what it takes, what it gives, how shapes flow.

An :class:`OpDef` is data, declared once in the module of its op family
(``minitf/ops/math_ops.py`` ...) or by a plugin.  It plays the role of TF's
``REGISTER_OP(...)`` C++ declaration: inputs, outputs, attrs, the shape
function and whether the op is stateful.  Kernels and gradients are registered
separately, keyed by the op's name.
"""

import dataclasses
from typing import Callable, Optional


@dataclasses.dataclass(frozen=True)
class OpDef:
    """Declaration of one op type.

    Attributes:
        name: the op type, e.g. ``"MatMul"``.
        inputs: input names; a name ending in ``*`` is a list of tensors
            (``AddN``'s ``inputs*``) and must be the only list input.
        outputs: output names.  For ops whose output count depends on an attr
            (``Split``), give ``num_outputs``.
        attrs: the attrs a kernel receives as keyword arguments, with their
            defaults (None: required).
        shape_fn: ``shape_fn(op) -> [TensorShape, ...]`` run at construction;
            raises ``ValueError`` for incompatible shapes.  None: unknown shapes.
        dtype_fn: ``dtype_fn(op) -> [DType, ...]``; None: every output has the
            dtype of the first input.
        type_constraint: the dtypes the (first) input may have; others are a
            ``TypeError`` at construction, as in TF.
        same_dtype_inputs: input names that must share one dtype (e.g. both
            operands of ``Add``).
        num_outputs: ``num_outputs(attrs) -> int`` when the count is dynamic.
        stateful: the op has effects or randomness; it is never folded.
        ref_inputs: indices of inputs that receive a variable reference (the
            ``ref`` of ``Assign``) rather than a value.
        doc: one line for ``python -m minitf plugins``.
        site: ``file:line`` of the declaration (reported on duplicates).
    """

    name: str
    inputs: tuple = ()
    outputs: tuple = ("output",)
    attrs: dict = dataclasses.field(default_factory=dict)
    shape_fn: Optional[Callable] = None
    dtype_fn: Optional[Callable] = None
    type_constraint: Optional[tuple] = None
    same_dtype_inputs: tuple = ()
    num_outputs: Optional[Callable] = None
    stateful: bool = False
    ref_inputs: tuple = ()
    doc: str = ""
    site: str = ""

    def output_count(self, attrs):
        """How many outputs an op of this type with these attrs has."""
        if self.num_outputs is not None:
            return self.num_outputs(attrs)
        return len(self.outputs)

    @property
    def list_input(self):
        """The index of the list input (``name*``), or None."""
        for i, name in enumerate(self.inputs):
            if name.endswith("*"):
                return i
        return None
