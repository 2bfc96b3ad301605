"""What the library refuses with, and the English of it: one table of reason codes.

A refusal is a :class:`~distsgd.params.ParameterError` ``(parameter, reason, **fields)``: ``reason``
is a code of :data:`REASONS`, whose English template (``str.format`` fields) is filled from
``fields`` to make the message (``str(exc) == f"{parameter}: {detail}"``).  A field's value is a
number, a text the user gave (a file name, a spec, a column name), a scheme or law label, or
itself a :class:`Phrase` — a code of the same table with its own fields (a Domain's range "an
integer in [1, 1000]", where in a file a bad cell is, what a scheme's cost advice says) — or a
nested ParameterError (a bad part of a spec inside a group).  The dashboard translates from the
code and fields: the template is the message id of its catalogue (``locales/zh/LC_MESSAGES/
reasons.po``), each field translated in turn (:func:`distsgd.ui.i18n.phrase`); nothing parses the
English.  Text that comes from outside (an operating-system or Arrow error, a TOML parser's
message) stays as it is, a field of its own.

Codes are grouped by the kind of refusal (a range, a cost cap, a file, a grid file, …); a form
shared by several sites is one code (``one_of``, ``file_unreadable``), a one-off message has its
own.  Every template must format with its fields: tests/test_reasons.py checks every raise site
against this table, tests/test_ui_catalogues.py that each template has a translation with the
same fields.

>>> str(Phrase("integer_in", interval="[1, 1000]"))
'an integer in [1, 1000]'
>>> english("out_of_domain", range=Phrase("integer_in", interval="[1, 1000]"), value="0")
'must be an integer in [1, 1000] (got 0)'
"""

from __future__ import annotations

from typing import Any

from .texts import TEXTS

__all__ = ["REASONS", "Phrase", "Text", "english"]

