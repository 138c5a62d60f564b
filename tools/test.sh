#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run everything CI runs: lint, type check, tests.
# Hypothesis runs derandomized here (the "ci" profile in tests/conftest.py): the same examples
# every run, no example database, so a pass or a failure repeats. For a longer randomized hunt:
#   FREELOOK_HYPOTHESIS=thorough bash tools/test.sh     (ten times the examples, random)
set -euo pipefail
export FREELOOK_HYPOTHESIS="${FREELOOK_HYPOTHESIS:-ci}"
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,ros2,cluster]'
.venv/bin/python tools/build_tf2_msgs.py  # ROS 2's TFMessage, which has no wheel (/tf)
echo "== npm ci (TypeScript and ESLint to check the pages, iwer, and three.js to check the package's copy)"
npm ci --no-audit --no-fund --loglevel=error
echo "== tsc (the pages' JavaScript, JSDoc types)"
node_modules/.bin/tsc --noEmit -p tsconfig.json
node_modules/.bin/tsc --noEmit -p tsconfig.strict.json
echo "== eslint (the pages' JavaScript and its tests: eslint.config.js)"
node_modules/.bin/eslint src/freelook/web/static tests/js eslint.config.js
echo "== node --test (the pages' DOM-free modules)"
node --test tests/js/*.test.js
echo "== ruff"
.venv/bin/ruff check src tests tools
.venv/bin/ruff format --check src tests tools
echo "== mypy --strict (src/freelook and the test rig, tools/attack)"
.venv/bin/mypy
echo "== import contracts"
.venv/bin/lint-imports
# The lock-step tests run first, one pytest-xdist worker per core: each runs on the injected
# clock alone (no browser, ROS node or real-time wait; the experiments' cluster tests start
# Dask workers on loopback and assert which trials ran, not when), so a busy core slows them
# and changes nothing they assert, and most of them are CPU. The rest run after them, in this
# process alone, or with FREELOOK_TEST_WORKERS=4 in 4 parallel workers (on 2 cores 4, since
# many of those tests wait on sockets, subprocesses and a browser): a module's tests that
# share a module fixture (a running sim, a browser) stay on one worker, the real-NAT tests on
# one, each worker has DDS domains of its own (tests/conftest.py). Arguments (paths, -k, ...)
# run those tests alone, in FREELOOK_TEST_WORKERS workers.
lockstep=(tests/arm tests/autonomy tests/config tests/control tests/estimation tests/experiments
    tests/hal tests/judp tests/kinematics tests/maps tests/safety tests/sim)
cores="$(nproc)"
workers="${FREELOOK_TEST_WORKERS:-0}"
# in a subshell of its own, which then says the CPU the tests took, pass or fail (user and
# system, with the processes they started and waited for) beside their wall time: how much of
# a run is the machine's cores, and how much waiting
(
    set +e
    started=$SECONDS
    pytest=(.venv/bin/python -m pytest -q --dist loadgroup --durations=20)
    if [ $# -gt 0 ]; then
        echo "== pytest $* in ${workers} workers (0: in one process; the 20 slowest listed)"
        "${pytest[@]}" -n "$workers" "$@"
        status=$?
    else
        echo "== pytest: the lock-step tests in ${cores} workers (the 20 slowest listed)"
        "${pytest[@]}" -n "$cores" "${lockstep[@]}"
        first=$?
        echo "== pytest: the rest in ${workers} workers (0: in one process; the 20 slowest listed)"
        "${pytest[@]}" -n "$workers" tests "${lockstep[@]/#/--ignore=}"
        status=$?
        [ "$first" -eq 0 ] || status=$first
    fi
    echo "== the tests took $((SECONDS - started)) s; CPU (user, system): the shell's, then theirs"
    times
    exit $status
)
