"""The hidden grading suite: properties of the kernels and checks of the numerical answers.

Never copied into ``release/``; never visible inside the grading sandbox.
"""
