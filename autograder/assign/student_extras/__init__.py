"""Modules copied into the student library m5_student by `m5 release` (not imported here)."""
