# The two commands of a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
PYTEST_ARGS ?=
# Options for the demo, e.g. make demo DEMO_ARGS="--epochs 10 --data-dir ~/mnist"
DEMO_ARGS ?=
# MNIST's test images kept beside the checkout: the demo trains on them when the
# MNIST cache is empty (examples/mnist_mlp.py --fallback-data-dir).
SHARED_MNIST := $(wildcard ../shared/data/mnist)

# Debian packages the full suite uses when they can be installed (root + apt):
# graphviz renders graph pictures; pocl-opencl-icd is an OpenCL driver running on
# the CPU, so the OpenCL GPU plugin's tests run; openssl makes the self-signed certificate of
# the distributed runtime's TLS tests. Elsewhere the tests that need them skip loudly.
SYSTEM_PACKAGES := graphviz pocl-opencl-icd openssl

.PHONY: demo test install install-test system-deps pytest docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip "setuptools>=77" wheel

# The labs extra (pytest) comes always, so `python -m minitf.labs start NAME` and
# `pytest NAME` work after `make install` alone (docs/labs.rst). With an OpenCL
# driver on the machine (an ICD file), the OpenCL plugin's extra (pyopencl) comes
# too, so /gpu:0 and notebook 07 work after `make install`.
OPENCL_ICDS := $(wildcard /etc/OpenCL/vendors/*.icd)
comma := ,
INSTALL_EXTRAS := labs$(if $(OPENCL_ICDS),$(comma)opencl)

install: $(PY)
	$(PIP) install -e ".[$(INSTALL_EXTRAS)]"

# The main job: train the course's MNIST MLP (real MNIST if found, else synthetic digits).
demo: install
	$(PY) examples/mnist_mlp.py $(if $(SHARED_MNIST),--fallback-data-dir $(SHARED_MNIST)) $(DEMO_ARGS)

install-test: $(PY) system-deps
	$(PIP) install -e ".[test,docs,opencl]"

system-deps:
	@missing=""; for pkg in $(SYSTEM_PACKAGES); do \
	  dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian packages:$$missing"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) \
	    || echo "WARNING: could not install$$missing; the tests that need them will skip"; \
	else \
	  echo "WARNING: not root or no apt-get: missing$$missing; the tests that need them will skip"; \
	fi

pytest: install-test
	$(PY) -m pytest $(PYTEST_ARGS)

docs: install-test
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

test: pytest docs

clean:
	rm -rf $(VENV) build dist *.egg-info docs/_build .pytest_cache