#: reason code → English template (``{{`` and ``}}`` are literal braces)
REASONS: dict[str, str] = {
    # -- a value outside its domain (distsgd.params.Domain) ------------------------------------------
    "out_of_domain": "must be {range} (got {value})",
    "float_not_exact": "must be {range}, given exactly: {value} is a float, and floats above 2**53 are not "
                       "exact integers (pass an int)",
    "cannot_clamp": "cannot clamp {value}: not a number",
    "cannot_clamp_nan": "cannot clamp NaN",
    # phrases: a domain in words (Domain.phrase)
    "a_number": "a number",
    "an_integer": "an integer",
    "number_in": "a number in {interval}",
    "integer_in": "an integer in {interval}",
    "number_gt": "a number > {bound}",
    "number_ge": "a number ≥ {bound}",
    "number_lt": "a number < {bound}",
    "number_le": "a number ≤ {bound}",
    "integer_gt": "an integer > {bound}",
    "integer_ge": "an integer ≥ {bound}",
    "integer_lt": "an integer < {bound}",
    "integer_le": "an integer ≤ {bound}",
    # -- a choice among names, a value of the wrong type, a missing value ----------------------------
    "one_of": "must be one of {choices} (got {value!r})",
    "one_of_bare": "one of {choices} (got {value!r})",
    "not_nan": "must not be NaN",
    "not_numbers": "must be a number or an array of numbers (got {type})",
    "probabilities": "probabilities must lie in [0, 1]",
    "size_type": "must be an int or a tuple of ints (got {size!r})",
    "size_negative": "must not be negative (got {size!r})",
    "size_cap": "at most {cap} values per call (got {total}); draw in chunks",
    "value_none_iff": "must be None exactly for infinite/unavailable (kind {kind!r})",
    "mu_above_L": "must be ≤ L = {L:g} (got {mu:g})",
    "true_or_false": "must be true or false (got {value!r})",
    # -- a delay spec (distsgd.delays) ----------------------------------------------------------------
    "expected_delay": "expected a Delay from parse_delay (got {type})",
    "expected_spec": "expected a spec such as 'exp(rate=1)' (got {value!r})",
    "spec_too_long": "spec is longer than {cap} characters",
    "spec_malformed": "malformed spec {spec!r}: expected name(key=value, ...)",
    "unknown_family": "unknown distribution {name!r}; choose one of {choices}",
    "argument_malformed": "malformed argument {argument!r} in {family}(...): expected key=value",
    "not_a_family_parameter": "not a parameter of {family}; expected {keys}",
    "given_twice": "given twice in {family}(...)",
    "no_value": "has no value in {family}(...)",
    "empirical_needs_file": "missing: empirical(file=path) needs a file of measured times",
    "family_needs": "missing: {family} needs {keys}",
    "mean_std_ratio": "mean/std must be ≥ {low} so that P(N ≥ 0) is representable (got {value})",
    "high_above_low": "must be greater than low={low} (got {high})",
    "uniform_width": "the width high − low must be at least {low}·max(1, high) (got {width:.3g})",
    "in_spec": "{spec!r}: {error}",
    # -- an adaptive schedule (distsgd.schedules): every refusal names `schedule` --------------------
    "schedule_expected_spec": "expected a schedule such as 'adasync(K0=2, period=20)' (got {value!r})",
    "schedule_malformed": "malformed schedule {spec!r}: expected name(...), e.g. adacomm(H0=8, period=10) or "
                          "steps(0:2, 50:4)",
    "schedule_unknown": "unknown schedule {name!r}; choose one of {choices}",
    "schedule_parameter": "{spec!r}: {rule} schedules {wants}, not {parameter}",
    "schedule_steps_parameter": "{spec!r}: say whether the steps change K or H (--K-schedule or --H-schedule)",
    "schedule_steps_empty": "steps(...) needs at least one time:value pair, from time 0",
    "schedule_steps_cap": "{count} steps, over the cap of {cap}",
    "schedule_step_malformed": "malformed step {step!r}: expected time:value, e.g. 50:4",
    "schedule_steps_start": "the first step must be at time 0 (got {time})",
    "schedule_steps_order": "step times must increase ({time} after {before})",
    "schedule_scheme": "{scheme} has no K or H a schedule can change (k-sync and k-async take a K schedule, "
                       "local-sgd an H schedule)",
    "schedule_loss_positive": "{spec!r} scales K or H by the training loss, which must be positive at w₀ (got "
                              "{f0:g})",
    "schedule_one_flag": "give --K-schedule or --H-schedule, not both",
    "schedule_checkpoints": "{spec!r} has {count} checkpoints before the horizon {horizon:g}, over the cap of "
                            "{cap}: use a longer period",
    # -- a graph for decentralised SGD (distsgd.topology): every refusal names `topology` ------------
    "topology_expected_spec": "expected a topology such as 'ring' or 'torus(a=4, b=8)' (got {value!r})",
    "topology_unknown": "unknown topology {name!r}; choose one of {choices}",
    "topology_no_parameters": "{name} takes no parameters",
    "topology_expected": "expected a Topology from distsgd.topology (got {type})",
    "topology_m_mismatch": "the graph has {nodes} nodes, not m = {m}",
    "topology_hypercube_m": "a hypercube needs m a power of 2 (got m = {m})",
    "topology_torus_m": "torus(a={a}, b={b}) has a·b = {nodes} nodes, not m = {m}",
    "topology_edges_cap": "{name} on m = {m} nodes has {edges} edges, over the cap of {cap}",
    "topology_regular_odd": "a d-regular graph needs m·d even (got m = {m}, d = {d})",
    "topology_regular_degree": "a {d}-regular graph needs more than {d} nodes (got m = {m})",
    "topology_regular_matching": "a 1-regular graph on m = {m} nodes is a matching and never connected (only m = 2 "
                                 "is): use d ≥ 2",
    "topology_regular_failed": "no connected {d}-regular graph on {m} nodes was drawn in {tries} tries",
    "topology_seed_twice": "the spec gives seed={given} and the seed argument is {seed}: give one",
    "topology_disconnected": "the graph is not connected ({components} components: node {node} cannot reach node "
                             "0); decentralised SGD needs a connected graph",
    "topology_edges_array": "expected an E × 2 array of integer node ids (got {what})",
    "topology_rows_cap": "{rows} edges listed, over the cap of {cap}",
    "topology_not_canonical": "the edges must be pairs i < j in increasing order without repeats (build the graph "
                              "with topology_from_edges)",
    "topology_not_cayley": "the graph is not the Cayley graph of the group of shape {group} it claims",
    "topology_node_id": "{where}: {value!r} is not a node id (an integer in 0…{last})",
    "topology_node_range": "{where}: node {node} is not one of the nodes 0…{last}",
    "topology_self_loop": "{where}: node {node} is joined to itself (a self-loop)",
    "topology_file_columns": "{file}: an edge list has two columns of node ids (got {columns})",
    "topology_file_lines": "{file}: {lines} lines, over the cap of {cap} edges",
    "topology_padded_cap": "the padded closed neighbourhoods would hold m·(Δ+1) = {size} entries, over the cap of "
                           "{cap}: use the CSR arrays indptr and indices",
    "topology_dense_cap": "the dense mixing matrix is built for m ≤ {cap} (got m = {m}): use the sparse one",
    "topology_gap_method": "unknown method {method!r} for the spectral gap; choose one of {choices}",
    # phrases: where in an edge list a bad node id is
    "topology_at_line": "{file}, line {line}",
    "topology_at_row": "edges[{row}]",
    # -- a file of measured times for empirical(file=…) (distsgd.delays.empirical) -------------------
    "file_name_type": "must be a file name (got {type})",
    "trace_values_cap": "a trace may hold at most {cap} values (got {count})",
    "trace_values_cap_reached": "a trace may hold at most {cap} values",
    "trace_not_numbers": "a trace must be numbers (got {type})",
    "trace_too_few": "a trace needs at least 2 values (got {count})",
    "trace_bad_value": "value #{n} ({value!r}): every time in a trace must be {range}",
    "expected_text": "expected text (got {type})",
    "expected_path": "expected a path (got {type})",
    "path_invalid": "cannot read {path!r}: not a valid path",
    "path_unreadable": "cannot read {path!r}: {why}",
    "path_not_regular": "cannot read {path!r}: not a regular file",
    "path_too_large": "{path!r} is larger than {mib} MiB",
    "line_not_number": "line {line}: {text!r} is not a number",
    "line_not_time": "line {line}: {text!r} is not a time in (0, {high}] (every time in a trace must be a "
                     "finite number > 0)",
    # -- schemes (distsgd.schemes) ------------------------------------------------------------------
    "unknown_scheme": "unknown scheme {name!r}; choose one of {choices}",
    "scheme_needs": "{scheme} needs {parameter} ({range})",
    "not_a_scheme_parameter": "not a parameter of {scheme}",
    "comm_delay_local_only": "not a parameter of {scheme} (only local-sgd has a communication round; for the "
                             "others put it in the delay's shift Δ)",
    "expected_scheme": "expected a Scheme from make_scheme (got {type})",
    "register_scheme": "register takes a Scheme subclass with a name",
    "K_range": "{scheme} needs 1 ≤ K ≤ m = {m} (got {K})",
    # phrases: what to change when a scheme is too costly (Scheme.cost_advice)
    "advice_fewer_workers": "use fewer workers m",
    "advice_smaller_K": "every update needs K pushes: use a smaller K",
    "advice_warm_up": "its warm-up is 40 pushes per worker, 40·m/K updates that each cost ∝ m: use fewer "
                      "workers m or a larger K",
    "advice_local_sgd": "m·H = {delays} delays per round: use a smaller H or fewer workers m",
    # -- workers and clusters (distsgd.clusters) ----------------------------------------------------
    "give_delay_cli": "give --delay SPEC (or --workers, or --trace FILE)",
    "give_m_cli": "give the number of workers --m",
    "expected_groups": "expected groups like '6*exp(rate=1) + 2*exp(rate=0.5)'",
    "group_not_spec": "group #{n} {group!r} is not N*SPEC (e.g. 4*exp(rate=1))",
    "in_group": "group #{n}: {error}",
    "needs_trace": "needs trace (a measured trace)",
    "give_delay": "give a delay law (or workers=…)",
    "give_m": "give the number of workers",
    "slow_or_fraction": "either slow workers (slow) or random slowdowns (slow_fraction), not both",
    "give_slowdown": "give how many times longer a slow mini-batch takes (s ≥ 1)",
    "persistence_needs_fraction": "needs slow_fraction (random slowdowns)",
    "slowdown_needs_slow": "needs slow (slow workers) or slow_fraction (random slowdowns)",
    "not_with_trace": "cannot be combined with trace (the trace gives every worker's times)",
    "trace_loaded": "the trace is already loaded",
    "not_with_workers": "cannot be combined with workers (each group gives its own law)",
    "groups_m": "the groups have {groups} workers, not {m}",
    "expected_source_law": "expected a Delay from parse_delay or a Cluster from make_cluster (got {type})",
    "cluster_m": "the scheme has m = {m} workers, the cluster {cluster}",
    "give_trace": "give a trace",
    "slowdown_outside": "{s:g} × {law} is outside the law's domain ({error})",
    "too_many_slow": "at most m = {m} workers can be slow (got {slow})",
    "give_group": "give at least one group N*SPEC",
    "group_type": "group #{n} must be a Group (got {type})",
    "cluster_state": "expected the state from start() of this cluster",
    "trace_times_only": "{trace} has times only (no worker column): only 'pooled' can use it",
    "trace_give_m": "{trace} has times only: give the number of workers m",
    "trace_m": "the trace {trace} has {workers} workers, not {m}",
    "trace_no_complete_step": "{trace} has no step at which every worker has a time: it cannot be replayed "
                              "(use per-worker or pooled)",
    "whatif_needs_workers": "what-if needs per-worker times at complete steps (a worker column)",
    # -- the cost caps of one request (distsgd.montecarlo, distsgd.error) ---------------------------
    "too_many_updates": "{scheme} needs about {updates} updates to reach T = {time:g}; at most {cap} are "
                        "simulated here (shorten T or use fewer workers)",
    "timing_too_costly": "simulating the timing of {replicas} runs of {scheme} up to T = {time:g} is too costly "
                         "for one request (≈ {seconds:.2g} s); use fewer replicas, a shorter T or fewer workers",
    "sgd_work_cap": "the simulation's work ≈ {work:.3g} (replicas × updates × K × b × dim, and the evaluation of "
                    "each recorded model) exceeds the cap {cap:.0e}; use fewer replicas, fewer points or a shorter "
                    "time",
    "infinite_runtime": "E[T] is infinite for this delay: the error against time is not defined",
    # the error on a graph (distsgd.error.graph): arrays handed over by the engines and the topology
    "graph_models_cap": "replicas × max(nodes, grid points) × dim = {values:.3g} numbers exceed the cap {cap:.3g}; "
                        "use fewer replicas",
    "graph_exact_nodes": "the exact curve diagonalises the m × m mixing matrix: at most {cap} nodes (got {m})",
    "graph_exact_work": "iterations × distinct eigenvalues × dim ≈ {work:.3g} exceeds the cap {cap:.0e}; ask for "
                        "fewer iterations",
    "graph_iterations": "must be a list of iteration counts (integers ≥ 0)",
    "graph_array_shape": "{what} has shape {shape}; expected {expected}",
    "mixing_matrix": "the mixing matrix must be symmetric with rows summing to 1 (off by {gap:.3g})",
    "mixing_spectrum": "the eigenvalues of a mixing matrix lie in [−1, 1] and include 1",
    "graph_times_order": "{what} must be finite and non-decreasing in time",
    "graph_trace_short": "the run ends at t = {end:g}, before the grid's last time {time:g}: simulate longer or "
                         "shorten the time",
    "graph_event_nodes": "every event's node and peer must be node ids in 0…{last}, a peer other than its node",
    "horizon_updates": "horizon needs about {updates} updates; at most {cap} are simulated (shorten the time)",
    "runs_too_long": "some runs need more than {cap} updates to reach the horizon (shorten the time)",
    "gradient_trace_updates": "a trace of {scheme} holds at most {cap} gradients (replicas × updates × K); at "
                              "most {fit} updates fit in one run (shorten the run)",
    "gradient_trace_replicas": "a trace of {scheme} holds at most {cap} gradients (replicas × updates × K); with "
                               "{updates} updates at most {fit} replicas fit",
    "update_too_costly": "one update of {scheme} costs about {seconds:.3g} s, over the {budget:.3g} s bound",
    "updates_too_costly": "{updates} updates of {scheme} would take about {seconds:.3g} s per run, over the "
                          "{budget:.3g} s bound; at most {fit} fit",
    "replicas_too_costly": "{replicas} runs of {updates} updates of {scheme} would take about {seconds:.3g} s, "
                           "over the {budget:.3g} s bound; at most {fit} replicas fit",
    "scheme_too_big": "{scheme} is too big to simulate: even {iterations} iterations would take about "
                      "{seconds:.3g} s, over the {budget:.3g} s bound ({advice})",
    "iterations_too_costly": "{iterations} iterations of {scheme} would take about {seconds:.3g} s, over the "
                             "{budget:.3g} s bound; at most {fit} fit",
    "cluster_too_big": "{scheme} on this cluster is too big to simulate: even the shortest run would take "
                       "about {seconds:.3g} s, over the {budget:.3g} s bound ({advice})",
    "cluster_iterations_too_costly": "{iterations} iterations of {scheme} on this cluster would take about "
                                     "{seconds:.3g} s, over the {budget:.3g} s bound; at most about {fit} fit",
    "timeline_workers": "the timeline draws at most {cap} workers (got {m})",
    "timeline_one_iteration": "the timeline draws at most {cap} jobs; one iteration of {scheme} already needs "
                              "about {jobs}",
    "timeline_iterations": "the timeline draws at most {cap} jobs; {iterations} iterations of {scheme} need "
                           "about {jobs}: at most {fit} iterations fit",
    # -- a timeline's Perfetto export (distsgd.timeline_export) -------------------------------------
    "timeline_lengths": "its columns have different lengths",
    "timeline_worker_index": "a worker index outside 0…{last}",
    "timeline_not_finite": "a time is not finite",
    "timeline_order": "an interval ends before it starts, or a time is negative",
    "time_unit_range": "{unit:g} µs per time unit puts a time out of range",
    "process_name": "a non-empty process name",
    "worker_names": "one name (text) per worker: {m} (got {count})",
    # -- times for a fit (distsgd.fit) --------------------------------------------------------------
    "expected_times": "expected an array of times (got {type})",
    "times_cap": "{count} times: over the cap of {cap}",
    "times_positive": "every time must be a finite number > 0",
    # -- a file read as a table (distsgd.tables): each message starts with the file's name ----------
    "file_too_big": "{file}: {size} bytes is over the cap of {cap} bytes ({cap_mib:g} MiB)",
    "file_unreadable": "{file}: cannot read it: {why}",
    "file_not_regular": "{file}: not a regular file",
    "file_not_bytes": "{file}: cannot read it as bytes: {why}",
    "expected_source": "expected a path, bytes or a binary file (got {type})",
    "file_empty": "{file}: the file is empty (no header, no data)",
    "text_columns_cap": "{file}: more than {cap} columns, the cap",
    "parquet_footer_cap": "{file}: its footer is {size}, over the cap of {cap}",
    "parquet_columns_cap": "{file}: {columns} columns, over the cap of {cap}",
    "not_parquet": "{file}: cannot read it as Parquet (not a Parquet file, or a damaged one): {why}",
    "column_repeated": "{file}: column {column!r} appears {count} times",
    "no_such_column": "{file}: no column {column!r}",
    "column_not_flat": "{file}: column {column!r} holds {type}: only flat columns of numbers or text are read",
    "row_groups_rows": "{file}: its row groups hold {rows} rows, but it declares {declared}",
    "rows_cap": "{file}: {rows} rows, over the cap of {cap} rows",
    "column_chunks_cap": "{file}: {groups} row groups × {columns} columns, over the cap of {cap} column chunks",
    "parquet_damaged": "{file}: cannot read it as Parquet (a damaged file): {why}",
    "pages_cap": "{file}: more than {cap} pages in the columns to read, the cap",
    "pages_declare": "{file}: its pages declare {size} or more once decompressed (column {column!r} and those "
                     "before it), over the cap of {cap}",
    "columns_decode": "{file}: its columns decode to {size} or more, over the cap of {cap}",
    "column_unreadable": "{file}: cannot read column {column!r} as Parquet: {why}",
    # phrases: a size; what is wrong inside a damaged Parquet file
    "bytes_mib": "{n} bytes ({mib:.1f} MiB)",
    "header_past_chunk": "a page header runs past its column chunk",
    "header_bad_integer": "a page header holds a truncated or over-long integer",
    "header_too_large": "a page header is too large or too deeply nested",
    "header_unknown_type": "a page header holds an unknown Thrift type {kind}",
    "chunk_outside_file": "a column chunk of {column!r} lies outside the file",
    "header_no_sizes": "a page header without its sizes",
    "page_no_count": "a data page without its number of values",
    # -- a measured trace (distsgd.traces): each message starts with the file's name ----------------
    "trace_cells_cap": "{file}: {rows} rows × {columns} columns: more than a trace of at most {cap} times holds",
    "trace_lines_cap": "{file}: {lines} lines of {columns} columns: more than a trace of at most {cap} times holds",
    "column_type": "{file}: column {column} holds {type}, not numbers or text",
    "cannot_parse": "{file}: cannot read it as {format}: {why}",
    "mapping_item": "{file}: column mapping item {item!r} is not KEY=COLUMN (keys: worker, step, duration), "
                    "e.g. worker=worker,step=time,duration=batch_time_norm",
    "mapping_type": "{file}: the column mapping must be a dict or 'worker=COL,step=COL,duration=COL' (got {type})",
    "mapping_key_repeated": "{file}: repeated key {key!r} in the column mapping (keys: worker, step, duration)",
    "mapping_key_unknown": "{file}: unknown key {key!r} in the column mapping (keys: worker, step, duration)",
    "mapping_column": "{file}: {key}={column}: {why}; the file's columns are {columns}",
    "layout_unclear": "{file}: cannot tell which column is what: {why}; the file's columns are {columns}; give a "
                      "mapping: --trace-columns worker=COL,step=COL,duration=COL (columns= in Python)",
    "one_column_mapping": "{file}: a file of one column holds times only: map at most duration to it",
    "bad_time_cell": "{file}: {where}, column {column}: {why}; every time must be {range} ({count})",
    "trace_times_cap": "{file}: {count} times: over the cap of {cap} times in a trace",
    "missing_ids": "{file}: {where}, column {column}: no {what} ({count})",
    "worker_column_twice": "{file}: column {column!r} appears more than once; worker ids must be unique",
    "no_data_rows": "{file}: no data rows",
    "trace_expected_times": "{file}: expected an array of times (got {type})",
    "trace_expected_matrix": "{file}: expected an m × steps array of times (got shape {shape})",
    "trace_bad_array_time": "{file}: times[{i}, {j}] = {value!r}: every time must be {range}, or NaN for none "
                            "({count} bad in total)",
    # phrases: the parts of a trace's refusals
    "listing_more": "{names}, … ({count} columns)",
    "unnamed_column": "{n} (unnamed)",
    "at_row": "row {n}",
    "at_line": "line {n}",
    "at_data_row": "data row {n}",
    "no_column_given": "no column is given",
    "column_absent": "there is no column {column!r}",
    "columns_share_name": "{count} columns are named {column!r}",
    "column_mapped_twice": "{column!r} is mapped twice",
    "no_role_column": "no {role} column (named one of {names})",
    "role_columns": "{count} {role} columns (named one of {names})",
    "role_worker": "worker",
    "role_step": "step",
    "role_duration": "duration",
    "step_columns": "{count} step columns",
    "no_time_column": "no column of times",
    "duration_no_worker": "a duration column but no worker column",
    "empty_cell": "empty cell",
    "cell_nan": "{cell} is NaN",
    "cell_not_number": "{cell} is not a number",
    "cell_infinite": "{cell} is infinite",
    "cell_negative": "{cell} is negative",
    "cell_zero": "{cell} is zero",
    "cell_too_large": "{cell} is too large",
    "one_bad_cell": "1 bad cell in total",
    "bad_cells": "{n} bad cells in total",
    "worker_id": "worker id",
    "step_label": "step label",
    "one_row_without": "1 row without one in total",
    "rows_without": "{n} rows without one in total",
    # -- a sweep's grid file and run (distsgd.sweeps) -----------------------------------------------
    "expected_scheme_name": "expected a scheme name (got {value!r})",
    "expected_nonempty": "expected a non-empty string (got {value!r})",
    "expected_spec_string": "expected a spec string such as 'exp(rate=1)' (got {value!r})",
    "expected_groups_string": "expected groups such as '6*exp(rate=1) + 2*exp(rate=0.5)' (got {value!r})",
    "grid_not_table": "[{name}] must be a table",
    "seed_at_top": "set it once at the top of the file; each point's seed is spawned from it (put replicate = "
                   "[0, 1, …] in [grid] to repeat points)",
    "unknown_grid_parameter": "unknown parameter in [{where}]; known: {known}{hint}",
    "list_not_value": "a list of values is not a value; [base] takes single values and [grid] lists of them",
    "list_in_list": "a list of values inside a list is not a value; [base] takes single values and [grid] lists "
                    "of them",
    "table_not_value": "a table of values is not a value; [base] takes single values and [grid] lists of them",
    "table_in_list": "a table of values inside a list is not a value; [base] takes single values and [grid] "
                     "lists of them",
    "error_not_table": "[compute].error must be a table such as {{ eta = 0.05, L = 2, mu = 0.5, sigma2 = 1, "
                       "b = 1, f0 = 1, dim = 10, time = 100, replicas = 200, eps = 0.05 }}",
    "unknown_error_key": "unknown key; known: {known}{hint}",
    "error_key_missing": "missing from [compute].error",
    "grid_points_cap": "{points} points, over the cap of {cap} (distsgd.limits.SWEEP_MAX_POINTS): split the "
                       "sweep into several files",
    "grid_points_confirm": "{points} points, over {cap} (distsgd.limits.SWEEP_CONFIRM_POINTS): pass --yes "
                           "(yes=True) to run them",
    "grid_unreadable": "cannot read {path}: {why}",
    "grid_not_toml": "{path} is not valid TOML: {why}",
    "base_and_grid": "is in both [base] and [grid]; keep one",
    "grid_takes_lists": "[grid] takes lists (got {value!r}); put a single value in [base]",
    "empty_list": "an empty list gives no points",
    "listed_twice": "{value!r} is listed twice",
    "unknown_compute_key": "unknown key in [compute]; it takes runtime = true and error = {{…}}{hint}",
    "compute_nothing": "choose what to compute: runtime = true and/or error = {{…}}",
    "unknown_top_key": "unknown top-level key; a grid file has seed, [base], [grid] and [compute]{hint}",
    "give_seed": "give seed = N at the top of the grid file (every point's seed is spawned from it, so a sweep "
                 "can be repeated and resumed)",
    "give_scheme": "give scheme in [base] or [grid]",
    "did_you_mean": " (did you mean {key}?)",
    "other_grid": "{out} holds the results of another grid (or another version of distsgd): resume it with its "
                  "own grid file, or write to another --out",
    "not_results": "{file} is not a sweep's results file: it needs a 'point' column and result columns such as "
                   "mc_mean (python -m distsgd sweep … --out FILE)",
    "results_too_big": "{file} is {mib:.1f} MiB, over the {cap_mib:.0f} MiB this page reads",
    "scheduler_unreachable": "cannot connect to {address!r}: {why}",
    "one_runner": "give one of client, scheduler and local_workers (got {given})",
    "no_directory": "no such directory: {path}",
    "out_exists": "{path} exists: pass --resume (resume=True) to complete it, or remove it",
    # real problems (DESIGN §9)
    "problem_not_numeric": "the features are not numbers",
    "problem_not_matrix": "the features must be a matrix (rows × features), got shape {shape}",
    "problem_rows_cap": "{rows} rows: more than the {cap} a problem may have",
    "problem_features_cap": "{features} features: more than the {cap} a problem may have",
    "problem_values_cap": "{values} stored values: more than the {cap} a problem may hold",
    "problem_not_finite": "row {row}, column {column} is not a finite number",
    "problem_labels_shape": "the labels have shape {labels}, not one label for each of the {rows} rows",
    "problem_no_rows": "no training rows",
    "problem_one_class": "every training label is {label!r}: classification needs at least two classes",
    "problem_classes_cap": "{classes} classes: more than the {cap} a problem may have",
    "problem_dim_cap": "the model would have {dim} numbers: more than the {cap} a problem may have",
    "problem_test_columns": "the test rows have {test} features, the training rows {train}",
    "problem_unknown_label": "label {label!r} (row {row}) is not among the training labels",
    "problem_svm_token": "{file}: line {line}: {token!r} is not a LIBSVM entry (INDEX:VALUE)",
    "problem_bad_cell": "{file}: row {row}, column {column}: {value!r} is not a finite number",
    "problem_no_label_column": "{file}: no column named {label!r} (columns: {columns})",
    "problem_no_features": "{file}: a label column and no feature column",
    "problem_label_svmlight": "{file}: a LIBSVM file has its label first on every line: label= applies to CSV and "
        "TSV files",
    "problem_split_too_small": "{rows} rows of {classes} classes (the smallest has {smallest}) cannot be split with "
        "{fraction} held out so that every class is in both parts",
    "problem_all_constant": "all {columns} feature columns are constant in the training rows",
    "problem_no_file": "logreg: needs a data set (breast_cancer, digits) or a file: logreg:FILE",
    "problem_quadratic_only": "--{flag} belongs to the quadratic problem, not to {problem}",
    "problem_unknown": "must be quadratic, logreg:breast_cancer, logreg:digits or logreg:FILE (got {value!r})",
    "problem_bad_output": "{function} returned {what}, expected {expected}",
    "problem_file_rows_cap": "{file}: {rows} rows: more than the {cap} a problem may have",
    "problem_file_features_cap": "{file}: {features} features: more than the {cap} a problem may have",
    "problem_not_callable": "must be a function (got {type})",
    "problem_f_star_needed": "give f_star or full_grad: finding f* on finite differences of the loss is limited to "
        "d ≤ {cap} (d = {dim})",
    "problem_f_star_unknown": "the problem's f* is unknown: give it",
    "problem_logreg_only": "--{flag} belongs to the logreg problems, not to the quadratic",
    "grid_key_not_for_problem": "belongs to another problem than this grid's ({problems})",
    "grid_lam_quadratic": "is the L2 regularisation of the logreg problems, and this grid's problem includes the "
        "quadratic, which has none: sweep the quadratic in a grid of its own",
    "problem_quadratic_needs": "the quadratic problem needs --{flag}",
    # what the library says besides refusals: notes, bound reasons, fit notes, methods (distsgd.texts)
    **TEXTS,
}


