"""``tf.einsum``: sums of products named by index letters.

``einsum("ij,jk->ik", a, b)`` is ``matmul(a, b)``; ``"bij,bjk->bik"`` a batch
of them, ``"ij->ji"`` a transpose, ``"i,i->"`` a dot product.  Each input's
dimensions are labelled by letters; letters missing from the output are
summed over.  Without ``->`` the output is every letter used once, sorted
(NumPy's rule).

The gradient is again an einsum: the gradient of input *i* pairs the output
gradient with the other inputs and asks for input *i*'s letters::

    d/da einsum("ij,jk->ik", a, b) = einsum("ik,jk->ij", grad, b)

A letter that only input *i* has (summed away, like ``j`` in ``"ij->i"``) is
put back by broadcasting: one more einsum with ``ones_like(input_i)``.

Mirrors ``tf.einsum`` (TF 1.x builds it from matmuls; here it is one op whose
CPU kernel is ``np.einsum``).
"""

from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import array_ops
from minitf.ops.op_def_library import apply_op, define_op, gradient


def parse_equation(equation, count):
    """``(input_subscripts, output_subscripts)`` of ``equation`` for ``count`` inputs.

    Raises:
        ValueError: if the number of input terms is not ``count``, or an
            output letter is not in any input.
    """
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != count:
        raise ValueError("einsum equation %r has %d input terms but %d inputs were given"
                         % (equation, len(terms), count))
    letters = "".join(terms).replace(".", "")
    if not arrow:
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        if "..." in inputs:
            output = "..." + output
    for c in output.replace(".", ""):
        if c not in letters:
            raise ValueError("einsum output letter %r of %r is not in any input" % (c, equation))
    return terms, output


def _einsum_shape(op):
    terms, output = parse_equation(op.get_attr("equation"), len(op.inputs))
    if "." in "".join(terms) + output:
        return [unknown_shape()]
    sizes = {}
    for term, tensor in zip(terms, op.inputs):
        shape = tensor.shape
        if shape.ndims is None:
            continue
        if shape.ndims != len(term):
            raise ValueError("einsum term %r has %d letters but input %s has rank %d"
                             % (term, len(term), tensor.name, shape.ndims))
        for letter, dim in zip(term, shape.as_list()):
            if dim is not None and sizes.setdefault(letter, dim) != dim:
                raise ValueError("einsum letter %r is both %d and %d in %r"
                                 % (letter, sizes[letter], dim, op.get_attr("equation")))
    return [TensorShape([sizes.get(letter) for letter in output])]


_einsum = define_op("Einsum", inputs=("inputs*",), attrs={"equation": None},
                    shape_fn=_einsum_shape, doc="Sums of products named by index letters.")


def einsum(equation, *inputs, **kwargs):
    """Evaluates the Einstein-summation ``equation`` on ``inputs`` (``tf.einsum``).

    Args:
        equation: e.g. ``"ij,jk->ik"``; ``...`` stands for leading dimensions
            (forward only: its gradient is not implemented).
        *inputs: the tensors, one per term.
        name: keyword-only op name (default ``Einsum``).

    Example:
        >>> sess.run(tf.einsum("i,i->", [1.0, 2.0], [3.0, 4.0]))
        11.0
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Unknown keyword arguments: " + ", ".join(kwargs))
    parse_equation(equation, len(inputs))
    return apply_op(_einsum, [list(inputs)], attrs={"equation": equation.replace(" ", "")},
                    name=name or "Einsum")


@gradient("Einsum")
def _einsum_grad(op, grad):
    terms, output = parse_equation(op.get_attr("equation"), len(op.inputs))
    if "." in "".join(terms) + output:
        raise NotImplementedError("The gradient of einsum with '...' is not implemented: %s"
                                  % op.name)
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        if len(set(term)) != len(term):
            raise NotImplementedError("The gradient of einsum with a repeated letter in one "
                                      "term (%r, a diagonal) is not implemented: %s"
                                      % (term, op.name))
        others = [(t, y) for j, (t, y) in enumerate(zip(terms, op.inputs)) if j != i]
        elsewhere = set(output).union(*(set(t) for t, _ in others))
        kept = "".join(c for c in term if c in elsewhere)
        equation = ",".join([output] + [t for t, _ in others]) + "->" + kept
        partial = einsum(equation, grad, *[y for _, y in others])
        if kept != term:  # letters only this input had: broadcast back over them
            partial = einsum("%s,%s->%s" % (kept, term, term), partial, array_ops.ones_like(x))
        grads.append(partial)
    return grads


__all__ = ["einsum", "parse_equation"]
