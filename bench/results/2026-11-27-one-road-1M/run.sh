#!/usr/bin/env bash
# 1M rows, our sync of the paged lists: ccef06c (before this session's issue-29 work) against 368464d (the one
# road, the tests mirroring the code), each its own checkout and virtualenv, same recorded world, in turns.
set -u
ARGS="--scales 1000000 --large-runs 1 --rest-api-large-runs 0 --no-rate-limits --models none --tolerance-runs 0 --no-remote --soak-days 0 --accounts 0"
declare -A DIR=([before]=/work/wt/benchnew [after]=/work/wt/i28)
for i in $(seq 1 ${PAIRS:-3}); do
  if [ $((i % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for side in $order; do
    echo "== $side run $i $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd ${DIR[$side]} && .venv/bin/python -m bench $ARGS --out /tmp/ab/road-$side-$i > /tmp/ab/road-$side-$i.log 2>&1)
    echo "   exit $? $(date -u +%T)"
    grep -m1 "| 1M | 1,0" /tmp/ab/road-$side-$i/report.md; grep -A2 "^| scale | ours | peak" /tmp/ab/road-$side-$i/report.md | tail -1
  done
done
