"""Start a two-node Ray cluster on 127.0.0.1 for tests; stop it when stdin closes.

Run as a subprocess (Ray reads its settings from the environment at import, so it gets a
process of its own): prints one JSON line {"address": ..., "nodes": [...]} once both nodes
are up, then waits; closing its stdin (or SIGTERM) shuts the cluster down.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile

# Loopback only (no external interface) and no usage stats, set before Ray is imported.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"


def main() -> None:
    # A private temporary root (short: Unix socket paths are limited). Ray writes its address
    # file to $RAY_TMPDIR/ray/ray_current_cluster and fails when that folder is missing, so the
    # cluster must not depend on a /tmp/ray left behind by an earlier run.
    root = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    temp_dir = os.path.join(root, "ray")
    os.makedirs(temp_dir)
    os.environ["RAY_TMPDIR"] = root
    try:
        start(temp_dir)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def start(temp_dir: str) -> None:
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "temp_dir": temp_dir},
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        nodes = [n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
        print(json.dumps({"address": cluster.address, "nodes": nodes}), flush=True)
        sys.stdin.read()
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
