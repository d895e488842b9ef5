"""The grading worker: the code that runs inside the sandbox, one job per module.

Inside the sandbox every file of this folder is placed read-only at ``/m5/<name>`` and
the worker runs as ``python -s -P /m5/main.py``; ``main.py`` makes the folder a
package of its own (``m5worker``) without putting it on ``sys.path``, so the modules
import one another relatively, as they do in the grader. They import only the standard
library and numpy (the packages ``autograder`` and ``reference_impl`` are not visible
inside the sandbox).

* ``wire``: frames, the codec and reply limits; the only module the grader imports.
* ``messages``: child -> parent messages and the parent's orders to the child.
* ``child``: the untrusted process that runs the student's cells and calls.
* ``parent``: the trusted process that talks to the grader and owns the child.
* ``proctree``: what the parent reads in /proc (state, CPU clock, descendants).
* ``idle``: the parent's watch on a child that does not run.
* ``recycle``: the zygote of a class run and the sandbox's clean-up between submissions.
* ``cellexec``: how the child runs cells (also read by the grader's extraction).
* ``main``: the entry point.

Two processes inside the sandbox:

* the **parent** (trusted) talks to the grader, forks the executor after its own
  imports, and never runs student code. It times every call by the child's CPU clock
  (``/proc/<pid>/stat``) with a wall-clock backstop and kills the child past a limit;
  it places the inputs of watched calls in a shared buffer and, after the call,
  compares them with its private copy (the no-mutation check); it validates what the
  child hands back (kind, dtype, size within the call's cap) and encodes the replies.
  It is not dumpable (the child cannot read its memory or descriptors) and is the
  subreaper of everything the child starts, so no process outlives a batch.
* the **child** (untrusted) runs the cells and the calls, and hands back raw numbers.
  A child that dies, hangs or writes garbage costs only the batch (one kernel) it was
  running: the parent forks a fresh child and loads the cells again.

In a class run (``M5_RECYCLE_FD`` set) a third, the **zygote** (``recycle.zygote``), comes
first: after the imports and the preload it forks one parent per submission and cleans
the sandbox between them; it never runs student code either.

Grader <-> parent wire format, both directions: frames of ``u64 length`` + payload.
Grader -> parent payloads are pickles (fast for thousands of small arrays; only the
worker unpickles). Parent -> grader payloads are ``u32 header length`` + JSON header +
one binary blob; arrays inside the header are ``{"__nd__": [offset, nbytes, dtype,
shape]}`` references into the blob, so outcomes cross as plain numeric bytes (never
pickle); an outcomes reply carries its arrays as columns (:class:`OutcomeColumns`).
The grader decodes with ``trusted=False`` and caps every frame with :func:`reply_limits`.

Requests (grader -> worker)
  {"op": "load", "cells": [cell dicts], "kernels": [...], "cell_timeout": s,
   "budget": {...}, ...}      (the whole request reaches ``cellexec.load_cells(request=)``)
      -> {"op": "cell", "id"} before each cell (the child runs the cell only once the
         parent has passed this on; the child announces each statement of a .py file,
         the parent passes on the first), then
         {"op": "loaded", "cells": [{"id", "ok", "error", "line", "timed_out"[, "reason"]}],
          "found": {kernel: bool}, "time_cap": bool}
  {"op": "call", "kernel": name, "calls": [[args, kwargs], ...], "call_timeout": s,
   "watch": [indices of calls checked for writes into their inputs] (absent: all)}
      -> {"op": "outcomes", "outcomes": [outcome, ...]} | {"op": "lost", "reason": r}
      (the grader sends it as :func:`prepare_call_request` made it: the calls as one
      pickled blob, or ``"ref"``: the name of calls given ahead in the preload file)
  {"op": "values", "names": [...]}
      -> {"op": "values", "values": {name: array | None}}   (numerical answers)
  {"op": "exit"}
Outcome: {"s": "ok", "v": array, "mut": bool} | {"s": "raised", "exc": [type names
of the MRO], "msg": str} | {"s": "timeout"} | {"s": "bad_return", "msg": str} |
{"s": "unsent"} (finished before a later call of the batch hung, its outcome not yet
sent: the child writes outcomes in bunches)

The preload file (``PRELOAD_FILE`` beside this file, read-only, optional): a pickle
``{name: [[args, kwargs], ...]}`` of the corpus' calls, written by the grader when it
starts the worker. The parent unpickles it before anything else, so every child it
forks starts with the calls in its memory and a corpus batch request only names them;
with a spare worker this is done while the previous submission is graded. The calls
are the inputs every submission receives anyway (no expected value is in the sandbox).
"""
