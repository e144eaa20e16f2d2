#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The overloaded 16 x 4 card (ptc, default drain period) in a Linux guest
# under TCG: how long each of ten readings in a row (pcie-telemetry -t 1)
# takes in host time, and how long QEMU takes to exit after SIGTERM sent
# during a reading. Not a test: it prints figures (median of the runs).
#
# usage: guest-overload.py [runs] [extra -device properties]
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'e2e'))
from e2e_support import REPO, tool_initrd  # noqa: E402

QEMU = os.environ.get('QEMU', os.path.join(REPO, 'build',
                                           'qemu-system-x86_64'))


def one_run(initrd, props):
    kernel = subprocess.run([os.path.join(REPO, 'scripts/guest-kernel.sh')],
                            check=True, capture_output=True,
                            text=True).stdout.strip()
    dev = 'ndk-pcie-telemetry,bus=rp1,traffic=t0,pcie-endpoints=16,' \
          'dma-ports=4' + (',' + props if props else '')
    cmd = [QEMU, '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max',
           '-smp', '1', '-m', '256M', '-nodefaults', '-display', 'none',
           '-no-reboot', '-kernel', kernel, '-initrd', initrd,
           '-append', 'console=ttyS0 quiet panic=-1 mitigations=off',
           '-chardev', 'stdio,id=ser0,signal=off', '-serial', 'chardev:ser0',
           '-object', 'telemetry-traffic-ptc,id=t0',
           '-device', 'pcie-root-port,id=rp1,chassis=1,slot=1',
           '-device', dev]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, bufsize=1)
    started, reads, lossy, exit_s = {}, [], 0, None
    deadline = time.monotonic() + 600
    for line in p.stdout:
        now = time.monotonic()
        w = line.split()
        if line.startswith('=== READ'):
            started[w[2]] = now
        elif line.startswith('=== DONE'):
            reads.append((now - started[w[2]], int(w[3])))
            lossy += w[4] != '0'
        elif line.startswith('=== LONG') and len(w) == 2:
            time.sleep(2)           # well inside the 30 s reading
            t0 = time.monotonic()
            p.send_signal(signal.SIGTERM)
            p.wait()
            exit_s = time.monotonic() - t0
            break
        if now > deadline:
            p.kill()
            break
    p.wait()
    return reads, lossy, exit_s


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    props = sys.argv[2] if len(sys.argv) > 2 else ''
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/bench-overload.sh')
        results = [one_run(initrd, props) for _ in range(runs)]
    print('16 x 4 card, ptc, default drain period%s: %d runs' %
          (' (' + props + ')' if props else '', runs))
    for i, (reads, lossy, exit_s) in enumerate(results):
        secs = [r[0] for r in reads]
        print('run %d: %d of 10 readings returned (exit %s), lost-delta '
              'flag in %d; host s per reading: %s; max %.2f; exit after '
              'SIGTERM %s s' %
              (i + 1, len(reads), ','.join(str(r[1]) for r in reads), lossy,
               ' '.join('%.2f' % s for s in secs), max(secs or [0]),
               '%.2f' % exit_s if exit_s is not None else 'none'))
    maxes = [max(r[0] for r in res[0]) for res in results if res[0]]
    exits = [res[2] for res in results if res[2] is not None]
    if maxes:
        print('median of the runs: slowest reading %.2f s host, '
              'median reading %.2f s' %
              (statistics.median(maxes),
               statistics.median(statistics.median(r[0] for r in res[0])
                                 for res in results if res[0])))
    if exits:
        print('median exit after SIGTERM during a reading: %.2f s' %
              statistics.median(exits))


if __name__ == '__main__':
    main()
