#!/usr/bin/env bash
# 1M rows, our sync of the paged lists: 7ae7241 (when #28 was filed) against fbf2e72 (#28's branch on that base), in turns.
set -u
ARGS="--scales 1000000 --large-runs 1 --rest-api-large-runs 0 --no-rate-limits --models none --tolerance-runs 0"
for i in $(seq 1 ${PAIRS:-3}); do
  if [ $((i % 2)) = 1 ]; then order="old i28"; else order="i28 old"; fi
  for side in $order; do
    dir=/work/wt/$side
    echo "== $side run $i $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd $dir && .venv/bin/python -m bench $ARGS --out /tmp/ab/iso-$side-$i > /tmp/ab/iso-$side-$i.log 2>&1)
    echo "   exit $? $(date -u +%T)"
    grep -m1 "| 1M | 1,0" /tmp/ab/iso-$side-$i/report.md; grep -A2 "^| scale | ours | peak" /tmp/ab/iso-$side-$i/report.md | tail -1
  done
done
