"""Job functions for the python-rq scenario (imported by the rq worker)."""


def double(n):
    return n * 2


def explode():
    raise ValueError("this job fails on purpose")
