#!/usr/bin/env bash
# pairs.sh N START: N pairs, order alternating, results to pairs.log
for i in $(seq $2 $(($2+$1-1))); do
  if [ $((i % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for side in $order; do
    s=$(date +%s); PROFILE=0 ./run.sh $side p$i | tail -1 | sed "s/^/$(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) /" >> pairs.log
    rm -rf work-$side-p$i/pipelines work-$side-p$i/ours.duckdb
  done
done
