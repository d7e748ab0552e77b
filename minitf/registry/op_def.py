"""The declaration of an op: what it takes, what it gives, how shapes flow.

An :class:`OpDef` is data, declared once in the module of its op family
(``minitf/ops/math_ops.py`` ...) or by a plugin.  It plays the role of TF's
``REGISTER_OP(...)`` C++ declaration: inputs, outputs, attrs, the shape
function and whether the op is stateful.  Kernels and gradients are registered
separately, keyed by the op's name.

**Typed attrs.**  Attrs are declared in TF's ``REGISTER_OP`` syntax, one
string each (:class:`AttrSpec` reads them)::

    attrs=("alpha: float = 0.2",                  # a float, defaulting to 0.2
           "T: {float32, float64}",                # the element type, from the inputs
           "N: int >= 1",                          # an int of at least 1
           "ksize: list(int) >= 4",                # a list of at least 4 ints
           "padding: {'SAME', 'VALID'}",           # one of these strings
           "out_type: {int32, int64} = int32",     # one of these dtypes
           "shape: shape", "dtype: type", "keep_dims: bool = false", "name: string")

The framework checks every op against them when it is built (wrong kind:
``TypeError``; out of range: ``ValueError``) and records the defaults on the
op.  ``T`` is TF's element-type attr: it is not passed but read from the
inputs, and its allowed dtypes become the op's ``type_constraint``.  The older
form, a dict ``{name: default}``, declares untyped attrs that are not checked.
"""

import ast
import dataclasses
import re
from typing import Callable, Optional

from minitf.registry.registry import caller_site, framework_dtype

#: The kinds of attr TF's ``AttrValue`` has (``list(kind)`` for lists of them).
ATTR_KINDS = ("string", "int", "float", "bool", "type", "shape", "tensor", "func")

#: The name of the element-type attr, read from the inputs (TF's convention).
TYPE_ATTR = "T"

_REQUIRED = object()  # the default of an attr that must be given
_DECLARATION = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<kind>list\s*\(.*?\)|\{.*?\}|\w+)"
                          r"\s*(?:>=\s*(?P<minimum>-?\d+))?\s*(?:=\s*(?P<default>.+?))?\s*$")


@dataclasses.dataclass(frozen=True)
class AttrSpec:
    """One typed attr, read from a declaration such as ``"N: int >= 1"``.

    Attributes:
        name: the attr's name.
        kind: one of :data:`ATTR_KINDS`, or ``list(kind)``.
        allowed: for an enum (``{float32, float64}``, ``{'SAME', 'VALID'}``):
            the allowed values (dtype names are resolved to DTypes); else None.
        minimum: the least value of an int, the least length of a list; or None.
        default: the default value, as declared (the framework converts it
            to the attr's kind); :attr:`required` when there is none.
        declaration: the declaration it was read from (for messages).
    """

    name: str
    kind: str
    allowed: Optional[tuple] = None
    minimum: Optional[int] = None
    default: object = _REQUIRED
    declaration: str = ""

    @property
    def required(self):
        """True when the attr has no default: every op must give it."""
        return self.default is _REQUIRED

    @property
    def inferred(self):
        """True for the element-type attr ``T``, which is read from the inputs."""
        return self.name == TYPE_ATTR and self.kind == "type"

    @property
    def item_kind(self):
        """The kind of one value: ``int`` for ``list(int)``, the kind itself otherwise."""
        return self.kind[5:-1] if self.kind.startswith("list(") else self.kind

    @classmethod
    def parse(cls, declaration, as_dtype=lambda name: name):
        """Reads one declaration; ``as_dtype`` turns dtype names into DTypes.

        Raises:
            ValueError: naming the declaration, when it is not TF's attr syntax.
        """
        match = _DECLARATION.match(declaration)
        if match is None:
            raise ValueError("Cannot parse attr declaration %r: expected 'name: kind "
                             "[>= minimum] [= default]'" % declaration)
        kind, allowed = _kind_and_allowed(match.group("kind"), declaration)
        if kind.rstrip(")").split("(")[-1] not in ATTR_KINDS:
            raise ValueError("Attr declaration %r: unknown kind %r (kinds: %s, list(kind))"
                             % (declaration, kind, ", ".join(ATTR_KINDS)))
        if kind.endswith("type") and allowed is not None:
            allowed = tuple(as_dtype(name) for name in allowed)
        default = match.group("default")
        default = _REQUIRED if default is None else _literal(default, kind, declaration)
        if kind == "type" and isinstance(default, str):
            default = as_dtype(default)
        minimum = match.group("minimum")
        return cls(match.group("name"), kind, allowed,
                   None if minimum is None else int(minimum), default, declaration.strip())


