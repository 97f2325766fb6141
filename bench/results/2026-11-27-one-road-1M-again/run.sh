#!/usr/bin/env bash
# Paths are those of this measurement: /work/wt/{before,after} (git worktrees of b33590c and 83d8224, each
# with `make install`), py-spy copied to /tmp, the pages served by `python -m bench.pageserver --store ...`.
# profile one side: run.sh SIDE TAG
set -u
side=$1; tag=$2
CFG=$(ls /work/wt/before/bench/work/run-*/scale-1000000/run1/ours/ours.config.json)
W=/tmp/prof/work-$side-$tag; rm -rf $W; mkdir -p $W
python3 - "$CFG" "$W" <<'PY'
import json,sys
c=json.load(open(sys.argv[1])); c["workdir"]=sys.argv[2]
json.dump(c,open(sys.argv[2]+"/cfg.json","w"))
PY
cd /work/wt/$side
if [ "${PROFILE:-1}" = 1 ]; then
  /tmp/py-spy record --gil --format raw -r 40 -o /tmp/prof/$side-$tag.txt -- .venv/bin/python -m bench.worker ours $W/cfg.json $W/res.json > $W/log 2>&1
else
  .venv/bin/python -m bench.worker ours $W/cfg.json $W/res.json > $W/log 2>&1
fi
python3 -c "import json;r=json.load(open('$W/res.json'));print('$side $tag',round(r['seconds'],1),r['steps'])"
