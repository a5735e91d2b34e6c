"""``pykueue simulate``: what-if replays of workload traces on the production scheduler engine.

Modules, one job each: ``model`` (the task model and its Workload), ``objects`` (a configuration:
Kueue objects from YAML or a cluster), ``openb`` (the Alibaba openb trace and its mapping),
``generic`` (JSONL / CSV traces), ``kueue_trace`` (Kueue's generator config as a trace), ``replay``
(the driver, on ``bench.scheduler.vcluster``), ``recorder`` (what a replay observes), ``metrics``
(the summary numbers), ``series`` (time series), ``plots``, ``html`` and ``report`` (the report
directory), ``init`` (a starting configuration from a node list), ``eta`` (start-time estimates),
``accuracy`` (how good those estimates are, measured on a replay) and ``realtime`` (the same trace
played against a running cluster, the fidelity check).

Layering: above ``bench`` (it reuses the virtual-time loop), below ``cli``; it reads clusters only
through ``pykueue.client`` and never imports the API server.
"""
