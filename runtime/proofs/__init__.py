"""What a template decides, proven: its checked logic as an SMT formula (z3), and the properties
`inspectlang verify`, `diff` and `test` ask of it.

`symbolic` runs one *scenario* of an inspection symbolically: the create body, the start, each
template photo uploaded or not with each validation's result, up to `MAX_DECLARED` declared
damages, and the finish, in that order (the order `events` writes them), with one update giving
inputs the create did not at any place between (where the template reads them before the
finish). The rules, checks and verdict lines run over it exactly as `runtime.transitions` runs
them, so the formula says, for every inspection of that shape at once, its status, verdict, the
lines that held and the rule errors it met. `properties` asks the solver; every answer that
says "this happens" comes with a model that `events` writes as an events file and `replay` runs
through `inspectlang simulate`'s own `Simulation`: a counterexample is reported only once the
runtime agrees.

z3 is imported here only, never by `inspectlang check` or `compile` (the cold start).
"""
