"""The scripted provider: replays a YAML/JSON script of model turns, matched against each request, with no
network (tests, the demo, benchmarks)."""
