"""Realistic wrong kernels for the mutation-adequacy tests."""
