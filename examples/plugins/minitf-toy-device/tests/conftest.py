pytest_plugins = ["minitf.test.conformance"]  # minitf's device conformance suite