def _kind_and_allowed(text, declaration):
    """``("type", ("float32", ...))`` for ``{float32, ...}``, ``("string", ("SAME", ...))``
    for ``{'SAME', ...}``, ``("list(type)", ...)`` for ``list({...})``, else ``(text, None)``."""
    text = text.replace(" ", "")
    if text.startswith("list(") and text[5:6] == "{":
        kind, allowed = _kind_and_allowed(text[5:-1], declaration)
        return "list(%s)" % kind, allowed
    if not text.startswith("{"):
        return text, None
    items = [item for item in text[1:-1].split(",") if item]
    if not items:
        raise ValueError("Attr declaration %r: an empty set of allowed values" % declaration)
    if all(item[0] in "'\"" for item in items):
        return "string", tuple(ast.literal_eval(item) for item in items)
    return "type", tuple(items)


def _literal(text, kind, declaration):
    """The Python value of a declared default: TF's ``true``/``false``, a dtype's
    bare name for a type attr, else a Python literal (``0.2``, ``'NHWC'``, ``[1, 1]``)."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if kind == "type" and re.fullmatch(r"\w+", text) and text != "None":
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError("Attr declaration %r: the default %r is not a literal"
                         % (declaration, text)) from None


@dataclasses.dataclass(frozen=True)
class OpDef:
    """Declaration of one op type.

    Attributes:
        name: the op type, e.g. ``"MatMul"``.
        inputs: input names; a name ending in ``*`` is a list of tensors
            (``AddN``'s ``inputs*``) and must be the only list input.
        outputs: output names.  For ops whose output count depends on an attr
            (``Split``), give ``num_outputs``.
        attrs: the attrs: typed declarations (a sequence of strings such as
            ``"alpha: float = 0.2"``, see the module docstring), or the older
            untyped dict ``{name: default}`` (None: no default).  Either way
            the OpDef then holds the dict ``{name: default}`` of the attrs a
            kernel receives as keyword arguments (``T`` is not among them).
        shape_fn: ``shape_fn(op) -> [TensorShape, ...]`` run at construction;
            raises ``ValueError`` for incompatible shapes.  None: unknown shapes.
        dtype_fn: ``dtype_fn(op) -> [DType, ...]``; None: every output has the
            dtype of the first input.
        type_constraint: the dtypes the (first) input may have; others are a
            ``TypeError`` at construction, as in TF.  Declaring
            ``"T: {float32, ...}"`` sets it.
        same_dtype_inputs: input names that must share one dtype (e.g. both
            operands of ``Add``).
        num_outputs: ``num_outputs(attrs) -> int`` when the count is dynamic.
        stateful: the op has effects or randomness; it is never folded.
        ref_inputs: indices of inputs that receive a variable reference (the
            ``ref`` of ``Assign``) rather than a value.
        doc: one line for ``python -m minitf plugins``.
        site: ``file:line`` of the declaration, where the OpDef is written
            (recorded when it is made, unless given): reported on duplicates
            and by ``python -m minitf plugins --op NAME``.
        attr_specs: the typed attrs, as :class:`AttrSpec` (empty for an op
            declared with the untyped dict).
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
    attr_specs: tuple = dataclasses.field(default=(), init=False)

    def __post_init__(self):
        if not self.site:  # the plugin's ``OpDef(...)``, not its later register_op call
            object.__setattr__(self, "site", caller_site())
        if isinstance(self.attrs, dict):
            return
        specs = tuple(AttrSpec.parse(d, framework_dtype) for d in self.attrs)
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError("Op '%s' declares an attr twice: %s" % (self.name, names))
        inferred = [s for s in specs if s.inferred]
        if inferred and inferred[0].allowed is not None:
            if self.type_constraint is not None:
                raise ValueError("Op '%s' declares its dtypes twice: by type_constraint and "
                                 "by %r" % (self.name, inferred[0].declaration))
            object.__setattr__(self, "type_constraint", inferred[0].allowed)
        object.__setattr__(self, "attr_specs", specs)
        object.__setattr__(self, "attrs", {s.name: None if s.required else s.default
                                           for s in specs if not s.inferred})

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
