"""Turning step statistics into a Chrome trace (``timeline.Timeline``).

Run a step with ``tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)`` and a
``tf.RunMetadata``; then ``Timeline(run_metadata.step_stats)
.generate_chrome_trace_format()`` returns JSON that ``chrome://tracing`` or
Perfetto (ui.perfetto.dev) opens: one row per device, one bar per op, and an
arrow from each ``_Send`` to its ``_Recv``.

Mirrors ``tensorflow/python/client/timeline.py``.
"""

import json


class Timeline:
    """A step's trace, convertible to the Chrome trace event format.

    Args:
        step_stats: ``run_metadata.step_stats``.
        graph: accepted for compatibility.
    """

    def __init__(self, step_stats, graph=None):
        del graph
        self._step_stats = step_stats

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string (``{"traceEvents": [...]}``)."""
        del show_memory
        events = []
        sends, recvs = {}, {}
        for pid, dev_stats in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": dev_stats.device}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": pid}})
            for node in dev_stats.node_stats:
                events.append({"name": node.op_type, "ph": "X", "pid": pid, "tid": node.thread_id,
                               "ts": node.all_start_micros, "dur": max(node.all_end_rel_micros, 1),
                               "cat": "Op", "args": {"name": node.node_name, "op": node.op_type}})
                if node.op_type in ("_Send", "_Recv"):
                    table = sends if node.op_type == "_Send" else recvs
                    table[node.node_name.split("_", 2)[-1]] = (pid, node)
        if show_dataflow:
            events.extend(self._flows(sends, recvs))
        return json.dumps({"traceEvents": events}, indent=None)

    @staticmethod
    def _flows(sends, recvs):
        """Arrows from each Send to the Recv with the same edge name."""
        flows = []
        for flow_id, (edge, (send_pid, send)) in enumerate(sorted(sends.items())):
            if edge not in recvs:
                continue
            recv_pid, recv = recvs[edge]
            flows.append({"name": edge, "ph": "s", "id": flow_id, "cat": "DataFlow",
                          "pid": send_pid, "tid": send.thread_id,
                          "ts": send.all_start_micros + send.all_end_rel_micros})
            flows.append({"name": edge, "ph": "f", "bp": "e", "id": flow_id, "cat": "DataFlow",
                          "pid": recv_pid, "tid": recv.thread_id,
                          "ts": max(recv.all_start_micros,
                                    send.all_start_micros + send.all_end_rel_micros)})
        return flows
