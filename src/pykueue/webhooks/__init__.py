"""Kueue's admission and conversion webhooks served over HTTPS, and their certificate.

``pykueue controller`` serves here what the embedded API server runs in process: the admission hooks
of the controllers and Kueue's kinds as AdmissionReview v1 at Kueue's paths (:mod:`.catalogue`,
:mod:`.review`, :mod:`.server`), the CRD conversion webhook, and the serving certificate kept in a
Secret with its CA injected into the webhook configurations and CRDs (:mod:`.certs`, :mod:`.injection`).
Sits above ``controllers/`` (whose hooks it serves) and below ``cli/``.
"""
