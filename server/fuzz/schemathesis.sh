#!/usr/bin/env bash
# Property-based fuzzing of kapi-server from its own OpenAPI v3 documents (schemathesis, from
# PyPI): every published group-version, watches left out, several seeds. A 5xx answer is a
# defect whatever the input; schemathesis's `not_a_server_error` check reports each one.
#
#   server/fuzz/schemathesis.sh [SEED...]        (default seeds: 1 2 3)
#
# Builds the debug server, runs it on an empty store in a loopback-only network namespace
# (so a webhook or APIService the fuzzer registers can never make it dial out), and keeps
# every run's output under target/schemathesis/<seed>/: the console of each document, its
# requests and answers (VCR cassette), JUnit, and the server's log. Exits non-zero when any
# document of any seed found a failure. A pass of the example API takes about 12 minutes on
# 2 cores (about 57,000 requests).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ $# -eq 0 ] && set -- 1 2 3
# EXAMPLES and PHASES narrow a run (a quick look: PHASES=fuzzing EXAMPLES=2).
export EXAMPLES=${EXAMPLES:-50} PHASES=${PHASES:-examples,coverage,fuzzing,stateful}
venv=target/schemathesis/venv
out=target/schemathesis
mkdir -p "$out"
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'schemathesis==4.32.5'
fi
cargo build --quiet -p kapi-server
# `-r`: a user namespace too, so that it also works without root.
exec unshare -rn bash -s -- "$venv/bin" "$out" "$@" <<'INNER'
set -euo pipefail
ip link set lo up
bin=$1 out=$2; shift 2
failed=0
for seed in "$@"; do
    dir=$out/seed-$seed
    rm -rf "$dir"; mkdir -p "$dir/specs" "$dir/reports"
    data=$(mktemp -d)
    target/debug/kapi-server --listen 127.0.0.1:0 --data-dir "$data" -v 3 \
        > "$dir/server.log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null || true' EXIT
    for _ in $(seq 1 1200); do
        grep -q 'listening on http://' "$dir/server.log" && break
        sleep 0.05
    done
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$dir/server.log" | head -1)
    if [ -z "$url" ]; then
        echo "the server did not start: $dir/server.log" >&2
        exit 2
    fi
    # Each group-version document, with the `watch` query parameter taken off the lists
    # (a list that turns into a watch never ends).
    "$bin/python" - "$url" "$dir/specs" <<'PY'
import json, sys, urllib.request
base, specs = sys.argv[1], sys.argv[2]
index = json.load(urllib.request.urlopen(base + "/openapi/v3"))
for group_version, entry in sorted(index["paths"].items()):
    document = json.load(urllib.request.urlopen(base + entry["serverRelativeURL"]))
    for item in document.get("paths", {}).values():
        for holder in [item] + [v for v in item.values() if isinstance(v, dict)]:
            if isinstance(holder.get("parameters"), list):
                holder["parameters"] = [
                    p for p in holder["parameters"]
                    if p.get("name") != "watch" and not p.get("$ref", "").endswith("/watch")
                ]
    name = group_version.replace("/", "_")
    with open(f"{specs}/{name}.json", "w") as f:
        json.dump(document, f)
PY
    for spec in "$dir"/specs/*.json; do
        name=$(basename "$spec" .json)
        if ! "$bin/schemathesis" run "$spec" --url "$url" \
            --exclude-path-regex '/watch/' --exclude-operation-id-regex '^watch' \
            --checks not_a_server_error --max-response-time 10 --continue-on-failure \
            --phases "$PHASES" --workers 1 --max-examples "$EXAMPLES" \
            --seed "$seed" --generation-database none --request-timeout 70 --no-color \
            --report vcr,junit --report-vcr-path "$dir/reports/$name.vcr.yaml" \
            --report-junit-path "$dir/reports/$name.junit.xml" > "$dir/$name.txt" 2>&1; then
            echo "seed $seed, $name: failures (see $dir/$name.txt)"
            failed=1
        else
            echo "seed $seed, $name: $(tail -1 "$dir/$name.txt")"
        fi
    done
    kill "$server"; wait "$server" || true
    rm -rf "$data"
done
exit $failed
INNER
