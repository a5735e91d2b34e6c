"""The scheduler's decisions: one cycle and the searches it runs.

Owns the cycle (heads, nomination, ordering, processing, requeue), flavor assignment, partial
admission, fair-sharing shares and the preemption searches. Works on the ``state`` package it is
handed and never imports the engine above it (checked by import-linter).
"""
