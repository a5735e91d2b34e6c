"""Kueue's kinds (``kueue.x-k8s.io``): typed models, structural schemas, the webhooks' defaults and
rules, v1beta1 conversion, the job-label rules, and the records served as CRDs."""
