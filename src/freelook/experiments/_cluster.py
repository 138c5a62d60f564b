"""Trials on a cluster: a running Dask scheduler's workers take the trials of this machine's.

Dask's ``distributed`` rather than Ray: it is pure Python (about 32 MB installed with what it
needs, against Ray's 79 MB wheel), a client reaches a scheduler by its address alone, and the
scheduler hands a lost worker's tasks to the others by itself. A trial is a pure function of
its arguments, so one that runs twice (its first worker died) gives the same result, and
results are put back in the order of the arguments, whichever worker ran them in whatever
order. ``distributed`` is an optional extra (``pip install 'freelook[cluster]'``), imported
only when a cluster is asked for.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from freelook.errors import FreelookError
from freelook.experiments._parallel import on_worker, set_runner
from freelook.experiments._result import Progress

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["ClusterError", "DaskTrials", "on_cluster", "scheduler_address"]

T = TypeVar("T")

#: how long a client waits for the scheduler to answer before giving up
CONNECT_TIMEOUT = 10.0


class ClusterError(FreelookError):
    """A cluster cannot be used: its address is malformed, ``distributed`` is not installed,
    its scheduler does not answer or went away, or a trial kept killing the workers it ran
    on."""


def scheduler_address(address: str) -> str:
    """The Dask address (``tcp://HOST:PORT``) of a cluster given as ``dask://HOST:PORT``."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "dask" or not parts.hostname or port is None or parts.path not in ("", "/"):
        msg = f"a cluster is dask://HOST:PORT (its Dask scheduler), not {address!r}"
        raise ClusterError(msg)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"tcp://{host}:{port}"


class DaskTrials:
    """Runs trials as tasks on a Dask cluster through ``client``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def map(
        self,
        trial: Callable[..., T],
        arguments: Sequence[tuple[Any, ...]],
        progress: Progress,
        done: int,
        total: int,
    ) -> list[T]:
        """``trial(*a)`` for each ``a`` on the workers, in order; ``progress(done + k,
        total)`` as they finish. A task's key names the trial and its index, and no two are
        merged (``pure=False``): two trials of the same arguments are two tasks. A result is
        let go on the cluster once it is here, so a worker lost later costs only the trials
        it was running."""
        from distributed import KilledWorker, as_completed

        run = uuid.uuid4().hex[:12]
        name = getattr(trial, "__name__", "trial")
        keys = [f"{name}-{run}-{k}" for k in range(len(arguments))]
        futures = self._client.map(
            on_worker, [trial] * len(arguments), list(arguments), key=keys, pure=False
        )
        pending = {future.key: (k, future) for k, future in enumerate(futures)}
        results: dict[int, T] = {}
        # distributed ships types, but not for as_completed, its clear, cancel, Client and close
        finished = as_completed(futures, loop=self._client.loop)  # type: ignore[no-untyped-call]
        del futures
        try:
            for future in finished:
                k, _ = pending.pop(future.key)
                results[k] = future.result()
                future.release()
                progress(done + len(results), total)
        except KilledWorker as err:
            msg = f"a {name} trial killed every worker it ran on: {err}"
            raise ClusterError(msg) from None
        except CancelledError as err:  # the scheduler gone: the cluster dropped every task
            reason = str(err).splitlines()[0] if str(err) else "cancelled"
            msg = f"the cluster dropped the {name} trials: {reason}"
            raise ClusterError(msg) from None
        finally:
            finished.clear()  # type: ignore[no-untyped-call]
            if pending:
                left = [future for _, future in pending.values()]
                self._client.cancel(left)  # type: ignore[no-untyped-call]
        return [results[k] for k in range(len(arguments))]


@contextmanager
def on_cluster(address: str, timeout: float = CONNECT_TIMEOUT) -> Iterator[DaskTrials]:
    """Within the block every trial runs on the Dask cluster at ``address``
    (``dask://HOST:PORT``), its scheduler given ``timeout`` seconds to answer; after it, on
    this machine again. The cluster keeps running."""
    where = scheduler_address(address)
    try:
        from distributed import Client
    except ImportError:
        msg = "trials on a cluster need Dask's distributed: pip install 'freelook[cluster]'"
        raise ClusterError(msg) from None
    try:
        client = Client(where, timeout=timeout, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as err:
        msg = f"no Dask scheduler answers at {address}: {err}"
        raise ClusterError(msg) from None
    runner = DaskTrials(client)
    set_runner(runner)
    try:
        yield runner
    finally:
        set_runner(None)
        client.close()  # type: ignore[no-untyped-call]
