"""A "server" that fails at start-up: it writes a reason on stderr and exits with status 2."""

import sys

sys.stderr.write("fatal: MCP_TEST_TOKEN is not set, cannot log in\n")
sys.stderr.flush()
sys.exit(2)
