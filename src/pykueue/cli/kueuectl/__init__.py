"""Kueue's kueuectl verbs (``kubectl kueue``), talking to any cluster through a kubeconfig."""
