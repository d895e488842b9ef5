"""Marking the written answers: answer groups, a shared store of marks, the marking page and the marks sheets.

One vocabulary (:mod:`.model`) serves every route: the page (:mod:`.server` over :mod:`.store`)
and the spreadsheets (:mod:`.sheets`) both end in :func:`.model.write_marks`, so the same
decisions give the same gradebook files byte for byte.
"""
