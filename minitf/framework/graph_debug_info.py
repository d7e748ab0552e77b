"""Where each op was created, as TF's ``GraphDebugInfo`` protocol buffer.

A ``GraphDef`` names ops but not the line of user code that built them.  TF
keeps that in a ``GraphDebugInfo`` beside the graph (a table of files, and
per op name a stack trace of ``(file index, line)`` frames), which is how an
error raised far from the client — on a master, in another task — can still
say ``[[node bad (defined at model.py:42) ]]``.  minitf records one frame
per op, its creation site (``Operation.traceback``).

Mirrors ``tensorflow/core/framework/graph_debug_info.proto`` and TF's
``error_interpolation.create_graph_debug_info_def``.
"""

from minitf.framework import protos


def create_graph_debug_info_def(operations):
    """A ``GraphDebugInfo`` holding the creation site of each of ``operations``."""
    graph_debug_info_pb2 = protos.load("graph_debug_info_pb2")
    debug_info = graph_debug_info_pb2.GraphDebugInfo()
    file_index = {}
    for op in operations:
        filename, line = op.traceback
        if filename not in file_index:
            file_index[filename] = len(debug_info.files)
            debug_info.files.append(filename)
        debug_info.traces[op.name].file_line_cols.add(file_index=file_index[filename], line=line)
    return debug_info


def creation_sites(debug_info):
    """``{op name: (file, line)}``: the innermost frame of each trace in ``debug_info``.

    Frames naming a file the message does not list are left out (a malformed
    message loses its sites, not the graph).
    """
    sites = {}
    for name, trace in debug_info.traces.items():
        if trace.file_line_cols:
            frame = trace.file_line_cols[-1]
            if 0 <= frame.file_index < len(debug_info.files):
                sites[name] = (debug_info.files[frame.file_index], frame.line)
    return sites