class Phrase:
    """English made from a template of :data:`REASONS` and its fields (a field's value may itself
    be a Phrase, or a ParameterError); ``str()`` gives the English, the dashboard translates it
    from ``code`` and ``fields``.  Equal when code and fields are; pickled as both."""

    __slots__ = ("code", "fields")

    def __init__(self, code: str, /, **fields: Any) -> None:
        if code not in REASONS:
            raise KeyError(f"unknown reason code {code!r} (add it to distsgd/reasons.py)")
        self.code, self.fields = code, fields

    def __str__(self) -> str:
        return english(self.code, **self.fields)

    def __repr__(self) -> str:
        return f"Phrase({self.code!r}, {', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Phrase) and (self.code, self.fields) == (other.code, other.fields)

    __hash__ = None  # type: ignore[assignment]  # (its fields are a dict)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_phrase, (self.code, self.fields))


def _phrase(code: str, fields: dict[str, Any]) -> Phrase:
    return Phrase(code, **fields)


class Text(str):
    """English made from a :class:`Phrase`: a str everywhere (JSON, the command line, files) that
    keeps its ``phrase`` for the dashboard to translate (an analytic result's method).  Joined to
    another string it is plain English again."""

    phrase: Phrase

    def __new__(cls, phrase: Phrase) -> Text:
        self = super().__new__(cls, str(phrase))
        self.phrase = phrase
        return self

    @classmethod
    def of(cls, code: str, /, **fields: Any) -> Text:
        """``Text(Phrase(code, **fields))``."""
        return cls(Phrase(code, **fields))

    def then(self, code: str, /, **fields: Any) -> Text:
        """This text, then the phrase ``code``: "{method}; {then}"."""
        return Text.of("method_then", method=self, then=Phrase(code, **fields))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_text, (str(self), self.phrase))  # the English as made: not rendered again


def _text(made: str, phrase: Phrase) -> Text:
    self = str.__new__(Text, made)
    self.phrase = phrase
    return self


def english(code: str, /, **fields: Any) -> str:
    """The template of ``code`` filled with ``fields``, a Phrase or an exception by its text."""
    return REASONS[code].format(**{k: str(v) if isinstance(v, (Phrase, BaseException)) else v
                                   for k, v in fields.items()})
