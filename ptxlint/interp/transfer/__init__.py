"""Transfer functions: the abstract effect of each instruction on a `State`, used only
by the fixpoint (`interp/worklist.py`). `table.py` maps an instruction class to its
function; one module per instruction family registers them (`arith*.py`, `memory.py`)."""
