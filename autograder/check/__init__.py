"""Student-facing checks: public self-check tests and the `m5 check` command."""
