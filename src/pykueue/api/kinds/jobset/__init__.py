"""JobSet (``jobset.x-k8s.io``): its hand-written schema and its record, served as a CRD."""
