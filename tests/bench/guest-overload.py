#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The overloaded 16 x 4 card (ptc, default drain period) in a Linux guest
# under TCG: how long each of ten readings in a row (pcie-telemetry -t 1)
# takes in host time, how long the monitor takes to answer meanwhile (a
# QMP query-status every 0.25 s from the first reading on), and how long
# QEMU takes to exit after SIGTERM sent during a reading. Not a test: it
# prints figures (median of the runs).
#
# usage: guest-overload.py [runs] [extra -device properties]
#            [--traffic MODEL[,PARAMS]] [--readings N] [--stop-after S]
#            [--default-card]
# (--traffic random: a card that costs more than real time, whose readings
# wait for long catch-ups; --stop-after S sends SIGTERM S host seconds into
# the first reading instead of waiting for the readings; --default-card:
# the card of one endpoint and one DMA port instead, e.g. with the extra
# properties drain-period=64)
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'e2e'))
from e2e_support import REPO, Qmp, tool_initrd  # noqa: E402

QEMU = os.environ.get('QEMU', os.path.join(REPO, 'build',
                                           'qemu-system-x86_64'))


class Pinger(threading.Thread):
    """query-status every 0.25 s; the host seconds of each answer."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.lat, self.stop = path, [], threading.Event()

    def run(self):
        try:
            q = Qmp(self.path)
            q.sock.settimeout(600)
            while not self.stop.is_set():
                t0 = time.monotonic()
                if q.command('query-status') is None:
                    return
                self.lat.append(time.monotonic() - t0)
                self.stop.wait(0.25)
        except OSError:
            return


def stop(p):
    """SIGTERM; the host seconds until QEMU has exited."""
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    p.wait()
    return time.monotonic() - t0


def one_run(initrd, props, traffic, readings, tmp, stop_after,
            card='pcie-endpoints=16,dma-ports=4'):
    kernel = subprocess.run([os.path.join(REPO, 'scripts/guest-kernel.sh')],
                            check=True, capture_output=True,
                            text=True).stdout.strip()
    dev = ','.join(x for x in ('ndk-pcie-telemetry,bus=rp1,traffic=t0',
                               card, props) if x)
    qmp = os.path.join(tmp, 'qmp.sock')
    cmd = [QEMU, '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max',
           '-smp', '1', '-m', '256M', '-nodefaults', '-display', 'none',
           '-no-reboot', '-kernel', kernel, '-initrd', initrd,
           '-append', 'console=ttyS0 quiet panic=-1 mitigations=off '
                      'readings=%d' % readings,
           '-chardev', 'stdio,id=ser0,signal=off', '-serial', 'chardev:ser0',
           '-qmp', 'unix:%s,server=on,wait=off' % qmp,
           '-object', 'telemetry-traffic-%s,id=t0' % traffic,
           '-device', 'pcie-root-port,id=rp1,chassis=1,slot=1',
           '-device', dev]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, bufsize=1)
    started, reads, lossy, exit_s = {}, [], 0, None
    pinger, stopped, timer = None, [], None
    deadline = time.monotonic() + 1200
    for line in p.stdout:
        now = time.monotonic()
        w = line.split()
        if line.startswith('=== READ'):
            started[w[2]] = now
            if pinger is None:
                pinger = Pinger(qmp)
                pinger.start()
                if stop_after:
                    timer = threading.Timer(stop_after, lambda: stopped.
                                            append(stop(p)))
                    timer.start()
        elif line.startswith('=== DONE'):
            reads.append((now - started[w[2]], int(w[3])))
            lossy += w[4] != '0'
        elif line.startswith('=== LONG') and len(w) == 2:
            time.sleep(2)           # well inside the 30 s reading
            exit_s = stop(p)
            break
        if now > deadline:
            p.kill()
            break
    p.wait()
    if timer:
        timer.join()
    if stopped:
        exit_s = stopped[0]
    lat = []
    if pinger:
        pinger.stop.set()
        pinger.join(5)
        lat = pinger.lat
    return reads, lossy, exit_s, lat


def main():
    args, traffic, readings, stop_after = [], 'ptc', 10, 0
    card = 'pcie-endpoints=16,dma-ports=4'
    it = iter(sys.argv[1:])
    for a in it:
        if a == '--traffic':
            traffic = next(it)
        elif a == '--readings':
            readings = int(next(it))
        elif a == '--stop-after':
            stop_after = float(next(it))
        elif a == '--default-card':
            card = ''

        else:
            args.append(a)
    runs = int(args[0]) if args else 3
    props = args[1] if len(args) > 1 else ''
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/bench-overload.sh')
        results = [one_run(initrd, props, traffic, readings, tmp,
                           stop_after, card) for _ in range(runs)]
    print('%s card, %s%s: %d runs' %
          ('16 x 4' if card else 'default', traffic,
           ' (' + props + ')' if props else ', default drain period', runs))
    for i, (reads, lossy, exit_s, lat) in enumerate(results):
        secs = [r[0] for r in reads]
        print('run %d: %d of %d readings returned (exit %s), lost-delta '
              'flag in %d; host s per reading: %s; max %.2f; exit after '
              'SIGTERM %s s; monitor answered %d queries, slowest %s s, '
              'median %s s' %
              (i + 1, len(reads), readings,
               ','.join(str(r[1]) for r in reads), lossy,
               ' '.join('%.2f' % s for s in secs), max(secs or [0]),
               '%.2f' % exit_s if exit_s is not None else 'none',
               len(lat), '%.3f' % max(lat) if lat else 'none',
               '%.3f' % statistics.median(lat) if lat else 'none'))
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
    slow = [max(res[3]) for res in results if res[3]]
    if slow:
        print('median of the runs: slowest monitor answer %.3f s' %
              statistics.median(slow))


if __name__ == '__main__':
    main()
