"""The static front end: reads a kernel module's source -- never executes it -- and evaluates
what pypto evaluates at build time.  The linter's rules and the lowering to IR read this one
evaluation."""
