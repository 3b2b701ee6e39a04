"""Per-thread questions about a block, asked by the rules on the final facts (numpy).

Each module answers one question by evaluating the kernel's registers thread by thread
(`thread_exprs`, `thread_eval`, `induction`): which lanes run an access
(`active_lanes`), whether a value is one per block (`block_uniform`), which threads meet
at each barrier (`barrier_intervals`, `barrier_split`), which pairs of threads may touch
the same bytes between barriers (`thread_pairs`, `races`, `global_races`,
`global_bytes`, `value_sources`), what a read finds before any write (`definedness`,
`pred_conditions`, `uninit_memory`) and how one warp's lanes spread over banks and
sectors (`warp`). Nothing here runs during the fixpoint (`interp/`), which it reads.
"""
