"""Correct submissions written in students' real habits (issue #12); see corpus.py."""
