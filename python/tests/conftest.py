"""The tests of the primlab package: they run the real harness binary
(`$PRIMLAB_HARNESS`, or this checkout's newest `target/*/harness`) on small
sizes, with numpy functions as the kernels under test."""

pytest_plugins = ["pytester"]
