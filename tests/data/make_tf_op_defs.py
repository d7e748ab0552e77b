"""Writes ``minitf/framework/tf_op_defs.pb``: TensorFlow's own ``OpDef`` of
every op minitf implements, *taken from TensorFlow's op registry*.

minitf declares its ops in Python (``define_op``) with the attrs its kernels
need; TensorFlow's ``OpDef`` of the same op also names the *type attrs* it
derives from the inputs (``T``, ``Tidx``, ``N``, ...), and each attr's type and
default.  :mod:`minitf.framework.tf_op_defs` reads this file to write
GraphDefs that TensorFlow imports (``T`` and friends filled in, attrs of TF's
types) and to check, when importing TF's GraphDefs, that an attr minitf does
not implement is at TF's default (``data_format: "NCHW"`` is refused rather
than silently ignored).

Run once, from the repository root, with a Python that has TensorFlow (2.x)
and with minitf's virtual environment at ``.venv``::

    /path/to/tf-venv/bin/python tests/data/make_tf_op_defs.py

It asks minitf's registry (through ``.venv/bin/python``) which ops minitf
has, adds :data:`EXTRA_OPS` (ops common in TF's GraphDefs, and those being
added to minitf), and writes their ``OpDef``\\ s as one binary ``OpList``
message (40 kB, read in a millisecond; the text form takes a tenth of a
second to parse), their documentation stripped, sorted by name.  Print it
with ``text_format.MessageToString``.  Rerun it after adding ops to minitf.
"""

import os
import subprocess
import sys

from tensorflow.core.framework import op_def_pb2
from tensorflow.python.framework import op_def_registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT = os.path.join(ROOT, "minitf", "framework", "tf_op_defs.pb")

#: Ops TF's GraphDefs often hold (TF 2.x writes ``AddV2`` for ``+`` and
#: resource variables), and those of TF1 APIs minitf is adding.
EXTRA_OPS = """
AddV2 VarHandleOp ReadVariableOp AssignVariableOp VarIsInitializedOp AssignAddVariableOp
AssignSubVariableOp ResourceGather CheckNumerics BatchMatMul BatchMatMulV3 Sub Div DivNoNan
DecodeJpeg DecodePng EncodePng EncodeJpeg DecodeImage ResizeBilinear ResizeNearestNeighbor
ResizeBicubic ResizeArea AdjustContrastv2 RandomCrop ReadFile WriteFile Unique
UniqueWithCounts StringJoin StringSplit StringSplitV2 StringToNumber StringLength Substr
RegexReplace StaticRegexReplace AsString ParseExample ParseExampleV2 ParseSingleExample
LogUniformCandidateSampler UniformCandidateSampler LearnedUnigramCandidateSampler
FixedUnigramCandidateSampler ComputeAccidentalHits TFRecordDataset TextLineReaderV2
WholeFileReaderV2 FixedLengthRecordReaderV2 TFRecordReaderV2 ReaderReadV2 ReaderReadUpToV2
PyFunc PyFuncStateless SparseApplyMomentum SparseApplyRMSProp SparseApplyAdagrad
SparseApplyAdagradDA SparseApplyFtrl SparseApplyFtrlV2 SparseApplyCenteredRMSProp
SparseApplyProximalGradientDescent SparseApplyProximalAdagrad ApplyProximalGradientDescent
ApplyProximalAdagrad ScatterAdd ScatterSub ScatterUpdate ScatterNdUpdate Gather
DynamicPartition DynamicStitch ParallelDynamicStitch SegmentSum UnsortedSegmentMax
SparseToDense SparseTensorDenseMatMul Conv2DBackpropInput DepthwiseConv2dNative
FusedBatchNorm FusedBatchNormV3 Mean Snapshot Sigmoid Erf Atan2 ClipByValue
""".split()


def minitf_ops():
    """The op types minitf's registry holds (asked of minitf's own Python)."""
    python = os.path.join(ROOT, ".venv", "bin", "python")
    listing = subprocess.run(
        [python, "-c", "from minitf.registry import get_registry; import minitf; "
                       "print(' '.join(sorted(get_registry().op_types())))"],
        check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return listing.split()


def stripped(op_def):
    """``op_def`` without its documentation (the file is read, not studied)."""
    copy = op_def_pb2.OpDef()
    copy.CopyFrom(op_def)
    copy.ClearField("summary")
    copy.ClearField("description")
    for arg in list(copy.input_arg) + list(copy.output_arg):
        arg.ClearField("description")
    for attr in copy.attr:
        attr.ClearField("description")
    return copy


def main():
    op_list = op_def_pb2.OpList()
    names = sorted(set(minitf_ops()) | set(EXTRA_OPS))
    missing = []
    for name in names:
        op_def = op_def_registry.get(name)
        if op_def is None:
            missing.append(name)  # minitf-only ops (SigmoidCrossEntropyWithLogits)
            continue
        op_list.op.add().CopyFrom(stripped(op_def))
    with open(OUTPUT, "wb") as f:
        f.write(op_list.SerializeToString(deterministic=True))
    print("wrote %d OpDefs to %s; not in TensorFlow: %s"
          % (len(op_list.op), OUTPUT, " ".join(missing) or "none"))


if __name__ == "__main__":
    sys.exit(main())
