#!/bin/bash
# End-to-end benchmark: droce vs dpdk-testpmd, a bare-PMD ping-pong and kernel UDP (see run.py --help).
# run.py draws e2e.png only where python3-matplotlib is installed (the JSON and tables need nothing
# beyond Python's standard library); it deletes its network namespaces on exit, and this trap covers
# a run.py that is itself killed.
set -u
cd "$(dirname "$0")/../.."
export E2E_NETNS_TAG=$$
trap 'ip netns del droce-e2e-a$$ 2>/dev/null; ip netns del droce-e2e-b$$ 2>/dev/null' EXIT
/usr/bin/python3 bench/e2e/run.py "$@"
