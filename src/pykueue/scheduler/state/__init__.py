"""The scheduler's state: what it knows between cycles, and the rules for keeping it true.

Owns the parsed records (workloads, ClusterQueues, cohorts, flavors), the quota tree and its
usage, the pending queues of every ClusterQueue, and Admission Fair Sharing's per-LocalQueue
usage. Nothing here decides an admission: the ``algorithm`` package reads and changes this state
through the methods these modules expose. Imports point only into this package, ``types`` and
``pykueue.api`` (checked by import-linter).
"""
