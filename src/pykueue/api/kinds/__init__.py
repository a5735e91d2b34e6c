"""The kinds ``api/`` describes, one sub-package per source: Kubernetes' built-in kinds
(:mod:`core`), Kueue's (:mod:`kueue`), JobSet (:mod:`jobset`) and any CustomResourceDefinition's
(:mod:`custom`). Each builds :class:`~pykueue.api.meta.kind_info.KindInfo` records with the
schema machinery below it; :mod:`pykueue.api.catalogue` above puts them together."""
