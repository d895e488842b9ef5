"""Hostile submissions for the grader tests (fragments composed onto a correct base)."""
