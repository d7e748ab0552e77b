#!/usr/bin/env bash
# Fill .whl/ with every wheel that benchmarks/gpu_device_check.sh installs on a lent GPU machine.
#
# Run it HERE, from the repository root, before asking for the device (it needs PyPI):
#
#     bash benchmarks/prepare_device_wheels.sh
#
# Why each step exists:
# - The GPU machine has no internet and no pyopencl, so its wheels travel with the repository
#   copy, in the ignored folder .whl/ (the device command carries it explicitly).
# - Its Python is CPython 3.12 on x86-64 Linux, not this machine's: pip download is told the
#   target's version and platform, and only takes binary wheels.
# - It already has numpy, pluggy, protobuf, tensorboard, tqdm, pillow, pytest, hypothesis,
#   grpcio and typing-extensions (torch needs it); only what it lacks is fetched.  The last step
#   reads each wheel's Requires-Dist and fails if one names a package neither there nor here.
# - minitf itself goes as a wheel (built from a clean copy of the files git tracks or would
#   track, so that a stale build/ folder cannot slip old modules in), because the installed
#   dist-info is what declares the plugins' entry points.
set -euo pipefail

PYTHON=${PYTHON:-python3}
WHEELS=.whl
# What the device lacks: pyopencl and its dependencies, and minitf's google-crc32c.
NEEDED=(pyopencl pytools platformdirs siphash24 google-crc32c)
# What the device has (its torch environment), by normalised distribution name.
DEVICE_HAS="numpy pluggy protobuf tensorboard tqdm pillow pytest hypothesis grpcio typing-extensions"

[ -f pyproject.toml ] && [ -d minitf ] || { echo "run this from the repository root" >&2; exit 2; }

# Never committed: .whl/ is listed in git's local exclude file (not in .gitignore).
mkdir -p .git/info
grep -qxF '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude

rm -rf "$WHEELS"
mkdir -p "$WHEELS"

echo "== third-party wheels for CPython 3.12, manylinux x86-64"
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d "$WHEELS" "${NEEDED[@]}"

echo "== minitf's own wheel (plugins and OpenCL kernel sources included)"
SOURCE=$(mktemp -d)
trap 'rm -rf "$SOURCE"' EXIT
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$SOURCE" 2>/dev/null || true
.venv/bin/python -m pip wheel -q --no-deps -w "$WHEELS" "$SOURCE"
MINITF_WHEEL=$(ls "$WHEELS"/minitf-*.whl)
# Listed once into variables: `unzip | grep -q` would fail under pipefail when grep stops early.
LISTING=$(unzip -l "$MINITF_WHEEL")
ENTRY_POINTS=$(unzip -p "$MINITF_WHEEL" '*.dist-info/entry_points.txt')
grep -q 'minitf_opencl_gpu/opencl_kernels/matmul.cl' <<< "$LISTING" \
    || { echo "minitf wheel lacks the OpenCL kernel sources" >&2; exit 1; }
grep -q 'minitf_numpy_cpu/__init__.py' <<< "$LISTING" \
    || { echo "minitf wheel lacks the numpy_cpu plugin" >&2; exit 1; }
grep -q '^opencl_gpu' <<< "$ENTRY_POINTS" \
    || { echo "minitf wheel declares no opencl_gpu entry point" >&2; exit 1; }
echo "   $(grep -c '\.cl$' <<< "$LISTING") .cl files, entry points:"
sed 's/^/     /' <<< "$ENTRY_POINTS"

echo "== every requirement is on the device or in $WHEELS"
"$PYTHON" - "$WHEELS" "$DEVICE_HAS" <<'EOF'
import pathlib, re, sys, zipfile

folder, device_has = pathlib.Path(sys.argv[1]), set(sys.argv[2].split())
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
shipped = {norm(w.name.split("-")[0]) for w in folder.glob("*.whl")}
missing = []
for wheel in sorted(folder.glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    for line in lines:
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = line.split(":", 1)[1].strip()
        # Extras and old Pythons are not installed; everything else must be present.
        if "extra ==" in requirement or re.search(r"python_version\s*<\s*['\"]3\.(\d|1[01])['\"]", requirement):
            continue
        name = norm(re.match(r"[A-Za-z0-9_.-]+", requirement).group())
        state = "shipped" if name in shipped else "on device" if name in device_has else "MISSING"
        print("   %-40s %-40s %s" % (wheel.name[:40], requirement[:40], state))
        if state == "MISSING":
            missing.append(name)
if missing:
    sys.exit("missing on the device: %s" % ", ".join(sorted(set(missing))))
EOF

echo "== $WHEELS"
ls -l "$WHEELS"
du -sh "$WHEELS"
