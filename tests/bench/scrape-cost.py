#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The cost of one scrape of pcie-telemetry --listen in a Linux guest under
# TCG, for the default card and for a 16-endpoint x 4-port card: BAR
# accesses per scrape (QEMU's ptm_mmio_read/write trace events, counted
# while only that card's exporter runs), the exporter's CPU time in the
# guest, the block's read-out time it reports, and the time a scrape takes
# seen from the host. Not a test: it prints figures.
#
# usage: tests/bench/scrape-cost.py [--scrapes N]   (default 200)
import argparse
import os
import re
import socket
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'e2e'))
from e2e_support import (GuestProcess, net_files, tool_initrd,  # noqa: E402
                         user_net_missing)

PORT = 9441
CARDS = {
    'default card': ('0000:00:03.0', [
        '-object', 'telemetry-traffic-pattern,id=t3,rq-frame-bytes=256,'
        'up-frame-bytes=128,down-frame-bytes=64',
        '-device', 'ndk-pcie-telemetry,addr=03.0,traffic=t3']),
    '16 x 4 card': ('0000:00:04.0', [
        '-object', 'telemetry-traffic-pattern,id=t4,rq-frame-bytes=256,'
        'up-frame-bytes=128,down-frame-bytes=64',
        '-device', 'ndk-pcie-telemetry,addr=04.0,traffic=t4,'
        'pcie-endpoints=16,dma-ports=4,drain-period=16384']),
}


class Monitor:
    """QEMU's human monitor on a Unix socket, for trace-event."""

    def __init__(self, path):
        self.path = path
        self.sock = None

    def cmd(self, line):
        if self.sock is None:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.settimeout(10)
            for _ in range(100):
                try:
                    self.sock.connect(self.path)
                    break
                except OSError:
                    time.sleep(0.1)
            self._read_prompt()
        self.sock.sendall((line + '\n').encode())
        return self._read_prompt()

    def _read_prompt(self):
        buf = b''
        while not buf.endswith(b'(qemu) '):
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            buf += chunk
        return buf.decode('utf-8', 'replace')


def scrape(url):
    t0 = time.monotonic()
    with urllib.request.urlopen(url, timeout=30) as r:
        body = r.read().decode()
    return time.monotonic() - t0, body


def trace_lines(path):
    try:
        with open(path, 'rb') as f:
            return sum(1 for line in f if b'ptm_mmio_' in line)
    except OSError:
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--scrapes', type=int, default=200)
    a = ap.parse_args()
    why = user_net_missing()
    if why:
        print('scrape-cost: ' + why, file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/bench-scrape.sh', net_files())
        mon_path = os.path.join(tmp, 'mon')
        trace = os.path.join(tmp, 'trace.log')
        args = []
        for _, (_, card) in sorted(CARDS.items()):
            args += card
        args += ['-monitor', 'unix:%s,server=on,wait=off' % mon_path,
                 '-D', trace]
        with GuestProcess(initrd, args, forwards=[PORT], timeout=1800) as g:
            if not g.wait_for(r'^=== READY', 60):
                print('scrape-cost: the guest has no network', file=sys.stderr)
                return 1
            mon = Monitor(mon_path)
            url = g.url(PORT, '/metrics')
            print('%d scrapes per card, exporter with -d on that card only, '
                  'QEMU TCG, 1 vCPU' % a.scrapes)
            for name, (slot, _) in sorted(CARDS.items()):
                start = len(g.lines)
                g.send('start -d %s' % slot)
                if not g.wait_for(r'serving 1 telemetry block', 30, start):
                    print('scrape-cost: no exporter for %s' % slot,
                          file=sys.stderr)
                    return 1
                for _ in range(60):
                    try:
                        scrape(url)
                        break
                    except OSError:
                        time.sleep(0.2)
                # BAR accesses of a few scrapes, traced
                mon.cmd('trace-event ptm_mmio_* on')
                n0 = trace_lines(trace)
                k = 10
                for _ in range(k):
                    scrape(url)
                mon.cmd('trace-event ptm_mmio_* off')
                time.sleep(0.5)
                acc = (trace_lines(trace) - n0) / k
                # time and CPU of many, not traced
                start = len(g.lines)
                g.send('cpu')
                m0 = g.wait_for(r'^=== CPU (\d+) (\d+)$', 30, start)
                walls, reads, size = [], [], 0
                for _ in range(a.scrapes):
                    w, body = scrape(url)
                    walls.append(w)
                    size = len(body)
                    m = re.search(r'^ndk_pcie_telemetry_scrape_duration_'
                                  r'seconds\{[^}]*\} (\S+)$', body, re.M)
                    reads.append(float(m.group(1)))
                start = len(g.lines)
                g.send('cpu')
                m1 = g.wait_for(r'^=== CPU (\d+) (\d+)$', 30, start)
                cpu = (sum(map(int, m1.groups())) -
                       sum(map(int, m0.groups()))) / 100 / a.scrapes
                walls.sort()
                reads.sort()
                series = sum(1 for line in body.splitlines()
                             if line and not line.startswith('#'))
                print('%s (%s): %.0f BAR accesses per scrape; exporter CPU '
                      '%.2f ms per scrape; read-out (snapshot to last read, '
                      'in the guest) median %.2f ms; whole scrape from the '
                      'host median %.2f ms (90th %.2f); %d series, %d bytes'
                      % (name, slot, acc, cpu * 1e3,
                         reads[len(reads) // 2] * 1e3,
                         walls[len(walls) // 2] * 1e3,
                         walls[len(walls) * 9 // 10] * 1e3, series, size))
            g.send('done')
            g.wait(30)
    return 0


if __name__ == '__main__':
    sys.exit(main())
