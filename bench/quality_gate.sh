#!/bin/sh
# The ingest quality gate (docs/quality-gate.md): multi-hop recall on HotpotQA and MuSiQue
# and the Debian FAQ's recall, every mode, on the checkout this script is in.
# Usage: bench/quality_gate.sh CACHE_ROOT [--lexical-off]
# Each set is indexed into its own cache directory under CACHE_ROOT (a second run reuses
# it); tables go to CACHE_ROOT/<set>.log, per-question passages and ranks beside them.
# --lexical-off also asks the FAQ without lexical fusion (reusing its index).
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 CACHE_ROOT [--lexical-off]" >&2
    exit 2
fi
root=$(mkdir -p "$1" && cd "$1" && pwd)
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

run() {
    name=$1
    shift
    started=$(date +%s)
    status=0
    python "$@" >"$root/$name.log" 2>&1 || status=$?
    echo "$name: exit $status, $(($(date +%s) - started)) s" | tee -a "$root/$name.log"
    grep '^|\|questions\|passages\|entities' "$root/$name.log" || true
}

modes="naive local global hybrid mix mix+pagerank"
run hotpotqa bench/multihop.py --sets hotpotqa --sizes 300 --modes $modes --lexical on \
    --cache "$root/hotpotqa" --dump "$root/hotpotqa.json"
run musique bench/multihop.py --sets musique --sizes 500 --modes $modes --lexical on \
    --cache "$root/musique" --dump "$root/musique.json"
run faq bench/quality.py --cache "$root/faq" --lexical on --ranks "$root/faq-ranks.json"
if [ "${2:-}" = "--lexical-off" ]; then
    run faq-off bench/quality.py --cache "$root/faq" --lexical off --ranks "$root/faq-off-ranks.json"
fi
