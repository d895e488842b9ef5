"""Grading pipeline: extract -> run (sandboxed worker) -> compare -> score -> report."""
