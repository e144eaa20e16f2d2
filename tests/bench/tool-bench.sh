#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# BAR accesses and CPU time of pcie-telemetry per reading, in a Linux guest.
# The device's trace events (ptm_mmio_read/_write) count every access the
# tool makes; guest/bench-tool.sh separates four runs with marker reads:
#   totals    open + one reading            (-t 0)
#   interval  open + two readings           (-t 0.2)
#   watch     open + one reading per report (-w -t 0.2, stopped after 3 s)
#   fast      the same at -t 0.02 for 5 s, for the CPU time per reading
# Not a test: it prints figures. Extra arguments go to the card's -device,
# e.g. pcie-endpoints=2,dma-ports=2.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
props=${1:+,$1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t files < <("$REPO/scripts/guest-tool-files.sh" "$REPO/build")
"$REPO/scripts/guest-initramfs.sh" "$tmp/initrd.gz" "$REPO/guest/bench-tool.sh" \
    "${files[@]}"
"$REPO/scripts/guest-run.sh" "$tmp/initrd.gz" \
    -object telemetry-traffic-ptc,id=t0 \
    -device "ndk-pcie-telemetry,addr=03.0,traffic=t0,block-offset=0x10000$props" \
    -trace 'ptm_mmio_*' -trace ptm_bar_unused -D "$tmp/trace" > "$tmp/console"
/usr/bin/python3 - "$tmp/trace" "$tmp/console" "$props" <<'PY'
import re, sys
trace, console, props = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
runs, cur = [], None
for line in trace.splitlines():
    if 'ptm_bar_unused' in line:
        if cur is not None:
            runs.append(cur)
        cur = dict(total=0, snap=0, status=0, window=0, other=0)
        continue
    m = re.search(r'ptm_mmio_(read|write) addr 0x([0-9a-f]+) size (\d) val 0x([0-9a-f]+)', line)
    if not m or cur is None:
        continue
    rw, addr, val = m.group(1), int(m.group(2), 16), int(m.group(4), 16)
    cur['total'] += 1
    if rw == 'write' and addr == 0x20 and val & 1:
        cur['snap'] += 1
    elif addr >= 0x8000:
        cur['window'] += 1
    elif rw == 'read' and addr == 0x24:
        cur['status'] += 1
    else:
        cur['other'] += 1
names = ['totals (-t 0)', 'interval (-t 0.2)', 'watch (-w -t 0.2)',
         'fast (-w -t 0.02)']
times = re.findall(r'^user\s+([\d.]+)\s*$', console, re.M)
systimes = re.findall(r'^sys\s+([\d.]+)\s*$', console, re.M)
print('card: ndk-pcie-telemetry%s, ptc traffic' % props)
print('%-18s %8s %9s %8s %13s %6s %9s' % ('run', 'accesses', 'snapshots',
      'STATUS', 'window loads', 'other', 'CPU s'))
for i, r in enumerate(runs[:4]):
    cpu = float(times[i]) + float(systimes[i]) if i < len(times) else float('nan')
    print('%-18s %8d %9d %8d %13d %6d %9.2f' % (names[i], r['total'], r['snap'],
          r['status'], r['window'], r['other'], cpu))
if len(runs) >= 3 and runs[2]['snap'] > 1:
    a, b, w = runs[0], runs[1], runs[2]
    per = (b['total'] - a['total'])
    print('one more reading costs %d accesses (interval - totals), of which '
          '%d 64-bit counter loads' % (per, b['window'] - a['window']))
    print('watch: %d readings, %.1f accesses per reading after the first'
          % (w['snap'], (w['total'] - a['total']) / (w['snap'] - 1)))
# The interval run is the start-up, two readings and one report, the fast
# run the start-up, N readings and N - 1 reports; the difference is N - 2
# readings with their reports (time -p: 10 ms resolution).
if len(runs) >= 4 and runs[3]['snap'] > 2 and len(times) >= 4:
    f = runs[3]
    cpu = [float(times[i]) + float(systimes[i]) for i in (1, 3)]
    print('fast: %d readings, %.1f accesses and %.2f ms guest CPU per reading '
          'with its text report (fast - interval over %d readings)'
          % (f['snap'], (f['total'] - b['total']) / (f['snap'] - 2),
             (cpu[1] - cpu[0]) * 1e3 / (f['snap'] - 2), f['snap'] - 2))
PY
