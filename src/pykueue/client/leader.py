"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Owned by ``client/``; ``pykueue controller`` runs one :class:`LeaderElector` per replica so that only
one runs the scheduler and the controllers. As client-go's ``leaderelection``:

- a candidate tries every ``retry_period`` (jittered by up to 20 %) to create the Lease or take it
  over; it may take it over only when the holder is empty or the Lease's record has not changed for
  ``lease_duration`` as measured by the candidate's own clock since it last saw it change (never by
  comparing clocks of two machines);
- taking it over sets ``holderIdentity``, ``acquireTime``, ``renewTime`` and increments
  ``leaseTransitions``; every write carries the resourceVersion it read (optimistic concurrency), so
  two candidates cannot both win;
- the leader renews every ``retry_period``; when no renewal succeeded for ``renew_deadline`` (less
  than ``lease_duration``) it has lost leadership and ``on_lost`` runs at once, before any other
  candidate may take the Lease over (``lease_duration`` after the last renewal it saw);
- :meth:`release` on a clean stop empties ``holderIdentity`` so a successor does not wait.

Invariant: :attr:`is_leader` is True only between a successful acquire and the first missed
renew deadline; each renewal attempt is bounded by the time left before that deadline.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pykueue.api.meta.errors import AlreadyExists, Conflict, NotFound
from pykueue.client.group_version_resource import LEASES
from pykueue.client.protocol import Client

__all__ = ["LeaderElector", "LeaseConfig", "micro_time"]

log = logging.getLogger(__name__)
JSONDict = dict[str, Any]
_JITTER = 1.2


@dataclass(frozen=True, slots=True)
class LeaseConfig:
    """Where the Lease is and client-go's timings (controller-runtime's defaults: 15 s, 10 s, 2 s)."""

    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def problem(self) -> str | None:
        """Why these timings cannot work (client-go refuses the same), or None."""
        if not self.lease_duration > self.renew_deadline:
            return "leaseDuration must be greater than renewDeadline"
        if not self.renew_deadline > _JITTER * self.retry_period:
            return "renewDeadline must be greater than retryPeriod x 1.2"
        if self.retry_period <= 0:
            return "retryPeriod must be positive"
        return None


def micro_time(at: dt.datetime | None = None) -> str:
    """A ``MicroTime`` (RFC 3339 with microseconds), as client-go writes ``renewTime``."""
    return (at or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        client: Client,
        config: LeaseConfig,
        *,
        on_lost: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.config = config
        self._on_lost = on_lost
        self._clock = clock
        self._observed: JSONDict | None = None  # the Lease's spec when last seen to change
        self._observed_at = 0.0  # our clock when it was seen to change
        self._renewed_at = 0.0
        self.is_leader = False

    async def acquire(self) -> None:
        """Return once this candidate holds the Lease (tries every retry period, jittered)."""
        log.info(
            "waiting to lead: Lease %s/%s, identity %s", self.config.namespace, self.config.name, self.config.identity
        )
        while True:  # polling the Lease is the protocol: nothing signals that it expired
            if await self._try_acquire_or_renew():
                break
            await asyncio.sleep(self.config.retry_period * random.uniform(1.0, _JITTER))
        self.is_leader = True
        self._renewed_at = self._clock()
        log.info(
            "became the leader: Lease %s/%s is held by %s",
            self.config.namespace,
            self.config.name,
            self.config.identity,
        )

    async def renew_until_lost(self) -> None:
        """Renew every retry period; when renew_deadline passes without a renewal, call ``on_lost``."""
        while True:
            await asyncio.sleep(self.config.retry_period)
            left = self._renewed_at + self.config.renew_deadline - self._clock()
            renewed = False
            if left > 0:
                try:
                    async with asyncio.timeout(left):
                        renewed = await self._try_acquire_or_renew()
                except TimeoutError:
                    renewed = False
            if renewed:
                self._renewed_at = self._clock()
                continue
            if self._clock() - self._renewed_at >= self.config.renew_deadline:
                self.is_leader = False
                log.error(
                    "leader election lost: Lease %s/%s not renewed within %.0fs",
                    self.config.namespace,
                    self.config.name,
                    self.config.renew_deadline,
                )
                self._on_lost()
                return

    async def release(self) -> None:
        """Give the Lease up (holderIdentity emptied) if this candidate holds it; best effort."""
        if not self.is_leader:
            return
        self.is_leader = False
        try:
            lease = await self.client.get(LEASES, self.config.name, self.config.namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.config.identity:
                return
            now = micro_time()
            await self.client.update(
                LEASES,
                {
                    **lease,
                    "spec": {
                        **spec,
                        "holderIdentity": "",
                        "leaseDurationSeconds": 1,
                        "renewTime": now,
                        "acquireTime": now,
                    },
                },
            )
            log.info("released Lease %s/%s", self.config.namespace, self.config.name)
        except Exception as exc:  # the process is stopping: the Lease expires by itself anyway
            log.warning("could not release Lease %s/%s: %r", self.config.namespace, self.config.name, exc)

    # -- one round, as client-go's tryAcquireOrRenew ---------------------------------------------

    def _spec(self, old: JSONDict | None) -> JSONDict:
        now = micro_time()
        mine = old is not None and old.get("holderIdentity") == self.config.identity
        transitions = int((old or {}).get("leaseTransitions") or 0)
        return {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": round(self.config.lease_duration),
            "acquireTime": (old or {}).get("acquireTime") or now if mine else now,
            "renewTime": now,
            "leaseTransitions": transitions if mine or old is None else transitions + 1,
        }

    async def _try_acquire_or_renew(self) -> bool:
        cfg = self.config
        try:
            lease = await self.client.get(LEASES, cfg.name, cfg.namespace)
        except NotFound:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": self._spec(None),
            }
            try:
                created = await self.client.create(LEASES, body, cfg.namespace)
            except (AlreadyExists, Conflict):
                return False
            except Exception as exc:
                log.warning("could not create Lease %s/%s: %r", cfg.namespace, cfg.name, exc)
                return False
            self._see(created.get("spec") or {})
            return True
        except Exception as exc:
            log.warning("could not read Lease %s/%s: %r", cfg.namespace, cfg.name, exc)
            return False
        spec = dict(lease.get("spec") or {})
        self._see(spec)
        holder = spec.get("holderIdentity") or ""
        if holder and holder != cfg.identity:
            duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
            if self._observed_at + duration > self._clock():
                return False  # held by another, and renewed within its lease duration as far as we saw
        try:
            updated = await self.client.update(LEASES, {**lease, "spec": {**spec, **self._spec(spec)}})
        except Conflict:
            return False
        except Exception as exc:
            log.warning("could not update Lease %s/%s: %r", cfg.namespace, cfg.name, exc)
            return False
        self._see(updated.get("spec") or {})
        return True

    def _see(self, spec: JSONDict) -> None:
        if spec != self._observed:
            self._observed = spec
            self._observed_at = self._clock()
